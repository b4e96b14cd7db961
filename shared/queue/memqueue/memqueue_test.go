package memqueue_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/queue/memqueue"
	"github.com/custodymcp/custody/shared/queue/queuetest"
)

func TestConformance(t *testing.T) {
	queuetest.Run(t, queuetest.Engine{
		New: func(t *testing.T, cfg queuetest.Config) queuetest.Queues {
			dlq := mustNew(t, memqueue.Options{Name: "tasks-dlq"})
			opts := memqueue.Options{VisibilityTimeout: cfg.VisibilityTimeout}
			if cfg.MaxReceiveCount > 0 {
				opts.DeadLetter, opts.MaxReceiveCount = dlq, cfg.MaxReceiveCount
			}
			return queuetest.Queues{Queue: mustNew(t, opts), DeadLetter: dlq}
		},
		Bubble: true,
	})
}

func mustNew(t *testing.T, opts memqueue.Options) *memqueue.Queue {
	t.Helper()
	q, err := memqueue.New(opts)
	if err != nil {
		t.Fatalf("New(%+v) = %v", opts, err)
	}
	return q
}

func TestNewRefusesOptionsOutOfRange(t *testing.T) {
	dlq := mustNew(t, memqueue.Options{})
	for _, tc := range []struct {
		name string
		opts memqueue.Options
	}{
		{"a negative visibility timeout", memqueue.Options{VisibilityTimeout: -time.Second}},
		{"a visibility timeout over 12 h", memqueue.Options{VisibilityTimeout: 13 * time.Hour}},
		{"MaxReceiveCount without a dead-letter queue", memqueue.Options{MaxReceiveCount: 3}},
		{"a dead-letter queue with MaxReceiveCount 0", memqueue.Options{DeadLetter: dlq}},
		{"MaxReceiveCount over 1000", memqueue.Options{DeadLetter: dlq, MaxReceiveCount: 1001}},
	} {
		t.Run(tc.name+" is ErrInvalid", func(t *testing.T) {
			if _, err := memqueue.New(tc.opts); !errors.Is(err, queue.ErrInvalid) {
				t.Errorf("New = %v, want ErrInvalid", err)
			}
		})
	}
}

// drain receives everything visible now, without waiting.
func drain(t *testing.T, q *memqueue.Queue) []events.SQSMessage {
	t.Helper()
	var out []events.SQSMessage
	for {
		got, err := q.Receive(context.Background(), queue.MaxBatchSize, 0)
		if err != nil {
			t.Fatalf("Receive = %v", err)
		}
		if len(got) == 0 {
			return out
		}
		out = append(out, got...)
	}
}

func TestCloseLosesNothingSendAcknowledgedAndRefusesLaterSends(t *testing.T) {
	q := mustNew(t, memqueue.Options{VisibilityTimeout: time.Hour})
	const senders, each = 16, 50
	var acked sync.Map
	// Every sender sends some messages before Close and races it with the
	// rest.
	var wg, before sync.WaitGroup
	before.Add(senders)
	for g := range senders {
		wg.Go(func() {
			for i := range each {
				if i == each/5 {
					before.Done()
				}
				task := fmt.Sprintf("task-%d-%d", g, i)
				switch err := q.Send(context.Background(), queue.Message{Tenant: "firm-a", TaskID: task}); {
				case err == nil:
					acked.Store(task, true)
				case !errors.Is(err, memqueue.ErrClosed) || !errors.Is(err, queue.ErrUnavailable):
					t.Errorf("Send during Close = %v, want nil or ErrClosed (an ErrUnavailable)", err)
				}
			}
		})
	}
	before.Wait()
	if err := q.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	wg.Wait()

	queued := map[string]bool{}
	for _, r := range drain(t, q) {
		m, err := queue.ParseMessage(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		queued[m.TaskID] = true
	}
	n := 0
	acked.Range(func(k, _ any) bool {
		n++
		if !queued[k.(string)] {
			t.Errorf("%s: Send returned nil but the closed queue does not hold it", k)
		}
		return true
	})
	if len(queued) != n {
		t.Errorf("the closed queue holds %d messages, want the %d acknowledged", len(queued), n)
	}
	if err := q.Send(context.Background(), queue.Message{Tenant: "firm-a", TaskID: "late"}); !errors.Is(err, memqueue.ErrClosed) {
		t.Errorf("Send after Close = %v, want ErrClosed", err)
	}
}

func TestADispatcherStillDeliversWhatAClosedQueueHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := mustNew(t, memqueue.Options{})
		if err := q.Send(context.Background(), queue.Message{Tenant: "firm-a", TaskID: "task-1"}); err != nil {
			t.Fatal(err)
		}
		q.Close()
		got := make(chan string, 1)
		d, err := queue.Dispatch(q, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			got <- ev.Records[0].Body
			return events.SQSEventResponse{}, nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if body := <-got; body != `{"tenant":"firm-a","taskId":"task-1"}` {
			t.Errorf("delivered %s", body)
		}
		if err := d.Stop(context.Background()); err != nil {
			t.Errorf("Stop = %v", err)
		}
	})
}

// Every goroutine a Dispatcher starts has ended when Stop returns: the
// bubble fails the test if one is left (synctest.Test waits for them all,
// and a goroutine blocked forever is a deadlock).
func TestStopLeavesNoGoroutineBehind(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts queue.DispatchOptions
	}{
		{"an idle dispatcher long-polling an empty queue", queue.DispatchOptions{}},
		{"a dispatcher of 4 concurrent batches of 10", queue.DispatchOptions{BatchSize: 10, MaximumConcurrency: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := mustNew(t, memqueue.Options{VisibilityTimeout: time.Second})
				var calls atomic.Int64
				d, err := queue.Dispatch(q, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
					calls.Add(1)
					time.Sleep(time.Second)
					return events.SQSEventResponse{}, nil
				}, &tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				for i := range 25 {
					if err := q.Send(context.Background(), queue.Message{Tenant: "firm-a", TaskID: fmt.Sprint(i)}); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(500 * time.Millisecond) // batches in the handler
				synctest.Wait()
				if err := d.Stop(context.Background()); err != nil {
					t.Errorf("Stop = %v", err)
				}
			})
		})
	}
}

func TestManyGoroutinesRacingReceiveAndDeleteDeliverEachMessageToOneOfThem(t *testing.T) {
	q := mustNew(t, memqueue.Options{VisibilityTimeout: time.Hour})
	const n = 500
	for i := range n {
		if err := q.Send(context.Background(), queue.Message{Tenant: "firm-a", TaskID: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for {
				got, err := q.Receive(context.Background(), 3, 0)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				var handles []string
				mu.Lock()
				for _, r := range got {
					seen[r.MessageId]++
					handles = append(handles, r.ReceiptHandle)
				}
				mu.Unlock()
				if err := q.Delete(context.Background(), handles); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Errorf("%d messages received, want %d", len(seen), n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("message %s received %d times within its visibility timeout, want once", id, c)
		}
	}
}

func TestAReceiveWaitingForAMessageIsWokenBySendAndEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := mustNew(t, memqueue.Options{})
		got := make(chan []events.SQSMessage)
		go func() {
			r, _ := q.Receive(context.Background(), 1, queue.MaxWaitTime)
			got <- r
		}()
		time.Sleep(5 * time.Second)
		if err := q.Send(context.Background(), queue.Message{Tenant: "firm-a", TaskID: "task-1"}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if r := <-got; len(r) != 1 {
			t.Errorf("waiting receive got %d records, want the one sent", len(r))
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("the waiting receive returned %v after the send, want at once", waited)
		}

		ctx, cancel := context.WithCancel(context.Background())
		errs := make(chan error)
		go func() {
			_, err := q.Receive(ctx, 1, queue.MaxWaitTime)
			errs <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Errorf("Receive after cancel = %v, want context.Canceled", err)
		}
	})
}
