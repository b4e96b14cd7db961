package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/server/servertest"
)

// TestAQuestionAskedByOneProcessIsAnsweredThroughAnother runs the emulator
// and two dev-server processes with the fixture profile on one table and
// one data folder, and shows that a server-to-client request lives in the
// store, not in the process that asked: a tool call on A parks its form
// elicitation (the conformance fixture test_elicitation), the client's
// answer is POSTed to B (202), and A — which never saw that POST — completes
// the call with a result reflecting the answer. Then the other way round
// with a sampling request asked by B and answered through A.
func TestAQuestionAskedByOneProcessIsAnsweredThroughAnother(t *testing.T) {
	devBin, _, minidynBin := buildTools(t)
	emu := start(t, "minidyn", minidynBin, nil, "-addr", "127.0.0.1:0", "-table", "custody")
	endpoint := emu.await(t, minidynURL, 30*time.Second)
	data := t.TempDir()
	env := []string{"STORE_ENGINE=dynamodb", "DYNAMODB_TABLE=custody", "DYNAMODB_ENDPOINT=" + endpoint}
	// A seeds and mints the dev and fixture keys; B starts once A serves and
	// reuses both (one data folder).
	a := start(t, "dev A", devBin, env, "-conformance", "-addr", "127.0.0.1:0", "-data", data)
	urlA := a.await(t, serving, 2*time.Minute)
	b := start(t, "dev B", devBin, env, "-conformance", "-addr", "127.0.0.1:0", "-data", data)
	urlB := b.await(t, serving, time.Minute)

	// No credential: the fixture profile authenticates the session as its key.
	r := servertest.DoURL(t, urlA, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{},"sampling":{}},"clientInfo":{"name":"two-processes","version":"0"}}}`))
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Status != http.StatusOK || sid == "" {
		t.Fatalf("initialize on A: %d %s", r.Status, r.Body)
	}
	session := []string{"Mcp-Session-Id: " + sid, "MCP-Protocol-Version: 2025-11-25"}
	if r := servertest.DoURL(t, urlB, http.MethodPost, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), session...); r.Status != http.StatusAccepted {
		t.Fatalf("notifications/initialized on B: %d %s", r.Status, r.Body)
	}

	for _, tc := range []struct {
		name, asker, answerer, call, method, answer, want string
	}{
		{
			name: "elicitation asked by A, answered through B", asker: urlA, answerer: urlB,
			call:   `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"Who is asking?"}}}`,
			method: "elicitation/create",
			answer: `{"action":"accept","content":{"username":"b-user","email":"b@example.com"}}`,
			want:   `User response: action=accept, content={"username":"b-user","email":"b@example.com"}`,
		},
		{
			name: "sampling asked by B, answered through A", asker: urlB, answerer: urlA,
			call:   `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"Which instance?"}}}`,
			method: "sampling/createMessage",
			answer: `{"role":"assistant","content":{"type":"text","text":"answered through the other one"},"model":"m","stopReason":"endTurn"}`,
			want:   "LLM response: answered through the other one",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es := servertest.OpenStream(t, http.MethodPost, tc.asker, []byte(tc.call), session...)
			q := es.NextMessage(t)
			qid, _ := q["id"].(string)
			if q["method"] != tc.method || qid == "" {
				t.Fatalf("first message %v, want a %s request", q, tc.method)
			}
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"result":%s}`, qid, tc.answer)
			if r := servertest.DoURL(t, tc.answerer, http.MethodPost, []byte(body), session...); r.Status != http.StatusAccepted || len(r.Body) != 0 {
				t.Fatalf("the answer through the other process: %d %q, want 202 and no body", r.Status, r.Body)
			}
			final := es.NextMessage(t)
			res, _ := final["result"].(map[string]any)
			if res == nil || res["isError"] == true {
				t.Fatalf("the call's answer %v, want its result", final)
			}
			text := res["content"].([]any)[0].(map[string]any)["text"].(string)
			if text != tc.want {
				t.Errorf("result %q, want %q (the answer given through the other process)", text, tc.want)
			}
			// The question is resolved: answering it again is refused.
			if r := servertest.DoURL(t, tc.answerer, http.MethodPost, []byte(body), session...); r.Status != http.StatusBadRequest {
				t.Errorf("a second answer: %d %s, want 400", r.Status, strings.TrimSpace(string(r.Body)))
			}
		})
	}
}
