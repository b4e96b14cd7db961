// Package s3local is the local S3 server of tests and the dev server:
// gofakes3 (github.com/johannesboyne/gofakes3 v1.2.0) behind a strict front
// that does what gofakes3 does not and S3 does, so that the upload lane is
// tested against S3's rules rather than an emulator's leniency:
//
//   - SigV4, header-signed and presigned (query), verified by recomputing
//     the signature with the SDK's own signer over the request as
//     received, with static credentials (Options.Credentials): a changed
//     header, path or query is SignatureDoesNotMatch (403);
//   - X-Amz-Expires honoured against the server's clock (Options.Now), and
//     a header-signed request's X-Amz-Date within 15 minutes of it
//     (RequestTimeTooSkewed);
//   - any x-amz-* header present but not signed refused 403 AccessDenied
//     with HeadersNotSigned, as S3 answers it;
//   - bodies checked before they are stored: x-amz-content-sha256,
//     Content-MD5 and x-amz-checksum-{sha256,sha1,crc32,crc32c} (400
//     BadDigest);
//   - multipart uploads with S3's checksum rules and part sizes: every part
//     carries the upload's algorithm, ListParts reports each part's
//     checksum, and CompleteMultipartUpload refuses a part under 5 MiB that
//     is not the last (400 EntityTooSmall), a wrong checksum or ETag
//     (InvalidPart) and a missing checksum (InvalidRequest);
//   - object tagging (GET/PUT/DELETE ?tagging), which gofakes3 lacks;
//   - only the operations of the blob port (and listing, for tests); any
//     other is 501 NotImplemented, and so are aws-chunked bodies (trailing
//     checksums: clients use blob.LocalClientOptions).
//
// Objects live in memory (gofakes3's s3mem, the tests' backend) or in a
// folder (s3afero, the dev server's, under .custody/blobs/). gofakes3 keeps
// multipart parts in memory on every backend, so after a restart an
// unfinished multipart upload is gone: its upload ID answers NoSuchUpload,
// and the lane answers "begin again". Finished objects and their tags
// persist in the folder.
//
// Departures from S3 left in place: bodies are buffered whole, up to
// MaxBodyBytes; one region and one key pair; no versions, ACLs or
// policies; a request signing a header the SDK's signer never signs
// (User-Agent, Expect) cannot be verified and is SignatureDoesNotMatch.
package s3local

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3afero"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/spf13/afero"

	"github.com/custodymcp/custody/shared/blob"
)

// Region is the one region the server signs for by default.
const Region = "us-east-1"

// TestCredentials are the static credentials of tests and the dev server:
// they protect nothing (the server listens on loopback) but make every
// request carry a real SigV4 signature.
var TestCredentials = aws.Credentials{
	AccessKeyID:     "AKIAS3LOCAL000000000",
	SecretAccessKey: "s3local/secret/for/tests/and/the/dev/server",
	Source:          "s3local",
}

// Buckets are the bucket names of tests and the dev server.
var Buckets = blob.Buckets{Staging: "custody-staging", Record: "custody-record"}

// Options configures a Server. The zero value serves Buckets from memory
// with TestCredentials.
type Options struct {
	// Dir, when set, keeps objects and tags in this folder (created 0700
	// if missing) with gofakes3's s3afero backend; "" keeps them in memory
	// (s3mem).
	Dir string
	// Buckets are created at start when missing; nil means Buckets'
	// staging and record names.
	Buckets []string
	// Credentials is the one key pair requests must be signed with; zero
	// means TestCredentials.
	Credentials aws.Credentials
	// Region is the region of the signing scope; "" means Region.
	Region string
	// Now is the server's clock for expiry, skew and Last-Modified; nil
	// means time.Now.
	Now func() time.Time
}

// Server is the front and its gofakes3. It is an http.Handler; Start and
// ListenAndServe serve it on loopback.
type Server struct {
	// URL is the base endpoint once served by Start or ListenAndServe,
	// e.g. http://127.0.0.1:41234.
	URL string

	backend gofakes3.Backend
	s3      http.Handler
	buckets map[string]bool
	creds   aws.Credentials
	region  string
	now     func() time.Time
	signer  *v4.Signer

	requests atomic.Uint64

	mu      sync.Mutex
	uploads map[string]*upload

	// tagMu serializes tag writes with the writes of the objects they
	// belong to (tagging.go).
	tagMu sync.Mutex
}

var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// New returns a Server over a fresh or existing store, its buckets created.
func New(opts Options) (*Server, error) {
	s := &Server{
		buckets: map[string]bool{},
		creds:   opts.Credentials,
		region:  opts.Region,
		now:     opts.Now,
		signer:  v4.NewSigner(),
		uploads: map[string]*upload{},
	}
	if s.creds.AccessKeyID == "" {
		s.creds = TestCredentials
	}
	if s.region == "" {
		s.region = Region
	}
	if s.now == nil {
		s.now = time.Now
	}
	names := opts.Buckets
	if names == nil {
		names = []string{Buckets.Staging, Buckets.Record}
	}
	clock := timeSource(s.now)
	if opts.Dir != "" {
		if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("s3local: create %s: %w", opts.Dir, err)
		}
		b, err := s3afero.MultiBucket(afero.NewBasePathFs(afero.NewOsFs(), opts.Dir))
		if err != nil {
			return nil, fmt.Errorf("s3local: open %s: %w", opts.Dir, err)
		}
		s.backend = b
	} else {
		s.backend = s3mem.New(s3mem.WithTimeSource(clock))
	}
	for _, name := range append(names, tagsBucket) {
		if name != tagsBucket {
			if !bucketName.MatchString(name) {
				return nil, fmt.Errorf("s3local: bucket name %q: want 3–63 lowercase letters, digits, dots and hyphens", name)
			}
			s.buckets[name] = true
		}
		ok, err := s.backend.BucketExists(name)
		if err != nil {
			return nil, fmt.Errorf("s3local: bucket %s: %w", name, err)
		}
		if !ok {
			if err := s.backend.CreateBucket(name); err != nil {
				return nil, fmt.Errorf("s3local: create bucket %s: %w", name, err)
			}
		}
	}
	s.s3 = gofakes3.New(s.backend,
		gofakes3.WithTimeSource(clock),
		// The front checks the skew against its own clock.
		gofakes3.WithTimeSkewLimit(0),
		gofakes3.WithoutVersioning(),
		gofakes3.WithLogger(gofakes3.DiscardLog()),
	).Server()
	return s, nil
}

// timeSource adapts a clock to gofakes3.TimeSource.
type timeSource func() time.Time

func (t timeSource) Now() time.Time                   { return t().UTC() }
func (t timeSource) Since(at time.Time) time.Duration { return t().Sub(at) }

// Start serves a new Server on 127.0.0.1 at a random port until t ends, and
// fails t if it cannot start.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	return s
}

// ListenAndServe serves a new Server on addr (keep it loopback, e.g.
// "127.0.0.1:0") until ctx ends. ready receives the base URL once requests
// are accepted.
func ListenAndServe(ctx context.Context, addr string, opts Options, ready func(url string)) error {
	s, err := New(opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.URL = "http://" + ln.Addr().String()
	ready(s.URL)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// NewClient returns an S3 client of the server at url with TestCredentials
// (see ClientWith).
func NewClient(url string, optFns ...func(*s3.Options)) *s3.Client {
	return ClientWith(url, TestCredentials, optFns...)
}

// ClientWith returns an S3 client of the server at url signing with creds
// in Region, set up as blob.LocalClientOptions says, with the SDK's
// standard retryer at a 10 ms backoff, 3 attempts and no retry quota (so
// tests that provoke failures finish quickly). No environment or shared
// config file is read. optFns run last.
func ClientWith(url string, creds aws.Credentials, optFns ...func(*s3.Options)) *s3.Client {
	opts := s3.Options{
		Region:      Region,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return creds, nil }),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 3
			o.Backoff = retry.NewExponentialJitterBackoff(10 * time.Millisecond)
			o.RateLimiter = ratelimit.None
		}),
	}
	blob.LocalClientOptions(url)(&opts)
	return s3.New(opts, optFns...)
}

// NewStore starts a server in memory with the clock now (nil: time.Now)
// until t ends and returns the blob engine over it, for packages whose
// tests need object storage, and the server.
func NewStore(t testing.TB, now func() time.Time) (*blob.S3, *Server) {
	t.Helper()
	srv := Start(t, Options{Now: now})
	var opts []func(*s3.Options)
	if now != nil {
		opts = append(opts, blob.WithClock(now))
	}
	e, err := blob.New(NewClient(srv.URL, opts...), Buckets, blob.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return e, srv
}
