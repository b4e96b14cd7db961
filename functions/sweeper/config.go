package main

import (
	"log/slog"
	"time"

	"github.com/custodymcp/custody/shared/config"
)

// The environment of the function. template.yaml sets every one of them (a
// test derives this list from the getenv calls below and holds the
// template to it); the emulator-only ones are declared there empty.
//
//	DYNAMODB_TABLE              required. The DynamoDB table.
//	DYNAMODB_ENDPOINT           emulator runs only: DynamoDB's endpoint replaced. Empty on AWS.
//	TASK_QUEUE_URL              required. The task queue (its QueueUrl): a task whose lease lapsed
//	                            or whose message was lost is sent there again.
//	TASK_DEAD_LETTER_QUEUE_URL  required. The task queue's dead-letter queue, read by the dead-letter
//	                            duty (tasks.Service.DeadLetterDuty).
//	SQS_ENDPOINT                emulator runs only: SQS's endpoint replaced (e.g. fauxqs). Refused
//	                            unless DYNAMODB_ENDPOINT is set.
//	AUDIT_RETENTION_DAYS        optional. The TTL of the audit rows a sweep writes (a task failed
//	                            by the sweeper), 1 to 36500 days; default 2555.
//	LOG_LEVEL                   optional. DEBUG, INFO, WARN or ERROR; default INFO: one "sweep"
//	                            line per invocation and one "sweep action" line per kind of action.
//	STAGING_BUCKET              optional, with RECORD_BUCKET: the upload lane's buckets; set, the
//	RECORD_BUCKET               sweep runs the lane's duties too (the copy to verified/, the open
//	                            uploads' lapse, the no-verdict timeout; shared/uploads,
//	                            shared/scan/gate).
//	SCANNER_ENGINE              guardduty or off (empty: off): the engine the no-verdict duty names
//	                            (its verdict comes from the object's GuardDuty tag, or is
//	                            scan_failed). Refused without the buckets unless off or empty.
//	S3_ENDPOINT                 emulator runs only: the local S3 server's base URL (path-style).
//
// The sweeper seals nothing (it serves no list and no request state), so it
// reads no cursor key: the composition gets a random one, and the secret
// stays out of the function's reach.

// Config is the function's configuration, read once at cold start.
type Config struct {
	TableName        string
	DynamoDBEndpoint string
	TaskQueueURL     string
	DeadLetterURL    string
	SQSEndpoint      string
	AuditRetention   time.Duration
	LogLevel         slog.Level
	// StagingBucket and RecordBucket name the upload lane's buckets ("":
	// no lane); ScannerEngine is "guardduty" or "" (off); S3Endpoint is
	// "" on AWS.
	StagingBucket, RecordBucket string
	ScannerEngine               string
	S3Endpoint                  string
}

// LoadConfig reads the configuration through getenv. Every problem is
// collected; a non-nil error is a *config.Error naming each offending
// variable.
func LoadConfig(getenv func(string) string) (Config, error) {
	var c Config
	var p config.Problems
	c.TableName = p.Table("DYNAMODB_TABLE", getenv("DYNAMODB_TABLE"))
	c.DynamoDBEndpoint = p.Endpoint("DYNAMODB_ENDPOINT", getenv("DYNAMODB_ENDPOINT"))
	emulated := c.DynamoDBEndpoint != ""
	c.SQSEndpoint = p.Endpoint("SQS_ENDPOINT", getenv("SQS_ENDPOINT"))
	if c.SQSEndpoint != "" && !emulated {
		p.Bad("SQS_ENDPOINT", "is refused unless DYNAMODB_ENDPOINT is set (emulator runs only)")
	}
	c.TaskQueueURL = p.QueueURL("TASK_QUEUE_URL", getenv("TASK_QUEUE_URL"), true, emulated)
	c.DeadLetterURL = p.QueueURL("TASK_DEAD_LETTER_QUEUE_URL", getenv("TASK_DEAD_LETTER_QUEUE_URL"), true, emulated)
	if c.DeadLetterURL != "" && c.DeadLetterURL == c.TaskQueueURL {
		p.Bad("TASK_DEAD_LETTER_QUEUE_URL", "must differ from TASK_QUEUE_URL")
	}
	c.AuditRetention = p.RetentionDays("AUDIT_RETENTION_DAYS", getenv("AUDIT_RETENTION_DAYS"))
	c.LogLevel = p.LogLevel("LOG_LEVEL", getenv("LOG_LEVEL"))
	c.StagingBucket, c.RecordBucket = p.Buckets("STAGING_BUCKET", getenv("STAGING_BUCKET"), "RECORD_BUCKET", getenv("RECORD_BUCKET"), false)
	switch e := getenv("SCANNER_ENGINE"); e {
	case "", "off":
	case "guardduty":
		c.ScannerEngine = e
		if c.StagingBucket == "" {
			p.Bad("SCANNER_ENGINE", "needs the upload lane's buckets (STAGING_BUCKET, RECORD_BUCKET)")
		}
	default:
		p.Bad("SCANNER_ENGINE", "must be guardduty or off")
	}
	c.S3Endpoint = p.Endpoint("S3_ENDPOINT", getenv("S3_ENDPOINT"))
	switch {
	case c.S3Endpoint != "" && !emulated:
		p.Bad("S3_ENDPOINT", "is refused unless DYNAMODB_ENDPOINT is set (emulator runs only)")
	case c.S3Endpoint != "" && c.StagingBucket == "":
		p.Bad("S3_ENDPOINT", "needs the upload lane's buckets (STAGING_BUCKET, RECORD_BUCKET)")
	}
	if err := p.Err(); err != nil {
		return Config{}, err
	}
	return c, nil
}
