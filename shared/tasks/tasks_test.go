package tasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/admin"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/storetest"
	"github.com/custodymcp/custody/shared/tasks"
)

func TestATaskAugmentedCallAnswersAWorkingTaskThatTasksGetFindsAndTasksResultReturnsTheToolsResult(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	s := env.Initialize(t, servertest.Attorney, rev)

	msg := s.Call(t, "tools/call", map[string]any{"name": "export_fact_record",
		"arguments": map[string]any{"case_id": seed.Meridian}, "task": map[string]any{"ttl": 120_000}})
	task := resultOf(t, msg)["task"].(map[string]any)
	id := task["taskId"].(string)
	if task["status"] != "working" || task["ttl"] != float64(120_000) || task["createdAt"] == "" || task["pollInterval"] == nil {
		t.Errorf("CreateTaskResult task = %v, want working with the ttl asked for, createdAt and pollInterval", task)
	}
	// Answered after the commit: the row is readable at once.
	if got := resultOf(t, s.Task(t, id)); got["taskId"] != id {
		t.Fatalf("tasks/get right after creation = %v", got)
	}
	done := s.AwaitTask(t, id, "completed", "failed", "cancelled")
	if done["status"] != "completed" {
		t.Fatalf("task = %v, want completed", done)
	}
	res := resultOf(t, s.TaskResult(t, id))
	rel := res["_meta"].(map[string]any)["io.modelcontextprotocol/related-task"]
	if diff := cmp.Diff(map[string]any{"taskId": id}, rel); diff != "" {
		t.Errorf("tasks/result related-task _meta (-want +got):\n%s", diff)
	}
	var link map[string]any
	for _, c := range res["content"].([]any) {
		if c := c.(map[string]any); c["type"] == "resource_link" {
			link = c
		}
	}
	sc := res["structuredContent"].(map[string]any)
	if link == nil || link["uri"] != sc["uri"] || !strings.HasPrefix(link["uri"].(string), "custody://matters/"+seed.Meridian+"/exports/") {
		t.Fatalf("no resource_link to the export in %v", res["content"])
	}

	// The link is read later, through the funnel, by its credential only.
	read := s.Call(t, "resources/read", map[string]any{"uri": link["uri"]})
	contents := resultOf(t, read)["contents"].([]any)
	var export map[string]any
	if err := json.Unmarshal([]byte(contents[0].(map[string]any)["text"].(string)), &export); err != nil {
		t.Fatal(err)
	}
	if export["export_id"] != sc["export_id"] || export["facts_count"] != sc["facts"] || export["facts_read_state"] != "read" {
		t.Errorf("the export read back = %v facts (%v), want %v of export %v", export["facts_count"], export["facts_read_state"], sc["facts"], sc["export_id"])
	}
	other := env.Initialize(t, servertest.Attorney2, rev)
	if code, _ := errorOf(other.Call(t, "resources/read", map[string]any{"uri": link["uri"]})); code != mcp.CodeResourceNotFound {
		t.Errorf("the same owner's second key reads the export: code %d, want %d", code, mcp.CodeResourceNotFound)
	}

	audits := taskAudit(t, env.Env, id)
	if len(audits["tools/call task:created"]) != 1 || len(audits["tools/call ok"]) != 1 {
		t.Errorf("the task's audit rows = %v, want one at creation (task:created) and one at its terminal state (ok)", keys(audits))
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// The 2025-11-25 task rules of tools/call, and what a client of another
// revision sees.
func TestTaskSupportAndTTLAreEnforcedAndRequiredToolsAreHiddenFromRevisionsWithoutTasks(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	s := env.Initialize(t, servertest.Attorney, rev)
	call := func(s *servertest.Session, name string, task any) map[string]any {
		p := map[string]any{"name": name, "arguments": map[string]any{}}
		if task != nil {
			p["task"] = task
		}
		return s.Call(t, "tools/call", p)
	}
	for _, c := range []struct {
		name, tool string
		task       any
		code       int
	}{
		{"a required tool called without a task is -32601", bigTool, nil, mcp.CodeMethodNotFound},
		{"a forbidden tool called with a task is -32601", syncTool, map[string]any{}, mcp.CodeMethodNotFound},
		{"a write-less default (forbidden) read tool with a task is -32601", "list_matters", map[string]any{"ttl": 1000}, mcp.CodeMethodNotFound},
		{"a null ttl is refused with -32602", gatedTool, map[string]any{"ttl": nil}, mcp.CodeInvalidParams},
		{"a negative ttl is refused with -32602", gatedTool, map[string]any{"ttl": -1}, mcp.CodeInvalidParams},
		{"a ttl that is not a number is refused with -32602", gatedTool, map[string]any{"ttl": "1h"}, mcp.CodeInvalidParams},
		{"a task that is not an object is refused with -32602", gatedTool, "soon", mcp.CodeInvalidParams},
		{"a tool hidden by scope stays unknown with a task: -32602", "no_such_tool", map[string]any{}, mcp.CodeInvalidParams},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, _ := errorOf(call(s, c.tool, c.task)); got != c.code {
				t.Errorf("code %d, want %d", got, c.code)
			}
		})
	}
	t.Run("a ttl over the maximum is cut to the maximum", func(t *testing.T) {
		res := resultOf(t, call(s, gatedTool, map[string]any{"ttl": int64(7 * 24 * time.Hour / time.Millisecond)}))
		if got := res["task"].(map[string]any)["ttl"]; got != float64(tasks.MaxTTL.Milliseconds()) {
			t.Errorf("ttl = %v, want %d", got, tasks.MaxTTL.Milliseconds())
		}
	})
	t.Run("arguments that fail validation are refused at once and create no task", func(t *testing.T) {
		res := resultOf(t, s.Call(t, "tools/call", map[string]any{"name": "export_fact_record",
			"arguments": map[string]any{"case_id": 7}, "task": map[string]any{}}))
		if servertest.RefusalClass(res) != "VALIDATION" || res["task"] != nil {
			t.Errorf("answer = %v, want a VALIDATION refusal and no task", res)
		}
	})
	t.Run("tools/list of 2025-11-25 carries execution.taskSupport", func(t *testing.T) {
		got := map[string]any{}
		for _, tl := range resultOf(t, s.Call(t, "tools/list", map[string]any{}))["tools"].([]any) {
			tl := tl.(map[string]any)
			got[tl["name"].(string)] = tl["execution"]
		}
		want := map[string]any{"audit_citations": map[string]any{"taskSupport": "required"},
			"export_fact_record": map[string]any{"taskSupport": "optional"}, "list_matters": nil, syncTool: nil}
		for name, w := range want {
			if diff := cmp.Diff(w, got[name]); diff != "" {
				t.Errorf("%s execution (-want +got):\n%s", name, diff)
			}
		}
	})
	old := env.Initialize(t, servertest.Attorney, "2025-06-18")
	t.Run("a 2025-06-18 session sees no tasks capability and no required tool", func(t *testing.T) {
		var names []string
		for _, tl := range resultOf(t, old.Call(t, "tools/list", map[string]any{}))["tools"].([]any) {
			names = append(names, tl.(map[string]any)["name"].(string))
			if tl.(map[string]any)["execution"] != nil {
				t.Errorf("%v carries execution in 2025-06-18", tl.(map[string]any)["name"])
			}
		}
		if slices.Contains(names, "audit_citations") || slices.Contains(names, bigTool) || !slices.Contains(names, "export_fact_record") {
			t.Errorf("tools = %v, want the optional task tools and no required one", names)
		}
		if code, _ := errorOf(call(old, "audit_citations", map[string]any{})); code != mcp.CodeInvalidParams {
			t.Errorf("calling a hidden required tool: code %d, want -32602 (unknown)", code)
		}
		if code, _ := errorOf(old.Call(t, "tasks/get", map[string]any{"taskId": "tk"})); code != mcp.CodeMethodNotFound {
			t.Errorf("tasks/get in 2025-06-18: code %d, want -32601", code)
		}
	})
	t.Run("a 2025-06-18 session's params.task is ignored: the tool runs at once", func(t *testing.T) {
		env.gate.open()
		res := resultOf(t, call(old, gatedTool, map[string]any{"ttl": 1000}))
		if res["task"] != nil || res["content"] == nil {
			t.Errorf("answer = %v, want the tool's own result", res)
		}
	})
	t.Run("initialize declares the tasks capability to 2025-11-25 only", func(t *testing.T) {
		for _, c := range []struct {
			rev  string
			want any
		}{
			{rev, map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}},
			{"2025-06-18", nil},
		} {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, c.rev)
			r := env.Do(t, http.MethodPost, []byte(body), "Authorization: Bearer "+env.Keys[servertest.Attorney])
			got := r.JSON(t)["result"].(map[string]any)["capabilities"].(map[string]any)["tasks"]
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("%s: capabilities.tasks (-want +got):\n%s", c.rev, diff)
			}
		}
	})
}

// Field case FB-23: tasks/get for an unknown task must not invent a
// working task; unknown, foreign and purged ids are -32602 alike, and
// tasks/result of one does not block.
func TestFB23_AnUnknownForeignOrPurgedTaskIDIsMinus32602ForGetResultAndCancelAndNeverBlocks(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	s := env.Initialize(t, servertest.Attorney, rev)
	other := env.Initialize(t, servertest.Attorney2, rev) // the same attorney's second key
	mine := s.CreateTask(t, gatedTool, map[string]any{}, 60_000)
	env.gate.wait(t)
	for _, c := range []struct {
		name string
		s    *servertest.Session
		id   string
	}{
		{"an id that was never issued", s, "00000000-0000-4000-8000-000000000000"},
		{"an id of the task's shape that names nothing", s, "tk" + strings.Repeat("0", 44)},
		{"another key's task, though of the same owner", other, mine},
	} {
		for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
			t.Run(c.name+": "+method, func(t *testing.T) {
				msgs := c.s.Exchange(t, method, map[string]any{"taskId": c.id})
				if code, _ := errorOf(msgs[len(msgs)-1]); code != mcp.CodeInvalidParams || len(msgs) != 1 {
					t.Errorf("answer %v, want one immediate -32602", msgs)
				}
			})
		}
	}
	if res := resultOf(t, other.Call(t, "tasks/list", map[string]any{})); len(res["tasks"].([]any)) != 0 {
		t.Errorf("the second key lists %v, want none of the first key's tasks", res["tasks"])
	}
	if got := resultOf(t, s.Task(t, mine)); got["status"] != "working" {
		t.Errorf("the creator's own task = %v, want working", got)
	}
	env.gate.open()
	s.AwaitTask(t, mine, "completed")
	env.Clock.Advance(61 * time.Second) // past its ttl: purged, as if it never existed
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if code, _ := errorOf(s.Exchange(t, method, map[string]any{"taskId": mine})[0]); code != mcp.CodeInvalidParams {
			t.Errorf("%s of a purged task: code %d, want -32602", method, code)
		}
	}
}

func TestAStoreThatCannotBeReadAnswersMinus32603WithRetryAfterNeverNotFound(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	s := env.Initialize(t, servertest.Attorney, rev)
	env.gate.open()
	id := s.CreateTask(t, gatedTool, map[string]any{}, 0)
	s.AwaitTask(t, id, "completed")
	env.Faulty.Add(storetest.Rule{Method: storetest.MethodGet, Key: storetest.Prefix("", "TASK#"), Err: store.ErrUnavailable})
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		r := s.Post(t, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":%q,"params":{"taskId":%q}}`, method, id)))
		code, data := errorOf(r.JSON(t))
		if r.Status != http.StatusOK || code != mcp.CodeInternalError || data["retry_after_s"] == nil {
			t.Errorf("%s with the store down: HTTP %d code %d data %v, want 200, -32603 and data.retry_after_s", method, r.Status, code, data)
		}
	}
}

// Field case FB-25: a failed task's result must stay retrievable, and
// tasks/result must block while the task runs.
func TestFB25_TasksResultOfAFailingToolBlocksUntilTerminalThenReturnsItsIsErrorResultVerbatim(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	s := env.Initialize(t, servertest.Attorney, rev)
	id := s.CreateTask(t, failingTool, map[string]any{}, 120_000)
	env.gate.wait(t)
	answer := make(chan map[string]any, 1)
	polls := watchPolls(env, id)
	go func() { answer <- s.TaskResult(t, id) }()
	polls.atLeast(t, 3) // tasks/result has looked at the running task three times …
	select {
	case msg := <-answer: // … and must still be waiting
		t.Fatalf("tasks/result answered while the task ran: %v", msg)
	default:
	}
	env.gate.open()
	var msg map[string]any
	select {
	case msg = <-answer:
	case <-time.After(time.Minute):
		t.Fatal("tasks/result did not answer once the task ended")
	}
	res := resultOf(t, msg)
	if res["isError"] != true || servertest.RefusalClass(res) != "NOT_FOUND" || len(res["content"].([]any)) == 0 {
		t.Errorf("tasks/result = %v, want the tool's isError result with content and structuredContent", res)
	}
	if got := res["_meta"].(map[string]any)["io.modelcontextprotocol/related-task"]; !cmp.Equal(got, map[string]any{"taskId": id}) {
		t.Errorf("related-task _meta = %v", got)
	}
	got := resultOf(t, s.Task(t, id))
	if got["status"] != "failed" || !strings.Contains(got["statusMessage"].(string), "No such record") {
		t.Errorf("tasks/get = %v, want failed with a status message", got)
	}
	// Asked again, the same result: it stays retrievable for the ttl.
	if again := resultOf(t, s.TaskResult(t, id)); !cmp.Equal(again["content"], res["content"]) {
		t.Errorf("tasks/result again = %v, want the same content", again)
	}
}

// polls counts tasks/result's reads of one task row: a Faulty rule whose
// key predicate observes every Get and never applies.
type polls struct {
	mu sync.Mutex
	n  int
	ch chan struct{}
}

func watchPolls(env *taskEnv, id string) *polls {
	p := &polls{ch: make(chan struct{}, 1000)}
	env.Faulty.Add(storetest.Rule{Method: storetest.MethodGet, Key: func(k store.Key) bool {
		if k.SK == "TASK#"+id {
			p.ch <- struct{}{}
		}
		return false
	}})
	return p
}

func (p *polls) atLeast(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-p.ch:
		case <-time.After(time.Minute):
			t.Fatalf("the task row was not read %d times", n)
		}
	}
}

func TestTasksResultSendsNoResponseBeforeAChannelGatedToolIsReleased(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	s := env.Initialize(t, servertest.Attorney, rev)
	id := s.CreateTask(t, gatedTool, map[string]any{}, 0)
	env.gate.wait(t)
	polls := watchPolls(env, id)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":%q}}`, id)
	es := servertest.OpenStream(t, http.MethodPost, env.URL, []byte(body), s.Headers()...)
	first, ok := es.Next()
	if !ok || first.ID == "" || strings.TrimSpace(first.Data) != "" {
		t.Fatalf("first event %+v, want the priming event (an id, empty data)", first)
	}
	next := make(chan map[string]any, 1)
	go func() { next <- es.NextMessage(t) }()
	polls.atLeast(t, 5)
	select {
	case msg := <-next:
		t.Fatalf("a message before the release: %v", msg)
	default:
	}
	env.gate.open()
	msg := <-next
	if res := resultOf(t, msg); res["content"].([]any)[0].(map[string]any)["text"] != "released after run 1" {
		t.Errorf("tasks/result = %v", res)
	}
}

func TestTasksResultNearItsDeadlineAnswersRetryWithTheTaskStatusNeverMinus32602(t *testing.T) {
	env := newTaskEnv(t, true, func(o *tasks.Options) { o.ResultWait = 100 * time.Millisecond })
	s := env.Initialize(t, servertest.Attorney, rev)
	id := s.CreateTask(t, gatedTool, map[string]any{}, 0)
	env.gate.wait(t)
	code, data := errorOf(s.TaskResult(t, id))
	if diff := cmp.Diff(map[string]any{"taskId": id, "status": "working", "retry": true}, data); code != mcp.CodeInternalError || diff != "" {
		t.Errorf("tasks/result at its deadline: code %d, data (-want +got):\n%s", code, diff)
	}
}

func TestTwoDeliveriesOfOneTaskRacingWhileItRunsExecuteItOnce(t *testing.T) {
	env := newTaskEnv(t, false, nil)
	s := env.Initialize(t, servertest.Attorney, rev)
	t.Run("a second delivery while the first runs does nothing", func(t *testing.T) {
		id := s.CreateTask(t, gatedTool, map[string]any{}, 0)
		rec := env.receive(t)
		first := make(chan struct{})
		go func() { defer close(first); env.deliver(context.Background(), t, rec) }()
		env.gate.wait(t)
		if resp := env.deliver(context.Background(), t, rec); len(resp.BatchItemFailures) != 0 {
			t.Errorf("the duplicate delivery failed %v: a lost claim is a success", resp.BatchItemFailures)
		}
		env.gate.open()
		<-first
		if got := env.gate.runs.Load(); got != 1 {
			t.Errorf("the tool ran %d times, want 1", got)
		}
		s.AwaitTask(t, id, "completed")
	})
	t.Run("twenty deliveries released together run it once", func(t *testing.T) {
		before := env.gate.runs.Load()
		id := s.CreateTask(t, gatedTool, map[string]any{}, 0)
		msg := messageFor(t, env.Env, servertest.Attorney, id)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 20 {
			wg.Go(func() { <-start; env.deliver(context.Background(), t, msg) })
		}
		close(start)
		wg.Wait()
		if got := env.gate.runs.Load() - before; got != 1 {
			t.Errorf("the tool ran %d times, want 1", got)
		}
		if got := env.row(t, servertest.Attorney, id).Int("attempts"); got != 1 {
			t.Errorf("attempts = %d, want 1", got)
		}
	})
}

func TestManyCancelsRacingACompletionLeaveExactlyOneTerminalStateAndTasksResultAgrees(t *testing.T) {
	env := newTaskEnv(t, false, nil)
	s := env.Initialize(t, servertest.Attorney, rev)
	outcomes := map[string]int{}
	for round := range 12 {
		env.gate.reset()
		id := s.CreateTask(t, gatedTool, map[string]any{}, 0)
		rec := env.receive(t)
		worker := make(chan struct{})
		go func() { defer close(worker); env.deliver(context.Background(), t, rec) }()
		env.gate.wait(t)
		start := make(chan struct{})
		answers := make(chan map[string]any, 20)
		var wg sync.WaitGroup
		for i := range 20 {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/cancel","params":{"taskId":%q}}`, 100+i, id)
			wg.Go(func() {
				<-start
				answers <- s.Post(t, []byte(body)).JSON(t) // Post, not Call: safe for concurrent use
			})
		}
		wg.Go(func() { <-start; env.gate.open() })
		close(start)
		wg.Wait()
		<-worker
		close(answers)
		cancelled := 0
		for a := range answers {
			switch code, _ := errorOf(a); code {
			case 0:
				cancelled++
				if a["result"].(map[string]any)["status"] != "cancelled" {
					t.Errorf("round %d: a successful cancel answered %v", round, a)
				}
			case mcp.CodeInvalidParams:
			default:
				t.Errorf("round %d: cancel answered %v", round, a)
			}
		}
		status := resultOf(t, s.Task(t, id))["status"]
		result := s.TaskResult(t, id)
		code, data := errorOf(result)
		audits := taskAudit(t, env.Env, id)
		switch {
		case cancelled == 1 && status == "cancelled" && code == mcp.CodeInternalError && data["status"] == "cancelled" && len(audits["tools/call ok"]) == 0:
			outcomes["cancelled"]++
		case cancelled == 0 && status == "completed" && code == 0 && len(audits["tools/call ok"]) == 1:
			outcomes["completed"]++
		default:
			t.Errorf("round %d: %d successful cancels, status %v, tasks/result %v, audit %v: want exactly one terminal state that every answer agrees with",
				round, cancelled, status, result, keys(audits))
		}
	}
	t.Logf("outcomes of the race: %v", outcomes)
}

func TestAResultOver400KBIsStoredByPointerAndReturnedWhole(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	s := env.Initialize(t, servertest.Attorney, rev)
	id := s.CreateTask(t, bigTool, map[string]any{}, 0)
	s.AwaitTask(t, id, "completed")
	row := env.row(t, servertest.Attorney, id)
	if row.Bytes("outcome") != nil || row.Int("outcome_parts") < 2 {
		t.Errorf("the row holds %d outcome bytes and %d parts, want the outcome in parts beside it", len(row.Bytes("outcome")), row.Int("outcome_parts"))
	}
	if n := store.ItemSize(row); n > store.MaxItemBytes {
		t.Errorf("the task row is %d bytes, over the item limit", n)
	}
	res := resultOf(t, s.TaskResult(t, id))
	if got := res["content"].([]any)[0].(map[string]any)["text"]; got != bigText {
		t.Errorf("tasks/result returned %d characters, want the whole %d", len(fmt.Sprint(got)), len(bigText))
	}
}

func TestATaskThatNeedsInputAsksOnTasksResultAndGoesOnWithTheAnswerEvenAfterItsSessionEnded(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	caps := `{"elicitation":{}}`
	s := env.InitializeWith(t, servertest.Attorney, rev, caps)
	id := s.CreateTask(t, askTool, map[string]any{"question": "Proceed?"}, 0)
	waiting := s.AwaitTask(t, id, "input_required")
	if !strings.Contains(waiting["statusMessage"].(string), "tasks/result") {
		t.Errorf("status message %q does not say to call tasks/result", waiting["statusMessage"])
	}
	// The first stream delivers the question; the session then ends
	// before the client answers.
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":%q}}`, id)
	es := servertest.OpenStream(t, http.MethodPost, env.URL, []byte(body), s.Headers()...)
	q := es.NextMessage(t)
	qid, _ := q["id"].(string)
	meta, _ := q["params"].(map[string]any)["_meta"].(map[string]any)
	if q["method"] != "elicitation/create" || qid == "" || !cmp.Equal(meta["io.modelcontextprotocol/related-task"], map[string]any{"taskId": id}) {
		t.Fatalf("first message %v, want the task's elicitation with the related-task _meta", q)
	}
	es.Close()
	del, _ := http.NewRequest(http.MethodDelete, env.URL, nil)
	for _, h := range s.Headers() {
		k, v, _ := strings.Cut(h, ":")
		del.Header.Set(k, strings.TrimSpace(v))
	}
	if resp, err := http.DefaultClient.Do(del); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE the session: %v %v", resp, err)
	}
	// A new session of the same key gets the same question, with its id.
	s2 := env.InitializeWith(t, servertest.Attorney, rev, caps)
	es2 := servertest.OpenStream(t, http.MethodPost, env.URL, []byte(body), s2.Headers()...)
	q2 := es2.NextMessage(t)
	if q2["id"] != qid {
		t.Fatalf("the new stream asked %v, want question %s again", q2, qid)
	}
	// Another key of the same owner cannot answer it; the creator can.
	other := env.InitializeWith(t, servertest.Attorney2, rev, caps)
	answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"result":{"action":"accept","content":{"answer":"yes"}}}`, qid)
	if r := other.Post(t, []byte(answer)); r.Status != http.StatusBadRequest {
		t.Errorf("another key's answer: %d, want 400", r.Status)
	}
	if r := s2.Post(t, []byte(answer)); r.Status != http.StatusAccepted {
		t.Fatalf("the answer: %d %s, want 202", r.Status, r.Body)
	}
	final := es2.NextMessage(t)
	text := resultOf(t, final)["content"].([]any)[0].(map[string]any)["text"].(string)
	if !strings.Contains(text, `"answer":"yes"`) {
		t.Errorf("the task's result = %q, want the client's answer in it", text)
	}
	if r := s2.Post(t, []byte(answer)); r.Status != http.StatusBadRequest {
		t.Errorf("answering the spent question again: %d, want 400", r.Status)
	}
}

// One tool implementation serves both dialects through mcp.Peer: the
// fixture that asks as a task (above) asks with a multi-round-trip
// request in the 2026-07-28 era, where params.task is not a task.
func TestTheSameToolAsksThroughMRTRInThe2026EraWhereParamsTaskIsIgnored(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":{"question":"Proceed?"},"task":{"ttl":1000},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`, askTool)
	r := env.Do(t, http.MethodPost, []byte(body), "Authorization: Bearer "+env.Keys[servertest.Attorney],
		"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: "+askTool)
	res := resultOf(t, r.JSON(t))
	if res["resultType"] != "input_required" || res["task"] != nil {
		t.Fatalf("2026-era answer = %v, want input_required and no task", res)
	}
	if _, ok := res["inputRequests"].(map[string]any)["confirm"]; !ok {
		t.Errorf("inputRequests = %v, want the question keyed confirm", res["inputRequests"])
	}
}

func TestProgressOnTheTasksResultStreamIncreasesAndStopsBeforeTheTerminalState(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	s := env.Initialize(t, servertest.Attorney, rev)
	msg := s.Call(t, "tools/call", map[string]any{"name": progressTool, "arguments": map[string]any{},
		"task": map[string]any{}, "_meta": map[string]any{"progressToken": "p-7"}})
	id := resultOf(t, msg)["task"].(map[string]any)["taskId"].(string)
	done := make(chan []map[string]any, 1)
	go func() { done <- s.Exchange(t, "tasks/result", map[string]any{"taskId": id}) }()
	env.gate.wait(t) // progress 3 of 3 was reported before the tool waits
	time.Sleep(100 * time.Millisecond)
	env.gate.open()
	msgs := <-done
	var seen []float64
	for i, m := range msgs {
		if m["method"] != "notifications/progress" {
			if i != len(msgs)-1 {
				t.Errorf("message %d is %v, want only progress before the response", i, m)
			}
			continue
		}
		p := m["params"].(map[string]any)
		if p["progressToken"] != "p-7" || !cmp.Equal(p["_meta"], map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": id}}) {
			t.Errorf("progress %v, want the call's token and the related-task _meta", p)
		}
		seen = append(seen, p["progress"].(float64))
	}
	if len(seen) == 0 || !slices.IsSorted(seen) || slices.Compact(slices.Clone(seen))[0] != seen[0] || seen[len(seen)-1] != 3 {
		t.Errorf("progress values %v, want increasing to 3", seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Errorf("progress %v does not increase", seen)
		}
	}
	if resultOf(t, msgs[len(msgs)-1])["content"] == nil {
		t.Errorf("last message %v, want the result", msgs[len(msgs)-1])
	}
}

func TestTasksListPagesTheCallersOwnTasksOnceEachWithSealedCursors(t *testing.T) {
	env := newTaskEnv(t, false, func(o *tasks.Options) { o.PageSize = 2 })
	s := env.Initialize(t, servertest.Attorney, rev)
	other := env.Initialize(t, servertest.Attorney2, rev)
	var want []string
	for range 5 {
		env.Clock.Advance(time.Millisecond) // ids sort by their creation's millisecond
		want = append(want, s.CreateTask(t, gatedTool, map[string]any{}, 0))
	}
	other.CreateTask(t, gatedTool, map[string]any{}, 0)
	var got []string
	var cursor any
	pages := 0
	for {
		p := map[string]any{}
		if cursor != nil {
			p["cursor"] = cursor
		}
		res := resultOf(t, s.Call(t, "tasks/list", p))
		pages++
		for _, tk := range res["tasks"].([]any) {
			got = append(got, tk.(map[string]any)["taskId"].(string))
		}
		if cursor = res["nextCursor"]; cursor == nil {
			break
		}
		if code, _ := errorOf(other.Call(t, "tasks/list", map[string]any{"cursor": cursor})); code != mcp.CodeInvalidParams {
			t.Errorf("another key's use of the cursor: code %d, want -32602", code)
		}
		env.Clock.Advance(time.Millisecond)
		s.CreateTask(t, gatedTool, map[string]any{}, 0) // the list grows while it is paged
	}
	if !slices.Equal(got[:5], want) || pages < 3 {
		t.Errorf("listed %v in %d pages, want %v first, in creation order, each once", got, pages, want)
	}
	if code, _ := errorOf(s.Call(t, "tasks/list", map[string]any{"cursor": "never-issued"})); code != mcp.CodeInvalidParams {
		t.Errorf("an unissued cursor: code %d, want -32602", code)
	}
}

func TestTheWorkerDoesNotChargeTheRateLimit(t *testing.T) {
	// 119 reads a minute lease slices of one (ratelimit.SliceFor), so the
	// bucket row counts each request as it is admitted.
	env := newTaskEnvLimited(t, true, nil, ratelimit.Limits{ratelimit.LaneRead: 119, ratelimit.LaneExpensive: 60})
	s := env.Initialize(t, servertest.Attorney, rev)
	env.gate.open()
	bucket := func() int64 {
		c := env.Creds[servertest.Attorney]
		it, err := env.Store.Get(context.Background(), bucketKey(c))
		if err != nil {
			t.Fatal(err)
		}
		return it.Int("count")
	}
	id := s.CreateTask(t, gatedTool, map[string]any{}, 0)
	before := bucket() // initialize, initialized and the creating call
	s.AwaitTask(t, id, "completed")
	after := bucket() // plus the tasks/get polls, each a request of its own
	gets := taskAudit(t, env.Env, id)["tasks/get ok"]
	if after-before != int64(len(gets)) {
		t.Errorf("the read lane counted %d requests while the task ran, want the %d tasks/get only: the worker charges nothing", after-before, len(gets))
	}
}

func TestAWorkerWhoseCreatorWasRevokedFailsTheTaskWithAReason(t *testing.T) {
	env := newTaskEnv(t, false, nil)
	s := env.Initialize(t, servertest.Attorney, rev)
	env.gate.open()
	id := s.CreateTask(t, gatedTool, map[string]any{}, 0)
	c := env.Creds[servertest.Attorney]
	if err := auth.Revoke(context.Background(), env.Store, c.Tenant, c.ID); err != nil {
		t.Fatal(err)
	}
	env.deliver(context.Background(), t, env.receive(t))
	row := env.row(t, servertest.Attorney, id)
	var e mcp.Error
	_ = json.Unmarshal(row.Bytes("outcome"), &e)
	if row.String("status") != tasks.StatusFailed || e.Code != mcp.CodeInternalError || e.Data.(map[string]any)["reason"] != tasks.ReasonCreatorRefused || env.gate.runs.Load() != 0 {
		t.Errorf("task %s: outcome %+v after %d runs, want failed with -32603 creator_refused and the tool never run", row.String("status"), e, env.gate.runs.Load())
	}
}

func TestAToolThatRunsPastTheExecutionCapIsStoppedAndTheTaskFailsWithAReason(t *testing.T) {
	env := newTaskEnv(t, true, func(o *tasks.Options) { o.ExecutionCap = 50 * time.Millisecond })
	s := env.Initialize(t, servertest.Attorney, rev)
	id := s.CreateTask(t, gatedTool, map[string]any{}, 0)
	s.AwaitTask(t, id, "failed")
	code, data := errorOf(s.TaskResult(t, id))
	if code != mcp.CodeInternalError || data["reason"] != tasks.ReasonExecutionCap {
		t.Errorf("tasks/result: code %d data %v, want -32603 with reason %s", code, data, tasks.ReasonExecutionCap)
	}
}

func TestTheSweeperReEnqueuesALapsedLeaseUpToTheAttemptLimitThenFailsTheTaskWithAReason(t *testing.T) {
	env := newTaskEnv(t, false, func(o *tasks.Options) { o.AttemptLimit = 2 })
	s := env.Initialize(t, servertest.Attorney, rev)
	id := s.CreateTask(t, gatedTool, map[string]any{}, int64(time.Hour/time.Millisecond))
	for attempt := 1; attempt <= 2; attempt++ {
		// A worker that dies mid-tool: its host's context ends, no outcome.
		ctx, cancel := context.WithCancel(context.Background())
		died := make(chan struct{})
		rec := env.receive(t)
		go func() { defer close(died); _, _ = env.Server.Tasks.Handle(ctx, eventOf(rec)) }()
		env.gate.wait(t)
		cancel()
		<-died
		if st := env.row(t, servertest.Attorney, id).String("status"); st != tasks.StatusRunning {
			t.Fatalf("attempt %d: after the worker died the task is %s, want still running (its lease held)", attempt, st)
		}
		if reps := env.Sweep(t, env.Clock.Now()); actions(reps)["task lease"] != nil {
			t.Errorf("attempt %d: a sweep within the lease acted: %v", attempt, reps)
		}
		env.Clock.Advance(tasks.DefaultLease + time.Second)
		want := "re-enqueued"
		if attempt == 2 {
			want = "failed"
		}
		if got := actions(env.Sweep(t, env.Clock.Now()))["task lease"]; got[want] != 1 {
			t.Errorf("attempt %d: the lease duty did %v, want %s", attempt, got, want)
		}
	}
	got := resultOf(t, s.Task(t, id))
	code, data := errorOf(s.TaskResult(t, id))
	if got["status"] != "failed" || code != mcp.CodeInternalError || data["reason"] != tasks.ReasonAttemptsExhausted {
		t.Errorf("task %v, result code %d data %v: want failed with reason %s", got["status"], code, data, tasks.ReasonAttemptsExhausted)
	}
	if rows := taskAudit(t, env.Env, id)["tools/call rpc:-32603"]; len(rows) != 1 {
		t.Errorf("terminal audit rows %d, want 1", len(rows))
	}
}

func TestTheSweeperSendsAQueuedTaskNobodyClaimedAgain(t *testing.T) {
	env := newTaskEnv(t, false, nil)
	s := env.Initialize(t, servertest.Attorney, rev)
	id := s.CreateTask(t, gatedTool, map[string]any{}, 0)
	lost := env.receive(t)
	if err := env.q.Delete(context.Background(), []string{lost.ReceiptHandle}); err != nil {
		t.Fatal(err) // the message is lost
	}
	if got := actions(env.Sweep(t, env.Clock.Now()))["task unclaimed"]; got != nil {
		t.Errorf("a sweep before the threshold acted: %v", got)
	}
	env.Clock.Advance(tasks.DefaultUnclaimedAfter + time.Second)
	if got := actions(env.Sweep(t, env.Clock.Now()))["task unclaimed"]; got["re-enqueued"] != 1 {
		t.Fatalf("the unclaimed duty did %v, want one re-enqueue", got)
	}
	env.gate.open()
	env.deliver(context.Background(), t, env.receive(t))
	s.AwaitTask(t, id, "completed")
}

func TestTheSweeperPurgesATaskPastItsTTLWithItsPartsAndQuestions(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	s := env.Initialize(t, servertest.Attorney, rev)
	big := s.CreateTask(t, bigTool, map[string]any{}, 60_000)
	s.AwaitTask(t, big, "completed")
	asking := env.InitializeWith(t, servertest.Attorney, rev, `{"elicitation":{}}`)
	ask := asking.CreateTask(t, askTool, map[string]any{"question": "?"}, 60_000)
	asking.AwaitTask(t, ask, "input_required")
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":%q}}`, ask)
	es := servertest.OpenStream(t, http.MethodPost, env.URL, []byte(body), asking.Headers()...)
	es.NextMessage(t) // the question is parked
	es.Close()
	c := env.Creds[servertest.Attorney]
	pk := tasks.Key(c.Tenant, c.ID, big).PK
	count := func() int {
		page, err := env.Store.Query(context.Background(), store.Query{PK: pk})
		if err != nil {
			t.Fatal(err)
		}
		return len(page.Items)
	}
	if n := count(); n < 5 {
		t.Fatalf("%d rows in the credential's partition, want two tasks, their parts and a question", n)
	}
	env.Clock.Advance(61 * time.Second)
	reps := actions(env.Sweep(t, env.Clock.Now()))
	if reps["task expiry"]["purged"] != 2 {
		t.Errorf("the expiry duty did %v, want two purges", reps["task expiry"])
	}
	if n := count(); n != 0 {
		t.Errorf("%d rows left in the credential's partition after the purge", n)
	}
}

// A stored result holds the matter's rows as they were; it is not returned
// once the caller no longer reaches the matter (docs/decisions.md "Identity
// and binding": a new ethical wall holds on the very next call).
func TestAStoredResultIsWithheldOnceAnEthicalWallScreensItsCreator(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	s := env.Initialize(t, servertest.Attorney, rev)
	id := s.CreateTask(t, "audit_citations", map[string]any{"case_id": seed.Meridian}, 0)
	s.AwaitTask(t, id, "completed")
	if res := resultOf(t, s.TaskResult(t, id)); res["structuredContent"] == nil {
		t.Fatalf("tasks/result before the wall = %v", res)
	}
	if _, err := admin.Screen(context.Background(), env.Store, admin.ScreenRequest{Tenant: seed.DemoTenant,
		CaseID: seed.Meridian, Principal: seed.DemoAttorney, Screened: true}, env.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	if code, _ := errorOf(s.TaskResult(t, id)); code != mcp.CodeInvalidParams {
		t.Errorf("tasks/result behind the wall: code %d, want -32602, as for a task that does not exist", code)
	}
}
