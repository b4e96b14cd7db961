package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/lambdaio"
	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/queue/memqueue"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/tasks"
)

var sampleDir = filepath.Join("..", "..", "events", "sweeper")

// The sample is an EventBridge scheduled event in aws-lambda-go's own
// encoding: decoding it (unknown fields refused) and encoding it again
// gives the file byte for byte.
func TestSampleEventRoundTrips(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(sampleDir, "*.json"))
	if err != nil || len(files) != 1 || filepath.Base(files[0]) != "eventbridge-scheduled.json" {
		t.Fatalf("samples %v (%v), want eventbridge-scheduled.json, the one the test below plays", files, err)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var ev events.EventBridgeEvent
	if err := dec.Decode(&ev); err != nil {
		t.Fatalf("decode: %v", err)
	}
	out, err := json.MarshalIndent(ev, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if got := append(out, '\n'); !bytes.Equal(got, raw) {
		t.Errorf("re-encoded sample differs from the file:\n%s", got)
	}
	if ev.DetailType != "Scheduled Event" || ev.Source != "aws.events" {
		t.Errorf("detail-type %q source %q, want an EventBridge schedule's", ev.DetailType, ev.Source)
	}
}

// sweepEnv is a front (/mcp over a file store, tasks on an in-process
// queue) and the sweeper composed as the function composes it over the same
// store, the task queue and a dead-letter queue, its clock the front's.
type sweepEnv struct {
	*servertest.Env
	q, dlq *memqueue.Queue
	s      *sweeper
	logs   *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// reset forgets the lines so far.
func (b *syncBuffer) reset() { b.mu.Lock(); b.b.Reset(); b.mu.Unlock() }

// lines returns the JSON log lines with message.
func (b *syncBuffer) lines(message string) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b.b.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["message"] == message {
			out = append(out, m)
		}
	}
	return out
}

func newSweepEnv(t *testing.T) *sweepEnv {
	t.Helper()
	q := servertest.TaskQueue(t)
	dlq, err := memqueue.New(memqueue.Options{Name: "tasks-dlq"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dlq.Close() })
	env := servertest.New(t, servertest.Options{TaskQueue: q})
	logs := &syncBuffer{}
	cfg, err := LoadConfig(func(k string) string {
		return map[string]string{"DYNAMODB_TABLE": "custody", "TASK_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/000000000000/tasks",
			"TASK_DEAD_LETTER_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/000000000000/tasks-dlq"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSweeper(cfg, env.Store, q, dlq, nil, slog.New(lambdaio.NewLogHandler(logs, slog.LevelInfo)))
	if err != nil {
		t.Fatal(err)
	}
	s.now = env.Clock.Now
	return &sweepEnv{Env: env, q: q, dlq: dlq, s: s, logs: logs}
}

func scheduled(t *testing.T) events.EventBridgeEvent {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(sampleDir, "eventbridge-scheduled.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.EventBridgeEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// actions reads the "sweep action" lines as duty → action → count.
func actions(lines []map[string]any) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, l := range lines {
		duty, action := l["duty"].(string), l["action"].(string)
		if out[duty] == nil {
			out[duty] = map[string]int{}
		}
		out[duty][action] += int(l["count"].(float64))
	}
	return out
}

// The scheduled event played through the sweeper: a task whose message was
// lost is sent again once it waited past the unclaimed threshold, a task
// whose message was dead-lettered fails with a reason, and each action is
// one "sweep action" line (what the template's metric filter counts)
// beside the one "sweep" line.
func TestTheScheduledEventRunsEveryDutyAndLogsEachAction(t *testing.T) {
	e := newSweepEnv(t)
	ses := e.Initialize(t, servertest.Attorney, "2025-11-25")
	lost := ses.CreateTask(t, "export_fact_record", map[string]any{"case_id": "m_harbor"}, 600_000)
	dead := ses.CreateTask(t, "export_fact_record", map[string]any{"case_id": "m_harbor"}, 600_000)
	for range 2 {
		recs, err := e.q.Receive(context.Background(), 1, time.Second)
		if err != nil || len(recs) != 1 {
			t.Fatalf("receive: %v %v", recs, err)
		}
		_ = e.q.Delete(context.Background(), []string{recs[0].ReceiptHandle}) // lost
		if m, _ := queue.ParseMessage(recs[0].Body); m.TaskID == dead {
			if err := e.dlq.Send(context.Background(), m); err != nil { // dead-lettered
				t.Fatal(err)
			}
		}
	}

	if err := e.s.Handle(context.Background(), scheduled(t)); err != nil {
		t.Fatalf("Handle = %v", err)
	}
	want := map[string]map[string]int{"task dead letter": {tasks.DeadLetterFailed: 1}}
	if diff := cmp.Diff(want, actions(e.logs.lines("sweep action"))); diff != "" {
		t.Errorf("the first sweep's actions (-want +got):\n%s", diff)
	}
	if lines := e.logs.lines("sweep"); len(lines) != 1 || lines[0]["actions"] != 1.0 || lines[0]["level"] != "INFO" {
		t.Errorf("sweep lines %v, want one INFO line counting one action", lines)
	}
	e.logs.reset()
	e.Clock.Advance(tasks.DefaultUnclaimedAfter + time.Second)
	if err := e.s.Handle(context.Background(), scheduled(t)); err != nil {
		t.Fatalf("Handle = %v", err)
	}
	want = map[string]map[string]int{"task unclaimed": {"re-enqueued": 1}}
	if diff := cmp.Diff(want, actions(e.logs.lines("sweep action"))); diff != "" {
		t.Errorf("the sweep past the unclaimed threshold (-want +got):\n%s", diff)
	}
	recs, err := e.q.Receive(context.Background(), queue.MaxBatchSize, time.Second)
	if err != nil || len(recs) != 1 {
		t.Fatalf("the task queue after the sweep: %v %v, want the lost task's message", recs, err)
	}
	if m, _ := queue.ParseMessage(recs[0].Body); m.TaskID != lost {
		t.Errorf("the message sent names %s, want the lost task %s", m.TaskID, lost)
	}
	code, data := taskError(t, ses.TaskResult(t, dead))
	if code != -32603 || data["reason"] != tasks.ReasonDeadLettered {
		t.Errorf("the dead-lettered task's result: %d %v, want -32603 with reason %s", code, data, tasks.ReasonDeadLettered)
	}
}

func taskError(t *testing.T, msg map[string]any) (int, map[string]any) {
	t.Helper()
	e, _ := msg["error"].(map[string]any)
	c, _ := e["code"].(float64)
	d, _ := e["data"].(map[string]any)
	return int(c), d
}

// Overlapping sweeps — invocations of the next minute starting while the
// last still runs — act once on each row: of many sweeps racing over the
// same lost tasks, exactly one re-enqueue each.
func TestOverlappingSweepsActOnceOnEachRow(t *testing.T) {
	e := newSweepEnv(t)
	ses := e.Initialize(t, servertest.Attorney, "2025-11-25")
	const n = 5
	for range n {
		ses.CreateTask(t, "export_fact_record", map[string]any{"case_id": "m_harbor"}, 600_000)
	}
	for range n {
		recs, _ := e.q.Receive(context.Background(), 1, time.Second)
		_ = e.q.Delete(context.Background(), []string{recs[0].ReceiptHandle})
	}
	e.Clock.Advance(tasks.DefaultUnclaimedAfter + time.Second)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := e.s.Handle(context.Background(), scheduled(t)); err != nil {
				t.Errorf("Handle = %v", err)
			}
		})
	}
	wg.Wait()
	if got := actions(e.logs.lines("sweep action"))["task unclaimed"]["re-enqueued"]; got != n {
		t.Errorf("re-enqueues over 8 overlapping sweeps = %d, want %d (one per task)", got, n)
	}
	if lines := e.logs.lines("sweep"); len(lines) != 8 {
		t.Errorf("sweep lines %d, want one per invocation (8)", len(lines))
	}
	recs, _ := e.q.Receive(context.Background(), queue.MaxBatchSize, time.Second)
	if len(recs) != n {
		t.Errorf("messages sent %d, want %d", len(recs), n)
	}
}
