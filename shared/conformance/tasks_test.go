package conformance_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// The task fixtures as the suite's tasks-* scenarios read them, against the
// fixture profile as the dev server composes it (tasks served).

// tasksExtension declares what the scenarios' clients declare.
const tasksExtension = `{"elicitation":{},"sampling":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`

// toolCall is a tools/call of name with args.
func toolCall(name string, args map[string]any) map[string]any {
	if args == nil {
		args = map[string]any{}
	}
	return map[string]any{"name": name, "arguments": args}
}

// contentText is the text of a result's first content block.
func contentText(res map[string]any) string {
	blocks, _ := res["content"].([]any)
	if len(blocks) == 0 {
		return ""
	}
	s, _ := blocks[0].(map[string]any)["text"].(string)
	return s
}

func TestTheTaskFixturesAnswerAsTheTasksScenariosReadThem(t *testing.T) {
	env := newEnv(t)
	with := env.Stateless(fixtureRole, tasksExtension)
	without := env.Stateless(fixtureRole, `{"elicitation":{}}`)
	task := func(t *testing.T, name string, args map[string]any) string {
		t.Helper()
		res := resultOf(t, with.Call(t, "tools/call", toolCall(name, args)))
		id, _ := res["taskId"].(string)
		if res["resultType"] != "task" || id == "" {
			t.Fatalf("%s = %v, want a task", name, res)
		}
		return id
	}
	terminal := []string{"completed", "failed", "cancelled"}

	t.Run("greet answers at once, also with a legacy params.task", func(t *testing.T) {
		p := toolCall("greet", map[string]any{"name": "World"})
		p["task"] = map[string]any{"ttl": 60000}
		if got := complete(t, with.Call(t, "tools/call", p)); got != "Hello, World!" {
			t.Errorf("greet = %q", got)
		}
	})
	t.Run("slow_compute is a task with the extension and runs at once without it", func(t *testing.T) {
		id := task(t, "slow_compute", map[string]any{"seconds": 1, "label": "lifecycle"})
		done := with.AwaitTask(t, id, terminal...)
		if res, _ := done["result"].(map[string]any); done["status"] != "completed" || !strings.Contains(contentText(res), "lifecycle") {
			t.Errorf("slow_compute task = %v, want completed naming its label", done)
		}
		if got := complete(t, without.Call(t, "tools/call", toolCall("slow_compute", map[string]any{"seconds": 0, "label": "now"}))); !strings.Contains(got, "now") {
			t.Errorf("slow_compute without the extension = %q", got)
		}
	})
	t.Run("a running slow_compute settles to cancelled", func(t *testing.T) {
		id := task(t, "slow_compute", map[string]any{"seconds": 60, "label": "cancel"})
		resultOf(t, with.Call(t, "tasks/cancel", map[string]any{"taskId": id}))
		if got := with.AwaitTask(t, id, terminal...)["status"]; got != "cancelled" {
			t.Errorf("status = %v, want cancelled", got)
		}
	})
	t.Run("failing_job completes with result.isError, and without the extension is -32021", func(t *testing.T) {
		done := with.AwaitTask(t, task(t, "failing_job", nil), terminal...)
		if res, _ := done["result"].(map[string]any); done["status"] != "completed" || res["isError"] != true {
			t.Errorf("failing_job task = %v, want completed with result.isError", done)
		}
		r := without.Post(t, "tools/call", toolCall("failing_job", nil))
		if code := rpcCode(r.JSON(t)); r.Status != http.StatusBadRequest || code != mcp.CodeMissingRequiredCapability {
			t.Errorf("failing_job without the extension: HTTP %d, code %v", r.Status, code)
		}
	})
	t.Run("protocol_error_job fails with a JSON-RPC error and no result", func(t *testing.T) {
		done := with.AwaitTask(t, task(t, "protocol_error_job", nil), terminal...)
		e, _ := done["error"].(map[string]any)
		if done["status"] != "failed" || e["code"] != float64(mcp.CodeInternalError) || e["message"] == nil || done["result"] != nil {
			t.Errorf("protocol_error_job task = %v, want failed with error -32603 and no result", done)
		}
	})
	t.Run("confirm_delete waits for one answer and completes with it", func(t *testing.T) {
		id := task(t, "confirm_delete", map[string]any{"filename": "a.txt"})
		waiting := with.AwaitTask(t, id, append(terminal, "input_required")...)
		asked, _ := waiting["inputRequests"].(map[string]any)
		if waiting["status"] != "input_required" || len(asked) != 1 || asked["confirm"] == nil {
			t.Fatalf("confirm_delete task = %v, want input_required asking confirm", waiting)
		}
		resultOf(t, with.Call(t, "tasks/update", map[string]any{"taskId": id,
			"inputResponses": map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}}))
		done := with.AwaitTask(t, id, terminal...)
		if res, _ := done["result"].(map[string]any); done["status"] != "completed" || !strings.HasPrefix(contentText(res), "Deleted a.txt") {
			t.Errorf("confirm_delete task = %v, want completed, deleted", done)
		}
	})
	t.Run("multi_input asks two questions at once and completes once both are answered", func(t *testing.T) {
		id := task(t, "multi_input", nil)
		waiting := with.AwaitTask(t, id, append(terminal, "input_required")...)
		if asked, _ := waiting["inputRequests"].(map[string]any); len(asked) != 2 {
			t.Fatalf("multi_input task = %v, want two questions", waiting)
		}
		both := map[string]any{"action": "accept", "content": map[string]any{"name": "partial", "confirm": true}}
		for _, key := range []string{"name", "confirm"} {
			resultOf(t, with.Call(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{key: both}}))
		}
		done := with.AwaitTask(t, id, terminal...)
		if res, _ := done["result"].(map[string]any); done["status"] != "completed" || !strings.Contains(contentText(res), `"partial"`) {
			t.Errorf("multi_input task = %v, want completed with both answers", done)
		}
	})
	t.Run("test_tool_with_task asks by MRTR first, then its task greets the answer", func(t *testing.T) {
		asked, state := inputRequired(t, with.Call(t, "tools/call", toolCall("test_tool_with_task", nil)))
		if asked["user_name"] == nil {
			t.Fatalf("round 1 asks %v, want user_name", asked)
		}
		p := toolCall("test_tool_with_task", nil)
		p["inputResponses"] = map[string]any{"user_name": map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}}
		p["requestState"] = state
		res := resultOf(t, with.Call(t, "tools/call", p))
		id, _ := res["taskId"].(string)
		if res["resultType"] != "task" || id == "" || res["requestState"] != nil {
			t.Fatalf("round 2 = %v, want a task without requestState", res)
		}
		done := with.AwaitTask(t, id, terminal...)
		if r, _ := done["result"].(map[string]any); done["status"] != "completed" || !strings.Contains(contentText(r), "Alice") {
			t.Errorf("test_tool_with_task's task = %v, want completed greeting Alice", done)
		}
	})
}

// The same fixture in a 2025-11-25 session: its question before the task
// is asked on the call's stream, and the task keeps the answer.
func TestTestToolWithTaskAsksOnTheCallsStreamIn20251125ThenItsTaskGreetsTheAnswer(t *testing.T) {
	env := newEnv(t)
	s := env.InitializeWith(t, fixtureRole, "2025-11-25", `{"elicitation":{}}`)
	body := []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_tool_with_task","arguments":{},"task":{"ttl":60000}}}`)
	es := servertest.OpenStream(t, http.MethodPost, env.URL, body, s.Headers()...)
	q := es.NextMessage(t)
	if q["method"] != "elicitation/create" {
		t.Fatalf("first message %v, want the question", q)
	}
	res := answer(t, s, es, q, `{"action":"accept","content":{"name":"Bob"}}`)
	task, _ := res["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if id == "" {
		t.Fatalf("after the answer: %v, want a CreateTaskResult", res)
	}
	if got := s.AwaitTask(t, id, "completed", "failed", "cancelled", "input_required")["status"]; got != "completed" {
		t.Fatalf("task status %v, want completed without asking again", got)
	}
	if got := textOf(t, resultOf(t, s.TaskResult(t, id))); !strings.Contains(got, "Bob") {
		t.Errorf("tasks/result text %q, want the greeting of Bob", got)
	}
}
