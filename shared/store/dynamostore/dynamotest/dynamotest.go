// Package dynamotest runs the minidyn DynamoDB emulator for tests: in process
// behind net/http/httptest (NewServer), or as a loopback HTTP server for
// tests that span processes (ListenAndServe, cmd/minidyn). Clients are real
// *dynamodb.Client values pointed at it (NewClient), so the engine's request
// path is the production one down to the HTTP bytes.
//
// minidyn v0.8.2 departs from DynamoDB in ways the storage port can see
// (UpdateItem ignores REMOVE and loses int64 precision, index bookkeeping
// breaks on some updates, no ALL_OLD on failed puts and deletes, a page
// token of a deleted item ends the query, empty binaries lose their type).
// The server here puts a repair layer in front of it that restores
// DynamoDB's behaviour with the emulator's own API; repair.go lists each
// repair and the gaps left alone (no TableStatus, no TTL API, no 400 KB
// limit, keys joined as PK+"."+SK, no ClientRequestToken).
//
// Faults (faults.go) is a middleware for such a server that loses chosen
// answers, after the emulator applied the request or instead of it, so tests
// can drive the SDK's retry of a write whose outcome it never learnt.
package dynamotest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/truora/minidyn/server"

	"github.com/custodymcp/custody/shared/store/dynamostore"
)

// Region is the region every client here uses; the emulator ignores it.
const Region = "us-east-1"

// Server is one minidyn emulator, with the repair layer, behind an httptest
// server.
type Server struct {
	// Emulator controls failure emulation (EmulateFailure,
	// EmulateUnprocessedItems, …). minidyn sets these without its lock:
	// change them while no request is in flight.
	Emulator *server.Server
	// URL is the base endpoint, http://127.0.0.1:port.
	URL string
}

// NewServer starts an emulator with no tables, closed when t ends. Each
// middleware wraps the server's handler (the first one outermost), e.g. to
// inject throttling or count requests; it sees the client's requests, not
// the repair layer's internal calls.
func NewServer(t testing.TB, middleware ...func(http.Handler) http.Handler) *Server {
	t.Helper()
	emu := server.NewServer()
	var h http.Handler = newRepairs(emu)
	for i := len(middleware) - 1; i >= 0; i-- {
		h = middleware[i](h)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return &Server{Emulator: emu, URL: hs.URL}
}

// Client returns a client of the server (see NewClient).
func (s *Server) Client(optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	return NewClient(s.URL, optFns...)
}

// NewClient returns a DynamoDB client for the emulator at url: static dummy
// credentials, Region, no response CRC32 check (minidyn sends none), and the
// SDK's standard retryer with a 1 ms-based backoff, 3 attempts and no retry
// quota, so tests that provoke throttling finish quickly. No environment or
// shared config file is read. optFns run last: set HTTPClient to count or
// delay requests, Retryer to change retries.
func NewClient(url string, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	opts := dynamodb.Options{
		Region:       Region,
		BaseEndpoint: aws.String(url),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "dynamotest", SecretAccessKey: "dynamotest", Source: "dynamotest"}, nil
		}),
		DisableValidateResponseChecksum: true,
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 3
			o.Backoff = retry.NewExponentialJitterBackoff(10 * time.Millisecond)
			o.RateLimiter = ratelimit.None
		}),
	}
	return dynamodb.New(opts, optFns...)
}

var tableSeq atomic.Uint64

// CreateTable creates a fresh Custody table (dynamostore.CreateTable) with a
// name unique in this process, and returns the name. It fails t on error.
func CreateTable(t testing.TB, client *dynamodb.Client) string {
	t.Helper()
	name := fmt.Sprintf("custody-%s-%d", sanitize(t.Name()), tableSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := dynamostore.CreateTable(ctx, client, name); err != nil {
		t.Fatalf("create table %s: %v", name, err)
	}
	return name
}

// sanitize keeps a table name within DynamoDB's [a-zA-Z0-9_.-]{3,255}.
func sanitize(name string) string {
	name = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
	return name[:min(len(name), 200)]
}

// NewStore starts a fresh emulator, creates the table and returns the engine
// over it with the given clock (nil: time.Now) and the emulator, for
// packages whose tests need a DynamoDB-backed store.
func NewStore(t testing.TB, now func() time.Time) (*dynamostore.Store, *Server) {
	t.Helper()
	srv := NewServer(t)
	client := srv.Client()
	return dynamostore.New(client, CreateTable(t, client), dynamostore.Options{Now: now}), srv
}

// ListenAndServe serves a fresh emulator on addr (use a loopback address,
// e.g. "127.0.0.1:0") until ctx ends. When table is non-empty it first
// creates the Custody table under that name. ready receives the base URL
// once requests are accepted.
func ListenAndServe(ctx context.Context, addr, table string, ready func(url string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: newRepairs(server.NewServer()), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	url := "http://" + ln.Addr().String()
	if table != "" {
		if err := dynamostore.CreateTable(ctx, NewClient(url), table); err != nil {
			_ = srv.Close()
			return err
		}
	}
	ready(url)
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
