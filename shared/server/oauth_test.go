package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/custodymcp/custody/shared/auth/oauth"
	"github.com/custodymcp/custody/shared/auth/oauth/oauthtest"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// The OAuth resource server (issue 5 item 4) over real HTTP: a local
// authorization server (oauthtest) publishes an ECDSA P-256 and an RSA key
// as a JWKS on loopback, tokens are signed with them, and the composed
// endpoint fetches and verifies as it would in production.

const oauthRev = "2025-11-25"

// oauthEnv is a servertest.Env whose endpoint accepts the issuer's tokens.
type oauthEnv struct {
	*servertest.Env
	iss *oauthtest.Issuer
}

func newOAuthEnv(t *testing.T, opts servertest.Options) *oauthEnv {
	t.Helper()
	iss := oauthtest.New(t)
	cfg := iss.Config("") // servertest sets each instance's own base URL
	opts.OAuth = &cfg
	return &oauthEnv{Env: servertest.New(t, opts), iss: iss}
}

// claims are a valid token's claims now for the demo attorney.
func (e *oauthEnv) claims(scopes ...string) oauthtest.Claims {
	return e.iss.AccessToken(e.Clock.Now(), e.URL, seed.DemoTenant, seed.DemoAttorney, scopes...)
}

// token signs claims with the issuer's EC key.
func (e *oauthEnv) token(t *testing.T, c oauthtest.Claims) string {
	t.Helper()
	return e.iss.Sign(t, jose.ES256, oauthtest.ECKeyID, c)
}

// allScopes are the token scopes of a token that may do what the
// attorney's key may.
var allScopes = []string{"custody:mcp", "custody:read", "custody:docs", "custody:tasks", "custody:analysis", "custody:write"}

// initBody is FB-27's initialize request with JSON-RPC id id.
func initBody(id int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"acceptance-probe","version":"0.0.0"}}}`, id)
}

// parseChallenge parses a WWW-Authenticate value of one challenge (RFC
// 7235 §2.1, §4.1): the scheme and its auth-params, quoted or token
// values, names lower-cased.
func parseChallenge(t *testing.T, h string) (scheme string, params map[string]string) {
	t.Helper()
	scheme, rest, _ := strings.Cut(strings.TrimSpace(h), " ")
	params = map[string]string{}
	for rest = strings.TrimSpace(rest); rest != ""; {
		name, after, ok := strings.Cut(rest, "=")
		if !ok {
			t.Fatalf("challenge %q: auth-param without '='", h)
		}
		name = strings.ToLower(strings.TrimSpace(name))
		var value string
		if strings.HasPrefix(after, `"`) {
			end := strings.IndexByte(after[1:], '"')
			if end < 0 {
				t.Fatalf("challenge %q: unterminated quoted string", h)
			}
			value, rest = after[1:1+end], after[2+end:]
		} else {
			value, rest, _ = strings.Cut(after, ",")
			value = strings.TrimSpace(value)
		}
		if _, dup := params[name]; !dup {
			params[name] = value
		}
		rest = strings.TrimLeft(strings.TrimSpace(rest), ",")
		rest = strings.TrimSpace(rest)
	}
	return scheme, params
}

func TestFB27_WithAnIssuer401NamesResourceMetadataThatResolvesAndBadTokensAreInvalidToken(t *testing.T) {
	env := newOAuthEnv(t, servertest.Options{})

	// 1. No credential: 401 with a Bearer challenge naming the metadata.
	r := env.Do(t, http.MethodPost, initBody(1))
	expectStatus(t, r, http.StatusUnauthorized)
	scheme, params := parseChallenge(t, r.Header.Get("WWW-Authenticate"))
	prm := params["resource_metadata"]
	if !strings.EqualFold(scheme, "Bearer") || prm == "" || params["scope"] != "custody:mcp" {
		t.Fatalf("WWW-Authenticate = %q: want Bearer with resource_metadata and scope=custody:mcp", r.Header.Get("WWW-Authenticate"))
	}
	if want := strings.TrimSuffix(env.URL, "/mcp") + "/.well-known/oauth-protected-resource/mcp"; prm != want {
		t.Errorf("resource_metadata = %s, want the path-inserted form %s", prm, want)
	}

	// 2. The metadata resolves: resource is the canonical endpoint URL, an
	// authorization server is named. The root form serves the same.
	for _, u := range []string{prm, strings.TrimSuffix(env.URL, "/mcp") + "/.well-known/oauth-protected-resource"} {
		m := servertest.DoURL(t, u, http.MethodGet, nil, "Accept: application/json")
		expectStatus(t, m, http.StatusOK)
		var doc oauth.ProtectedResourceMetadata
		if err := json.Unmarshal(m.Body, &doc); err != nil {
			t.Fatalf("GET %s: not JSON: %s", u, m.Body)
		}
		if doc.Resource != env.URL || !slices.Equal(doc.AuthorizationServers, []string{env.iss.URL}) ||
			!slices.Contains(doc.ScopesSupported, "custody:mcp") || !slices.Equal(doc.BearerMethodsSupported, []string{"header"}) {
			t.Errorf("GET %s = %+v; want resource %s, authorization_servers [%s]", u, doc, env.URL, env.iss.URL)
		}
		if ct := m.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("GET %s Content-Type = %q", u, ct)
		}
	}

	// 3 and 4. An expired token and a token for another resource: 401
	// invalid_token, the challenge still naming the metadata.
	for name, c := range map[string]oauthtest.Claims{
		"expired":        env.claims(allScopes...).With("exp", env.Clock.Now().Add(-time.Hour).Unix()),
		"wrong audience": env.claims(allScopes...).With("aud", "https://other-server.example/mcp"),
	} {
		r := env.Do(t, http.MethodPost, initBody(2), "Authorization: Bearer "+env.token(t, c))
		expectStatus(t, r, http.StatusUnauthorized)
		_, params := parseChallenge(t, r.Header.Get("WWW-Authenticate"))
		if params["error"] != "invalid_token" || params["resource_metadata"] != prm {
			t.Errorf("%s token: WWW-Authenticate = %q, want error=\"invalid_token\" and the resource_metadata", name, r.Header.Get("WWW-Authenticate"))
		}
	}

	// A valid token gets in.
	r = env.Do(t, http.MethodPost, initBody(3), "Authorization: Bearer "+env.token(t, env.claims(allScopes...)))
	expectStatus(t, r, http.StatusOK)
}

func TestWithAPIKeysOnlyTheChallengeIsRealmCustodyAndThereIsNoMetadata(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	r := env.Do(t, http.MethodPost, initBody(1))
	expectStatus(t, r, http.StatusUnauthorized)
	if got := r.Header.Get("WWW-Authenticate"); got != `Bearer realm="custody"` {
		t.Errorf("WWW-Authenticate = %q, want Bearer realm=\"custody\" and no resource_metadata", got)
	}
	base := strings.TrimSuffix(env.URL, "/mcp")
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		expectStatus(t, servertest.DoURL(t, base+p, http.MethodGet, nil), http.StatusNotFound)
	}
	// A JWT is just an unknown credential here: invalid_token, no metadata.
	iss := oauthtest.New(t)
	tok := iss.Sign(t, jose.ES256, oauthtest.ECKeyID, iss.AccessToken(env.Clock.Now(), env.URL, seed.DemoTenant, seed.DemoAttorney, allScopes...))
	r = env.Do(t, http.MethodPost, initBody(2), "Authorization: Bearer "+tok)
	expectStatus(t, r, http.StatusUnauthorized)
	if got := r.Header.Get("WWW-Authenticate"); got != `Bearer realm="custody", error="invalid_token"` {
		t.Errorf("WWW-Authenticate for a JWT without an issuer = %q", got)
	}
	if iss.Fetches() != 0 {
		t.Errorf("the JWKS was fetched %d times with no issuer configured", iss.Fetches())
	}
}

func TestAValidTokenWithoutTheRequiredScopeIs403InsufficientScope(t *testing.T) {
	env := newOAuthEnv(t, servertest.Options{})
	tok := env.token(t, env.claims("custody:read", "custody:docs"))
	r := env.Do(t, http.MethodPost, initBody(1), "Authorization: Bearer "+tok)
	expectStatus(t, r, http.StatusForbidden)
	scheme, params := parseChallenge(t, r.Header.Get("WWW-Authenticate"))
	if !strings.EqualFold(scheme, "Bearer") || params["error"] != "insufficient_scope" || params["scope"] != "custody:mcp" ||
		params["resource_metadata"] == "" {
		t.Errorf("WWW-Authenticate = %q, want Bearer error=\"insufficient_scope\" with scope and resource_metadata", r.Header.Get("WWW-Authenticate"))
	}
	if rpcCode(t, r) == 0 {
		t.Errorf("403 body %s is no JSON-RPC error", r.Body)
	}
}

// toolNames lists a session's tools by name, sorted.
func toolNames(t *testing.T, s *servertest.Session) []string {
	t.Helper()
	var names []string
	for _, tool := range listAllTools(t, s) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	slices.Sort(names)
	return names
}

func TestATokensScopesHideToolsExactlyAsAKeysDo(t *testing.T) {
	env := newOAuthEnv(t, servertest.Options{})
	env.Keys["token read"] = env.token(t, env.claims("custody:mcp", "custody:read"))
	env.Keys["token all"] = env.token(t, env.claims(allScopes...))

	readToken := toolNames(t, env.Initialize(t, "token read", oauthRev))
	readKey := toolNames(t, env.Initialize(t, servertest.ReadOnly, oauthRev))
	if !slices.Equal(readToken, readKey) {
		t.Errorf("tools of a custody:read token = %v, of a read key = %v", readToken, readKey)
	}
	allToken := toolNames(t, env.Initialize(t, "token all", oauthRev))
	allKey := toolNames(t, env.Initialize(t, servertest.Attorney, oauthRev))
	if !slices.Equal(allToken, allKey) || len(allToken) <= len(readToken) {
		t.Errorf("tools of a token with every scope = %v, of the attorney's key = %v", allToken, allKey)
	}
	if slices.Contains(readToken, "list_documents") {
		t.Fatal("a token without custody:docs lists list_documents")
	}
	s := env.Initialize(t, "token read", oauthRev)
	msg := s.Call(t, "tools/call", map[string]any{"name": "list_documents", "arguments": map[string]any{"case_id": seed.Meridian}})
	if code := errorCode(msg); code != -32602 {
		t.Errorf("calling a hidden tool with a token = %v, want -32602 Unknown tool", msg)
	}
}

func errorCode(msg map[string]any) int {
	e, ok := msg["error"].(map[string]any)
	if !ok {
		return 0
	}
	c, _ := e["code"].(float64)
	return int(c)
}

// A session is bound to the principal: a refreshed token of the same user
// keeps it, and so does the user's API key; the credential id is per
// (issuer, tenant, subject, client) and class, so cursors follow a
// refreshed token but not another client's token of the same user.
func TestARefreshedTokenOfTheSameUserKeepsTheSessionAndItsCursors(t *testing.T) {
	env := newOAuthEnv(t, servertest.Options{ToolPageSize: 2})
	first := env.claims(allScopes...)
	env.Keys["token"] = env.token(t, first)
	s := env.Initialize(t, "token", oauthRev)
	page := s.Call(t, "tools/list", map[string]any{})["result"].(map[string]any)
	cursor, _ := page["nextCursor"].(string)
	if cursor == "" {
		t.Fatal("no second tools/list page to continue")
	}

	env.Clock.Advance(50 * time.Minute)
	now := env.Clock.Now()
	refreshed := first.With("jti", "refreshed").With("iat", now.Unix()).With("nbf", now.Unix()).
		With("exp", now.Add(time.Hour).Unix())
	s.Key = env.token(t, refreshed)
	if msg := s.Call(t, "tools/list", map[string]any{"cursor": cursor}); msg["result"] == nil {
		t.Errorf("the refreshed token's tools/list with the first token's cursor = %v, want page two", msg)
	}

	// The attorney's API key is the same principal: same session.
	s.Key = env.Keys[servertest.Attorney]
	if r := s.Post(t, []byte(`{"jsonrpc":"2.0","id":90,"method":"ping"}`)); r.Status != http.StatusOK {
		t.Errorf("the same principal's key in the token's session = %d %s, want 200", r.Status, r.Body)
	}

	// Another client's token of the same user: the session, not the cursor.
	s.Key = env.token(t, refreshed.With("client_id", "another-client"))
	if msg := s.Call(t, "tools/list", map[string]any{"cursor": cursor}); errorCode(msg) != -32602 {
		t.Errorf("another client's token with the cursor = %v, want -32602 (cursors bind to the credential id)", msg)
	}

	// The first token, expired by now, is refused.
	env.Clock.Advance(20 * time.Minute)
	s.Key = env.Keys["token"]
	r := s.Post(t, []byte(`{"jsonrpc":"2.0","id":91,"method":"ping"}`))
	expectStatus(t, r, http.StatusUnauthorized)
}

func TestATokenOfAnotherPrincipalCannotUseTheSession404(t *testing.T) {
	env := newOAuthEnv(t, servertest.Options{})
	env.Keys["token"] = env.token(t, env.claims(allScopes...))
	s := env.Initialize(t, "token", oauthRev)
	now := env.Clock.Now()
	for name, c := range map[string]oauthtest.Claims{
		"another tenant's user":              env.iss.AccessToken(now, env.URL, seed.OtherTenant, seed.OtherPrincipal, allScopes...),
		"the same user id in another tenant": env.iss.AccessToken(now, env.URL, seed.OtherTenant, seed.DemoAttorney, allScopes...),
		"another user of the firm":           env.iss.AccessToken(now, env.URL, seed.DemoTenant, seed.DemoParalegal, allScopes...),
	} {
		r := servertest.DoURL(t, env.URL, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`),
			"Authorization: Bearer "+env.token(t, c), "Mcp-Session-Id: "+s.ID, "MCP-Protocol-Version: "+oauthRev)
		if r.Status != http.StatusNotFound {
			t.Errorf("%s in the attorney's session: %d %s, want 404", name, r.Status, r.Body)
		}
	}
}

func TestNoneAndHS256TokensAreRefused401InvalidToken(t *testing.T) {
	env := newOAuthEnv(t, servertest.Options{})
	good := env.claims(allScopes...)
	for name, tok := range map[string]string{
		"alg none":                        oauthtest.Unsigned(good),
		"HS256 keyed with the public key": env.iss.HS256WithPublicKey(t, good),
		"not a JWT at all":                "definitely-not-a-token",
	} {
		r := env.Do(t, http.MethodPost, initBody(1), "Authorization: Bearer "+tok)
		expectStatus(t, r, http.StatusUnauthorized)
		if _, params := parseChallenge(t, r.Header.Get("WWW-Authenticate")); params["error"] != "invalid_token" {
			t.Errorf("%s: WWW-Authenticate = %q, want error=\"invalid_token\"", name, r.Header.Get("WWW-Authenticate"))
		}
	}
}

func TestAnUnknownKidTriggersOneJWKSRefreshThen401(t *testing.T) {
	env := newOAuthEnv(t, servertest.Options{})
	env.iss.AddKey(t, "not-in-the-jwks", false)
	call := func(tok string) *servertest.Response {
		return env.Do(t, http.MethodPost, initBody(1), "Authorization: Bearer "+tok)
	}
	expectStatus(t, call(env.token(t, env.claims(allScopes...))), http.StatusOK)
	if got := env.iss.Fetches(); got != 1 {
		t.Fatalf("%d JWKS fetches after the first token, want 1", got)
	}
	env.Clock.Advance(oauth.DefaultMinRefreshInterval)
	unknown := env.iss.Sign(t, jose.ES256, "not-in-the-jwks", env.claims(allScopes...))
	r := call(unknown)
	expectStatus(t, r, http.StatusUnauthorized)
	if _, params := parseChallenge(t, r.Header.Get("WWW-Authenticate")); params["error"] != "invalid_token" {
		t.Errorf("unknown kid: WWW-Authenticate = %q, want error=\"invalid_token\"", r.Header.Get("WWW-Authenticate"))
	}
	if got := env.iss.Fetches(); got != 2 {
		t.Errorf("%d JWKS fetches after an unknown kid, want 2 (one refresh)", got)
	}
	for range 5 {
		expectStatus(t, call(unknown), http.StatusUnauthorized)
	}
	if got := env.iss.Fetches(); got != 2 {
		t.Errorf("%d JWKS fetches after more unknown kids at once, want still 2 (refresh is rate-limited)", got)
	}
	// The key reaches the JWKS (a rotation): after the interval, it verifies.
	env.iss.Publish("not-in-the-jwks")
	env.Clock.Advance(oauth.DefaultMinRefreshInterval)
	expectStatus(t, call(env.iss.Sign(t, jose.ES256, "not-in-the-jwks", env.claims(allScopes...))), http.StatusOK)
}

func TestTheJWKSDownWithNoCachedKeyIs503AndACachedKeyStillVerifies(t *testing.T) {
	env := newOAuthEnv(t, servertest.Options{})
	env.iss.SetDown(true)
	r := env.Do(t, http.MethodPost, initBody(1), "Authorization: Bearer "+env.token(t, env.claims(allScopes...)))
	expectStatus(t, r, http.StatusServiceUnavailable)
	if r.Header.Get("Retry-After") == "" || r.Header.Get("WWW-Authenticate") != "" {
		t.Errorf("503 headers %v: want Retry-After and no challenge", r.Header)
	}
	// API keys do not depend on the issuer.
	expectStatus(t, env.Do(t, http.MethodPost, initBody(2), "Authorization: Bearer "+env.Keys[servertest.Attorney]), http.StatusOK)

	env.iss.SetDown(false)
	env.Clock.Advance(oauth.DefaultMinRefreshInterval)
	expectStatus(t, env.Do(t, http.MethodPost, initBody(3), "Authorization: Bearer "+env.token(t, env.claims(allScopes...))), http.StatusOK)
	env.iss.SetDown(true)
	env.Clock.Advance(2 * time.Hour) // the cached set is stale; its refresh fails
	expectStatus(t, env.Do(t, http.MethodPost, initBody(4), "Authorization: Bearer "+env.token(t, env.claims(allScopes...))), http.StatusOK)
}

// The rate bucket is keyed by the token's credential digest: a refreshed
// token of the same (issuer, tenant, subject, client) and class shares it.
func TestATokensRateBucketIsItsCredentials(t *testing.T) {
	env := newOAuthEnv(t, servertest.Options{Limits: ratelimit.Limits{ratelimit.LaneRead: 2}})
	c := env.claims(allScopes...)
	for i, want := range []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests} {
		tok := env.token(t, c.With("jti", fmt.Sprint("refresh-", i)))
		r := env.Do(t, http.MethodPost, initBody(i+1), "Authorization: Bearer "+tok)
		expectStatus(t, r, want)
	}
	// Another client's token of the same user has its own bucket.
	other := env.token(t, c.With("client_id", "another-client"))
	expectStatus(t, env.Do(t, http.MethodPost, initBody(4), "Authorization: Bearer "+other), http.StatusOK)
}

// Two firms may use one authorization server, and its "sub" values are
// unique only within a firm (docs/decisions.md "Identity and binding": a token's
// credential id derives from issuer, tenant, subject and client). Tokens
// alike in everything but the tenant are two credentials: neither spends
// the other's rate bucket, continues the other's list cursor or resumes the
// other's 2026-era request state.
func TestTokensAlikeButForTheTenantAreTwoCredentials(t *testing.T) {
	// tokens returns the two tokens: the demo firm's and the other firm's,
	// same issuer, sub and client_id.
	tokens := func(t *testing.T, env *oauthEnv) (firm, other string) {
		t.Helper()
		c := env.claims(allScopes...)
		return env.token(t, c), env.token(t, c.With(oauth.DefaultTenantClaim, seed.OtherTenant))
	}

	t.Run("the other firm's token is not limited by the first firm's bucket", func(t *testing.T) {
		env := newOAuthEnv(t, servertest.Options{Limits: ratelimit.Limits{ratelimit.LaneRead: 2}})
		firm, other := tokens(t, env)
		for i, want := range []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests} {
			expectStatus(t, env.Do(t, http.MethodPost, initBody(i+1), "Authorization: Bearer "+firm), want)
		}
		r := env.Do(t, http.MethodPost, initBody(4), "Authorization: Bearer "+other)
		if r.Status != http.StatusOK {
			t.Errorf("the other firm's first request after the first firm's bucket ran out = %d %s, want 200 (its own bucket)", r.Status, r.Body)
		}
	})

	t.Run("the other firm's token cannot continue the first firm's tools/list cursor", func(t *testing.T) {
		env := newOAuthEnv(t, servertest.Options{ToolPageSize: 2})
		firm, other := tokens(t, env)
		env.Keys["firm"], env.Keys["other"] = firm, other
		cursor, _ := env.Initialize(t, "firm", oauthRev).Call(t, "tools/list", map[string]any{})["result"].(map[string]any)["nextCursor"].(string)
		if cursor == "" {
			t.Fatal("no second tools/list page to continue")
		}
		s := env.Initialize(t, "other", oauthRev)
		if got, want := toolNames(t, s), toolNames(t, env.Initialize(t, "firm", oauthRev)); !slices.Equal(got, want) {
			t.Fatalf("the two tokens list different tools (%v, %v): the cursor would be refused for its key set alone", got, want)
		}
		if msg := s.Call(t, "tools/list", map[string]any{"cursor": cursor}); errorCode(msg) != -32602 {
			t.Errorf("the other firm's tools/list with the first firm's cursor = error %d (a page: %t), want -32602", errorCode(msg), msg["result"] != nil)
		}
	})

	t.Run("the other firm's token cannot resume the first firm's request state", func(t *testing.T) {
		env := newOAuthEnv(t, servertest.Options{RegisterExtra: register2026Fixtures})
		firm, other := tokens(t, env)
		args := map[string]any{"salutation": "Dear"}
		first := mrtrRound(t, env.Env, firm, args, nil, nil)["result"].(map[string]any)
		state, _ := first["requestState"].(string)
		if state == "" {
			t.Fatalf("round 1 with the first firm's token = %v, want input_required with a requestState", first)
		}
		answer := map[string]any{"name": accept("name", "Ada")}
		msg := mrtrRound(t, env.Env, other, args, answer, state)
		if e, _ := msg["error"].(map[string]any); e == nil || e["code"] != -32602.0 {
			t.Errorf("the other firm's round 2 with the first firm's state = %v, want -32602", msg)
		}
		if r := mrtrRound(t, env.Env, firm, args, answer, state)["result"].(map[string]any); r["resultType"] != "input_required" {
			t.Errorf("the first firm's own round 2 = %v, want the next question (the state is intact)", r)
		}
	})
}
