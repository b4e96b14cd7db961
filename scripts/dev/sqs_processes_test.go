package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/shared/queue/sqsqueue/fauxqstest"
	"github.com/custodymcp/custody/shared/records/seed"
)

// TestATaskCreatedThroughOneProcessIsRunByAWorkerInAnother is the
// two-process proof of tasks on AWS's shape: the DynamoDB emulator, the
// fauxqs SQS emulator (a task queue with a redrive policy to its
// dead-letter queue) and two dev-server processes on both. A creates a
// task and runs no worker (-task-worker=false), as /mcp on AWS: the task
// stays working. B starts and polls the queue, as the worker Lambda's
// event source mapping does: it claims and runs the task. The task's
// status and result are read through A, and the queue is left empty (the
// worker's success deleted the message).
func TestATaskCreatedThroughOneProcessIsRunByAWorkerInAnother(t *testing.T) {
	fq := fauxqstest.Start(t) // skips without npm, naming it (fails with CI=true)
	dlqURL, dlqARN := fq.CreateQueue(t, "tasks-dlq", nil)
	queueURL, _ := fq.CreateQueue(t, "tasks", map[string]string{"VisibilityTimeout": "60",
		"RedrivePolicy": fauxqstest.RedrivePolicy(dlqARN, 5)})
	devBin, _, minidynBin := buildTools(t)
	emu := start(t, "minidyn", minidynBin, nil, "-addr", "127.0.0.1:0", "-table", "custody")
	endpoint := emu.await(t, minidynURL, 30*time.Second)
	data := t.TempDir()
	env := []string{"STORE_ENGINE=dynamodb", "DYNAMODB_TABLE=custody", "DYNAMODB_ENDPOINT=" + endpoint,
		"TASK_QUEUE_URL=" + queueURL, "TASK_DEAD_LETTER_QUEUE_URL=" + dlqURL, "SQS_ENDPOINT=" + fq.Endpoint}
	a := start(t, "dev A", devBin, env, "-task-worker=false", "-addr", "127.0.0.1:0", "-data", data)
	urlA := a.await(t, serving, 2*time.Minute)
	key, err := datadir.Dir(data).Read(datadir.DevKeyFile)
	if err != nil {
		t.Fatal(err)
	}

	status, h, _ := mcpPost(t, urlA, key, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"two-processes","version":"0"}}}`)
	sid := h.Get("Mcp-Session-Id")
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize through A: %d, session %q", status, sid)
	}
	call := func(id int, method string, params any) map[string]any {
		t.Helper()
		p, _ := json.Marshal(params)
		status, _, msg := mcpPost(t, urlA, key, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p))
		if status != http.StatusOK || msg == nil {
			t.Fatalf("%s through A: %d %v", method, status, msg)
		}
		return msg
	}
	created := call(2, "tools/call", map[string]any{"name": "export_fact_record",
		"arguments": map[string]any{"case_id": seed.Meridian}, "task": map[string]any{"ttl": 600_000}})
	task, _ := created["result"].(map[string]any)["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if id == "" {
		t.Fatalf("no task: %v", created)
	}
	taskStatus := func() string {
		t.Helper()
		res, _ := call(3, "tasks/get", map[string]any{"taskId": id})["result"].(map[string]any)
		s, _ := res["status"].(string)
		return s
	}
	// A runs no worker: the message waits in the queue, the task working.
	time.Sleep(2 * time.Second)
	if s := taskStatus(); s != "working" {
		t.Fatalf("with no worker polling, the task is %s, want working", s)
	}
	if n := messages(t, fq, queueURL); n != 1 {
		t.Errorf("the task queue holds %d messages before a worker polls, want the task's one", n)
	}

	b := start(t, "dev B", devBin, env, "-addr", "127.0.0.1:0", "-data", data)
	b.await(t, serving, time.Minute)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		s := taskStatus()
		if s == "completed" {
			break
		}
		if s != "working" || time.Now().After(deadline) {
			t.Fatalf("the task is %s, want it completed by B's worker", s)
		}
	}
	res, _ := call(4, "tasks/result", map[string]any{"taskId": id})["result"].(map[string]any)
	var types []any
	link := false
	for _, c := range asSlice(res["content"]) {
		m, _ := c.(map[string]any)
		types = append(types, m["type"])
		link = link || m["type"] == "resource_link"
	}
	if !link || res["isError"] == true {
		t.Errorf("tasks/result through A has content of types %v (isError %v), want the export's resource_link", types, res["isError"])
	}
	for deadline := time.Now().Add(30 * time.Second); messages(t, fq, queueURL) != 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the task's message is still in the queue: the worker's success did not delete it")
		}
	}
	if n := messages(t, fq, dlqURL); n != 0 {
		t.Errorf("the dead-letter queue holds %d messages, want none", n)
	}
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// messages is a queue's visible and in-flight message count.
func messages(t *testing.T, fq *fauxqstest.Server, url string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := fq.Client().GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages,
		types.QueueAttributeNameApproximateNumberOfMessagesNotVisible} {
		v, _ := strconv.Atoi(out.Attributes[string(k)])
		n += v
	}
	return n
}
