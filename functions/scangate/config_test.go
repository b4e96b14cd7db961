package main

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/config"
	"github.com/custodymcp/custody/shared/scan/clamd"
)

func awsEnv() map[string]string {
	return map[string]string{"DYNAMODB_TABLE": "custody", "STAGING_BUCKET": "custody-prod-staging",
		"RECORD_BUCKET": "custody-prod-record", "SCANNER_ENGINE": "guardduty", "LOG_LEVEL": "INFO"}
}

func with(env map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func load(env map[string]string) (Config, error) {
	return LoadConfig(func(k string) string { return env[k] })
}

func TestLoadConfigReadsTheDeployedAndTheEmulatedEnvironment(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want Config
	}{
		{"the deployed stack with GuardDuty", awsEnv(), Config{TableName: "custody", StagingBucket: "custody-prod-staging",
			RecordBucket: "custody-prod-record", Engine: EngineGuardDuty, LogLevel: slog.LevelInfo}},
		{"the deployed stack with the lane off", with(awsEnv(), "SCANNER_ENGINE", "off", "LOG_LEVEL", ""), Config{TableName: "custody",
			StagingBucket: "custody-prod-staging", RecordBucket: "custody-prod-record", Engine: EngineOff, LogLevel: slog.LevelInfo}},
		{"an emulator run with clamd", with(awsEnv(), "SCANNER_ENGINE", "clamd=127.0.0.1:3310,max=25M",
			"DYNAMODB_ENDPOINT", "http://127.0.0.1:8000", "S3_ENDPOINT", "http://127.0.0.1:9000", "LOG_LEVEL", "debug"),
			Config{TableName: "custody", StagingBucket: "custody-prod-staging", RecordBucket: "custody-prod-record", Engine: "clamd",
				Clamd: clamd.Options{Addr: "127.0.0.1:3310", Max: 25 << 20}, LogLevel: slog.LevelDebug,
				DynamoDBEndpoint: "http://127.0.0.1:8000", S3Endpoint: "http://127.0.0.1:9000"}},
		{"an emulator run with the signature engine", with(awsEnv(), "SCANNER_ENGINE", "signature", "DYNAMODB_ENDPOINT", "http://127.0.0.1:8000"),
			Config{TableName: "custody", StagingBucket: "custody-prod-staging", RecordBucket: "custody-prod-record", Engine: EngineSignature,
				LogLevel: slog.LevelInfo, DynamoDBEndpoint: "http://127.0.0.1:8000"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := load(tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("LoadConfig (-want +got):\n%s", diff)
			}
		})
	}
}

// Every missing or invalid variable is named; a byte-scanning engine on
// AWS is refused (the deployed engine is GuardDuty: no bucket notifies the
// function).
func TestLoadConfigNamesEveryBadVariable(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"nothing set", map[string]string{}, []string{"DYNAMODB_TABLE", "STAGING_BUCKET", "RECORD_BUCKET", "SCANNER_ENGINE"}},
		{"the signature engine on AWS", with(awsEnv(), "SCANNER_ENGINE", "signature"), []string{"SCANNER_ENGINE"}},
		{"clamd on AWS", with(awsEnv(), "SCANNER_ENGINE", "clamd=10.0.0.1:3310"), []string{"SCANNER_ENGINE"}},
		{"an unknown engine", with(awsEnv(), "SCANNER_ENGINE", "clamav"), []string{"SCANNER_ENGINE"}},
		{"clamd without a port", with(awsEnv(), "SCANNER_ENGINE", "clamd=localhost", "DYNAMODB_ENDPOINT", "http://127.0.0.1:8000"), []string{"SCANNER_ENGINE"}},
		{"clamd with a bad max", with(awsEnv(), "SCANNER_ENGINE", "clamd=127.0.0.1:3310,max=lots", "DYNAMODB_ENDPOINT", "http://127.0.0.1:8000"), []string{"SCANNER_ENGINE"}},
		{"one bucket for both", with(awsEnv(), "RECORD_BUCKET", "custody-prod-staging"), []string{"RECORD_BUCKET"}},
		{"a bucket name S3 refuses", with(awsEnv(), "STAGING_BUCKET", "Custody_Staging"), []string{"STAGING_BUCKET"}},
		{"a local S3 endpoint on AWS", with(awsEnv(), "S3_ENDPOINT", "http://127.0.0.1:9000"), []string{"S3_ENDPOINT"}},
		{"a loud log level", with(awsEnv(), "LOG_LEVEL", "LOUD"), []string{"LOG_LEVEL"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(tc.env)
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("LoadConfig = %v, want a *config.Error", err)
			}
			if diff := cmp.Diff(tc.want, ce.Names()); diff != "" {
				t.Errorf("variables named (-want +got):\n%s", diff)
			}
		})
	}
}
