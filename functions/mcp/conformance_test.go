package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// The conformance fixture profile (shared/conformance: fixtures behind the
// conformance scope, and requests without a credential authenticated as the
// fixture key) exists only in the loopback dev server. The function cannot
// enable it: it does not link the package, its code never sets an anonymous
// token, and even a key carrying the conformance scope finds nothing there.

func TestTheFunctionDoesNotLinkTheConformanceProfile(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "list", "-deps", "-tags", "lambda.norpc", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/custodymcp/custody/shared/conformance" || strings.HasPrefix(pkg, "github.com/custodymcp/custody/scripts/") {
			t.Errorf("the function links %s", pkg)
		}
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(src, []byte("AnonymousToken")) {
			t.Errorf("%s mentions AnonymousToken: the function never serves anonymous requests", f)
		}
		// The GET stream follows GET_STREAM alone (the template's GetStream
		// parameter, default off: TestTheGETStreamFollowsGET_STREAM).
		for _, line := range strings.Split(string(src), "\n") {
			if strings.Contains(line, "GETStream") && !strings.Contains(strings.Join(strings.Fields(line), " "), "GETStream: cfg.HeldStream,") && !strings.HasPrefix(strings.TrimSpace(line), "//") {
				t.Errorf("%s: %q: the GET stream is set from GET_STREAM (cfg.HeldStream) only", f, strings.TrimSpace(line))
			}
		}
	}
}

func TestTheFunctionAnswersNoCredentialWith401AndHasNoFixtures(t *testing.T) {
	emu := startEmulator(t)
	cfg, err := LoadConfig(func(k string) string { return emu.env(false)[k] })
	if err != nil {
		t.Fatal(err)
	}
	key, err := cfg.CursorKey(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := newServer(cfg, emu.Store, key, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	url := hs.URL + "/mcp"
	initialize := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)

	if r := servertest.DoURL(t, url, http.MethodPost, initialize); r.Status != http.StatusUnauthorized {
		t.Errorf("initialize without a credential: %d %s, want 401 (no anonymous token)", r.Status, r.Body)
	}

	// Even a key with the conformance scope sees nothing: no fixture exists.
	fixtureKey, _, err := auth.Mint(context.Background(), emu.Store, auth.MintRequest{
		Tenant: "conformance", Owner: "p_conformance", Scopes: []auth.Scope{auth.ScopeConformance},
	}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r := servertest.DoURL(t, url, http.MethodPost, initialize, "Authorization: Bearer "+fixtureKey)
	if r.Status != http.StatusOK {
		t.Fatalf("initialize with the conformance key: %d %s", r.Status, r.Body)
	}
	headers := []string{"Authorization: Bearer " + fixtureKey, "Mcp-Session-Id: " + r.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version: 2025-11-25"}
	for method, field := range map[string]string{
		"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources", "resources/templates/list": "resourceTemplates",
	} {
		r := servertest.DoURL(t, url, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":2,"method":"`+method+`"}`), headers...)
		var msg struct {
			Result map[string][]json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(r.Body, &msg); err != nil || r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", method, r.Status, r.Body)
		}
		if got := msg.Result[field]; len(got) != 0 {
			t.Errorf("%s with the conformance key lists %s", method, got)
		}
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"test_simple_prompt"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"test://static-text"}}`,
	} {
		r := servertest.DoURL(t, url, http.MethodPost, []byte(body), headers...)
		if !bytes.Contains(r.Body, []byte(`"error"`)) {
			t.Errorf("%s: %d %s, want a JSON-RPC error (no such fixture)", body, r.Status, r.Body)
		}
	}
	for _, n := range srv.Registry.Names() {
		if strings.HasPrefix(n, "test_") || strings.HasPrefix(n, "json_schema") {
			t.Errorf("the function registers the fixture tool %s", n)
		}
	}
	for _, n := range srv.Prompts.Names() {
		if strings.HasPrefix(n, "test_") {
			t.Errorf("the function registers the fixture prompt %s", n)
		}
	}
}

// TestTheGETStreamFollowsGET_STREAM: the function offers the held GET
// stream exactly when GET_STREAM is true (the template's GetStream
// parameter, default off): GET /mcp of a live session is 405 without it
// and a text/event-stream with it; a buffered door refuses it at load.
func TestTheGETStreamFollowsGET_STREAM(t *testing.T) {
	emu := startEmulator(t)
	for _, on := range []bool{false, true} {
		env := emu.env(true)
		if on {
			env["GET_STREAM"] = "true"
		}
		cfg, err := LoadConfig(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		if cfg.HeldStream != on {
			t.Fatalf("GET_STREAM=%q: HeldStream %v", env["GET_STREAM"], cfg.HeldStream)
		}
		key, err := cfg.CursorKey(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := newServer(cfg, emu.Store, key, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv.Handler())
		url := hs.URL + "/mcp"
		r := servertest.DoURL(t, url, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`),
			"Authorization: Bearer "+emu.Key)
		if r.Status != http.StatusOK {
			t.Fatalf("initialize: %d %s", r.Status, r.Body)
		}
		headers := []string{"Authorization: Bearer " + emu.Key, "Mcp-Session-Id: " + r.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version: 2025-11-25"}
		st, status := servertest.TryOpenStream(t, http.MethodGet, url, nil, append(headers, "Accept: text/event-stream")...)
		want := map[bool]int{false: http.StatusMethodNotAllowed, true: http.StatusOK}[on]
		if status != want {
			t.Errorf("GET_STREAM=%q: GET /mcp answered %d, want %d", env["GET_STREAM"], status, want)
		}
		if st != nil {
			st.Close()
		}
		hs.Close()
	}
	env := emu.env(false)
	env["GET_STREAM"] = "true"
	if _, err := LoadConfig(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "GET_STREAM") {
		t.Errorf("GET_STREAM=true with RESPONSE_STREAMING=false: %v, want a refusal naming GET_STREAM", err)
	}
}
