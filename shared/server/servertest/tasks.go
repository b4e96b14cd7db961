package servertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/queue/memqueue"
	"github.com/custodymcp/custody/shared/sweep"
	"github.com/custodymcp/custody/shared/tasks"
)

// FastTasks are task options for tests: renewals and progress writes every
// 20 ms and tasks/result polling from 5 ms to 20 ms, so that a cancellation
// reaches a running tool, and a result its waiting client, at once.
func FastTasks() tasks.Options {
	return tasks.Options{RenewEvery: 20 * time.Millisecond, ProgressEvery: 20 * time.Millisecond,
		ResultPollMin: 5 * time.Millisecond, ResultPollMax: 20 * time.Millisecond, Heartbeat: 50 * time.Millisecond}
}

// TaskQueue returns an in-process queue for Options.TaskQueue.
func TaskQueue(t testing.TB) *memqueue.Queue {
	t.Helper()
	q, err := memqueue.New(memqueue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// StartWorker delivers q's messages to the Env's task worker, as the dev
// server does, until the test ends.
func (e *Env) StartWorker(t testing.TB, q queue.Consumer, concurrency int) {
	t.Helper()
	d, err := queue.Dispatch(q, e.Server.Tasks.Handle, &queue.DispatchOptions{MaximumConcurrency: concurrency, WaitTime: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = d.Stop(ctx)
	})
}

// Sweep runs the Env's task duties once at now.
func (e *Env) Sweep(t testing.TB, now time.Time) []sweep.Report {
	t.Helper()
	reps, err := sweep.Run(context.Background(), e.Server.Tasks.Duties(), now)
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	return reps
}

// CreateTask calls a tool as a task (params.task with ttl ms, none when
// ttl is 0) and returns the task's id, failing unless the answer is a
// CreateTaskResult.
func (s *Session) CreateTask(t testing.TB, tool string, args any, ttl int64) string {
	t.Helper()
	task := map[string]any{}
	if ttl > 0 {
		task["ttl"] = ttl
	}
	msg := s.Call(t, "tools/call", map[string]any{"name": tool, "arguments": args, "task": task})
	res, _ := msg["result"].(map[string]any)
	tk, _ := res["task"].(map[string]any)
	id, _ := tk["taskId"].(string)
	if id == "" {
		t.Fatalf("tools/call %s as a task: no task in %v", tool, msg)
	}
	return id
}

// Task returns tasks/get's answer for id (its result, or the error
// message when it is a JSON-RPC error).
func (s *Session) Task(t testing.TB, id string) map[string]any {
	t.Helper()
	return s.Call(t, "tasks/get", map[string]any{"taskId": id})
}

// AwaitTask polls tasks/get until the task's status is one of want and
// returns the Task, failing after a minute.
func (s *Session) AwaitTask(t testing.TB, id string, want ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		msg := s.Task(t, id)
		res, ok := msg["result"].(map[string]any)
		if !ok {
			t.Fatalf("tasks/get %s: %v", id, msg)
		}
		for _, w := range want {
			if res["status"] == w {
				return res
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %v after a minute, want %v", id, res["status"], want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TaskResult returns tasks/result's JSON-RPC answer for id (the last
// message, whether the answer came as JSON or as an event stream).
func (s *Session) TaskResult(t testing.TB, id string) map[string]any {
	t.Helper()
	msgs := s.Exchange(t, "tasks/result", map[string]any{"taskId": id})
	return msgs[len(msgs)-1]
}

// Exchange sends one request in the session and returns every JSON-RPC
// message of its answer, in order: the one JSON response, or each message
// event of the stream, the response last.
func (s *Session) Exchange(t testing.TB, method string, params any) []map[string]any {
	t.Helper()
	id := s.lastID.Add(1)
	p, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p)
	req, err := http.NewRequest(http.MethodPost, s.env.URL, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for _, h := range s.Headers() {
		name, value, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: HTTP %d %s", method, resp.StatusCode, b)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var msg map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		return []map[string]any{msg}
	}
	es := &EventStream{Status: resp.StatusCode, Header: resp.Header, resp: resp, rd: bufio.NewReader(resp.Body), cancel: func() {}}
	var out []map[string]any
	for {
		msg := es.NextMessage(t)
		out = append(out, msg)
		if _, hasID := msg["id"]; hasID && msg["method"] == nil {
			return out
		}
	}
}
