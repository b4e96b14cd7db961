// Command sweeper is Custody's sweeper Lambda function: an EventBridge
// schedule (template.yaml: rate(1 minute)) invokes it with a scheduled
// event, and it runs every recovery duty of the composition once
// (server.Server.Duties through sweep.Run): the tasks' lapsed leases,
// unclaimed and expired tasks, the task queue's dead letters, proposals and
// grants past their expiry, and, with the lane's buckets configured, the
// upload lane's: the copy to verified/ (and a rescan's return trip), the
// open uploads' lapse and the no-verdict timeout. Every action is a conditional write decided from the row
// re-read, so overlapping sweeps — a slow one still running when the next
// minute's starts, or the dev server's ticker on the same table — act at
// most once on any row.
//
// Each sweep takes the wall clock at its start as its now (not the event's
// time: a delayed invocation still judges leases and expiries by the time
// it acts). It logs one "sweep action" line per duty and kind of action
// (what the template's metric filter counts) and one "sweep" line, and
// returns an error when a duty failed, so the function's Errors metric
// (and its alarm) sees it; the template turns Lambda's retries of the
// asynchronous invocation off, since the next minute sweeps again.
//
// Build it as template.yaml does (make build-SweeperFunction):
//
//	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o bootstrap ./functions/sweeper
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/config"
	"github.com/custodymcp/custody/shared/lambdaio"
	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/queue/sqsqueue"
	"github.com/custodymcp/custody/shared/scan/guardduty"
	"github.com/custodymcp/custody/shared/server"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/sweep"
)

// coldStartTimeout bounds the cold start's calls.
const coldStartTimeout = 10 * time.Second

func main() {
	cfg, err := LoadConfig(os.Getenv)
	if err != nil {
		config.Exit("invalid configuration", err)
	}
	logger := slog.New(lambdaio.NewLogHandler(os.Stdout, cfg.LogLevel))
	ctx, cancel := context.WithTimeout(context.Background(), coldStartTimeout)
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	cancel()
	if err != nil {
		config.Exit("load the AWS configuration", err)
	}
	db := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		if cfg.DynamoDBEndpoint != "" {
			o.DisableValidateResponseChecksum = true // emulators send no CRC32 header
		}
	}, dynamostore.ClientOptions(cfg.DynamoDBEndpoint))
	sqsClient := sqs.NewFromConfig(awsCfg, sqsqueue.ClientOptions(cfg.SQSEndpoint))
	taskQueue, err := sqsqueue.New(sqsqueue.Options{Client: sqsClient, QueueURL: cfg.TaskQueueURL})
	if err != nil {
		config.Exit("build the task queue", err)
	}
	deadLetter, err := sqsqueue.New(sqsqueue.Options{Client: sqsClient, QueueURL: cfg.DeadLetterURL})
	if err != nil {
		config.Exit("build the dead-letter queue", err)
	}
	lane, err := newLane(awsCfg, cfg)
	if err != nil {
		config.Exit("build the upload lane's S3 engine", err)
	}
	s, err := newSweeper(cfg, dynamostore.New(db, cfg.TableName, dynamostore.Options{}), taskQueue, deadLetter, lane, logger)
	if err != nil {
		config.Exit("compose the sweeper", err)
	}
	logger.Info("cold start", "table", cfg.TableName, "emulated", cfg.DynamoDBEndpoint != "", "uploadLane", lane != nil)
	lambda.Start(s.Handle)
}

// sweeper is the function's handler.
type sweeper struct {
	duties []sweep.Duty
	now    func() time.Time
	log    *slog.Logger
}

// newLane builds the upload lane's configuration (nil without its buckets):
// the S3 engine over the staging and record buckets (checksums only where an
// operation requires them, as /mcp's and the scan gate's), and GuardDuty as
// the scanner when it is the engine.
func newLane(awsCfg aws.Config, cfg Config) (*server.LaneConfig, error) {
	if cfg.StagingBucket == "" {
		return nil, nil
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		if cfg.S3Endpoint != "" {
			blob.LocalClientOptions(cfg.S3Endpoint)(o)
		}
	})
	buckets := blob.Buckets{Staging: cfg.StagingBucket, Record: cfg.RecordBucket}
	eng, err := blob.New(client, buckets, blob.Options{})
	if err != nil {
		return nil, err
	}
	lane := &server.LaneConfig{Blob: eng, Buckets: buckets}
	if cfg.ScannerEngine == "guardduty" {
		if lane.Scanner, err = guardduty.New(cfg.StagingBucket); err != nil {
			return nil, err
		}
	}
	return lane, nil
}

// newSweeper composes the sweeper exactly as the function runs it: the
// composition of /mcp (server.New) with the task queue to re-enqueue on,
// the dead-letter queue to read and the upload lane (nil: none), whose
// Duties it runs. Tests build theirs through it too.
func newSweeper(cfg Config, st store.Store, tasks queue.Sender, deadLetter queue.Consumer, lane *server.LaneConfig, logger *slog.Logger) (*sweeper, error) {
	key := make([]byte, config.MinKeyBytes) // seals nothing: see config.go
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	srv, err := server.New(server.Config{
		Store:          st,
		CursorKey:      key,
		AuditRetention: cfg.AuditRetention,
		Logger:         logger,
		TaskQueue:      tasks,
		TaskDeadLetter: deadLetter,
		Lane:           lane,
	})
	if err != nil {
		return nil, err
	}
	return &sweeper{duties: srv.Duties, now: time.Now, log: logger}, nil
}

// Handle runs one sweep for a scheduled event.
func (s *sweeper) Handle(ctx context.Context, ev events.EventBridgeEvent) error {
	start := s.now()
	reports, err := sweep.Run(ctx, s.duties, start)
	total := 0
	for _, r := range reports {
		for _, action := range slices.Sorted(maps.Keys(r.Actions)) {
			n := r.Actions[action]
			total += n
			s.log.InfoContext(ctx, "sweep action", "duty", r.Duty, "action", action, "count", n)
		}
	}
	attrs := []any{"duties", len(reports), "actions", total, "scheduled", ev.Time, "durationMs", time.Since(start).Milliseconds()}
	if err != nil {
		s.log.ErrorContext(ctx, "sweep", append(attrs, "err", err.Error())...)
		return fmt.Errorf("sweep: %w", err)
	}
	s.log.InfoContext(ctx, "sweep", attrs...)
	return nil
}
