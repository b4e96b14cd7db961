package approvals

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/custodymcp/custody/shared/auth/oauth"
	"github.com/custodymcp/custody/shared/store"
)

// OIDCClient is the approval page's registration at the firm's identity
// provider (the OAuth issuer /mcp already trusts): what configuration
// gives (OIDCFromEnv).
type OIDCClient struct {
	// ClientID is the client's id: the audience of its ID tokens.
	ClientID string
	// ClientSecret authenticates a confidential client at the token
	// endpoint (client_secret_basic, RFC 6749 §2.3.1); on AWS it comes from
	// Secrets Manager. Empty: a public client, bound by PKCE alone.
	ClientSecret string
	// AuthorizationEndpoint and TokenEndpoint are the provider's (its
	// metadata's authorization_endpoint and token_endpoint), configured,
	// not discovered, like the key set (shared/auth/oauth).
	AuthorizationEndpoint, TokenEndpoint string
	// Scopes are requested besides "openid".
	Scopes []string
}

// OIDC enables sign-in at the firm's identity provider.
type OIDC struct {
	OIDCClient
	// IDTokens verifies the ID tokens issued to ClientID (the /mcp
	// verifier's, sharing its key set and principal mapping). Required.
	IDTokens *oauth.IDTokenVerifier
	// HTTPClient calls the token endpoint; nil means one that follows no
	// redirects. ExchangeTimeout bounds the call; 0 means 10 s.
	HTTPClient      *http.Client
	ExchangeTimeout time.Duration
}

// OIDCCookieName binds an OIDC sign-in to the browser that started it: the
// callback is honoured only with the cookie whose SHA-256 the state row
// holds, so a code and state an attacker obtained for their own account
// cannot sign a victim's browser in as the attacker (login CSRF, RFC 9700
// §4.7.1). It lives as long as the state.
const OIDCCookieName = "__Host-custody-oidc"

type oidcClient struct {
	cfg      oauth2.Config
	http     *http.Client
	timeout  time.Duration
	idTokens *oauth.IDTokenVerifier
}

func newOIDCClient(o OIDC, redirect string) (*oidcClient, error) {
	var problems []string
	if o.ClientID == "" {
		problems = append(problems, "a client id is required")
	}
	if o.IDTokens == nil {
		problems = append(problems, "an ID token verifier is required")
	} else if o.IDTokens.ClientID() != o.ClientID {
		problems = append(problems, "the ID token verifier is for another client")
	}
	for _, e := range []string{o.AuthorizationEndpoint, o.TokenEndpoint} {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" {
			problems = append(problems, "the authorization and token endpoints must be absolute http(s) URLs")
			break
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("approvals: OIDC: %s", strings.Join(problems, "; "))
	}
	style := oauth2.AuthStyleInParams // a public client sends its id only
	if o.ClientSecret != "" {
		style = oauth2.AuthStyleInHeader
	}
	scopes := []string{"openid"}
	for _, s := range o.Scopes {
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	c := &oidcClient{
		cfg: oauth2.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret, RedirectURL: redirect, Scopes: scopes,
			Endpoint: oauth2.Endpoint{AuthURL: o.AuthorizationEndpoint, TokenURL: o.TokenEndpoint, AuthStyle: style}},
		http: o.HTTPClient, timeout: o.ExchangeTimeout, idTokens: o.IDTokens,
	}
	if c.http == nil {
		c.http = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if c.timeout <= 0 {
		c.timeout = 10 * time.Second
	}
	return c, nil
}

// Attributes of the OIDC state row (besides attrExpires).
const (
	attrVerifier = "verifier"
	attrNonce    = "nonce"
	attrNext     = "next"
	attrBinding  = "binding"
)

// startOIDC is GET /approvals/signin/oidc?next=…: a link, not a form,
// because the policy's form-action 'self' would stop a form's redirect to
// the provider. It writes the flow's state row (10 min: the PKCE verifier,
// the nonce, next and the digest of the browser binding cookie), sets that
// cookie and sends the browser to the authorization endpoint with the
// state, the nonce and the S256 challenge. Fetching it signs no one in.
func (p *Page) startOIDC(w http.ResponseWriter, r *http.Request) {
	now := p.now()
	state, binding := newSecret(statePrefix, oidcBytes), newSecret(bindingPrefix, oidcBytes)
	verifier, nonce := oauth2.GenerateVerifier(), newSecret("", oidcBytes)
	expires := now.Add(OIDCStateTTL)
	k := oidcKey(state)
	err := p.st.Put(r.Context(), store.Item{PK: k.PK, SK: k.SK, Version: 1, ExpiresAt: ceilUnix(expires), Attrs: map[string]any{
		attrVerifier: verifier, attrNonce: nonce, attrNext: safeNext(r.URL.Query().Get("next")),
		attrBinding: digest(binding), attrExpires: expires.UnixMilli(),
	}}, store.NotExists())
	if err != nil {
		p.unavailable(w, "start an OIDC sign-in", err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: OIDCCookieName, Value: binding, Path: "/", HttpOnly: true, Secure: true,
		SameSite: http.SameSiteLaxMode, MaxAge: int(OIDCStateTTL / time.Second)})
	w.Header().Set("Location", p.oidc.cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("nonce", nonce)))
	w.WriteHeader(http.StatusSeeOther)
}

// providerError matches an RFC 6749 §4.1.2.1 error code worth repeating.
var providerError = regexp.MustCompile(`^[a-z_]{1,64}$`)

// oidcCallback is GET /approvals/signin/oidc/callback?code&state: the
// state row is read and checked against the browser's binding cookie, then
// spent (a conditional delete, so a replayed callback finds nothing), the
// code exchanged with the verifier, the ID token verified (issuer, client,
// expiry, nonce, signature) and its principal looked up; only then is the
// session made, its audit row with it.
func (p *Page) oidcCallback(w http.ResponseWriter, r *http.Request) {
	ctx, q := r.Context(), r.URL.Query()
	notCompleted := func(status int, text string) {
		http.SetCookie(w, clearedCookie(OIDCCookieName))
		p.render(w, status, "message.html", &view{Title: "Sign in · Custody approvals",
			Heading: "The sign-in was not completed", Text: text})
	}
	state := q.Get("state")
	cookie, cerr := r.Cookie(OIDCCookieName)
	if !wellFormed(state, statePrefix, oidcBytes) || cerr != nil || !wellFormed(cookie.Value, bindingPrefix, oidcBytes) {
		notCompleted(http.StatusForbidden, "This sign-in was not started in this browser, or it took too long. Start again from the sign-in page.")
		return
	}
	it, err := p.st.Get(ctx, oidcKey(state))
	switch {
	case errors.Is(err, store.ErrNotFound):
		notCompleted(http.StatusForbidden, "This sign-in was not started in this browser, or it took too long. Start again from the sign-in page.")
		return
	case err != nil:
		p.unavailable(w, "read an OIDC sign-in", err)
		return
	}
	if subtle.ConstantTimeCompare([]byte(it.String(attrBinding)), []byte(digest(cookie.Value))) != 1 ||
		!p.now().Before(time.UnixMilli(it.Int(attrExpires))) {
		notCompleted(http.StatusForbidden, "This sign-in was not started in this browser, or it took too long. Start again from the sign-in page.")
		return
	}
	switch err := p.st.Delete(ctx, it.Key(), store.VersionEquals(it.Version)); {
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound):
		notCompleted(http.StatusForbidden, "This sign-in was completed already. Start again from the sign-in page.")
		return
	case err != nil:
		p.unavailable(w, "spend an OIDC sign-in", err)
		return
	}
	if e := q.Get("error"); e != "" {
		text := "The firm's sign-in service did not sign you in."
		if providerError.MatchString(e) {
			text += " It answered " + e + "."
		}
		notCompleted(http.StatusForbidden, text)
		return
	}
	claims, err := p.exchange(ctx, q.Get("code"), it.String(attrVerifier), it.String(attrNonce))
	switch {
	case errors.Is(err, oauth.ErrInvalidIDToken):
		p.log.Warn("approvals: an ID token was refused", "err", err)
		notCompleted(http.StatusForbidden, "The firm's sign-in service answered with an identity that could not be verified.")
		return
	case err != nil:
		p.log.Warn("approvals: the OIDC code exchange failed", "err", err)
		notCompleted(http.StatusBadGateway, "The firm's sign-in service could not be reached or refused the sign-in. Start again from the sign-in page.")
		return
	}
	who, err := p.repo.Principal(ctx, claims.Tenant, claims.User)
	switch {
	case errors.Is(err, store.ErrNotFound):
		notCompleted(http.StatusForbidden, "Your account at the firm is not one of Custody's principals, so it cannot approve here.")
		return
	case err != nil:
		p.unavailable(w, "read the principal of an OIDC sign-in", err)
		return
	}
	if err := p.startSession(ctx, w, claims.Tenant, who.ID, MethodOIDC); err != nil {
		p.unavailable(w, "start an OIDC session", err)
		return
	}
	http.SetCookie(w, clearedCookie(OIDCCookieName))
	p.redirect(w, safeNext(it.String(attrNext)))
}

// exchange redeems the code at the token endpoint (with the PKCE verifier
// and, for a confidential client, its secret) and verifies the ID token it
// answers against nonce.
func (p *Page) exchange(ctx context.Context, code, verifier, nonce string) (oauth.IDClaims, error) {
	if code == "" {
		return oauth.IDClaims{}, errors.New("the callback carries no code")
	}
	xctx, cancel := context.WithTimeout(context.WithValue(ctx, oauth2.HTTPClient, p.oidc.http), p.oidc.timeout)
	defer cancel()
	tok, err := p.oidc.cfg.Exchange(xctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return oauth.IDClaims{}, fmt.Errorf("exchange the code: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return oauth.IDClaims{}, errors.New("the token endpoint answered no id_token")
	}
	return p.oidc.idTokens.Verify(ctx, raw, nonce, p.now())
}
