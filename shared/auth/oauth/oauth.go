// Package oauth makes Custody an OAuth 2.1 resource server: besides API keys,
// /mcp accepts access tokens that one configured authorization server issued
// as JWTs (RFC 9068), verified here from scratch on every request, and it
// publishes the RFC 9728 metadata that tells a client where to get one (MCP
// 2025-11-25 basic/authorization).
//
// Verification (Verifier.Verify) is CPU only once the issuer's key set is
// cached; it never reads the store, so a token request costs the gate the
// same one batch read (session and rate bucket, no credential row) and one
// write as a key request (docs/decisions.md "Pipeline choices"). It checks, in
// this order (a token naming another issuer in its still unverified
// payload is refused before any key is looked up, so foreign tokens cannot
// drive JWKS fetches):
//
//   - the compact JWS shape and an asymmetric "alg" (RS256/384/512,
//     PS256/384/512, ES256/384/512, EdDSA); "none" and HMAC are refused before
//     any key is consulted, so an issuer's public key can never be used as an
//     HMAC secret (RFC 8725 §2.1, §3.1); a "crit" header is refused (RFC 7515
//     §4.1.11: Custody understands no extension), and so is "b64" (RFC 7797
//     §7); "typ", when present, is JWT or at+jwt (RFC 9068 §2.1);
//   - the signature, with the key the header's "kid" names in the issuer's
//     JWKS (RFC 7517 §5), of a type and curve that fits the algorithm;
//   - "iss" equal to the configured issuer (RFC 9068 §4; RFC 8414 §2),
//     "exp" present and not passed and "nbf"/"iat" not in the future, each
//     with Leeway (RFC 7519 §4.1.4, §4.1.5), "sub" present;
//   - "aud" containing the canonical resource URL, PublicBaseURL + "/mcp"
//     (RFC 8707 §2; RFC 9068 §4; MCP basic/authorization §Token Audience
//     Binding): a token issued for another resource is refused, and a token
//     is never passed on to anything.
//
// A token that fails any of these is "invalid_token" (401, RFC 6750 §3.1).
// A verified token must then carry the scope /mcp itself requires
// (Config.RequiredScope), else it is "insufficient_scope" (403).
//
// Mapping. The token's scopes ("scope", space-separated, RFC 9068 §2.2.3;
// also "scp", as a list or a space-separated string, as some issuers send)
// map to Custody scopes through Config.ScopeMap (DefaultScopeMap), and those
// hide tools exactly as a key's scopes do. The principal is a tenant and a
// user taken from configured claims (TenantClaim, default custody_tenant, or
// a fixed Config.Tenant; UserClaim, default sub); a token whose tenant or
// user cannot be resolved to a well-formed id is invalid_token. The class
// is standard unless ClassClaim (default custody_class) says client_safe; any
// other value is invalid_token, so a typo never widens what a token sees.
//
// Identity. A token's credential id is stable per (issuer, tenant,
// subject, client — "client_id", else "azp") and class (docs/decisions.md
// "Identity and binding"): "oauth_" + the first 22 characters of the
// unpadded base64url SHA-256 of the JSON array [iss, tenant, sub, client,
// class] (an array, so no choice of separator can make two tuples collide).
// The tenant is in it because one authorization server may serve several
// firms and its "sub" values need be unique only within one: two firms'
// users with the same issuer, subject and client are two credentials, with
// two rate buckets, and neither opens the other's cursors or request
// states. The class is in it so that a client-safe token never continues
// what a standard one of the same user started. Cursors, parked requests
// and tasks bind to the id, so a refreshed token of the same user, tenant,
// client and class keeps them; the rate bucket is keyed by the lowercase hex
// of the same digest (Credential.KeyHash). Sessions are bound to the
// principal (tenant and user), so a refreshed token keeps its session too.
//
// Keys. The JWKS is fetched from Config.JWKSURL — configured, not discovered
// from the issuer's RFC 8414 or OIDC metadata: one fewer document on the
// request path and one fewer thing an attacker-influenced response could
// redirect; the operator copies "jwks_uri" from the issuer's metadata once.
// It is cached: refetched when older than RefreshInterval, and at once
// when a token names an unknown "kid" (a rotation), but never more often
// than MinRefreshInterval, so tokens with made-up kids cannot drive fetches.
// Each fetch has FetchTimeout. A fetch that fails is an unavailable
// dependency (ErrUnavailable: the request gets 503 like a store failure,
// not 401) unless a cached key verifies the token. The key set is the one
// thing this package holds in a process's memory: public, and fetched by
// any instance that lacks it, so no request depends on which instance it
// lands on (shared/mcp: nothing that matters lives in a process).
//
// ID tokens. The approval page signs people in at the same issuer with
// OpenID Connect (shared/approvals); IDTokenVerifier (idtoken.go) verifies
// the ID tokens it receives with this Verifier's key set and principal
// mapping, under the same shape, algorithm, issuer and signature checks,
// then the ID token's own: audience = the page's client id, azp, nonce.
// Each kind refuses the other: an ID token's audience is never the
// resource, and an access token's typ at+jwt is refused as an ID token.
//
// Tokens are not revocable here: they live until "exp" (keep them short).
// API keys are untouched by all this, and with no issuer configured nothing
// of this package is on the request path.
package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/keyspace"
)

// The ways a token is refused. Verify's errors wrap exactly one of them.
var (
	// ErrInvalidToken: malformed, badly signed, expired, not yet valid, of
	// another issuer or audience, or naming no resolvable principal
	// (RFC 6750 §3.1 invalid_token, answered 401).
	ErrInvalidToken = errors.New("oauth: invalid token")
	// ErrInsufficientScope: a valid token without Config.RequiredScope
	// (RFC 6750 §3.1 insufficient_scope, answered 403).
	ErrInsufficientScope = errors.New("oauth: insufficient scope")
	// ErrUnavailable: the issuer's key set could not be fetched and no
	// cached key verifies the token (answered 503, like a store failure).
	ErrUnavailable = errors.New("oauth: the issuer's key set is unavailable")
)

// Defaults of Config's zero values.
const (
	DefaultRequiredScope      = "custody:mcp"
	DefaultTenantClaim        = "custody_tenant"
	DefaultUserClaim          = "sub"
	DefaultClassClaim         = "custody_class"
	DefaultFetchTimeout       = 5 * time.Second
	DefaultRefreshInterval    = time.Hour
	DefaultMinRefreshInterval = 10 * time.Second
)

// Leeway is the clock skew tolerated on "exp", "nbf" and "iat" (RFC 7519
// §4.1.4: "some small leeway, usually no more than a few minutes").
const Leeway = 30 * time.Second

// MaxTokenBytes bounds a token's length before it is parsed; real access
// tokens are a few hundred bytes to a few KiB.
const MaxTokenBytes = 16 << 10

// IDPrefix starts the credential id of every token.
const IDPrefix = "oauth_"

// algorithms are the accepted "alg" values: asymmetric signatures only
// (RFC 8725 §3.1). "none", HS256/384/512 and anything else fail to parse.
var algorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// Config configures a Verifier. Zero values take the documented defaults.
type Config struct {
	// Issuer is the authorization server's issuer identifier: the exact
	// "iss" of its tokens and the one entry of the metadata's
	// authorization_servers (RFC 9728 §2; RFC 8414 §2). Required, https
	// (http only when AllowHTTP).
	Issuer string
	// JWKSURL is the issuer's JWK Set document (its metadata's "jwks_uri",
	// RFC 8414 §2). Required, https (http only when AllowHTTP).
	JWKSURL string
	// PublicBaseURL is the origin (optionally with a path) clients reach
	// Custody at. The canonical resource URL, the audience every token must
	// carry, is PublicBaseURL + "/mcp" (RFC 8707 §2); the metadata is served
	// under PublicBaseURL + "/.well-known/oauth-protected-resource/mcp".
	// Required.
	PublicBaseURL string
	// AllowHTTP admits http URLs: emulator and loopback runs only.
	AllowHTTP bool
	// RequiredScope is the scope /mcp itself requires; "" means
	// DefaultRequiredScope ("custody:mcp").
	RequiredScope string
	// ScopeMap maps a token scope to the Custody scopes it grants; nil
	// means DefaultScopeMap(). Token scopes it does not name grant nothing.
	ScopeMap map[string][]auth.Scope
	// TenantClaim names the claim holding the tenant; "" means
	// DefaultTenantClaim ("custody_tenant").
	TenantClaim string
	// Tenant, when set, is the one tenant every token belongs to (a
	// single-firm deployment whose issuer cannot add a tenant claim): a
	// token without TenantClaim maps to it, and one whose TenantClaim names
	// another tenant is invalid.
	Tenant string
	// UserClaim names the claim holding the user id the principal is; ""
	// means DefaultUserClaim ("sub").
	UserClaim string
	// ClassClaim names the claim that may say "client_safe"; "" means
	// DefaultClassClaim ("custody_class").
	ClassClaim string
	// HTTPClient fetches the JWKS; nil means a client of its own with no
	// redirects followed (each fetch is bounded by FetchTimeout either way).
	HTTPClient *http.Client
	// FetchTimeout bounds one JWKS fetch; 0 means 5 s.
	FetchTimeout time.Duration
	// RefreshInterval is how long a fetched key set is used before it is
	// fetched again; 0 means 1 h.
	RefreshInterval time.Duration
	// MinRefreshInterval is the least time between two fetches (after an
	// unknown "kid" or a failure); 0 means 10 s.
	MinRefreshInterval time.Duration
	// Logger receives a warning per failed JWKS fetch; nil discards.
	Logger *slog.Logger
}

// Verifier verifies access tokens for one issuer and one resource. It is
// safe for concurrent use; its only state is the cached key set.
type Verifier struct {
	cfg      Config
	resource string
	keys     *keySet
}

// New validates cfg and returns its Verifier. Nothing is fetched until the
// first token arrives.
func New(cfg Config) (*Verifier, error) {
	if cfg.RequiredScope == "" {
		cfg.RequiredScope = DefaultRequiredScope
	}
	if cfg.ScopeMap == nil {
		cfg.ScopeMap = DefaultScopeMap()
	}
	if cfg.TenantClaim == "" {
		cfg.TenantClaim = DefaultTenantClaim
	}
	if cfg.UserClaim == "" {
		cfg.UserClaim = DefaultUserClaim
	}
	if cfg.ClassClaim == "" {
		cfg.ClassClaim = DefaultClassClaim
	}
	if cfg.FetchTimeout <= 0 {
		cfg.FetchTimeout = DefaultFetchTimeout
	}
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = DefaultRefreshInterval
	}
	if cfg.MinRefreshInterval <= 0 {
		cfg.MinRefreshInterval = DefaultMinRefreshInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	var problems []string
	if err := checkURL(cfg.Issuer, cfg.AllowHTTP); err != nil {
		problems = append(problems, "issuer "+err.Error())
	}
	if err := checkURL(cfg.JWKSURL, cfg.AllowHTTP); err != nil {
		problems = append(problems, "JWKS URL "+err.Error())
	}
	base := strings.TrimSuffix(cfg.PublicBaseURL, "/")
	if err := checkURL(base, cfg.AllowHTTP); err != nil {
		problems = append(problems, "public base URL "+err.Error())
	}
	if !ValidScopeToken(cfg.RequiredScope) {
		problems = append(problems, "required scope is not an RFC 6749 scope token")
	}
	for tok, scopes := range cfg.ScopeMap {
		if !ValidScopeToken(tok) || len(scopes) == 0 {
			problems = append(problems, fmt.Sprintf("scope map entry %q is not a scope token mapped to a Custody scope", tok))
		}
		for _, s := range scopes {
			if !slices.Contains(auth.AllScopes, s) {
				problems = append(problems, fmt.Sprintf("scope map entry %q names unknown scope %q", tok, s))
			}
		}
	}
	for _, c := range []string{cfg.TenantClaim, cfg.UserClaim, cfg.ClassClaim} {
		if strings.ContainsAny(c, " \t\r\n") {
			problems = append(problems, fmt.Sprintf("claim name %q has white space", c))
		}
	}
	if cfg.Tenant != "" && !validID(cfg.Tenant) {
		problems = append(problems, "tenant is not a well-formed id")
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return nil, fmt.Errorf("oauth: %s", strings.Join(problems, "; "))
	}
	cfg.PublicBaseURL = base
	v := &Verifier{cfg: cfg, resource: base + "/mcp"}
	v.keys = newKeySet(cfg)
	return v, nil
}

// checkURL accepts an absolute https URL (http when allowHTTP) with a host
// and no user info, query or fragment, and with nothing a quoted header
// value could not carry. An issuer is compared with "iss" exactly as given,
// trailing slash included (RFC 8414 §3.3).
func checkURL(s string, allowHTTP bool) error {
	if s == "" {
		return errors.New("is required")
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" ||
		strings.ContainsAny(s, "\"\\ \t\r\n") {
		return errors.New("must be an absolute URL without user info, query or fragment")
	}
	if u.Scheme != "https" && !(allowHTTP && u.Scheme == "http") {
		return errors.New("must be https")
	}
	return nil
}

// Resource is the canonical resource URL: the audience a token must carry
// and the metadata's "resource".
func (v *Verifier) Resource() string { return v.resource }

// Issuer is the configured issuer identifier.
func (v *Verifier) Issuer() string { return v.cfg.Issuer }

// RequiredScope is the scope /mcp itself requires.
func (v *Verifier) RequiredScope() string { return v.cfg.RequiredScope }

// claims are the registered claims Verify reads by name.
type claims struct {
	jwt.Claims
	ClientID string `json:"client_id"`
	AZP      string `json:"azp"`
}

// Verify verifies an access token presented to /mcp at now and returns the
// credential it stands for: ID and KeyHash from (iss, tenant, sub, client,
// class) (CredentialID), Tenant
// and Owner from the configured claims, Scopes mapped through the scope map,
// Class standard or client_safe, no allow-list, CreatedAt its "iat". Its
// error wraps ErrInvalidToken, ErrInsufficientScope or ErrUnavailable, and
// never quotes the token. Only the key set is ever fetched (see the package
// doc); ctx bounds that fetch's wait, not the fetch itself.
func (v *Verifier) Verify(ctx context.Context, token string, now time.Time) (*auth.Credential, error) {
	std, extra, err := v.verifySigned(ctx, token, now, accessTokenTypes)
	if err != nil {
		return nil, err
	}
	if err := std.ValidateWithLeeway(jwt.Expected{Issuer: v.cfg.Issuer, AnyAudience: jwt.Audience{v.resource}, Time: now}, Leeway); err != nil {
		return nil, invalid("%v", err)
	}
	if std.Expiry == nil {
		return nil, invalid("no exp")
	}
	if std.Subject == "" {
		return nil, invalid("no sub")
	}
	cred, err := v.principal(std, extra)
	if err != nil {
		return nil, err
	}
	granted, ok := tokenScopes(extra)
	if !ok {
		return nil, invalid("scope or scp is malformed")
	}
	if !slices.Contains(granted, v.cfg.RequiredScope) {
		return nil, fmt.Errorf("verify token: %w: %s is required", ErrInsufficientScope, v.cfg.RequiredScope)
	}
	// A client-safe token never gains write from its scopes.
	cred.Scopes = auth.ClassScopes(cred.Class, mapScopes(v.cfg.ScopeMap, granted))
	return cred, nil
}

// The "typ" header values each kind of token may carry (absent is
// accepted too): an access token JWT or at+jwt (RFC 9068 §2.1), an ID
// token only JWT, so that neither can pass for the other (RFC 9068 §4;
// RFC 8725 §3.11).
var (
	accessTokenTypes = []string{"jwt", "at+jwt", "application/at+jwt"}
	idTokenTypes     = []string{"jwt"}
)

// verifySigned runs the checks every token of the issuer gets before its
// own claims are read: the length bound, the compact JWS shape with an
// asymmetric algorithm and exactly one signature, no "crit" or "b64"
// header, a "typ" among types, "iss" equal to the configured issuer before
// any key is looked up, and the signature by the key its "kid" names in the
// issuer's key set. It returns the registered claims (not yet validated
// against a time or an audience) and every claim by name.
func (v *Verifier) verifySigned(ctx context.Context, token string, now time.Time, types []string) (claims, map[string]any, error) {
	if len(token) > MaxTokenBytes {
		return claims{}, nil, invalid("longer than %d bytes", MaxTokenBytes)
	}
	tok, err := jwt.ParseSigned(token, algorithms)
	if err != nil {
		return claims{}, nil, invalid("not a compact JWS with an asymmetric algorithm")
	}
	if len(tok.Headers) != 1 {
		return claims{}, nil, invalid("not exactly one signature")
	}
	h := tok.Headers[0]
	if _, ok := h.ExtraHeaders["crit"]; ok {
		return claims{}, nil, invalid("critical header extensions are not understood")
	}
	if _, ok := h.ExtraHeaders["b64"]; ok {
		// RFC 7797 §7: an unencoded payload is no JWT.
		return claims{}, nil, invalid("b64 is not allowed in a JWT")
	}
	if typ, ok := h.ExtraHeaders[jose.HeaderType]; ok {
		s, _ := typ.(string)
		if !slices.Contains(types, strings.ToLower(s)) {
			return claims{}, nil, invalid("typ is not one this kind of token may carry")
		}
	}
	// A token of another issuer is refused before any key is looked up, so
	// foreign tokens cannot drive JWKS fetches; the issuer is checked again,
	// signed, by the caller.
	var peek struct {
		Issuer string `json:"iss"`
	}
	if err := tok.UnsafeClaimsWithoutVerification(&peek); err != nil || peek.Issuer != v.cfg.Issuer {
		return claims{}, nil, invalid("not issued by the configured issuer")
	}
	key, err := v.keys.lookup(ctx, h.KeyID, jose.SignatureAlgorithm(h.Algorithm), now)
	if err != nil {
		return claims{}, nil, err
	}
	var std claims
	extra := map[string]any{}
	if err := tok.Claims(key, &std, &extra); err != nil {
		return claims{}, nil, invalid("signature or claims do not verify")
	}
	return std, extra, nil
}

// principal resolves the credential a verified token stands for, scopes
// aside.
func (v *Verifier) principal(std claims, extra map[string]any) (*auth.Credential, error) {
	tenant, owner, err := v.tenantAndUser(extra)
	if err != nil {
		return nil, err
	}
	class := auth.ClassStandard
	if raw, ok := extra[v.cfg.ClassClaim]; ok {
		switch raw {
		case string(auth.ClassClientSafe):
			class = auth.ClassClientSafe
		case string(auth.ClassStandard):
		default:
			return nil, invalid("the class claim is neither standard nor client_safe")
		}
	}
	client := std.ClientID
	if client == "" {
		client = std.AZP
	}
	id, hash := CredentialID(std.Issuer, tenant, std.Subject, client, class)
	cred := &auth.Credential{ID: id, Tenant: tenant, Owner: owner, Class: class, KeyHash: hash, Label: "oauth",
		OAuth: &auth.OAuthClaims{Issuer: std.Issuer, Subject: std.Subject, ClientID: client, ExpiresAt: std.Expiry.Time().UTC()}}
	if client != "" {
		cred.Label += " " + client
	}
	if std.IssuedAt != nil {
		cred.CreatedAt = std.IssuedAt.Time().UTC()
	}
	return cred, nil
}

// tenantAndUser resolves the principal a verified token names: the tenant
// from TenantClaim (or the fixed Config.Tenant, which a claim may only
// repeat) and the user from UserClaim, each a well-formed id.
func (v *Verifier) tenantAndUser(extra map[string]any) (tenant, user string, err error) {
	tenant = v.cfg.Tenant
	if raw, ok := extra[v.cfg.TenantClaim]; ok {
		s, isString := raw.(string)
		if !isString || !validID(s) {
			return "", "", invalid("the tenant claim is not a well-formed id")
		}
		if tenant != "" && s != tenant {
			return "", "", invalid("the tenant claim names a tenant this deployment does not serve")
		}
		tenant = s
	}
	if tenant == "" {
		return "", "", invalid("no tenant claim")
	}
	user, _ = extra[v.cfg.UserClaim].(string)
	if !validID(user) {
		return "", "", invalid("the user claim is missing or not a well-formed id")
	}
	return tenant, user, nil
}

// CredentialID returns the credential id and the rate-bucket digest of a
// token's (issuer, tenant, subject, client) and class (docs/decisions.md
// "Identity and binding"): id is IDPrefix + 22 characters of the unpadded
// base64url SHA-256 of the JSON array [iss, tenant, sub, client, class],
// keyHash the lowercase hex of the same digest. tenant is the resolved
// tenant (the claim's, or Config.Tenant), client "" when the token names
// none.
func CredentialID(iss, tenant, sub, client string, class auth.Class) (id, keyHash string) {
	b, _ := json.Marshal([]string{iss, tenant, sub, client, string(class)}) // strings only: cannot fail
	sum := sha256.Sum256(b)
	return IDPrefix + base64.RawURLEncoding.EncodeToString(sum[:])[:22], hex.EncodeToString(sum[:])
}

// validID reports whether a tenant or user id taken from a token (or
// configured) is one Custody can key rows by: the record's own rule.
func validID(s string) bool { return keyspace.ValidID(s) }

func invalid(format string, args ...any) error {
	return &refusal{op: "verify token", kind: ErrInvalidToken, detail: fmt.Sprintf(format, args...)}
}

// refusal is a token refused: what was verified, the kind of refusal
// (ErrInvalidToken, ErrInvalidIDToken) and what was wrong.
type refusal struct {
	op     string
	kind   error
	detail string
}

func (r *refusal) Error() string { return r.op + ": " + r.kind.Error() + ": " + r.detail }

// Unwrap returns the kind.
func (r *refusal) Unwrap() error { return r.kind }
