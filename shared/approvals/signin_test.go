package approvals_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/approvals"
	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/storetest"
)

func TestASignInLinkWorksOnce(t *testing.T) {
	e := newEnv(t)
	token := e.mint(t, seed.DemoAttorney, 0)

	page := e.do(t, http.MethodGet, "/approvals/signin?t="+token, nil, nil)
	if page.Status != http.StatusOK || !strings.Contains(page.Body, `id="sign-in"`) || !strings.Contains(page.Body, "Dana Whitfield") {
		t.Fatalf("GET of the link = %d, want 200 with the sign-in button naming Dana Whitfield:\n%s", page.Status, page.Body)
	}
	first := e.do(t, http.MethodPost, "/approvals/signin", url.Values{"t": {token}}, e.browser(""))
	if got, want := first.Status, http.StatusSeeOther; got != want {
		t.Fatalf("first press = %d, want %d:\n%s", got, want, first.Body)
	}
	if got, want := first.Header.Get("Location"), e.base+"/approvals"; got != want {
		t.Errorf("first press Location = %q, want %q", got, want)
	}
	c := sessionCookie(t, first)
	if c == nil {
		t.Fatal("the first press set no session cookie")
	}
	inbox := e.do(t, http.MethodGet, "/approvals", nil, e.browser(c.Value))
	if inbox.Status != http.StatusOK || !strings.Contains(inbox.Body, `id="principal-id">p_dana_whitfield<`) {
		t.Fatalf("the inbox with the new session = %d, want 200 naming p_dana_whitfield:\n%s", inbox.Status, inbox.Body)
	}

	second := e.do(t, http.MethodPost, "/approvals/signin", url.Values{"t": {token}}, e.browser(""))
	if got, want := second.Status, http.StatusForbidden; got != want {
		t.Errorf("second press = %d, want %d", got, want)
	}
	if c := sessionCookie(t, second); c != nil {
		t.Errorf("the second press set a session cookie %v", c)
	}
	if again := e.do(t, http.MethodGet, "/approvals/signin?t="+token, nil, nil); again.Status != http.StatusForbidden ||
		strings.Contains(again.Body, `id="sign-in"`) {
		t.Errorf("GET of a spent link = %d, want 403 without a button", again.Status)
	}
}

func TestAGetOfTheLinkSpendsNothing(t *testing.T) {
	e := newEnv(t)
	token := e.mint(t, seed.DemoAttorney, 0)
	before := e.writes()
	for range 5 { // a mail scanner, a link preview, a reload…
		if a := e.do(t, http.MethodGet, "/approvals/signin?t="+token, nil, nil); a.Status != http.StatusOK {
			t.Fatalf("GET of the link = %d, want 200", a.Status)
		}
		e.do(t, http.MethodHead, "/approvals/signin?t="+token, nil, nil)
	}
	if got := e.writes() - before; got != 0 {
		t.Errorf("GET and HEAD of the link made %d writes, want 0", got)
	}
	if a := e.do(t, http.MethodPost, "/approvals/signin", url.Values{"t": {token}}, e.browser("")); a.Status != http.StatusSeeOther {
		t.Errorf("press after the GETs = %d, want 303: the link must still work", a.Status)
	}
}

func TestTheSessionCookieHasTheDecidedFlags(t *testing.T) {
	e := newEnv(t)
	a := e.do(t, http.MethodPost, "/approvals/signin", url.Values{"t": {e.mint(t, seed.DemoAttorney, 0)}}, e.browser(""))
	c := sessionCookie(t, a)
	if c == nil {
		t.Fatal("no session cookie")
	}
	got := *c
	got.Value, got.Raw = "", ""
	want := http.Cookie{Name: "__Host-custody-approvals", Path: "/", MaxAge: int(approvals.SessionTTL / time.Second),
		HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("session cookie (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(c.Value, approvals.SessionPrefix) || len(c.Value) != len(approvals.SessionPrefix)+64 {
		t.Errorf("cookie value %q, want cas_ + 64 hex", c.Value)
	}
}

func TestAnExpiredLinkSignsNoOneIn(t *testing.T) {
	e := newEnv(t)
	token := e.mint(t, seed.DemoAttorney, time.Minute)
	e.clock.Advance(time.Minute)
	before := e.writes()
	if a := e.do(t, http.MethodGet, "/approvals/signin?t="+token, nil, nil); a.Status != http.StatusForbidden {
		t.Errorf("GET of an expired link = %d, want 403", a.Status)
	}
	a := e.do(t, http.MethodPost, "/approvals/signin", url.Values{"t": {token}}, e.browser(""))
	if a.Status != http.StatusForbidden || sessionCookie(t, a) != nil {
		t.Errorf("press of an expired link = %d (cookie %v), want 403 and no cookie", a.Status, sessionCookie(t, a))
	}
	if got := e.writes() - before; got != 0 {
		t.Errorf("an expired link made %d writes, want 0", got)
	}
}

func TestMintLinkChecksTheLifeAndThePrincipal(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		name      string
		tenant    string
		principal string
		ttl       time.Duration
		want      error
	}{
		{"the default life", seed.DemoTenant, seed.DemoAttorney, 0, nil},
		{"one minute is the shortest", seed.DemoTenant, seed.DemoAttorney, time.Minute, nil},
		{"24 hours is the longest", seed.DemoTenant, seed.DemoAttorney, 24 * time.Hour, nil},
		{"59 seconds is refused", seed.DemoTenant, seed.DemoAttorney, 59 * time.Second, approvals.ErrLinkTTL},
		{"24 hours and a second is refused", seed.DemoTenant, seed.DemoAttorney, 24*time.Hour + time.Second, approvals.ErrLinkTTL},
		{"a principal the firm does not have", seed.DemoTenant, "p_nobody", 0, approvals.ErrUnknownPrincipal},
		{"another firm's principal", seed.DemoTenant, seed.OtherPrincipal, 0, approvals.ErrUnknownPrincipal},
		{"a tenant that does not exist", "nofirm", seed.DemoAttorney, 0, approvals.ErrUnknownPrincipal},
	} {
		t.Run(c.name, func(t *testing.T) {
			now := e.clock.Now()
			l, err := approvals.MintLink(context.Background(), e.st, approvals.LinkRequest{Tenant: c.tenant, Principal: c.principal, TTL: c.ttl}, now)
			if !errors.Is(err, c.want) {
				t.Fatalf("MintLink() error = %v, want %v", err, c.want)
			}
			if err != nil {
				return
			}
			ttl := c.ttl
			if ttl == 0 {
				ttl = approvals.DefaultLinkTTL
			}
			if got, want := l.ExpiresAt, now.Add(ttl).UTC(); !got.Equal(want) {
				t.Errorf("ExpiresAt = %v, want %v", got, want)
			}
			if got, want := l.URL(e.base+"/"), e.base+"/approvals/signin?t="+l.Token; got != want {
				t.Errorf("URL = %q, want %q", got, want)
			}
			if !strings.HasPrefix(l.Token, "csl_") || len(l.Token) != 4+48 {
				t.Errorf("token %q, want csl_ + 48 hex", l.Token)
			}
		})
	}
}

func TestASessionEndsEightHoursAfterSignIn(t *testing.T) {
	e := newEnv(t)
	cookie := e.signIn(t, seed.DemoAttorney)
	e.clock.Advance(approvals.SessionTTL - time.Second)
	if a := e.do(t, http.MethodGet, "/approvals", nil, e.browser(cookie)); a.Status != http.StatusOK {
		t.Fatalf("inbox a second before the end = %d, want 200", a.Status)
	}
	e.clock.Advance(time.Second)
	a := e.do(t, http.MethodGet, "/approvals", nil, e.browser(cookie))
	if got, want := a.Status, http.StatusSeeOther; got != want {
		t.Fatalf("inbox at 8 h = %d, want %d", got, want)
	}
	if got, want := a.Header.Get("Location"), e.base+"/approvals/signin"; got != want {
		t.Errorf("Location = %q, want %q", got, want)
	}
}

func TestPressingOneLinkManyTimesAtOnceSignsInOnce(t *testing.T) {
	e := newEnv(t)
	token := e.mint(t, seed.DemoAttorney, 0)
	const presses = 20
	var wg sync.WaitGroup
	statuses := make([]int, presses)
	cookies := make([]*http.Cookie, presses)
	start := make(chan struct{})
	for i := range presses {
		wg.Go(func() {
			<-start
			a := e.do(t, http.MethodPost, "/approvals/signin", url.Values{"t": {token}}, e.browser(""))
			statuses[i], cookies[i] = a.Status, sessionCookie(t, a)
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for i, s := range statuses {
		switch {
		case s == http.StatusSeeOther && cookies[i] != nil:
			won++
		case s == http.StatusForbidden && cookies[i] == nil:
		default:
			t.Errorf("press %d = %d (cookie %v), want 303 with a cookie or 403 without", i, s, cookies[i])
		}
	}
	if won != 1 {
		t.Errorf("%d presses signed in, want exactly 1", won)
	}
	recs, err := audit.Day(context.Background(), e.storeOf(), seed.DemoTenant, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	signIns := 0
	for _, r := range recs {
		if r.Method == "approvals/signin" {
			signIns++
		}
	}
	if signIns != 1 {
		t.Errorf("%d sign-in audit rows, want 1", signIns)
	}
}

func TestAStoreFaultWhileSpendingLeavesTheLinkUsable(t *testing.T) {
	e := newEnv(t)
	token := e.mint(t, seed.DemoAttorney, 0)
	e.st.Add(storetest.Rule{Method: storetest.MethodTransact, Nth: 1, Err: store.ErrUnavailable})
	a := e.do(t, http.MethodPost, "/approvals/signin", url.Values{"t": {token}}, e.browser(""))
	if a.Status != http.StatusServiceUnavailable || sessionCookie(t, a) != nil {
		t.Fatalf("press during a store fault = %d (cookie %v), want 503 and no cookie", a.Status, sessionCookie(t, a))
	}
	if strings.Contains(a.Body, "unavailable:") || strings.Contains(a.Body, "SIGNIN") {
		t.Errorf("the 503 page leaks the store's error:\n%s", a.Body)
	}
	if a := e.do(t, http.MethodPost, "/approvals/signin", url.Values{"t": {token}}, e.browser("")); a.Status != http.StatusSeeOther {
		t.Errorf("press after the fault = %d, want 303", a.Status)
	}
}

func TestSignInCarriesOnlyARelativeNext(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ next, want string }{
		{"", "/approvals"},
		{"/approvals/h/eli_0123", "/approvals/h/eli_0123"},
		{"//evil.example/approvals", "/approvals"},
		{"https://evil.example/approvals", "/approvals"},
		{"/approvals/../mcp", "/approvals"},
		{"/approvalsx", "/approvals"},
		{"/approvals/\\evil", "/approvals"},
		{"/mcp", "/approvals"},
	} {
		t.Run("next "+c.next, func(t *testing.T) {
			a := e.do(t, http.MethodPost, "/approvals/signin", url.Values{"t": {e.mint(t, seed.DemoAttorney, 0)}, "next": {c.next}}, e.browser(""))
			if got, want := a.Header.Get("Location"), e.base+c.want; got != want {
				t.Errorf("Location = %q, want %q", got, want)
			}
		})
	}
}

func TestARemovedPrincipalsSessionEnds(t *testing.T) {
	e := newEnv(t)
	cookie := e.signIn(t, seed.DemoParalegal)
	if err := e.storeOf().Delete(context.Background(), store.Key{PK: "T#" + seed.DemoTenant, SK: "PRINCIPAL#" + seed.DemoParalegal}); err != nil {
		t.Fatal(err)
	}
	if a := e.do(t, http.MethodGet, "/approvals", nil, e.browser(cookie)); a.Status != http.StatusSeeOther {
		t.Errorf("inbox of a removed principal = %d, want 303 to sign in", a.Status)
	}
}
