// Package queuetest is the conformance suite of the queue port (package
// queue): Run proves that an engine keeps every promise the port writes
// down, so the SQS engine (against the fauxqs emulator) and the in-process
// engine deliver the same way, through the same queue.Dispatcher, to the
// same handler (docs/architecture.md "Ports and engines").
//
// The suite tests only what the port promises, with no engine-specific
// skips. Every leaf test gets a fresh queue and dead-letter queue, and
// leaves run in parallel. Time is real for an engine in another process
// (fauxqs keeps its own clock), so those leaves use one-second visibility
// timeouts and wait for redeliveries; an in-process engine runs each leaf
// in a testing/synctest bubble, where the same waits pass at once and
// exactly, and where a goroutine left behind fails the leaf.
//
// Where the port leaves room, the suite pins one reading so both engines
// agree:
//   - a receive takes every visible message up to its maximum (SQS may
//     return fewer from a small queue; fauxqs and memqueue do not), so a
//     batch of several records can be made by sending before dispatching;
//   - the records of a queue carry eventSourceARN arn:aws:sqs:<region>:…
//     with awsRegion its region, and an empty, non-nil messageAttributes
//     (Lambda's {}).
package queuetest

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/queue"
)

// Config is the queue a leaf test asks for: its visibility timeout (whole
// seconds, at least one) and the redrive policy to its dead-letter queue.
type Config struct {
	VisibilityTimeout time.Duration
	MaxReceiveCount   int
}

// Queues is one fresh, empty source queue configured as Config says, and
// its dead-letter queue.
type Queues struct {
	Queue      queue.Queue
	DeadLetter queue.Consumer
}

// Engine is what Run needs of an engine.
type Engine struct {
	// New returns fresh Queues and registers their cleanup on t. It is
	// called once per leaf test, from parallel tests (inside the leaf's
	// bubble when Bubble is set).
	New func(t *testing.T, cfg Config) Queues
	// Bubble runs each leaf inside a testing/synctest bubble: for an
	// engine whose time is the time package's and whose every wait is in
	// this process.
	Bubble bool
}

// patience bounds every wait for something that must happen: fake time in
// a bubble (reached only if the engine is stuck), real time otherwise.
const patience = 60 * time.Second

// Run runs the conformance suite.
func Run(t *testing.T, e Engine) {
	s := suite{e: e}
	groups := []struct {
		name  string
		tests []test
	}{
		{"Send", s.sendTests()},
		{"Visibility", s.visibilityTests()},
		{"Dispatch", s.dispatchTests()},
		{"DeadLetter", s.deadLetterTests()},
		{"Invalid", s.invalidTests()},
		{"Stop", s.stopTests()},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					if e.Bubble {
						synctest.Test(t, tc.fn)
						return
					}
					tc.fn(t)
				})
			}
		})
	}
}

// test is one leaf of the suite. Its name states the expectation.
type test struct {
	name string
	fn   func(t *testing.T)
}

type suite struct{ e Engine }

// The visibility timeouts of the leaves: short where a leaf waits for a
// redelivery, long where it must not see one.
const (
	short = 1 * time.Second
	long  = 60 * time.Second
)

func (s suite) new(t *testing.T, visibility time.Duration, maxReceive int) Queues {
	t.Helper()
	return s.e.New(t, Config{VisibilityTimeout: visibility, MaxReceiveCount: maxReceive})
}

func msg(task string) queue.Message { return queue.Message{Tenant: "firm-a", TaskID: task} }

func send(t *testing.T, q queue.Sender, tasks ...string) {
	t.Helper()
	for _, task := range tasks {
		if err := q.Send(context.Background(), msg(task)); err != nil {
			t.Fatalf("Send(%s) = %v, want nil", task, err)
		}
	}
}

// receiveOne long-polls c until it returns a record.
func receiveOne(t *testing.T, c queue.Consumer) events.SQSMessage {
	t.Helper()
	deadline := time.Now().Add(patience)
	for time.Now().Before(deadline) {
		got, err := c.Receive(context.Background(), 1, queue.MaxWaitTime)
		if err != nil {
			t.Fatalf("Receive = %v, want nil", err)
		}
		if len(got) > 1 {
			t.Fatalf("Receive(max 1) returned %d records", len(got))
		}
		if len(got) == 1 {
			return got[0]
		}
	}
	t.Fatalf("no record within %v", patience)
	return events.SQSMessage{}
}

// receiveNone fails unless c yields nothing for wait (a long poll).
func receiveNone(t *testing.T, c queue.Consumer, wait time.Duration) {
	t.Helper()
	got, err := c.Receive(context.Background(), queue.MaxBatchSize, wait)
	if err != nil {
		t.Fatalf("Receive = %v, want nil", err)
	}
	if len(got) > 0 {
		t.Fatalf("Receive returned %s, want nothing", describe(got))
	}
}

func taskOf(t *testing.T, r events.SQSMessage) string {
	t.Helper()
	m, err := queue.ParseMessage(r.Body)
	if err != nil {
		t.Fatalf("record %s: ParseMessage(%q) = %v", r.MessageId, r.Body, err)
	}
	return m.TaskID
}

func receiveCount(r events.SQSMessage) string { return r.Attributes["ApproximateReceiveCount"] }

// describe names records by body and receive count, for failure messages.
func describe(records []events.SQSMessage) string {
	var parts []string
	for _, r := range records {
		parts = append(parts, fmt.Sprintf("%s (receive %s)", r.Body, receiveCount(r)))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// recorder is a handler that keeps every batch it is given and answers as
// respond says (nil respond: success).
type recorder struct {
	respond func(n int, records []events.SQSMessage) (events.SQSEventResponse, error)

	mu      sync.Mutex
	n       int
	batches chan []events.SQSMessage
}

func newRecorder(respond func(n int, records []events.SQSMessage) (events.SQSEventResponse, error)) *recorder {
	return &recorder{respond: respond, batches: make(chan []events.SQSMessage, 1000)}
}

func (r *recorder) handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	r.mu.Lock()
	n := r.n
	r.n++
	r.mu.Unlock()
	r.batches <- ev.Records
	if r.respond == nil {
		return events.SQSEventResponse{}, nil
	}
	return r.respond(n, ev.Records)
}

// next waits for the handler's next batch.
func (r *recorder) next(t *testing.T) []events.SQSMessage {
	t.Helper()
	select {
	case b := <-r.batches:
		return b
	case <-time.After(patience):
		t.Fatalf("no batch within %v", patience)
		return nil
	}
}

// rest returns the batches received and not yet taken with next.
func (r *recorder) rest() [][]events.SQSMessage {
	var out [][]events.SQSMessage
	for {
		select {
		case b := <-r.batches:
			out = append(out, b)
		default:
			return out
		}
	}
}

// dispatch starts a dispatcher of c to h, stopped when the test ends.
func dispatch(t *testing.T, c queue.Consumer, h queue.Handler, opts *queue.DispatchOptions) *queue.Dispatcher {
	t.Helper()
	d, err := queue.Dispatch(c, h, opts)
	if err != nil {
		t.Fatalf("Dispatch = %v", err)
	}
	t.Cleanup(func() {
		if err := d.Stop(context.Background()); err != nil {
			t.Errorf("Stop = %v", err)
		}
	})
	return d
}

func stop(t *testing.T, d *queue.Dispatcher) {
	t.Helper()
	if err := d.Stop(context.Background()); err != nil {
		t.Fatalf("Stop = %v, want nil", err)
	}
}

func (s suite) sendTests() []test {
	return []test{
		{"a sent message is received as the SQS record Lambda would deliver: its JSON body, ApproximateReceiveCount 1, eventSource aws:sqs", func(t *testing.T) {
			q := s.new(t, long, 0)
			send(t, q.Queue, "task-1")
			r := receiveOne(t, q.Queue)

			if got, err := queue.ParseMessage(r.Body); err != nil || got != msg("task-1") {
				t.Errorf("ParseMessage(body %q) = %+v, %v, want %+v", r.Body, got, err, msg("task-1"))
			}
			if r.Body != `{"tenant":"firm-a","taskId":"task-1"}` {
				t.Errorf("body = %s, want the message's JSON", r.Body)
			}
			sum := md5.Sum([]byte(r.Body))
			if r.Md5OfBody != hex.EncodeToString(sum[:]) {
				t.Errorf("md5OfBody = %s, want the body's MD5 %x", r.Md5OfBody, sum)
			}
			if r.MessageId == "" || r.ReceiptHandle == "" {
				t.Errorf("messageId %q, receiptHandle %q: want both set", r.MessageId, r.ReceiptHandle)
			}
			if got := receiveCount(r); got != "1" {
				t.Errorf("ApproximateReceiveCount = %q, want 1", got)
			}
			sent, errS := strconv.ParseInt(r.Attributes["SentTimestamp"], 10, 64)
			first, errF := strconv.ParseInt(r.Attributes["ApproximateFirstReceiveTimestamp"], 10, 64)
			if errS != nil || errF != nil || sent <= 0 || first < sent {
				t.Errorf("SentTimestamp %q, ApproximateFirstReceiveTimestamp %q: want epoch milliseconds, the first receive not before the send",
					r.Attributes["SentTimestamp"], r.Attributes["ApproximateFirstReceiveTimestamp"])
			}
			if r.Attributes["SenderId"] == "" {
				t.Error("SenderId is empty")
			}
			if r.EventSource != "aws:sqs" {
				t.Errorf("eventSource = %q, want aws:sqs", r.EventSource)
			}
			arn := strings.Split(r.EventSourceARN, ":")
			if len(arn) != 6 || arn[0] != "arn" || arn[2] != "sqs" || arn[3] != r.AWSRegion || r.AWSRegion == "" {
				t.Errorf("eventSourceARN %q, awsRegion %q: want arn:aws:sqs:<region>:<account>:<queue> and its region", r.EventSourceARN, r.AWSRegion)
			}
			if r.MessageAttributes == nil || len(r.MessageAttributes) != 0 {
				t.Errorf("messageAttributes = %v, want {} (none sent)", r.MessageAttributes)
			}
		}},
		{"each of many messages sent at once by many goroutines is delivered", func(t *testing.T) {
			q := s.new(t, long, 0)
			const senders, each = 10, 5
			var wg sync.WaitGroup
			for g := range senders {
				wg.Go(func() {
					for i := range each {
						if err := q.Queue.Send(context.Background(), msg(fmt.Sprintf("task-%d-%d", g, i))); err != nil {
							t.Errorf("Send = %v", err)
						}
					}
				})
			}
			rec := newRecorder(nil)
			dispatch(t, q.Queue, rec.handle, &queue.DispatchOptions{BatchSize: queue.MaxBatchSize, MaximumConcurrency: 4})
			wg.Wait()
			seen := map[string]bool{}
			for len(seen) < senders*each {
				for _, r := range rec.next(t) {
					seen[taskOf(t, r)] = true
				}
			}
			for g := range senders {
				for i := range each {
					if task := fmt.Sprintf("task-%d-%d", g, i); !seen[task] {
						t.Errorf("%s was never delivered", task)
					}
				}
			}
		}},
	}
}

func (s suite) visibilityTests() []test {
	return []test{
		{"a received message is not received again within its visibility timeout", func(t *testing.T) {
			q := s.new(t, long, 0)
			send(t, q.Queue, "task-1")
			receiveOne(t, q.Queue)
			receiveNone(t, q.Queue, 0)
		}},
		{"a message not deleted is received again after its visibility timeout: same message id, ApproximateReceiveCount 2, a new receipt handle", func(t *testing.T) {
			q := s.new(t, short, 0)
			send(t, q.Queue, "task-1")
			first := receiveOne(t, q.Queue)
			again := receiveOne(t, q.Queue)
			if again.MessageId != first.MessageId || again.Body != first.Body {
				t.Errorf("received %s %s again, want %s %s", again.MessageId, again.Body, first.MessageId, first.Body)
			}
			if got := receiveCount(again); got != "2" {
				t.Errorf("ApproximateReceiveCount = %q, want 2", got)
			}
			if again.ReceiptHandle == first.ReceiptHandle {
				t.Error("the redelivery has the first delivery's receipt handle, want a new one")
			}
			if again.Attributes["ApproximateFirstReceiveTimestamp"] != first.Attributes["ApproximateFirstReceiveTimestamp"] {
				t.Errorf("ApproximateFirstReceiveTimestamp moved from %s to %s, want the first receive's",
					first.Attributes["ApproximateFirstReceiveTimestamp"], again.Attributes["ApproximateFirstReceiveTimestamp"])
			}
		}},
		{"a deleted message is not received again after its visibility timeout", func(t *testing.T) {
			q := s.new(t, short, 0)
			send(t, q.Queue, "task-1")
			r := receiveOne(t, q.Queue)
			if err := q.Queue.Delete(context.Background(), []string{r.ReceiptHandle}); err != nil {
				t.Fatalf("Delete = %v, want nil", err)
			}
			receiveNone(t, q.Queue, 3*short)
		}},
		{"a delete with the receipt handle of an earlier receive deletes nothing and is no error", func(t *testing.T) {
			q := s.new(t, short, 0)
			send(t, q.Queue, "task-1")
			first := receiveOne(t, q.Queue)
			second := receiveOne(t, q.Queue)
			if err := q.Queue.Delete(context.Background(), []string{first.ReceiptHandle}); err != nil {
				t.Fatalf("Delete(outdated handle) = %v, want nil", err)
			}
			third := receiveOne(t, q.Queue)
			if third.MessageId != second.MessageId || receiveCount(third) != "3" {
				t.Errorf("after the outdated delete received %s (receive %s), want %s again (receive 3)", third.MessageId, receiveCount(third), second.MessageId)
			}
		}},
	}
}

func (s suite) dispatchTests() []test {
	return []test{
		{"a dispatcher delivers each message in its own batch by default and deletes it once the handler succeeds", func(t *testing.T) {
			q := s.new(t, short, 0)
			send(t, q.Queue, "task-1", "task-2", "task-3")
			rec := newRecorder(nil)
			d := dispatch(t, q.Queue, rec.handle, nil)
			var got []string
			for range 3 {
				b := rec.next(t)
				if len(b) != 1 {
					t.Fatalf("a batch of %d records, want 1 (BatchSize defaults to 1)", len(b))
				}
				got = append(got, taskOf(t, b[0]))
			}
			slices.Sort(got)
			if diff := cmp.Diff([]string{"task-1", "task-2", "task-3"}, got); diff != "" {
				t.Errorf("delivered tasks (-want +got):\n%s", diff)
			}
			stop(t, d)
			receiveNone(t, q.Queue, 3*short)
			if rest := rec.rest(); len(rest) > 0 {
				t.Errorf("delivered again: %v", rest)
			}
		}},
		{"BatchItemFailures redeliver only the named record after the visibility timeout; the batch's other records are deleted", func(t *testing.T) {
			q := s.new(t, short, 0)
			send(t, q.Queue, "task-a", "task-b", "task-c")
			rec := newRecorder(func(n int, records []events.SQSMessage) (events.SQSEventResponse, error) {
				var resp events.SQSEventResponse
				for _, r := range records {
					if n == 0 && taskOf(t, r) == "task-b" {
						resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
					}
				}
				return resp, nil
			})
			d := dispatch(t, q.Queue, rec.handle, &queue.DispatchOptions{BatchSize: queue.MaxBatchSize})
			first := rec.next(t)
			if len(first) != 3 {
				t.Fatalf("first batch %s, want all three messages sent before dispatching", describe(first))
			}
			again := rec.next(t)
			if len(again) != 1 || taskOf(t, again[0]) != "task-b" || receiveCount(again[0]) != "2" {
				t.Fatalf("second batch %s, want only task-b, receive 2", describe(again))
			}
			stop(t, d)
			receiveNone(t, q.Queue, 3*short)
			if rest := rec.rest(); len(rest) > 0 {
				t.Errorf("delivered again: %v", rest)
			}
		}},
		{"every record of a batch is redelivered when the handler fails the whole batch", func(t *testing.T) {
			cases := []struct {
				name string
				fail func(records []events.SQSMessage) (events.SQSEventResponse, error)
			}{
				{"an error", func([]events.SQSMessage) (events.SQSEventResponse, error) {
					return events.SQSEventResponse{}, errors.New("handler failed")
				}},
				{"a panic", func([]events.SQSMessage) (events.SQSEventResponse, error) {
					panic("handler panicked")
				}},
				{"an ItemIdentifier naming no record of the batch", func([]events.SQSMessage) (events.SQSEventResponse, error) {
					return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: "not-a-message-id"}}}, nil
				}},
				{"an empty ItemIdentifier", func([]events.SQSMessage) (events.SQSEventResponse, error) {
					return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: ""}}}, nil
				}},
			}
			for _, tc := range cases {
				q := s.new(t, short, 0)
				send(t, q.Queue, "task-a", "task-b")
				rec := newRecorder(func(n int, records []events.SQSMessage) (events.SQSEventResponse, error) {
					if n == 0 {
						return tc.fail(records)
					}
					return events.SQSEventResponse{}, nil
				})
				d := dispatch(t, q.Queue, rec.handle, &queue.DispatchOptions{BatchSize: queue.MaxBatchSize})
				if first := rec.next(t); len(first) != 2 {
					t.Fatalf("%s: first batch %s, want both messages sent before dispatching", tc.name, describe(first))
				}
				redelivered := map[string]string{}
				for len(redelivered) < 2 {
					for _, r := range rec.next(t) {
						redelivered[taskOf(t, r)] = receiveCount(r)
					}
				}
				if want := map[string]string{"task-a": "2", "task-b": "2"}; !cmp.Equal(redelivered, want) {
					t.Errorf("%s: redelivered %v, want both at receive 2", tc.name, redelivered)
				}
				stop(t, d)
			}
		}},
	}
}

func (s suite) deadLetterTests() []test {
	return []test{
		{"a message failed maxReceiveCount times moves to the dead-letter queue with its message id and body, and is not delivered again", func(t *testing.T) {
			const maxReceive = 2
			q := s.new(t, short, maxReceive)
			send(t, q.Queue, "poison")
			rec := newRecorder(func(_ int, records []events.SQSMessage) (events.SQSEventResponse, error) {
				return events.SQSEventResponse{}, errors.New("always fails")
			})
			d := dispatch(t, q.Queue, rec.handle, nil)
			dead := receiveOne(t, q.DeadLetter)
			stop(t, d)

			var counts []string
			var ids []string
			for _, b := range rec.rest() {
				for _, r := range b {
					counts = append(counts, receiveCount(r))
					ids = append(ids, r.MessageId)
				}
			}
			if diff := cmp.Diff([]string{"1", "2"}, counts); diff != "" {
				t.Errorf("ApproximateReceiveCount of the deliveries before the move (-want +got):\n%s", diff)
			}
			if len(ids) > 0 && dead.MessageId != ids[0] {
				t.Errorf("dead-letter record has message id %s, want the source's %s", dead.MessageId, ids[0])
			}
			if taskOf(t, dead) != "poison" {
				t.Errorf("dead-letter body %s, want the poison message", dead.Body)
			}
			receiveNone(t, q.Queue, 3*short)
		}},
		{"a message a handler succeeds with on its last allowed receive is deleted, not moved", func(t *testing.T) {
			const maxReceive = 2
			q := s.new(t, short, maxReceive)
			send(t, q.Queue, "task-1")
			rec := newRecorder(func(n int, records []events.SQSMessage) (events.SQSEventResponse, error) {
				if n < maxReceive-1 {
					return events.SQSEventResponse{}, errors.New("fails until the last receive")
				}
				return events.SQSEventResponse{}, nil
			})
			d := dispatch(t, q.Queue, rec.handle, nil)
			for range maxReceive {
				rec.next(t)
			}
			stop(t, d)
			receiveNone(t, q.DeadLetter, 3*short)
			receiveNone(t, q.Queue, 0)
		}},
	}
}

func (s suite) invalidTests() []test {
	return []test{
		{"Send refuses a message without a tenant or task id, or with invalid UTF-8, with ErrInvalid and queues nothing", func(t *testing.T) {
			q := s.new(t, long, 0)
			for _, m := range []queue.Message{
				{Tenant: "", TaskID: "task-1"},
				{Tenant: "firm-a", TaskID: ""},
				{Tenant: "firm-\xff", TaskID: "task-1"},
				{Tenant: "firm-a", TaskID: strings.Repeat("x", queue.MaxBodyBytes)},
			} {
				if err := q.Queue.Send(context.Background(), m); !errors.Is(err, queue.ErrInvalid) {
					t.Errorf("Send(%.40q) = %v, want ErrInvalid", m, err)
				}
			}
			receiveNone(t, q.Queue, 0)
		}},
		{"Receive refuses a maximum outside 1..10 or a wait outside 0..20 s with ErrInvalid", func(t *testing.T) {
			q := s.new(t, long, 0)
			for _, tc := range []struct {
				max  int
				wait time.Duration
			}{{0, 0}, {queue.MaxBatchSize + 1, 0}, {1, -time.Second}, {1, queue.MaxWaitTime + time.Second}} {
				if _, err := q.Queue.Receive(context.Background(), tc.max, tc.wait); !errors.Is(err, queue.ErrInvalid) {
					t.Errorf("Receive(%d, %v) = %v, want ErrInvalid", tc.max, tc.wait, err)
				}
			}
		}},
		{"Delete refuses an empty receipt handle or more than 10 with ErrInvalid", func(t *testing.T) {
			q := s.new(t, long, 0)
			for _, handles := range [][]string{{""}, slices.Repeat([]string{"h"}, queue.MaxBatchSize+1)} {
				if err := q.Queue.Delete(context.Background(), handles); !errors.Is(err, queue.ErrInvalid) {
					t.Errorf("Delete(%d handles) = %v, want ErrInvalid", len(handles), err)
				}
			}
		}},
		{"Dispatch refuses a batch size over 10 with ErrInvalid", func(t *testing.T) {
			q := s.new(t, long, 0)
			if _, err := queue.Dispatch(q.Queue, newRecorder(nil).handle, &queue.DispatchOptions{BatchSize: queue.MaxBatchSize + 1}); !errors.Is(err, queue.ErrInvalid) {
				t.Errorf("Dispatch(BatchSize 11) = %v, want ErrInvalid", err)
			}
		}},
	}
}

func (s suite) stopTests() []test {
	return []test{
		{"Stop waits for the batch in the handler to finish, then deletes it", func(t *testing.T) {
			q := s.new(t, short, 0)
			send(t, q.Queue, "task-1")
			entered, release := make(chan struct{}), make(chan struct{})
			var finished bool
			var mu sync.Mutex
			d := dispatch(t, q.Queue, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
				close(entered)
				<-release
				mu.Lock()
				finished = true
				mu.Unlock()
				return events.SQSEventResponse{}, nil
			}, nil)
			<-entered
			go func() {
				time.Sleep(100 * time.Millisecond)
				close(release)
			}()
			stop(t, d)
			mu.Lock()
			defer mu.Unlock()
			if !finished {
				t.Fatal("Stop returned while the handler was still running")
			}
			receiveNone(t, q.Queue, 3*short)
		}},
		{"Stop with an ended context cancels the handler's context and returns the context's error", func(t *testing.T) {
			q := s.new(t, long, 0)
			send(t, q.Queue, "task-1")
			entered, returned := make(chan struct{}), make(chan struct{})
			d, err := queue.Dispatch(q.Queue, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
				defer close(returned)
				close(entered)
				<-ctx.Done()
				return events.SQSEventResponse{}, ctx.Err()
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			<-entered
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := d.Stop(ctx); !errors.Is(err, context.Canceled) {
				t.Errorf("Stop(ended context) = %v, want context.Canceled", err)
			}
			<-returned
			// The dispatcher's own goroutines end once the handler has.
			if err := d.Stop(context.Background()); err != nil {
				t.Errorf("second Stop = %v, want nil", err)
			}
		}},
		{"a handler call's context carries the dispatcher's Timeout as its deadline", func(t *testing.T) {
			q := s.new(t, long, 0)
			send(t, q.Queue, "task-1")
			deadlines := make(chan bool, 1)
			dispatch(t, q.Queue, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
				_, ok := ctx.Deadline()
				deadlines <- ok
				return events.SQSEventResponse{}, nil
			}, &queue.DispatchOptions{Timeout: 30 * time.Second})
			select {
			case ok := <-deadlines:
				if !ok {
					t.Error("the handler's context has no deadline, want the Timeout's")
				}
			case <-time.After(patience):
				t.Fatal("no delivery")
			}
		}},
	}
}
