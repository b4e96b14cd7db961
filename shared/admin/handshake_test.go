package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/filestore"
)

// clock is a settable now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// wire records every request and answer that crosses it, as bytes.
type wire struct {
	mu  sync.Mutex
	log []string
}

func (w *wire) add(s string) { w.mu.Lock(); w.log = append(w.log, s); w.mu.Unlock() }

// carrying returns the recorded messages that contain secret.
func (w *wire) carrying(secret string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, m := range w.log {
		if strings.Contains(m, secret) {
			out = append(out, m)
		}
	}
	return out
}

// tap records what passes through next.
func (w *wire) tap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		dump, _ := httputil.DumpRequest(r, true)
		w.add(string(dump))
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		dump, _ = httputil.DumpResponse(rec.Result(), true)
		w.add(string(dump))
		for k, v := range rec.Header() {
			rw.Header()[k] = v
		}
		rw.WriteHeader(rec.Code)
		_, _ = rw.Write(rec.Body.Bytes())
	})
}

const testToken = "4f1c0ffee4f1c0ffee4f1c0ffee4f1c0ffee4f1c0ffee4f1c0ffee4f1c0ffee0"

// endpoint is the admin endpoint over a fresh file store, on loopback.
type endpoint struct {
	addr  string
	store store.Store
	clock *clock
	wire  *wire
}

func newEndpoint(t *testing.T, wrap ...func(http.Handler) http.Handler) *endpoint {
	t.Helper()
	fs, err := filestore.Open(t.TempDir()+"/custody.db", filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	e := &endpoint{store: fs, clock: &clock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}, wire: &wire{}}
	h := Handler(fs, testToken, e.clock.now)
	for _, w := range wrap {
		h = w(h)
	}
	srv := httptest.NewServer(e.wire.tap(h))
	t.Cleanup(srv.Close)
	e.addr = strings.TrimPrefix(srv.URL, "http://")
	return e
}

func (e *endpoint) client(t *testing.T, token string) *Client {
	t.Helper()
	c, err := NewClient(e.addr, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTheClientAndTheEndpointProveThemselvesAndTheTokenNeverCrossesTheWire(t *testing.T) {
	e := newEndpoint(t)
	c := e.client(t, testToken)
	ctx := context.Background()
	if err := c.Verify(ctx); err != nil {
		t.Fatalf("Verify() = %v", err)
	}
	body, _ := json.Marshal(TenantRequest{ID: "acme", Name: "Acme & Partners LLP"})
	status, answer, err := c.Do(ctx, http.MethodPost, "/admin/tenants", body)
	if err != nil || status != http.StatusCreated {
		t.Fatalf("POST /admin/tenants = %d %s, %v; want 201", status, answer, err)
	}
	// Without a Verify first, Do challenges by itself.
	status, answer, err = c.Do(ctx, http.MethodGet, "/admin/keys?tenant=acme", nil)
	if err != nil || status != http.StatusOK || strings.TrimSpace(string(answer)) != "[]" {
		t.Fatalf("GET /admin/keys = %d %s, %v; want 200 []", status, answer, err)
	}
	// A refusal is an authenticated answer too.
	status, _, err = c.Do(ctx, http.MethodPost, "/admin/keys/cred_nope/revoke?tenant=acme", nil)
	if err != nil || status != http.StatusNotFound {
		t.Errorf("revoke of an unknown credential = %d, %v; want 404", status, err)
	}
	if got := e.wire.carrying(testToken); len(got) > 0 {
		t.Errorf("the admin token crossed the wire in %d messages, first:\n%s", len(got), got[0])
	}
}

// signed builds a request to e signed as the client would, with a nonce
// from a real challenge unless nonce is given.
func (e *endpoint) signed(t *testing.T, method, target string, body []byte, nonce, token string) *http.Request {
	t.Helper()
	if nonce == "" {
		var err error
		if nonce, err = e.client(t, testToken).challenge(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, "http://"+e.addr+target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", fmt.Sprintf(`Custody-Admin nonce="%s", mac="%s"`, nonce, requestMAC(token, nonce, method, target, body)))
	return req
}

func send(t *testing.T, req *http.Request) *http.Response {
	t.Helper()
	if req.GetBody != nil {
		body, _ := req.GetBody()
		req = req.Clone(req.Context())
		req.Body = body
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func TestTheEndpointRunsOnlyRequestsSignedAfterItsOwnChallenge(t *testing.T) {
	e := newEndpoint(t)
	tenant := []byte(`{"id":"acme","name":"Acme"}`)
	const path = "/admin/tenants"
	for _, tc := range []struct {
		name string
		req  func(t *testing.T) *http.Request
	}{
		{"no credential", func(t *testing.T) *http.Request {
			r, _ := http.NewRequest(http.MethodPost, "http://"+e.addr+path, bytes.NewReader(tenant))
			return r
		}},
		{"the admin token itself as a bearer credential", func(t *testing.T) *http.Request {
			r, _ := http.NewRequest(http.MethodPost, "http://"+e.addr+path, bytes.NewReader(tenant))
			r.Header.Set("Authorization", "Bearer "+testToken)
			return r
		}},
		{"a nonce the server never issued", func(t *testing.T) *http.Request {
			return e.signed(t, http.MethodPost, path, tenant, newNonce(), testToken)
		}},
		{"a MAC under another token", func(t *testing.T) *http.Request {
			return e.signed(t, http.MethodPost, path, tenant, "", strings.Repeat("0", 64))
		}},
		{"a MAC over another path", func(t *testing.T) *http.Request {
			r := e.signed(t, http.MethodPost, "/admin/screens", tenant, "", testToken)
			r.URL.Path = path
			return r
		}},
		{"a MAC over another body", func(t *testing.T) *http.Request {
			r := e.signed(t, http.MethodPost, path, []byte(`{"id":"other","name":"Other"}`), "", testToken)
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(tenant)), nil }
			r.ContentLength = int64(len(tenant))
			return r
		}},
		{"a MAC for another method", func(t *testing.T) *http.Request {
			r := e.signed(t, http.MethodGet, path, tenant, "", testToken)
			r.Method = http.MethodPost
			return r
		}},
		{"a nonce past its lifetime", func(t *testing.T) *http.Request {
			r := e.signed(t, http.MethodPost, path, tenant, "", testToken)
			e.clock.advance(NonceTTL)
			return r
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := send(t, tc.req(t))
			if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Custody-Admin ") {
				t.Errorf("status %d, WWW-Authenticate %q; want 401 with the Custody-Admin challenge", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
			}
			if _, err := records.NewRepo(e.store).Tenant(context.Background(), "acme"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the tenant exists after the refused request (%v)", err)
			}
		})
	}

	t.Run("a signed request is carried out once; its replay is refused", func(t *testing.T) {
		req := e.signed(t, http.MethodPost, path, tenant, "", testToken)
		if resp := send(t, req); resp.StatusCode != http.StatusCreated {
			t.Fatalf("the signed request = %d, want 201", resp.StatusCode)
		}
		if resp := send(t, req); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("its replay = %d, want 401", resp.StatusCode)
		}
	})
}

func TestOneNonceServesOneRequestUnderConcurrency(t *testing.T) {
	e := newEndpoint(t)
	nonce, err := e.client(t, testToken).challenge(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const n = 32
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = e.signed(t, http.MethodGet, "/admin/keys?tenant=demo", nil, nonce, testToken)
	}
	var ok atomic.Int64
	var wg sync.WaitGroup
	for _, req := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	if got := ok.Load(); got != 1 {
		t.Errorf("%d of %d concurrent requests with one nonce were served, want 1", got, n)
	}
}

// An impostor holds the recorded address; it logs what it is sent.
func impostor(t *testing.T, serve http.HandlerFunc) (addr string, w *wire) {
	t.Helper()
	w = &wire{}
	srv := httptest.NewServer(w.tap(serve))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), w
}

func TestTheClientBelievesNoServerThatCannotProveItHoldsTheToken(t *testing.T) {
	real := newEndpoint(t)
	// An answer the real endpoint gave another client earlier.
	body, _ := json.Marshal(ChallengeRequest{ClientNonce: newNonce()})
	resp, err := http.Post("http://"+real.addr+ChallengePath, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	captured, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	relay := func() http.HandlerFunc {
		target, _ := url.Parse("http://" + real.addr)
		return httputil.NewSingleHostReverseProxy(target).ServeHTTP
	}()
	for _, tc := range []struct {
		name  string
		serve http.HandlerFunc
	}{
		{"a Bearer challenge like the old endpoint's", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="custody-admin"`)
			w.WriteHeader(http.StatusUnauthorized)
		}},
		{"a challenge answered with a made-up proof", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, ChallengeAnswer{ServerNonce: newNonce(), Proof: newNonce()})
		}},
		{"a replay of the real endpoint's answer to an earlier challenge", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(captured)
		}},
		{"not found", http.NotFound},
		{"success for everything", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, []KeyInfo{}) }},
		{"a relay to the real endpoint on another port", relay},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, w := impostor(t, tc.serve)
			c, err := NewClient(addr, testToken, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Verify(context.Background()); !errors.Is(err, ErrUnauthenticatedServer) {
				t.Errorf("Verify() = %v, want ErrUnauthenticatedServer", err)
			}
			if status, _, err := c.Do(context.Background(), http.MethodGet, "/admin/keys?tenant=demo", nil); !errors.Is(err, ErrUnauthenticatedServer) {
				t.Errorf("Do() = %d, %v; want ErrUnauthenticatedServer", status, err)
			}
			if got := w.carrying(testToken); len(got) > 0 {
				t.Errorf("the impostor received the token in %d messages, first:\n%s", len(got), got[0])
			}
		})
	}
}

// An answer altered after the server signed it is not believed.
func TestAnAnswerWithoutItsProofIsNotBelieved(t *testing.T) {
	tamper := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == ChallengePath {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			w.Header().Set(ProofHeader, rec.Header().Get(ProofHeader))
			w.WriteHeader(http.StatusNoContent) // "revoked", whatever happened
		})
	}
	e := newEndpoint(t, tamper)
	status, _, err := e.client(t, testToken).Do(context.Background(), http.MethodPost, "/admin/keys/cred_nope/revoke?tenant=demo", nil)
	if !errors.Is(err, ErrUnauthenticatedServer) {
		t.Errorf("Do() through a tampered answer = %d, %v; want ErrUnauthenticatedServer", status, err)
	}
}

func TestNothingListeningAtTheAddressIsErrNoServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := NewClient(addr, testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Verify(context.Background()); !errors.Is(err, ErrNoServer) {
		t.Errorf("Verify() = %v, want ErrNoServer", err)
	}
}

func TestPendingChallengesAreBounded(t *testing.T) {
	clk := &clock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	h := Handler(nil, testToken, clk.now) // challenges touch no store
	challenge := func() int {
		body, _ := json.Marshal(ChallengeRequest{ClientNonce: newNonce()})
		req := httptest.NewRequest(http.MethodPost, ChallengePath, bytes.NewReader(body))
		req.Host = "127.0.0.1:8080"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	for i := range maxPendingNonces {
		if got := challenge(); got != http.StatusOK {
			t.Fatalf("challenge %d = %d, want 200", i+1, got)
		}
	}
	if got := challenge(); got != http.StatusServiceUnavailable {
		t.Errorf("challenge %d = %d, want 503 (too many pending)", maxPendingNonces+1, got)
	}
	clk.advance(NonceTTL)
	if got := challenge(); got != http.StatusOK {
		t.Errorf("a challenge once the pending ones expired = %d, want 200", got)
	}
}
