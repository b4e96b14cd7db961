// Package oauthtest is a local OAuth authorization server for tests: an
// ECDSA P-256 key and an RSA 2048 key published as a JWK Set by an
// httptest server on loopback, access tokens signed with them (go-jose),
// and the forgeries a resource server must refuse ("none", HS256 keyed with
// the public key). It counts JWKS fetches and can be taken down. It is also
// an OpenID Connect provider (provider.go): an authorization endpoint and a
// token endpoint of the authorization code flow with PKCE, which sign a
// configured person in and answer ID tokens, for the approval page's
// sign-in. Nothing in it is a mock: Custody fetches and verifies exactly as
// it would in production, over real HTTP.
package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/custodymcp/custody/shared/auth/oauth"
)

// Key ids of the issuer's two keys.
const (
	ECKeyID  = "ec-1"
	RSAKeyID = "rsa-1"
)

// Issuer is a running test authorization server.
type Issuer struct {
	// URL is the issuer identifier (the server's base URL, http on loopback).
	URL string
	// JWKSURL serves the public keys.
	JWKSURL string
	// AuthorizationEndpoint and TokenEndpoint are the OpenID Connect
	// provider's (provider.go).
	AuthorizationEndpoint, TokenEndpoint string
	EC                                   *ecdsa.PrivateKey
	RSA                                  *rsa.PrivateKey

	mu      sync.Mutex
	fetches int
	down    bool
	extra   map[string]*ecdsa.PrivateKey // keys added by AddKey, by kid
	hidden  map[string]bool              // kids signed with but not published

	// The OpenID Connect provider's state (provider.go).
	clients  map[string]Client
	login    *Login
	codes    map[string]*grant
	tokenReq int
	idHook   func(Claims) Claims
}

// New starts an issuer; it is closed with the test.
func New(t testing.TB) *Issuer {
	t.Helper()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	iss := &Issuer{EC: ec, RSA: rk, extra: map[string]*ecdsa.PrivateKey{}, hidden: map[string]bool{},
		clients: map[string]Client{}, codes: map[string]*grant{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/jwks", iss.serveJWKS)
	mux.HandleFunc(AuthorizePath, iss.serveAuthorize)
	mux.HandleFunc(TokenPath, iss.serveToken)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	iss.URL, iss.JWKSURL = srv.URL, srv.URL+"/jwks"
	iss.AuthorizationEndpoint, iss.TokenEndpoint = srv.URL+AuthorizePath, srv.URL+TokenPath
	return iss
}

func (i *Issuer) serveJWKS(w http.ResponseWriter, r *http.Request) {
	i.mu.Lock()
	i.fetches++
	down := i.down
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &i.EC.PublicKey, KeyID: ECKeyID, Algorithm: string(jose.ES256), Use: "sig"},
		{Key: &i.RSA.PublicKey, KeyID: RSAKeyID, Algorithm: string(jose.RS256), Use: "sig"},
	}}
	for kid, k := range i.extra {
		if !i.hidden[kid] {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: kid, Algorithm: string(jose.ES256), Use: "sig"})
		}
	}
	i.mu.Unlock()
	if down {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/jwk-set+json")
	_ = json.NewEncoder(w).Encode(set)
}

// Fetches returns how many times the JWKS was requested.
func (i *Issuer) Fetches() int { i.mu.Lock(); defer i.mu.Unlock(); return i.fetches }

// SetDown makes the JWKS endpoint answer 503 (true) or serve again.
func (i *Issuer) SetDown(down bool) { i.mu.Lock(); i.down = down; i.mu.Unlock() }

// AddKey makes a new ES256 key under kid; published says whether the JWKS
// lists it (an unpublished key signs tokens the resource must refuse).
func (i *Issuer) AddKey(t testing.TB, kid string, published bool) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	i.mu.Lock()
	i.extra[kid], i.hidden[kid] = k, !published
	i.mu.Unlock()
}

// Publish lists a key added unpublished (a rotation reaching the JWKS).
func (i *Issuer) Publish(kid string) { i.mu.Lock(); delete(i.hidden, kid); i.mu.Unlock() }

// Config is an oauth.Config for this issuer and a server reached at
// publicBaseURL, with the defaults' claims and scopes, http allowed.
func (i *Issuer) Config(publicBaseURL string) oauth.Config {
	return oauth.Config{Issuer: i.URL, JWKSURL: i.JWKSURL, PublicBaseURL: publicBaseURL, AllowHTTP: true}
}

// Claims are a token's claims.
type Claims map[string]any

// AccessToken returns the claims of a valid access token at now for the
// resource (audience), tenant and user, with the token scopes given, issued
// to client "test-client", valid for an hour, with a fresh jti.
func (i *Issuer) AccessToken(now time.Time, resource, tenant, user string, scopes ...string) Claims {
	return Claims{
		"iss": i.URL, "sub": user, "aud": resource, "client_id": "test-client",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"jti": rand.Text(), "scope": strings.Join(scopes, " "),
		oauth.DefaultTenantClaim: tenant,
	}
}

// With returns a copy of c with key set to value (a nil value deletes it).
func (c Claims) With(key string, value any) Claims {
	out := Claims{}
	for k, v := range c {
		out[k] = v
	}
	if value == nil {
		delete(out, key)
	} else {
		out[key] = value
	}
	return out
}

// Sign signs c as a compact JWS with alg (ES256 or RS256 with the issuer's
// keys; ES256 under a kid given to AddKey), typ at+jwt.
func (i *Issuer) Sign(t testing.TB, alg jose.SignatureAlgorithm, kid string, c Claims) string {
	t.Helper()
	var key any
	i.mu.Lock()
	switch {
	case alg == jose.ES256 && kid == ECKeyID:
		key = i.EC
	case alg == jose.RS256 && kid == RSAKeyID:
		key = i.RSA
	case alg == jose.ES256 && i.extra[kid] != nil:
		key = i.extra[kid]
	}
	i.mu.Unlock()
	if key == nil {
		t.Fatalf("oauthtest: no %s key %q", alg, kid)
	}
	return SignWith(t, alg, key, kid, c)
}

// SignWith signs c with any key, typ at+jwt.
func SignWith(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, c Claims) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(map[string]any(c)).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Unsigned returns c as an "alg":"none" token (RFC 7519 §6.1) naming the
// EC key: a forgery.
func Unsigned(c Claims) string {
	return segment(map[string]any{"alg": "none", "typ": "JWT", "kid": ECKeyID}) + "." + segment(c) + "."
}

// HS256WithPublicKey returns c signed with HS256 keyed by the issuer's RSA
// public key (its DER): the algorithm-confusion forgery of RFC 8725 §2.1.
func (i *Issuer) HS256WithPublicKey(t testing.TB, c Claims) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&i.RSA.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return SignWith(t, jose.HS256, der, RSAKeyID, c)
}

func segment(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("oauthtest: marshal %v: %v", v, err))
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
