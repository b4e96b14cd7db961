package main

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/blob/s3local"
	"github.com/custodymcp/custody/shared/config"
	"github.com/custodymcp/custody/shared/lambdaio"
	"github.com/custodymcp/custody/shared/queue/memqueue"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/scan/gate"
	"github.com/custodymcp/custody/shared/scan/guardduty"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/uploads"
	"github.com/custodymcp/custody/shared/uploads/uploadstest"
)

// The upload lane's variables: both buckets or neither, GuardDuty only
// with them, a local S3 server only in emulator runs.
func TestLoadConfigReadsTheUploadLane(t *testing.T) {
	got, err := LoadConfig(env("STAGING_BUCKET", "custody-prod-staging", "RECORD_BUCKET", "custody-prod-record", "SCANNER_ENGINE", "guardduty"))
	if err != nil {
		t.Fatal(err)
	}
	if got.StagingBucket != "custody-prod-staging" || got.RecordBucket != "custody-prod-record" || got.ScannerEngine != "guardduty" {
		t.Errorf("LoadConfig() = %+v, want the lane's buckets and GuardDuty", got)
	}
	if off, err := LoadConfig(env("STAGING_BUCKET", "custody-prod-staging", "RECORD_BUCKET", "custody-prod-record", "SCANNER_ENGINE", "off")); err != nil || off.ScannerEngine != "" {
		t.Errorf("SCANNER_ENGINE=off = %+v, %v; want no engine", off, err)
	}
	for _, tc := range []struct {
		name string
		kv   []string
		want []string
	}{
		{"one bucket", []string{"STAGING_BUCKET", "custody-prod-staging"}, []string{"STAGING_BUCKET"}},
		{"one bucket for both", []string{"STAGING_BUCKET", "custody-x", "RECORD_BUCKET", "custody-x"}, []string{"RECORD_BUCKET"}},
		{"GuardDuty without the buckets", []string{"SCANNER_ENGINE", "guardduty"}, []string{"SCANNER_ENGINE"}},
		{"an unknown engine", []string{"STAGING_BUCKET", "custody-prod-staging", "RECORD_BUCKET", "custody-prod-record", "SCANNER_ENGINE", "clamd"}, []string{"SCANNER_ENGINE"}},
		{"a local S3 server on AWS", []string{"STAGING_BUCKET", "custody-prod-staging", "RECORD_BUCKET", "custody-prod-record", "S3_ENDPOINT", "http://127.0.0.1:9000"}, []string{"S3_ENDPOINT"}},
	} {
		t.Run(tc.name+" is refused", func(t *testing.T) {
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

// With the lane's buckets the sweep runs the lane's duties, composed as main
// composes them (newLane over the local S3 server): a spent upload no
// event decided has its copy recorded, and 30 minutes later, with no
// GuardDuty tag, it is scan_failed "no verdict" — each one "sweep action"
// line.
func TestTheSweepRunsTheUploadLanesDuties(t *testing.T) {
	s3srv := s3local.Start(t, s3local.Options{})
	env := servertest.New(t, servertest.Options{})
	cfg, err := LoadConfig(func(k string) string {
		return map[string]string{"DYNAMODB_TABLE": "custody", "DYNAMODB_ENDPOINT": "http://127.0.0.1:8000",
			"TASK_QUEUE_URL": "http://127.0.0.1:9324/000000000000/tasks", "TASK_DEAD_LETTER_QUEUE_URL": "http://127.0.0.1:9324/000000000000/tasks-dlq",
			"STAGING_BUCKET": s3local.Buckets.Staging, "RECORD_BUCKET": s3local.Buckets.Record, "SCANNER_ENGINE": "guardduty",
			"S3_ENDPOINT": s3srv.URL}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	c := s3local.TestCredentials
	lane, err := newLane(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, "")}, cfg)
	if err != nil || lane == nil {
		t.Fatalf("newLane() = %v, %v", lane, err)
	}
	q, dlq := servertest.TaskQueue(t), newDLQ(t)
	logs := &syncBuffer{}
	s, err := newSweeper(cfg, env.Store, q, dlq, lane, slog.New(lambdaio.NewLogHandler(logs, slog.LevelInfo)))
	if err != nil {
		t.Fatal(err)
	}
	s.now = env.Clock.Now

	_, cred, err := auth.Mint(context.Background(), env.Store, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney,
		Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite}}, env.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	dep := uploadstest.Depositor{Lane: uploads.New(uploads.Options{Store: env.Store, Blob: lane.Blob, Scanner: lane.Scanner}),
		Store: env.Store, Credential: cred, Admin: seed.DemoAdmin, Now: env.Clock.Now}
	u := dep.Deposit(t, seed.Alvarez, "memo.txt", []byte("no event will come for this file"))

	sweepAt := func(d time.Duration) map[string]map[string]int {
		t.Helper()
		logs.reset()
		env.Clock.Advance(d)
		if err := s.Handle(context.Background(), scheduled(t)); err != nil {
			t.Fatalf("Handle = %v", err)
		}
		return actions(logs.lines("sweep action"))
	}
	if got, want := sweepAt(uploads.CopyGrace), map[string]map[string]int{"upload copy to verified/": {uploads.ActionRecorded: 1}}; !cmp.Equal(got, want) {
		t.Errorf("the sweep after the copy grace = %v, want %v", got, want)
	}
	if got, want := sweepAt(uploads.NoVerdictTimeout), map[string]map[string]int{"upload no-verdict timeout": {gate.ActionNoVerdict: 1}}; !cmp.Equal(got, want) {
		t.Errorf("the sweep 30 min after the copy = %v, want %v", got, want)
	}
	it, err := env.Store.Get(context.Background(), uploads.UploadKey(u.ID))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := uploads.DecodeUpload(it); got.State != uploads.StateScanFailed || got.ScanEngine != guardduty.Name || got.ScanReason != gate.ReasonNoVerdict {
		t.Errorf("upload = %s by %s (%q), want scan_failed by guardduty, no verdict", got.State, got.ScanEngine, got.ScanReason)
	}
}

func newDLQ(t *testing.T) *memqueue.Queue {
	t.Helper()
	dlq, err := memqueue.New(memqueue.Options{Name: "tasks-dlq"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dlq.Close() })
	return dlq
}
