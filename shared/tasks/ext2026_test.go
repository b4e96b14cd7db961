package tasks_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// The 2026-07-28 dialect: the tasks extension on the same rows.

// withExtension declares form elicitation and the tasks extension.
const withExtension = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`

// withoutExtension declares form elicitation only.
const withoutExtension = `{"elicitation":{}}`

// createTask2026 calls tool with args and returns the flat task it
// answered, failing unless it is one.
func createTask2026(t *testing.T, c *servertest.Stateless, tool string, args map[string]any) map[string]any {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res := resultOf(t, c.Call(t, "tools/call", map[string]any{"name": tool, "arguments": args}))
	if res["resultType"] != "task" || res["taskId"] == nil {
		t.Fatalf("tools/call %s = %v, want a task", tool, res)
	}
	return res
}

// text2026 is the text of a result's content blocks.
func text2026(res map[string]any) string {
	var b strings.Builder
	for _, c := range res["content"].([]any) {
		b.WriteString(c.(map[string]any)["text"].(string))
	}
	return b.String()
}

func TestIn2026ACallThatDeclaresTheExtensionIsAFlatTaskThatTasksGetFindsAtOnceAndCompletesWithItsResultInline(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	c := env.Stateless(servertest.Attorney, withExtension)

	task := createTask2026(t, c, gatedTool, nil)
	id := task["taskId"].(string)
	if task["status"] != "working" || task["ttlMs"] != float64(3_600_000) || task["pollIntervalMs"] != float64(1000) ||
		task["createdAt"] == nil || task["lastUpdatedAt"] == nil {
		t.Errorf("the task = %v, want working, ttlMs 3600000, pollIntervalMs 1000 and both times", task)
	}
	for _, legacy := range []string{"task", "ttl", "pollInterval", "_meta", "requestState", "result", "error", "inputRequests"} {
		if _, ok := task[legacy]; ok {
			t.Errorf("the task carries %q: %v", legacy, task)
		}
	}
	got := resultOf(t, c.Task(t, id)) // answered after the commit: readable at once
	if got["resultType"] != "complete" || got["taskId"] != id || got["status"] != "working" || got["result"] != nil {
		t.Fatalf("tasks/get right after creation = %v, want the working task", got)
	}
	env.gate.open()
	done := c.AwaitTask(t, id, "completed", "failed", "cancelled")
	res, _ := done["result"].(map[string]any)
	if done["status"] != "completed" || res == nil || text2026(res) != "released after run 1" || res["resultType"] != "complete" {
		t.Fatalf("the terminal task = %v, want completed with the tool's result as tools/call answers it in 2026 (resultType complete)", done)
	}
	if meta, _ := res["_meta"].(map[string]any); meta[metaRelatedTask] != nil {
		t.Errorf("the inlined result carries the related-task _meta: %v", meta)
	}
	audits := taskAudit(t, env.Env, id)
	if len(audits["tools/call task:created"]) != 1 || len(audits["tools/call ok"]) != 1 {
		t.Errorf("the task's audit rows = %v, want one at creation (task:created) and one at its terminal state (ok)", keys(audits))
	}
}

// metaRelatedTask is the 2025-11-25 dialect's related-task _meta key.
const metaRelatedTask = "io.modelcontextprotocol/related-task"

func TestEachDialectDerivesItsStatusFromTheStoredOutcomeKind(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	env.gate.open()
	s := env.Initialize(t, servertest.Attorney, rev)
	c := env.Stateless(servertest.Attorney, withExtension)
	for _, tc := range []struct {
		name, tool       string
		status2025       string
		status2026       string
		errorCode        float64 // the 2026 task's error.code; 0: a result
		resultIsError    bool
		resultFromResult bool
	}{
		{"an isError result is failed in 2025-11-25 and completed with result.isError in 2026", failingTool, "failed", "completed", 0, true, true},
		{"a JSON-RPC error (a tool that panicked) is failed in both, with the error", panicTool, "failed", "failed", mcp.CodeInternalError, false, false},
		{"a result is completed in both", gatedTool, "completed", "completed", 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := s.CreateTask(t, tc.tool, map[string]any{}, 0)
			if got := s.AwaitTask(t, old, "completed", "failed", "cancelled")["status"]; got != tc.status2025 {
				t.Errorf("2025-11-25 status = %v, want %s", got, tc.status2025)
			}
			id := createTask2026(t, c, tc.tool, nil)["taskId"].(string)
			done := c.AwaitTask(t, id, "completed", "failed", "cancelled")
			if done["status"] != tc.status2026 {
				t.Fatalf("2026 task = %v, want %s", done, tc.status2026)
			}
			res, hasResult := done["result"].(map[string]any)
			rpcErr, hasError := done["error"].(map[string]any)
			if hasResult != tc.resultFromResult || hasError == tc.resultFromResult {
				t.Fatalf("2026 task = %v: result %t, error %t; want exactly one of them", done, hasResult, hasError)
			}
			if hasResult && (res["isError"] == true) != tc.resultIsError {
				t.Errorf("result.isError = %v, want %t", res["isError"], tc.resultIsError)
			}
			if hasError && (rpcErr["code"] != tc.errorCode || rpcErr["message"] == "") {
				t.Errorf("error = %v, want code %v with a message", rpcErr, tc.errorCode)
			}
		})
	}
}

func TestWithoutTheExtensionAnOptionalToolRunsAtOnceARequiredOneIsMinus32021AndParamsTaskIsIgnored(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	env.gate.open()
	without := env.Stateless(servertest.Attorney, withoutExtension)
	with := env.Stateless(servertest.Attorney, withExtension)
	legacy := map[string]any{"ttl": 60_000, "pollInterval": 100}

	for _, tc := range []struct {
		name   string
		client *servertest.Stateless
		params map[string]any
		want   string // the text of the synchronous result
	}{
		{"an optional tool runs at once for a request without the extension", without,
			map[string]any{"name": gatedTool, "arguments": map[string]any{}}, "released after run"},
		{"a legacy params.task does not make a call a task without the extension", without,
			map[string]any{"name": gatedTool, "arguments": map[string]any{}, "task": legacy}, "released after run"},
		{"a legacy params.task never makes a forbidden tool a task", with,
			map[string]any{"name": syncTool, "arguments": map[string]any{}, "task": legacy}, "sync"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := resultOf(t, tc.client.Call(t, "tools/call", tc.params))
			if res["resultType"] != "complete" || res["taskId"] != nil || !strings.HasPrefix(text2026(res), tc.want) {
				t.Errorf("answer = %v, want the complete result %q…", res, tc.want)
			}
		})
	}

	wantMissing := map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}
	for _, tc := range []struct {
		name   string
		method string
		params map[string]any
	}{
		{"a required tool is -32021 naming the extension", "tools/call", map[string]any{"name": bigTool, "arguments": map[string]any{}}},
		{"tasks/get is -32021 naming the extension", "tasks/get", map[string]any{"taskId": "gate-test"}},
		{"tasks/update is -32021 naming the extension", "tasks/update", map[string]any{"taskId": "gate-test", "inputResponses": map[string]any{}}},
		{"tasks/cancel is -32021 naming the extension", "tasks/cancel", map[string]any{"taskId": "gate-test"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := without.Post(t, tc.method, tc.params)
			code, data := errorOf(r.JSON(t))
			if r.Status != http.StatusBadRequest || code != mcp.CodeMissingRequiredCapability {
				t.Fatalf("HTTP %d, code %d, want 400 and %d", r.Status, code, mcp.CodeMissingRequiredCapability)
			}
			if diff := cmp.Diff(wantMissing, data); diff != "" {
				t.Errorf("error data (-want +got):\n%s", diff)
			}
		})
	}
}

func TestThe2026TaskMethodsCarryMcpNameAndTasksResultAndTasksListAreNotOfTheEra(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	c := env.Stateless(servertest.Attorney, withExtension)
	id := createTask2026(t, c, gatedTool, nil)["taskId"].(string)
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		params := func() map[string]any {
			return map[string]any{"taskId": id, "inputResponses": map[string]any{}}
		}
		for _, h := range []struct{ name, header string }{
			{"without Mcp-Name", "Mcp-Name:"},
			{"with another task's id as Mcp-Name", "Mcp-Name: tk0000000000000000000000000000000000000000000000"},
		} {
			t.Run(method+" "+h.name+" is 400 -32020", func(t *testing.T) {
				r := c.Post(t, method, params(), h.header)
				if code, _ := errorOf(r.JSON(t)); r.Status != http.StatusBadRequest || code != mcp.CodeHeaderMismatch {
					t.Errorf("HTTP %d, code %d, want 400 and %d", r.Status, code, mcp.CodeHeaderMismatch)
				}
			})
		}
	}
	for _, method := range []string{"tasks/result", "tasks/list"} {
		t.Run(method+" is 404 -32601", func(t *testing.T) {
			r := c.Post(t, method, map[string]any{"taskId": id})
			if code, _ := errorOf(r.JSON(t)); r.Status != http.StatusNotFound || code != mcp.CodeMethodNotFound {
				t.Errorf("HTTP %d, code %d, want 404 and %d", r.Status, code, mcp.CodeMethodNotFound)
			}
		})
	}
	if got := resultOf(t, c.Task(t, id))["status"]; got != "working" {
		t.Errorf("the task after the refused requests is %v, want working", got)
	}
}

// answer is an accepted form answer.
func answer(text string) map[string]any {
	return map[string]any{"action": "accept", "content": map[string]any{"answer": text}}
}

func TestTasksUpdateTakesOnlyAnswersToOpenQuestionsAPartialSetLeavesTheRestAndTheLastQueuesTheTask(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	c := env.Stateless(servertest.Attorney, withExtension)
	id := createTask2026(t, c, askManyTool, nil)["taskId"].(string)
	waiting := c.AwaitTask(t, id, "input_required")
	asked, _ := waiting["inputRequests"].(map[string]any)
	if len(asked) != askMany || asked["q0"].(map[string]any)["method"] != "elicitation/create" {
		t.Fatalf("inputRequests = %v, want %d elicitations", waiting["inputRequests"], askMany)
	}
	version := func() int64 { return env.row(t, servertest.Attorney, id).Version }
	update := func(responses any) map[string]any {
		return c.Call(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": responses})
	}
	ack := map[string]any{"resultType": "complete"}

	before := version()
	if diff := cmp.Diff(ack, resultOf(t, update(map[string]any{"unknown-key": map[string]any{"ignored": true}}))); diff != "" {
		t.Errorf("tasks/update of an unknown key (-want +got):\n%s", diff)
	}
	if version() != before {
		t.Errorf("an update of unknown keys only wrote the row")
	}
	partial := map[string]any{}
	for i := range askMany - 1 {
		partial[fmt.Sprintf("q%d", i)] = answer(fmt.Sprintf("a%d", i))
	}
	if diff := cmp.Diff(ack, resultOf(t, update(partial))); diff != "" {
		t.Errorf("tasks/update of a partial set (-want +got):\n%s", diff)
	}
	left := resultOf(t, c.Task(t, id))
	if left["status"] != "input_required" || len(left["inputRequests"].(map[string]any)) != 1 || left["inputRequests"].(map[string]any)["q7"] == nil {
		t.Fatalf("after a partial update the task = %v, want input_required asking q7 only", left)
	}
	before = version()
	resultOf(t, update(map[string]any{"q0": answer("a different answer")}))
	if version() != before {
		t.Errorf("an update of an already answered key wrote the row")
	}
	for _, bad := range []any{"not an object", map[string]any{"q7": "not an object"}, nil} {
		if code, _ := errorOf(update(bad)); code != mcp.CodeInvalidParams {
			t.Errorf("inputResponses %v: code %d, want %d", bad, code, mcp.CodeInvalidParams)
		}
	}
	resultOf(t, update(map[string]any{"q7": answer("a7")}))
	done := c.AwaitTask(t, id, "completed", "failed", "cancelled")
	var want []string
	for i := range askMany {
		b, _ := json.Marshal(answer(fmt.Sprintf("a%d", i)))
		want = append(want, string(b))
	}
	if done["status"] != "completed" || text2026(done["result"].(map[string]any)) != strings.Join(want, "\n") {
		t.Errorf("the task = %v, want completed with the first answer to each question", done)
	}
	if got := env.gate.asks.Load(); got != 2 {
		t.Errorf("the tool ran %d times, want 2 (one that asked, one with every answer)", got)
	}
	if code, _ := errorOf(c.Call(t, "tasks/update", map[string]any{"taskId": "tk-nope", "inputResponses": map[string]any{}})); code != mcp.CodeInvalidParams {
		t.Errorf("tasks/update of an unknown task: code %d, want %d", code, mcp.CodeInvalidParams)
	}
}

func TestManyTasksUpdatesRacingEachLandAndTheTaskRunsOnceMore(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	c := env.Stateless(servertest.Attorney, withExtension)
	id := createTask2026(t, c, askManyTool, nil)["taskId"].(string)
	c.AwaitTask(t, id, "input_required")
	var wg sync.WaitGroup
	for i := range askMany {
		for range 3 { // each answer three times at once: one lands
			wg.Go(func() { // only Errorf off the test's goroutine
				r := c.Post(t, "tasks/update", map[string]any{"taskId": id,
					"inputResponses": map[string]any{fmt.Sprintf("q%d", i): answer(fmt.Sprintf("a%d", i))}})
				if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"result":{"resultType":"complete"}`) {
					t.Errorf("tasks/update: HTTP %d %s, want the acknowledgement", r.Status, r.Body)
				}
			})
		}
	}
	wg.Wait()
	if got := resultOf(t, c.Task(t, id)); got["status"] == "input_required" {
		t.Fatalf("after every question was answered the task still asks %v", got["inputRequests"])
	}
	done := c.AwaitTask(t, id, "completed", "failed", "cancelled")
	if done["status"] != "completed" || strings.Count(text2026(done["result"].(map[string]any)), `"action"`) != askMany {
		t.Errorf("the task = %v, want completed with all %d answers", done, askMany)
	}
	if got := env.gate.asks.Load(); got != 2 {
		t.Errorf("the tool ran %d times, want 2", got)
	}
}

func TestTasksCancelAcknowledgesOpenAndTerminalTasksAndAnUnknownIDIsMinus32602(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	c := env.Stateless(servertest.Attorney, withExtension)
	id := createTask2026(t, c, gatedTool, nil)["taskId"].(string)
	env.gate.wait(t)
	ack := map[string]any{"resultType": "complete"}
	for _, when := range []string{"running", "cancelled already"} {
		if diff := cmp.Diff(ack, resultOf(t, c.Call(t, "tasks/cancel", map[string]any{"taskId": id}))); diff != "" {
			t.Errorf("tasks/cancel of a %s task (-want +got):\n%s", when, diff)
		}
		if got := resultOf(t, c.Task(t, id))["status"]; got != "cancelled" {
			t.Errorf("after tasks/cancel of a %s task it is %v, want cancelled", when, got)
		}
	}
	env.gate.open()
	done := createTask2026(t, c, gatedTool, nil)["taskId"].(string)
	c.AwaitTask(t, done, "completed")
	if diff := cmp.Diff(ack, resultOf(t, c.Call(t, "tasks/cancel", map[string]any{"taskId": done}))); diff != "" {
		t.Errorf("tasks/cancel of a completed task (-want +got):\n%s", diff)
	}
	if got := resultOf(t, c.Task(t, done))["status"]; got != "completed" {
		t.Errorf("a completed task after tasks/cancel is %v, want completed", got)
	}
	for _, unknown := range []string{"tasks-conformance-nonexistent-12345", "tk" + strings.Repeat("0", 44)} {
		if code, _ := errorOf(c.Call(t, "tasks/cancel", map[string]any{"taskId": unknown})); code != mcp.CodeInvalidParams {
			t.Errorf("tasks/cancel of %q: code %d, want %d", unknown, code, mcp.CodeInvalidParams)
		}
	}
}

func TestATaskIsServedOnlyInTheDialectThatCreatedItAndOnlyToItsOwnKey(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	env.gate.open()
	c := env.Stateless(servertest.Attorney, withExtension)
	s := env.Initialize(t, servertest.Attorney, rev)
	id2026 := createTask2026(t, c, gatedTool, nil)["taskId"].(string)
	id2025 := s.CreateTask(t, gatedTool, map[string]any{}, 0)
	c.AwaitTask(t, id2026, "completed")
	s.AwaitTask(t, id2025, "completed")

	other := env.Stateless(servertest.Attorney2, withExtension)
	for _, tc := range []struct {
		name string
		msg  func() map[string]any
	}{
		{"a 2025-11-25 session's tasks/get of a 2026 task", func() map[string]any { return s.Task(t, id2026) }},
		{"a 2025-11-25 session's tasks/result of a 2026 task", func() map[string]any { return s.TaskResult(t, id2026) }},
		{"a 2026 tasks/get of a 2025-11-25 task", func() map[string]any { return c.Task(t, id2025) }},
		{"a 2026 tasks/cancel of a 2025-11-25 task", func() map[string]any {
			return c.Call(t, "tasks/cancel", map[string]any{"taskId": id2025})
		}},
		{"the same owner's second key's tasks/get", func() map[string]any { return other.Task(t, id2026) }},
	} {
		t.Run(tc.name+" is -32602", func(t *testing.T) {
			if code, _ := errorOf(tc.msg()); code != mcp.CodeInvalidParams {
				t.Errorf("code %d, want %d", code, mcp.CodeInvalidParams)
			}
		})
	}
}

func TestA2026TasksProgressIsItsStatusMessage(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	c := env.Stateless(servertest.Attorney, withExtension)
	id := createTask2026(t, c, progressTool, nil)["taskId"].(string)
	running := c.AwaitTaskWhere(t, id, func(res map[string]any) bool { return res["statusMessage"] == "step 3" })
	if running["status"] != "working" {
		t.Errorf("the task with its progress as statusMessage is %v, want working", running["status"])
	}
	env.gate.open()
	if done := c.AwaitTask(t, id, "completed", "failed", "cancelled"); done["statusMessage"] != "The task completed." {
		t.Errorf("the completed task's statusMessage = %v, want its own", done["statusMessage"])
	}
}

func TestAToolThatAsksBeforeItsTaskAsksByMRTRAndStartsTheTaskWithTheAnswer(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	c := env.Stateless(servertest.Attorney, withExtension)
	call := func(extra map[string]any) map[string]any {
		p := map[string]any{"name": beforeTool, "arguments": map[string]any{}}
		for k, v := range extra {
			p[k] = v
		}
		return resultOf(t, c.Call(t, "tools/call", p))
	}
	first := call(nil)
	if first["resultType"] != "input_required" || first["taskId"] != nil || first["inputRequests"].(map[string]any)["name"] == nil {
		t.Fatalf("round 1 = %v, want input_required asking name, and no task", first)
	}
	if got := env.gate.asks.Load(); got != 0 {
		t.Errorf("the tool ran %d times before its task was created", got)
	}
	second := call(map[string]any{"inputResponses": map[string]any{"name": answer("Alice")}, "requestState": first["requestState"]})
	if second["resultType"] != "task" || second["requestState"] != nil || second["inputRequests"] != nil {
		t.Fatalf("round 2 = %v, want a task without requestState or inputRequests", second)
	}
	done := c.AwaitTask(t, second["taskId"].(string), "completed", "failed", "cancelled", "input_required")
	b, _ := json.Marshal(answer("Alice"))
	if done["status"] != "completed" || text2026(done["result"].(map[string]any)) != "hello "+string(b) {
		t.Errorf("the task = %v, want completed greeting the answer given before it", done)
	}
}

func TestDiscoverOffersTheTasksExtensionExactlyWhereTasksAreServed(t *testing.T) {
	served := newTaskEnv(t, false, nil)
	plain := servertest.New(t, servertest.Options{})
	for _, tc := range []struct {
		name string
		env  *servertest.Env
		want any
	}{
		{"with tasks served, the extension with no settings", served.Env, map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
		{"without tasks, no extensions", plain, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caps := resultOf(t, tc.env.Stateless(servertest.Attorney, `{}`).Call(t, "server/discover", nil))["capabilities"].(map[string]any)
			if diff := cmp.Diff(tc.want, caps["extensions"]); diff != "" {
				t.Errorf("capabilities.extensions (-want +got):\n%s", diff)
			}
			if caps["tasks"] != nil {
				t.Errorf("server/discover carries the 2025-11-25 tasks slot: %v", caps["tasks"])
			}
		})
	}
}
