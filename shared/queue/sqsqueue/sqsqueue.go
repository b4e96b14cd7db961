// Package sqsqueue is the queue port's Amazon SQS engine, on
// aws-sdk-go-v2's service/sqs (the AWS JSON protocol).
//
// Send is SendMessage to the queue URL: what /mcp's task creation (after
// the task row commits) and the sweeper call. Receive and Delete are the
// polling side: ReceiveMessage asking for the system attributes Lambda's
// SQS event carries, each message turned into the events.SQSMessage Lambda
// would deliver, and DeleteMessageBatch of the successes. On AWS nobody
// calls them: Lambda's event source mapping polls the queue and calls the
// worker. The dev server (on SQS) and the tests poll with
// queue.Dispatch(q, handler, opts), which applies the handler's partial
// batch response exactly as the mapping does, failures being left to the
// queue's visibility timeout and redrive policy (set on the queue: the
// template, or the test that creates it).
//
// Errors are translated at the boundary: SQS's InvalidMessageContents is
// queue.ErrInvalid; every other failure of SQS or of the network, and a
// call that outlives its own timeout, is queue.ErrUnavailable, wrapping the
// SDK's error; the caller's own cancelled context is returned as its error.
package sqsqueue

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/custodymcp/custody/shared/queue"
)

var _ queue.Queue = (*Queue)(nil)

// API is the part of *sqs.Client the engine calls.
type API interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

var _ API = (*sqs.Client)(nil)

// DefaultTimeout bounds each call but a receive's long poll, which gets its
// wait on top.
const DefaultTimeout = 10 * time.Second

// lambdaAttributes are the system attributes a record of Lambda's SQS event
// carries: the four of every message, the X-Ray trace header when sent
// with one, and a FIFO queue's three.
func lambdaAttributes() []types.MessageSystemAttributeName {
	return []types.MessageSystemAttributeName{
		types.MessageSystemAttributeNameApproximateReceiveCount,
		types.MessageSystemAttributeNameSentTimestamp,
		types.MessageSystemAttributeNameSenderId,
		types.MessageSystemAttributeNameApproximateFirstReceiveTimestamp,
		types.MessageSystemAttributeNameAWSTraceHeader,
		types.MessageSystemAttributeNameSequenceNumber,
		types.MessageSystemAttributeNameMessageGroupId,
		types.MessageSystemAttributeNameMessageDeduplicationId,
	}
}

// Options configure a Queue.
type Options struct {
	// Client is the SQS client, built once per process (an *sqs.Client).
	Client API
	// QueueURL is the queue's URL, as SQS (or the template's QueueUrl
	// output) gives it.
	QueueURL string
	// QueueARN is the queue's ARN, the records' eventSourceARN (its region
	// their awsRegion); "" means asked of SQS (GetQueueAttributes QueueArn)
	// at the first Receive. Send never needs it.
	QueueARN string
	// Timeout bounds each call; 0 means DefaultTimeout.
	Timeout time.Duration
}

// Queue is one SQS queue. It is safe for concurrent use.
type Queue struct {
	client  API
	url     string
	timeout time.Duration

	mu  sync.Mutex
	arn string
}

// New returns the queue at opts.QueueURL. It makes no call.
func New(opts Options) (*Queue, error) {
	if opts.Client == nil || opts.QueueURL == "" {
		return nil, errors.New("sqsqueue: a Client and a QueueURL are required")
	}
	if opts.QueueARN != "" {
		if _, err := regionOf(opts.QueueARN); err != nil {
			return nil, err
		}
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	return &Queue{client: opts.Client, url: opts.QueueURL, timeout: opts.Timeout, arn: opts.QueueARN}, nil
}

// Send implements queue.Sender with one SendMessage.
func (q *Queue) Send(ctx context.Context, m queue.Message) error {
	body, err := m.Body()
	if err != nil {
		return fmt.Errorf("sqs send: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, q.timeout)
	defer cancel()
	if _, err := q.client.SendMessage(cctx, &sqs.SendMessageInput{QueueUrl: &q.url, MessageBody: &body}); err != nil {
		return translate(ctx, "send", err)
	}
	return nil
}

// Receive implements queue.Consumer with one ReceiveMessage; wait is
// rounded down to whole seconds (WaitTimeSeconds).
func (q *Queue) Receive(ctx context.Context, max int, wait time.Duration) ([]events.SQSMessage, error) {
	if err := queue.CheckReceive(max, wait); err != nil {
		return nil, fmt.Errorf("sqs receive: %w", err)
	}
	arn, err := q.queueARN(ctx)
	if err != nil {
		return nil, err
	}
	region, _ := regionOf(arn) // checked when the ARN was taken
	cctx, cancel := context.WithTimeout(ctx, wait+q.timeout)
	defer cancel()
	out, err := q.client.ReceiveMessage(cctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    &q.url,
		MaxNumberOfMessages:         int32(max),
		WaitTimeSeconds:             int32(wait / time.Second),
		MessageSystemAttributeNames: lambdaAttributes(),
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		return nil, translate(ctx, "receive", err)
	}
	records := make([]events.SQSMessage, 0, len(out.Messages))
	for _, m := range out.Messages {
		records = append(records, record(m, arn, region))
	}
	return records, nil
}

// record is m as Lambda's SQS event carries it.
func record(m types.Message, arn, region string) events.SQSMessage {
	r := events.SQSMessage{
		MessageId:              aws.ToString(m.MessageId),
		ReceiptHandle:          aws.ToString(m.ReceiptHandle),
		Body:                   aws.ToString(m.Body),
		Md5OfBody:              aws.ToString(m.MD5OfBody),
		Md5OfMessageAttributes: aws.ToString(m.MD5OfMessageAttributes),
		Attributes:             make(map[string]string, len(m.Attributes)),
		MessageAttributes:      make(map[string]events.SQSMessageAttribute, len(m.MessageAttributes)),
		EventSourceARN:         arn,
		EventSource:            "aws:sqs",
		AWSRegion:              region,
	}
	for k, v := range m.Attributes {
		r.Attributes[k] = v
	}
	for k, v := range m.MessageAttributes {
		r.MessageAttributes[k] = events.SQSMessageAttribute{
			StringValue:      v.StringValue,
			BinaryValue:      v.BinaryValue,
			StringListValues: orEmpty(v.StringListValues),
			BinaryListValues: orEmpty(v.BinaryListValues),
			DataType:         aws.ToString(v.DataType),
		}
	}
	return r
}

// orEmpty gives Lambda's [] for an absent list.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Delete implements queue.Consumer with one DeleteMessageBatch. An entry
// SQS reports failed makes the whole call queue.ErrUnavailable (those
// messages are simply delivered again).
func (q *Queue) Delete(ctx context.Context, receiptHandles []string) error {
	if err := queue.CheckDelete(receiptHandles); err != nil {
		return fmt.Errorf("sqs delete: %w", err)
	}
	if len(receiptHandles) == 0 {
		return nil
	}
	entries := make([]types.DeleteMessageBatchRequestEntry, len(receiptHandles))
	for i, h := range receiptHandles {
		entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(h)}
	}
	cctx, cancel := context.WithTimeout(ctx, q.timeout)
	defer cancel()
	out, err := q.client.DeleteMessageBatch(cctx, &sqs.DeleteMessageBatchInput{QueueUrl: &q.url, Entries: entries})
	if err != nil {
		return translate(ctx, "delete", err)
	}
	if len(out.Failed) > 0 {
		f := out.Failed[0]
		return fmt.Errorf("sqs delete: %d of %d entries failed (first: %s %s): %w",
			len(out.Failed), len(entries), aws.ToString(f.Code), aws.ToString(f.Message), queue.ErrUnavailable)
	}
	return nil
}

// queueARN returns the queue's ARN, asking SQS once.
func (q *Queue) queueARN(ctx context.Context) (string, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.arn != "" {
		return q.arn, nil
	}
	cctx, cancel := context.WithTimeout(ctx, q.timeout)
	defer cancel()
	out, err := q.client.GetQueueAttributes(cctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       &q.url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return "", translate(ctx, "get queue ARN", err)
	}
	arn := out.Attributes[string(types.QueueAttributeNameQueueArn)]
	if _, err := regionOf(arn); err != nil {
		return "", fmt.Errorf("sqs get queue ARN: %w: %w", queue.ErrUnavailable, err)
	}
	q.arn = arn
	return arn, nil
}

// regionOf is the region of an SQS queue ARN (arn:aws:sqs:REGION:ACCOUNT:NAME).
func regionOf(arn string) (string, error) {
	parts := strings.Split(arn, ":")
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "sqs" || parts[3] == "" {
		return "", fmt.Errorf("sqsqueue: %q is not an SQS queue ARN", arn)
	}
	return parts[3], nil
}

// translate maps an SDK error to the port's: the caller's ended context
// as itself, InvalidMessageContents as ErrInvalid, the rest (SQS's errors,
// the network's, our own timeout) as ErrUnavailable.
func translate(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("sqs %s: %w", op, context.Cause(ctx))
	}
	var invalid *types.InvalidMessageContents
	if errors.As(err, &invalid) {
		return fmt.Errorf("sqs %s: %w: %w", op, queue.ErrInvalid, err)
	}
	return fmt.Errorf("sqs %s: %w: %w", op, queue.ErrUnavailable, err)
}

// ClientOptions returns the settings of the engine's SQS client, applied
// when the client is built (once per process): baseEndpoint, when set,
// replaces SQS's regional endpoint (an emulator such as fauxqs, whose
// queue URLs name its own address); "" on AWS.
func ClientOptions(baseEndpoint string) func(*sqs.Options) {
	return func(o *sqs.Options) {
		if baseEndpoint != "" {
			o.BaseEndpoint = aws.String(baseEndpoint)
		}
	}
}

// ValidQueueURL reports whether s has the shape of an SQS queue URL, as
// CloudFormation's QueueUrl gives it (https://sqs.<region>.amazonaws.com/
// <account>/<name>), or, for an emulator (emulated), any http(s) URL whose
// path is /<account>/<name>. A queue name is 1 to 80 of A-Z a-z 0-9 - _,
// with a .fifo suffix for a FIFO queue (SQS Developer Guide, "Amazon SQS
// queue naming").
func ValidQueueURL(s string, emulated bool) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	switch {
	case u.Scheme == "https" && strings.HasPrefix(u.Host, "sqs.") && (strings.HasSuffix(u.Host, ".amazonaws.com") ||
		strings.HasSuffix(u.Host, ".amazonaws.com.cn")):
	case emulated && (u.Scheme == "http" || u.Scheme == "https"):
	default:
		return false
	}
	parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	if len(parts) != 2 || len(parts[0]) != 12 || strings.Trim(parts[0], "0123456789") != "" {
		return false
	}
	name := strings.TrimSuffix(parts[1], ".fifo")
	if name == "" || len(parts[1]) > 80 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
