package approvals_test

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/approvals"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/records/seed"
)

func TestRefusedFormsAre403AndWriteNothing(t *testing.T) {
	e := newEnv(t)
	mine := e.signIn(t, seed.DemoAttorney)
	theirs := e.signIn(t, seed.DemoParalegal)
	inbox := func(cookie string) string {
		a := e.do(t, http.MethodGet, "/approvals", nil, e.browser(cookie))
		if a.Status != http.StatusOK {
			t.Fatalf("inbox = %d", a.Status)
		}
		return a.Body
	}
	signOut := e.base + "/approvals/signout"
	myToken, theirToken := html.UnescapeString(csrf(t, inbox(mine), signOut)), html.UnescapeString(csrf(t, inbox(theirs), signOut))
	cookie := approvals.CookieName + "=" + mine
	for _, c := range []struct {
		name   string
		form   url.Values
		header map[string]string
	}{
		{"no CSRF token", url.Values{}, map[string]string{"Origin": e.srv.URL, "Cookie": cookie}},
		{"an empty CSRF token", url.Values{"csrf": {""}}, map[string]string{"Origin": e.srv.URL, "Cookie": cookie}},
		{"another session's CSRF token", url.Values{"csrf": {theirToken}}, map[string]string{"Origin": e.srv.URL, "Cookie": cookie}},
		{"a token one character off", url.Values{"csrf": {oneOff(myToken)}}, map[string]string{"Origin": e.srv.URL, "Cookie": cookie}},
		{"a foreign Origin", url.Values{"csrf": {myToken}}, map[string]string{"Origin": "https://evil.example", "Cookie": cookie}},
		{"the base's host on another scheme", url.Values{"csrf": {myToken}}, map[string]string{"Origin": strings.Replace(e.srv.URL, "http:", "https:", 1), "Cookie": cookie}},
		{"no Origin", url.Values{"csrf": {myToken}}, map[string]string{"Cookie": cookie}},
		{"Origin null from another site", url.Values{"csrf": {myToken}}, map[string]string{"Origin": "null", "Sec-Fetch-Site": "cross-site", "Cookie": cookie}},
		{"Origin null without fetch metadata", url.Values{"csrf": {myToken}}, map[string]string{"Origin": "null", "Cookie": cookie}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := e.writes()
			a := e.do(t, http.MethodPost, "/approvals/signout", c.form, c.header)
			if got, want := a.Status, http.StatusForbidden; got != want {
				t.Errorf("POST = %d, want %d", got, want)
			}
			if got := e.writes() - before; got != 0 {
				t.Errorf("a refused form made %d writes, want 0", got)
			}
			if a.Header.Get("Set-Cookie") != "" {
				t.Errorf("a refused form set a cookie: %q", a.Header.Values("Set-Cookie"))
			}
			if a := e.do(t, http.MethodGet, "/approvals", nil, e.browser(mine)); a.Status != http.StatusOK {
				t.Errorf("the session after a refused sign-out = %d, want 200 (still signed in)", a.Status)
			}
		})
	}
	t.Run("a foreign Origin on the sign-in button", func(t *testing.T) {
		before := e.writes()
		token := e.mint(t, seed.DemoAttorney, 0)
		a := e.do(t, http.MethodPost, "/approvals/signin", url.Values{"t": {token}}, map[string]string{"Origin": "https://evil.example"})
		if a.Status != http.StatusForbidden || sessionCookie(t, a) != nil {
			t.Errorf("POST = %d (cookie %v), want 403 and no cookie", a.Status, sessionCookie(t, a))
		}
		if got := e.writes() - before; got != 1 { // the mint
			t.Errorf("%d writes besides the mint, want 0", got-1)
		}
	})
}

// oneOff is token with its first character changed (never to itself).
func oneOff(token string) string {
	c := byte('A')
	if token[0] == c {
		c = 'B'
	}
	return string(c) + token[1:]
}

func TestSigningOutDeletesTheSession(t *testing.T) {
	for _, c := range []struct {
		name   string
		header func(e *env) map[string]string
	}{
		{"with the base's Origin", func(e *env) map[string]string { return map[string]string{"Origin": e.srv.URL} }},
		// What Chromium sends for a form on a page with Referrer-Policy:
		// no-referrer (checked with Chromium 156).
		{"with Origin null from the page itself", func(e *env) map[string]string {
			return map[string]string{"Origin": "null", "Sec-Fetch-Site": "same-origin"}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			cookie := e.signIn(t, seed.DemoAttorney)
			page := e.do(t, http.MethodGet, "/approvals", nil, e.browser(cookie)).Body
			h := c.header(e)
			h["Cookie"] = approvals.CookieName + "=" + cookie
			a := e.do(t, http.MethodPost, "/approvals/signout", url.Values{"csrf": {html.UnescapeString(csrf(t, page, e.base+"/approvals/signout"))}}, h)
			if got, want := a.Status, http.StatusSeeOther; got != want {
				t.Fatalf("sign-out = %d, want %d:\n%s", got, want, a.Body)
			}
			if got, want := a.Header.Get("Location"), e.base+"/approvals/signin"; got != want {
				t.Errorf("Location = %q, want %q", got, want)
			}
			if c := sessionCookie(t, a); c == nil || c.MaxAge >= 0 || c.Value != "" {
				t.Errorf("sign-out cookie = %v, want the session cookie cleared (Max-Age=0)", c)
			}
			if a := e.do(t, http.MethodGet, "/approvals", nil, e.browser(cookie)); a.Status != http.StatusSeeOther {
				t.Errorf("the old cookie after sign-out = %d, want 303 to sign in", a.Status)
			}
		})
	}
}

func TestAuthorizationIsIgnored(t *testing.T) {
	e := newEnv(t)
	key, _, err := auth.Mint(context.Background(), e.storeOf(), auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney,
		Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	paralegal := e.signIn(t, seed.DemoParalegal)
	t.Run("a valid API key without a session is sent to sign in", func(t *testing.T) {
		a := e.do(t, http.MethodGet, "/approvals", nil, map[string]string{"Authorization": "Bearer " + key})
		if got, want := a.Status, http.StatusSeeOther; got != want {
			t.Errorf("GET with a key = %d, want %d", got, want)
		}
	})
	t.Run("a key's owner does not replace the session's principal", func(t *testing.T) {
		h := e.browser(paralegal)
		h["Authorization"] = "Bearer " + key
		a := e.do(t, http.MethodGet, "/approvals", nil, h)
		if a.Status != http.StatusOK || !strings.Contains(a.Body, `id="principal-id">`+seed.DemoParalegal+`<`) ||
			strings.Contains(a.Body, seed.DemoAttorney) {
			t.Errorf("GET with the paralegal's cookie and the attorney's key = %d, want the paralegal's page:\n%s", a.Status, a.Body)
		}
	})
	t.Run("a key does not stand in for the session on a form", func(t *testing.T) {
		before := e.writes()
		a := e.do(t, http.MethodPost, "/approvals/signout", url.Values{"csrf": {"x"}},
			map[string]string{"Origin": e.srv.URL, "Authorization": "Bearer " + key})
		if got, want := a.Status, http.StatusSeeOther; got != want {
			t.Errorf("POST with a key and no session = %d, want %d (to sign in)", got, want)
		}
		if got := e.writes() - before; got != 0 {
			t.Errorf("%d writes, want 0", got)
		}
	})
}

func TestEveryAnswerCarriesTheSecurityHeaders(t *testing.T) {
	e := newEnv(t)
	cookie := e.signIn(t, seed.DemoAttorney)
	for _, c := range []struct {
		name         string
		method, path string
		cookie       string
		status       int
	}{
		{"the inbox", http.MethodGet, "/approvals", cookie, http.StatusOK},
		{"the inbox without a session", http.MethodGet, "/approvals", "", http.StatusSeeOther},
		{"the sign-in page", http.MethodGet, "/approvals/signin", "", http.StatusOK},
		{"an unknown link", http.MethodGet, "/approvals/signin?t=csl_00", "", http.StatusForbidden},
		{"the stylesheet", http.MethodGet, "/approvals/style.css", "", http.StatusOK},
		{"an unknown page", http.MethodGet, "/approvals/nothing", "", http.StatusNotFound},
		{"a method the page does not answer", http.MethodPut, "/approvals/signin", "", http.StatusMethodNotAllowed},
		{"a refused form", http.MethodPost, "/approvals/signout", cookie, http.StatusForbidden},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := map[string]string{}
			if c.cookie != "" {
				h["Cookie"] = approvals.CookieName + "=" + c.cookie
			}
			a := e.do(t, c.method, c.path, url.Values{}, h)
			if a.Status != c.status {
				t.Errorf("status = %d, want %d", a.Status, c.status)
			}
			for k, want := range approvals.SecurityHeaders {
				if got := a.Header.Values(k); len(got) != 1 || got[0] != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if strings.Contains(strings.ToLower(a.Body), "<script") {
				t.Errorf("the answer has a script:\n%s", a.Body)
			}
		})
	}
	if got, want := approvals.SecurityHeaders["Content-Security-Policy"],
		"default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"; got != want {
		t.Errorf("the policy is %q, want docs/decisions.md's %q", got, want)
	}
}

func TestLinksComeFromThePublicBaseNeverFromHost(t *testing.T) {
	e := newEnv(t, func(c *approvals.Config) { c.PublicBaseURL = "https://approvals.example/prod/" })
	const base = "https://approvals.example/prod"
	hostile := map[string]string{"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "http", "Forwarded": "host=evil.example"}
	serve := func(method, target string, form url.Values, header map[string]string) *httptest.ResponseRecorder {
		var r *http.Request
		if form != nil {
			r = httptest.NewRequest(method, target, strings.NewReader(form.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else {
			r = httptest.NewRequest(method, target, nil)
		}
		r.Host = "evil.example"
		for k, v := range hostile {
			r.Header.Set(k, v)
		}
		for k, v := range header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		e.page.ServeHTTP(w, r)
		return w
	}
	if got, want := e.page.BaseURL(), base; got != want {
		t.Fatalf("BaseURL() = %q, want %q", got, want)
	}
	if got, want := serve(http.MethodGet, "/approvals", nil, nil).Header().Get("Location"), base+"/approvals/signin"; got != want {
		t.Errorf("redirect to sign in = %q, want %q", got, want)
	}
	page := serve(http.MethodGet, "/approvals/signin?t="+e.mint(t, seed.DemoAttorney, 0), nil, nil).Body.String()
	for _, want := range []string{`href="` + base + `/approvals/style.css"`, `action="` + base + `/approvals/signin"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the sign-in page lacks %s:\n%s", want, page)
		}
	}
	if strings.Contains(page, "evil.example") {
		t.Errorf("the page names the Host or X-Forwarded-Host:\n%s", page)
	}
	token := e.mint(t, seed.DemoAttorney, 0)
	if got := serve(http.MethodPost, "/approvals/signin", url.Values{"t": {token}}, map[string]string{"Origin": "https://evil.example"}).Code; got != http.StatusForbidden {
		t.Errorf("a POST whose Origin is the Host = %d, want 403", got)
	}
	w := serve(http.MethodPost, "/approvals/signin", url.Values{"t": {token}}, map[string]string{"Origin": "https://approvals.example"})
	if got, want := w.Header().Get("Location"), base+"/approvals"; w.Code != http.StatusSeeOther || got != want {
		t.Errorf("sign-in from the base's origin = %d %q, want 303 %q", w.Code, got, want)
	}
}

func TestNewRefusesABaseThatCannotKeepASession(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		base string
		ok   bool
	}{
		{"https://approvals.example", true},
		{"https://abc.execute-api.us-east-1.amazonaws.com/prod", true},
		{"http://127.0.0.1:8080", true},
		{"http://localhost:8080", true},
		{"http://approvals.example", false},
		{"https://approvals.example/?x=1", false},
		{"https://user@approvals.example", false},
		{"/approvals", false},
		{"", false},
	} {
		_, err := approvals.New(approvals.Config{Store: e.st, PublicBaseURL: c.base})
		if (err == nil) != c.ok {
			t.Errorf("New(base %q) error = %v, want ok %v", c.base, err, c.ok)
		}
	}
}

// inboxFixture is an Inbox with fixed lists (the governed-writes work's
// rows will come from its store; the page only shows what it is given).
type inboxFixture struct {
	decidable, own []approvals.Proposal
	err            error
	asked          []approvals.Principal
}

func (f *inboxFixture) Decidable(_ context.Context, p approvals.Principal) ([]approvals.Proposal, error) {
	f.asked = append(f.asked, p)
	return f.decidable, f.err
}

func (f *inboxFixture) Own(_ context.Context, p approvals.Principal) ([]approvals.Proposal, error) {
	return f.own, nil
}

func TestTheInboxShowsWhatItsSourceGives(t *testing.T) {
	row := approvals.Proposal{ID: "prp_1", CaseID: seed.Meridian, MatterName: "Meridian v. Caldwell", Noun: "deadline",
		Action: "add_deadline", WhatWillHappen: "Adds <b>a deadline</b> on 2027-01-04.", Requester: seed.DemoParalegal,
		Reason: "the court's order <script>alert(1)</script>", Status: "pending", CreatedAt: time.Now()}
	t.Run("rows are shown, escaped, the reason marked unverified", func(t *testing.T) {
		fx := &inboxFixture{decidable: []approvals.Proposal{row}}
		e := newEnv(t, func(c *approvals.Config) { c.Inbox = fx })
		a := e.do(t, http.MethodGet, "/approvals", nil, e.browser(e.signIn(t, seed.DemoAttorney)))
		for _, want := range []string{`id="proposal-prp_1"`, "Meridian v. Caldwell", "Adds &lt;b&gt;a deadline&lt;/b&gt;", "unverified", "&lt;script&gt;"} {
			if !strings.Contains(a.Body, want) {
				t.Errorf("the inbox lacks %s:\n%s", want, a.Body)
			}
		}
		if strings.Contains(a.Body, "<script>") || strings.Contains(a.Body, "<b>a deadline") {
			t.Errorf("the inbox shows a row's text as markup")
		}
		if got, want := fx.asked, []approvals.Principal{{Tenant: seed.DemoTenant, ID: seed.DemoAttorney}}; len(got) != 1 || got[0] != want[0] {
			t.Errorf("the inbox asked for %v, want the session's principal %v", got, want)
		}
	})
	t.Run("an unreadable list says so and is not shown empty", func(t *testing.T) {
		fx := &inboxFixture{err: errors.New("store: engine unavailable")}
		e := newEnv(t, func(c *approvals.Config) { c.Inbox = fx })
		a := e.do(t, http.MethodGet, "/approvals", nil, e.browser(e.signIn(t, seed.DemoAttorney)))
		if a.Status != http.StatusOK || !strings.Contains(a.Body, `data-read-state="unreadable"`) {
			t.Errorf("inbox with an unreadable list = %d, want 200 marking it unreadable:\n%s", a.Status, a.Body)
		}
		if strings.Contains(a.Body, "engine unavailable") {
			t.Errorf("the page leaks the error")
		}
	})
	t.Run("without a source both lists are empty", func(t *testing.T) {
		e := newEnv(t)
		a := e.do(t, http.MethodGet, "/approvals", nil, e.browser(e.signIn(t, seed.DemoAttorney)))
		if got := strings.Count(a.Body, `data-read-state="empty"`); got != 2 {
			t.Errorf("%d empty lists, want 2:\n%s", got, a.Body)
		}
	})
}
