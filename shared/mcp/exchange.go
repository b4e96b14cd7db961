package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/store"
)

// exchange carries one HTTP request through the pipeline: who it is from,
// its audit rows, its calls and their writes, up to the one commit and the
// answer written after it.
type exchange struct {
	w        http.ResponseWriter
	r        *http.Request
	started  time.Time // by the server's clock
	arrived  time.Time // by the monotonic wall clock, for durations
	reqID    string
	adm      *Admission
	revision Revision
	audits   []*audit.Record
	count    int
	create   *Session
	del      *Session
	writes   []*writeGroup
	calls    []*call
	// goneStatus: the session DELETE ends was ended by another request
	// first (answered 404).
	goneStatus bool
}

// writeGroup is one Writes of the exchange, with what to do when one of
// its conditions fails.
type writeGroup struct {
	w Writes
	// resolve settles the owner's answer after a failed condition (failed
	// indexes w.Ops).
	resolve func(ctx context.Context, failed int)
	// committed settles the owner's answer after the commit succeeded
	// (Writes.OnCommit); nil when the answer stands as given.
	committed func(ctx context.Context)
	dropped   bool
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// newAudit starts the audit row of one message (or HTTP-level request) and
// adds it to the exchange.
func (s *Server) newAudit(x *exchange, method string) *audit.Record {
	c := x.adm.Credential
	rec := &audit.Record{
		RequestID: x.reqID, At: x.started, Tenant: c.Tenant, Principal: c.Owner,
		CredentialID: c.ID, Method: method, Revision: string(x.revision),
	}
	if x.adm.Session != nil {
		rec.SessionID = x.adm.Session.ID
	}
	if len(x.audits) > 0 {
		rec.RequestID += "." + strconv.Itoa(len(x.audits))
	}
	x.audits = append(x.audits, rec)
	return rec
}

// addWrites joins a Writes to the exchange's commit; resolve settles the
// answer when a condition of it fails.
func (x *exchange) addWrites(w Writes, resolve func(ctx context.Context, failed int)) *writeGroup {
	if len(w.Ops) == 0 && len(w.After) == 0 && w.OnCommit == nil {
		return nil
	}
	g := &writeGroup{w: w, resolve: resolve}
	x.writes = append(x.writes, g)
	return g
}

// maxCommitRounds bounds the writes of one request: the first, then one
// more per failed condition, rate reservation or session cap.
const maxCommitRounds = 8

// commit performs the exchange's write (docs/decisions.md "Pipeline
// choices"): the rate reservation, the audit rows, the session change and
// every write group, in one transaction. When a group's condition fails,
// the group's owner settles its answer (OnConflict) and the rest is written
// once more without that group; when the reservation fails, every call is
// answered as rate-limited and written uncounted; past the session cap,
// initialize is refused. The effects that must follow the write run after
// it. Only a failure to write at all is returned: the request then answers
// 503 and nothing of it leaves the server.
func (s *Server) commit(x *exchange) error {
	// The write outlives a client that went away: what was done is recorded.
	ctx := context.WithoutCancel(x.r.Context())
	for round := 0; ; round++ {
		var ops []store.Op
		var owner []int // the group of each op
		for gi, g := range x.writes {
			if !g.dropped {
				for _, op := range g.w.Ops {
					ops = append(ops, op)
					owner = append(owner, gi)
				}
			}
		}
		rows := make([]audit.Record, len(x.audits))
		for i, a := range x.audits {
			a.DurationMs = time.Since(x.arrived).Milliseconds()
			rows[i] = *a
		}
		err := s.opts.Gate.Commit(ctx, x.adm, Commitment{
			Audit: rows, Count: x.count, CreateSession: x.create, DeleteSession: x.del, Ops: ops,
		})
		if err == nil {
			for _, g := range x.writes {
				if !g.dropped && g.committed != nil {
					g.committed(ctx)
				}
			}
			s.runEffects(ctx, x)
			return nil
		}
		if round >= maxCommitRounds {
			return err
		}
		var oc *OpsConflictError
		switch {
		case errors.As(err, &oc) && oc.Index >= 0 && oc.Index < len(owner):
			gi := owner[oc.Index]
			first := oc.Index
			for first > 0 && owner[first-1] == gi {
				first--
			}
			g := x.writes[gi]
			g.dropped = true
			if g.resolve != nil {
				g.resolve(ctx, oc.Index-first)
			}
		case errors.Is(err, ErrRateExceeded) && x.count > 0:
			s.rateExceeded(x)
		case errors.Is(err, ErrSessionLimit) && x.create != nil:
			s.sessionLimited(x)
		case errors.Is(err, ErrSessionGone) && x.del != nil:
			s.sessionGone(x)
		case errors.Is(err, store.ErrTooLarge) && (len(ops) > 0 || x.create != nil):
			s.tooLarge(x)
		default:
			return err
		}
	}
}

// runEffects runs, in order, the effects that must follow the commit. A
// failure is logged with its recovery path; the answer stands, since the
// write it follows is done.
func (s *Server) runEffects(ctx context.Context, x *exchange) {
	for _, g := range x.writes {
		if g.dropped {
			continue
		}
		for _, e := range g.w.After {
			ectx, cancel := context.WithTimeout(ctx, effectTimeout)
			err := e.Run(ectx)
			cancel()
			if err != nil {
				s.opts.Logger.ErrorContext(ctx, "effect after commit failed", "requestId", x.reqID,
					"effect", e.Name, "recovery", e.Recovery, "err", err)
			}
		}
	}
}

// effectTimeout bounds one effect after the commit.
const effectTimeout = 10 * time.Second

// rateExceeded answers every call of the exchange as rate-limited after its
// reservation failed at commit: nothing it did is written, and it is not
// counted (refused requests are not, ratelimit package doc).
func (s *Server) rateExceeded(x *exchange) {
	x.count = 0
	x.create, x.del = nil, nil
	for _, g := range x.writes {
		g.dropped = true
	}
	secs := max(1, x.adm.Rate.RetryAfterSeconds())
	for _, c := range x.calls {
		if c.md.RatesItself && c.md.RateLimited != nil {
			c.result, c.rpcErr = c.md.RateLimited(c.req), nil
			c.rec.Outcome = "RATE_LIMITED"
			continue
		}
		c.result, c.rpcErr = nil, rateError(secs, x.adm.Rate.Limit)
		c.status = http.StatusTooManyRequests
		c.rec.Outcome = "http:" + strconv.Itoa(http.StatusTooManyRequests)
	}
	x.w.Header().Set("Retry-After", strconv.Itoa(secs))
}

// rateError is the JSON-RPC error of a rate-limited protocol method.
func rateError(secs, limit int) *Error {
	return &Error{Code: CodeRateLimited,
		Message: "Rate limit exceeded: retry after " + strconv.Itoa(secs) + " seconds.",
		Data:    map[string]any{"retry_after_s": secs, "limit": limit}}
}

// sessionLimited refuses initialize at the credential's cap of live
// sessions (issue 8, item 4): 429, nothing created.
func (s *Server) sessionLimited(x *exchange) {
	x.create = nil
	for _, c := range x.calls {
		if c.m.Method == "initialize" {
			c.result = nil
			c.rpcErr = &Error{Code: CodeRateLimited, Message: "Too many live sessions for this credential: end the sessions it no longer uses (DELETE /mcp with their Mcp-Session-Id) or wait for them to expire.",
				Data: map[string]any{"retry_after_s": sessionRetryAfter}}
			c.status = http.StatusTooManyRequests
			c.rec.Outcome = "http:" + strconv.Itoa(http.StatusTooManyRequests)
		}
	}
	x.w.Header().Set("Retry-After", strconv.Itoa(sessionRetryAfter))
}

// sessionRetryAfter is the Retry-After of a refused initialize, in seconds.
const sessionRetryAfter = 60

// sessionGone answers a DELETE whose session another DELETE ended first:
// one 204, then 404 (issue 8, item 9).
func (s *Server) sessionGone(x *exchange) {
	x.del = nil
	for _, g := range x.writes {
		g.dropped = true
	}
	for _, a := range x.audits {
		if a.Method == "DELETE /mcp" {
			a.Outcome = "http:" + strconv.Itoa(http.StatusNotFound)
		}
	}
	x.goneStatus = true
}

// tooLarge answers a request whose rows are over the store's item limit:
// the client's data caused it, so it is a 400, not a 503 to retry (issue 8,
// item 4). Nothing but the audit rows is written.
func (s *Server) tooLarge(x *exchange) {
	x.create = nil
	for _, g := range x.writes {
		g.dropped = true
	}
	for _, c := range x.calls {
		c.result = nil
		c.rpcErr = &Error{Code: CodeInvalidRequest, Message: "Bad request: the request's data is too large to record, so it was not carried out."}
		c.status = http.StatusBadRequest
		c.rec.Outcome = "http:" + strconv.Itoa(http.StatusBadRequest)
	}
}

// finish commits the exchange's one write, then writes a fixed answer. A
// failed commit replaces the answer: nothing unaudited leaves the server.
func (s *Server) finish(x *exchange, status int, body []byte, failID ID) {
	if err := s.commit(x); err != nil {
		s.commitFailed(x, failID, err)
		return
	}
	s.logOutcome(x, status)
	if body == nil {
		x.w.WriteHeader(status)
		return
	}
	writeJSON(x.w, status, body)
}

// commitFailed answers a request whose one write failed: 503, nothing of the
// work leaves the server.
func (s *Server) commitFailed(x *exchange, id ID, err error) {
	s.opts.Logger.ErrorContext(x.r.Context(), "commit failed", "requestId", x.reqID, "err", err)
	x.w.Header().Del(headerSessionID)
	x.w.Header().Set("Retry-After", "1")
	writeError(x.w, http.StatusServiceUnavailable, id, errNotRecorded())
}

// errNotRecorded is the answer when a request's write failed.
func errNotRecorded() *Error {
	return &Error{Code: CodeInternalError,
		Message: "The request could not be recorded, so it was not completed; retry shortly."}
}

func (s *Server) logOutcome(x *exchange, status int) {
	attrs := []any{"requestId", x.reqID, "status", status, "durationMs", time.Since(x.arrived).Milliseconds()}
	if c := x.adm.Credential; c != nil {
		attrs = append(attrs, "credential", c)
	}
	for _, a := range x.audits {
		attrs = append(attrs, "method", a.Method, "outcome", a.Outcome)
		if a.Tool != "" {
			attrs = append(attrs, "tool", a.Tool)
		}
	}
	s.opts.Logger.Info("mcp request", attrs...)
}

// admitSpec is what an HTTP request asks of the gate.
type admitSpec struct {
	sessionID     string
	lane          ratelimit.Lane
	cost          int
	startsSession bool
	id            ID // the id an error answer carries
}

// admit authenticates; on failure it has already answered. The caller
// defers x.done().
func (s *Server) admit(w http.ResponseWriter, r *http.Request, a admitSpec) (*exchange, bool) {
	now := s.opts.Now()
	token, presented, err := auth.Presented(r.Header)
	if err != nil { // two credentials: refused before either is resolved
		w.Header().Set("WWW-Authenticate", s.opts.Challenge+`, error="invalid_request"`)
		writeError(w, http.StatusBadRequest, a.id, &Error{Code: CodeInvalidRequest,
			Message: "Invalid request: more than one credential is presented; send exactly one, as 'Authorization: Bearer <credential>' or as 'X-API-Key: <key>'."})
		return nil, false
	}
	if !presented && s.opts.AnonymousToken != "" {
		token = s.opts.AnonymousToken
	}
	x := &exchange{w: w, r: r, started: now, arrived: time.Now(), reqID: newRequestID()}
	if token == "" {
		s.unauthorized(w, a.id, Denial{})
		return nil, false
	}
	adm, err := s.opts.Gate.Admit(r.Context(), AdmitRequest{Token: token, SessionID: a.sessionID,
		Lane: a.lane, Cost: a.cost, StartsSession: a.startsSession, Now: now})
	if err != nil {
		s.opts.Logger.ErrorContext(r.Context(), "admit failed", "requestId", x.reqID, "err", err)
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, a.id, &Error{Code: CodeInternalError,
			Message: "The service is temporarily unavailable; retry shortly."})
		return nil, false
	}
	if adm.Credential == nil {
		d := adm.Denial
		if d.Error == "" && presented {
			// A credential the client presented and that failed, whatever
			// the reason, is invalid_token (RFC 6750 §3.1).
			d.Error = "invalid_token"
		}
		s.unauthorized(w, a.id, d)
		return nil, false
	}
	x.adm = adm
	return x, true
}

// done ends the exchange's hold on its admission (the expensive lane's
// concurrency slot).
func (x *exchange) done() {
	if x != nil && x.adm != nil && x.adm.Release != nil {
		x.adm.Release()
		x.adm.Release = nil
	}
}

// unauthorized answers a missing or refused credential: 401 with the Bearer
// challenge, bare when no bearer credential was presented and with
// error="invalid_token" when one was and failed, or 403 insufficient_scope
// for a valid token lacking the scope /mcp itself requires (RFC 6750 §3.1;
// MCP basic/authorization §Error Handling). A failed credential gets one
// message whatever the reason, so the answer never tells a revoked key from
// one that never existed.
func (s *Server) unauthorized(w http.ResponseWriter, id ID, d Denial) {
	challenge := s.opts.Challenge
	status, msg := http.StatusUnauthorized,
		"Authentication required: present a valid API key or access token as 'Authorization: Bearer <credential>' (an API key may also come as 'X-API-Key: <key>')."
	switch d.Error {
	case "invalid_token":
		challenge += `, error="invalid_token"`
		msg = "Authentication failed: the credential presented was revoked, has expired, is unknown or was not issued for this server."
	case "insufficient_scope":
		status = http.StatusForbidden
		challenge += `, error="insufficient_scope"`
		if !strings.Contains(challenge, "scope=") { // a parameter appears once (RFC 7235 §2.1)
			challenge += `, scope="` + d.Scope + `"`
		}
		msg = "Forbidden: the token lacks the scope this server requires."
	}
	w.Header().Set("WWW-Authenticate", challenge)
	writeError(w, status, id, &Error{Code: CodeUnauthorized, Message: msg})
}

// httpRefusal answers an authenticated request at the HTTP level (400, 404,
// 405, 429), auditing it with outcome "http:<status>" and counting it in the
// rate bucket like any authenticated request ("invalid calls count",
// docs/decisions.md "Pipeline choices"); only a rate refusal (429) is not
// counted.
func (s *Server) httpRefusal(x *exchange, method string, status int, id ID, e *Error) {
	rec := s.newAudit(x, method)
	rec.Outcome = "http:" + strconv.Itoa(status)
	x.count = s.countIfAllowed(x, 1)
	var body []byte
	if e != nil {
		body = encodeResponse(id, nil, e)
	}
	s.finish(x, status, body, id)
}

func (s *Server) countIfAllowed(x *exchange, n int) int {
	if x.adm.Rate.Allowed {
		return n
	}
	return 0
}

// rateLimited answers a rate-limited protocol method: 429, Retry-After and a
// JSON-RPC error with data.retry_after_s (docs/decisions.md "Answers on the
// wire").
func (s *Server) rateLimited(x *exchange, m *Message) {
	secs := x.adm.Rate.RetryAfterSeconds()
	x.w.Header().Set("Retry-After", strconv.Itoa(secs))
	s.httpRefusal(x, m.Method, http.StatusTooManyRequests, m.ID, rateError(secs, x.adm.Rate.Limit))
}
