package main

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/config"
)

const (
	testQueueURL = "https://sqs.us-east-1.amazonaws.com/123456789012/custody-prod-TaskQueue-AbC1"
	testDLQURL   = "https://sqs.us-east-1.amazonaws.com/123456789012/custody-prod-TaskDeadLetterQueue-AbC1"
)

func env(kv ...string) func(string) string {
	m := map[string]string{"DYNAMODB_TABLE": "custody-prod-Table-1ABC", "TASK_QUEUE_URL": testQueueURL, "TASK_DEAD_LETTER_QUEUE_URL": testDLQURL}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestLoadConfigOnAWS(t *testing.T) {
	got, err := LoadConfig(env())
	if err != nil {
		t.Fatal(err)
	}
	want := Config{TableName: "custody-prod-Table-1ABC", TaskQueueURL: testQueueURL, DeadLetterURL: testDLQURL, LogLevel: slog.LevelInfo}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LoadConfig() (-want +got):\n%s", diff)
	}
	emu, err := LoadConfig(env("DYNAMODB_ENDPOINT", "http://127.0.0.1:8000", "SQS_ENDPOINT", "http://127.0.0.1:9324",
		"TASK_QUEUE_URL", "http://127.0.0.1:9324/000000000000/tasks", "TASK_DEAD_LETTER_QUEUE_URL", "http://127.0.0.1:9324/000000000000/tasks-dlq"))
	if err != nil || emu.SQSEndpoint != "http://127.0.0.1:9324" {
		t.Errorf("LoadConfig() emulated = %+v, %v", emu, err)
	}
}

func TestLoadConfigNamesEachBadVariable(t *testing.T) {
	for _, tc := range []struct {
		name string
		kv   []string
		want []string
	}{
		{"missing table", []string{"DYNAMODB_TABLE", ""}, []string{"DYNAMODB_TABLE"}},
		{"missing queues", []string{"TASK_QUEUE_URL", "", "TASK_DEAD_LETTER_QUEUE_URL", ""}, []string{"TASK_QUEUE_URL", "TASK_DEAD_LETTER_QUEUE_URL"}},
		{"an emulator's queue on AWS", []string{"TASK_QUEUE_URL", "http://127.0.0.1:9324/000000000000/tasks"}, []string{"TASK_QUEUE_URL"}},
		{"one queue for both", []string{"TASK_DEAD_LETTER_QUEUE_URL", testQueueURL}, []string{"TASK_DEAD_LETTER_QUEUE_URL"}},
		{"an SQS endpoint on AWS", []string{"SQS_ENDPOINT", "http://127.0.0.1:9324"}, []string{"SQS_ENDPOINT"}},
		{"log level", []string{"LOG_LEVEL", "LOUD"}, []string{"LOG_LEVEL"}},
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
