package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testRoleARN = "arn:aws:iam::123456789012:role/custody-prod-UploadSignerRole-1ABC"

const testSecretARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:custody-cursor-key-AbCdEf"

// awsEnv is a valid environment on AWS.
func awsEnv() map[string]string {
	return map[string]string{
		"DYNAMODB_TABLE":        "custody-prod-Table-1ABC",
		"RESPONSE_STREAMING":    "true",
		"PUBLIC_BASE_URL":       "https://mcp.firm.example/",
		"CURSOR_KEY_SECRET_ARN": testSecretARN,
		"LOCAL_CURSOR_KEY_HEX":  "",
		"DYNAMODB_ENDPOINT":     "",
		"ALLOWED_ORIGINS":       "https://app.firm.example, https://inspector.firm.example:6274",
		"MAX_BODY_BYTES":        "",
		"LOG_LEVEL":             "WARN",
	}
}

func with(env map[string]string, kv ...string) func(string) string {
	m := map[string]string{}
	for k, v := range env {
		m[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestLoadConfigOnAWS(t *testing.T) {
	got, err := LoadConfig(with(awsEnv()))
	if err != nil {
		t.Fatalf("LoadConfig() error = %v", err)
	}
	want := Config{
		TableName: "custody-prod-Table-1ABC", Streaming: true,
		PublicBaseURL: "https://mcp.firm.example", ResourceURL: "https://mcp.firm.example/mcp",
		CursorKeySecretARN: testSecretARN,
		AllowedOrigins:     []string{"https://app.firm.example", "https://inspector.firm.example:6274"},
		MaxBodyBytes:       1 << 20, LogLevel: slog.LevelWarn,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LoadConfig() mismatch (-want +got):\n%s", diff)
	}
	if got.ServerLogLevel() != slog.LevelWarn {
		t.Errorf("ServerLogLevel() = %v, want WARN", got.ServerLogLevel())
	}
}

// The upload lane's variables: both buckets and the UploadSigner role on
// AWS; an emulator run may sign with its own credentials against a local
// S3 server.
func TestLoadConfigOfTheUploadLane(t *testing.T) {
	got, err := LoadConfig(with(awsEnv(), "STAGING_BUCKET", "custody-prod-staging", "RECORD_BUCKET", "custody-prod-record",
		"UPLOAD_SIGNER_ROLE_ARN", testRoleARN))
	if err != nil {
		t.Fatalf("LoadConfig() error = %v", err)
	}
	if !got.LaneEnabled() || got.StagingBucket != "custody-prod-staging" || got.RecordBucket != "custody-prod-record" || got.UploadSignerRoleARN != testRoleARN {
		t.Errorf("LoadConfig() = %+v", got)
	}
	emu, err := LoadConfig(with(awsEnv(), "CURSOR_KEY_SECRET_ARN", "", "DYNAMODB_ENDPOINT", "http://127.0.0.1:8000",
		"LOCAL_CURSOR_KEY_HEX", testCursorKeyHex, "PUBLIC_BASE_URL", "http://127.0.0.1:3000/prod",
		"STAGING_BUCKET", "custody-staging", "RECORD_BUCKET", "custody-record", "S3_ENDPOINT", "http://127.0.0.1:9000"))
	if err != nil || !emu.LaneEnabled() || emu.S3Endpoint != "http://127.0.0.1:9000" || emu.UploadSignerRoleARN != "" {
		t.Errorf("LoadConfig() emulated = %+v, %v", emu, err)
	}
	if off, err := LoadConfig(with(awsEnv())); err != nil || off.LaneEnabled() {
		t.Errorf("without the buckets: LaneEnabled() = %v, %v; want false", off.LaneEnabled(), err)
	}
}

const testQueueURL = "https://sqs.us-east-1.amazonaws.com/123456789012/custody-prod-TaskQueue-AbC1"

// The task queue: its URL on AWS serves tasks; an emulator run may name an
// emulator's queue and endpoint; without it there are no tasks.
func TestLoadConfigOfTheTaskQueue(t *testing.T) {
	got, err := LoadConfig(with(awsEnv(), "TASK_QUEUE_URL", testQueueURL))
	if err != nil || got.TaskQueueURL != testQueueURL || got.SQSEndpoint != "" {
		t.Errorf("LoadConfig() = %+v, %v; want the queue URL", got, err)
	}
	emu, err := LoadConfig(with(awsEnv(), "CURSOR_KEY_SECRET_ARN", "", "DYNAMODB_ENDPOINT", "http://127.0.0.1:8000",
		"LOCAL_CURSOR_KEY_HEX", testCursorKeyHex, "PUBLIC_BASE_URL", "http://127.0.0.1:3000",
		"TASK_QUEUE_URL", "http://127.0.0.1:9324/000000000000/tasks", "SQS_ENDPOINT", "http://127.0.0.1:9324"))
	if err != nil || emu.SQSEndpoint != "http://127.0.0.1:9324" {
		t.Errorf("LoadConfig() emulated = %+v, %v", emu, err)
	}
}

// The transport's per-request line is kept below its floor only for a
// request that did not simply succeed.
func TestRequestLinesKeepOnlyTheLinesOfRequestsThatDidNotSimplySucceed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		level   slog.Level
		message string
		attrs   []any
		kept    bool
	}{
		{"a refusal", slog.LevelInfo, "mcp request", []any{"method", "tools/call", "outcome", "VALIDATION"}, true},
		{"a JSON-RPC error", slog.LevelInfo, "mcp request", []any{"method", "tasks/get", "outcome", "rpc:-32602"}, true},
		{"a created task", slog.LevelInfo, "mcp request", []any{"method", "tools/call", "outcome", "task:created"}, true},
		{"a plain success", slog.LevelInfo, "mcp request", []any{"method", "tools/call", "outcome", "ok"}, false},
		{"a notification", slog.LevelInfo, "mcp request", []any{"method", "notifications/initialized", "outcome", "accepted"}, false},
		{"a request without an audit row", slog.LevelInfo, "mcp request", []any{"status", 401}, false},
		{"another INFO line", slog.LevelInfo, "something else", []any{"outcome", "VALIDATION"}, false},
		{"a warning", slog.LevelWarn, "commit failed", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			log := slog.New(requestLines(slog.NewJSONHandler(&b, nil), slog.LevelWarn))
			log.Log(context.Background(), tc.level, tc.message, tc.attrs...)
			if got := b.Len() > 0; got != tc.kept {
				t.Errorf("line kept = %v, want %v (%q)", got, tc.kept, b.String())
			}
		})
	}
}

func TestLoadConfigEmulated(t *testing.T) {
	got, err := LoadConfig(with(awsEnv(), "CURSOR_KEY_SECRET_ARN", "", "DYNAMODB_ENDPOINT", "http://127.0.0.1:8000",
		"LOCAL_CURSOR_KEY_HEX", testCursorKeyHex, "PUBLIC_BASE_URL", "http://127.0.0.1:3000/prod",
		"RESPONSE_STREAMING", "false", "LOG_LEVEL", "", "MAX_BODY_BYTES", "4096", "ALLOWED_ORIGINS", ""))
	if err != nil {
		t.Fatalf("LoadConfig() error = %v", err)
	}
	if got.Streaming || got.ResourceURL != "http://127.0.0.1:3000/prod/mcp" || len(got.LocalCursorKey) != 32 ||
		got.MaxBodyBytes != 4096 || got.LogLevel != slog.LevelInfo || got.AllowedOrigins != nil {
		t.Errorf("LoadConfig() = %+v", got)
	}
	if got.ServerLogLevel() != slog.LevelWarn {
		t.Errorf("ServerLogLevel() at INFO = %v, want WARN (one INFO line per invocation)", got.ServerLogLevel())
	}
	got.LogLevel = slog.LevelDebug
	if got.ServerLogLevel() != slog.LevelDebug {
		t.Errorf("ServerLogLevel() at DEBUG = %v, want DEBUG", got.ServerLogLevel())
	}
}

// A missing or invalid variable fails the cold start with an error that
// names it (main logs that one line and exits 1).
func TestLoadConfigNamesEachBadVariable(t *testing.T) {
	tests := []struct {
		name string
		kv   []string
		want []string
	}{
		{"missing table", []string{"DYNAMODB_TABLE", ""}, []string{"DYNAMODB_TABLE"}},
		{"table name DynamoDB refuses", []string{"DYNAMODB_TABLE", "a b"}, []string{"DYNAMODB_TABLE"}},
		{"streaming unsaid", []string{"RESPONSE_STREAMING", ""}, []string{"RESPONSE_STREAMING"}},
		{"streaming not a boolean", []string{"RESPONSE_STREAMING", "yes"}, []string{"RESPONSE_STREAMING"}},
		{"base URL missing", []string{"PUBLIC_BASE_URL", ""}, []string{"PUBLIC_BASE_URL"}},
		{"base URL over http on AWS", []string{"PUBLIC_BASE_URL", "http://mcp.firm.example"}, []string{"PUBLIC_BASE_URL"}},
		{"base URL with a query", []string{"PUBLIC_BASE_URL", "https://mcp.firm.example/?x=1"}, []string{"PUBLIC_BASE_URL"}},
		{"no key source", []string{"CURSOR_KEY_SECRET_ARN", ""}, []string{"CURSOR_KEY_SECRET_ARN"}},
		{"not a secret ARN", []string{"CURSOR_KEY_SECRET_ARN", "arn:aws:ssm:us-east-1:123456789012:parameter/k"}, []string{"CURSOR_KEY_SECRET_ARN"}},
		{"local key on AWS", []string{"CURSOR_KEY_SECRET_ARN", "", "LOCAL_CURSOR_KEY_HEX", testCursorKeyHex}, []string{"LOCAL_CURSOR_KEY_HEX"}},
		{"local key beside the secret", []string{"DYNAMODB_ENDPOINT", "http://127.0.0.1:8000", "LOCAL_CURSOR_KEY_HEX", testCursorKeyHex}, []string{"LOCAL_CURSOR_KEY_HEX"}},
		{"local key too short", []string{"CURSOR_KEY_SECRET_ARN", "", "DYNAMODB_ENDPOINT", "http://127.0.0.1:8000", "LOCAL_CURSOR_KEY_HEX", "abcd"}, []string{"LOCAL_CURSOR_KEY_HEX"}},
		{"endpoint not a URL", []string{"DYNAMODB_ENDPOINT", "127.0.0.1:8000"}, []string{"DYNAMODB_ENDPOINT"}},
		{"origin with a path", []string{"ALLOWED_ORIGINS", "https://app.firm.example/x"}, []string{"ALLOWED_ORIGINS"}},
		{"body limit over 1 MiB", []string{"MAX_BODY_BYTES", "4194304"}, []string{"MAX_BODY_BYTES"}},
		{"body limit not a number", []string{"MAX_BODY_BYTES", "1MiB"}, []string{"MAX_BODY_BYTES"}},
		{"log level", []string{"LOG_LEVEL", "TRACE"}, []string{"LOG_LEVEL"}},
		{"one of the lane's buckets", []string{"STAGING_BUCKET", "custody-staging"}, []string{"STAGING_BUCKET"}},
		{"the lane's buckets without the UploadSigner role", []string{"STAGING_BUCKET", "custody-staging", "RECORD_BUCKET", "custody-record"}, []string{"UPLOAD_SIGNER_ROLE_ARN"}},
		{"one bucket for both", []string{"STAGING_BUCKET", "custody-x", "RECORD_BUCKET", "custody-x", "UPLOAD_SIGNER_ROLE_ARN", testRoleARN}, []string{"RECORD_BUCKET"}},
		{"a bucket name S3 refuses", []string{"STAGING_BUCKET", "Custody_Staging", "RECORD_BUCKET", "custody-record", "UPLOAD_SIGNER_ROLE_ARN", testRoleARN}, []string{"STAGING_BUCKET"}},
		{"a role ARN that is a user's", []string{"STAGING_BUCKET", "custody-staging", "RECORD_BUCKET", "custody-record", "UPLOAD_SIGNER_ROLE_ARN", "arn:aws:iam::123456789012:user/signer"}, []string{"UPLOAD_SIGNER_ROLE_ARN"}},
		{"a role without the buckets", []string{"UPLOAD_SIGNER_ROLE_ARN", testRoleARN}, []string{"STAGING_BUCKET"}},
		{"a local S3 endpoint on AWS", []string{"STAGING_BUCKET", "custody-staging", "RECORD_BUCKET", "custody-record", "UPLOAD_SIGNER_ROLE_ARN", testRoleARN, "S3_ENDPOINT", "http://127.0.0.1:9000"}, []string{"S3_ENDPOINT"}},
		{"a task queue URL that is not SQS's", []string{"TASK_QUEUE_URL", "https://queue.firm.example/123456789012/tasks"}, []string{"TASK_QUEUE_URL"}},
		{"an SQS endpoint on AWS", []string{"TASK_QUEUE_URL", testQueueURL, "SQS_ENDPOINT", "http://127.0.0.1:9324"}, []string{"SQS_ENDPOINT"}},
		{"an SQS endpoint without a queue", []string{"CURSOR_KEY_SECRET_ARN", "", "DYNAMODB_ENDPOINT", "http://127.0.0.1:8000", "LOCAL_CURSOR_KEY_HEX", testCursorKeyHex,
			"PUBLIC_BASE_URL", "http://127.0.0.1:3000", "SQS_ENDPOINT", "http://127.0.0.1:9324"}, []string{"SQS_ENDPOINT"}},
		{"several at once, in order", []string{"DYNAMODB_TABLE", "", "LOG_LEVEL", "LOUD", "RESPONSE_STREAMING", ""},
			[]string{"DYNAMODB_TABLE", "RESPONSE_STREAMING", "LOG_LEVEL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadConfig(with(awsEnv(), tt.kv...))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("LoadConfig() error = %v, want a *ConfigError", err)
			}
			if diff := cmp.Diff(tt.want, ce.Names()); diff != "" {
				t.Errorf("ConfigError.Names() mismatch (-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q spans lines; the cold start logs it as one line", err)
			}
		})
	}
}

func TestCursorKeyFromTheSecret(t *testing.T) {
	cfg, err := LoadConfig(with(awsEnv()))
	if err != nil {
		t.Fatal(err)
	}
	fetch := func(value string, err error) func(context.Context, string) (string, error) {
		return func(_ context.Context, arn string) (string, error) {
			if arn != testSecretARN {
				t.Errorf("fetched %q, want %q", arn, testSecretARN)
			}
			return value, err
		}
	}
	key, err := cfg.CursorKey(context.Background(), fetch(testCursorKeyHex+"\n", nil))
	if err != nil || len(key) != 32 {
		t.Fatalf("CursorKey() = %d bytes, %v; want 32 bytes", len(key), err)
	}
	short := strings.Repeat("ab", 16) // 16 bytes
	for name, f := range map[string]func(context.Context, string) (string, error){
		"unreadable": fetch("", errors.New("AccessDeniedException")),
		"too short":  fetch(short, nil),
		"not hex":    fetch("not-a-key-not-a-key-not-a-key-not-a-key-not-a-key-not-a-key-1234", nil),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := cfg.CursorKey(context.Background(), f)
			var ve *VarError
			if !errors.As(err, &ve) || ve.Name != "CURSOR_KEY_SECRET_ARN" {
				t.Fatalf("CursorKey() error = %v, want a *VarError naming CURSOR_KEY_SECRET_ARN", err)
			}
			if strings.Contains(err.Error(), short) || strings.Contains(err.Error(), "not-a-key") {
				t.Errorf("error %q quotes the secret's value", err)
			}
		})
	}
}
