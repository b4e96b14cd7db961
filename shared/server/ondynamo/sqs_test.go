package ondynamo_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/queue/sqsqueue"
	"github.com/custodymcp/custody/shared/queue/sqsqueue/fauxqstest"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/tasks"
)

// The round trips of tasks on AWS's engines, DynamoDB and SQS together,
// pinned per task method (docs/decisions.md "Pipeline choices"): creating
// a task costs the request's batch read and one transaction, then exactly
// one SendMessage after the commit; tasks/get, tasks/result and
// tasks/cancel cost their reads and one write and no SQS call; the worker
// makes no SQS call of its own (Lambda's event source mapping receives and
// deletes); a sweep that re-enqueues a lost message costs one SendMessage.
// The SQS engine runs against fauxqs, its client's requests counted by
// operation as the DynamoDB client's are.
func TestTaskRoundTripsOnDynamoDBAndSQSArePinned(t *testing.T) {
	fq := fauxqstest.Start(t)
	url, _ := fq.CreateQueue(t, "tasks", map[string]string{"VisibilityTimeout": "60"})
	sqsOps := &ops{next: http.DefaultTransport.(*http.Transport).Clone(), n: map[string]int{}, leases: map[string]int{}}
	client := sqs.New(sqs.Options{Region: fauxqstest.Region, BaseEndpoint: aws.String(fq.Endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), RetryMaxAttempts: 1,
		HTTPClient: &http.Client{Transport: sqsOps}})
	q, err := sqsqueue.New(sqsqueue.Options{Client: client, QueueURL: url})
	if err != nil {
		t.Fatal(err)
	}
	env := newDynEnv(t, servertest.Options{TaskQueue: q, RegisterExtra: registerTaskFixture})
	s := env.Initialize(t, servertest.Attorney, rev)

	type both struct{ DynamoDB, SQS cost }
	take := func() both { return both{cost(env.ops.take()), cost(sqsOps.take())} }
	read := cost{"BatchGetItem": 1, "GetItem": 1, "PutItem": 1} // the task row; the audit row alone (issue 19, item 6)
	create := func() string {
		return taskID(t, s.Post(t, []byte(rpc(3, "tools/call", map[string]any{"name": "fixture_task",
			"arguments": map[string]any{"bytes": 10}, "task": map[string]any{"ttl": 600_000}}))))
	}
	method := func(name, id string) *servertest.Response {
		r := s.Post(t, []byte(rpc(4, name, map[string]any{"taskId": id})))
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", name, r.Status, r.Body)
		}
		return r
	}
	// receive takes the next message off the queue, as the event source
	// mapping would, and leaves its count out of the worker's.
	receive := func() events.SQSMessage {
		t.Helper()
		recs, err := q.Receive(context.Background(), 1, 2*time.Second)
		if err != nil || len(recs) != 1 {
			t.Fatalf("receive: %v %v", recs, err)
		}
		sqsOps.take()
		return recs[0]
	}
	env.ops.take()
	sqsOps.take()

	var id string
	var rec events.SQSMessage
	steps := []struct {
		name string
		do   func()
		want both
	}{
		{"tools/call with params.task: the row in one transaction, then one SendMessage", func() { id = create() },
			both{cost{"BatchGetItem": 1, "TransactWriteItems": 1}, cost{"SendMessage": 1}}},
		{"tasks/get", func() { method("tasks/get", id) }, both{read, cost{}}},
		{"the worker (its record handed over as Lambda does): claim, re-admission, outcome; no SQS call", func() {
			rec = receive()
			if resp, err := env.Server.Tasks.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}}); err != nil || len(resp.BatchItemFailures) > 0 {
				t.Fatalf("worker: %v %v", resp, err)
			}
		}, both{cost{"UpdateItem": 1, "GetItem": 1, "BatchGetItem": 1, "TransactWriteItems": 1}, cost{}}},
		{"tasks/result of a terminal task", func() { method("tasks/result", id) }, both{read, cost{}}},
		{"tasks/cancel of a terminal task (-32602)", func() { method("tasks/cancel", id) }, both{read, cost{}}},
	}
	for _, st := range steps {
		st.do()
		if diff := cmp.Diff(st.want, take()); diff != "" {
			t.Errorf("%s: requests (-want +got):\n%s", st.name, diff)
		}
	}
	if err := q.Delete(context.Background(), []string{rec.ReceiptHandle}); err != nil {
		t.Fatal(err)
	}

	// An open task cancelled: its reads and one write, no SQS call.
	open := create()
	take()
	if r := method("tasks/cancel", open); !strings.Contains(string(r.Body), `"status":"cancelled"`) {
		t.Fatalf("cancel: %s", r.Body)
	}
	// The cancellation's write with the audit row: one transaction.
	if diff := cmp.Diff(both{cost{"BatchGetItem": 1, "GetItem": 1, "TransactWriteItems": 1}, cost{}}, take()); diff != "" {
		t.Errorf("tasks/cancel of an open task: requests (-want +got):\n%s", diff)
	}
	lost := receive() // the cancelled task's message, taken off the queue unrun
	if err := q.Delete(context.Background(), []string{lost.ReceiptHandle}); err != nil {
		t.Fatal(err)
	}

	// A lost message: the sweep past the unclaimed threshold sends it again,
	// one conditional update and one SendMessage.
	unclaimed := create()
	if m, err := queue.ParseMessage(receive().Body); err != nil || m.TaskID != unclaimed {
		t.Fatalf("the new task's message: %+v %v", m, err)
	}
	take()
	now := env.Clock.Now().Add(tasks.DefaultUnclaimedAfter + time.Second)
	if got := env.Sweep(t, now); len(got) == 0 {
		t.Fatal("no sweep report")
	}
	got := take()
	if got.SQS["SendMessage"] != 1 || len(got.SQS) != 1 || got.DynamoDB["UpdateItem"] != 1 {
		t.Errorf("the sweep of a lost message: requests %+v, want one conditional update and one SendMessage (beside the index reads)", got)
	}
}
