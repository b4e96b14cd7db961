package approvals

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"time"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
)

// CookieName is the session cookie. The __Host- prefix makes browsers keep
// it only when it is Secure, has Path=/ and no Domain (RFC 6265bis §4.1.3.2),
// so no other host or path can set or shadow it.
const CookieName = "__Host-custody-approvals"

// How a session was signed in (the row's and the audit row's "method").
const (
	MethodLink = "link"
	MethodOIDC = "oidc"
)

// Session is a signed-in person's cookie session, as its row holds it.
type Session struct {
	// ID names the session in logs and audit rows: "as_" and the first 16
	// hex digits of its row's digest (not the cookie, which never leaves
	// the browser and the request).
	ID        string
	Tenant    string
	Principal string
	// Method is MethodLink or MethodOIDC.
	Method    string
	CreatedAt time.Time
	ExpiresAt time.Time

	// key is the cookie value, the session key the CSRF tokens are keyed by.
	key string
}

// Who is the signed-in principal.
func (s *Session) Who() Principal { return Principal{Tenant: s.Tenant, ID: s.Principal} }

// Attributes of the session row.
const (
	attrTenant    = "tenant"
	attrPrincipal = "principal"
	attrMethod    = "method"
	attrCreated   = "created_at"
	attrExpires   = "expires_ms" // the decisive expiry, in Unix milliseconds
)

// newSession makes a session for the principal at now: its cookie value
// and the put of its row (conditioned on no row under the key).
func newSession(tenant, principal, method string, now time.Time) (*Session, store.Op) {
	value := newSecret(SessionPrefix, sessionBytes)
	s := &Session{Tenant: tenant, Principal: principal, Method: method, CreatedAt: now.UTC(),
		ExpiresAt: now.Add(SessionTTL).UTC(), key: value}
	k := sessionKey(value)
	s.ID = sessionID(k)
	item := store.Item{PK: k.PK, SK: k.SK, Version: 1, ExpiresAt: ceilUnix(s.ExpiresAt), Attrs: map[string]any{
		attrTenant: tenant, attrPrincipal: principal, attrMethod: method,
		attrCreated: s.CreatedAt.Format(time.RFC3339Nano), attrExpires: s.ExpiresAt.UnixMilli(),
	}}
	return s, store.PutOp(item, store.NotExists())
}

// sessionID is the public name of the session under key k.
func sessionID(k store.Key) string { return "as_" + k.PK[len("APPSESS#"):][:16] }

// ceilUnix is t in whole Unix seconds, rounded up: a row's TTL never ends
// before its decisive expiry.
func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

// errNoSession: the request has no live session (no cookie, a malformed
// one, an unknown, expired or signed-out one, or its principal is gone).
var errNoSession = errors.New("approvals: no session")

// session returns the request's live session: one strongly consistent read
// of its row, and one of its principal, who must still be in the tenant.
// It returns errNoSession when there is none, and a store error (wrapped)
// when the row or the principal could not be read. Authorization is never
// looked at.
func (p *Page) session(ctx context.Context, r *http.Request) (*Session, records.Principal, error) {
	c, err := r.Cookie(CookieName)
	if err != nil || !wellFormed(c.Value, SessionPrefix, sessionBytes) {
		return nil, records.Principal{}, errNoSession
	}
	k := sessionKey(c.Value)
	it, err := p.st.Get(ctx, k)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, records.Principal{}, errNoSession
	case err != nil:
		return nil, records.Principal{}, fmt.Errorf("read the approval session: %w", err)
	}
	s := &Session{ID: sessionID(k), Tenant: it.String(attrTenant), Principal: it.String(attrPrincipal),
		Method: it.String(attrMethod), ExpiresAt: time.UnixMilli(it.Int(attrExpires)).UTC(), key: c.Value}
	s.CreatedAt, _ = time.Parse(time.RFC3339Nano, it.String(attrCreated))
	if !p.now().Before(s.ExpiresAt) || s.Tenant == "" || s.Principal == "" {
		return nil, records.Principal{}, errNoSession
	}
	who, err := p.repo.Principal(ctx, s.Tenant, s.Principal)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, records.Principal{}, errNoSession
	case err != nil:
		return nil, records.Principal{}, fmt.Errorf("read the signed-in principal: %w", err)
	}
	return s, who, nil
}

// sessionCookie is the cookie that carries s (docs/decisions.md
// "Approvers"): HttpOnly, Secure, SameSite=Lax, Path=/, no Domain, and
// Max-Age up to the session's absolute end.
func sessionCookie(s *Session, now time.Time) *http.Cookie {
	return &http.Cookie{Name: CookieName, Value: s.key, Path: "/", HttpOnly: true, Secure: true,
		SameSite: http.SameSiteLaxMode, MaxAge: max(1, int(s.ExpiresAt.Sub(now)/time.Second))}
}

// clearedCookie removes the named cookie from the browser (same
// attributes, Max-Age=0).
func clearedCookie(name string) *http.Cookie {
	return &http.Cookie{Name: name, Value: "", Path: "/", HttpOnly: true, Secure: true,
		SameSite: http.SameSiteLaxMode, MaxAge: -1}
}

// auditRecord is the audit row of a sign-in or sign-out: who, which
// session, how, at now.
func (p *Page) auditRecord(s *Session, method, outcome string, now time.Time) store.Op {
	rec := audit.Record{RequestID: "apr_" + rand.Text(), At: now.UTC(), Tenant: s.Tenant, Principal: s.Principal,
		CredentialID: s.ID, Method: method, Tool: s.Method, Outcome: outcome, ExpiresAt: now.Add(p.retention)}
	return store.PutOp(rec.Item(), store.NotExists())
}

// The audit methods of the page's own events.
const (
	auditSignIn  = "approvals/signin"
	auditSignOut = "approvals/signout"
)

// startSession writes the session row and its audit row in one
// transaction with ops (the spend of what signed the person in), and sets
// the cookie on w. The error is the transaction's.
func (p *Page) startSession(ctx context.Context, w http.ResponseWriter, tenant, principal, method string, ops ...store.Op) error {
	now := p.now()
	s, put := newSession(tenant, principal, method, now)
	ops = append(ops, put, p.auditRecord(s, auditSignIn, audit.OutcomeOK, now))
	if err := p.st.Transact(ctx, ops); err != nil {
		return err
	}
	http.SetCookie(w, sessionCookie(s, now))
	return nil
}

// Form names: what a CSRF token is minted for.
const (
	FormSignOut = "signout"
	// FormReview is the review page's selection (POST /approvals/review).
	FormReview = "review"
	// FormConfirm asks for the second confirmation of one proposal.
	FormConfirm = "confirm"
	// FormDecide approves one proposal (with its nonce when it needs one).
	FormDecide = "decide"
	// FormDecline declines (or, as its requester, withdraws) one proposal.
	FormDecline = "decline"
)

// csrfToken is HMAC-SHA256(the session key, the form's name), base64url
// without padding: a token of one session's form is worthless in another
// session and for another form (docs/decisions.md "Approvers").
func csrfToken(sessionKey, form string) string {
	m := hmac.New(sha256.New, []byte(sessionKey))
	m.Write([]byte("custody approvals csrf\x00" + form))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CSRF returns the token the session's form must carry.
func (s *Session) CSRF(form string) string { return csrfToken(s.key, form) }

// validCSRF reports whether the posted token is the session's for form.
func (s *Session) validCSRF(form, token string) bool {
	return hmac.Equal([]byte(token), []byte(s.CSRF(form)))
}

// sameOrigin reports whether a POST came from the page's own origin: its
// one Origin header is the public base's origin, or it is "null" — what a
// browser sends for a form on a page with Referrer-Policy: no-referrer —
// and the browser's Sec-Fetch-Site says same-origin (see the package doc).
// A request without Origin is refused: every browser this page serves
// sends one on a POST.
func (p *Page) sameOrigin(r *http.Request) bool {
	origins := r.Header.Values("Origin")
	if len(origins) != 1 {
		return false
	}
	switch origins[0] {
	case p.origin:
		return true
	case "null":
		site := r.Header.Values("Sec-Fetch-Site")
		return len(site) == 1 && site[0] == "same-origin"
	}
	return false
}

// readForm parses a POST's form body (at most maxFormBytes, the
// urlencoded type only). It reports false when the body is not such a form.
func readForm(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return false
	}
	return r.ParseForm() == nil
}

// sessionForm admits a POST of a session's form: the origin first (a
// foreign one is 403 whoever sends it), then the session (none: 303 to
// sign in), then the form's CSRF token (wrong, missing or another
// session's: 403). It answers the refusal itself and returns nil then.
func (p *Page) sessionForm(w http.ResponseWriter, r *http.Request, form string) (*Session, records.Principal) {
	if !p.sameOrigin(r) || !readForm(w, r) {
		p.forbidden(w)
		return nil, records.Principal{}
	}
	s, who, err := p.session(r.Context(), r)
	switch {
	case errors.Is(err, errNoSession):
		p.toSignIn(w, r)
		return nil, records.Principal{}
	case err != nil:
		p.unavailable(w, "read the session of a form", err)
		return nil, records.Principal{}
	}
	if !s.validCSRF(form, r.PostForm.Get("csrf")) {
		p.forbidden(w)
		return nil, records.Principal{}
	}
	return s, who
}

// postSignOut deletes the session row (with its audit row, in one
// transaction) and the cookie, then sends the browser to the sign-in page.
func (p *Page) postSignOut(w http.ResponseWriter, r *http.Request) {
	s, _ := p.sessionForm(w, r, FormSignOut)
	if s == nil {
		return
	}
	now := p.now()
	err := p.st.Transact(r.Context(), []store.Op{
		store.DeleteOp(sessionKey(s.key)),
		p.auditRecord(s, auditSignOut, audit.OutcomeOK, now),
	})
	if err != nil {
		p.unavailable(w, "sign out", err)
		return
	}
	http.SetCookie(w, clearedCookie(CookieName))
	p.redirect(w, pathSignIn)
}
