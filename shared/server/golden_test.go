package server_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/custodymcp/custody/shared/server/servertest"
)

var update = flag.Bool("update", false, "rewrite the golden exchanges in testdata/golden with what the server answers")

// TestGolden replays the JSON-RPC exchanges in testdata/golden/*.txtar
// through the real http.Handler (over httptest, on the file engine) and
// compares every answer: status, the headers that matter, and the body.
//
// Each file starts with prose explaining the case, then pairs of sections
// "N request" and "N response". A request is a method line, header lines, a
// blank line and the body; {{key:ROLE}} is a servertest key, {{session}} the
// last minted session id and {{cursor}} the last nextCursor answered. A
// response is the status line, the headers present among goldenHeaders, a
// blank line and the body (indented JSON; _meta.ms is shown as 0, a minted
// session id as {{session}} and a nextCursor as {{cursor}}, since they vary
// with random credential ids). Run with -update to regenerate.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			runGolden(t, file)
		})
	}
}

// goldenHeaders are the response headers a golden file pins.
var goldenHeaders = []string{
	"Access-Control-Allow-Headers", "Access-Control-Allow-Methods", "Access-Control-Allow-Origin",
	"Access-Control-Expose-Headers", "Allow", "Content-Type", "Mcp-Session-Id", "Retry-After",
	"Www-Authenticate",
}

func runGolden(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	env := servertest.New(t, servertest.Options{
		ToolPageSize:   4,
		AllowedOrigins: []string{"https://allowed.example.test"},
	})
	vars := map[string]string{}
	var out []txtar.File
	for i := 0; i < len(ar.Files); i += 2 {
		req := ar.Files[i]
		if !strings.HasSuffix(req.Name, "request") || i+1 >= len(ar.Files) {
			t.Fatalf("%s: section %q: want a request followed by its response", file, req.Name)
		}
		resp := send(t, env, string(req.Data), vars)
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			vars["session"] = id
		}
		if c := nextCursor(resp.Body); c != "" {
			vars["cursor"] = c
		}
		got := render(resp, vars)
		want := string(ar.Files[i+1].Data)
		if !*update && got != want {
			t.Errorf("%s: %s:\n--- want\n%s\n--- got\n%s", file, ar.Files[i+1].Name, want, got)
		}
		out = append(out, req, txtar.File{Name: ar.Files[i+1].Name, Data: []byte(got)})
	}
	if *update {
		ar.Files = out
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var placeholder = regexp.MustCompile(`\{\{(key:[a-z_0-9]+|session|cursor)\}\}`)

func send(t *testing.T, env *servertest.Env, text string, vars map[string]string) *servertest.Response {
	t.Helper()
	text = placeholder.ReplaceAllStringFunc(text, func(m string) string {
		name := m[2 : len(m)-2]
		if v, ok := vars[name]; ok {
			return v
		}
		key, ok := env.Keys[strings.TrimPrefix(name, "key:")]
		if !ok {
			t.Fatalf("unknown key placeholder %s", m)
		}
		return key
	})
	head, body, _ := strings.Cut(text, "\n\n")
	lines := strings.Split(strings.TrimRight(head, "\n"), "\n")
	method := strings.TrimSpace(lines[0])
	headers := lines[1:]
	var b []byte
	if strings.TrimSpace(body) != "" {
		b = []byte(strings.TrimRight(body, "\n"))
	}
	req, err := http.NewRequest(method, env.URL, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if b == nil {
		req.Body = http.NoBody
	}
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ":")
		req.Header[http.CanonicalHeaderKey(strings.TrimSpace(name))] = []string{strings.TrimSpace(value)}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(res.Body); err != nil {
		t.Fatal(err)
	}
	return &servertest.Response{Status: res.StatusCode, Header: res.Header, Body: buf.Bytes()}
}

func nextCursor(body []byte) string {
	var msg struct {
		Result struct {
			NextCursor string `json:"nextCursor"`
		} `json:"result"`
	}
	_ = json.Unmarshal(body, &msg)
	return msg.Result.NextCursor
}

func render(resp *servertest.Response, vars map[string]string) string {
	var sb strings.Builder
	sb.WriteString(strconv.Itoa(resp.Status) + "\n")
	for _, name := range goldenHeaders {
		for _, v := range resp.Header.Values(name) {
			if name == "Mcp-Session-Id" && v == vars["session"] {
				v = "{{session}}"
			}
			fmt.Fprintf(&sb, "%s: %s\n", name, v)
		}
	}
	sb.WriteString("\n")
	if len(resp.Body) > 0 {
		body := normalize(resp.Body)
		if c := vars["cursor"]; c != "" {
			body = strings.ReplaceAll(body, c, "{{cursor}}")
		}
		sb.WriteString(body)
	}
	return sb.String()
}

// normalize indents a JSON body and zeroes what varies between runs.
func normalize(body []byte) string {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return string(body) + "\n"
	}
	zeroMeta(v)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return buf.String()
}

func zeroMeta(v any) {
	switch x := v.(type) {
	case map[string]any:
		if m, ok := x["_meta"].(map[string]any); ok {
			if _, ok := m["ms"]; ok {
				m["ms"] = 0
			}
		}
		for _, e := range x {
			zeroMeta(e)
		}
	case []any:
		for _, e := range x {
			zeroMeta(e)
		}
	}
}
