package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	validator "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/custodymcp/custody/shared/server/servertest"
)

// One test per field case of the field cases (docs/decisions.md "Tests and the field cases") (the reference, not an input:
// each is rewritten here in Custody's own words and data). Test names quote
// the expectation.

func rpcCode(t *testing.T, r *servertest.Response) int {
	t.Helper()
	var msg struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &msg); err != nil {
		t.Fatalf("body is not JSON: %q", r.Body)
	}
	if msg.Error == nil {
		return 0
	}
	return msg.Error.Code
}

func expectStatus(t *testing.T, r *servertest.Response, want int) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status = %d, want %d; body %s", r.Status, want, r.Body)
	}
}

func TestFB01_UnknownSessionIs404AndReinitializeMintsANewOne(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	unknown := strings.Repeat("ab", 16)
	r := env.Do(t, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`),
		"Authorization: Bearer "+s.Key, "Mcp-Session-Id: "+unknown, "MCP-Protocol-Version: 2025-11-25")
	expectStatus(t, r, http.StatusNotFound)
	if rpcCode(t, r) == 0 {
		t.Errorf("404 body is not a JSON-RPC error: %s", r.Body)
	}
	r = env.Do(t, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"acceptance-probe","version":"0.0.0"}}}`),
		"Authorization: Bearer "+s.Key)
	expectStatus(t, r, http.StatusOK)
	if id := r.Header.Get("Mcp-Session-Id"); id == "" || id == unknown || id == s.ID {
		t.Errorf("recovery initialize minted %q, want a fresh id", id)
	}
}

func TestFB03_ValidCredentialsWithUnknownSessionAre404WithoutChallenge(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	unknown := strings.Repeat("cd", 16)
	get := env.Do(t, http.MethodGet, nil, "Authorization: Bearer "+s.Key, "Mcp-Session-Id: "+unknown,
		"Accept: text/event-stream", "MCP-Protocol-Version: 2025-11-25")
	post := env.Do(t, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":5,"method":"ping","params":{}}`),
		"Authorization: Bearer "+s.Key, "Mcp-Session-Id: "+unknown, "MCP-Protocol-Version: 2025-11-25")
	for name, r := range map[string]*servertest.Response{"GET": get, "POST": post} {
		if r.Status != http.StatusNotFound {
			t.Errorf("%s status = %d, want 404", name, r.Status)
		}
		if r.Header.Get("WWW-Authenticate") != "" {
			t.Errorf("%s carries a WWW-Authenticate challenge; 401 semantics are for credentials only", name)
		}
	}
}

func TestFB04_MissingSessionHeaderIs400AndTheSessionSurvives(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	r := env.Do(t, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"p","version":"0"}}}`),
		"Authorization: Bearer "+env.Keys[servertest.Attorney])
	expectStatus(t, r, http.StatusOK)
	sid := r.Header.Get("Mcp-Session-Id")
	auth := "Authorization: Bearer " + env.Keys[servertest.Attorney]
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
	} {
		r := env.Do(t, http.MethodPost, []byte(body), auth, "MCP-Protocol-Version: 2025-11-25")
		expectStatus(t, r, http.StatusBadRequest)
		if r.Header.Get("Mcp-Session-Id") != "" {
			t.Error("a request without the header minted a session")
		}
	}
	r = env.Do(t, http.MethodPost, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), auth, "Mcp-Session-Id: "+sid, "MCP-Protocol-Version: 2025-11-25")
	expectStatus(t, r, http.StatusAccepted)
	r = env.Do(t, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`), auth, "Mcp-Session-Id: "+sid, "MCP-Protocol-Version: 2025-11-25")
	expectStatus(t, r, http.StatusOK)
	if _, ok := r.JSON(t)["result"].(map[string]any)["tools"]; !ok {
		t.Errorf("tools/list in the surviving session has no tools: %s", r.Body)
	}
}

func TestFB06_HeaderlessRequestUsesTheSessionRevision(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-03-26")
	auth := "Authorization: Bearer " + s.Key
	r := env.Do(t, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`), auth, "Mcp-Session-Id: "+s.ID)
	expectStatus(t, r, http.StatusOK)
	tools := r.JSON(t)["result"].(map[string]any)["tools"].([]any)
	if _, has := tools[0].(map[string]any)["outputSchema"]; has {
		t.Error("a 2025-03-26 session was served 2025-06-18 fields (outputSchema)")
	}
	r = env.Do(t, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`), auth, "Mcp-Session-Id: "+s.ID, "MCP-Protocol-Version: 2025-03-26")
	expectStatus(t, r, http.StatusOK)
}

func TestFB07_BadProtocolVersionHeadersAre400(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	for _, v := range []string{"1999-12-31", "latest", "", "2026-07-28"} {
		t.Run(fmt.Sprintf("%q", v), func(t *testing.T) {
			r := env.Do(t, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`),
				"Authorization: Bearer "+s.Key, "Mcp-Session-Id: "+s.ID, "MCP-Protocol-Version: "+v)
			expectStatus(t, r, http.StatusBadRequest)
		})
	}
	r := s.Post(t, []byte(`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}}`))
	expectStatus(t, r, http.StatusOK)
}

func TestFB09_AcceptedNotificationsAre202WithAnEmptyBody(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"never-sent","reason":"probe"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t-1","progress":1}}`,
	} {
		r := s.Post(t, []byte(body))
		if r.Status != http.StatusAccepted || len(r.Body) != 0 {
			t.Errorf("%s: status %d body %q, want 202 and no body", body, r.Status, r.Body)
		}
		if ct := r.Header.Get("Content-Type"); strings.Contains(ct, "json") {
			t.Errorf("%s: Content-Type %q implies a payload", body, ct)
		}
	}
}

func TestFB10_NullAndNonIntegerIdsAre400InvalidRequest(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	for _, id := range []string{"null", "{}", "1.5", "true"} {
		r := s.Post(t, []byte(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list"}`))
		if r.Status != http.StatusBadRequest || rpcCode(t, r) != -32600 {
			t.Errorf("id %s: status %d code %d, want 400 and -32600", id, r.Status, rpcCode(t, r))
		}
		if _, has := r.JSON(t)["result"]; has {
			t.Errorf("id %s was answered with a result", id)
		}
	}
}

func TestFB12_ArraysAreRefusedOutsideA20250326Session(t *testing.T) {
	env := fixtureEnv(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	for _, body := range []string{
		`[{"jsonrpc":"2.0","id":1,"method":"ping","params":{}},{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}]`,
		`[]`,
		`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
	} {
		r := s.Post(t, []byte(body))
		if r.Status != http.StatusBadRequest || rpcCode(t, r) != -32600 || bytes.HasPrefix(r.Body, []byte("[")) {
			t.Errorf("%s: status %d body %s, want 400 -32600 and no array", body, r.Status, r.Body)
		}
	}
	// A 2025-03-26 session must accept batches: one response per request.
	old := env.Initialize(t, servertest.Attorney, "2025-03-26")
	r := old.Post(t, []byte(`[{"jsonrpc":"2.0","id":1,"method":"ping","params":{}},{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}},{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"fixture_echo","arguments":{"text":"hi"}}}]`))
	expectStatus(t, r, http.StatusOK)
	var out []map[string]any
	if err := json.Unmarshal(r.Body, &out); err != nil || len(out) != 2 {
		t.Fatalf("batch answer %s: want an array of two responses", r.Body)
	}
	if out[0]["id"] != 1.0 || out[1]["id"] != "b" {
		t.Errorf("batch ids = %v, %v; want 1 and \"b\" in order", out[0]["id"], out[1]["id"])
	}
}

func TestFB13_UnknownMethodIsMinus32601AndUnknownNotificationIs202(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	for i, body := range []string{
		`{"jsonrpc":"2.0","id":3,"method":"probe/no_such_method","params":{}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/unknown"}`,
	} {
		r := s.Post(t, []byte(body))
		expectStatus(t, r, http.StatusOK)
		if code := rpcCode(t, r); code != -32601 {
			t.Errorf("code = %d, want -32601", code)
		}
		if id := r.JSON(t)["id"]; id != float64(3+i) {
			t.Errorf("id = %v, want %d", id, 3+i)
		}
	}
	r := s.Post(t, []byte(`{"jsonrpc":"2.0","method":"invalid/notification","params":{}}`))
	if r.Status != http.StatusAccepted || len(r.Body) != 0 {
		t.Errorf("unknown notification: %d %q, want 202 empty", r.Status, r.Body)
	}
}

func TestFB15_UnknownToolIsAProtocolErrorMinus32602(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	for _, name := range []string{"__probe_nonexistent_tool__", ""} {
		msg := s.Call(t, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}})
		if _, has := msg["result"]; has {
			t.Errorf("tool %q: answered with a result %v", name, msg)
		}
		if code := msg["error"].(map[string]any)["code"]; code != -32602.0 {
			t.Errorf("tool %q: code %v, want -32602", name, code)
		}
	}
}

func TestFB16_ArgumentErrorsAreToolErrorsAndEnvelopeErrorsAreMinus32602(t *testing.T) {
	env := fixtureEnv(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	for _, tc := range []struct {
		args  any
		field string
	}{
		{map[string]any{}, "text"},
		{map[string]any{"text": 12345}, "text"},
		{map[string]any{"text": "x", "extra": true}, "extra"},
	} {
		res := s.Tool(t, "fixture_echo", tc.args)
		if res["isError"] != true {
			t.Fatalf("args %v: not isError: %v", tc.args, res)
		}
		text := res["content"].([]any)[0].(map[string]any)["text"].(string)
		errObj := servertest.Structured(t, res)["error"].(map[string]any)
		if errObj["class"] != "VALIDATION" || errObj["field"] != tc.field || !strings.Contains(text, tc.field) {
			t.Errorf("args %v: refusal %v / %q, want VALIDATION naming %q", tc.args, errObj, text, tc.field)
		}
		if strings.Contains(text, "12345") {
			t.Errorf("the refusal quotes the offending value: %q", text)
		}
	}
	for _, params := range []map[string]any{
		{"name": "fixture_echo", "arguments": "not-an-object"},
		{"arguments": map[string]any{}},
	} {
		msg := s.Call(t, "tools/call", params)
		if e, ok := msg["error"].(map[string]any); !ok || e["code"] != -32602.0 {
			t.Errorf("params %v: %v, want error -32602", params, msg)
		}
	}
}

func TestFB17_StructuredResultsAndRefusalsValidateAgainstTheOutputSchema(t *testing.T) {
	env := fixtureEnv(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	var schema any
	for _, raw := range listAllTools(t, s) {
		tool := raw.(map[string]any)
		if tool["name"] == "fixture_structured" {
			schema = tool["outputSchema"]
		}
	}
	if schema == nil {
		t.Fatal("fixture_structured declares no outputSchema")
	}
	c := validator.NewCompiler()
	if err := c.AddResource("urn:out", schema); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("urn:out")
	if err != nil {
		t.Fatal(err)
	}
	for _, fail := range []bool{false, true} {
		res := s.Tool(t, "fixture_structured", map[string]any{"fail": fail})
		if (res["isError"] == true) != fail {
			t.Fatalf("fail=%v: isError %v", fail, res["isError"])
		}
		sc := res["structuredContent"]
		if err := sch.Validate(jsonValue(t, sc)); err != nil {
			t.Errorf("fail=%v: structuredContent %v violates the outputSchema: %v", fail, sc, err)
		}
		text := res["content"].([]any)[0].(map[string]any)["text"].(string)
		if !fail {
			var echoed any
			if err := json.Unmarshal([]byte(text), &echoed); err != nil || fmt.Sprint(echoed) != fmt.Sprint(sc) {
				t.Errorf("the text block %q does not carry the same JSON as structuredContent", text)
			}
		} else if !strings.Contains(text, "asked to fail") {
			t.Errorf("the failure text is not in content: %q", text)
		}
	}
}

func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, _ := json.Marshal(v)
	out, err := validator.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// listAllTools pages tools/list to the end.
func listAllTools(t *testing.T, s *servertest.Session) []any {
	t.Helper()
	var all []any
	params := map[string]any{}
	for i := 0; i < 100; i++ {
		res := s.Call(t, "tools/list", params)["result"].(map[string]any)
		all = append(all, res["tools"].([]any)...)
		next, ok := res["nextCursor"].(string)
		if !ok {
			return all
		}
		if next == "" {
			t.Fatal("the server issued an empty-string cursor")
		}
		params = map[string]any{"cursor": next}
	}
	t.Fatal("tools/list never ended")
	return nil
}

func TestFB18_AnUnissuedCursorIsMinus32602NotPageOne(t *testing.T) {
	env := servertest.New(t, servertest.Options{ToolPageSize: 3})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	other := env.Initialize(t, servertest.Attorney2, "2025-11-25")
	first := s.Call(t, "tools/list", map[string]any{})["result"].(map[string]any)
	issued := first["nextCursor"].(string)
	for name, tc := range map[string]struct {
		s      *servertest.Session
		cursor string
	}{
		"never issued":                       {s, "cursor-never-issued-42"},
		"empty string":                       {s, ""},
		"edited":                             {s, issued[:len(issued)-3] + "xyz"},
		"issued to another key of the owner": {other, issued},
	} {
		t.Run(name, func(t *testing.T) {
			msg := tc.s.Call(t, "tools/list", map[string]any{"cursor": tc.cursor})
			e, ok := msg["error"].(map[string]any)
			if !ok || e["code"] != -32602.0 {
				t.Errorf("tools/list with cursor %q = %v, want -32602", tc.cursor, msg)
			}
		})
	}
}

func TestFB29_PreflightIsAnsweredWithoutCredentialsAndForeignOriginsAre403(t *testing.T) {
	env := servertest.New(t, servertest.Options{AllowedOrigins: []string{"https://allowed.example.test"}})
	pre := env.Do(t, http.MethodOptions, nil, "Origin: https://allowed.example.test",
		"Access-Control-Request-Method: POST",
		"Access-Control-Request-Headers: authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id")
	if pre.Status != http.StatusNoContent && pre.Status != http.StatusOK {
		t.Fatalf("preflight status %d", pre.Status)
	}
	if got := pre.Header.Get("Access-Control-Allow-Origin"); got != "https://allowed.example.test" {
		t.Errorf("Allow-Origin = %q", got)
	}
	methods := pre.Header.Get("Access-Control-Allow-Methods")
	for _, m := range []string{"GET", "POST", "DELETE"} {
		if !strings.Contains(methods, m) {
			t.Errorf("Allow-Methods %q lacks %s", methods, m)
		}
	}
	allowed := strings.ToLower(pre.Header.Get("Access-Control-Allow-Headers"))
	for _, h := range []string{"authorization", "content-type", "mcp-protocol-version", "mcp-session-id", "last-event-id"} {
		if !strings.Contains(allowed, h) {
			t.Errorf("Allow-Headers %q lacks %s", allowed, h)
		}
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"acceptance-probe","version":"0.0.0"}}}`
	ok := env.Do(t, http.MethodPost, []byte(init), "Origin: https://allowed.example.test", "Authorization: Bearer "+env.Keys[servertest.Attorney])
	expectStatus(t, ok, http.StatusOK)
	if !strings.Contains(ok.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
		t.Errorf("Expose-Headers %q lacks Mcp-Session-Id", ok.Header.Get("Access-Control-Expose-Headers"))
	}
	denied := env.Do(t, http.MethodPost, []byte(init), "Origin: https://allowed.example.test")
	expectStatus(t, denied, http.StatusUnauthorized)
	if !strings.Contains(denied.Header.Get("Access-Control-Expose-Headers"), "WWW-Authenticate") {
		t.Error("a 401 to an allowed origin does not expose WWW-Authenticate")
	}
	evil := env.Do(t, http.MethodPost, []byte(init), "Origin: https://evil.example.test", "Authorization: Bearer "+env.Keys[servertest.Attorney])
	expectStatus(t, evil, http.StatusForbidden)
}

func TestFB31_OversizedBodiesAre413JSONAndOrdinaryLargeOnesPass(t *testing.T) {
	env := fixtureEnv(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	call := func(n int) *servertest.Response {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fixture_echo","arguments":{"text":%q}}}`, strings.Repeat("x", n))
		return s.Post(t, []byte(body))
	}
	r := call(256 << 10)
	expectStatus(t, r, http.StatusOK)
	if r.JSON(t)["result"].(map[string]any)["isError"] == true {
		t.Error("a 256 KiB argument was refused")
	}
	r = call(4<<20 + 1)
	expectStatus(t, r, http.StatusRequestEntityTooLarge)
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("413 Content-Type = %q, want application/json", ct)
	}
	if rpcCode(t, r) == 0 {
		t.Errorf("413 body is not a JSON-RPC error: %.200s", r.Body)
	}
}

func TestABadHostOnALoopbackBindIs403(t *testing.T) {
	env := servertest.New(t, servertest.Options{AllowedHosts: []string{"127.0.0.1:8080"}})
	req, _ := http.NewRequest(http.MethodPost, env.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+env.Keys[servertest.Attorney])
	req.Host = "evil.example.test" // a DNS-rebinding page's Host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("bad Host: %d %s, want 403 JSON", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	req, _ = http.NewRequest(http.MethodOptions, env.URL, nil)
	req.Host = "127.0.0.1:8080"
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("allowed Host: %d, want 204", resp.StatusCode)
	}
}
