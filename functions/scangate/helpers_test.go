package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/s3local"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/guardduty"
	"github.com/custodymcp/custody/shared/scan/signature"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
	"github.com/custodymcp/custody/shared/uploads"
	"github.com/custodymcp/custody/shared/uploads/uploadstest"
)

// The samples' buckets (events/scangate): the local S3 server of these
// tests serves them under these names, so a sample's bucket is the
// gate's.
var sampleBuckets = blob.Buckets{
	Staging: "custody-staging-111122223333-eu-west-1",
	Record:  "custody-record-111122223333-eu-west-1",
}

// sampleDir holds the sample events.
var sampleDir = filepath.Join("..", "..", "events", "scangate")

// emulators are the DynamoDB emulator and the local S3 server on loopback
// with the demo firm seeded, the samples' buckets, and a depositor with a
// write key of the demo attorney.
type emulators struct {
	DynamoURL, Table, S3URL string
	Store                   store.Store
	Blob                    *blob.S3
	dep                     uploadstest.Depositor
}

func startEmulators(t *testing.T, engine string) *emulators {
	t.Helper()
	srv := dynamotest.NewServer(t)
	client := srv.Client()
	table := dynamotest.CreateTable(t, client)
	st := dynamostore.New(client, table, dynamostore.Options{})
	ctx := context.Background()
	fx, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := records.Import(ctx, st, fx, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, cred, err := auth.Mint(ctx, st, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney,
		Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite}, Label: "scangate test"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s3srv := s3local.Start(t, s3local.Options{Buckets: []string{sampleBuckets.Staging, sampleBuckets.Record}})
	objects, err := blob.New(s3local.NewClient(s3srv.URL), sampleBuckets, blob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sc scan.Scanner = signature.New()
	if engine == EngineGuardDuty {
		if sc, err = guardduty.New(sampleBuckets.Staging); err != nil {
			t.Fatal(err)
		}
	}
	lane := uploads.New(uploads.Options{Store: st, Blob: objects, Scanner: sc})
	return &emulators{DynamoURL: srv.URL, Table: table, S3URL: s3srv.URL, Store: st, Blob: objects,
		dep: uploadstest.Depositor{Lane: lane, Store: st, Credential: cred, Admin: seed.DemoAdmin, Now: time.Now}}
}

// env is the function's environment for an emulator run with engine.
func (e *emulators) env(engine string) map[string]string {
	return map[string]string{
		"DYNAMODB_TABLE": e.Table, "DYNAMODB_ENDPOINT": e.DynamoURL, "S3_ENDPOINT": e.S3URL,
		"STAGING_BUCKET": sampleBuckets.Staging, "RECORD_BUCKET": sampleBuckets.Record,
		"SCANNER_ENGINE": engine, "LOG_LEVEL": "INFO",
	}
}

// config is the function's configuration for an emulator run with engine.
func (e *emulators) config(t *testing.T, engine string) Config {
	t.Helper()
	env := e.env(engine)
	cfg, err := LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// testAWSConfig is an AWS configuration with the local S3 server's static
// credentials (the DynamoDB emulator takes any): what LoadDefaultConfig
// yields from the environment in an emulator run.
func testAWSConfig() aws.Config {
	c := s3local.TestCredentials
	return aws.Config{Region: dynamotest.Region,
		Credentials: credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, "")}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// deposit puts body through the lane into the Alvarez matter: scan_pending,
// its object in verified/.
func (e *emulators) deposit(t *testing.T, filename string, body []byte) uploads.Upload {
	t.Helper()
	return e.dep.Deposit(t, seed.Alvarez, filename, body)
}

func (e *emulators) upload(t *testing.T, id string) uploads.Upload {
	t.Helper()
	it, err := e.Store.Get(context.Background(), uploads.UploadKey(id))
	if err != nil {
		t.Fatal(err)
	}
	u, err := uploads.DecodeUpload(it)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// etag is the verified object's ETag, unquoted, as events name it.
func (e *emulators) etag(t *testing.T, u uploads.Upload) string {
	t.Helper()
	info, err := e.Blob.HeadObject(context.Background(), blob.Verified(u.Object))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Trim(info.ETag, `"`)
}

// sample reads a sample and puts u's object id (and, for GuardDuty, its
// ETag) where the sample names its object, leaving every escape as it is:
// the sample then names a real upload.
func sample(t *testing.T, name, sampleID string, u uploads.Upload, etag string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(sampleDir, name))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(raw), sampleID, string(u.Object))
	if etag != "" {
		var sampleETag string
		for _, l := range strings.Split(s, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), `"eTag": "`); ok {
				sampleETag = strings.TrimSuffix(strings.TrimSuffix(v, ","), `"`)
			}
		}
		s = strings.ReplaceAll(s, sampleETag, etag)
	}
	if !strings.Contains(s, string(u.Object)) {
		t.Fatalf("sample %s does not name object %s", name, sampleID)
	}
	return []byte(s)
}
