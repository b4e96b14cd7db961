package approvals

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
)

// Lifetimes and sizes (docs/decisions.md "Time and size constants").
const (
	// DefaultLinkTTL is a sign-in link's life unless asked otherwise;
	// MinLinkTTL and MaxLinkTTL bound what may be asked.
	DefaultLinkTTL = 15 * time.Minute
	MinLinkTTL     = time.Minute
	MaxLinkTTL     = 24 * time.Hour
	// SessionTTL is a cookie session's life from sign-in, absolute.
	SessionTTL = 8 * time.Hour
	// OIDCStateTTL is how long an OIDC sign-in may take from the redirect
	// to the identity provider to the callback.
	OIDCStateTTL = 10 * time.Minute
	// DefaultAuditRetention is how long the sign-in and sign-out audit rows
	// are kept unless configured: the gate's seven years.
	DefaultAuditRetention = 7 * 365 * 24 * time.Hour
	// maxFormBytes bounds a form body.
	maxFormBytes = 64 << 10
)

// The page's paths, below the public base URL.
const (
	PathPrefix   = "/approvals"
	pathInbox    = PathPrefix
	pathStyle    = PathPrefix + "/style.css"
	pathSignIn   = PathPrefix + "/signin"
	pathSignOut  = PathPrefix + "/signout"
	pathOIDC     = PathPrefix + "/signin/oidc"
	pathCallback = PathPrefix + "/signin/oidc/callback"
	pathReview   = PathPrefix + "/review"
	// pathProposal starts a proposal's own pages:
	// /approvals/p/<id> (GET), …/confirm, …/decide, …/decline (POST).
	pathProposal = PathPrefix + "/p/"
	// pathHandoff (handoff.go): /approvals/h/<elicitation id> (GET).
)

// IsPath reports whether the request path belongs to the approval page:
// /approvals itself or anything below it.
func IsPath(p string) bool { return p == PathPrefix || strings.HasPrefix(p, PathPrefix+"/") }

// SecurityHeaders are sent with every answer of the page (docs/decisions.md
// "Approvers"): no script, style only from the page's own origin, forms
// only to it, never framed, no base element, no referrer (a sign-in link's
// token is in its URL), never cached, no content sniffing.
var SecurityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
	"Referrer-Policy":         "no-referrer",
	"Cache-Control":           "no-store",
	"X-Content-Type-Options":  "nosniff",
}

// Config configures the page. Zero values take the documented defaults.
type Config struct {
	// Store holds the sign-in, session and OIDC rows. Required.
	Store store.Store
	// Repo reads principals; nil means records.NewRepo(Store).
	Repo *records.Repo
	// PublicBaseURL is the origin (with the API stage's path, if any) that
	// browsers reach the page at; every link, form action and redirect is
	// built from it, and POSTs must come from its origin. Required: https,
	// or http on a loopback host (see the package doc on cookies).
	PublicBaseURL string
	// AllowHTTP admits any http base (emulator runs, whose sample events
	// use a made-up host); without it only loopback hosts may be http.
	AllowHTTP bool
	// Inbox lists the proposals on the inbox; nil is the page's own, over
	// the proposal rows of Store (the review page; storeInbox).
	Inbox Inbox
	// Actions is the live action registry decisions and eligibility are
	// derived from; nil means proposals.Default() (the registry
	// propose_action files against).
	Actions *proposals.Registry
	// FrozenTenants are the tenants the kill switch has turned off
	// (tools.KillSwitch's, from the same configuration): their proposals
	// are decided KILL_SWITCH, as is any of a tenant whose row says Frozen.
	FrozenTenants map[string]bool
	// Hooks add writes to every transaction that ends a proposal (issue
	// 15's hand-off binding). nil: none.
	Hooks []DecisionHook
	// OIDC enables sign-in at the firm's identity provider; nil offers
	// sign-in links only.
	OIDC *OIDC
	// AuditRetention is the sign-in and sign-out audit rows' TTL; 0 means
	// DefaultAuditRetention.
	AuditRetention time.Duration
	Logger         *slog.Logger
	Now            func() time.Time
}

// Page is the approval page, an http.Handler for the paths IsPath accepts.
// It is safe for concurrent use and holds nothing between requests.
type Page struct {
	st        store.Store
	repo      *records.Repo
	base      string // without a trailing slash
	origin    string // scheme://host[:port] of base, as browsers serialize it
	inbox     Inbox
	actions   *proposals.Registry
	frozen    map[string]bool
	hooks     []DecisionHook
	oidc      *oidcClient
	retention time.Duration
	log       *slog.Logger
	now       func() time.Time
}

// New validates cfg and returns the page.
func New(cfg Config) (*Page, error) {
	if cfg.Store == nil {
		return nil, errors.New("approvals: a store is required")
	}
	base, origin, err := checkBase(cfg.PublicBaseURL, cfg.AllowHTTP)
	if err != nil {
		return nil, fmt.Errorf("approvals: public base URL %w", err)
	}
	p := &Page{st: cfg.Store, repo: cfg.Repo, base: base, origin: origin, inbox: cfg.Inbox, actions: cfg.Actions,
		frozen: cfg.FrozenTenants, hooks: cfg.Hooks, retention: cfg.AuditRetention, log: cfg.Logger, now: cfg.Now}
	if p.actions == nil {
		p.actions = proposals.Default()
	}
	if p.inbox == nil {
		p.inbox = &storeInbox{p: p}
	}
	if p.repo == nil {
		p.repo = records.NewRepo(cfg.Store)
	}
	if p.retention <= 0 {
		p.retention = DefaultAuditRetention
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.now == nil {
		p.now = time.Now
	}
	if cfg.OIDC != nil {
		if p.oidc, err = newOIDCClient(*cfg.OIDC, base+pathCallback); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// checkBase validates the public base URL and returns it without a
// trailing slash, with its origin.
func checkBase(s string, allowHTTP bool) (base, origin string, err error) {
	u, perr := url.Parse(s)
	if s == "" || perr != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", "", errors.New("must be an absolute URL without user info, query or fragment")
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && (allowHTTP || loopback(u.Hostname())):
	default:
		return "", "", errors.New("must be https (http only on a loopback host)")
	}
	// Browsers leave a scheme's default port out of an Origin.
	host := u.Host
	if port := u.Port(); (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		host = strings.TrimSuffix(host, ":"+port)
	}
	origin = u.Scheme + "://" + host
	return origin + strings.TrimSuffix(u.EscapedPath(), "/"), origin, nil
}

// loopback reports whether a URL's host is a loopback name or address.
func loopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1" || strings.HasPrefix(host, "127.")
}

// BaseURL is the public base URL the page builds its links from, without a
// trailing slash.
func (p *Page) BaseURL() string { return p.base }

// ServeHTTP routes the page's paths. Every answer carries SecurityHeaders.
// Authorization is never read.
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k, v := range SecurityHeaders {
		w.Header().Set(k, v)
	}
	route := map[string]map[string]http.HandlerFunc{
		pathInbox:       {http.MethodGet: p.serveInbox},
		pathInbox + "/": {http.MethodGet: p.serveInbox},
		pathStyle:       {http.MethodGet: serveStyle},
		pathSignIn:      {http.MethodGet: p.serveSignIn, http.MethodPost: p.postSignIn},
		pathSignOut:     {http.MethodPost: p.postSignOut},
		pathReview:      {http.MethodPost: p.postReview},
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, pathProposal); ok {
		if id, v, ok := proposalRoute(rest); ok {
			route[r.URL.Path] = p.proposalRoutes(id, v)
		}
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, pathHandoff); ok {
		if id, ok := handoffRoute(rest); ok {
			route[r.URL.Path] = map[string]http.HandlerFunc{http.MethodGet: func(w http.ResponseWriter, r *http.Request) { p.serveHandoff(w, r, id) }}
		}
	}
	if p.oidc != nil {
		route[pathOIDC] = map[string]http.HandlerFunc{http.MethodGet: p.startOIDC}
		route[pathCallback] = map[string]http.HandlerFunc{http.MethodGet: p.oidcCallback}
	}
	methods, ok := route[r.URL.Path]
	if !ok {
		p.message(w, http.StatusNotFound, "Not found", "There is no such page of the approval page.")
		return
	}
	h, ok := methods[r.Method]
	if !ok && r.Method == http.MethodHead {
		h, ok = methods[http.MethodGet]
	}
	if !ok {
		allow := make([]string, 0, len(methods))
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			if methods[m] != nil {
				allow = append(allow, m)
			}
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		p.message(w, http.StatusMethodNotAllowed, "Not allowed", "This page does not answer that method.")
		return
	}
	h(w, r)
}

// url returns the absolute URL of a path below the page's base.
func (p *Page) url(path string) string { return p.base + path }

// redirect answers 303 See Other to a path below the base.
func (p *Page) redirect(w http.ResponseWriter, path string) {
	w.Header().Set("Location", p.url(path))
	w.WriteHeader(http.StatusSeeOther)
}

// toSignIn answers a request without a session: 303 to the sign-in page,
// carrying the requested page's path (below the base) as next, and nothing
// else (docs/decisions.md "Answers on the wire").
func (p *Page) toSignIn(w http.ResponseWriter, r *http.Request) {
	target := pathSignIn
	if next := safeNext(r.URL.Path); next != pathInbox {
		target += "?" + url.Values{"next": {next}}.Encode()
	}
	p.redirect(w, target)
}

// safeNext returns next when it is a clean path of the approval page (so a
// redirect to base+next stays on the page), else the inbox.
func safeNext(next string) string {
	if len(next) > 512 || !IsPath(next) || strings.ContainsAny(next, "\\?#%\x00\r\n\t ") || strings.Contains(next, "//") {
		return pathInbox
	}
	for _, seg := range strings.Split(next, "/") {
		if seg == "." || seg == ".." {
			return pathInbox
		}
	}
	return next
}

// render writes a page with the status. A template that fails is a bug;
// it is logged and answered 500 without its detail.
func (p *Page) render(w http.ResponseWriter, status int, name string, v *view) {
	v.Base = p.base
	if v.Title == "" {
		v.Title = "Custody approvals"
	}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, v); err != nil {
		p.log.Error("approvals: render a page", "page", name, "err", err)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("The page could not be shown.\n"))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// message renders a page that only says something.
func (p *Page) message(w http.ResponseWriter, status int, heading, text string) {
	p.render(w, status, "message.html", &view{Heading: heading, Text: text})
}

// unavailable answers a store or dependency failure: 503, no detail.
func (p *Page) unavailable(w http.ResponseWriter, what string, err error) {
	p.log.Warn("approvals: "+what, "err", err)
	p.message(w, http.StatusServiceUnavailable, "Try again shortly",
		"The record could not be reached just now. Nothing was changed; reload the page to try again.")
}

// forbidden answers a refused form: 403, nothing written.
func (p *Page) forbidden(w http.ResponseWriter) {
	p.message(w, http.StatusForbidden, "This form was refused",
		"The form did not come from this page in your signed-in session, so nothing was done. Go back to the approval page, reload it and try again.")
}
