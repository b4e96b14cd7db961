// Package queue is Custody's queue port: a task-augmented tools/call sends
// one Message (tenant + task id) after its task row commits, and a worker
// takes delivery of messages in batches, as an events.SQSEvent, answering
// with an events.SQSEventResponse whose BatchItemFailures name only the
// records it could not finish (docs/architecture.md "Ports and engines").
//
// Two engines implement it: sqsqueue (Amazon SQS, production) and memqueue
// (in process, the dev server's). On AWS, Lambda's SQS event source mapping
// with ReportBatchItemFailures polls the queue and calls the worker; in the
// dev server and in tests a Dispatcher (Dispatch) does the same over either
// engine's Consumer side, so the worker's handler sees the same event and
// its answer has the same effect everywhere. The conformance suite in
// queuetest is the contract both engines pass; this file states it in prose.
//
// # Delivery
//
// Delivery is at least once. A received message is invisible to other
// receivers for the queue's visibility timeout; a message not deleted by
// then (its handler failed, named it in BatchItemFailures, or died) becomes
// visible again and is redelivered. Every receive increments the message's
// ApproximateReceiveCount (a record attribute; the first delivery says "1").
// A queue with a redrive policy moves a message that has been received
// maxReceiveCount times, instead of delivering it again, to its dead-letter
// queue, keeping its message id and body. Order is not promised. So a
// handler must tolerate duplicates (the task worker's conditional claim
// makes execution effectively once) and a message may be lost only with
// the engine itself (memqueue's process): the sweeper's queued-unclaimed
// rule re-enqueues a task whose message never arrived, so a lost send is
// recovered too.
//
// # Batches
//
// A batch holds 1 to MaxBatchSize records. The handler's outcome decides,
// as Lambda's partial batch response does: an error (or a panic) fails the
// whole batch; otherwise every record not named by an ItemIdentifier in
// BatchItemFailures is deleted and the named ones are left to the
// visibility timeout. A BatchItemFailures entry whose ItemIdentifier is
// empty or names no record of the batch fails the whole batch.
//
// # Errors
//
// Engines translate their driver's errors at the boundary into the
// sentinels below, wrapped with context (test with errors.Is).
package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// Sentinel errors of the port. Engines wrap them; callers use errors.Is.
var (
	// ErrUnavailable: the engine is throttled, timed out, closed or down.
	// Retrying later may succeed. A task whose send failed this way stays
	// queued in the store and the sweeper re-enqueues it.
	ErrUnavailable = errors.New("queue: engine unavailable")
	// ErrInvalid: the request breaks the port's rules (a message without a
	// tenant or task id, invalid UTF-8, a body over MaxBodyBytes, a batch
	// size outside 1..MaxBatchSize, an empty receipt handle), or a record's
	// body is not a Message.
	ErrInvalid = errors.New("queue: invalid request")
)

// Limits shared by both engines (SQS's own).
const (
	// MaxBatchSize is the most records one receive, one batch and one
	// delete take (SQS ReceiveMessage MaxNumberOfMessages, DeleteMessageBatch).
	MaxBatchSize = 10
	// MaxWaitTime is the longest a receive waits for a first message (SQS
	// long polling, WaitTimeSeconds 20).
	MaxWaitTime = 20 * time.Second
	// MaxBodyBytes is the largest message body: SQS's 256 KiB limit (the
	// classic one, kept so a queue configured with it accepts every body).
	MaxBodyBytes = 256 * 1024
)

// Message asks a worker to run one task: the task row under Tenant with id
// TaskID, in the partition of the credential CredentialID that created it
// (tasks live under their credential, docs/decisions.md "Storage"). It
// travels as the SQS message body, JSON:
//
//	{"tenant":"demo","taskId":"t_…","credentialId":"cred_…"}
//
// It names the row and nothing else: the row holds the task's state, so a
// duplicate or late delivery carries no stale data. CredentialID is
// optional to the port (a worker that cannot find the row without it
// treats its absence as a poison message).
type Message struct {
	Tenant       string `json:"tenant"`
	TaskID       string `json:"taskId"`
	CredentialID string `json:"credentialId,omitempty"`
}

// Validate returns ErrInvalid when the message has an empty or non-UTF-8
// tenant or task id (JSON would silently turn invalid UTF-8 into U+FFFD,
// naming another row).
func (m Message) Validate() error {
	for _, f := range []struct{ name, v string }{{"tenant", m.Tenant}, {"taskId", m.TaskID}} {
		switch {
		case f.v == "":
			return fmt.Errorf("message %s is empty: %w", f.name, ErrInvalid)
		case !utf8.ValidString(f.v):
			return fmt.Errorf("message %s is not valid UTF-8: %w", f.name, ErrInvalid)
		}
	}
	if !utf8.ValidString(m.CredentialID) {
		return fmt.Errorf("message credentialId is not valid UTF-8: %w", ErrInvalid)
	}
	return nil
}

// Body returns the message as an SQS message body (JSON, at most
// MaxBodyBytes), or ErrInvalid when the message is not valid.
func (m Message) Body() (string, error) {
	if err := m.Validate(); err != nil {
		return "", err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encode message: %w", err)
	}
	if len(b) > MaxBodyBytes {
		return "", fmt.Errorf("message body of %d bytes is over %d: %w", len(b), MaxBodyBytes, ErrInvalid)
	}
	return string(b), nil
}

// ParseMessage decodes a record's body. A body that is not a JSON object
// holding a valid Message is ErrInvalid: a poison message, which no
// redelivery will mend. Unknown members are ignored, so a newer sender can
// add one without failing an older worker.
func ParseMessage(body string) (Message, error) {
	if !utf8.ValidString(body) { // JSON would turn it into U+FFFD
		return Message{}, fmt.Errorf("message body is not valid UTF-8: %w", ErrInvalid)
	}
	var m Message
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return Message{}, fmt.Errorf("decode message body: %w: %w", ErrInvalid, err)
	}
	if err := m.Validate(); err != nil {
		return Message{}, err
	}
	return m, nil
}

// Sender sends messages: what task creation and the sweeper need.
type Sender interface {
	// Send enqueues m. When it returns nil the engine holds the message
	// (SQS has stored it; memqueue has it in memory). It returns
	// ErrInvalid for an invalid message and ErrUnavailable when the engine
	// cannot take it now.
	Send(ctx context.Context, m Message) error
}

// Consumer is the receiving side of a queue: what a Dispatcher (or Lambda's
// event source mapping, on AWS) uses to deliver batches.
type Consumer interface {
	// Receive returns up to max (1..MaxBatchSize) visible messages as SQS
	// event records, exactly as Lambda's SQS event carries them (message
	// id, receipt handle, body, its MD5, the attributes ApproximateReceiveCount,
	// SentTimestamp, SenderId and ApproximateFirstReceiveTimestamp, the
	// queue's ARN and region, eventSource "aws:sqs"), making each invisible
	// for the visibility timeout and counting the receive. With none visible
	// it waits up to wait (0..MaxWaitTime) for one, then returns none. It
	// returns ErrInvalid for max or wait out of range, ErrUnavailable when
	// the engine fails, and ctx's error when ctx ends first.
	Receive(ctx context.Context, max int, wait time.Duration) ([]events.SQSMessage, error)
	// Delete deletes received messages by their receipt handles (at most
	// MaxBatchSize). A handle of a message already deleted, or received
	// again since, deletes nothing and is no error (as in SQS, whose
	// redelivered message has a new handle). It returns ErrInvalid for an
	// empty handle or too many, and ErrUnavailable when the engine fails.
	Delete(ctx context.Context, receiptHandles []string) error
}

// Queue is both sides of one queue.
type Queue interface {
	Sender
	Consumer
}

// Handler takes one batch, as a Lambda function subscribed to the queue
// with FunctionResponseTypes [ReportBatchItemFailures] does. Its
// BatchItemFailures name the records to redeliver by ItemIdentifier (the
// record's MessageId); an error fails the whole batch.
type Handler func(ctx context.Context, event events.SQSEvent) (events.SQSEventResponse, error)

// CheckReceive returns ErrInvalid when Receive's max or wait is out of
// range. Engines call it first, so both refuse the same requests.
func CheckReceive(max int, wait time.Duration) error {
	if max < 1 || max > MaxBatchSize {
		return fmt.Errorf("receive %d messages, want 1..%d: %w", max, MaxBatchSize, ErrInvalid)
	}
	if wait < 0 || wait > MaxWaitTime {
		return fmt.Errorf("receive wait %v, want 0..%v: %w", wait, MaxWaitTime, ErrInvalid)
	}
	return nil
}

// CheckDelete returns ErrInvalid when Delete's receipt handles break the
// rule (none empty, at most MaxBatchSize). Engines call it first.
func CheckDelete(receiptHandles []string) error {
	if len(receiptHandles) > MaxBatchSize {
		return fmt.Errorf("delete %d messages, want at most %d: %w", len(receiptHandles), MaxBatchSize, ErrInvalid)
	}
	for _, h := range receiptHandles {
		if h == "" {
			return fmt.Errorf("delete: empty receipt handle: %w", ErrInvalid)
		}
	}
	return nil
}
