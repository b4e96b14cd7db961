package queue

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// DispatchOptions configure a Dispatcher. The zero value is the worker's
// event source mapping in the template: batches of one, one at a time.
type DispatchOptions struct {
	// BatchSize is the most records in one batch, 1..MaxBatchSize; 0 means
	// 1 (the event source mapping's BatchSize).
	BatchSize int
	// MaximumConcurrency is the most batches in the handler at once (the
	// event source mapping's ScalingConfig.MaximumConcurrency); 0 means 1.
	// A batch is received only when a slot is free, so no message waits
	// invisible for a busy handler.
	MaximumConcurrency int
	// WaitTime is how long one receive waits for a first message (long
	// polling), 0..MaxWaitTime; 0 means MaxWaitTime.
	WaitTime time.Duration
	// Timeout is the deadline of each handler call, as a Lambda function's
	// timeout bounds its invocation; 0 means none. Keep it below the
	// queue's visibility timeout, as AWS requires of an event source
	// mapping, or a batch still running is delivered again.
	Timeout time.Duration
	// Logger receives a line for each failed batch (handler error, panic,
	// invalid BatchItemFailures) and each failed receive or delete; nil
	// discards.
	Logger *slog.Logger
}

// Retry pacing of a failing Receive, and the bound of one Delete.
const (
	receiveBackoffMin = 100 * time.Millisecond
	receiveBackoffMax = 10 * time.Second
	deleteTimeout     = 10 * time.Second
)

// Dispatcher delivers a Consumer's messages to a Handler in batches and
// applies the handler's partial batch response, as Lambda's SQS event
// source mapping with ReportBatchItemFailures does on AWS: the records a
// batch did not fail are deleted, the failed ones are left to the
// visibility timeout (package doc, "Batches"). It is how the dev server's
// in-process engine and the SQS poller of tests deliver, so the worker
// handler runs the same way on every engine.
type Dispatcher struct {
	c    Consumer
	h    Handler
	opts DispatchOptions
	log  *slog.Logger

	stopReceiving  context.CancelFunc
	cancelHandlers context.CancelFunc
	// done is closed once the receive loop and every handler call (with its
	// delete) have returned.
	done chan struct{}
}

// Dispatch starts a Dispatcher of c's messages to h. It returns ErrInvalid
// for options out of range. Stop it with Stop.
func Dispatch(c Consumer, h Handler, opts *DispatchOptions) (*Dispatcher, error) {
	var o DispatchOptions
	if opts != nil {
		o = *opts
	}
	if o.BatchSize == 0 {
		o.BatchSize = 1
	}
	if o.MaximumConcurrency == 0 {
		o.MaximumConcurrency = 1
	}
	if o.WaitTime == 0 {
		o.WaitTime = MaxWaitTime
	}
	if err := CheckReceive(o.BatchSize, o.WaitTime); err != nil {
		return nil, fmt.Errorf("dispatch options: %w", err)
	}
	if o.MaximumConcurrency < 0 || o.Timeout < 0 {
		return nil, fmt.Errorf("dispatch options: negative MaximumConcurrency or Timeout: %w", ErrInvalid)
	}
	d := &Dispatcher{c: c, h: h, opts: o, log: o.Logger, done: make(chan struct{})}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	recvCtx, stopReceiving := context.WithCancel(context.Background())
	handlerCtx, cancelHandlers := context.WithCancel(context.Background())
	d.stopReceiving, d.cancelHandlers = stopReceiving, cancelHandlers
	go d.run(recvCtx, handlerCtx)
	return d, nil
}

// Stop stops receiving and waits for the batches in the handler to finish
// and their successes to be deleted; a message received but not finished
// is simply redelivered later. Handler contexts are not cancelled by Stop
// itself, so work under way completes. If ctx ends first, Stop cancels the
// handlers' contexts and returns ctx's error at once; a handler that
// ignores its context is then left running. Stop may be called more than
// once.
func (d *Dispatcher) Stop(ctx context.Context) error {
	d.stopReceiving()
	select {
	case <-d.done:
		d.cancelHandlers()
		return nil
	case <-ctx.Done():
		d.cancelHandlers()
		return fmt.Errorf("stop dispatcher: %w", ctx.Err())
	}
}

// run is the receive loop: take a free slot, receive a batch, hand it to a
// goroutine of its own.
func (d *Dispatcher) run(recvCtx, handlerCtx context.Context) {
	defer close(d.done)
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, d.opts.MaximumConcurrency)
	backoff := time.Duration(0)
	for {
		select {
		case slots <- struct{}{}:
		case <-recvCtx.Done():
			return
		}
		records, err := d.c.Receive(recvCtx, d.opts.BatchSize, d.opts.WaitTime)
		if len(records) == 0 {
			<-slots
			if recvCtx.Err() != nil {
				return
			}
			if err != nil {
				backoff = min(max(2*backoff, receiveBackoffMin), receiveBackoffMax)
				d.log.Warn("queue receive failed", "error", err, "retryInMs", backoff.Milliseconds())
				select {
				case <-time.After(backoff):
				case <-recvCtx.Done():
					return
				}
			}
			continue
		}
		// Records received as Stop came in are still delivered: leaving them
		// would only delay them by a visibility timeout.
		backoff = 0
		wg.Go(func() {
			defer func() { <-slots }()
			d.deliver(handlerCtx, records)
		})
	}
}

// deliver calls the handler with one batch and deletes what it did not fail.
func (d *Dispatcher) deliver(ctx context.Context, records []events.SQSMessage) {
	if d.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.opts.Timeout)
		defer cancel()
	}
	resp, err := d.call(ctx, events.SQSEvent{Records: records})
	if err == nil {
		err = checkResponse(records, resp)
	}
	if err != nil {
		d.log.Warn("queue batch failed", "messageIds", messageIDs(records), "error", err)
		return
	}
	failed := make(map[string]bool, len(resp.BatchItemFailures))
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	var handles []string
	for _, r := range records {
		if !failed[r.MessageId] {
			handles = append(handles, r.ReceiptHandle)
		}
	}
	if len(failed) > 0 {
		d.log.Debug("queue batch items failed", "messageIds", messageIDs(records), "failed", len(failed))
	}
	if len(handles) == 0 {
		return
	}
	// The delete acknowledges finished work, so Stop's cancellation of the
	// handlers does not cancel it; it has its own bound.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteTimeout)
	defer cancel()
	if err := d.c.Delete(dctx, handles); err != nil {
		d.log.Warn("queue delete failed: the batch's successes will be delivered again", "messageIds", messageIDs(records), "error", err)
	}
}

// call runs the handler, turning a panic into a failed batch (Lambda would
// lose the runtime and retry the batch).
func (d *Dispatcher) call(ctx context.Context, event events.SQSEvent) (resp events.SQSEventResponse, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panic: %v\n%s", p, debug.Stack())
		}
	}()
	return d.h(ctx, event)
}

// checkResponse applies Lambda's rule for a partial batch response: an
// ItemIdentifier that is empty or names no record of the batch fails the
// whole batch.
func checkResponse(records []events.SQSMessage, resp events.SQSEventResponse) error {
	for _, f := range resp.BatchItemFailures {
		found := false
		for _, r := range records {
			if f.ItemIdentifier != "" && r.MessageId == f.ItemIdentifier {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("batch item failure %q names no record of the batch: the whole batch fails", f.ItemIdentifier)
		}
	}
	return nil
}

func messageIDs(records []events.SQSMessage) []string {
	ids := make([]string, len(records))
	for i, r := range records {
		ids[i] = r.MessageId
	}
	return ids
}
