package gate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/blobtest"
	"github.com/custodymcp/custody/shared/blob/s3local"
	"github.com/custodymcp/custody/shared/lambdaio/s3event"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/gate"
	"github.com/custodymcp/custody/shared/scan/signature"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
	"github.com/custodymcp/custody/shared/store/filestore"
	"github.com/custodymcp/custody/shared/store/storetest"
	"github.com/custodymcp/custody/shared/uploads"
	"github.com/custodymcp/custody/shared/uploads/uploadstest"
)

var epoch = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// clock is the one settable clock of the store's expiry, the local S3
// server, the lane's steps, the gate and the sweeps.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// env is the demo firm on a real engine (behind the store's fault
// decorator), the local S3 server in memory (behind the blob's), the lane,
// the scan gate over the same engines, and a write key depositing files.
type env struct {
	clock  *clock
	store  *storetest.Faulty
	blob   *blobtest.Faulty
	s3     *s3local.Server
	lane   *uploads.Lane
	gate   *gate.Gate
	dep    uploadstest.Depositor
	intake *counting
}

type envOptions struct {
	// scanner is the engine of the lane and the gate; nil is the signature
	// engine, off is none.
	scanner scan.Scanner
	off     bool
	// dynamo runs on the DynamoDB emulator instead of the file engine.
	dynamo bool
	// intake, when set, runs after the count.
	intake func(ctx context.Context, u uploads.Upload) error
}

// counting is an intake hook that counts its calls.
type counting struct {
	n    atomic.Int32
	then func(ctx context.Context, u uploads.Upload) error
}

func (c *counting) Take(ctx context.Context, u uploads.Upload) error {
	c.n.Add(1)
	if c.then != nil {
		return c.then(ctx, u)
	}
	return nil
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	c := &clock{now: epoch}
	var st store.Store
	if o.dynamo {
		s, _ := dynamotest.NewStore(t, c.Now)
		st = s
	} else {
		fs, err := filestore.Open(filepath.Join(t.TempDir(), "custody.db"), filestore.Options{Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fs.Close() })
		st = fs
	}
	ctx := context.Background()
	fx, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := records.Import(ctx, st, fx, epoch.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	_, cred, err := auth.Mint(ctx, st, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney,
		Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite}, Label: "gate depositor"}, epoch.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	srv := s3local.Start(t, s3local.Options{Now: c.Now})
	eng, err := blob.New(s3local.NewClient(srv.URL, blob.WithClock(c.Now)), s3local.Buckets, blob.Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	var sc scan.Scanner = signature.New()
	switch {
	case o.off:
		sc = nil
	case o.scanner != nil:
		sc = o.scanner
	}
	faultyStore, faultyBlob := storetest.NewFaulty(st), blobtest.NewFaulty(eng)
	lane := uploads.New(uploads.Options{Store: faultyStore, Blob: faultyBlob, Scanner: sc})
	intake := &counting{then: o.intake}
	g, err := gate.New(gate.Options{Store: faultyStore, Blob: faultyBlob, Buckets: s3local.Buckets, Scanner: sc,
		Intake: intake, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return &env{clock: c, store: faultyStore, blob: faultyBlob, s3: srv, lane: lane, gate: g, intake: intake,
		dep: uploadstest.Depositor{Lane: lane, Store: faultyStore, Credential: cred, Admin: seed.DemoAdmin, Now: c.Now}}
}

// deposit puts a file through the lane: scan_pending, its object in
// verified/.
func (e *env) deposit(t *testing.T, filename string, body []byte) uploads.Upload {
	t.Helper()
	return e.dep.Deposit(t, seed.Alvarez, filename, body)
}

// upload reads an upload's row.
func (e *env) upload(t *testing.T, id string) uploads.Upload {
	t.Helper()
	it, err := e.store.Unwrap().Get(context.Background(), uploads.UploadKey(id))
	if err != nil {
		t.Fatalf("read upload %s: %v", id, err)
	}
	u, err := uploads.DecodeUpload(it)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// exists reports whether the object at ref is stored (asked of the engine,
// past the decorator).
func (e *env) exists(t *testing.T, ref blob.Ref) bool {
	t.Helper()
	_, err := e.blob.Unwrap().HeadObject(context.Background(), ref)
	if err != nil && !errors.Is(err, blob.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// s3Event is the JSON of the ObjectCreated event S3 sends for key in
// bucket, decoded as Lambda's runtime decodes it: the only way an event
// reaches the gate in these tests (an S3Event built in Go has no
// URLDecodedKey).
func s3Event(t *testing.T, bucket, key string) events.S3Event {
	t.Helper()
	raw, err := json.Marshal(s3event.ObjectCreated("Copy", "us-east-1", bucket, key, 1, "etag", epoch))
	if err != nil {
		t.Fatal(err)
	}
	return decodeS3(t, raw)
}

func decodeS3(t *testing.T, raw []byte) events.S3Event {
	t.Helper()
	var ev events.S3Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatalf("decode the S3 event: %v", err)
	}
	return ev
}

// created delivers the event of u's verified/ object and returns the
// gate's one outcome.
func (e *env) created(t *testing.T, u uploads.Upload) (gate.Outcome, error) {
	t.Helper()
	out, err := e.gate.HandleS3(context.Background(), s3Event(t, s3local.Buckets.Staging, blob.Verified(u.Object).Key))
	if len(out) != 1 {
		t.Fatalf("HandleS3 = %v outcomes, want 1", out)
	}
	return out[0], err
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

func uploadsCaller(e *env) uploads.Caller {
	return uploads.Caller{Credential: e.dep.Credential, Who: access.WhoOf(e.dep.Credential), Now: e.clock.Now()}
}

func beginRequest(token string, body []byte) uploads.BeginRequest {
	whole, parts := uploadstest.Digests(body)
	return uploads.BeginRequest{GrantToken: token, CaseID: seed.Alvarez, Filename: "memo.txt", Size: int64(len(body)),
		SHA256: whole, PartSHA256: parts}
}
