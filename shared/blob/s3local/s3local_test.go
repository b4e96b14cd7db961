package s3local_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/blobtest"
	"github.com/custodymcp/custody/shared/blob/s3local"
)

type s3Error struct {
	Code             string
	HeadersNotSigned string
}

// do sends a header-signed request (SigV4 with the SDK's signer, as any
// SDK signs it) after sign, then edit, and returns the status and S3 error.
func do(t *testing.T, method, url string, body []byte, creds aws.Credentials, at time.Time, header http.Header, edit func(*http.Request)) (int, s3Error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	sum := sha256.Sum256(body)
	payload := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", payload)
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err := signer.SignHTTP(t.Context(), creds, req, payload, "s3", s3local.Region, at); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var e s3Error
	_ = xml.Unmarshal(raw, &e)
	return resp.StatusCode, e
}

func TestTheFrontRefusesWhatS3Refuses(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	srv := s3local.Start(t, s3local.Options{Now: func() time.Time { return now }})
	creds := s3local.TestCredentials
	object := srv.URL + "/" + s3local.Buckets.Record + "/obj/" + string(blob.NewID())
	body := []byte("a small object")
	for _, c := range []struct {
		name       string
		method     string
		url        string
		body       []byte
		creds      aws.Credentials
		at         time.Time
		header     http.Header
		edit       func(*http.Request)
		wantStatus int
		wantCode   string
		// wantUnsigned is the HeadersNotSigned element expected.
		wantUnsigned string
	}{
		{name: "a well-signed PutObject is 200", method: "PUT", url: object, body: body, wantStatus: 200},
		{name: "an anonymous GET is 403 AccessDenied", method: "GET", url: object,
			edit:       func(r *http.Request) { r.Header.Del("Authorization") },
			wantStatus: 403, wantCode: "AccessDenied"},
		{name: "an x-amz-meta-* header added after signing is 403 AccessDenied with HeadersNotSigned", method: "PUT", url: object, body: body,
			edit:       func(r *http.Request) { r.Header.Set("X-Amz-Meta-Client", "acme") },
			wantStatus: 403, wantCode: "AccessDenied", wantUnsigned: "x-amz-meta-client"},
		{name: "a signed header changed after signing is 403 SignatureDoesNotMatch", method: "PUT", url: object, body: body,
			header:     http.Header{"Content-Type": {"text/plain"}},
			edit:       func(r *http.Request) { r.Header.Set("Content-Type", "text/html") },
			wantStatus: 403, wantCode: "SignatureDoesNotMatch"},
		{name: "another path than the signed one is 403 SignatureDoesNotMatch", method: "PUT", url: object, body: body,
			edit:       func(r *http.Request) { r.URL.Path += "0" },
			wantStatus: 403, wantCode: "SignatureDoesNotMatch"},
		{name: "a body other than the signed payload hash is 400 XAmzContentSHA256Mismatch", method: "PUT", url: object, body: body,
			edit: func(r *http.Request) {
				other := bytes.ToUpper(body)
				r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(other)), int64(len(other))
			},
			wantStatus: 400, wantCode: "XAmzContentSHA256Mismatch"},
		{name: "a wrong signed x-amz-checksum-sha256 is 400 BadDigest", method: "PUT", url: object, body: body,
			header:     http.Header{"X-Amz-Checksum-Sha256": {blobtest.ChecksumSHA256([]byte("other"))}},
			wantStatus: 400, wantCode: "BadDigest"},
		{name: "a wrong Content-MD5 is 400 BadDigest", method: "PUT", url: object, body: body,
			header:     http.Header{"Content-Md5": {"1B2M2Y8AsgTpgAmY7PhCfg=="}},
			wantStatus: 400, wantCode: "BadDigest"},
		{name: "a request dated 20 minutes ago is 403 RequestTimeTooSkewed", method: "GET", url: object, at: now.Add(-20 * time.Minute),
			wantStatus: 403, wantCode: "RequestTimeTooSkewed"},
		{name: "an unknown access key is 403 InvalidAccessKeyId", method: "GET", url: object,
			creds: aws.Credentials{AccessKeyID: "AKIANOBODY", SecretAccessKey: creds.SecretAccessKey}, wantStatus: 403, wantCode: "InvalidAccessKeyId"},
		{name: "the wrong secret is 403 SignatureDoesNotMatch", method: "GET", url: object,
			creds: aws.Credentials{AccessKeyID: creds.AccessKeyID, SecretAccessKey: "guess"}, wantStatus: 403, wantCode: "SignatureDoesNotMatch"},
		{name: "an aws-chunked body (a trailing checksum) is 501 NotImplemented", method: "PUT", url: object, body: body,
			header:     http.Header{"Content-Encoding": {"aws-chunked"}},
			wantStatus: 501, wantCode: "NotImplemented"},
		{name: "a subresource the port does not use (?acl) is 501 NotImplemented", method: "GET", url: object + "?acl",
			wantStatus: 501, wantCode: "NotImplemented"},
		{name: "ListBuckets is 501 NotImplemented", method: "GET", url: srv.URL + "/", wantStatus: 501, wantCode: "NotImplemented"},
		{name: "an unknown bucket is 404 NoSuchBucket", method: "GET", url: srv.URL + "/other-bucket/obj/x", wantStatus: 404, wantCode: "NoSuchBucket"},
		{name: "the front's own tag bucket is 404 NoSuchBucket", method: "GET", url: srv.URL + "/_s3local_tags/x", wantStatus: 404, wantCode: "NoSuchBucket"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cr, at := creds, now
			if c.creds.AccessKeyID != "" {
				cr = c.creds
			}
			if !c.at.IsZero() {
				at = c.at
			}
			status, e := do(t, c.method, c.url, c.body, cr, at, c.header, c.edit)
			if status != c.wantStatus || e.Code != c.wantCode {
				t.Errorf("%s = %d %s, want %d %s", c.method, status, e.Code, c.wantStatus, c.wantCode)
			}
			if e.HeadersNotSigned != c.wantUnsigned {
				t.Errorf("HeadersNotSigned = %q, want %q", e.HeadersNotSigned, c.wantUnsigned)
			}
		})
	}
}

func TestRestartKeepsFinishedObjectsAndTagsButNotUnfinishedMultipartUploads(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	first, err := s3local.New(s3local.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(first)
	e := engine(t, hs.URL)
	ref := blob.Verified(blob.NewID())
	if err := e.PutObject(ctx, ref, bytes.NewReader([]byte("kept")), blob.PutOptions{ContentType: "text/plain"}); err != nil {
		t.Fatalf("PutObject = %v", err)
	}
	if err := e.PutObjectTagging(ctx, ref, map[string]string{"scan": "clean"}); err != nil {
		t.Fatalf("PutObjectTagging = %v", err)
	}
	up, err := e.CreateMultipartUpload(ctx, blob.Incoming(blob.NewID()), blob.CreateOptions{})
	if err != nil {
		t.Fatalf("CreateMultipartUpload = %v", err)
	}
	part := []byte("part one")
	req, err := e.PresignUploadPart(ctx, up, blob.PartRequest{PartNumber: 1, Size: int64(len(part)), ChecksumSHA256: blobtest.ChecksumSHA256(part), Expires: time.Minute})
	if err != nil {
		t.Fatalf("PresignUploadPart = %v", err)
	}
	if status, code := blobtest.Send(t, req.Method, req.URL, req.Header, part); status != http.StatusOK {
		t.Fatalf("PUT part = %d %s", status, code)
	}
	hs.Close()

	second, err := s3local.New(s3local.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	hs2 := httptest.NewServer(second)
	t.Cleanup(hs2.Close)
	e = engine(t, hs2.URL)
	obj, err := e.GetObject(ctx, ref)
	if err != nil {
		t.Fatalf("GetObject after the restart = %v", err)
	}
	got, _ := io.ReadAll(obj.Body)
	obj.Body.Close()
	if string(got) != "kept" || obj.ContentType != "text/plain" {
		t.Errorf("object after the restart = %q of %s, want %q of text/plain", got, obj.ContentType, "kept")
	}
	if tags, err := e.GetObjectTagging(ctx, ref); err != nil || tags["scan"] != "clean" {
		t.Errorf("tags after the restart = %v, %v; want scan=clean", tags, err)
	}
	// The upload is gone with gofakes3's memory: the lane begins again.
	if _, err := e.ListParts(ctx, up); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("ListParts after the restart = %v, want ErrNotFound", err)
	}
	if err := e.CompleteMultipartUpload(ctx, up, []blob.Part{{PartNumber: 1, ETag: `"x"`}}); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("CompleteMultipartUpload after the restart = %v, want ErrNotFound", err)
	}
	// A new upload after the restart is not mistaken for the old one.
	if _, err := e.CreateMultipartUpload(ctx, blob.Incoming(blob.NewID()), blob.CreateOptions{}); err != nil {
		t.Fatalf("CreateMultipartUpload after the restart = %v", err)
	}
	if _, err := e.ListParts(ctx, up); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("ListParts of the old ID beside a new upload = %v, want ErrNotFound", err)
	}
}

func TestAPartWithoutTheUploadsChecksumIsRefusedInvalidRequest(t *testing.T) {
	srv := s3local.Start(t, s3local.Options{})
	e := engine(t, srv.URL)
	up, err := e.CreateMultipartUpload(t.Context(), blob.Incoming(blob.NewID()), blob.CreateOptions{})
	if err != nil {
		t.Fatalf("CreateMultipartUpload = %v", err)
	}
	url := srv.URL + "/" + s3local.Buckets.Staging + "/" + up.Ref.Key + "?partNumber=1&uploadId=" + up.UploadID
	crc := base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE([]byte("p"))))
	for name, h := range map[string]http.Header{
		"no checksum":          nil,
		"a CRC32 of the part":  {"X-Amz-Checksum-Crc32": {crc}},
		"two checksum headers": {"X-Amz-Checksum-Crc32": {crc}, "X-Amz-Checksum-Sha256": {blobtest.ChecksumSHA256([]byte("p"))}},
		"a malformed SHA-256":  {"X-Amz-Checksum-Sha256": {"not base64"}},
	} {
		status, e := do(t, "PUT", url, []byte("p"), s3local.TestCredentials, time.Now(), h, nil)
		if status != http.StatusBadRequest || e.Code != "InvalidRequest" {
			t.Errorf("PUT part with %s = %d %s, want 400 InvalidRequest", name, status, e.Code)
		}
	}
	parts, err := e.ListParts(t.Context(), up)
	if err != nil || len(parts) != 0 {
		t.Errorf("ListParts = %v, %v; want no part stored", parts, err)
	}
}

func TestListenAndServeServesUntilCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- s3local.ListenAndServe(ctx, "127.0.0.1:0", s3local.Options{}, func(url string) { urls <- url })
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("ListenAndServe = %v before it was ready", err)
	case <-time.After(30 * time.Second):
		t.Fatal("ListenAndServe not ready after 30 s")
	}
	e := engine(t, url)
	ref := blob.Stored(blob.NewID())
	if err := e.PutObject(ctx, ref, bytes.NewReader([]byte("x")), blob.PutOptions{}); err != nil {
		t.Fatalf("PutObject = %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ListenAndServe after cancel = %v, want nil", err)
	}
}

func TestNewRefusesABucketNameS3WouldRefuse(t *testing.T) {
	for _, name := range []string{"", "ab", "Upper", "under_score", "-leading"} {
		if _, err := s3local.New(s3local.Options{Buckets: []string{name}}); err == nil {
			t.Errorf("New(bucket %q) = nil error, want a refusal", name)
		}
	}
}

func engine(t *testing.T, url string) *blob.S3 {
	t.Helper()
	e, err := blob.New(s3local.NewClient(url), s3local.Buckets, blob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}
