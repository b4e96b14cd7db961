package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/lambdaio"
	"github.com/custodymcp/custody/shared/tasks"
)

// sampleFiles are the samples and what each shows.
var sampleFiles = []string{"sqs-one-task.json", "sqs-mixed-batch.json", "sqs-malformed-body.json"}

// Every sample is a Lambda SQS event in aws-lambda-go's own encoding:
// decoding it (unknown fields refused) and encoding it again gives the
// file byte for byte, so no field is misspelt or silently dropped; each is
// one a test below plays.
func TestSampleEventsRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(sampleDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples in %s (%v)", sampleDir, err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(strings.Join(sampleFiles, " "), name) {
				t.Errorf("%s is not played by a test: add it to sampleFiles and play it", name)
			}
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			var ev events.SQSEvent
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
			for _, r := range ev.Records {
				if r.EventSource != "aws:sqs" || !strings.HasPrefix(r.EventSourceARN, "arn:aws:sqs:") || r.MessageId == "" {
					t.Errorf("record %+v is not an SQS record as Lambda delivers it", r)
				}
			}
		})
	}
}

// play decodes a sample and runs it through the worker in process.
func play(t *testing.T, w *worker, raw []byte) events.SQSEventResponse {
	t.Helper()
	var ev events.SQSEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	resp, err := w.Handle(context.Background(), ev)
	if err != nil {
		t.Fatalf("Handle = %v, want nil: the worker reports records, never fails a batch", err)
	}
	return resp
}

func inProcess(t *testing.T, e *workerEnv) *worker {
	t.Helper()
	cfg, err := LoadConfig(func(k string) string { return e.env()[k] })
	if err != nil {
		t.Fatal(err)
	}
	key, err := cfg.CursorKey(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := newWorker(cfg, e.Store, key, slog.New(lambdaio.NewLogHandler(io.Discard, slog.LevelInfo)))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func failures(ids ...string) events.SQSEventResponse {
	var resp events.SQSEventResponse
	for _, id := range ids {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
	}
	return resp
}

// The samples played through the worker as the function composes it: one
// task runs to completion; a malformed body (no redelivery can mend it) is
// dropped, not retried; and the mixed batch of field case FB-37.
func TestSamplesPlayThroughTheWorker(t *testing.T) {
	e := newWorkerEnv(t)
	w := inProcess(t, e)

	t.Run("one task is run and its record succeeds", func(t *testing.T) {
		id, _ := e.createTask(t)
		resp := play(t, w, sample(t, "sqs-one-task.json", e.placeholders(map[string]string{"ONE": id})...))
		if diff := cmp.Diff(failures(), resp); diff != "" {
			t.Errorf("response (-want +got):\n%s", diff)
		}
		if st := e.row(t, id).String("status"); st != tasks.StatusCompleted {
			t.Errorf("task is %s, want completed", st)
		}
	})
	t.Run("a malformed body is dropped: its record succeeds", func(t *testing.T) {
		resp := play(t, w, sample(t, "sqs-malformed-body.json"))
		if diff := cmp.Diff(failures(), resp); diff != "" {
			t.Errorf("response (-want +got):\n%s", diff)
		}
	})
	t.Run("FB-37: of a mixed batch only the failing record is reported and the good task completes once", func(t *testing.T) {
		fb37(t, e, func(raw []byte) events.SQSEventResponse { return play(t, w, raw) })
	})
}

// fb37 plays field case FB-37 through invoke: a batch of two task records,
// the second's task on a throttled partition. The response names exactly
// the failing record's message id; the good task is completed, claimed
// once, with one terminal audit row; the failing task is still queued (its
// message comes back after the visibility timeout). Played again, as SQS
// redelivers only the failed record, the good record's redelivery is a
// success that runs nothing.
func fb37(t *testing.T, e *workerEnv, invoke func([]byte) events.SQSEventResponse) {
	t.Helper()
	good, _ := e.createTask(t)
	failing, _ := e.createTask(t)
	e.Wire.throttle(failing)
	batch := sample(t, "sqs-mixed-batch.json", e.placeholders(map[string]string{"GOOD": good, "FAILING": failing})...)
	var ev events.SQSEvent
	if err := json.Unmarshal(batch, &ev); err != nil {
		t.Fatal(err)
	}
	goodID, failingID := ev.Records[0].MessageId, ev.Records[1].MessageId

	if diff := cmp.Diff(failures(failingID), invoke(batch)); diff != "" {
		t.Fatalf("response to the mixed batch (-want +got):\n%s", diff)
	}
	check := func(when string) {
		t.Helper()
		row := e.row(t, good)
		if row.String("status") != tasks.StatusCompleted || row.Int("attempts") != 1 || e.terminalRows(t, good) != 1 {
			t.Errorf("%s: the good task is %s after %d claims with %d terminal audit rows, want completed once",
				when, row.String("status"), row.Int("attempts"), e.terminalRows(t, good))
		}
		if st := e.row(t, failing).String("status"); st != tasks.StatusQueued {
			t.Errorf("%s: the failing task is %s, want still queued", when, st)
		}
	}
	check("after the batch")

	// What SQS does next: only the failed record comes back. A duplicate
	// delivery of the good one (at least once) is a success too.
	again := events.SQSEvent{Records: []events.SQSMessage{ev.Records[0]}}
	raw, _ := json.Marshal(again)
	if diff := cmp.Diff(failures(), invoke(raw)); diff != "" {
		t.Errorf("response to a redelivery of the good record %s (-want +got):\n%s", goodID, diff)
	}
	check("after a redelivery of the good record")
}
