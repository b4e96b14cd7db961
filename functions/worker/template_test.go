package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	cfn "github.com/custodymcp/custody/infra/cfntemplate"
	"github.com/custodymcp/custody/shared/tasks"
)

// The task queue's settled numbers (docs/decisions.md "Tasks on AWS").
const (
	// workerTimeout is the worker function's timeout: the execution cap,
	// the margin kept to store the outcome, and 30 s for the claim and the
	// answer.
	workerTimeout = tasks.DefaultExecutionCap + tasks.ExecutionMargin + 30*time.Second
	// visibilityFactor: the queue's visibility timeout is this many worker
	// timeouts (AWS's guidance for a queue behind an event source mapping).
	visibilityFactor = 6
	// maxReceiveCount is the redrive policy's: AWS's least for a queue
	// behind Lambda, so throttled receives do not dead-letter a message.
	maxReceiveCount = 5
)

func loadTemplate(t *testing.T) *cfn.Template {
	t.Helper()
	tpl, err := cfn.Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

func number(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case string:
		var i int
		fmt.Sscan(n, &i)
		return i
	}
	return -1
}

// Every variable config.go reads is set on WorkerFunction, and no other.
func TestTemplateSetsEveryVariableTheWorkersConfigReads(t *testing.T) {
	read, err := cfn.GetenvLiterals("config.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(read) < 4 {
		t.Fatalf("config.go reads %v: the getenv calls were not found", read)
	}
	var set []string
	for k := range cfn.Map(cfn.Path(loadTemplate(t).Props("WorkerFunction"), "Environment", "Variables")) {
		set = append(set, k)
	}
	sort.Strings(set)
	if diff := cmp.Diff(read, set); diff != "" {
		t.Errorf("variables config.go reads (-) vs WorkerFunction sets (+):\n%s", diff)
	}
}

// The queue, its redrive policy and the worker's timeout hold together:
// the visibility timeout is six worker timeouts, the worker's timeout
// leaves the execution cap its margin, a message is dead-lettered after
// maxReceiveCount receives, and the dead-letter queue keeps messages
// longer than the queue.
func TestTemplateTaskQueueVisibilityAndRedriveFitTheWorker(t *testing.T) {
	tpl := loadTemplate(t)
	fn := tpl.Props("WorkerFunction")
	if got, want := number(fn["Timeout"]), int(workerTimeout/time.Second); got != want {
		t.Errorf("WorkerFunction Timeout = %d s, want %d (the execution cap %v + its margin %v + 30 s)", got, want, tasks.DefaultExecutionCap, tasks.ExecutionMargin)
	}
	q := tpl.Props("TaskQueue")
	if got, want := number(q["VisibilityTimeout"]), visibilityFactor*number(fn["Timeout"]); got != want {
		t.Errorf("TaskQueue VisibilityTimeout = %d s, want %d (%d × the worker's timeout)", got, want, visibilityFactor)
	}
	redrive := cfn.Map(q["RedrivePolicy"])
	if !cmp.Equal(redrive["deadLetterTargetArn"], cfn.GetAtt("TaskDeadLetterQueue", "Arn")) || number(redrive["maxReceiveCount"]) != maxReceiveCount {
		t.Errorf("TaskQueue RedrivePolicy = %v, want TaskDeadLetterQueue after %d receives", redrive, maxReceiveCount)
	}
	if got := number(q["MessageRetentionPeriod"]); got < int(tasks.MaxTTL/time.Second) {
		t.Errorf("TaskQueue MessageRetentionPeriod = %d s, want at least the longest task ttl %v", got, tasks.MaxTTL)
	}
	dlq := tpl.Props("TaskDeadLetterQueue")
	if number(dlq["MessageRetentionPeriod"]) <= number(q["MessageRetentionPeriod"]) {
		t.Errorf("the dead-letter queue keeps messages %v s, not longer than the queue's %v s", dlq["MessageRetentionPeriod"], q["MessageRetentionPeriod"])
	}
	for _, id := range []string{"TaskQueue", "TaskDeadLetterQueue"} {
		if tpl.Props(id)["SqsManagedSseEnabled"] != true {
			t.Errorf("%s is not encrypted at rest (SqsManagedSseEnabled)", id)
		}
	}
}

// The worker's event source mapping: one record per invocation, partial
// batch responses (FB-37), a maximum concurrency from its parameter; and
// no SAM SQS event, which would attach a managed policy over every queue.
func TestTemplateWorkerEventSourceMappingReportsBatchItemFailures(t *testing.T) {
	tpl := loadTemplate(t)
	maps := tpl.OfType("AWS::Lambda::EventSourceMapping")
	if len(maps) != 1 {
		t.Fatalf("event source mappings %v, want one", maps)
	}
	p := tpl.Props(maps[0])
	want := map[string]any{
		"EventSourceArn":                 cfn.GetAtt("TaskQueue", "Arn"),
		"FunctionName":                   cfn.Ref("WorkerFunction"),
		"Enabled":                        true,
		"BatchSize":                      1,
		"MaximumBatchingWindowInSeconds": 0,
		"FunctionResponseTypes":          []any{"ReportBatchItemFailures"},
		"ScalingConfig":                  map[string]any{"MaximumConcurrency": cfn.Ref("WorkerMaxConcurrency")},
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("%s (-want +got):\n%s", maps[0], diff)
	}
	param := cfn.Map(tpl.Parameters["WorkerMaxConcurrency"])
	if param["MinValue"] != 2 || param["MaxValue"] != 1000 {
		t.Errorf("WorkerMaxConcurrency bounds %v..%v, want Lambda's 2..1000", param["MinValue"], param["MaxValue"])
	}
	for id := range tpl.Resources {
		for name, ev := range cfn.Map(cfn.Path(tpl.Resources[id], "Properties", "Events")) {
			if cfn.Map(ev)["Type"] == "SQS" {
				t.Errorf("%s event %s is a SAM SQS event: write the mapping and its statements explicitly", id, name)
			}
		}
	}
}

// statements returns a function's IAM statements by Sid.
func statements(t *testing.T, tpl *cfn.Template, fn string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, p := range cfn.Slice(tpl.Props(fn)["Policies"]) {
		for _, s := range cfn.Slice(cfn.Map(p)["Statement"]) {
			st := cfn.Map(s)
			out[fmt.Sprint(st["Sid"])] = st
		}
	}
	return out
}

// actionsOn returns the actions a function's statements grant on a
// resource, sorted.
func actionsOn(sts map[string]map[string]any, resource any) []string {
	var out []string
	for _, st := range sts {
		if slices.ContainsFunc(cfn.OneOrMany(st["Resource"]), func(r any) bool { return cmp.Equal(r, resource) }) {
			for _, a := range cfn.OneOrMany(st["Action"]) {
				out = append(out, fmt.Sprint(a))
			}
		}
	}
	sort.Strings(out)
	return out
}

// Least privilege on the queues: the worker's role polls and deletes on
// the task queue (what its event source mapping does) and sends nothing;
// /mcp only sends to it; neither touches the dead-letter queue; the
// worker deletes no table item.
func TestTemplateQueuePermissionsAreEachFunctionsOwn(t *testing.T) {
	tpl := loadTemplate(t)
	queue, dlq := cfn.GetAtt("TaskQueue", "Arn"), cfn.GetAtt("TaskDeadLetterQueue", "Arn")
	worker, mcp := statements(t, tpl, "WorkerFunction"), statements(t, tpl, "McpFunction")
	if diff := cmp.Diff([]string{"sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"}, actionsOn(worker, queue)); diff != "" {
		t.Errorf("WorkerFunction on the task queue (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"sqs:SendMessage"}, actionsOn(mcp, queue)); diff != "" {
		t.Errorf("McpFunction on the task queue (-want +got):\n%s", diff)
	}
	for name, sts := range map[string]map[string]map[string]any{"WorkerFunction": worker, "McpFunction": mcp} {
		if got := actionsOn(sts, dlq); len(got) != 0 {
			t.Errorf("%s may %v on the dead-letter queue, want nothing", name, got)
		}
	}
	if slices.Contains(actionsOn(worker, cfn.GetAtt("Table", "Arn")), "dynamodb:DeleteItem") {
		t.Error("WorkerFunction may delete table items: the worker deletes nothing")
	}
	if got := cfn.Path(tpl.Props("McpFunction"), "Environment", "Variables", "TASK_QUEUE_URL"); !cmp.Equal(got, cfn.Ref("TaskQueue")) {
		t.Errorf("McpFunction TASK_QUEUE_URL = %v, want the task queue's URL (Ref TaskQueue)", got)
	}
}
