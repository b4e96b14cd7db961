// Package blobtest is the conformance suite of the object storage port
// (package blob): Run proves that an engine keeps every promise the port
// writes down, including the ones S3 keeps for it at the edge, where an
// agent PUTs parts with presigned URLs and nothing of Custody stands
// between them. The engine is the one S3 client of every environment, so
// the suite runs it against s3local (gofakes3 behind its strict front) in
// tests, and could run it against S3 itself.
//
// Every leaf test gets a fresh store and its own clock, which dates the
// engine's presigned requests and which the server must honour; the suite
// moves it forward to expire URLs (no sleeps). Leaf tests run in parallel.
// The suite's own HTTP requests are plain net/http, what curl sends: no
// SDK between the URL and the server.
package blobtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/custodymcp/custody/shared/blob"
)

// NewStore returns a fresh store whose presigned requests are dated by now
// and whose server (S3, or s3local) judges expiry by the same clock, and
// registers its cleanup on t. Give the engine a small ListPartsPageSize
// (2) so the suite's listings span pages.
type NewStore func(t *testing.T, now func() time.Time) blob.Store

// Run runs the conformance suite against the stores of newStore.
func Run(t *testing.T, newStore NewStore) {
	groups := []struct {
		name  string
		tests []test
	}{
		{"Objects", objectTests()},
		{"Keys", keyTests()},
		{"Tagging", taggingTests()},
		{"Multipart", multipartTests()},
		{"PartURL", partURLTests()},
		{"Presigner", presignerTests()},
		{"Verify", verifyTests()},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					clock := NewClock(time.Now())
					tc.run(t, &env{Store: newStore(t, clock.Now), clock: clock})
				})
			}
		})
	}
}

type test struct {
	name string
	run  func(t *testing.T, e *env)
}

type env struct {
	blob.Store
	clock *Clock
}

// Clock is a settable clock, safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	at time.Time
}

// NewClock returns a clock reading at until moved.
func NewClock(at time.Time) *Clock { return &Clock{at: at} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(d)
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// Pattern returns n bytes that differ from those of any other seed, made
// on the spot.
func Pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31+i>>8) ^ seed
	}
	return b
}

// ChecksumSHA256 is b's SHA-256 as S3 writes checksums: standard base64.
func ChecksumSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// Send sends a presigned request with net/http alone, as curl does: the
// method, the URL, the given headers and body. It returns the status and
// S3's error code ("" when the answer is not an S3 error).
func Send(t testing.TB, method, url string, header http.Header, body []byte) (status int, code string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(t), method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	for k, vs := range header {
		if http.CanonicalHeaderKey(k) == "Content-Length" {
			continue // net/http sends the body's length itself
		}
		req.Header[k] = append([]string(nil), vs...)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	var e struct {
		XMLName xml.Name `xml:"Error"`
		Code    string
	}
	if xml.Unmarshal(raw, &e) == nil {
		code = e.Code
	}
	return resp.StatusCode, code
}

// S3Code returns the S3 error code in err's chain ("" when none).
func S3Code(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

func put(t *testing.T, e *env, ref blob.Ref, body []byte, ct string) {
	t.Helper()
	if err := e.PutObject(ctx(t), ref, bytes.NewReader(body), blob.PutOptions{ContentType: ct}); err != nil {
		t.Fatalf("PutObject(%s) = %v", ref, err)
	}
}

func read(t *testing.T, e *env, ref blob.Ref) ([]byte, blob.ObjectInfo) {
	t.Helper()
	obj, err := e.GetObject(ctx(t), ref)
	if err != nil {
		t.Fatalf("GetObject(%s) = %v", ref, err)
	}
	defer obj.Body.Close()
	b, err := io.ReadAll(obj.Body)
	if err != nil {
		t.Fatalf("read %s: %v", ref, err)
	}
	return b, obj.ObjectInfo
}

// uploadPart presigns part n of up for body and PUTs it with net/http,
// failing t unless S3 answers 200.
func uploadPart(t *testing.T, e *env, up blob.Upload, n int32, body []byte) {
	t.Helper()
	req := presignPart(t, e, up, n, body)
	if status, code := Send(t, req.Method, req.URL, req.Header, body); status != http.StatusOK {
		t.Fatalf("PUT part %d = %d %s, want 200", n, status, code)
	}
}

func presignPart(t *testing.T, e *env, up blob.Upload, n int32, body []byte) blob.PresignedRequest {
	t.Helper()
	req, err := e.PresignUploadPart(ctx(t), up, blob.PartRequest{
		PartNumber: n, Size: int64(len(body)), ChecksumSHA256: ChecksumSHA256(body), Expires: 30 * time.Minute,
	})
	if err != nil {
		t.Fatalf("PresignUploadPart(%d) = %v", n, err)
	}
	return req
}

func create(t *testing.T, e *env) blob.Upload {
	t.Helper()
	up, err := e.CreateMultipartUpload(ctx(t), blob.Incoming(blob.NewID()), blob.CreateOptions{ContentType: "application/pdf"})
	if err != nil {
		t.Fatalf("CreateMultipartUpload = %v", err)
	}
	return up
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s = %v, want %v", what, err, want)
	}
}

func sizes(parts []blob.Part) string {
	s := ""
	for _, p := range parts {
		s += fmt.Sprintf("%d:%d ", p.PartNumber, p.Size)
	}
	return s
}
