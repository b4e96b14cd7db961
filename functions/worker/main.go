// Command worker is Custody's task worker Lambda function: Lambda's SQS
// event source mapping on the task queue (template.yaml: BatchSize 1,
// FunctionResponseTypes [ReportBatchItemFailures], a maximum concurrency)
// calls it with an events.SQSEvent, and it runs each record's task through
// the worker of package tasks (tasks.Service.Handle) over the DynamoDB
// engine, composed by server.New exactly as /mcp is composed, so a task's
// tool runs through the same governed pipeline.
//
// Its answer is an events.SQSEventResponse whose BatchItemFailures name
// only the records that failed (a store failure before the task's outcome
// was stored): Lambda deletes every other record and leaves those to the
// queue's visibility timeout, and after maxReceiveCount the queue moves a
// message to its dead-letter queue, where the sweeper fails its task with
// a reason (field case FB-37: one failure never redelivers the batch). A
// record whose claim fails — the task is running under another delivery's
// live lease, waits, is terminal or gone — is a success: its message is
// deleted, not retried into the dead-letter queue. The handler never
// returns an error, which would fail the whole batch.
//
// Cold start reads the configuration (config.go), builds the AWS clients,
// fetches the cursor sealing key and composes the worker; any failure is
// one JSON log line naming what is wrong, then exit 1.
//
// Build it as template.yaml does (make build-WorkerFunction):
//
//	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o bootstrap ./functions/worker
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/custodymcp/custody/shared/config"
	"github.com/custodymcp/custody/shared/lambdaio"
	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/server"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
)

// coldStartTimeout bounds the cold start's calls (AWS config, the secret).
const coldStartTimeout = 10 * time.Second

func main() {
	cfg, err := LoadConfig(os.Getenv)
	if err != nil {
		config.Exit("invalid configuration", err)
	}
	logger := slog.New(lambdaio.NewLogHandler(os.Stdout, cfg.LogLevel))
	ctx, cancel := context.WithTimeout(context.Background(), coldStartTimeout)
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		cancel()
		config.Exit("load the AWS configuration", err)
	}
	key, err := cfg.CursorKey(ctx, func(ctx context.Context, arn string) (string, error) {
		return lambdaio.SecretString(ctx, secretsmanager.NewFromConfig(awsCfg), arn)
	})
	cancel()
	if err != nil {
		config.Exit("fetch the cursor sealing key", err)
	}
	client := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		if cfg.DynamoDBEndpoint != "" {
			o.DisableValidateResponseChecksum = true // emulators send no CRC32 header
		}
	}, dynamostore.ClientOptions(cfg.DynamoDBEndpoint))
	w, err := newWorker(cfg, dynamostore.New(client, cfg.TableName, dynamostore.Options{}), key, logger)
	if err != nil {
		config.Exit("compose the worker", err)
	}
	logger.Info("cold start", "table", cfg.TableName, "emulated", cfg.DynamoDBEndpoint != "")
	lambda.Start(w.Handle)
}

// worker is the function's handler.
type worker struct {
	handle queue.Handler
	log    *slog.Logger
}

// newWorker composes the worker exactly as the function runs it: the
// composition of /mcp (server.New: the read tools and the task tools, the
// gate that re-admits a task's creator, the audit retention) whose tasks
// service's Handle is the handler. Tests build theirs through it too.
func newWorker(cfg Config, st store.Store, cursorKey []byte, logger *slog.Logger) (*worker, error) {
	srv, err := server.New(server.Config{
		Store:          st,
		CursorKey:      cursorKey,
		AuditRetention: cfg.AuditRetention,
		Logger:         logger,
		TaskQueue:      noSends{},
	})
	if err != nil {
		return nil, err
	}
	return &worker{handle: srv.Tasks.Handle, log: logger}, nil
}

// Handle runs one batch and logs one "batch" line: how many records, and
// the message ids it reports failed.
func (w *worker) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	start := time.Now()
	resp, err := w.handle(ctx, ev)
	if err != nil {
		// tasks.Service.Handle fails records, never batches; should it ever
		// return an error, every record is reported instead, which Lambda
		// treats the same without a second code path.
		w.log.ErrorContext(ctx, "batch handler failed", "err", err)
		resp = events.SQSEventResponse{}
		for _, r := range ev.Records {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		}
	}
	failed := make([]string, 0, len(resp.BatchItemFailures))
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	w.log.InfoContext(ctx, "batch", "records", len(ev.Records), "failed", failed,
		"durationMs", time.Since(start).Milliseconds())
	return resp, nil
}

// noSends is the worker's task queue. The worker sends no message — a
// lapsed lease is re-enqueued by the sweeper, an answered question by
// /mcp — so it holds no sqs:SendMessage; a send is refused as the queue
// being unavailable, which the sweeper's queued-unclaimed rule recovers as
// it recovers any lost send.
type noSends struct{}

func (noSends) Send(context.Context, queue.Message) error {
	return fmt.Errorf("the worker function sends no task messages: %w", queue.ErrUnavailable)
}
