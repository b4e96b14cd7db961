package oauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/auth/oauth"
	"github.com/custodymcp/custody/shared/auth/oauth/oauthtest"
)

const base = "https://custody.firm.example"

var (
	resource = base + "/mcp"
	now      = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
)

func newVerifier(t *testing.T, iss *oauthtest.Issuer, edit ...func(*oauth.Config)) *oauth.Verifier {
	t.Helper()
	cfg := iss.Config(base)
	for _, e := range edit {
		e(&cfg)
	}
	v, err := oauth.New(cfg)
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	return v
}

func TestVerifyAcceptsATokenOfTheIssuerForThisResource(t *testing.T) {
	iss := oauthtest.New(t)
	v := newVerifier(t, iss)
	claims := iss.AccessToken(now, resource, "firm", "u_attorney", "custody:mcp", "custody:read", "custody:docs", "other:scope")
	for _, c := range []struct {
		alg jose.SignatureAlgorithm
		kid string
	}{{jose.ES256, oauthtest.ECKeyID}, {jose.RS256, oauthtest.RSAKeyID}} {
		t.Run(string(c.alg), func(t *testing.T) {
			got, err := v.Verify(context.Background(), iss.Sign(t, c.alg, c.kid, claims), now)
			if err != nil {
				t.Fatalf("Verify() error = %v", err)
			}
			id, hash := oauth.CredentialID(iss.URL, "firm", "u_attorney", "test-client", auth.ClassStandard)
			want := &auth.Credential{
				ID: id, KeyHash: hash, Tenant: "firm", Owner: "u_attorney", Class: auth.ClassStandard,
				Scopes: []auth.Scope{auth.ScopeDocsRead, auth.ScopeRead}, Label: "oauth test-client",
				CreatedAt: now,
				OAuth: &auth.OAuthClaims{Issuer: iss.URL, Subject: "u_attorney", ClientID: "test-client",
					ExpiresAt: time.Unix(now.Add(time.Hour).Unix(), 0).UTC()},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Verify() credential (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCredentialIDIsStablePerIssuerTenantSubjectClientAndClass(t *testing.T) {
	iss := oauthtest.New(t)
	v := newVerifier(t, iss)
	claims := iss.AccessToken(now, resource, "firm", "u_attorney", "custody:mcp")
	verify := func(c oauthtest.Claims) *auth.Credential {
		t.Helper()
		cred, err := v.Verify(context.Background(), iss.Sign(t, jose.ES256, oauthtest.ECKeyID, c), now)
		if err != nil {
			t.Fatalf("Verify() error = %v", err)
		}
		return cred
	}
	first := verify(claims)
	refreshed := verify(claims.With("jti", "another").With("exp", now.Add(2*time.Hour).Unix()).With("iat", now.Add(-time.Minute).Unix()))
	if refreshed.ID != first.ID || refreshed.KeyHash != first.KeyHash {
		t.Errorf("a refreshed token's id = %s, want %s (same issuer, tenant, subject, client, class)", refreshed.ID, first.ID)
	}
	if !strings.HasPrefix(first.ID, "oauth_") || len(first.ID) != len("oauth_")+22 || len(first.KeyHash) != 64 {
		t.Errorf("id %q, key hash %q: want oauth_ + 22 characters, 64 hex", first.ID, first.KeyHash)
	}
	azp := verify(claims.With("client_id", nil).With("azp", "test-client"))
	if azp.ID != first.ID {
		t.Errorf("azp test-client gives id %s, client_id test-client gives %s: want the same", azp.ID, first.ID)
	}
	for name, c := range map[string]oauthtest.Claims{
		"another client":  claims.With("client_id", "other-client"),
		"another subject": claims.With("sub", "someone-else"),
		// One issuer may serve several firms; its sub is unique only in one.
		"another tenant":                 claims.With(oauth.DefaultTenantClaim, "other-firm"),
		"the client-safe class":          claims.With(oauth.DefaultClassClaim, "client_safe"),
		"another tenant, no client_id":   claims.With("client_id", nil).With(oauth.DefaultTenantClaim, "other-firm"),
		"the same user id as the tenant": claims.With(oauth.DefaultTenantClaim, "u_attorney").With("sub", "firm"),
	} {
		got := verify(c)
		if got.ID == first.ID || got.KeyHash == first.KeyHash {
			t.Errorf("%s: id %s, key hash %s; want both different from %s, %s", name, got.ID, got.KeyHash, first.ID, first.KeyHash)
		}
	}
	// The tuple is encoded unambiguously: moving a '|' between fields
	// changes the id.
	a, _ := oauth.CredentialID("i", "t", "a|b", "c", auth.ClassStandard)
	b, _ := oauth.CredentialID("i", "t", "a", "b|c", auth.ClassStandard)
	if a == b {
		t.Errorf("CredentialID(i, t, a|b, c) = CredentialID(i, t, a, b|c) = %s", a)
	}
}

func TestVerifyRefuses(t *testing.T) {
	iss := oauthtest.New(t)
	iss.AddKey(t, "unpublished", false)
	v := newVerifier(t, iss, func(c *oauth.Config) { c.Tenant = "" })
	good := iss.AccessToken(now, resource, "firm", "u_attorney", "custody:mcp", "custody:read")
	es := func(c oauthtest.Claims) string { return iss.Sign(t, jose.ES256, oauthtest.ECKeyID, c) }
	header := func(h map[string]any, c oauthtest.Claims) string {
		hb, _ := json.Marshal(h)
		return forge(t, iss, hb, c)
	}
	tampered := func() string {
		tok := es(good)
		parts := strings.Split(tok, ".")
		parts[1] = segment(good.With("custody_tenant", "other-firm"))
		return strings.Join(parts, ".")
	}
	cases := []struct {
		name  string
		token string
		want  error
	}{
		{"alg none", oauthtest.Unsigned(good), oauth.ErrInvalidToken},
		{"HS256 keyed with the public key", iss.HS256WithPublicKey(t, good), oauth.ErrInvalidToken},
		{"a payload changed after signing", tampered(), oauth.ErrInvalidToken},
		{"signed by a key the JWKS does not list", iss.Sign(t, jose.ES256, "unpublished", good), oauth.ErrInvalidToken},
		{"expired", es(good.With("exp", now.Add(-time.Minute).Unix())), oauth.ErrInvalidToken},
		{"not yet valid", es(good.With("nbf", now.Add(time.Minute).Unix())), oauth.ErrInvalidToken},
		{"issued in the future", es(good.With("iat", now.Add(time.Minute).Unix())), oauth.ErrInvalidToken},
		{"no exp", es(good.With("exp", nil)), oauth.ErrInvalidToken},
		{"no sub", es(good.With("sub", nil)), oauth.ErrInvalidToken},
		{"another audience", es(good.With("aud", "https://other.example/mcp")), oauth.ErrInvalidToken},
		{"the audience without /mcp", es(good.With("aud", base)), oauth.ErrInvalidToken},
		{"no audience", es(good.With("aud", nil)), oauth.ErrInvalidToken},
		{"another issuer", es(good.With("iss", "https://evil.example")), oauth.ErrInvalidToken},
		{"no tenant", es(good.With("custody_tenant", nil)), oauth.ErrInvalidToken},
		{"a tenant with '#'", es(good.With("custody_tenant", "firm#M#x")), oauth.ErrInvalidToken},
		{"a numeric tenant", es(good.With("custody_tenant", 7)), oauth.ErrInvalidToken},
		{"a user with white space", es(good.With("sub", "u attorney")), oauth.ErrInvalidToken},
		{"an unknown class", es(good.With("custody_class", "partner")), oauth.ErrInvalidToken},
		{"a scope that is not a string", es(good.With("scope", 3)), oauth.ErrInvalidToken},
		{"crit header", header(map[string]any{"alg": "ES256", "kid": oauthtest.ECKeyID, "crit": []string{"exp"}, "exp": 1}, good), oauth.ErrInvalidToken},
		{"b64 header", header(map[string]any{"alg": "ES256", "kid": oauthtest.ECKeyID, "b64": true}, good), oauth.ErrInvalidToken},
		{"typ of another kind of JWT (dpop+jwt)", header(map[string]any{"alg": "ES256", "kid": oauthtest.ECKeyID, "typ": "dpop+jwt"}, good), oauth.ErrInvalidToken},
		{"ES256 under the RSA key's kid", header(map[string]any{"alg": "ES256", "kid": oauthtest.RSAKeyID}, good), oauth.ErrInvalidToken},
		{"not a JWT", "not.a.jwt", oauth.ErrInvalidToken},
		{"JWS JSON serialization", `{"payload":"e30","signatures":[]}`, oauth.ErrInvalidToken},
		{"too long", strings.Repeat("a", oauth.MaxTokenBytes+1), oauth.ErrInvalidToken},
		{"without the required scope", es(good.With("scope", "custody:read")), oauth.ErrInsufficientScope},
		{"no scope at all", es(good.With("scope", nil)), oauth.ErrInsufficientScope},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cred, err := v.Verify(context.Background(), c.token, now)
			if !errors.Is(err, c.want) || cred != nil {
				t.Fatalf("Verify() = %v, %v; want %v", cred, err, c.want)
			}
			t.Logf("Verify() error = %v", err)
			if strings.Contains(err.Error(), c.token) && len(c.token) > 10 {
				t.Errorf("the error quotes the token: %v", err)
			}
		})
	}
}

func TestVerifyTolerancesAndMappings(t *testing.T) {
	iss := oauthtest.New(t)
	good := iss.AccessToken(now, resource, "firm", "u_attorney", "custody:mcp", "custody:read")
	cases := []struct {
		name   string
		edit   func(*oauth.Config)
		claims oauthtest.Claims
		check  func(t *testing.T, c *auth.Credential, err error)
	}{
		{name: "expired within the leeway", claims: good.With("exp", now.Add(-oauth.Leeway/2).Unix()),
			check: func(t *testing.T, c *auth.Credential, err error) { mustOK(t, err) }},
		{name: "nbf within the leeway", claims: good.With("nbf", now.Add(oauth.Leeway/2).Unix()),
			check: func(t *testing.T, c *auth.Credential, err error) { mustOK(t, err) }},
		{name: "aud a list holding the resource", claims: good.With("aud", []string{"https://api.other.example", resource}),
			check: func(t *testing.T, c *auth.Credential, err error) { mustOK(t, err) }},
		{name: "scp as a list", claims: good.With("scope", nil).With("scp", []string{"custody:mcp", "custody:tasks"}),
			check: func(t *testing.T, c *auth.Credential, err error) {
				mustOK(t, err)
				if !cmp.Equal(c.Scopes, []auth.Scope{auth.ScopeTasksRead}) {
					t.Errorf("scopes = %v, want [tasks:read]", c.Scopes)
				}
			}},
		{name: "scp as a string", claims: good.With("scope", nil).With("scp", "custody:mcp custody:analysis"),
			check: func(t *testing.T, c *auth.Credential, err error) {
				mustOK(t, err)
				if !cmp.Equal(c.Scopes, []auth.Scope{auth.ScopeAnalysisRead}) {
					t.Errorf("scopes = %v, want [analysis:read]", c.Scopes)
				}
			}},
		{name: "client_safe class", claims: good.With("custody_class", "client_safe"),
			check: func(t *testing.T, c *auth.Credential, err error) {
				mustOK(t, err)
				if c.Class != auth.ClassClientSafe {
					t.Errorf("class = %s, want client_safe", c.Class)
				}
			}},
		{name: "a client_safe token never gains write from its scopes",
			claims: good.With("custody_class", "client_safe").With("scope", "custody:mcp custody:read custody:write"),
			check: func(t *testing.T, c *auth.Credential, err error) {
				mustOK(t, err)
				if !cmp.Equal(c.Scopes, []auth.Scope{auth.ScopeRead}) {
					t.Errorf("scopes = %v, want [read] (write dropped for the client-safe class)", c.Scopes)
				}
			}},
		{name: "a standard token keeps write",
			claims: good.With("scope", "custody:mcp custody:write"),
			check: func(t *testing.T, c *auth.Credential, err error) {
				mustOK(t, err)
				if !cmp.Equal(c.Scopes, []auth.Scope{auth.ScopeWrite}) {
					t.Errorf("scopes = %v, want [write]", c.Scopes)
				}
			}},
		{name: "configured claims and scope map",
			edit: func(c *oauth.Config) {
				c.TenantClaim, c.UserClaim, c.ClassClaim = "firm", "custody_user", "tier"
				c.RequiredScope = "api://custody/mcp"
				c.ScopeMap = map[string][]auth.Scope{"api://custody/all": {auth.ScopeRead, auth.ScopeDocsRead}}
			},
			claims: good.With("custody_tenant", nil).With("firm", "acme").With("custody_user", "p_first").
				With("tier", "client_safe").With("scope", "api://custody/mcp api://custody/all custody:read"),
			check: func(t *testing.T, c *auth.Credential, err error) {
				mustOK(t, err)
				want := &auth.Credential{Tenant: "acme", Owner: "p_first", Class: auth.ClassClientSafe,
					Scopes: []auth.Scope{auth.ScopeDocsRead, auth.ScopeRead}}
				got := &auth.Credential{Tenant: c.Tenant, Owner: c.Owner, Class: c.Class, Scopes: c.Scopes}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("credential (-want +got):\n%s", diff)
				}
			}},
		{name: "a fixed tenant maps a token without the claim",
			edit:   func(c *oauth.Config) { c.Tenant = "firm" },
			claims: good.With("custody_tenant", nil),
			check: func(t *testing.T, c *auth.Credential, err error) {
				mustOK(t, err)
				if c.Tenant != "firm" {
					t.Errorf("tenant = %q, want firm", c.Tenant)
				}
			}},
		{name: "a fixed tenant refuses a token naming another",
			edit:   func(c *oauth.Config) { c.Tenant = "firm" },
			claims: good.With("custody_tenant", "other-firm"),
			check: func(t *testing.T, c *auth.Credential, err error) {
				if !errors.Is(err, oauth.ErrInvalidToken) {
					t.Errorf("Verify() error = %v, want ErrInvalidToken", err)
				}
			}},
		{name: "a required scope and nothing mapped sees no tools",
			claims: good.With("scope", "custody:mcp"),
			check: func(t *testing.T, c *auth.Credential, err error) {
				mustOK(t, err)
				if len(c.Scopes) != 0 {
					t.Errorf("scopes = %v, want none", c.Scopes)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := newVerifier(t, iss, func(cfg *oauth.Config) {
				if c.edit != nil {
					c.edit(cfg)
				}
			})
			cred, err := v.Verify(context.Background(), iss.Sign(t, jose.ES256, oauthtest.ECKeyID, c.claims), now)
			c.check(t, cred, err)
		})
	}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("Verify() error = %v", err)
	}
}

// The key set is fetched once, then refreshed for an unknown kid at most
// once per MinRefreshInterval; a failed fetch is ErrUnavailable unless a
// cached key verifies the token.
func TestKeySetRefreshPolicy(t *testing.T) {
	iss := oauthtest.New(t)
	v := newVerifier(t, iss, func(c *oauth.Config) { c.MinRefreshInterval, c.RefreshInterval = time.Minute, time.Hour })
	claims := iss.AccessToken(now, resource, "firm", "u_attorney", "custody:mcp")
	clock := now
	verify := func(kid string) error {
		t.Helper()
		tok := iss.Sign(t, jose.ES256, kid, claims.With("exp", clock.Add(time.Hour).Unix()))
		_, err := v.Verify(context.Background(), tok, clock)
		return err
	}
	step := func(name string, kid string, wantErr error, wantFetches int) {
		t.Helper()
		before := iss.Fetches()
		err := verify(kid)
		if (wantErr == nil && err != nil) || (wantErr != nil && !errors.Is(err, wantErr)) {
			t.Errorf("%s: Verify() error = %v, want %v", name, err, wantErr)
		}
		if got := iss.Fetches() - before; got != wantFetches {
			t.Errorf("%s: %d JWKS fetches, want %d", name, got, wantFetches)
		}
	}
	iss.AddKey(t, "rotated-in", false)
	iss.AddKey(t, "never-published", false)

	step("first token: fetch", oauthtest.ECKeyID, nil, 1)
	step("second token: cached", oauthtest.ECKeyID, nil, 0)
	step("unknown kid within the interval: no fetch", "never-published", oauth.ErrInvalidToken, 0)
	clock = clock.Add(time.Minute)
	step("unknown kid after the interval: one fetch", "never-published", oauth.ErrInvalidToken, 1)
	step("again at once: no fetch", "never-published", oauth.ErrInvalidToken, 0)
	iss.Publish("rotated-in")
	clock = clock.Add(time.Minute)
	step("a rotated-in key: one fetch, then verified", "rotated-in", nil, 1)

	iss.SetDown(true)
	clock = clock.Add(time.Minute)
	step("JWKS down, kid cached: verified, no fetch", oauthtest.ECKeyID, nil, 0)
	step("JWKS down, unknown kid: unavailable", "never-published", oauth.ErrUnavailable, 1)
	clock = clock.Add(2 * time.Hour)
	step("JWKS down, set stale: one attempt, the cached key verifies", oauthtest.ECKeyID, nil, 1)
	step("JWKS down, set stale, within the interval: no attempt", oauthtest.ECKeyID, nil, 0)
	iss.SetDown(false)
	clock = clock.Add(time.Minute)
	step("JWKS back, set stale: refreshed", oauthtest.ECKeyID, nil, 1)
}

func TestKeySetUnavailableWithNoCachedKey(t *testing.T) {
	iss := oauthtest.New(t)
	iss.SetDown(true)
	v := newVerifier(t, iss)
	tok := iss.Sign(t, jose.ES256, oauthtest.ECKeyID, iss.AccessToken(now, resource, "firm", "u_attorney", "custody:mcp"))
	if _, err := v.Verify(context.Background(), tok, now); !errors.Is(err, oauth.ErrUnavailable) {
		t.Fatalf("Verify() error = %v, want ErrUnavailable", err)
	}
	// A foreign token never reaches the key set.
	before := iss.Fetches()
	foreign := iss.Sign(t, jose.ES256, oauthtest.ECKeyID, iss.AccessToken(now, resource, "firm", "u", "custody:mcp").With("iss", "https://other.example"))
	if _, err := v.Verify(context.Background(), foreign, now.Add(time.Hour)); !errors.Is(err, oauth.ErrInvalidToken) {
		t.Errorf("Verify(foreign issuer) error = %v, want ErrInvalidToken", err)
	}
	if iss.Fetches() != before {
		t.Errorf("a token of another issuer fetched the JWKS")
	}
}

// Many requests with unknown kids at once make one fetch.
func TestKeySetConcurrentUnknownKidsFetchOnce(t *testing.T) {
	iss := oauthtest.New(t)
	v := newVerifier(t, iss)
	iss.AddKey(t, "unlisted", false)
	tok := iss.Sign(t, jose.ES256, "unlisted", iss.AccessToken(now, resource, "firm", "u_attorney", "custody:mcp"))
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			if _, err := v.Verify(context.Background(), tok, now); !errors.Is(err, oauth.ErrInvalidToken) {
				t.Errorf("Verify() error = %v, want ErrInvalidToken", err)
			}
		})
	}
	wg.Wait()
	if got := iss.Fetches(); got != 1 {
		t.Errorf("%d JWKS fetches, want 1", got)
	}
}

// The JWKS keeps only keys Custody may verify with: a weak RSA key, an
// encryption key and a symmetric key are skipped, a set of none is an error.
func TestKeySetSkipsUnusableKeys(t *testing.T) {
	iss := oauthtest.New(t)
	good, _ := json.Marshal(jose.JSONWebKey{Key: &iss.EC.PublicKey, KeyID: oauthtest.ECKeyID, Algorithm: "ES256", Use: "sig"})
	enc, _ := json.Marshal(jose.JSONWebKey{Key: &iss.RSA.PublicKey, KeyID: oauthtest.RSAKeyID, Use: "enc"})
	oct := `{"kty":"oct","kid":"hmac","k":"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"}`
	odd := `{"kty":"AKP","kid":"pq","alg":"ML-DSA-44","pub":"AA"}`
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	v := newVerifier(t, iss, func(c *oauth.Config) { c.JWKSURL = srv.URL })
	claims := iss.AccessToken(now, resource, "firm", "u_attorney", "custody:mcp")

	body = `{"keys":[` + oct + `,` + odd + `,` + string(enc) + `]}`
	if _, err := v.Verify(context.Background(), iss.Sign(t, jose.RS256, oauthtest.RSAKeyID, claims), now); !errors.Is(err, oauth.ErrUnavailable) {
		t.Errorf("a set of unusable keys: Verify() error = %v, want ErrUnavailable", err)
	}
	body = `{"keys":[` + oct + `,` + odd + `,` + string(enc) + `,` + string(good) + `]}`
	later := now.Add(time.Minute)
	if _, err := v.Verify(context.Background(), iss.Sign(t, jose.ES256, oauthtest.ECKeyID, claims), later); err != nil {
		t.Errorf("the usable key beside unusable ones: Verify() error = %v", err)
	}
	if _, err := v.Verify(context.Background(), iss.Sign(t, jose.RS256, oauthtest.RSAKeyID, claims), later); !errors.Is(err, oauth.ErrInvalidToken) {
		t.Errorf("a token under an encryption key: Verify() error = %v, want ErrInvalidToken", err)
	}
}

func TestNewRefusesBadConfigurations(t *testing.T) {
	ok := oauth.Config{Issuer: "https://login.firm.example/", JWKSURL: "https://login.firm.example/jwks", PublicBaseURL: base}
	if _, err := oauth.New(ok); err != nil {
		t.Fatalf("New(valid) error = %v", err)
	}
	for name, edit := range map[string]func(*oauth.Config){
		"no issuer":             func(c *oauth.Config) { c.Issuer = "" },
		"http issuer":           func(c *oauth.Config) { c.Issuer = "http://login.firm.example" },
		"no JWKS URL":           func(c *oauth.Config) { c.JWKSURL = "" },
		"JWKS URL with a query": func(c *oauth.Config) { c.JWKSURL = "https://login.firm.example/jwks?x=1" },
		"no public base URL":    func(c *oauth.Config) { c.PublicBaseURL = "" },
		"a quote in the issuer": func(c *oauth.Config) { c.Issuer = `https://login.firm.example/"` },
		"a bad required scope":  func(c *oauth.Config) { c.RequiredScope = `custody "mcp"` },
		"an unknown mapped scope": func(c *oauth.Config) {
			c.ScopeMap = map[string][]auth.Scope{"custody:root": {"root"}}
		},
		"a tenant with '#'": func(c *oauth.Config) { c.Tenant = "a#b" },
	} {
		c := ok
		edit(&c)
		if _, err := oauth.New(c); err == nil {
			t.Errorf("New(%s) succeeded", name)
		}
	}
}

func TestParseScopeMap(t *testing.T) {
	got, err := oauth.ParseScopeMap("custody:read=read  api://x/all=read,docs:read\ta=b=tasks:read")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]auth.Scope{
		"custody:read": {auth.ScopeRead},
		"api://x/all":  {auth.ScopeDocsRead, auth.ScopeRead},
		"a=b":          {auth.ScopeTasksRead},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseScopeMap() (-want +got):\n%s", diff)
	}
	if m, err := oauth.ParseScopeMap("  "); m != nil || err != nil {
		t.Errorf("ParseScopeMap(blank) = %v, %v; want nil, nil (the default)", m, err)
	}
	for _, bad := range []string{"custody:read", "=read", "custody:read=", "custody:read=root", "x=read x=docs:read", `"q"=read`} {
		if _, err := oauth.ParseScopeMap(bad); err == nil {
			t.Errorf("ParseScopeMap(%q) succeeded", bad)
		}
	}
}

func TestMetadataDocumentAndChallenge(t *testing.T) {
	iss := oauthtest.New(t)
	v := newVerifier(t, iss, func(c *oauth.Config) { c.PublicBaseURL = base + "/prod/" })
	if got, want := v.Challenge(), `Bearer resource_metadata="`+base+`/prod/.well-known/oauth-protected-resource/mcp", scope="custody:mcp"`; got != want {
		t.Errorf("Challenge() = %s, want %s", got, want)
	}
	srv := httptest.NewServer(v.MetadataHandler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"resource":                 base + "/prod/mcp",
		"authorization_servers":    []any{iss.URL},
		"scopes_supported":         []any{"custody:analysis", "custody:docs", "custody:mcp", "custody:read", "custody:tasks", "custody:write"},
		"bearer_methods_supported": []any{"header"},
		"resource_name":            "Custody",
	}
	if diff := cmp.Diff(want, doc); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	if ct, cc := resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"); ct != "application/json" || !strings.Contains(cc, "max-age") {
		t.Errorf("Content-Type %q, Cache-Control %q: want JSON, cacheable", ct, cc)
	}
}

// forge signs an arbitrary protected header and claims with the issuer's
// EC key (ES256), as an issuer with odd habits would.
func forge(t *testing.T, iss *oauthtest.Issuer, header []byte, c oauthtest.Claims) string {
	t.Helper()
	h := base64.RawURLEncoding.EncodeToString(header)
	p := segment(c)
	sum := sha256.Sum256([]byte(h + "." + p))
	r, s, err := ecdsa.Sign(rand.Reader, iss.EC, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return h + "." + p + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func segment(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}
