package main

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/config"
)

const testSecretARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:custody-cursor-key-AbCdEf"

func env(kv ...string) func(string) string {
	m := map[string]string{"DYNAMODB_TABLE": "custody-prod-Table-1ABC", "CURSOR_KEY_SECRET_ARN": testSecretARN}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestLoadConfigOnAWSAndEmulated(t *testing.T) {
	got, err := LoadConfig(env("AUDIT_RETENTION_DAYS", "30", "LOG_LEVEL", "warn"))
	want := Config{TableName: "custody-prod-Table-1ABC", CursorKeySecretARN: testSecretARN,
		AuditRetention: 30 * 24 * time.Hour, LogLevel: slog.LevelWarn}
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LoadConfig() on AWS (-want +got):\n%s", diff)
	}
	emu, err := LoadConfig(env("CURSOR_KEY_SECRET_ARN", "", "DYNAMODB_ENDPOINT", "http://127.0.0.1:8000", "LOCAL_CURSOR_KEY_HEX", cursorKeyHex))
	if err != nil || len(emu.LocalCursorKey) != 32 || emu.LogLevel != slog.LevelInfo {
		t.Errorf("LoadConfig() emulated = %+v, %v", emu, err)
	}
}

// A missing or invalid variable fails the cold start with an error that
// names it.
func TestLoadConfigNamesEachBadVariable(t *testing.T) {
	for _, tc := range []struct {
		name string
		kv   []string
		want []string
	}{
		{"missing table", []string{"DYNAMODB_TABLE", ""}, []string{"DYNAMODB_TABLE"}},
		{"endpoint not a URL", []string{"DYNAMODB_ENDPOINT", "127.0.0.1:8000"}, []string{"DYNAMODB_ENDPOINT"}},
		{"no key source", []string{"CURSOR_KEY_SECRET_ARN", ""}, []string{"CURSOR_KEY_SECRET_ARN"}},
		{"not a secret ARN", []string{"CURSOR_KEY_SECRET_ARN", "arn:aws:ssm:us-east-1:123456789012:parameter/k"}, []string{"CURSOR_KEY_SECRET_ARN"}},
		{"local key on AWS", []string{"CURSOR_KEY_SECRET_ARN", "", "LOCAL_CURSOR_KEY_HEX", cursorKeyHex}, []string{"LOCAL_CURSOR_KEY_HEX"}},
		{"local key beside the secret", []string{"DYNAMODB_ENDPOINT", "http://127.0.0.1:8000", "LOCAL_CURSOR_KEY_HEX", cursorKeyHex}, []string{"LOCAL_CURSOR_KEY_HEX"}},
		{"local key too short", []string{"CURSOR_KEY_SECRET_ARN", "", "DYNAMODB_ENDPOINT", "http://127.0.0.1:8000", "LOCAL_CURSOR_KEY_HEX", "abcd"}, []string{"LOCAL_CURSOR_KEY_HEX"}},
		{"retention out of range", []string{"AUDIT_RETENTION_DAYS", "0"}, []string{"AUDIT_RETENTION_DAYS"}},
		{"log level", []string{"LOG_LEVEL", "TRACE"}, []string{"LOG_LEVEL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadConfig(env(tc.kv...))
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("LoadConfig() = %v, want a *config.Error", err)
			}
			if diff := cmp.Diff(tc.want, ce.Names()); diff != "" {
				t.Errorf("the variables named (-want +got):\n%s", diff)
			}
		})
	}
}
