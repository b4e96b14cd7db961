// Package servertest starts a real Custody endpoint for tests: the composed
// handler over the file engine in a temp dir (behind the fault-injecting
// decorator, which passes every call through until a test adds a rule),
// seeded with the demo firm and a second firm, with keys for each role the
// tests need, served by httptest over real HTTP. Nothing in it is a mock.
package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/auth/oauth"
	"github.com/custodymcp/custody/shared/prompts"
	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/resources"
	"github.com/custodymcp/custody/shared/server"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/filestore"
	"github.com/custodymcp/custody/shared/store/storetest"
	"github.com/custodymcp/custody/shared/tasks"
	"github.com/custodymcp/custody/shared/tools"
)

// Epoch is the fixed clock's start: after every seeded row's updated_at.
var Epoch = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// Clock is a settable test clock.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// NewClock returns a clock reading start until it is advanced.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Roles of the keys an Env mints.
const (
	Attorney    = "attorney"     // demo attorney, every read scope and write
	Attorney2   = "attorney2"    // a second key of the same attorney
	Paralegal   = "paralegal"    // demo paralegal (screened from one matter)
	ClientSafe  = "client_safe"  // the attorney, client-safe class (read scopes; never write)
	AllowListed = "allow_listed" // the attorney, restricted to one matter
	ReadOnly    = "read_only"    // the attorney, scope read only (no docs:read)
	OtherFirm   = "other_firm"   // a principal of another tenant
)

// Options adjust an Env.
type Options struct {
	ToolPageSize   int
	Limits         ratelimit.Limits
	MaxBodyBytes   int64
	AllowedOrigins []string
	AllowedHosts   []string
	KillSwitch     tools.KillSwitch
	RegisterExtra  func(*tools.Registry) error
	// RegisterExtraOn is RegisterExtra for fixtures that read the store
	// (the Env's, under its fault decorator).
	RegisterExtraOn func(*tools.Registry, store.Store) error
	// RegisterExtraPrompts and RegisterExtraResources add prompts and
	// resources (see server.Config).
	RegisterExtraPrompts   func(*prompts.Registry) error
	RegisterExtraResources func(*resources.Registry) error
	// ListPageSize pages prompts/list and the resource lists (0: ToolPageSize).
	ListPageSize int
	// Store, when set, is used instead of a fresh file store (it must be
	// empty; it is seeded).
	Store store.Store
	// Clock, when set, is the Env's clock instead of a fresh one at Epoch.
	// Give it to the engine of Options.Store too, so the engine's expiry
	// and the server's sessions and rate windows read one time.
	Clock *Clock
	// GETStream offers the GET stream, polling every 10 ms and re-resolving
	// the credential every 50 ms.
	GETStream bool
	// Buffered serves as a buffered front door would (server.Config.Buffered).
	Buffered bool
	// MaxSessions and MaxConcurrent: see server.Config.
	MaxSessions   int
	MaxConcurrent map[ratelimit.Lane]int
	// ParamsDecoded: see server.Config.
	ParamsDecoded func(method string, decodes int)
	// Lane, when set, serves the upload lane and downloads (server.Config.Lane)
	// over its blob store and scanner; a PublicBaseURL left empty is each
	// instance's own httptest URL.
	Lane *server.LaneConfig
	// OAuth, when set, makes every instance an OAuth resource server for
	// this issuer configuration; each instance's PublicBaseURL is its own
	// httptest URL, so its canonical resource is that URL + "/mcp".
	OAuth *oauth.Config
	// TaskQueue, when set, serves tasks (server.Config.TaskQueue): the test
	// decides whether a dispatcher delivers its messages (StartWorker) or
	// it calls the worker itself.
	TaskQueue queue.Sender
	// TaskOptions tune the tasks (server.Config.TaskOptions).
	TaskOptions tasks.Options
	// ProposalLife is a proposal's life (server.Config.ProposalLife; 0:
	// 7 days).
	ProposalLife time.Duration
	// Approvals serves the approval page under /approvals of every
	// instance, its public base URL the instance's own httptest URL.
	Approvals bool
}

// Env is a running endpoint.
type Env struct {
	Clock  *Clock
	Faulty *storetest.Faulty
	Store  store.Store // the engine under the decorator
	Server *server.Server
	HTTP   *httptest.Server
	// URL is the /mcp endpoint.
	URL   string
	Keys  map[string]string
	Creds map[string]*auth.Credential
	// AllowedMatter is the one matter the AllowListed key reaches.
	AllowedMatter string
	// DataPath is the file engine's file ("" when Options.Store was given).
	DataPath string

	config    server.Config
	oauth     *oauth.Config
	approvals bool
}

// New starts an Env; it is closed with the test.
func New(t testing.TB, opts Options) *Env {
	t.Helper()
	clock := opts.Clock
	if clock == nil {
		clock = NewClock(Epoch)
	}
	st, dataPath := opts.Store, ""
	if st == nil {
		dataPath = filepath.Join(t.TempDir(), "custody.db")
		fs, err := filestore.Open(dataPath, filestore.Options{Now: clock.Now})
		if err != nil {
			t.Fatalf("open filestore: %v", err)
		}
		t.Cleanup(func() { fs.Close() })
		st = fs
	}
	ctx := context.Background()
	for _, load := range []func() (records.Fixture, error){seed.Demo, seed.OtherFirm} {
		fx, err := load()
		if err != nil {
			t.Fatalf("load fixture: %v", err)
		}
		if _, err := records.Import(ctx, st, fx, Epoch.Add(-time.Hour)); err != nil {
			t.Fatalf("import fixture: %v", err)
		}
	}
	env := &Env{Clock: clock, Store: st, Faulty: storetest.NewFaulty(st), Keys: map[string]string{},
		Creds: map[string]*auth.Credential{}, DataPath: dataPath}
	env.AllowedMatter = seed.DemoMatters[0]
	reads := []auth.Scope{auth.ScopeRead, auth.ScopeDocsRead, auth.ScopeTasksRead, auth.ScopeAnalysisRead}
	// Every key but the client-safe and read-only ones may write (a
	// client-safe credential never holds write: auth.Mint refuses it).
	all := append([]auth.Scope{auth.ScopeWrite}, reads...)
	mints := []struct {
		role string
		req  auth.MintRequest
	}{
		{Attorney, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney, Scopes: all}},
		{Attorney2, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney, Scopes: all}},
		{Paralegal, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoParalegal, Scopes: all}},
		{ClientSafe, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney, Scopes: reads, Class: auth.ClassClientSafe}},
		{AllowListed, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney, Scopes: all, AllowList: []string{env.AllowedMatter}}},
		{ReadOnly, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney, Scopes: []auth.Scope{auth.ScopeRead}}},
		{OtherFirm, auth.MintRequest{Tenant: seed.OtherTenant, Owner: seed.OtherPrincipal, Scopes: all}},
	}
	for _, m := range mints {
		key, cred, err := auth.Mint(ctx, st, m.req, Epoch.Add(-time.Minute))
		if err != nil {
			t.Fatalf("mint %s: %v", m.role, err)
		}
		env.Keys[m.role], env.Creds[m.role] = key, cred
	}
	env.config = server.Config{
		Store: env.Faulty, CursorKey: bytes.Repeat([]byte{7}, 32), Limits: opts.Limits,
		AllowedOrigins: opts.AllowedOrigins, AllowedHosts: opts.AllowedHosts,
		MaxBodyBytes: opts.MaxBodyBytes, ToolPageSize: opts.ToolPageSize, KillSwitch: opts.KillSwitch,
		Now: clock.Now, RegisterExtra: extraTools(opts, env.Faulty),
		RegisterExtraPrompts: opts.RegisterExtraPrompts, RegisterExtraResources: opts.RegisterExtraResources,
		ListPageSize: opts.ListPageSize,
		PollMin:      5 * time.Millisecond, PollMax: 20 * time.Millisecond,
		GETStream: opts.GETStream, Buffered: opts.Buffered, StreamPoll: 10 * time.Millisecond, Heartbeat: 20 * time.Millisecond,
		Recheck:     50 * time.Millisecond,
		MaxSessions: opts.MaxSessions, MaxConcurrent: opts.MaxConcurrent, ParamsDecoded: opts.ParamsDecoded,
		TaskQueue: opts.TaskQueue, TaskOptions: opts.TaskOptions,
		Lane: opts.Lane, ProposalLife: opts.ProposalLife,
	}
	env.oauth, env.approvals = opts.OAuth, opts.Approvals
	env.Server, env.URL = env.Instance(t)
	return env
}

// extraTools joins Options.RegisterExtra and RegisterExtraOn.
func extraTools(opts Options, st store.Store) func(*tools.Registry) error {
	if opts.RegisterExtraOn == nil {
		return opts.RegisterExtra
	}
	return func(reg *tools.Registry) error {
		if opts.RegisterExtra != nil {
			if err := opts.RegisterExtra(reg); err != nil {
				return err
			}
		}
		return opts.RegisterExtraOn(reg, st)
	}
}

// Instance composes one more server over the same store — another
// "instance" of the stateless endpoint — and returns it with its /mcp URL.
func (e *Env) Instance(t testing.TB) (*server.Server, string) {
	t.Helper()
	hs := httptest.NewUnstartedServer(nil)
	cfg := e.config
	if e.oauth != nil {
		oc := *e.oauth
		oc.PublicBaseURL = "http://" + hs.Listener.Addr().String()
		v, err := oauth.New(oc)
		if err != nil {
			t.Fatalf("oauth verifier: %v", err)
		}
		cfg.OAuth = v
	}
	if e.approvals {
		cfg.PublicBaseURL = "http://" + hs.Listener.Addr().String()
	}
	if cfg.Lane != nil && cfg.Lane.PublicBaseURL == "" {
		lc := *cfg.Lane
		lc.PublicBaseURL = "http://" + hs.Listener.Addr().String()
		cfg.Lane = &lc
	}
	srv, err := server.New(cfg)
	if err != nil {
		hs.Listener.Close()
		t.Fatalf("compose server: %v", err)
	}
	if err := srv.Registry.Check(); err != nil {
		t.Fatalf("a tool cannot be prepared: %v", err)
	}
	hs.Config.Handler = srv.Handler()
	hs.Start()
	t.Cleanup(hs.Close)
	if e.HTTP == nil {
		e.HTTP = hs
	}
	return srv, hs.URL + "/mcp"
}

// Response is an HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic value.
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("decode body %q: %v", r.Body, err)
	}
	return v
}

// Do sends one request to /mcp. headers are "Name: value" strings; a body
// of nil sends none.
func (e *Env) Do(t testing.TB, method string, body []byte, headers ...string) *Response {
	t.Helper()
	return DoURL(t, e.URL, method, body, headers...)
}

// DoURL is Do against any endpoint URL (another instance's).
func DoURL(t testing.TB, url, method string, body []byte, headers ...string) *Response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ":")
		if http.CanonicalHeaderKey(strings.TrimSpace(name)) == "Host" {
			req.Host = strings.TrimSpace(value) // net/http sends req.Host, never Header["Host"]
			continue
		}
		req.Header[http.CanonicalHeaderKey(strings.TrimSpace(name))] = []string{strings.TrimSpace(value)}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// Session is a 2025-era session of one key.
type Session struct {
	env      *Env
	Key      string
	ID       string
	Revision string
	// lastID numbers the session's requests; atomic, so that Call and
	// Tool may be used from many goroutines (the races of RaceReceipts),
	// and shared by a copy of the Session (a second key in the session).
	lastID *atomic.Int64
}

// Initialize starts a session for the role's key at revision rev and sends
// notifications/initialized.
func (e *Env) Initialize(t testing.TB, role, rev string) *Session {
	t.Helper()
	return e.InitializeWith(t, role, rev, `{}`)
}

// InitializeWith is Initialize declaring the client capabilities caps (JSON).
func (e *Env) InitializeWith(t testing.TB, role, rev, caps string) *Session {
	t.Helper()
	key := e.Keys[role]
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"servertest","version":"0"}}}`, rev, caps)
	resp := e.Do(t, http.MethodPost, []byte(body), "Authorization: Bearer "+key)
	if resp.Status != http.StatusOK {
		t.Fatalf("initialize: %d %s", resp.Status, resp.Body)
	}
	s := &Session{env: e, Key: key, ID: resp.Header.Get("Mcp-Session-Id"), Revision: rev, lastID: new(atomic.Int64)}
	s.lastID.Store(1)
	if got := resp.JSON(t)["result"].(map[string]any)["protocolVersion"]; got != rev && rev != "" {
		s.Revision = got.(string)
	}
	if r := s.Post(t, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); r.Status != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", r.Status, r.Body)
	}
	return s
}

// Post sends a body in the session with its key and revision header.
func (s *Session) Post(t testing.TB, body []byte, extra ...string) *Response {
	t.Helper()
	return s.PostTo(t, s.env.URL, body, extra...)
}

// Headers are the session's request headers.
func (s *Session) Headers() []string {
	return []string{"Authorization: Bearer " + s.Key, "Mcp-Session-Id: " + s.ID, "MCP-Protocol-Version: " + s.Revision}
}

// PostTo sends a body in the session to another instance's URL.
func (s *Session) PostTo(t testing.TB, url string, body []byte, extra ...string) *Response {
	t.Helper()
	return DoURL(t, url, http.MethodPost, body, append(s.Headers(), extra...)...)
}

// Call sends a request and returns its decoded JSON-RPC response.
func (s *Session) Call(t testing.TB, method string, params any) map[string]any {
	t.Helper()
	id := s.lastID.Add(1)
	p, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p)
	resp := s.Post(t, []byte(body))
	if resp.Status != http.StatusOK {
		t.Fatalf("%s: HTTP %d %s", method, resp.Status, resp.Body)
	}
	return resp.JSON(t)
}

// Tool calls a tool and returns its CallToolResult (a JSON-RPC error fails).
func (s *Session) Tool(t testing.TB, name string, args any) map[string]any {
	t.Helper()
	msg := s.Call(t, "tools/call", map[string]any{"name": name, "arguments": args})
	res, ok := msg["result"].(map[string]any)
	if !ok {
		t.Fatalf("tools/call %s: no result: %v", name, msg)
	}
	return res
}

// RefusalClass returns a CallToolResult's refusal class (docs/contracts.md §3):
// "" for a success, structuredContent.error.class for an isError result.
func RefusalClass(res map[string]any) string {
	if res["isError"] != true {
		return ""
	}
	sc, _ := res["structuredContent"].(map[string]any)
	e, _ := sc["error"].(map[string]any)
	c, _ := e["class"].(string)
	return c
}

// Structured returns a result's structuredContent.
func Structured(t testing.TB, res map[string]any) map[string]any {
	t.Helper()
	sc, ok := res["structuredContent"].(map[string]any)
	if !ok {
		t.Fatalf("no structuredContent in %v", res)
	}
	return sc
}

// Barrier sends n tools/call requests of tool with args in the session at
// once — every goroutine waits on one barrier, then all post together —
// and counts the answers: served (a success), limited (RATE_LIMITED) and
// other (anything else). It is the 200-way race of issue 8, item 3.
func (s *Session) Barrier(t testing.TB, n int, tool string, args any) (served, limited, other int) {
	t.Helper()
	return s.BarrierAcross(t, []string{s.env.URL}, n, tool, args)
}

// BarrierAcross is Barrier with the n requests spread over the /mcp URLs
// of several instances (Env.Instance) in turn: request i goes to
// urls[i % len(urls)], so each instance's gate admits its share against
// its own leases of the one bucket (issue 19, item 6).
func (s *Session) BarrierAcross(t testing.TB, urls []string, n int, tool string, args any) (served, limited, other int) {
	t.Helper()
	p, err := json.Marshal(map[string]any{"name": tool, "arguments": args})
	if err != nil {
		t.Fatal(err)
	}
	start := make(chan struct{})
	results := make(chan string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, 1000+i, p)
			<-start
			resp := s.PostTo(t, urls[i%len(urls)], []byte(body))
			if resp.Status != http.StatusOK {
				results <- fmt.Sprintf("http %d", resp.Status)
				return
			}
			var msg map[string]any
			if json.Unmarshal(resp.Body, &msg) != nil {
				results <- "undecodable"
				return
			}
			res, _ := msg["result"].(map[string]any)
			results <- RefusalClass(res)
		}()
	}
	close(start)
	wg.Wait()
	close(results)
	for r := range results {
		switch r {
		case "":
			served++
		case "RATE_LIMITED":
			limited++
		default:
			other++
		}
	}
	return served, limited, other
}
