package approvals_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/approvals"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/filestore"
	"github.com/custodymcp/custody/shared/store/storetest"
)

// clock is a test's settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// env is the approval page over the file engine in a temp dir (through a
// fault decorator that counts calls), seeded with the demo firm, served by
// an httptest server on loopback whose URL is the public base.
type env struct {
	st    *storetest.Faulty
	page  *approvals.Page
	srv   *httptest.Server
	base  string
	clock *clock
	http  *http.Client
}

// newEnv starts the page; configure may change its configuration (the
// base URL is the server's unless configure sets one).
func newEnv(t *testing.T, configure ...func(*approvals.Config)) *env {
	t.Helper()
	return newEnvOn(t, httptest.NewServer, configure...)
}

// newEnvOn is newEnv on a server start makes (httptest.NewTLSServer for an
// https base).
func newEnvOn(t *testing.T, start func(http.Handler) *httptest.Server, configure ...func(*approvals.Config)) *env {
	t.Helper()
	fs, err := filestore.Open(filepath.Join(t.TempDir(), "store.db"), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	fx, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := records.Import(context.Background(), fs, fx, time.Now()); err != nil {
		t.Fatal(err)
	}
	e := &env{st: storetest.NewFaulty(fs), clock: &clock{t: time.Now()}}
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { e.page.ServeHTTP(w, r) })
	e.srv = start(h)
	t.Cleanup(e.srv.Close)
	cfg := approvals.Config{Store: e.st, PublicBaseURL: e.srv.URL, Now: e.clock.Now}
	for _, f := range configure {
		f(&cfg)
	}
	if e.page, err = approvals.New(cfg); err != nil {
		t.Fatal(err)
	}
	e.base = e.page.BaseURL()
	client := *e.srv.Client()
	e.http = &client
	e.http.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return e
}

// mint makes a sign-in link's token for a demo principal.
func (e *env) mint(t *testing.T, principal string, ttl time.Duration) string {
	t.Helper()
	l, err := approvals.MintLink(context.Background(), e.st, approvals.LinkRequest{Tenant: seed.DemoTenant, Principal: principal, TTL: ttl}, e.clock.Now())
	if err != nil {
		t.Fatalf("MintLink(%s) error = %v", principal, err)
	}
	return l.Token
}

// answer is a response with its body read.
type answer struct {
	Status int
	Header http.Header
	Body   string
}

// do sends a request to the page's server. header values are set as given
// (Cookie included); form, when non-nil, is the urlencoded body.
func (e *env) do(t *testing.T, method, path string, form url.Values, header map[string]string) answer {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := e.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

// browser are the headers a browser sends with a form of the page's own:
// the Origin of the base.
func (e *env) browser(cookie string) map[string]string {
	h := map[string]string{"Origin": e.srv.URL}
	if cookie != "" {
		h["Cookie"] = approvals.CookieName + "=" + cookie
	}
	return h
}

// signIn spends a fresh link of principal and returns the session cookie's
// value.
func (e *env) signIn(t *testing.T, principal string) string {
	t.Helper()
	a := e.do(t, http.MethodPost, "/approvals/signin", url.Values{"t": {e.mint(t, principal, 0)}}, e.browser(""))
	if a.Status != http.StatusSeeOther {
		t.Fatalf("sign-in POST = %d, want 303:\n%s", a.Status, a.Body)
	}
	c := sessionCookie(t, a)
	if c == nil {
		t.Fatalf("sign-in set no %s cookie (Set-Cookie %q)", approvals.CookieName, a.Header.Values("Set-Cookie"))
	}
	return c.Value
}

// sessionCookie returns the session cookie an answer sets, or nil.
func sessionCookie(t *testing.T, a answer) *http.Cookie {
	t.Helper()
	for _, line := range a.Header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			t.Fatalf("Set-Cookie %q: %v", line, err)
		}
		if c.Name == approvals.CookieName {
			return c
		}
	}
	return nil
}

// csrf returns the value of the hidden csrf field of the form posting to
// action in a page.
func csrf(t *testing.T, page, action string) string {
	t.Helper()
	i := strings.Index(page, `action="`+action+`"`)
	if i < 0 {
		t.Fatalf("no form posting to %s in the page:\n%s", action, page)
	}
	rest := page[i:]
	const field = `name="csrf" value="`
	j := strings.Index(rest, field)
	if j < 0 {
		t.Fatalf("the form posting to %s has no csrf field", action)
	}
	rest = rest[j+len(field):]
	return rest[:strings.IndexByte(rest, '"')]
}

// writes counts the write calls the store has seen.
func (e *env) writes() int {
	n := 0
	for _, m := range []string{storetest.MethodPut, storetest.MethodUpdate, storetest.MethodDelete, storetest.MethodTransact} {
		n += e.st.Calls(m)
	}
	return n
}

// storeOf is the engine under the decorator.
func (e *env) storeOf() store.Store { return e.st.Unwrap() }

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
