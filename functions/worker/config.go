package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/custodymcp/custody/shared/config"
)

// The environment of the function. template.yaml sets every one of them (a
// test derives this list from the getenv calls below and holds the
// template to it); the emulator-only ones are declared there empty, so
// `sam local invoke --env-vars` may set them.
//
//	DYNAMODB_TABLE         required. The DynamoDB table (dynamostore.CreateTableInput's shape).
//	DYNAMODB_ENDPOINT      emulator runs only: an http(s) base URL replacing DynamoDB's regional
//	                       endpoint. Empty on AWS.
//	CURSOR_KEY_SECRET_ARN  the Secrets Manager secret of the cursor sealing key, the /mcp
//	                       function's own (hex, at least 32 bytes): the worker runs the governed
//	                       pipeline of the same composition, so whatever it seals opens on /mcp.
//	                       Required unless LOCAL_CURSOR_KEY_HEX is set.
//	LOCAL_CURSOR_KEY_HEX   emulator runs only: the key itself, hex. Refused unless
//	                       DYNAMODB_ENDPOINT is set, and together with CURSOR_KEY_SECRET_ARN.
//	AUDIT_RETENTION_DAYS   optional. The terminal audit rows' TTL, 1 to 36500 days; default 2555.
//	LOG_LEVEL              optional. DEBUG, INFO, WARN or ERROR; default INFO: one "batch" line per
//	                       invocation and one "task finished" line per outcome.
//
// The worker reads no queue: Lambda's event source mapping receives and
// deletes its messages, and it sends none (re-enqueueing is the sweeper's
// and /mcp's), so it needs no queue URL and holds no SQS permission.

// Config is the function's configuration, read once at cold start.
type Config struct {
	TableName string
	// DynamoDBEndpoint is "" on AWS.
	DynamoDBEndpoint string
	// CursorKeySecretARN names the secret holding the cursor key ("" when
	// LocalCursorKey is set).
	CursorKeySecretARN string
	// LocalCursorKey is the cursor key of an emulator run (nil on AWS).
	LocalCursorKey []byte
	// AuditRetention is the audit rows' TTL (0: the gate's default).
	AuditRetention time.Duration
	LogLevel       slog.Level
}

// LoadConfig reads the configuration through getenv (os.Getenv in main, a
// map in tests). Every problem is collected; a non-nil error is a
// *config.Error naming each offending variable.
func LoadConfig(getenv func(string) string) (Config, error) {
	var c Config
	var p config.Problems
	c.TableName = p.Table("DYNAMODB_TABLE", getenv("DYNAMODB_TABLE"))
	c.DynamoDBEndpoint = p.Endpoint("DYNAMODB_ENDPOINT", getenv("DYNAMODB_ENDPOINT"))
	emulated := c.DynamoDBEndpoint != ""

	arn, local := getenv("CURSOR_KEY_SECRET_ARN"), getenv("LOCAL_CURSOR_KEY_HEX")
	switch {
	case arn != "" && local != "":
		p.Bad("LOCAL_CURSOR_KEY_HEX", "is refused together with CURSOR_KEY_SECRET_ARN: set one")
	case arn != "":
		if !config.SecretARN(arn) {
			p.Bad("CURSOR_KEY_SECRET_ARN", "is not a Secrets Manager secret ARN (arn:<partition>:secretsmanager:<region>:<account>:secret:<name>)")
		}
		c.CursorKeySecretARN = arn
	case local != "":
		if !emulated {
			p.Bad("LOCAL_CURSOR_KEY_HEX", "is refused unless DYNAMODB_ENDPOINT is set (emulator runs only)")
		} else if key, err := config.DecodeKey(local); err != nil {
			p.Bad("LOCAL_CURSOR_KEY_HEX", "%s", err)
		} else {
			c.LocalCursorKey = key
		}
	default:
		p.Bad("CURSOR_KEY_SECRET_ARN", "is required")
	}

	c.AuditRetention = p.RetentionDays("AUDIT_RETENTION_DAYS", getenv("AUDIT_RETENTION_DAYS"))
	c.LogLevel = p.LogLevel("LOG_LEVEL", getenv("LOG_LEVEL"))
	if err := p.Err(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// CursorKey returns the cursor sealing key: LocalCursorKey in an emulator
// run, else the SecretString of CursorKeySecretARN fetched with fetch
// (lambdaio.SecretString in main), decoded with config.DecodeKey. Its
// error is a *config.VarError naming the variable the key came from.
func (c Config) CursorKey(ctx context.Context, fetch func(ctx context.Context, arn string) (string, error)) ([]byte, error) {
	if c.LocalCursorKey != nil {
		return c.LocalCursorKey, nil
	}
	s, err := fetch(ctx, c.CursorKeySecretARN)
	if err != nil {
		return nil, &config.VarError{Name: "CURSOR_KEY_SECRET_ARN", Problem: "names a secret that could not be read: " + err.Error()}
	}
	key, err := config.DecodeKey(s)
	if err != nil {
		return nil, &config.VarError{Name: "CURSOR_KEY_SECRET_ARN", Problem: "names a secret whose value " + err.Error()}
	}
	return key, nil
}
