package approvals_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/approvals"
	"github.com/custodymcp/custody/shared/auth/oauth"
	"github.com/custodymcp/custody/shared/auth/oauth/oauthtest"
	"github.com/custodymcp/custody/shared/records/seed"
)

const testClientID = "custody-approvals"

// oidcEnv is the page on an https base with sign-in at the local
// authorization server (oauthtest's provider), whose client it is.
type oidcEnv struct {
	*env
	iss *oauthtest.Issuer
}

func newOIDCEnv(t *testing.T, secret string, configure ...func(*approvals.OIDC)) *oidcEnv {
	t.Helper()
	return newOIDCEnvOn(t, httptest.NewTLSServer, secret, configure...)
}

// newOIDCEnvOn is newOIDCEnv on a server start makes (httptest.NewServer
// for a loopback http base, as the dev server's).
func newOIDCEnvOn(t *testing.T, start func(http.Handler) *httptest.Server, secret string, configure ...func(*approvals.OIDC)) *oidcEnv {
	t.Helper()
	iss := oauthtest.New(t)
	o := &oidcEnv{iss: iss}
	o.env = newEnvOn(t, start, func(c *approvals.Config) {
		v, err := oauth.New(iss.Config(c.PublicBaseURL))
		if err != nil {
			t.Fatal(err)
		}
		c.OIDC = &approvals.OIDC{
			OIDCClient: approvals.OIDCClient{ClientID: testClientID, ClientSecret: secret,
				AuthorizationEndpoint: iss.AuthorizationEndpoint, TokenEndpoint: iss.TokenEndpoint},
			IDTokens: v.IDTokens(testClientID),
		}
		for _, f := range configure {
			f(c.OIDC)
		}
	})
	iss.RegisterClient(oauthtest.Client{ID: testClientID, Secret: secret, RedirectURIs: []string{o.base + "/approvals/signin/oidc/callback"}})
	iss.SetLogin(&oauthtest.Login{Subject: seed.DemoAttorney, Claims: oauthtest.Claims{oauth.DefaultTenantClaim: seed.DemoTenant}})
	return o
}

// browserClient is a browser: a cookie jar, redirects followed, the page's
// TLS certificate trusted. stopAt, when set, stops before a request to a
// URL whose path it names (the callback, to be replayed).
func (o *oidcEnv) browserClient(t *testing.T, stopAt string) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := *o.srv.Client() // a copy: the server's own client is shared
	c.Jar = jar
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if stopAt != "" && req.URL.Path == stopAt {
			return http.ErrUseLastResponse
		}
		return nil
	}
	return &c
}

func get(t *testing.T, c *http.Client, url string) answer {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

// signedIn reports whether the browser's jar holds a session cookie.
func (o *oidcEnv) signedIn(t *testing.T, c *http.Client) bool {
	t.Helper()
	for _, ck := range c.Jar.Cookies(mustURL(t, o.base)) {
		if ck.Name == approvals.CookieName {
			return true
		}
	}
	return false
}

func TestOIDCSignInEndToEnd(t *testing.T) {
	for _, c := range []struct{ name, secret string }{
		{"a public client (PKCE alone)", ""},
		{"a confidential client (client_secret_basic)", "s3cret-of-the-approval-page"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := newOIDCEnv(t, c.secret)
			b := o.browserClient(t, "")
			signin := get(t, b, o.base+"/approvals/signin")
			if !strings.Contains(signin.Body, `id="sign-in-oidc"`) {
				t.Fatalf("the sign-in page offers no firm sign-in:\n%s", signin.Body)
			}
			a := get(t, b, o.base+"/approvals/signin/oidc?next=/approvals")
			if a.Status != http.StatusOK || !strings.Contains(a.Body, `id="principal-id">p_dana_whitfield<`) {
				t.Fatalf("after the flow = %d, want the inbox signed in as p_dana_whitfield:\n%s", a.Status, a.Body)
			}
			if !o.signedIn(t, b) {
				t.Error("no session cookie after the flow")
			}
			if got := o.iss.TokenRequests(); got != 1 {
				t.Errorf("%d token requests, want 1", got)
			}
		})
	}
}

func TestOIDCCallbackRefusals(t *testing.T) {
	const callback = "/approvals/signin/oidc/callback"
	// started runs the flow up to the callback and returns its URL.
	started := func(t *testing.T, o *oidcEnv, b *http.Client) string {
		t.Helper()
		a := get(t, b, o.base+"/approvals/signin/oidc")
		loc := a.Header.Get("Location")
		if a.Status != http.StatusFound || !strings.HasPrefix(loc, o.base+callback) {
			t.Fatalf("the provider answered %d %q, want a redirect to the callback", a.Status, loc)
		}
		return loc
	}
	t.Run("a callback in another browser signs no one in, and the right browser still can", func(t *testing.T) {
		o := newOIDCEnv(t, "")
		mine, other := o.browserClient(t, callback), o.browserClient(t, "")
		loc := started(t, o, mine)
		if a := get(t, other, loc); a.Status != http.StatusForbidden || o.signedIn(t, other) {
			t.Errorf("callback in another browser = %d, want 403 and no session", a.Status)
		}
		mine.CheckRedirect = nil
		if a := get(t, mine, loc); a.Status != http.StatusOK || !o.signedIn(t, mine) {
			t.Errorf("callback in the browser that started = %d, want the inbox", a.Status)
		}
	})
	t.Run("a replayed callback is refused before the token endpoint", func(t *testing.T) {
		o := newOIDCEnv(t, "")
		b := o.browserClient(t, callback)
		loc := started(t, o, b)
		b.CheckRedirect = nil
		if a := get(t, b, loc); a.Status != http.StatusOK {
			t.Fatalf("first callback = %d", a.Status)
		}
		// The same browser's binding cookie was cleared; a stolen copy of it
		// with the state is what a replay would carry.
		if a := get(t, o.browserClient(t, ""), loc); a.Status != http.StatusForbidden {
			t.Errorf("replay = %d, want 403", a.Status)
		}
		if got := o.iss.TokenRequests(); got != 1 {
			t.Errorf("%d token requests, want 1: a replay must not reach the provider", got)
		}
	})
	t.Run("a state older than 10 minutes is refused", func(t *testing.T) {
		o := newOIDCEnv(t, "")
		b := o.browserClient(t, callback)
		loc := started(t, o, b)
		o.clock.Advance(approvals.OIDCStateTTL)
		b.CheckRedirect = nil
		if a := get(t, b, loc); a.Status != http.StatusForbidden || o.signedIn(t, b) {
			t.Errorf("late callback = %d, want 403 and no session", a.Status)
		}
	})
	t.Run("the person declining at the provider signs no one in", func(t *testing.T) {
		o := newOIDCEnv(t, "")
		o.iss.SetLogin(&oauthtest.Login{Error: "access_denied"})
		b := o.browserClient(t, "")
		a := get(t, b, o.base+"/approvals/signin/oidc")
		if a.Status != http.StatusForbidden || !strings.Contains(a.Body, "access_denied") || o.signedIn(t, b) {
			t.Errorf("declined = %d, want 403 naming access_denied, no session:\n%s", a.Status, a.Body)
		}
	})
	t.Run("a wrong client secret signs no one in", func(t *testing.T) {
		o := newOIDCEnv(t, "right", func(c *approvals.OIDC) { c.ClientSecret = "wrong" })
		b := o.browserClient(t, "")
		if a := get(t, b, o.base+"/approvals/signin/oidc"); a.Status != http.StatusBadGateway || o.signedIn(t, b) {
			t.Errorf("wrong secret = %d, want 502 and no session", a.Status)
		}
	})
	for _, c := range []struct {
		name string
		hook func(oauthtest.Claims) oauthtest.Claims
	}{
		{"an ID token for another client", func(c oauthtest.Claims) oauthtest.Claims { return c.With("aud", "another-client") }},
		{"an ID token with another nonce", func(c oauthtest.Claims) oauthtest.Claims { return c.With("nonce", "not-the-sign-ins") }},
		{"an ID token without a nonce", func(c oauthtest.Claims) oauthtest.Claims { return c.With("nonce", nil) }},
		{"an expired ID token", func(c oauthtest.Claims) oauthtest.Claims {
			return c.With("exp", time.Now().Add(-time.Hour).Unix())
		}},
		{"an ID token of another issuer", func(c oauthtest.Claims) oauthtest.Claims { return c.With("iss", "https://evil.example") }},
		{"an ID token without a tenant", func(c oauthtest.Claims) oauthtest.Claims { return c.With(oauth.DefaultTenantClaim, nil) }},
		{"a person who is not a principal of the firm", func(c oauthtest.Claims) oauthtest.Claims { return c.With("sub", "p_nobody") }},
		{"another firm's principal", func(c oauthtest.Claims) oauthtest.Claims { return c.With("sub", seed.OtherPrincipal) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := newOIDCEnv(t, "")
			o.iss.SetIDTokenHook(c.hook)
			b := o.browserClient(t, "")
			before := o.writes()
			a := get(t, b, o.base+"/approvals/signin/oidc")
			if a.Status != http.StatusForbidden || o.signedIn(t, b) {
				t.Errorf("callback = %d, want 403 and no session:\n%s", a.Status, a.Body)
			}
			// The state row's put and its spend; no session, no audit row.
			if got := o.writes() - before; got != 2 {
				t.Errorf("%d writes, want 2 (the state and its spend)", got)
			}
		})
	}
}

func TestOIDCNeedsACompleteClient(t *testing.T) {
	iss := oauthtest.New(t)
	v, err := oauth.New(iss.Config("https://approvals.example"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	for _, c := range []struct {
		name string
		oidc approvals.OIDC
	}{
		{"no client id", approvals.OIDC{OIDCClient: approvals.OIDCClient{AuthorizationEndpoint: iss.AuthorizationEndpoint, TokenEndpoint: iss.TokenEndpoint}, IDTokens: v.IDTokens("")}},
		{"no verifier", approvals.OIDC{OIDCClient: approvals.OIDCClient{ClientID: "c", AuthorizationEndpoint: iss.AuthorizationEndpoint, TokenEndpoint: iss.TokenEndpoint}}},
		{"a verifier of another client", approvals.OIDC{OIDCClient: approvals.OIDCClient{ClientID: "c", AuthorizationEndpoint: iss.AuthorizationEndpoint, TokenEndpoint: iss.TokenEndpoint}, IDTokens: v.IDTokens("d")}},
		{"no token endpoint", approvals.OIDC{OIDCClient: approvals.OIDCClient{ClientID: "c", AuthorizationEndpoint: iss.AuthorizationEndpoint}, IDTokens: v.IDTokens("c")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := approvals.New(approvals.Config{Store: e.st, PublicBaseURL: "https://approvals.example", OIDC: &c.oidc}); err == nil {
				t.Error("New() accepted an incomplete OIDC client")
			}
		})
	}
}

func TestOIDCFromEnv(t *testing.T) {
	full := map[string]string{"OIDC_CLIENT_ID": "custody-approvals", "OIDC_AUTHORIZATION_ENDPOINT": "https://idp.example/authorize",
		"OIDC_TOKEN_ENDPOINT": "https://idp.example/token"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range full {
			m[a] = b
		}
		m[k] = v
		return m
	}
	for _, c := range []struct {
		name    string
		env     map[string]string
		oauth   bool
		wantNil bool
		bad     []string
	}{
		{"nothing set: links only", map[string]string{}, true, true, nil},
		{"a complete public client", full, true, false, nil},
		{"a confidential client", with("OIDC_CLIENT_SECRET_ARN", "arn:aws:secretsmanager:us-east-1:123456789012:secret:oidc"), true, false, nil},
		{"without OAUTH_ISSUER", full, false, false, []string{"OIDC_CLIENT_ID"}},
		{"an http endpoint", with("OIDC_TOKEN_ENDPOINT", "http://idp.example/token"), true, false, []string{"OIDC_TOKEN_ENDPOINT"}},
		{"no authorization endpoint", with("OIDC_AUTHORIZATION_ENDPOINT", ""), true, false, []string{"OIDC_AUTHORIZATION_ENDPOINT"}},
		{"a secret that is no ARN", with("OIDC_CLIENT_SECRET_ARN", "hunter2"), true, false, []string{"OIDC_CLIENT_SECRET_ARN"}},
		{"endpoints without a client", map[string]string{"OIDC_TOKEN_ENDPOINT": "https://idp.example/token"}, true, true, []string{"OIDC_TOKEN_ENDPOINT"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var bad []string
			s := approvals.OIDCFromEnv(func(k string) string { return c.env[k] }, c.oauth, false, func(name, _ string) { bad = append(bad, name) })
			if (s == nil) != c.wantNil {
				t.Errorf("OIDCFromEnv() = %+v, want nil %v", s, c.wantNil)
			}
			if strings.Join(bad, ",") != strings.Join(c.bad, ",") {
				t.Errorf("problems with %v, want %v", bad, c.bad)
			}
		})
	}
}
