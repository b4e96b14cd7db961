// Package memqueue is the queue port's in-process engine, the dev server's:
// an SQS standard queue in memory, with a visibility timeout, receive
// counts and a redrive policy to a dead-letter queue, delivered to the
// worker handler by a queue.Dispatcher as Lambda's event source mapping
// delivers SQS on AWS (docs/architecture.md "Local topology"). It keeps every
// promise of the port (queuetest.Run proves it beside the SQS engine).
//
// Messages live in memory only: the process's end loses those still
// queued. That is safe because a task's message is a hint, not its state:
// the task row is in the store, and the sweeper's queued-unclaimed rule
// re-enqueues a task whose message was lost with the process. Within the
// process nothing that Send acknowledged is lost: Close refuses later
// sends but keeps, and still delivers, everything already queued.
//
// Time is the time package's, read at each call, so a test runs the engine
// in a testing/synctest bubble to move it (the visibility timeout then
// passes at once, exactly): a clock function could not move the timers a
// waiting receive sleeps on.
package memqueue

import (
	"container/heap"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/custodymcp/custody/shared/queue"
)

var _ queue.Queue = (*Queue)(nil)

// ErrClosed is Send's error after Close. It wraps queue.ErrUnavailable: a
// task whose send failed is recovered by the sweeper like any other.
var ErrClosed = fmt.Errorf("memqueue: queue closed: %w", queue.ErrUnavailable)

// The identity the engine gives its records (an SQS queue ARN and a sender
// id, in the shape of AWS's; the region and account say it is local).
const (
	region    = "local"
	accountID = "000000000000"
)

// Defaults and ranges of the options (SQS's own).
const (
	DefaultVisibilityTimeout = 30 * time.Second
	MaxVisibilityTimeout     = 12 * time.Hour
	MaxMaxReceiveCount       = 1000
)

// Options configure a Queue.
type Options struct {
	// Name is the queue's name, the last part of its ARN
	// (arn:aws:sqs:local:000000000000:<Name>), which records carry as
	// eventSourceARN; "" means "tasks".
	Name string
	// VisibilityTimeout is how long a received message stays invisible,
	// 0..12 h; 0 means DefaultVisibilityTimeout (SQS's 30 s).
	VisibilityTimeout time.Duration
	// DeadLetter, with MaxReceiveCount, is the redrive policy: a message
	// received MaxReceiveCount times (1..1000) moves there instead of being
	// delivered again. Nil means none (MaxReceiveCount must then be 0).
	DeadLetter      *Queue
	MaxReceiveCount int
}

// Queue is one in-memory queue. It is safe for concurrent use.
type Queue struct {
	arn        string
	visibility time.Duration
	deadLetter *Queue
	maxReceive int

	mu     sync.Mutex
	closed bool
	// pending holds every message not deleted, ordered by when it becomes
	// visible (then by send order): its top is the next to deliver, and the
	// time a waiting receive must wake.
	pending messageHeap
	// byReceipt finds a received message by its current receipt handle.
	byReceipt map[string]*message
	seq       uint64
	// arrived is closed (and replaced) when a message is added, waking the
	// receives waiting for one.
	arrived chan struct{}
}

// message is one message and its delivery state.
type message struct {
	id, body, md5 string
	sent          time.Time
	seq           uint64

	receiveCount int
	firstReceive time.Time
	visibleAt    time.Time
	receipt      string // "" until received
	index        int    // in pending
}

// New returns an empty queue. It returns queue.ErrInvalid for options out
// of range.
func New(opts Options) (*Queue, error) {
	if opts.Name == "" {
		opts.Name = "tasks"
	}
	if opts.VisibilityTimeout == 0 {
		opts.VisibilityTimeout = DefaultVisibilityTimeout
	}
	if opts.VisibilityTimeout < 0 || opts.VisibilityTimeout > MaxVisibilityTimeout {
		return nil, fmt.Errorf("memqueue: visibility timeout %v, want 0..%v: %w", opts.VisibilityTimeout, MaxVisibilityTimeout, queue.ErrInvalid)
	}
	switch {
	case opts.DeadLetter == nil && opts.MaxReceiveCount != 0:
		return nil, fmt.Errorf("memqueue: MaxReceiveCount without a dead-letter queue: %w", queue.ErrInvalid)
	case opts.DeadLetter != nil && (opts.MaxReceiveCount < 1 || opts.MaxReceiveCount > MaxMaxReceiveCount):
		return nil, fmt.Errorf("memqueue: MaxReceiveCount %d, want 1..%d: %w", opts.MaxReceiveCount, MaxMaxReceiveCount, queue.ErrInvalid)
	}
	return &Queue{
		arn:        "arn:aws:sqs:" + region + ":" + accountID + ":" + opts.Name,
		visibility: opts.VisibilityTimeout,
		deadLetter: opts.DeadLetter,
		maxReceive: opts.MaxReceiveCount,
		byReceipt:  make(map[string]*message),
		arrived:    make(chan struct{}),
	}, nil
}

// ARN is the queue's ARN, the eventSourceARN of its records.
func (q *Queue) ARN() string { return q.arn }

// Send enqueues m, visible at once. It returns queue.ErrInvalid for an
// invalid message and ErrClosed after Close.
func (q *Queue) Send(ctx context.Context, m queue.Message) error {
	body, err := m.Body()
	if err != nil {
		return fmt.Errorf("memqueue send: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memqueue send: %w", err)
	}
	sum := md5.Sum([]byte(body))
	msg := &message{id: newID(), body: body, md5: hex.EncodeToString(sum[:]), sent: time.Now()}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	q.addLocked(msg)
	return nil
}

// Close makes every later Send fail with ErrClosed. Messages already
// queued stay, and Receive and Delete go on working, so a dispatcher still
// running delivers them. Close never fails and may be called more than
// once.
func (q *Queue) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	return nil
}

// addLocked queues msg, visible now, and wakes waiting receives.
func (q *Queue) addLocked(msg *message) {
	q.seq++
	msg.seq = q.seq
	msg.visibleAt = time.Now()
	heap.Push(&q.pending, msg)
	close(q.arrived)
	q.arrived = make(chan struct{})
}

// Receive implements queue.Consumer: up to max visible messages, waiting
// up to wait for a first one. A message received MaxReceiveCount times is
// moved to the dead-letter queue here, when it would be delivered again
// (as SQS does).
func (q *Queue) Receive(ctx context.Context, max int, wait time.Duration) ([]events.SQSMessage, error) {
	if err := queue.CheckReceive(max, wait); err != nil {
		return nil, fmt.Errorf("memqueue receive: %w", err)
	}
	deadline := time.Now().Add(wait)
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("memqueue receive: %w", err)
		}
		records, next, arrived := q.take(max)
		now := time.Now()
		if len(records) > 0 || !now.Before(deadline) {
			return records, nil
		}
		if next.IsZero() || next.After(deadline) {
			next = deadline
		}
		timer := time.NewTimer(next.Sub(now))
		select {
		case <-ctx.Done():
		case <-arrived:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// take receives up to max visible messages. With none, it returns when the
// next becomes visible (zero if none is queued) and the channel that is
// closed when one arrives.
func (q *Queue) take(max int) (records []events.SQSMessage, next time.Time, arrived <-chan struct{}) {
	var redrive []*message
	defer func() {
		// Outside q.mu: the dead-letter queue takes its own lock.
		for _, m := range redrive {
			q.deadLetter.redrive(m)
		}
	}()
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	for len(records) < max && len(q.pending) > 0 && !q.pending[0].visibleAt.After(now) {
		m := q.pending[0]
		if q.deadLetter != nil && m.receiveCount >= q.maxReceive {
			heap.Pop(&q.pending)
			delete(q.byReceipt, m.receipt)
			redrive = append(redrive, m)
			continue
		}
		delete(q.byReceipt, m.receipt)
		m.receiveCount++
		if m.firstReceive.IsZero() {
			m.firstReceive = now
		}
		m.receipt = newID()
		q.byReceipt[m.receipt] = m
		m.visibleAt = now.Add(q.visibility)
		heap.Fix(&q.pending, m.index)
		records = append(records, q.record(m))
	}
	if len(q.pending) > 0 {
		next = q.pending[0].visibleAt
	}
	return records, next, q.arrived
}

// record is m as Lambda's SQS event carries a record.
func (q *Queue) record(m *message) events.SQSMessage {
	return events.SQSMessage{
		MessageId:     m.id,
		ReceiptHandle: m.receipt,
		Body:          m.body,
		Md5OfBody:     m.md5,
		Attributes: map[string]string{
			"ApproximateReceiveCount":          strconv.Itoa(m.receiveCount),
			"SentTimestamp":                    strconv.FormatInt(m.sent.UnixMilli(), 10),
			"SenderId":                         accountID,
			"ApproximateFirstReceiveTimestamp": strconv.FormatInt(m.firstReceive.UnixMilli(), 10),
		},
		MessageAttributes: map[string]events.SQSMessageAttribute{},
		EventSourceARN:    q.arn,
		EventSource:       "aws:sqs",
		AWSRegion:         region,
	}
}

// redrive takes a message moved from a source queue: same id, body and
// sent time (SQS keeps a standard queue's enqueue time), a fresh delivery
// history. A closed dead-letter queue still takes it: losing it would
// hide a poison message.
func (q *Queue) redrive(from *message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(&message{id: from.id, body: from.body, md5: from.md5, sent: from.sent})
}

// Delete implements queue.Consumer.
func (q *Queue) Delete(ctx context.Context, receiptHandles []string) error {
	if err := queue.CheckDelete(receiptHandles); err != nil {
		return fmt.Errorf("memqueue delete: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memqueue delete: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, h := range receiptHandles {
		if m, ok := q.byReceipt[h]; ok {
			delete(q.byReceipt, h)
			heap.Remove(&q.pending, m.index)
		}
	}
	return nil
}

// newID is a random UUID (version 4), the shape of SQS message ids.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// messageHeap orders messages by visibleAt, then by send order.
type messageHeap []*message

func (h messageHeap) Len() int { return len(h) }
func (h messageHeap) Less(i, j int) bool {
	if !h[i].visibleAt.Equal(h[j].visibleAt) {
		return h[i].visibleAt.Before(h[j].visibleAt)
	}
	return h[i].seq < h[j].seq
}
func (h messageHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *messageHeap) Push(x any) {
	m := x.(*message)
	m.index = len(*h)
	*h = append(*h, m)
}
func (h *messageHeap) Pop() any {
	old := *h
	m := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	m.index = -1
	return m
}
