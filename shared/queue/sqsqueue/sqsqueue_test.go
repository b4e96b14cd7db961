package sqsqueue_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/queue/queuetest"
	"github.com/custodymcp/custody/shared/queue/sqsqueue"
	"github.com/custodymcp/custody/shared/queue/sqsqueue/fauxqstest"
)

func mustNew(t *testing.T, opts sqsqueue.Options) *sqsqueue.Queue {
	t.Helper()
	q, err := sqsqueue.New(opts)
	if err != nil {
		t.Fatalf("New = %v", err)
	}
	return q
}

// TestAgainstFauxqs runs everything that needs SQS on one emulator
// (starting Node takes seconds).
func TestAgainstFauxqs(t *testing.T) {
	srv := fauxqstest.Start(t)
	t.Run("the conformance suite", func(t *testing.T) { conformance(t, srv) })
	t.Run("the records name the queue by the ARN SQS reports", func(t *testing.T) { recordsNameTheQueue(t, srv) })
	t.Run("a missing queue is ErrUnavailable and a cancelled call is the context's error", func(t *testing.T) { missingAndCancelled(t, srv) })
}

// conformance is the queuetest suite: every leaf on a fresh queue (and
// dead-letter queue) of the emulator, with the redrive policy of its
// Config as the template would set it.
func conformance(t *testing.T, srv *fauxqstest.Server) {
	client := srv.Client()
	var n atomic.Int64
	queuetest.Run(t, queuetest.Engine{
		New: func(t *testing.T, cfg queuetest.Config) queuetest.Queues {
			name := fmt.Sprintf("tasks-%d", n.Add(1))
			dlqURL, dlqARN := srv.CreateQueue(t, name+"-dlq", nil)
			attrs := map[string]string{"VisibilityTimeout": fmt.Sprint(int(cfg.VisibilityTimeout / time.Second))}
			if cfg.MaxReceiveCount > 0 {
				attrs["RedrivePolicy"] = fauxqstest.RedrivePolicy(dlqARN, cfg.MaxReceiveCount)
			}
			url, _ := srv.CreateQueue(t, name, attrs)
			return queuetest.Queues{
				Queue:      mustNew(t, sqsqueue.Options{Client: client, QueueURL: url}),
				DeadLetter: mustNew(t, sqsqueue.Options{Client: client, QueueURL: dlqURL, QueueARN: dlqARN}),
			}
		},
	})
}

func recordsNameTheQueue(t *testing.T, srv *fauxqstest.Server) {
	url, arn := srv.CreateQueue(t, "arn-test", nil)
	q := mustNew(t, sqsqueue.Options{Client: srv.Client(), QueueURL: url})
	if err := q.Send(context.Background(), queue.Message{Tenant: "firm-a", TaskID: "task-1"}); err != nil {
		t.Fatal(err)
	}
	got, err := q.Receive(context.Background(), 1, time.Second)
	if err != nil || len(got) != 1 {
		t.Fatalf("Receive = %d records, %v, want the one sent", len(got), err)
	}
	if got[0].EventSourceARN != arn || got[0].AWSRegion != fauxqstest.Region {
		t.Errorf("eventSourceARN %q, awsRegion %q, want %q, %q", got[0].EventSourceARN, got[0].AWSRegion, arn, fauxqstest.Region)
	}
}

// unreachable is an SQS client of a loopback port nothing listens on.
func unreachable(t *testing.T) *sqs.Client {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return sqs.New(sqs.Options{
		Region:           fauxqstest.Region,
		BaseEndpoint:     aws.String("http://" + addr),
		Credentials:      credentials.NewStaticCredentialsProvider("test", "test", ""),
		RetryMaxAttempts: 1,
	})
}

func TestAnUnreachableSQSIsErrUnavailableOnEveryCall(t *testing.T) {
	q := mustNew(t, sqsqueue.Options{Client: unreachable(t), QueueURL: "http://127.0.0.1:1/000000000000/tasks",
		QueueARN: "arn:aws:sqs:us-east-1:000000000000:tasks"})
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"Send", func() error { return q.Send(ctx, queue.Message{Tenant: "firm-a", TaskID: "task-1"}) }},
		{"Receive", func() error { _, err := q.Receive(ctx, 1, 0); return err }},
		{"Delete", func() error { return q.Delete(ctx, []string{"handle"}) }},
	} {
		t.Run(tc.name+" is ErrUnavailable", func(t *testing.T) {
			if err := tc.call(); !errors.Is(err, queue.ErrUnavailable) {
				t.Errorf("%s = %v, want ErrUnavailable", tc.name, err)
			}
		})
	}
}

func missingAndCancelled(t *testing.T, srv *fauxqstest.Server) {
	missing := mustNew(t, sqsqueue.Options{Client: srv.Client(), QueueURL: srv.Endpoint + "/000000000000/no-such-queue"})
	if err := missing.Send(context.Background(), queue.Message{Tenant: "firm-a", TaskID: "task-1"}); !errors.Is(err, queue.ErrUnavailable) {
		t.Errorf("Send to a missing queue = %v, want ErrUnavailable", err)
	}
	if _, err := missing.Receive(context.Background(), 1, 0); !errors.Is(err, queue.ErrUnavailable) {
		t.Errorf("Receive from a missing queue = %v, want ErrUnavailable", err)
	}

	url, arn := srv.CreateQueue(t, "cancel-test", nil)
	q := mustNew(t, sqsqueue.Options{Client: srv.Client(), QueueURL: url, QueueARN: arn})
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 1)
	go func() {
		_, err := q.Receive(ctx, 1, queue.MaxWaitTime)
		errs <- err
	}()
	time.Sleep(200 * time.Millisecond) // the long poll is under way (or not yet: either way it must end)
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) || errors.Is(err, queue.ErrUnavailable) {
		t.Errorf("a long poll whose context is cancelled = %v, want context.Canceled, not ErrUnavailable", err)
	}
}

func TestNewRefusesAMissingClientOrURLAndAnARNOfAnotherService(t *testing.T) {
	c := sqs.New(sqs.Options{Region: "us-east-1"})
	for _, opts := range []sqsqueue.Options{
		{QueueURL: "https://sqs.us-east-1.amazonaws.com/123456789012/tasks"},
		{Client: c},
		{Client: c, QueueURL: "https://sqs.us-east-1.amazonaws.com/123456789012/tasks", QueueARN: "arn:aws:sns:us-east-1:123456789012:tasks"},
	} {
		if _, err := sqsqueue.New(opts); err == nil {
			t.Errorf("New(%+v) = nil error, want a refusal", opts)
		}
	}
}

func TestValidQueueURLAcceptsSQSQueueURLsAndEmulatorsOnlyWhenEmulated(t *testing.T) {
	for _, tc := range []struct {
		url           string
		aws, emulated bool
	}{
		{"https://sqs.eu-west-1.amazonaws.com/123456789012/custody-prod-TaskQueue-AbC_1", true, true},
		{"https://sqs.cn-north-1.amazonaws.com.cn/123456789012/tasks.fifo", true, true},
		{"http://127.0.0.1:9324/000000000000/tasks", false, true},
		{"http://sqs.eu-west-1.amazonaws.com/123456789012/tasks", false, true},
		{"https://sqs.eu-west-1.amazonaws.com/123456789012", false, false},
		{"https://sqs.eu-west-1.amazonaws.com/12345/tasks", false, false},
		{"https://sqs.eu-west-1.amazonaws.com/123456789012/bad name", false, false},
		{"https://sqs.eu-west-1.amazonaws.com/123456789012/tasks?x=1", false, false},
		{"https://evil.example/123456789012/tasks", false, true},
		{"", false, false},
	} {
		t.Run(tc.url, func(t *testing.T) {
			if got := sqsqueue.ValidQueueURL(tc.url, false); got != tc.aws {
				t.Errorf("ValidQueueURL(%q, false) = %v, want %v", tc.url, got, tc.aws)
			}
			if got := sqsqueue.ValidQueueURL(tc.url, true); got != tc.emulated {
				t.Errorf("ValidQueueURL(%q, true) = %v, want %v", tc.url, got, tc.emulated)
			}
		})
	}
}
