package servertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// Stateless is a 2026-07-28 client of one key: no session; every request
// carries the revision and the client's capabilities in params._meta, and
// the standard headers: MCP-Protocol-Version, Mcp-Method, and Mcp-Name
// with the method's name parameter (tools/call and prompts/get: name;
// resources/read: uri; tasks/get, tasks/update and tasks/cancel: taskId).
type Stateless struct {
	env  *Env
	Key  string
	Caps json.RawMessage
	// URL is the endpoint it posts to (the Env's, or another instance's).
	URL    string
	lastID atomic.Int64
}

// Stateless returns a 2026-07-28 client of role's key declaring caps (a
// JSON object).
func (e *Env) Stateless(role, caps string) *Stateless {
	return &Stateless{env: e, Key: e.Keys[role], Caps: json.RawMessage(caps), URL: e.URL}
}

// nameParam is the params member the Mcp-Name header of method repeats.
func nameParam(method string) (string, bool) {
	switch method {
	case "tools/call", "prompts/get":
		return "name", true
	case "resources/read":
		return "uri", true
	case "tasks/get", "tasks/update", "tasks/cancel":
		return "taskId", true
	}
	return "", false
}

// Post sends one request. params may be nil; its _meta, when absent, is
// the revision and the client's capabilities. The extra headers ("Name:
// value") come after the standard ones and replace those of the same
// name; "Mcp-Name:" with no value sends it empty.
func (c *Stateless) Post(t testing.TB, method string, params map[string]any, extra ...string) *Response {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if _, ok := params["_meta"]; !ok {
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": c.Caps,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "servertest", "version": "0"},
		}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.lastID.Add(1), "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	h := []string{"Authorization: Bearer " + c.Key, "MCP-Protocol-Version: 2026-07-28", "Mcp-Method: " + method}
	if p, ok := nameParam(method); ok {
		h = append(h, "Mcp-Name: "+fmt.Sprint(params[p]))
	}
	return DoURL(t, c.URL, http.MethodPost, body, append(h, extra...)...)
}

// Call sends one request and returns its JSON-RPC answer, failing unless
// it came as JSON with HTTP 200.
func (c *Stateless) Call(t testing.TB, method string, params map[string]any) map[string]any {
	t.Helper()
	r := c.Post(t, method, params)
	if r.Status != http.StatusOK {
		t.Fatalf("%s: HTTP %d %s", method, r.Status, r.Body)
	}
	return r.JSON(t)
}

// Task returns tasks/get's answer for id.
func (c *Stateless) Task(t testing.TB, id string) map[string]any {
	t.Helper()
	return c.Call(t, "tasks/get", map[string]any{"taskId": id})
}

// AwaitTask polls tasks/get until the task's status is one of want and
// returns its result, failing after a minute.
func (c *Stateless) AwaitTask(t testing.TB, id string, want ...string) map[string]any {
	t.Helper()
	return c.AwaitTaskWhere(t, id, func(res map[string]any) bool {
		for _, w := range want {
			if res["status"] == w {
				return true
			}
		}
		return false
	})
}

// AwaitTaskWhere polls tasks/get until ok holds of its result and returns
// it, failing after a minute.
func (c *Stateless) AwaitTaskWhere(t testing.TB, id string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		msg := c.Task(t, id)
		res, found := msg["result"].(map[string]any)
		if !found {
			t.Fatalf("tasks/get %s: %v", id, msg)
		}
		if ok(res) {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %v after a minute", id, res)
		}
		time.Sleep(20 * time.Millisecond) // within the read lane's rate limit
	}
}
