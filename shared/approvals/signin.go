package approvals

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
)

// Errors of MintLink.
var (
	// ErrLinkTTL: a life outside [MinLinkTTL, MaxLinkTTL].
	ErrLinkTTL = errors.New("approvals: a sign-in link lives from 1 minute to 24 hours")
	// ErrUnknownPrincipal: the tenant or the principal does not exist.
	ErrUnknownPrincipal = errors.New("approvals: no such principal in the tenant")
)

// LinkRequest asks for a sign-in link.
type LinkRequest struct {
	Tenant    string
	Principal string
	// TTL is the link's life; 0 means DefaultLinkTTL.
	TTL time.Duration
}

// Link is a minted sign-in link's secret and what it signs in as.
type Link struct {
	// Token is csl_ + 48 hex; shown once, stored only as its SHA-256.
	Token     string
	Tenant    string
	Principal string
	ExpiresAt time.Time
}

// URL is the link to open: base + /approvals/signin?t=<token>.
func (l Link) URL(base string) string { return LinkURL(base, l.Token) }

// LinkURL is the sign-in link of token under the public base URL.
func LinkURL(base, token string) string {
	for len(base) > 0 && base[len(base)-1] == '/' {
		base = base[:len(base)-1]
	}
	return base + pathSignIn + "?" + url.Values{"t": {token}}.Encode()
}

// Attributes of the sign-in link row (besides attrTenant, attrPrincipal,
// attrCreated and attrExpires).
const (
	attrUsed   = "used"
	attrUsedAt = "used_at"
)

// MintLink makes a one-time sign-in link for a principal of a tenant
// (docs/decisions.md "Approvers"): 24 random bytes, stored only as their
// SHA-256 with the principal and the expiry (now + TTL), unused. The
// principal must exist (ErrUnknownPrincipal); TTL must be within
// [MinLinkTTL, MaxLinkTTL] (ErrLinkTTL). Store failures are returned
// wrapped. custodyctl signin-link calls it, directly or through the dev
// server's admin endpoint.
func MintLink(ctx context.Context, st store.Store, req LinkRequest, now time.Time) (Link, error) {
	ttl := req.TTL
	if ttl == 0 {
		ttl = DefaultLinkTTL
	}
	if ttl < MinLinkTTL || ttl > MaxLinkTTL {
		return Link{}, ErrLinkTTL
	}
	if _, err := records.NewRepo(st).Principal(ctx, req.Tenant, req.Principal); errors.Is(err, store.ErrNotFound) {
		return Link{}, fmt.Errorf("mint a sign-in link for %s: %w", req.Principal, ErrUnknownPrincipal)
	} else if err != nil {
		return Link{}, fmt.Errorf("mint a sign-in link for %s: %w", req.Principal, err)
	}
	l := Link{Token: newSecret(LinkPrefix, linkBytes), Tenant: req.Tenant, Principal: req.Principal,
		ExpiresAt: now.Add(ttl).UTC()}
	k := signInKey(l.Token)
	err := st.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: 1, ExpiresAt: ceilUnix(l.ExpiresAt), Attrs: map[string]any{
		attrTenant: l.Tenant, attrPrincipal: l.Principal, attrCreated: now.UTC().Format(time.RFC3339Nano),
		attrExpires: l.ExpiresAt.UnixMilli(), attrUsed: false,
	}}, store.NotExists())
	if err != nil {
		return Link{}, fmt.Errorf("mint a sign-in link for %s: %w", req.Principal, err)
	}
	return l, nil
}

// errLinkInvalid: the link is unknown, used or expired, or its principal
// is gone. The page says one thing for all four.
var errLinkInvalid = errors.New("approvals: the sign-in link is not valid")

// usableLink reads a link's row and returns it with its principal when it
// can still sign in at now: errLinkInvalid when not, a store error
// (wrapped) when it could not be read.
func (p *Page) usableLink(ctx context.Context, token string) (store.Item, records.Principal, error) {
	if !wellFormed(token, LinkPrefix, linkBytes) {
		return store.Item{}, records.Principal{}, errLinkInvalid
	}
	it, err := p.st.Get(ctx, signInKey(token))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.Item{}, records.Principal{}, errLinkInvalid
	case err != nil:
		return store.Item{}, records.Principal{}, fmt.Errorf("read a sign-in link: %w", err)
	}
	if it.Bool(attrUsed) || !p.now().Before(time.UnixMilli(it.Int(attrExpires))) {
		return store.Item{}, records.Principal{}, errLinkInvalid
	}
	who, err := p.repo.Principal(ctx, it.String(attrTenant), it.String(attrPrincipal))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.Item{}, records.Principal{}, errLinkInvalid
	case err != nil:
		return store.Item{}, records.Principal{}, fmt.Errorf("read a sign-in link's principal: %w", err)
	}
	return it, who, nil
}

// serveSignIn is GET /approvals/signin. With a link's token (t) it shows
// whom the link signs in and the button that does it, and spends nothing:
// a scanner that fetches the link leaves it usable. Without one it offers
// the firm's sign-in (when configured) and says how to get a link.
func (p *Page) serveSignIn(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	next := safeNext(q.Get("next"))
	v := &view{Title: "Sign in · Custody approvals", Next: next, OIDC: p.oidc != nil}
	if v.OIDC {
		v.OIDCURL = p.url(pathOIDC + "?" + url.Values{"next": {next}}.Encode())
	}
	token := q.Get("t")
	if token == "" {
		p.render(w, http.StatusOK, "signin.html", v)
		return
	}
	_, who, err := p.usableLink(r.Context(), token)
	switch {
	case errors.Is(err, errLinkInvalid):
		v.LinkInvalid = true
		p.render(w, http.StatusForbidden, "signin.html", v)
		return
	case err != nil:
		p.unavailable(w, "read a sign-in link", err)
		return
	}
	v.Token, v.LinkPrincipal = token, principalView(who)
	p.render(w, http.StatusOK, "signin.html", v)
}

// postSignIn is the sign-in button: POST /approvals/signin {t, next} from
// the page's own origin. It spends the link with a conditional update
// (unused, at the version read) in the transaction that creates the
// session and its audit row, so of two presses of one link exactly one
// signs in; then it sets the cookie and sends the browser to next.
func (p *Page) postSignIn(w http.ResponseWriter, r *http.Request) {
	if !p.sameOrigin(r) || !readForm(w, r) {
		p.forbidden(w)
		return
	}
	token, next := r.PostForm.Get("t"), safeNext(r.PostForm.Get("next"))
	it, who, err := p.usableLink(r.Context(), token)
	switch {
	case errors.Is(err, errLinkInvalid):
		p.render(w, http.StatusForbidden, "signin.html", &view{Title: "Sign in · Custody approvals", LinkInvalid: true, Next: next})
		return
	case err != nil:
		p.unavailable(w, "read a sign-in link", err)
		return
	}
	spend := store.UpdateOp(it.Key(), store.Update{Set: map[string]any{attrUsed: true, attrUsedAt: p.now().UTC().Format(time.RFC3339Nano)}},
		store.VersionEquals(it.Version), store.AttrEquals(attrUsed, false))
	err = p.startSession(r.Context(), w, it.String(attrTenant), who.ID, MethodLink, spend)
	var canceled *store.TxCanceledError
	switch {
	case errors.As(err, &canceled):
		// Another press of the same link won.
		p.render(w, http.StatusForbidden, "signin.html", &view{Title: "Sign in · Custody approvals", LinkInvalid: true, Next: next})
		return
	case err != nil:
		p.unavailable(w, "spend a sign-in link", err)
		return
	}
	p.redirect(w, next)
}
