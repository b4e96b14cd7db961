package blob_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/blobtest"
	"github.com/custodymcp/custody/shared/blob/s3local"
)

// newStore is the engine over a fresh in-memory s3local whose clock is
// now, paging ListParts two parts at a time.
func newStore(t *testing.T, now func() time.Time) *blob.S3 {
	t.Helper()
	srv := s3local.Start(t, s3local.Options{Now: now})
	e, err := blob.New(s3local.NewClient(srv.URL, blob.WithClock(now)), s3local.Buckets, blob.Options{Now: now, ListPartsPageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestS3PassesTheConformanceSuiteAgainstS3Local(t *testing.T) {
	blobtest.Run(t, func(t *testing.T, now func() time.Time) blob.Store { return newStore(t, now) })
}

func TestNewRefusesBucketsThatAreUnnamedOrTheSame(t *testing.T) {
	client := s3local.NewClient("http://127.0.0.1:1")
	for _, bs := range []blob.Buckets{{}, {Staging: "a-b-c"}, {Record: "a-b-c"}, {Staging: "a-b-c", Record: "a-b-c"}} {
		if _, err := blob.New(client, bs, blob.Options{}); !errors.Is(err, blob.ErrInvalid) {
			t.Errorf("New(%+v) = %v, want ErrInvalid", bs, err)
		}
	}
}

// slowDown answers every request 503 SlowDown, as throttled S3 does.
func slowDown(calls *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
	})
}

func TestS3FailuresAreErrUnavailableAndNeverTheCallersFault(t *testing.T) {
	var calls atomic.Int64
	throttled := httptest.NewServer(slowDown(&calls))
	t.Cleanup(throttled.Close)
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	srv := s3local.Start(t, s3local.Options{})
	wrongKey := aws.Credentials{AccessKeyID: "AKIAOTHER", SecretAccessKey: "x"}
	wrongSecret := aws.Credentials{AccessKeyID: s3local.TestCredentials.AccessKeyID, SecretAccessKey: "not the secret"}
	for name, client := range map[string]*s3.Client{
		"a throttling S3 (503 SlowDown, after the SDK's retries)": s3local.NewClient(throttled.URL),
		"an unreachable S3":                        s3local.NewClient(gone.URL),
		"S3 refusing our key (InvalidAccessKeyId)": s3local.ClientWith(srv.URL, wrongKey),
		"S3 refusing our signature":                s3local.ClientWith(srv.URL, wrongSecret),
	} {
		t.Run(name, func(t *testing.T) {
			e, err := blob.New(client, s3local.Buckets, blob.Options{})
			if err != nil {
				t.Fatal(err)
			}
			ref := blob.Stored(blob.NewID())
			_, headErr := e.HeadObject(t.Context(), ref)
			_, getErr := e.GetObject(t.Context(), ref)
			for op, err := range map[string]error{
				"HeadObject": headErr,
				"GetObject":  getErr,
				"PutObject":  e.PutObject(t.Context(), ref, bytes.NewReader([]byte("x")), blob.PutOptions{}),
				"Verify":     blob.Verify(t.Context(), e, ref, 1, sha256.Sum256([]byte("x"))),
			} {
				if !errors.Is(err, blob.ErrUnavailable) {
					t.Errorf("%s = %v, want ErrUnavailable", op, err)
				}
				if errors.Is(err, blob.ErrNotFound) || errors.Is(err, blob.ErrInvalid) || errors.Is(err, blob.ErrMismatch) {
					t.Errorf("%s = %v, also another sentinel", op, err)
				}
			}
		})
	}
	if calls.Load() < 2 {
		t.Errorf("the throttled server saw %d requests, want the SDK's retries", calls.Load())
	}
}

func TestACallPastItsDeadlineIsErrUnavailable(t *testing.T) {
	e := newStore(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := e.HeadObject(ctx, blob.Stored(blob.NewID())); !errors.Is(err, blob.ErrUnavailable) {
		t.Errorf("HeadObject with a done context = %v, want ErrUnavailable", err)
	}
}

// expiringIn returns a provider of the test credentials expiring d after
// now.
func expiringIn(now func() time.Time, d time.Duration) aws.CredentialsProvider {
	return aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		c := s3local.TestCredentials
		c.CanExpire, c.Expires = true, now().Add(d)
		return c, nil
	})
}

func TestPresignedURLsNeverOutliveTheCredentialsThatSignedThem(t *testing.T) {
	clock := blobtest.NewClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	srv := s3local.Start(t, s3local.Options{Now: clock.Now})
	client := s3local.NewClient(srv.URL, blob.WithClock(clock.Now))
	open := func(parts aws.CredentialsProvider) *blob.S3 {
		e, err := blob.New(client, s3local.Buckets, blob.Options{Now: clock.Now, UploadPartCredentials: parts})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	body := []byte("part")
	part := blob.PartRequest{PartNumber: 1, Size: int64(len(body)), ChecksumSHA256: blobtest.ChecksumSHA256(body), Expires: 30 * time.Minute}

	e := open(expiringIn(clock.Now, 10*time.Minute))
	up, err := e.CreateMultipartUpload(t.Context(), blob.Incoming(blob.NewID()), blob.CreateOptions{})
	if err != nil {
		t.Fatalf("CreateMultipartUpload = %v", err)
	}
	req, err := e.PresignUploadPart(t.Context(), up, part)
	if err != nil {
		t.Fatalf("PresignUploadPart = %v", err)
	}
	if want := clock.Now().Add(10 * time.Minute); !req.Expires.Equal(want) {
		t.Errorf("Expires = %v, want the credentials' expiry %v", req.Expires, want)
	}
	if !strings.Contains(req.URL, "X-Amz-Expires=600&") {
		t.Errorf("URL %s, want X-Amz-Expires=600", req.URL)
	}
	if status, code := blobtest.Send(t, req.Method, req.URL, req.Header, body); status != http.StatusOK {
		t.Errorf("PUT = %d %s, want 200", status, code)
	}

	for name, creds := range map[string]aws.CredentialsProvider{
		"expired credentials":              expiringIn(clock.Now, -time.Second),
		"credentials expiring this second": expiringIn(clock.Now, 500*time.Millisecond),
		"no credentials": aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{}, errors.New("no role to assume")
		}),
	} {
		if _, err := open(creds).PresignUploadPart(t.Context(), up, part); !errors.Is(err, blob.ErrUnavailable) {
			t.Errorf("PresignUploadPart with %s = %v, want ErrUnavailable", name, err)
		}
	}
}

func TestPartURLsAreSignedWithTheUploadPartCredentials(t *testing.T) {
	srv := s3local.Start(t, s3local.Options{})
	signer := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "AKIAUPLOADSIGNER", SecretAccessKey: "other"}, nil
	})
	e, err := blob.New(s3local.NewClient(srv.URL), s3local.Buckets, blob.Options{UploadPartCredentials: signer})
	if err != nil {
		t.Fatal(err)
	}
	up, err := e.CreateMultipartUpload(t.Context(), blob.Incoming(blob.NewID()), blob.CreateOptions{})
	if err != nil {
		t.Fatalf("CreateMultipartUpload with the client's credentials = %v", err)
	}
	body := []byte("part")
	req, err := e.PresignUploadPart(t.Context(), up, blob.PartRequest{PartNumber: 1, Size: 4, ChecksumSHA256: blobtest.ChecksumSHA256(body), Expires: time.Minute})
	if err != nil {
		t.Fatalf("PresignUploadPart = %v", err)
	}
	if !strings.Contains(req.URL, "X-Amz-Credential=AKIAUPLOADSIGNER") {
		t.Errorf("URL %s, want it signed by AKIAUPLOADSIGNER", req.URL)
	}
	// s3local knows only the test key, so the part is refused: the URL was
	// not signed with the client's credentials.
	if status, code := blobtest.Send(t, req.Method, req.URL, req.Header, body); status != http.StatusForbidden || code != "InvalidAccessKeyId" {
		t.Errorf("PUT = %d %s, want 403 InvalidAccessKeyId", status, code)
	}
}

func TestRenewingCredentialsRenewOnlyUnderTheWindowAndReportTheTrueExpiry(t *testing.T) {
	clock := blobtest.NewClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	var calls atomic.Int64
	inner := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		calls.Add(1)
		return aws.Credentials{AccessKeyID: "A", SecretAccessKey: "S", CanExpire: true, Expires: clock.Now().Add(blob.UploadSignerSession)}, nil
	})
	p := blob.RenewingCredentials(inner, blob.UploadSignerRenewal, clock.Now)
	first := clock.Now().Add(time.Hour)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			c, err := p.Retrieve(t.Context())
			if err != nil || !c.Expires.Equal(first) {
				t.Errorf("Retrieve = %v, %v; want credentials expiring %v", c.Expires, err, first)
			}
		})
	}
	wg.Wait()
	if calls.Load() != 1 {
		t.Fatalf("16 concurrent retrievals made %d calls, want 1", calls.Load())
	}
	clock.Advance(25 * time.Minute) // 35 min left: still good
	if c, _ := p.Retrieve(t.Context()); !c.Expires.Equal(first) || calls.Load() != 1 {
		t.Errorf("with 35 min left: expiry %v after %d calls, want %v after 1", c.Expires, calls.Load(), first)
	}
	clock.Advance(time.Second) // under 35 min left: renewed
	if c, _ := p.Retrieve(t.Context()); !c.Expires.Equal(clock.Now().Add(time.Hour)) || calls.Load() != 2 {
		t.Errorf("under 35 min left: expiry %v after %d calls, want a fresh hour after 2", c.Expires, calls.Load())
	}
}
