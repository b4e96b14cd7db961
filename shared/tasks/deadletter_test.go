package tasks_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/queue/memqueue"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/sweep"
	"github.com/custodymcp/custody/shared/tasks"
)

// dlqVisibility is the dead-letter queue's visibility timeout in these
// tests: short, so a message the duty keeps is seen again soon.
const dlqVisibility = 2 * time.Second

// newDLQ is an empty in-process dead-letter queue.
func newDLQ(t *testing.T) *memqueue.Queue {
	t.Helper()
	q, err := memqueue.New(memqueue.Options{Name: "tasks-dlq", VisibilityTimeout: dlqVisibility})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// deadLetter moves a task's message from the task queue to the dead-letter
// queue, as the queue's redrive policy does after maxReceiveCount.
func (e *taskEnv) deadLetter(t *testing.T, dlq queue.Sender) events.SQSMessage {
	t.Helper()
	rec := e.receive(t)
	m, err := queue.ParseMessage(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.q.Delete(context.Background(), []string{rec.ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	if err := dlq.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	return rec
}

func sweepDLQ(t *testing.T, env *taskEnv, dlq queue.Consumer) map[string]int {
	t.Helper()
	rep, err := env.Server.Tasks.DeadLetterDuty(dlq).Sweep(context.Background(), env.Clock.Now())
	if err != nil {
		t.Fatalf("dead-letter sweep: %v", err)
	}
	return rep.Actions
}

func TestADeadLetteredQueuedTaskIsFailedWithAReasonAndItsMessageDeleted(t *testing.T) {
	env := newTaskEnv(t, false, nil)
	dlq := newDLQ(t)
	s := env.Initialize(t, servertest.Attorney, rev)
	id := s.CreateTask(t, gatedTool, map[string]any{}, int64(time.Hour/time.Millisecond))
	env.deadLetter(t, dlq)

	if diff := cmp.Diff(map[string]int{tasks.DeadLetterFailed: 1}, sweepDLQ(t, env, dlq)); diff != "" {
		t.Errorf("dead-letter sweep actions (-want +got):\n%s", diff)
	}
	got := resultOf(t, s.Task(t, id))
	code, data := errorOf(s.TaskResult(t, id))
	if got["status"] != "failed" || code != mcp.CodeInternalError || data["reason"] != tasks.ReasonDeadLettered {
		t.Errorf("task %v, result code %d data %v: want failed, -32603 with reason %s", got["status"], code, data, tasks.ReasonDeadLettered)
	}
	if rows := taskAudit(t, env.Env, id)["tools/call rpc:-32603"]; len(rows) != 1 {
		t.Errorf("terminal audit rows %d, want 1", len(rows))
	}
	if recs, err := dlq.Receive(context.Background(), queue.MaxBatchSize, 2*dlqVisibility); err != nil || len(recs) != 0 {
		t.Errorf("the dead-letter queue after the sweep holds %d messages (%v), want none: a settled message is deleted", len(recs), err)
	}
	// A late delivery of the failed task (another of its messages) runs nothing.
	if resp := env.deliver(context.Background(), t, messageFor(t, env.Env, servertest.Attorney, id)); len(resp.BatchItemFailures) != 0 {
		t.Errorf("a delivery after the dead-letter failure = %v, want success (its claim fails)", resp)
	}
	if n := env.gate.runs.Load(); n != 0 {
		t.Errorf("the tool ran %d times, want never", n)
	}
}

func TestADeadLetteredMessageOfATaskThatIsHeldTerminalOrGoneIsStaleAndOnlyDeleted(t *testing.T) {
	env := newTaskEnv(t, false, nil)
	dlq := newDLQ(t)
	s := env.Initialize(t, servertest.Attorney, rev)

	// Running under a live lease: a worker holds it.
	held := s.CreateTask(t, gatedTool, map[string]any{}, 0)
	rec := env.receive(t)
	done := make(chan events.SQSEventResponse, 1)
	go func() { done <- env.deliver(context.Background(), t, rec) }()
	env.gate.wait(t)
	if err := dlq.Send(context.Background(), mustParse(t, rec.Body)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{tasks.DeadLetterStale: 1}, sweepDLQ(t, env, dlq)); diff != "" {
		t.Errorf("a message of a task under a live lease (-want +got):\n%s", diff)
	}
	env.gate.open()
	if resp := <-done; len(resp.BatchItemFailures) != 0 {
		t.Fatalf("the holding worker = %v", resp)
	}
	s.AwaitTask(t, held, "completed")
	// Terminal now: its message is stale too.
	if err := dlq.Send(context.Background(), mustParse(t, rec.Body)); err != nil {
		t.Fatal(err)
	}
	// Gone: a task nobody has.
	gone := mustParse(t, rec.Body)
	gone.TaskID = "tk" + "0123456789ab" + "00000000000000000000000000000000"
	if err := dlq.Send(context.Background(), gone); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{tasks.DeadLetterStale: 2}, sweepDLQ(t, env, dlq)); diff != "" {
		t.Errorf("messages of a completed and of an unknown task (-want +got):\n%s", diff)
	}
	if got := resultOf(t, s.Task(t, held)); got["status"] != "completed" {
		t.Errorf("the held task is %v after the sweeps, want completed", got["status"])
	}
}

func mustParse(t *testing.T, body string) queue.Message {
	t.Helper()
	m, err := queue.ParseMessage(body)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAPoisonDeadLetterIsKeptForAnOperator(t *testing.T) {
	env := newTaskEnv(t, false, nil)
	dlq := newDLQ(t)
	// A message of the right JSON shape naming no task id Custody makes.
	if err := dlq.Send(context.Background(), queue.Message{Tenant: "demo", TaskID: "not-a-task", CredentialID: "c1"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{tasks.DeadLetterKept: 1}, sweepDLQ(t, env, dlq)); diff != "" {
		t.Errorf("dead-letter sweep actions (-want +got):\n%s", diff)
	}
	recs, err := dlq.Receive(context.Background(), queue.MaxBatchSize, queue.MaxWaitTime)
	if err != nil || len(recs) != 1 || recs[0].Attributes["ApproximateReceiveCount"] != "2" {
		t.Errorf("the dead-letter queue after its visibility timeout gives %v (%v), want the kept message again", recs, err)
	}
}

// Overlapping sweeps and workers racing for the same dead-lettered tasks:
// each task ends in exactly one terminal state, run by a worker at most
// once or failed by a sweep, and every message is settled once.
func TestOverlappingDeadLetterSweepsAndWorkersRacingLeaveEachTaskOneTerminalState(t *testing.T) {
	env := newTaskEnv(t, false, nil)
	env.gate.open() // runs finish at once
	dlq := newDLQ(t)
	s := env.Initialize(t, servertest.Attorney, rev)
	const n = 12
	ids := make([]string, n)
	recs := make([]events.SQSMessage, n)
	for i := range n {
		ids[i] = s.CreateTask(t, gatedTool, map[string]any{}, 0)
		recs[i] = env.receive(t)
		// Two copies in the dead-letter queue: the redrive of a duplicate.
		for range 2 {
			if err := dlq.Send(context.Background(), mustParse(t, recs[i].Body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	duty := env.Server.Tasks.DeadLetterDuty(dlq)
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := map[string]int{}
	for range 4 {
		wg.Go(func() {
			rep, err := sweep.Run(context.Background(), []sweep.Duty{duty}, env.Clock.Now())
			if err != nil {
				t.Errorf("sweep: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, r := range rep {
				for k, v := range r.Actions {
					total[k] += v
				}
			}
		})
	}
	for i := range n {
		wg.Go(func() { env.deliver(context.Background(), t, recs[i]) })
	}
	wg.Wait()
	failed := 0
	for _, id := range ids {
		st := resultOf(t, s.Task(t, id))["status"]
		switch st {
		case "completed":
		case "failed":
			failed++
		default:
			t.Errorf("task %s is %v, want completed or failed", id, st)
		}
		terminal := 0
		for k, rows := range taskAudit(t, env.Env, id) {
			if strings.HasPrefix(k, "tools/call ") && k != "tools/call task:created" {
				terminal += len(rows)
			}
		}
		if terminal != 1 {
			t.Errorf("task %s has %d terminal audit rows, want 1", id, terminal)
		}
	}
	if total[tasks.DeadLetterFailed] != failed || total[tasks.DeadLetterFailed]+total[tasks.DeadLetterStale] != 2*n {
		t.Errorf("the sweeps settled %v, want %d failed (the tasks failed) and all %d messages settled", total, failed, 2*n)
	}
	if runs := env.gate.runs.Load(); runs != int64(n-failed) {
		t.Errorf("the tool ran %d times, want once per completed task (%d)", runs, n-failed)
	}
}
