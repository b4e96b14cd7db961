package ondynamo_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/tools"
)

// TaskInput sizes the task fixture's answer and may name a matter.
type TaskInput struct {
	Bytes  int    `json:"bytes"`
	CaseID string `json:"case_id,omitempty"`
}

// MatterID implements tools.MatterScoped.
func (in TaskInput) MatterID() string { return in.CaseID }

// registerTaskFixture adds fixture_task: a tool that may run as a task,
// reads nothing and answers Bytes bytes of text, so that the round trips
// below are the task machinery's own.
func registerTaskFixture(reg *tools.Registry) error {
	return tools.Register(reg, tools.Spec{Name: "fixture_task", Title: "Task (test fixture)", Scope: auth.ScopeRead,
		Description: "Answers the given number of bytes of text.", TaskSupport: tools.TaskOptional},
		func(_ context.Context, _ *tools.Call, in TaskInput) (tools.Raw, error) {
			return tools.Raw{Content: []mcp.Content{mcp.TextContent(strings.Repeat("x", in.Bytes))}}, nil
		})
}

// taskID returns the task id of a CreateTaskResult answer.
func taskID(t *testing.T, r *servertest.Response) string {
	t.Helper()
	var msg struct {
		Result struct {
			Task struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.Body, &msg); err != nil || msg.Result.Task.TaskID == "" {
		t.Fatalf("no task in %d %s", r.Status, r.Body)
	}
	return msg.Result.Task.TaskID
}

// The round trips of tasks on DynamoDB, pinned (docs/decisions.md
// "Pipeline choices"): every task method is the one batch read of the
// request, the task row's strongly consistent read and the one write; the
// creation writes the row in the request's one transaction; the worker
// claims with one update, re-admits the creator with two reads, and stores
// the outcome with its terminal audit row in one transaction. A result
// kept in parts costs tasks/result one query more.
func TestTaskRoundTripsOnDynamoDBArePinned(t *testing.T) {
	q := servertest.TaskQueue(t)
	env := newDynEnv(t, servertest.Options{TaskQueue: q, RegisterExtra: registerTaskFixture})
	s := env.Initialize(t, servertest.Attorney, rev)
	deliver := func() {
		recs, err := q.Receive(context.Background(), 1, time.Second)
		if err != nil || len(recs) != 1 {
			t.Fatalf("receive: %v %v", recs, err)
		}
		if resp, err := env.Server.Tasks.Handle(context.Background(), events.SQSEvent{Records: recs}); err != nil || len(resp.BatchItemFailures) > 0 {
			t.Fatalf("worker: %v %v", resp, err)
		}
	}
	create := func(bytes int, matter ...string) string {
		args := map[string]any{"bytes": bytes}
		if len(matter) > 0 {
			args["case_id"] = matter[0]
		}
		return taskID(t, s.Post(t, []byte(rpc(3, "tools/call", map[string]any{"name": "fixture_task",
			"arguments": args, "task": map[string]any{"ttl": 60_000}}))))
	}
	method := func(name, id string) *servertest.Response {
		return s.Post(t, []byte(rpc(4, name, map[string]any{"taskId": id})))
	}
	read := cost{"BatchGetItem": 1, "GetItem": 1, "PutItem": 1} // the task row; the audit row alone (issue 19, item 6)
	env.ops.take()

	small := create(10)
	steps := []struct {
		name string
		do   func() *servertest.Response
		want cost
	}{
		{"tools/call with params.task: the row in the request's one transaction", nil, cost{"BatchGetItem": 1, "TransactWriteItems": 1}},
		{"tasks/get", func() *servertest.Response { return method("tasks/get", small) }, read},
		{"tasks/list", func() *servertest.Response { return s.Post(t, []byte(rpc(5, "tasks/list", map[string]any{}))) },
			cost{"BatchGetItem": 1, "Query": 1, "PutItem": 1}},
		{"the worker: claim, re-admission, the outcome with its audit row", func() *servertest.Response { deliver(); return nil },
			cost{"UpdateItem": 1, "GetItem": 1, "BatchGetItem": 1, "TransactWriteItems": 1}},
		{"tasks/result of a terminal task", func() *servertest.Response { return method("tasks/result", small) }, read},
		{"tasks/cancel of a terminal task (-32602)", func() *servertest.Response { return method("tasks/cancel", small) }, read},
	}
	for i, st := range steps {
		if i > 0 {
			if r := st.do(); r != nil && r.Status != http.StatusOK {
				t.Fatalf("%s: %d %s", st.name, r.Status, r.Body)
			}
		}
		if diff := cmp.Diff(st.want, cost(env.ops.take())); diff != "" {
			t.Errorf("%s: DynamoDB requests (-want +got):\n%s", st.name, diff)
		}
	}

	queued := create(10)
	env.ops.take()
	if r := method("tasks/cancel", queued); !strings.Contains(string(r.Body), `"status":"cancelled"`) {
		t.Fatalf("cancel: %s", r.Body)
	}
	// The cancellation's write with the audit row: one transaction.
	if diff := cmp.Diff(cost{"BatchGetItem": 1, "GetItem": 1, "TransactWriteItems": 1}, cost(env.ops.take())); diff != "" {
		t.Errorf("tasks/cancel of an open task: DynamoDB requests (-want +got):\n%s", diff)
	}

	// The cancelled task's message comes all the same: its claim fails,
	// and that costs the one conditional update.
	deliver()
	if diff := cmp.Diff(cost{"UpdateItem": 1}, cost(env.ops.take())); diff != "" {
		t.Errorf("a delivery of a cancelled task: DynamoDB requests (-want +got):\n%s", diff)
	}

	big := create(450_000)
	deliver()
	env.ops.take()
	if r := method("tasks/result", big); r.Status != http.StatusOK || len(r.Body) < 450_000 {
		t.Fatalf("tasks/result of the big task: %d, %d bytes", r.Status, len(r.Body))
	}
	want := cost{"BatchGetItem": 1, "GetItem": 1, "Query": 1, "PutItem": 1}
	if diff := cmp.Diff(want, cost(env.ops.take())); diff != "" {
		t.Errorf("tasks/result of a result kept in parts: DynamoDB requests (-want +got):\n%s", diff)
	}

	// A task of a matter: the worker's funnel reads the matter row, and so
	// does tasks/result before it returns the stored result.
	matter := create(10, seed.Meridian)
	env.ops.take()
	deliver()
	if diff := cmp.Diff(cost{"UpdateItem": 1, "GetItem": 2, "BatchGetItem": 1, "TransactWriteItems": 1}, cost(env.ops.take())); diff != "" {
		t.Errorf("the worker of a matter's task: DynamoDB requests (-want +got):\n%s", diff)
	}
	method("tasks/result", matter)
	if diff := cmp.Diff(cost{"BatchGetItem": 1, "GetItem": 2, "PutItem": 1}, cost(env.ops.take())); diff != "" {
		t.Errorf("tasks/result of a matter's task: DynamoDB requests (-want +got):\n%s", diff)
	}
}
