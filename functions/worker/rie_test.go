package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/lambdaio/rietest"
	"github.com/custodymcp/custody/shared/tasks"
)

// The worker under the real Lambda runtime: the function's bootstrap, built
// as the template builds it (for this machine), runs under the AWS Lambda
// Runtime Interface Emulator, which drives it through the Runtime API as
// Lambda does; its store is the DynamoDB emulator over loopback. The test
// stands in for the SQS event source mapping: it posts SQS events and
// reads the function's partial batch response.

const workerPkg = "github.com/custodymcp/custody/functions/worker"

// startWorker starts the worker under the RIE (rie, from rietest.Binary,
// asked for first so that a missing RIE skips before anything starts).
func startWorker(t *testing.T, rie string, e *workerEnv) *rietest.Process {
	t.Helper()
	return rietest.Start(t, rie, rietest.Build(t, workerPkg), "WorkerFunction", workerTimeout, e.env())
}

// invokeSQS posts one SQS event and decodes the SQSEventResponse.
func invokeSQS(t *testing.T, p *rietest.Process, raw []byte, requestID string) events.SQSEventResponse {
	t.Helper()
	out := p.Invoke(t, raw, requestID)
	dec := json.NewDecoder(strings.NewReader(string(out)))
	dec.DisallowUnknownFields()
	var resp events.SQSEventResponse
	if err := dec.Decode(&resp); err != nil {
		t.Fatalf("the function answered %q, not an SQSEventResponse: %v\nRIE output:\n%s", out, err, p.Output())
	}
	return resp
}

// logLines returns the function's JSON log lines with the given message.
func logLines(out, message string) []map[string]any {
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["message"] == message {
			lines = append(lines, m)
		}
	}
	return lines
}

// FB-37 under the runtime emulator: a mixed batch of one good and one
// failing record answers batchItemFailures naming exactly the failing
// message id, and the good task completes once (a redelivery of its record
// runs nothing). One "batch" line per invocation carries the Lambda
// request id and the failed ids.
func TestRuntimeEmulatorFB37MixedBatchReportsOnlyTheFailingRecord(t *testing.T) {
	rie := rietest.Binary(t)
	e := newWorkerEnv(t)
	p := startWorker(t, rie, e)
	n := 0
	fb37(t, e, func(raw []byte) events.SQSEventResponse {
		n++
		return invokeSQS(t, p, raw, fmt.Sprintf("fb37-%d", n))
	})
	p.Stop()
	batches := logLines(p.Output(), "batch")
	var got [][]string
	for _, b := range batches {
		var failed []string
		for _, f := range b["failed"].([]any) {
			failed = append(failed, f.(string))
		}
		got = append(got, append([]string{fmt.Sprint(b["requestId"])}, failed...))
	}
	want := [][]string{{"fb37-1", "2e1424d4-f796-459a-8184-9c92662be6da"}, {"fb37-2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("batch lines [request id, failed ids…] (-want +got):\n%s\nRIE output:\n%s", diff, p.Output())
	}
	if finished := logLines(p.Output(), "task finished"); len(finished) != 1 || finished[0]["status"] != tasks.StatusCompleted {
		t.Errorf("task finished lines %v, want one: the good task completed", finished)
	}
}

// A claim lost to a live lease reports success: while one worker (in this
// process) holds a task, its outcome's write held on the wire, a delivery
// of the same message to the function finds the task running under that
// lease and answers no batch item failure, so Lambda deletes the record
// instead of retrying it into the dead-letter queue. The holder then
// finishes: the task completes once.
func TestRuntimeEmulatorAClaimLostToALiveLeaseReportsSuccess(t *testing.T) {
	rie := rietest.Binary(t)
	e := newWorkerEnv(t)
	p := startWorker(t, rie, e)
	holder := inProcess(t, e)
	id, rec := e.createTask(t)
	release := e.Wire.hold(id)
	defer release()
	raw, _ := json.Marshal(events.SQSEvent{Records: []events.SQSMessage{rec}})
	held := make(chan events.SQSEventResponse, 1)
	go func() { held <- play(t, holder, raw) }()
	select {
	case <-e.Wire.entered:
	case <-time.After(time.Minute):
		t.Fatal("the holding worker never reached its outcome")
	}
	if st := e.row(t, id).String("status"); st != tasks.StatusRunning {
		t.Fatalf("the task is %s while held, want running", st)
	}
	if diff := cmp.Diff(failures(), invokeSQS(t, p, raw, "duplicate")); diff != "" {
		t.Errorf("the duplicate delivery's response (-want +got):\n%s\nRIE output:\n%s", diff, p.Output())
	}
	release()
	if diff := cmp.Diff(failures(), <-held); diff != "" {
		t.Errorf("the holder's response (-want +got):\n%s", diff)
	}
	row := e.row(t, id)
	if row.String("status") != tasks.StatusCompleted || row.Int("attempts") != 1 || e.terminalRows(t, id) != 1 {
		t.Errorf("the task is %s after %d claims with %d terminal audit rows, want completed once",
			row.String("status"), row.Int("attempts"), e.terminalRows(t, id))
	}
	if lines := logLines(p.Output(), "task finished"); len(lines) != 0 {
		t.Errorf("the function finished a task it did not hold: %v", lines)
	}
}

// A missing or invalid variable fails the cold start: one log line naming
// each offending variable, exit status 1.
func TestColdStartFailsWithOneLineNamingTheVariables(t *testing.T) {
	boot := rietest.Build(t, workerPkg)
	out, code := run(t, boot, []string{"PATH=/usr/bin:/bin", "DYNAMODB_TABLE=a b", "LOG_LEVEL=LOUD"})
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 1 || len(lines) != 1 {
		t.Fatalf("exit %d, output %q; want exit 1 and one line", code, out)
	}
	var line struct {
		Level     string   `json:"level"`
		Variables []string `json:"variables"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &line); err != nil {
		t.Fatalf("the line %q is not JSON: %v", lines[0], err)
	}
	if want := []string{"DYNAMODB_TABLE", "CURSOR_KEY_SECRET_ARN", "LOG_LEVEL"}; line.Level != "ERROR" || !slices.Equal(line.Variables, want) {
		t.Errorf("line = %s, want an ERROR naming %v", lines[0], want)
	}
}
