package oauthtest

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/custodymcp/custody/shared/auth/oauth"
)

// The OpenID Connect provider: the authorization code flow with PKCE
// (RFC 6749 §4.1, RFC 7636, OpenID Connect Core 1.0 §3.1) as a firm's
// identity provider runs it, minus the login form — the person the next
// authorization signs in is set with SetLogin, as if they had typed their
// password. Everything a client can get wrong is refused as a provider
// would refuse it: an unregistered client or redirect URI, a flow without
// PKCE S256 or without "openid", a code used twice or by another client or
// redirect URI, a wrong code_verifier, a confidential client without its
// secret.

// Paths of the provider's endpoints below the issuer URL.
const (
	AuthorizePath = "/authorize"
	TokenPath     = "/token"
)

// CodeTTL is how long an authorization code may be redeemed.
const CodeTTL = time.Minute

// Client is a registered OpenID Connect client.
type Client struct {
	ID string
	// Secret, when set, makes the client confidential: the token endpoint
	// requires it (client_secret_basic or client_secret_post, RFC 6749
	// §2.3.1). Empty: a public client (PKCE alone).
	Secret string
	// RedirectURIs are the exact redirect URIs the client registered.
	RedirectURIs []string
}

// RegisterClient registers (or replaces) a client.
func (i *Issuer) RegisterClient(c Client) {
	i.mu.Lock()
	i.clients[c.ID] = c
	i.mu.Unlock()
}

// Login is who the next authorizations sign in.
type Login struct {
	// Subject is the ID token's "sub".
	Subject string
	// Claims are added to the ID token (the tenant claim, a user claim).
	Claims Claims
	// Error, when set, makes the authorization endpoint answer this error
	// code to the redirect URI (access_denied: the person said no).
	Error string
}

// SetLogin sets who the next authorizations sign in; nil signs no one in
// (the authorization endpoint answers login_required).
func (i *Issuer) SetLogin(l *Login) {
	i.mu.Lock()
	i.login = l
	i.mu.Unlock()
}

// SetIDTokenHook makes the token endpoint pass every ID token's claims
// through hook before signing (a test's tampering: another audience, a
// stale nonce, an expiry in the past); nil stops it.
func (i *Issuer) SetIDTokenHook(hook func(Claims) Claims) {
	i.mu.Lock()
	i.idHook = hook
	i.mu.Unlock()
}

// TokenRequests returns how many requests the token endpoint answered.
func (i *Issuer) TokenRequests() int { i.mu.Lock(); defer i.mu.Unlock(); return i.tokenReq }

// grant is an issued authorization code's binding.
type grant struct {
	client, redirect, challenge, nonce string
	login                              Login
	expires                            time.Time
}

// serveAuthorize is the authorization endpoint (GET). Errors about the
// client or the redirect URI are shown to the person (400), never
// redirected (RFC 6749 §4.1.2.1); the others go to the redirect URI.
func (i *Issuer) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	i.mu.Lock()
	c, known := i.clients[q.Get("client_id")]
	login := i.login
	i.mu.Unlock()
	redirect := q.Get("redirect_uri")
	if !known || !slices.Contains(c.RedirectURIs, redirect) {
		http.Error(w, "unknown client or redirect URI", http.StatusBadRequest)
		return
	}
	back := func(params url.Values) {
		params.Set("state", q.Get("state"))
		sep := "?"
		if strings.Contains(redirect, "?") {
			sep = "&"
		}
		http.Redirect(w, r, redirect+sep+params.Encode(), http.StatusFound)
	}
	fail := func(code string) { back(url.Values{"error": {code}}) }
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type")
		return
	case !slices.Contains(strings.Fields(q.Get("scope")), "openid"):
		fail("invalid_scope")
		return
	case q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43:
		fail("invalid_request")
		return
	case login == nil:
		fail("login_required")
		return
	case login.Error != "":
		fail(login.Error)
		return
	}
	code := rand.Text()
	i.mu.Lock()
	i.codes[code] = &grant{client: c.ID, redirect: redirect, challenge: q.Get("code_challenge"), nonce: q.Get("nonce"),
		login: *login, expires: time.Now().Add(CodeTTL)}
	i.mu.Unlock()
	back(url.Values{"code": {code}})
}

// serveToken is the token endpoint (POST, form): the authorization code
// grant only. A code is redeemed once, whatever the outcome.
func (i *Issuer) serveToken(w http.ResponseWriter, r *http.Request) {
	i.mu.Lock()
	i.tokenReq++
	i.mu.Unlock()
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	f := r.PostForm
	if f.Get("grant_type") != "authorization_code" {
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	id, secret, basic := r.BasicAuth()
	if basic {
		// RFC 6749 §2.3.1: the id and secret are form-encoded before Basic.
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = f.Get("client_id"), f.Get("client_secret")
	}
	i.mu.Lock()
	c, known := i.clients[id]
	g := i.codes[f.Get("code")]
	delete(i.codes, f.Get("code"))
	hook := i.idHook
	i.mu.Unlock()
	switch {
	case !known, c.Secret != "" && subtle.ConstantTimeCompare([]byte(secret), []byte(c.Secret)) != 1,
		c.Secret == "" && secret != "":
		tokenError(w, http.StatusUnauthorized, "invalid_client")
		return
	case g == nil, time.Now().After(g.expires), g.client != c.ID, g.redirect != f.Get("redirect_uri"):
		tokenError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	sum := sha256.Sum256([]byte(f.Get("code_verifier")))
	if base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
		tokenError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	now := time.Now()
	claims := Claims{"iss": i.URL, "sub": g.login.Subject, "aud": c.ID, "iat": now.Unix(), "auth_time": now.Unix(),
		"exp": now.Add(time.Hour).Unix()}
	if g.nonce != "" {
		claims["nonce"] = g.nonce
	}
	for k, v := range g.login.Claims {
		claims[k] = v
	}
	if hook != nil {
		claims = hook(claims)
	}
	idToken, err := i.signIDToken(claims)
	if err != nil {
		tokenError(w, http.StatusInternalServerError, "server_error")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"access_token": rand.Text(), "token_type": "Bearer", "expires_in": 3600, "id_token": idToken,
	})
}

// signIDToken signs claims with the EC key, typ JWT (an ID token's).
func (i *Issuer) signIDToken(c Claims) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: i.EC, KeyID: ECKeyID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	return jwt.Signed(signer).Claims(map[string]any(c)).Serialize()
}

// tokenError answers an RFC 6749 §5.2 error.
func tokenError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code})
}

// IDToken returns the claims of a valid ID token at now for the client,
// signing in user of tenant (as "sub" and the tenant claim) with nonce,
// valid for an hour.
func (i *Issuer) IDToken(now time.Time, clientID, tenant, user, nonce string) Claims {
	return Claims{"iss": i.URL, "sub": user, "aud": clientID, "iat": now.Unix(), "auth_time": now.Unix(),
		"exp": now.Add(time.Hour).Unix(), "nonce": nonce, oauth.DefaultTenantClaim: tenant}
}

// SignIDToken signs c as an ID token: ES256 with the EC key, typ JWT.
func (i *Issuer) SignIDToken(t testing.TB, c Claims) string {
	t.Helper()
	tok, err := i.signIDToken(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
