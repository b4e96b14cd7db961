package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/tools"
)

// The 2026-07-28 era on the same /mcp (docs/protocol.md "body first").

const rev2026 = "2026-07-28"

// meta2026 is a request _meta with the given client capabilities.
func meta2026(caps string) map[string]any {
	var c any
	_ = json.Unmarshal([]byte(caps), &c)
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    rev2026,
		"io.modelcontextprotocol/clientCapabilities": c,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "servertest", "version": "0"},
	}
}

// call2026 sends one 2026 request with the standard headers.
func call2026(t *testing.T, url, key string, id int, method string, params map[string]any, extra ...string) *servertest.Response {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if _, ok := params["_meta"]; !ok {
		params["_meta"] = meta2026(`{}`)
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	h := []string{"Authorization: Bearer " + key, "MCP-Protocol-Version: " + rev2026, "Mcp-Method: " + method}
	switch method {
	case "tools/call", "prompts/get":
		h = append(h, "Mcp-Name: "+fmt.Sprint(params["name"]))
		if args, _ := params["arguments"].(map[string]any); method == "tools/call" && args != nil {
			if c, ok := args["case_id"].(string); ok { // its x-mcp-header (SEP-2243)
				h = append(h, "Mcp-Param-Case-Id: "+c)
			}
		}
	case "resources/read":
		h = append(h, "Mcp-Name: "+fmt.Sprint(params["uri"]))
	}
	return servertest.DoURL(t, url, http.MethodPost, body, append(h, extra...)...)
}

// mrtrEffects counts the at-most-once fixture's effects: one runs after
// each commit of the tool's writes, as a queue send would.
var mrtrEffects atomic.Int64

// GreetInput names nobody: the tool asks.
type GreetInput struct {
	Salutation string `json:"salutation,omitempty"`
}

func register2026Fixtures(reg *tools.Registry) error {
	if err := registerFixtures(reg); err != nil {
		return err
	}
	if err := tools.Register(reg, tools.Spec{
		Name: "fixture_greet_once", Title: "Greet once (test fixture)", Scope: auth.ScopeRead, AtMostOnce: true,
		Description: "Asks for a name, then a colour, and performs its one effect.",
	}, func(ctx context.Context, c *tools.Call, in GreetInput) (tools.Raw, error) {
		name, err := c.Peer.Ask(ctx, "name", "elicitation/create", map[string]any{"message": "Your name?",
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return tools.Raw{}, err
		}
		colour, err := c.Peer.Ask(ctx, "colour", "elicitation/create", map[string]any{"message": "Your colour?",
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"colour": map[string]any{"type": "string"}}}})
		if err != nil {
			return tools.Raw{}, err
		}
		c.Write(tools.Write{After: []mcp.Effect{{Name: "greet", Recovery: "none: a test counter",
			Run: func(context.Context) error { mrtrEffects.Add(1); return nil }}}})
		return tools.Raw{Content: []mcpContent{textBlock(fmt.Sprintf("%s %s %s", in.Salutation, name, colour))}}, nil
	}); err != nil {
		return err
	}
	if err := tools.Register(reg, tools.Spec{
		Name: "fixture_needs_sampling", Title: "Needs sampling (test fixture)", Scope: auth.ScopeRead,
		Description: "Cannot work without the sampling capability.", Requires: []string{"sampling"},
	}, func(context.Context, *tools.Call, struct{}) (tools.Raw, error) {
		return tools.Raw{Content: []mcpContent{textBlock("sampled")}}, nil
	}); err != nil {
		return err
	}
	return tools.Register(reg, tools.Spec{
		Name: "fixture_logs", Title: "Logs (test fixture)", Scope: auth.ScopeRead,
		Description: "Logs one info message, then answers.",
	}, func(_ context.Context, c *tools.Call, _ struct{}) (tools.Raw, error) {
		c.Peer.Log("info", "fixture", "hello from the tool")
		return tools.Raw{Content: []mcpContent{textBlock("logged")}}, nil
	})
}

func env2026(t *testing.T) *servertest.Env {
	return servertest.New(t, servertest.Options{RegisterExtra: register2026Fixtures, ToolPageSize: 3})
}

func rpcError(t *testing.T, r *servertest.Response) (code float64, data map[string]any, id any) {
	t.Helper()
	msg := r.JSON(t)
	e, ok := msg["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error in %s", r.Body)
	}
	data, _ = e["data"].(map[string]any)
	return e["code"].(float64), data, msg["id"]
}

func TestEra2026TransportRefusalsInOrder(t *testing.T) {
	env := env2026(t)
	key := env.Keys[servertest.Attorney]
	send := func(id int, headerRev, metaRev string, withCaps bool, method string) *servertest.Response {
		meta := map[string]any{"io.modelcontextprotocol/clientInfo": map[string]any{"name": "x", "version": "1"}}
		if metaRev != "" {
			meta["io.modelcontextprotocol/protocolVersion"] = metaRev
		}
		if withCaps {
			meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{}
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": map[string]any{"_meta": meta}})
		h := []string{"Authorization: Bearer " + key, "Mcp-Method: " + method}
		if headerRev != "" {
			h = append(h, "MCP-Protocol-Version: "+headerRev)
		}
		return env.Do(t, http.MethodPost, body, h...)
	}
	for _, tc := range []struct {
		name             string
		r                *servertest.Response
		status           int
		code             float64
		supported, field string
	}{
		{"header missing is -32020", send(1, "", rev2026, true, "server/discover"), 400, -32020, "", ""},
		{"_meta without protocolVersion is -32602", send(2, rev2026, "", true, "server/discover"), 400, -32602, "", ""},
		{"_meta without clientCapabilities is -32602", send(3, rev2026, rev2026, false, "server/discover"), 400, -32602, "", ""},
		{"header differing from _meta is -32020", send(4, rev2026, "v999.0.0", true, "server/discover"), 400, -32020, "", ""},
		{"an unsupported revision is -32022 with the supported list", send(5, "v999.0.0", "v999.0.0", true, "server/discover"), 400, -32022, "supported", "v999.0.0"},
		{"initialize is removed: 404 -32601", send(6, rev2026, rev2026, true, "initialize"), 404, -32601, "", ""},
		{"ping is removed: 404 -32601", send(7, rev2026, rev2026, true, "ping"), 404, -32601, "", ""},
		{"logging/setLevel is removed: 404 -32601", send(8, rev2026, rev2026, true, "logging/setLevel"), 404, -32601, "", ""},
		{"resources/subscribe is not served: 404 -32601", send(9, rev2026, rev2026, true, "resources/subscribe"), 404, -32601, "", ""},
		{"an unknown method is 404 -32601", send(10, rev2026, rev2026, true, "unknown/method"), 404, -32601, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", tc.r.Status, tc.status, tc.r.Body)
			}
			code, data, id := rpcError(t, tc.r)
			if code != tc.code || id == nil {
				t.Errorf("code %v id %v, want %v with the request id", code, id, tc.code)
			}
			if tc.supported != "" && (len(data["supported"].([]any)) == 0 || data["requested"] != tc.field) {
				t.Errorf("data %v, want supported and requested", data)
			}
		})
	}
}

func TestEra2026HeadersMustMatchTheBody(t *testing.T) {
	env := env2026(t)
	key := env.Keys[servertest.Attorney]
	args := map[string]any{"name": "list_matters", "arguments": map[string]any{}}
	if r := call2026(t, env.URL, key, 1, "tools/call", args, "Mcp-Method: tools/list"); r.Status != 400 {
		t.Errorf("Mcp-Method mismatch: %d, want 400 -32020", r.Status)
	} else if code, _, _ := rpcError(t, r); code != -32020 {
		t.Errorf("Mcp-Method mismatch code %v", code)
	}
	r := call2026(t, env.URL, key, 2, "tools/call", map[string]any{"name": "list_matters", "arguments": map[string]any{}}, "Mcp-Name: get_matter")
	if code, _, _ := rpcError(t, r); r.Status != 400 || code != -32020 {
		t.Errorf("Mcp-Name mismatch: %d %v, want 400 -32020", r.Status, code)
	}
	enc := "=?base64?" + base64.StdEncoding.EncodeToString([]byte("list_matters")) + "?="
	r = call2026(t, env.URL, key, 3, "tools/call", map[string]any{"name": "list_matters", "arguments": map[string]any{}}, "Mcp-Name: "+enc)
	if r.Status != 200 {
		t.Errorf("a base64-encoded Mcp-Name is decoded first: %d %s", r.Status, r.Body)
	}
	// Mcp-Session-Id is ignored in the 2026 era.
	r = call2026(t, env.URL, key, 4, "tools/list", nil, "Mcp-Session-Id: nonsense")
	if r.Status != 200 {
		t.Errorf("with a stray Mcp-Session-Id: %d %s", r.Status, r.Body)
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		if r := env.Do(t, m, nil, "Authorization: Bearer "+key, "MCP-Protocol-Version: "+rev2026); r.Status != 405 {
			t.Errorf("%s with the 2026 header: %d, want 405", m, r.Status)
		}
	}
}

func TestEra2026DiscoverListsAndCallsCarryResultTypeAndCachingHints(t *testing.T) {
	env := env2026(t)
	key := env.Keys[servertest.Attorney]
	d := call2026(t, env.URL, key, 1, "server/discover", nil).JSON(t)["result"].(map[string]any)
	if d["resultType"] != "complete" || d["cacheScope"] != "private" || d["ttlMs"] == nil ||
		len(d["supportedVersions"].([]any)) == 0 || d["capabilities"].(map[string]any)["tools"] == nil {
		t.Errorf("discover = %v", d)
	}
	if d["_meta"].(map[string]any)["io.modelcontextprotocol/serverInfo"].(map[string]any)["name"] != "custody" {
		t.Errorf("discover _meta lacks serverInfo: %v", d["_meta"])
	}
	if !strings.Contains(d["instructions"].(string), "Hale & Ortiz") {
		t.Errorf("discover instructions are not the tenant's own document: %q", d["instructions"])
	}
	lst := call2026(t, env.URL, key, 2, "tools/list", nil).JSON(t)["result"].(map[string]any)
	if lst["resultType"] != "complete" || lst["cacheScope"] != "private" || lst["nextCursor"] == nil {
		t.Fatalf("tools/list = %v", lst)
	}
	// A cursor issued in one era is refused in the other.
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	legacy := s.Call(t, "tools/list", map[string]any{"cursor": lst["nextCursor"]})
	if e, ok := legacy["error"].(map[string]any); !ok || e["code"] != -32602.0 {
		t.Errorf("a 2026 cursor in a 2025 session = %v, want -32602", legacy)
	}
	legacyCursor := s.Call(t, "tools/list", map[string]any{})["result"].(map[string]any)["nextCursor"]
	if code, _, _ := rpcError(t, call2026(t, env.URL, key, 3, "tools/list", map[string]any{"cursor": legacyCursor})); code != -32602 {
		t.Errorf("a 2025 cursor in the 2026 era: %v, want -32602", code)
	}
	res := call2026(t, env.URL, key, 4, "tools/call", map[string]any{"name": "get_matter", "arguments": map[string]any{"case_id": seed.Harbor}}).JSON(t)["result"].(map[string]any)
	if res["resultType"] != "complete" || res["structuredContent"].(map[string]any)["verification_status"] == nil {
		t.Errorf("tools/call = %v", res)
	}
}

func TestEra2026MissingCapabilityIs400Minus32021BeforeTheToolRuns(t *testing.T) {
	env := env2026(t)
	r := call2026(t, env.URL, env.Keys[servertest.Attorney], 401, "tools/call", map[string]any{"name": "fixture_needs_sampling", "arguments": map[string]any{}})
	code, data, id := rpcError(t, r)
	if r.Status != 400 || code != -32021 || id != 401.0 || data["requiredCapabilities"].(map[string]any)["sampling"] == nil {
		t.Errorf("%d %s, want 400 -32021 with requiredCapabilities.sampling", r.Status, r.Body)
	}
	params := map[string]any{"name": "fixture_needs_sampling", "arguments": map[string]any{}, "_meta": meta2026(`{"sampling":{}}`)}
	if r := call2026(t, env.URL, env.Keys[servertest.Attorney], 2, "tools/call", params); r.Status != 200 {
		t.Errorf("with sampling declared: %d %s", r.Status, r.Body)
	}
}

func TestEra2026LogsOnlyAtTheRequestedLevel(t *testing.T) {
	env := env2026(t)
	key := env.Keys[servertest.Attorney]
	plain := call2026(t, env.URL, key, 1, "tools/call", map[string]any{"name": "fixture_logs", "arguments": map[string]any{}})
	if strings.Contains(string(plain.Body), "notifications/message") {
		t.Errorf("logged without _meta logLevel: %s", plain.Body)
	}
	meta := meta2026(`{}`)
	meta["io.modelcontextprotocol/logLevel"] = "info"
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
		"params": map[string]any{"name": "fixture_logs", "arguments": map[string]any{}, "_meta": meta}})
	es := servertest.OpenStream(t, http.MethodPost, env.URL, body, "Authorization: Bearer "+key,
		"MCP-Protocol-Version: "+rev2026, "Mcp-Method: tools/call", "Mcp-Name: fixture_logs")
	if es.Header.Get("X-Accel-Buffering") != "no" {
		t.Errorf("SSE without X-Accel-Buffering: no")
	}
	if msg := es.NextMessage(t); msg["method"] != "notifications/message" {
		t.Errorf("first message %v, want the log", msg)
	}
	if msg := es.NextMessage(t); msg["result"].(map[string]any)["resultType"] != "complete" {
		t.Errorf("then %v, want the result", msg)
	}
}

// mrtrRound sends one round of fixture_greet_once.
func mrtrRound(t *testing.T, env *servertest.Env, key string, args, responses map[string]any, state any) map[string]any {
	t.Helper()
	params := map[string]any{"name": "fixture_greet_once", "arguments": args, "_meta": meta2026(`{"elicitation":{}}`)}
	if responses != nil {
		params["inputResponses"] = responses
	}
	if state != nil {
		params["requestState"] = state
	}
	return call2026(t, env.URL, key, int(time.Now().UnixNano()%1e6), "tools/call", params).JSON(t)
}

func accept(field, v string) map[string]any {
	return map[string]any{"action": "accept", "content": map[string]any{field: v}}
}

func TestMRTRRoundsCompleteWithOneToolForBothEras(t *testing.T) {
	env := env2026(t)
	key := env.Keys[servertest.Attorney]
	args := map[string]any{"salutation": "Dear"}
	r1 := mrtrRound(t, env, key, args, nil, nil)["result"].(map[string]any)
	if r1["resultType"] != "input_required" || r1["inputRequests"].(map[string]any)["name"] == nil {
		t.Fatalf("round 1 = %v", r1)
	}
	r2 := mrtrRound(t, env, key, args, map[string]any{"name": accept("name", "Ada")}, r1["requestState"])["result"].(map[string]any)
	if r2["resultType"] != "input_required" || r2["inputRequests"].(map[string]any)["colour"] == nil || r2["requestState"] == r1["requestState"] {
		t.Fatalf("round 2 = %v, want a new question and a new state", r2)
	}
	before := mrtrEffects.Load()
	r3 := mrtrRound(t, env, key, args, map[string]any{"colour": accept("colour", "blue")}, r2["requestState"])["result"].(map[string]any)
	if r3["resultType"] != "complete" || !strings.Contains(fmt.Sprint(r3["content"]), "Ada") || !strings.Contains(fmt.Sprint(r3["content"]), "blue") {
		t.Fatalf("round 3 = %v, want the greeting with both answers", r3)
	}
	if mrtrEffects.Load() != before+1 {
		t.Errorf("the effect ran %d times, want once", mrtrEffects.Load()-before)
	}
	// Replaying the final round is refused: the effect happens at most once.
	again := mrtrRound(t, env, key, args, map[string]any{"colour": accept("colour", "blue")}, r2["requestState"])["result"].(map[string]any)
	if again["isError"] != true || !strings.Contains(fmt.Sprint(again["content"]), "at most once") || mrtrEffects.Load() != before+1 {
		t.Errorf("replayed final round = %v, effects %d; want a CONFLICT refusal and no second effect", again, mrtrEffects.Load()-before)
	}
}

func TestMRTRStateBindingsAreEachEnforced(t *testing.T) {
	env := env2026(t)
	key := env.Keys[servertest.Attorney]
	args := map[string]any{"salutation": "Dear"}
	state := mrtrRound(t, env, key, args, nil, nil)["result"].(map[string]any)["requestState"].(string)
	answer := map[string]any{"name": accept("name", "Ada")}
	refused := func(t *testing.T, msg map[string]any) {
		t.Helper()
		e, ok := msg["error"].(map[string]any)
		if !ok || e["code"] != -32602.0 {
			t.Errorf("got %v, want -32602", msg)
		}
	}
	t.Run("an edited state", func(t *testing.T) {
		b := []byte(state)
		b[len(b)/2] ^= 1
		refused(t, mrtrRound(t, env, key, args, answer, string(b)))
	})
	t.Run("a foreign credential's state", func(t *testing.T) {
		refused(t, mrtrRound(t, env, env.Keys[servertest.Attorney2], args, answer, state))
	})
	t.Run("another tool's state", func(t *testing.T) {
		params := map[string]any{"name": "fixture_logs", "arguments": map[string]any{}, "inputResponses": answer,
			"requestState": state, "_meta": meta2026(`{"elicitation":{}}`)}
		refused(t, call2026(t, env.URL, key, 9, "tools/call", params).JSON(t))
	})
	t.Run("other arguments", func(t *testing.T) {
		refused(t, mrtrRound(t, env, key, map[string]any{"salutation": "Hi"}, answer, state))
	})
	t.Run("an expired state", func(t *testing.T) {
		env.Clock.Advance(11 * time.Minute)
		defer env.Clock.Advance(-11 * time.Minute)
		refused(t, mrtrRound(t, env, key, args, answer, state))
	})
	t.Run("the intact state still works", func(t *testing.T) {
		if r := mrtrRound(t, env, key, args, answer, state)["result"].(map[string]any); r["resultType"] != "input_required" {
			t.Errorf("got %v, want the next question", r)
		}
	})
	t.Run("an answer that is not an object", func(t *testing.T) {
		refused(t, mrtrRound(t, env, key, args, map[string]any{"name": 12345}, nil))
	})
}

// Every tool that takes a case_id advertises it with x-mcp-header
// "Case-Id", and a 2026-07-28 tools/call must carry the matter again as the
// Mcp-Param-Case-Id header, equal to the body's (SEP-2243): missing,
// mismatched, undecodable, or sent for a parameter the body lacks → 400 +
// -32020; "=?base64?…?=" is decoded, anything else literal.
func TestEra2026McpParamHeadersAreHeldToTheBody(t *testing.T) {
	env := env2026(t)
	key := env.Keys[servertest.Attorney]
	res := call2026(t, env.URL, key, 1, "tools/list", nil).JSON(t)["result"].(map[string]any)
	for _, tl := range res["tools"].([]any) {
		props := tl.(map[string]any)["inputSchema"].(map[string]any)["properties"].(map[string]any)
		if c, ok := props["case_id"].(map[string]any); ok && c["x-mcp-header"] != "Case-Id" {
			t.Errorf("%s: case_id lacks x-mcp-header Case-Id: %v", tl.(map[string]any)["name"], c)
		}
	}
	send := func(args map[string]any, param string) *servertest.Response {
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call",
			"params": map[string]any{"name": "get_matter", "arguments": args, "_meta": meta2026(`{}`)}})
		h := []string{"Authorization: Bearer " + key, "MCP-Protocol-Version: " + rev2026, "Mcp-Method: tools/call", "Mcp-Name: get_matter"}
		if param != "" {
			h = append(h, "Mcp-Param-Case-Id: "+param)
		}
		return servertest.DoURL(t, env.URL, http.MethodPost, body, h...)
	}
	m := seed.Meridian
	b64 := "=?base64?" + base64.StdEncoding.EncodeToString([]byte(m)) + "?="
	for _, c := range []struct {
		name   string
		args   map[string]any
		header string
		ok     bool
	}{
		{"the literal value", map[string]any{"case_id": m}, m, true},
		{"the Base64 value", map[string]any{"case_id": m}, b64, true},
		{"missing", map[string]any{"case_id": m}, "", false},
		{"another matter", map[string]any{"case_id": m}, seed.Alvarez, false},
		{"Base64 without its padding", map[string]any{"case_id": m}, "=?base64?" + base64.RawStdEncoding.EncodeToString([]byte(m)) + "?=", false},
		{"Base64 with characters outside the alphabet", map[string]any{"case_id": m}, "=?base64?bV9t!!!ZXJpZGlhbg==?=", false},
		{"a header for a parameter the body lacks", map[string]any{}, m, false},
	} {
		r := send(c.args, c.header)
		if c.ok {
			if r.Status != http.StatusOK {
				t.Errorf("%s: %d %s, want 200", c.name, r.Status, r.Body)
			}
			continue
		}
		if code, _, _ := rpcError(t, r); r.Status != http.StatusBadRequest || code != -32020 {
			t.Errorf("%s: %d %s, want 400 -32020", c.name, r.Status, r.Body)
		}
	}
}
