package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/lambdaio/rietest"
	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/queue/sqsqueue"
	"github.com/custodymcp/custody/shared/queue/sqsqueue/fauxqstest"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
	"github.com/custodymcp/custody/shared/tasks"
)

func TestMain(m *testing.M) {
	code := m.Run()
	rietest.Cleanup()
	os.Exit(code)
}

// The sweeper's bootstrap under the Lambda Runtime Interface Emulator, on
// the DynamoDB emulator and the fauxqs SQS emulator, as the template wires
// it (TASK_QUEUE_URL, TASK_DEAD_LETTER_QUEUE_URL; SQS_ENDPOINT for the
// emulator): the scheduled event sample, invoked once, settles a task's
// dead-lettered message — the task fails with its reason and the message
// leaves the dead-letter queue — and the invocation logs its action.
func TestRuntimeEmulatorSweepSettlesADeadLetter(t *testing.T) {
	rie := rietest.Binary(t)
	fq := fauxqstest.Start(t)
	boot := rietest.Build(t, "github.com/custodymcp/custody/functions/sweeper")
	queueURL, _ := fq.CreateQueue(t, "tasks", nil)
	dlqURL, dlqARN := fq.CreateQueue(t, "tasks-dlq", nil)
	emu := dynamotest.NewServer(t)
	client := emu.Client()
	table := dynamotest.CreateTable(t, client)
	front := servertest.TaskQueue(t)
	env := servertest.New(t, servertest.Options{Store: dynamostore.New(client, table, dynamostore.Options{}),
		Clock: servertest.NewClock(time.Now()), TaskQueue: front})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	id := s.CreateTask(t, "export_fact_record", map[string]any{"case_id": "m_harbor"}, 600_000)
	recs, err := front.Receive(context.Background(), 1, time.Second)
	if err != nil || len(recs) != 1 {
		t.Fatalf("the task's message: %v %v", recs, err)
	}
	m, _ := queue.ParseMessage(recs[0].Body)
	dlq, err := sqsqueue.New(sqsqueue.Options{Client: fq.Client(), QueueURL: dlqURL, QueueARN: dlqARN})
	if err != nil {
		t.Fatal(err)
	}
	if err := dlq.Send(context.Background(), m); err != nil { // what the redrive policy does
		t.Fatal(err)
	}

	p := rietest.Start(t, rie, boot, "SweeperFunction", 120*time.Second, map[string]string{
		"DYNAMODB_TABLE": table, "DYNAMODB_ENDPOINT": emu.URL, "TASK_QUEUE_URL": queueURL,
		"TASK_DEAD_LETTER_QUEUE_URL": dlqURL, "SQS_ENDPOINT": fq.Endpoint, "AUDIT_RETENTION_DAYS": "", "LOG_LEVEL": "INFO",
	})
	raw, err := os.ReadFile(filepath.Join(sampleDir, "eventbridge-scheduled.json"))
	if err != nil {
		t.Fatal(err)
	}
	if out := p.Invoke(t, raw, "sweep-1"); string(out) != "null" {
		t.Errorf("the sweep answered %q, want null (no error)\nRIE output:\n%s", out, p.Output())
	}
	code, data := taskError(t, s.TaskResult(t, id))
	if code != -32603 || data["reason"] != tasks.ReasonDeadLettered {
		t.Errorf("the task's result: %d %v, want -32603 with reason %s", code, data, tasks.ReasonDeadLettered)
	}
	if left, err := dlq.Receive(context.Background(), queue.MaxBatchSize, time.Second); err != nil || len(left) != 0 {
		t.Errorf("the dead-letter queue holds %d messages (%v), want none", len(left), err)
	}
	p.Stop()
	var got []map[string]any
	sc := bufio.NewScanner(strings.NewReader(p.Output()))
	for sc.Scan() {
		var l map[string]any
		if json.Unmarshal(sc.Bytes(), &l) == nil && l["message"] == "sweep action" {
			delete(l, "timestamp")
			delete(l, "level")
			got = append(got, l)
		}
	}
	want := []map[string]any{{"message": "sweep action", "duty": "task dead letter", "action": "failed", "count": 1.0, "requestId": "sweep-1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sweep action lines (-want +got):\n%s\nRIE output:\n%s", diff, p.Output())
	}
}
