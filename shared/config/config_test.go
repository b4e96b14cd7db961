package config_test

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/config"
)

// Every problem is collected, in the order checked, into one *config.Error
// naming each variable on one line; a clean read is no error.
func TestProblemsNameEachBadVariableInOrder(t *testing.T) {
	var p config.Problems
	p.Table("DYNAMODB_TABLE", "")
	p.Endpoint("DYNAMODB_ENDPOINT", "127.0.0.1:8000")
	p.QueueURL("TASK_QUEUE_URL", "https://evil.example/123456789012/tasks", true, false)
	p.LogLevel("LOG_LEVEL", "LOUD")
	p.RetentionDays("AUDIT_RETENTION_DAYS", "36501")
	var ce *config.Error
	if err := p.Err(); !errors.As(err, &ce) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Err() = %v, want one *config.Error on one line", err)
	}
	want := []string{"DYNAMODB_TABLE", "DYNAMODB_ENDPOINT", "TASK_QUEUE_URL", "LOG_LEVEL", "AUDIT_RETENTION_DAYS"}
	if diff := cmp.Diff(want, ce.Names()); diff != "" {
		t.Errorf("Names() (-want +got):\n%s", diff)
	}

	var ok config.Problems
	table := ok.Table("DYNAMODB_TABLE", "custody-prod-Table-1ABC")
	level := ok.LogLevel("LOG_LEVEL", "debug")
	days := ok.RetentionDays("AUDIT_RETENTION_DAYS", "30")
	ok.QueueURL("TASK_QUEUE_URL", "", false, false)
	ok.QueueURL("TASK_QUEUE_URL", "http://127.0.0.1:9324/000000000000/tasks", true, true)
	if err := ok.Err(); err != nil || table != "custody-prod-Table-1ABC" || level != slog.LevelDebug || days != 30*24*time.Hour {
		t.Errorf("a clean read = %v, %q, %v, %v", err, table, level, days)
	}
}

// A key's error says what is wrong and never quotes the key.
func TestDecodeKeyNeverQuotesTheKey(t *testing.T) {
	for _, s := range []string{"not hex at all, secret", "abcd"} {
		if _, err := config.DecodeKey(s); err == nil || strings.Contains(err.Error(), s) {
			t.Errorf("DecodeKey(%q) = %v, want an error that does not quote the key", s, err)
		}
	}
	key, err := config.DecodeKey(" " + strings.Repeat("0a", 32) + "\n")
	if err != nil || len(key) != 32 {
		t.Errorf("DecodeKey(64 hex digits) = %d bytes, %v", len(key), err)
	}
	if !config.SecretARN("arn:aws:secretsmanager:us-east-1:123456789012:secret:k-AbC") || config.SecretARN("arn:aws:ssm:us-east-1:123456789012:parameter/k") {
		t.Error("SecretARN accepts the wrong shapes")
	}
}
