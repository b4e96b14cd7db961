package mcp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/store"
)

// Request is one JSON-RPC request as a method handler sees it.
type Request struct {
	ID     ID
	Method string
	// Params are the request's params, decoded once by the transport.
	Params     *Params
	Revision   Revision
	Credential *auth.Credential
	Session    *Session
	Rate       ratelimit.Decision
	// Audit is this message's audit row; handlers set Tool, Matter, Outcome
	// and the query digest.
	Audit *audit.Record
	// Started is when the request arrived by the server's clock (what data
	// and expiries are judged against).
	Started time.Time
	// Arrived is when the request arrived by the monotonic wall clock: only
	// for measuring durations (the server's clock may be a test's).
	Arrived time.Time
	// InBatch reports whether the request came inside a JSON-RPC batch.
	InBatch bool

	newSession   *Session
	writes       []Writes
	out          *stream
	srv          *Server
	progressSent bool
	lastProgress float64
	meta         *requestMeta // the 2026 era's per-request _meta; nil in the 2025 era
	mrtr         *mrtr        // the 2026 era's questions and answers
}

// Era2026 reports whether the request is of the 2026-07-28 era.
func (r *Request) Era2026() bool { return r.meta != nil }

// CursorEra is the era a list cursor is bound to: "2026" for a 2026-07-28
// request, "legacy" for every 2025-era revision. A cursor issued in one era
// is refused in the other (CursorScope.Era).
func (r *Request) CursorEra() string {
	if r.Era2026() {
		return "2026"
	}
	return "legacy"
}

// Write joins conditional writes to the request's one commit; the answer is
// settled after it (Writes.OnConflict when a condition fails).
func (r *Request) Write(w Writes) { r.writes = append(r.writes, w) }

// AddOp adds one conditional write to the request's commit. A failed
// condition answers -32603 "conflicted" (use Write with OnConflict to
// answer otherwise).
func (r *Request) AddOp(op store.Op) { r.Write(Writes{Ops: []store.Op{op}}) }

// call is one message's work within an exchange: its handler's answer, its
// audit row and the HTTP status it asks for.
type call struct {
	m      *Message
	md     Method
	req    *Request
	rec    *audit.Record
	result any
	rpcErr *Error
	status int // 0: 200
}

// outcomeCancelled is the audit outcome of a request the client cancelled
// while the server waited for its answer.
const outcomeCancelled = "cancelled"

// errMethodNotFound answers a method outside the table or its era.
func errMethodNotFound() *Error {
	return &Error{Code: CodeMethodNotFound, Message: "Method not found."}
}

// call dispatches one request: it looks the method up, runs the handler
// and joins its writes to the exchange. meta is the request's 2026-era
// _meta (nil in the 2025 era); out its stream (nil inside a batch).
func (s *Server) call(x *exchange, m *Message, out *stream, meta *requestMeta) *call {
	c := &call{m: m, rec: s.newAudit(x, m.Method)}
	x.calls = append(x.calls, c)
	md, ok := s.method(m.Method, meta != nil)
	if !ok {
		c.fail(errMethodNotFound())
		return c
	}
	c.md = md
	req := &Request{
		ID: m.ID, Method: m.Method, Params: m.Params, Revision: x.revision,
		Credential: x.adm.Credential, Session: x.adm.Session, Rate: x.adm.Rate,
		Audit: c.rec, Started: x.started, Arrived: x.arrived, InBatch: out == nil,
		out: out, srv: s, meta: meta,
	}
	c.req = req
	if !m.Params.IsObject() {
		c.fail(InvalidParams("Invalid params: params must be an object."))
		return c
	}
	if meta != nil && md.MayAsk {
		if e := s.openMRTR(req, md); e != nil {
			c.fail(e)
			return c
		}
	}
	ctx := x.r.Context()
	result, err := s.invoke(ctx, md.Handler, req)
	s.settleCall(ctx, x, c, result, err)
	if req.newSession != nil && c.rpcErr == nil {
		x.create = req.newSession
		c.rec.SessionID = req.newSession.ID
		c.rec.Revision = string(req.newSession.Revision)
	}
	for _, w := range req.writes {
		g := x.addWrites(w, func(ctx context.Context, failed int) {
			if w.OnConflict == nil {
				c.result, c.rpcErr = nil, errConflicted()
				c.rec.Outcome = "rpc:" + strconv.Itoa(CodeInternalError)
				return
			}
			c.rec.Outcome = "" // the conflict answer records its own
			result, err := w.OnConflict(ctx, failed)
			s.settleCall(ctx, x, c, result, err)
		})
		if g != nil && w.OnCommit != nil {
			g.committed = func(ctx context.Context) {
				outcome := c.rec.Outcome // committed already: the answer changes, the row does not
				result, err := w.OnCommit(ctx)
				s.settleCall(ctx, x, c, result, err)
				c.rec.Outcome = outcome
			}
		}
	}
	return c
}

// errConflicted answers a write whose condition failed when its method
// gave no answer of its own for that.
func errConflicted() *Error {
	return &Error{Code: CodeInternalError,
		Message: "The request conflicted with a concurrent change and was not carried out; retry."}
}

func (c *call) fail(e *Error) {
	c.result, c.rpcErr = nil, e
	c.rec.Outcome = "rpc:" + strconv.Itoa(e.Code)
}

// settleCall turns a handler's result or error into the call's answer and
// audit outcome.
func (s *Server) settleCall(ctx context.Context, x *exchange, c *call, result any, err error) {
	req := c.req
	switch {
	case errors.Is(err, ErrAskCancelled) || errors.Is(err, context.Canceled):
		c.rec.Outcome = outcomeCancelled
		c.result, c.rpcErr = nil, &Error{Code: CodeInternalError, Message: "The request was cancelled."}
		return
	case errors.Is(err, ErrInputRequired) && req.mrtr != nil && len(req.mrtr.asked) > 0:
		res, serr := req.mrtr.inputRequired(req.Started)
		if serr != nil {
			s.opts.Logger.ErrorContext(ctx, "seal request state", "requestId", x.reqID, "err", serr)
			c.fail(&Error{Code: CodeInternalError, Message: "Internal error."})
			return
		}
		c.rec.Outcome = "input_required"
		c.result, c.rpcErr = res, nil
		return
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			s.opts.Logger.ErrorContext(ctx, "method failed", "requestId", x.reqID, "method", req.Method, "err", err)
			e = &Error{Code: CodeInternalError, Message: "Internal error."}
		}
		c.result, c.rpcErr = nil, e
		if e.httpStatus != 0 {
			c.status = e.httpStatus
		}
		if c.rec.Outcome == "" { // keep a refusal class the handler recorded (a resource read refused KILL_SWITCH)
			c.rec.Outcome = "rpc:" + strconv.Itoa(e.Code)
		}
		return
	}
	c.result, c.rpcErr = result, nil
	if c.rec.Outcome == "" {
		c.rec.Outcome = audit.OutcomeOK
	}
}

// invoke runs a handler, turning a panic into an internal error.
func (s *Server) invoke(ctx context.Context, h MethodHandler, req *Request) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.opts.Logger.ErrorContext(ctx, "method panicked", "method", req.Method, "panic", p)
			result, err = nil, &Error{Code: CodeInternalError, Message: "Internal error."}
		}
	}()
	return h(ctx, req)
}

// encode is the call's JSON-RPC response; a 2026-era success carries the
// revision's result fields.
func (c *call) encode() []byte {
	if c.rpcErr != nil || c.req == nil || !c.req.Era2026() {
		return encodeResponse(c.m.ID, c.result, c.rpcErr)
	}
	return encodeResponse(c.m.ID, stamp2026(c.result, c.md.Cacheable), nil)
}

// post serves a POST: one message or, in a 2025-03-26 session, a batch.
func (s *Server) post(w http.ResponseWriter, r *http.Request) {
	if !encodedIdentity(r) {
		writeError(w, http.StatusUnsupportedMediaType, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Unsupported media type: send the body without a Content-Encoding (gzip and other codings are not accepted)."})
		return
	}
	if mt, _, err := mimeType(r); err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Unsupported media type: POST a JSON-RPC message as application/json."})
		return
	}
	if !acceptsResponse(r.Header.Values("Accept")) {
		writeError(w, http.StatusNotAcceptable, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Not acceptable: accept application/json and text/event-stream."})
		return
	}
	body, tooLarge, rerr := readBody(w, r, s.opts.MaxBodyBytes, s.opts.BodyReadTimeout)
	switch {
	case tooLarge:
		writeError(w, http.StatusRequestEntityTooLarge, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Request body too large: the limit is " + strconv.FormatInt(s.opts.MaxBodyBytes, 10) + " bytes."})
		return
	case rerr != nil:
		writeError(w, http.StatusBadRequest, ID{}, &Error{Code: CodeParseError,
			Message: "Parse error: the request body did not arrive in full within " + s.opts.BodyReadTimeout.String() + "."})
		return
	}
	b, derr := DecodeBody(body)
	if derr != nil {
		writeError(w, http.StatusBadRequest, derr.ID, &Error{Code: derr.Code, Message: derr.Message})
		return
	}
	if isEra2026(r, b) {
		s.post2026(w, r, b)
		return
	}
	first := b.Messages[0]
	hdrRev, hdrPresent := protocolHeader(r)
	if hdrPresent && !hdrRev.IsLegacy() {
		writeError(w, http.StatusBadRequest, first.ID, &Error{Code: CodeInvalidRequest,
			Message: "Unsupported MCP-Protocol-Version header; supported: " + legacyList() + "."})
		return
	}
	isInit := !b.Batch && first.Method == "initialize"
	sid := r.Header.Get(headerSessionID)
	if isInit {
		sid = "" // initialize always starts a new session
	}
	x, ok := s.admit(w, r, admitSpec{sessionID: lookupID(sid), lane: s.laneOf(b, false),
		cost: len(b.Messages), startsSession: isInit, id: first.ID})
	if !ok {
		return
	}
	defer x.done()
	method := first.Method
	if b.Batch {
		method = "batch"
	} else if first.IsResponse() {
		method = "response"
	}
	if !isInit {
		if sid == "" {
			s.httpRefusal(x, method, http.StatusBadRequest, first.ID, &Error{Code: CodeInvalidRequest,
				Message: "Bad request: the Mcp-Session-Id header is required after initialize."})
			return
		}
		if x.adm.Session == nil {
			s.httpRefusal(x, method, http.StatusNotFound, first.ID, &Error{Code: CodeInvalidRequest,
				Message: "Session not found: it expired or was ended; initialize a new one."})
			return
		}
		// The request's revision is its header's (any served legacy revision:
		// the spec refuses only unsupported values, and clients such as the
		// conformance suite's announce 2025-03-26 on 2025-11-25 sessions),
		// else the session's negotiated one (docs/protocol.md "body first").
		x.revision = x.adm.Session.Revision
		if hdrPresent {
			x.revision = hdrRev
		}
	}
	if b.Batch {
		s.serveBatch(x, b)
		return
	}
	s.serveOne(x, first)
}

// laneOf picks the rate lane of a body: the most expensive of its messages.
func (s *Server) laneOf(b *Body, era2026 bool) ratelimit.Lane {
	lane := ratelimit.LaneRead
	for _, m := range b.Messages {
		if md, ok := s.method(m.Method, era2026); ok && md.Lane != nil {
			if l := md.Lane(m.Params); ratelimit.Costlier(l, lane) {
				lane = l
			}
		}
	}
	return lane
}

// serveOne answers a single 2025-era message.
func (s *Server) serveOne(x *exchange, m *Message) {
	switch {
	case m.IsResponse():
		s.serveAnswer(x, m)
	case m.IsNotification():
		s.serveNotification(x, m, false)
	default:
		if md, known := s.method(m.Method, false); known && !md.RatesItself && !x.adm.Rate.Allowed {
			s.rateLimited(x, m)
			return
		}
		out := newStream(x.w, s.streams(x.r))
		c := s.call(x, m, out, nil)
		x.count = s.countIfAllowed(x, 1)
		s.answer(x, c, out)
	}
}

// serveNotification accepts a notification: 202, audited and counted; the
// notification table's handler may add writes (a cancellation withdraws
// the questions asked for the request it cancels).
func (s *Server) serveNotification(x *exchange, m *Message, era2026 bool) {
	rec := s.newAudit(x, m.Method)
	rec.Outcome = audit.OutcomeAccepted
	if n, ok := s.notifications[m.Method]; ok && n.handle != nil && !era2026 {
		n.handle(s, x, m)
	}
	x.count = s.countIfAllowed(x, 1)
	if err := s.commit(x); err != nil {
		s.commitFailed(x, ID{}, err)
		return
	}
	s.logOutcome(x, http.StatusAccepted)
	x.w.WriteHeader(http.StatusAccepted)
}

// answer commits the exchange of one call and then writes the call's
// answer: plain JSON, or the last event of the stream the call started
// (or of one started now for a client that accepts only
// text/event-stream). A failed commit answers 503 (or, on a started
// stream, an error event): nothing of the work leaves the server.
func (s *Server) answer(x *exchange, c *call, out *stream) {
	if s.opts.ParamsDecoded != nil {
		defer func() { s.opts.ParamsDecoded(c.m.Method, c.m.Params.Decodes()) }()
	}
	err := s.commit(x)
	if err != nil && !out.isStarted() {
		s.commitFailed(x, c.m.ID, err)
		return
	}
	if err != nil {
		s.opts.Logger.ErrorContext(x.r.Context(), "commit failed", "requestId", x.reqID, "err", err)
		c.result, c.rpcErr = nil, errNotRecorded()
	}
	status := http.StatusOK
	if c.status != 0 {
		status = c.status
	}
	if x.create != nil {
		x.w.Header().Set(headerSessionID, x.create.ID)
	}
	s.logOutcome(x, status)
	if c.rec.Outcome == outcomeCancelled && out.isStarted() {
		return // a cancelled request gets no response (MCP basic/utilities/cancellation)
	}
	body := c.encode()
	if !out.isStarted() && (status != http.StatusOK || acceptsJSON(x.r.Header.Values("Accept")) || !out.allowed) {
		writeJSON(x.w, status, body)
		return
	}
	_ = out.send(body)
}
