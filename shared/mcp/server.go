// Package mcp is Custody's Model Context Protocol layer: JSON-RPC 2.0
// messages, protocol revisions, sessions, sealed list cursors and the
// streamable HTTP transport on one endpoint (MCP basic/transports). It knows
// nothing of AWS; every piece of state it keeps is a store row, so any
// request may land on any instance.
//
// The transport orders each POST as ARCHITECTURE.md "The request path"
// draws it: Origin/Host, body limit and JSON-RPC shape first; then the
// credential, authenticated from scratch through the Gate (one batch read of
// credential, session and rate bucket); then the session, bound to the
// principal; then the method. Every authenticated request ends in exactly one
// write through Gate.Commit (the rate count and its audit rows, plus the
// session row at initialize or DELETE), and only after that write succeeds is
// the answer sent. A few methods write before it, for state other instances
// must see at once: a question parked for the client (and its withdrawal),
// an at-most-once tool's nonce claim, and a GET stream's delivered outbox
// rows. Each answer's status and JSON body follow DECISIONS.md
// "Answers on the wire".
package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/store"
)

// Gate authenticates, meters and audits requests over the store. The
// composition root provides it (package gate); tests use the same one over
// real engines.
type Gate interface {
	// Admit authenticates the presented token from scratch and, in the same
	// batch read, fetches the session and the lane's rate bucket. An
	// unknown or revoked credential is an Admission without Credential (and
	// no error; the Server answers it invalid_token, Admission.Denial); an
	// error means the store could not answer.
	Admit(ctx context.Context, req AdmitRequest) (*Admission, error)
	// Commit performs the request's one write: the rate count, the audit
	// rows and any session change, atomically.
	Commit(ctx context.Context, adm *Admission, c Commitment) error
}

// AdmitRequest is what Admit needs from the HTTP request.
type AdmitRequest struct {
	Token     string // the presented credential; "" when none
	SessionID string // "" when none or not wanted
	Lane      ratelimit.Lane
	Now       time.Time
}

// Admission is the gate's verdict on who is calling.
type Admission struct {
	// Credential is nil when the request is not authenticated.
	Credential *auth.Credential
	// Session is the live session under the requested id, only when it is
	// bound to the credential's principal; nil otherwise (unknown, expired,
	// deleted and foreign sessions are alike).
	Session *Session
	// Rate is the lane's verdict, decided before anything executes.
	Rate ratelimit.Decision
	// State is the gate's own (what Commit needs from the read).
	State any
	// Denial explains a refused credential (nil Credential): the bearer
	// error for the challenge (RFC 6750 §3.1) and whether it is a 403. Zero
	// means refused for no reason the gate names: the server answers 401
	// invalid_token when the client presented the credential, and the bare
	// challenge when it presented none (Options.AnonymousToken).
	Denial Denial
}

// Denial is why a presented credential was refused.
type Denial struct {
	// Error is the RFC 6750 error code: "invalid_token" (401) or
	// "insufficient_scope" (403); "" for a credential the gate does not
	// know (unknown, revoked, of no shape it takes).
	Error string
	// Scope is the scope the resource requires (for insufficient_scope).
	Scope string
}

// Commitment is the request's one write.
type Commitment struct {
	Audit         []audit.Record
	Count         int // requests to count in the rate bucket
	CreateSession *Session
	DeleteSession string
	// Ops are the request's own conditional writes (a parked request's
	// answer, a session's log level), committed in the same transaction.
	Ops []store.Op
}

// ErrOpsConflict is returned by Gate.Commit when a condition of one of
// Commitment.Ops failed. The rate count and audit rows were still written
// (in one more write, DECISIONS.md "Pipeline choices"); the ops were not.
var ErrOpsConflict = errors.New("mcp: a conditional write of the request failed")

// Request is one JSON-RPC request or notification as a method handler sees it.
type Request struct {
	ID         ID
	Method     string
	Params     json.RawMessage
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

	newSession    *Session
	ops           []store.Op
	out           *stream
	srv           *Server
	progressRead  bool            // params._meta.progressToken was looked for
	progressToken json.RawMessage // nil: the client asked for no progress
	progressSent  bool
	lastProgress  float64
	meta          *requestMeta // the 2026 era's per-request _meta; nil in the 2025 era
	mrtr          *mrtr        // the 2026 era's questions and answers
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

// AddOp adds a conditional write to the request's one commit.
func (r *Request) AddOp(op store.Op) { r.ops = append(r.ops, op) }

// MethodHandler serves one method. It returns the result, or an error: a
// *Error is answered as that JSON-RPC error; any other error is logged and
// answered -32603 without detail.
type MethodHandler func(ctx context.Context, req *Request) (any, error)

// Method registers a handler with its metering.
type Method struct {
	Handler MethodHandler
	// Lane picks the rate lane from the params; nil means the read lane.
	Lane func(params json.RawMessage) ratelimit.Lane
	// RatesItself marks a method that answers a rate refusal in its own
	// result (tools/call answers isError RATE_LIMITED); others get 429.
	RatesItself bool
	// Cacheable marks a list, read or discover method: its 2026-era results
	// carry ttlMs and cacheScope.
	Cacheable bool
}

// Options configure a Server. The zero value of each field is documented.
type Options struct {
	Gate Gate
	// ServerInfo names the server in InitializeResult.
	ServerInfo Implementation
	// Capabilities declared at initialize: exactly what is implemented.
	Capabilities ServerCapabilities
	// Instructions for the model, sent at initialize ("" omits them).
	Instructions string
	// AllowedOrigins are the exact Origin values browsers may send; a request
	// with any other Origin is refused with 403.
	AllowedOrigins []string
	// AllowedHosts, when non-empty, are the only Host values accepted
	// (DNS-rebinding protection on loopback binds); compared case-insensitively.
	AllowedHosts []string
	// MaxBodyBytes limits a POST body; 0 means 4 MiB.
	MaxBodyBytes int64
	// SessionTTL is a session's absolute lifetime; 0 means 24 h.
	SessionTTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives one line per request; nil discards.
	Logger *slog.Logger
	// Challenge is the WWW-Authenticate value of a 401; "" means
	// `Bearer realm="custody"`.
	Challenge string
	// Store holds parked server-to-client requests and session changes.
	Store store.Store
	// ParkedTTL is a parked request's lifetime; 0 means 10 min.
	ParkedTTL time.Duration
	// PollMin and PollMax bound the backoff of a request waiting for the
	// client's answer; 0 means 100 ms and 2 s (DECISIONS.md constants).
	PollMin, PollMax time.Duration
	// GETStream offers the held GET stream for server-initiated messages.
	GETStream bool
	// AnonymousToken, when set, is the credential a request that presents
	// none is authenticated as: the conformance fixture profile's key, whose
	// scope sees only the fixtures (and whose calls are audited like any).
	// Never set outside that loopback-only profile.
	AnonymousToken string
	// States seals 2026-era request states (MRTR); nil refuses every state.
	States *StateSealer
	// InstructionsFor returns the instructions for a credential's firm (the
	// tenant's own document, or the default); nil means Instructions.
	InstructionsFor func(ctx context.Context, c *auth.Credential) string
	// MayDeliver, when set, is asked before a GET stream sends each queued
	// message (PostToSession) whether it may still go to the stream's
	// credential — the composition re-checks access through the funnel, so
	// an ethical wall added after a notice was queued, or after the
	// subscription it answers, withholds it. cred is the credential as last
	// re-resolved (Recheck). false drops the message unsent; an error keeps
	// it, and those after it, for the next poll. nil delivers every message.
	MayDeliver func(ctx context.Context, cred *auth.Credential, message json.RawMessage) (bool, error)
	// StreamPoll is how often a GET stream looks for queued messages (0: 1 s);
	// Heartbeat is its SSE comment interval (0: 15 s); Recheck is how often it
	// re-resolves the credential (0: 30 s).
	StreamPoll, Heartbeat, Recheck time.Duration
	// BodyReadTimeout bounds reading one POST body where the transport has
	// read deadlines (net/http; not Lambda): a body that stops arriving is a
	// parse error, not a held connection (0: 30 s).
	BodyReadTimeout time.Duration
}

// Server is the streamable HTTP endpoint. It is an http.Handler.
type Server struct {
	opts    Options
	methods map[string]Method
}

// NewServer returns a server with initialize and ping registered.
func NewServer(opts Options) *Server {
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = 4 << 20
	}
	if opts.SessionTTL == 0 {
		opts.SessionTTL = 24 * time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Challenge == "" {
		opts.Challenge = `Bearer realm="custody"`
	}
	if opts.ParkedTTL == 0 {
		opts.ParkedTTL = 10 * time.Minute
	}
	if opts.PollMin == 0 {
		opts.PollMin = 100 * time.Millisecond
	}
	if opts.PollMax == 0 {
		opts.PollMax = 2 * time.Second
	}
	if opts.StreamPoll == 0 {
		opts.StreamPoll = time.Second
	}
	if opts.Heartbeat == 0 {
		opts.Heartbeat = 15 * time.Second
	}
	if opts.BodyReadTimeout == 0 {
		opts.BodyReadTimeout = 30 * time.Second
	}
	if opts.Recheck == 0 {
		opts.Recheck = 30 * time.Second
	}
	s := &Server{opts: opts, methods: map[string]Method{}}
	s.Register("initialize", Method{Handler: s.initialize})
	s.Register("ping", Method{Handler: func(context.Context, *Request) (any, error) { return struct{}{}, nil }})
	s.Register("logging/setLevel", Method{Handler: s.setLevel})
	s.Register("server/discover", Method{Handler: s.discover, Cacheable: true})
	return s
}

// instructionsFor returns the instructions sent at initialize and discover.
func (s *Server) instructionsFor(ctx context.Context, req *Request) string {
	if s.opts.InstructionsFor != nil && req.Credential != nil {
		return s.opts.InstructionsFor(ctx, req.Credential)
	}
	return s.opts.Instructions
}

// Register adds or replaces a method.
func (s *Server) Register(name string, m Method) { s.methods[name] = m }

const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
)

// allowedRequestHeaders may be sent by browser clients (CORS preflight).
var allowedRequestHeaders = []string{
	"accept", "authorization", "content-type", "last-event-id", "mcp-method",
	"mcp-name", "mcp-protocol-version", "mcp-session-id", "x-api-key",
}

// ServeHTTP serves /mcp.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.hostAllowed(r.Host) {
		writeError(w, http.StatusForbidden, ID{}, &Error{Code: CodeInvalidRequest, Message: "Forbidden: this Host is not served here."})
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if !s.originAllowed(origin, r.Host) {
			writeError(w, http.StatusForbidden, ID{}, &Error{Code: CodeInvalidRequest, Message: "Forbidden: this Origin is not allowed."})
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After")
	}
	switch r.Method {
	case http.MethodOptions:
		s.preflight(w, r)
	case http.MethodPost:
		s.post(w, r)
	case http.MethodGet:
		s.get(w, r)
	case http.MethodDelete:
		s.delete(w, r)
	default:
		w.Header().Set("Allow", s.allow())
		writeError(w, http.StatusMethodNotAllowed, ID{}, &Error{Code: CodeInvalidRequest, Message: "Method not allowed on /mcp."})
	}
}

func (s *Server) hostAllowed(host string) bool {
	if len(s.opts.AllowedHosts) == 0 {
		return true
	}
	for _, h := range s.opts.AllowedHosts {
		if strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}

// originAllowed admits an allow-listed Origin, and on a Host-checked
// (loopback) bind the server's own origin: a same-origin request is not a
// rebinding attack (the Host check already passed).
func (s *Server) originAllowed(origin, host string) bool {
	for _, o := range s.opts.AllowedOrigins {
		if o == origin {
			return true
		}
	}
	return len(s.opts.AllowedHosts) > 0 && strings.EqualFold(origin, "http://"+host)
}

// allow is the Allow header of /mcp (RFC 9110 §10.2.1): GET only where the
// GET stream is switched on.
func (s *Server) allow() string {
	if s.opts.GETStream {
		return "GET, POST, DELETE, OPTIONS"
	}
	return "POST, DELETE, OPTIONS"
}

// preflight answers a CORS preflight without authentication (FB-29).
func (s *Server) preflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Allow", s.allow())
	if r.Header.Get("Origin") != "" {
		// Every method a browser may send, GET included even without the
		// stream: so that a browser client reads the JSON 405, not a CORS
		// failure (FB-29).
		h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
		h.Set("Access-Control-Allow-Headers", strings.Join(allowedRequestHeaders, ", "))
		h.Set("Access-Control-Max-Age", "600")
	}
	w.WriteHeader(http.StatusNoContent)
}

// exchange carries one HTTP request through the pipeline.
type exchange struct {
	w        http.ResponseWriter
	r        *http.Request
	started  time.Time // by the server's clock
	arrived  time.Time // by the monotonic wall clock, for durations
	reqID    string
	adm      *Admission
	revision Revision
	audits   []audit.Record
	count    int
	create   *Session
	del      string
	ops      []store.Op
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// auditFor starts the audit row of one message (or HTTP-level request).
func (s *Server) auditFor(x *exchange, method string) audit.Record {
	c := x.adm.Credential
	rec := audit.Record{
		RequestID: x.reqID, At: x.started, Tenant: c.Tenant, Principal: c.Owner,
		CredentialID: c.ID, Method: method, Revision: string(x.revision),
	}
	if x.adm.Session != nil {
		rec.SessionID = x.adm.Session.ID
	}
	if len(x.audits) > 0 {
		rec.RequestID += "." + strconv.Itoa(len(x.audits))
	}
	return rec
}

// commit performs the exchange's one write.
func (s *Server) commit(x *exchange) error {
	for i := range x.audits {
		x.audits[i].DurationMs = time.Since(x.arrived).Milliseconds()
	}
	// The write outlives a client that went away: what was done is recorded.
	ctx := context.WithoutCancel(x.r.Context())
	return s.opts.Gate.Commit(ctx, x.adm, Commitment{
		Audit: x.audits, Count: x.count, CreateSession: x.create, DeleteSession: x.del, Ops: x.ops,
	})
}

// finish commits the exchange's one write, then writes the answer. A failed
// commit replaces the answer: nothing unaudited leaves the server.
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

// admit authenticates; on failure it has already answered.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, sessionID string, lane ratelimit.Lane, id ID) (*exchange, bool) {
	now := s.opts.Now()
	token, presented, err := auth.Presented(r.Header)
	if err != nil { // two credentials: refused before either is resolved
		w.Header().Set("WWW-Authenticate", s.opts.Challenge+`, error="invalid_request"`)
		writeError(w, http.StatusBadRequest, id, &Error{Code: CodeInvalidRequest,
			Message: "Invalid request: more than one credential is presented; send exactly one, as 'Authorization: Bearer <credential>' or as 'X-API-Key: <key>'."})
		return nil, false
	}
	if !presented && s.opts.AnonymousToken != "" {
		token = s.opts.AnonymousToken
	}
	x := &exchange{w: w, r: r, started: now, arrived: time.Now(), reqID: newRequestID()}
	if token == "" {
		s.unauthorized(w, id, Denial{})
		return nil, false
	}
	adm, err := s.opts.Gate.Admit(r.Context(), AdmitRequest{Token: token, SessionID: sessionID, Lane: lane, Now: now})
	if err != nil {
		s.opts.Logger.ErrorContext(r.Context(), "admit failed", "requestId", x.reqID, "err", err)
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, id, &Error{Code: CodeInternalError,
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
		s.unauthorized(w, id, d)
		return nil, false
	}
	x.adm = adm
	return x, true
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
// DECISIONS.md "Pipeline choices"); only a rate refusal (429) is not counted.
func (s *Server) httpRefusal(x *exchange, method string, status int, id ID, e *Error) {
	rec := s.auditFor(x, method)
	rec.Outcome = "http:" + strconv.Itoa(status)
	x.audits = append(x.audits, rec)
	x.count = s.countIfAllowed(x, 1)
	var body []byte
	if e != nil {
		body = encodeResponse(id, nil, e)
	}
	s.finish(x, status, body, id)
}

// protocolHeader reads MCP-Protocol-Version: present reports whether the
// header was sent at all (an empty value is present and invalid).
func protocolHeader(r *http.Request) (rev Revision, present bool) {
	vals, ok := r.Header[headerProtocolVersion]
	if !ok || len(vals) == 0 {
		return "", false
	}
	return Revision(strings.TrimSpace(vals[0])), true
}

func (s *Server) post(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Unsupported media type: POST a JSON-RPC message as application/json."})
		return
	}
	if !acceptsResponse(r.Header.Values("Accept")) {
		writeError(w, http.StatusNotAcceptable, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Not acceptable: accept application/json and text/event-stream."})
		return
	}
	body, tooLarge := readBody(w, r, s.opts.MaxBodyBytes, s.opts.BodyReadTimeout)
	if tooLarge {
		writeError(w, http.StatusRequestEntityTooLarge, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Request body too large: the limit is " + strconv.FormatInt(s.opts.MaxBodyBytes, 10) + " bytes."})
		return
	}
	b, derr := DecodeBody(body)
	if derr != nil {
		writeError(w, http.StatusBadRequest, ID{}, &Error{Code: derr.Code, Message: derr.Message})
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
	x, ok := s.admit(w, r, lookupID(sid), s.laneOf(b), first.ID)
	if !ok {
		return
	}
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
		// else the session's negotiated one (PROTOCOL.md "body first").
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

// lookupID is the session id worth reading: "" for an absent or malformed
// one (a malformed id names no session and is answered 404 like an unknown one).
func lookupID(sid string) string {
	if !ValidSessionID(sid) {
		return ""
	}
	return sid
}

func legacyList() string {
	parts := make([]string, len(LegacyRevisions))
	for i, r := range LegacyRevisions {
		parts[i] = string(r)
	}
	return strings.Join(parts, ", ")
}

// acceptsResponse reports whether the Accept header admits a JSON or SSE
// answer. An absent header accepts anything.
func acceptsResponse(vals []string) bool {
	if len(vals) == 0 {
		return true
	}
	for _, v := range vals {
		for _, part := range strings.Split(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			switch mt {
			case "application/json", "text/event-stream", "*/*", "application/*", "text/*":
				return true
			}
		}
	}
	return false
}

// readBody reads at most limit bytes; tooLarge reports a longer body.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, timeout time.Duration) (body []byte, tooLarge bool) {
	if r.ContentLength > limit {
		return nil, true
	}
	// A body that stops arriving must not hold the connection: a deadline
	// for reading it, lifted once it is read (a held SSE answer must not
	// hit it). After a failed or oversized read it stays, so that
	// net/http's discard of the unread rest cannot block. Where the
	// transport has no
	// deadlines (Lambda, whose body is already in the event), this does
	// nothing.
	rc := http.NewResponseController(w)
	deadline := rc.SetReadDeadline(time.Now().Add(timeout)) == nil
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, false // a broken body is then a parse error
	}
	if int64(len(body)) > limit {
		return nil, true
	}
	if deadline {
		_ = rc.SetReadDeadline(time.Time{})
	}
	return body, false
}

// laneOf picks the rate lane of a body: the most expensive of its messages.
func (s *Server) laneOf(b *Body) ratelimit.Lane {
	lane := ratelimit.LaneRead
	for _, m := range b.Messages {
		if md, ok := s.methods[m.Method]; ok && md.Lane != nil && md.Lane(m.Params) == ratelimit.LaneExpensive {
			lane = ratelimit.LaneExpensive
		}
	}
	return lane
}

// serveOne answers a single message.
func (s *Server) serveOne(x *exchange, m *Message) {
	switch {
	case m.IsResponse():
		s.serveAnswer(x, m)
	case m.IsNotification():
		rec := s.notificationAudit(x, m)
		if m.Method == "notifications/cancelled" {
			x.ops = append(x.ops, s.cancelOps(x, m)...)
		}
		x.audits = append(x.audits, rec)
		x.count = s.countIfAllowed(x, 1)
		if err := s.commit(x); errors.Is(err, ErrOpsConflict) {
			// The question was answered or withdrawn meanwhile: nothing to cancel.
			x.ops = nil
		} else if err != nil {
			s.commitFailed(x, ID{}, err)
			return
		}
		s.logOutcome(x, http.StatusAccepted)
		x.w.WriteHeader(http.StatusAccepted)
	default:
		md, known := s.methods[m.Method]
		if known && !md.RatesItself && !x.adm.Rate.Allowed {
			s.rateLimited(x, m)
			return
		}
		out := newStream(x.w, acceptsSSE(x.r.Header.Values("Accept")))
		result, rpcErr, rec := s.call(x, m, out)
		x.audits = append(x.audits, rec)
		x.count = s.countIfAllowed(x, 1)
		if x.create != nil {
			x.w.Header().Set(headerSessionID, x.create.ID)
		}
		if !out.isStarted() {
			s.finish(x, http.StatusOK, encodeResponse(m.ID, result, rpcErr), m.ID)
			return
		}
		// The stream already carries related messages: the response is its
		// last event, sent once the request's write is committed.
		if err := s.commit(x); err != nil {
			s.opts.Logger.ErrorContext(x.r.Context(), "commit failed", "requestId", x.reqID, "err", err)
			result, rpcErr = nil, &Error{Code: CodeInternalError,
				Message: "The request could not be recorded, so it was not completed; retry shortly."}
		}
		s.logOutcome(x, http.StatusOK)
		if rec.Outcome == outcomeCancelled {
			return // a cancelled request gets no response (MCP basic/utilities/cancellation)
		}
		_ = out.send(encodeResponse(m.ID, result, rpcErr))
	}
}

// outcomeCancelled is the audit outcome of a request the client cancelled
// while the server waited for its answer.
const outcomeCancelled = "cancelled"

// serveAnswer takes the client's response to a parked server-to-client
// request: 202 when it resolves a pending question this credential was asked
// in this session; otherwise 400 with an id-less error, and no parked row is
// touched (DECISIONS.md "Answers on the wire").
func (s *Server) serveAnswer(x *exchange, m *Message) {
	refuse := func() {
		s.httpRefusal(x, "response", http.StatusBadRequest, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Bad request: no server request with that id is pending in this session."})
	}
	id, ok := m.ID.stringID()
	if !ok || !validParkedID(id) || s.opts.Store == nil {
		refuse()
		return
	}
	key := ParkedKey(x.adm.Session.ID, id)
	it, err := s.opts.Store.Get(x.r.Context(), key)
	if err != nil || it.String("status") != parkedPending || it.String("credential_id") != x.adm.Credential.ID {
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			s.commitFailed(x, ID{}, err)
			return
		}
		refuse()
		return
	}
	rec := s.auditFor(x, "response")
	rec.Outcome = audit.OutcomeAccepted
	x.audits = append(x.audits, rec)
	x.count = s.countIfAllowed(x, 1)
	x.ops = append(x.ops, answerOp(key, x.adm.Credential.ID, m))
	switch err := s.commit(x); {
	case errors.Is(err, ErrOpsConflict):
		writeError(x.w, http.StatusBadRequest, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Bad request: no server request with that id is pending in this session."})
	case err != nil:
		s.commitFailed(x, ID{}, err)
	default:
		s.logOutcome(x, http.StatusAccepted)
		x.w.WriteHeader(http.StatusAccepted)
	}
}

// validParkedID reports whether id could name a parked request.
func validParkedID(id string) bool {
	return len(id) > 2 && len(id) <= 64 && id[:2] == "s-" && ValidSessionID(id)
}

// cancelOps withdraws the session's pending questions that were asked for
// the request the client cancels (MCP basic/utilities/cancellation), so the
// instance waiting on them stops.
func (s *Server) cancelOps(x *exchange, m *Message) []store.Op {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if s.opts.Store == nil || json.Unmarshal(m.Params, &p) != nil || len(p.RequestID) == 0 {
		return nil
	}
	origin := string(bytes.TrimSpace(p.RequestID))
	var ops []store.Op
	for _, it := range s.pendingParked(x) {
		if it.String("origin") == origin && it.String("credential_id") == x.adm.Credential.ID {
			ops = append(ops, store.UpdateOp(it.Key(), store.Update{Set: map[string]any{"status": parkedCancelled}},
				store.AttrEquals("status", parkedPending)))
		}
	}
	return ops
}

// maxParkedOps caps the pending questions one request rejects, so that its
// transaction stays within store.MaxTransactItems; any beyond expire on
// their own (parked-row TTL).
const maxParkedOps = 20

// pendingParked lists up to maxParkedOps of the session's pending
// questions, paging past answered and cancelled rows (kept until they
// expire) so that none pending is missed behind them.
func (s *Server) pendingParked(x *exchange) []store.Item {
	if x.adm.Session == nil || s.opts.Store == nil {
		return nil
	}
	q := store.Query{PK: SessionPK(x.adm.Session.ID), SK: store.SortKeyCondition{Prefix: "REQ#"}}
	var out []store.Item
	for {
		page, err := s.opts.Store.Query(x.r.Context(), q)
		if err != nil {
			return out // the rest expire on their own
		}
		for _, it := range page.Items {
			if it.String("status") == parkedPending {
				out = append(out, it)
				if len(out) == maxParkedOps {
					return out
				}
			}
		}
		if page.NextToken == "" {
			return out
		}
		q.PageToken = page.NextToken
	}
}

// commitFailed answers a request whose one write failed: 503, nothing of the
// work leaves the server.
func (s *Server) commitFailed(x *exchange, id ID, err error) {
	s.opts.Logger.ErrorContext(x.r.Context(), "commit failed", "requestId", x.reqID, "err", err)
	x.w.Header().Del(headerSessionID)
	x.w.Header().Set("Retry-After", "1")
	writeError(x.w, http.StatusServiceUnavailable, id, &Error{Code: CodeInternalError,
		Message: "The request could not be recorded, so it was not completed; retry shortly."})
}

func (s *Server) countIfAllowed(x *exchange, n int) int {
	if x.adm.Rate.Allowed {
		return n
	}
	return 0
}

func (s *Server) notificationAudit(x *exchange, m *Message) audit.Record {
	rec := s.auditFor(x, m.Method)
	rec.Outcome = audit.OutcomeAccepted
	return rec
}

// rateLimited answers a rate-limited protocol method: 429, Retry-After and a
// JSON-RPC error with data.retry_after_s (DECISIONS.md "Answers on the wire").
func (s *Server) rateLimited(x *exchange, m *Message) {
	secs := x.adm.Rate.RetryAfterSeconds()
	x.w.Header().Set("Retry-After", strconv.Itoa(secs))
	s.httpRefusal(x, m.Method, http.StatusTooManyRequests, m.ID, &Error{Code: CodeRateLimited,
		Message: "Rate limit exceeded: retry after " + strconv.Itoa(secs) + " seconds.",
		Data:    map[string]any{"retry_after_s": secs, "limit": x.adm.Rate.Limit}})
}

// call dispatches one request and returns its result or error and its audit
// row. out is the request's stream (nil inside a batch).
func (s *Server) call(x *exchange, m *Message, out *stream) (result any, rpcErr *Error, rec audit.Record) {
	md, ok := s.methods[m.Method]
	if !ok || only2026[m.Method] {
		rec = s.auditFor(x, m.Method)
		rpcErr = &Error{Code: CodeMethodNotFound, Message: "Method not found."}
		rec.Outcome = "rpc:" + strconv.Itoa(rpcErr.Code)
		return nil, rpcErr, rec
	}
	return s.dispatch(x, md, s.newRequest(x, m, out))
}

// newRequest makes the Request a handler sees, with its audit row started.
func (s *Server) newRequest(x *exchange, m *Message, out *stream) *Request {
	rec := s.auditFor(x, m.Method)
	return &Request{
		ID: m.ID, Method: m.Method, Params: m.Params, Revision: x.revision,
		Credential: x.adm.Credential, Session: x.adm.Session, Rate: x.adm.Rate,
		Audit: &rec, Started: x.started, Arrived: x.arrived, out: out, srv: s,
	}
}

// dispatch runs a known method's handler and returns its result or error
// and the request's audit row.
func (s *Server) dispatch(x *exchange, md Method, req *Request) (result any, rpcErr *Error, rec audit.Record) {
	fail := func(e *Error) (any, *Error, audit.Record) {
		req.Audit.Outcome = "rpc:" + strconv.Itoa(e.Code)
		return nil, e, *req.Audit
	}
	if req.Params != nil && !isJSONObject(req.Params) {
		return fail(InvalidParams("Invalid params: params must be an object."))
	}
	if req.Era2026() {
		if e := s.openMRTR(req); e != nil {
			return fail(e)
		}
	}
	result, err := s.invoke(x.r.Context(), md.Handler, req)
	x.ops = append(x.ops, req.ops...)
	rec = *req.Audit
	switch {
	case errors.Is(err, ErrAskCancelled) || errors.Is(err, context.Canceled):
		rec.Outcome = outcomeCancelled
		return nil, &Error{Code: CodeInternalError, Message: "The request was cancelled."}, rec
	case errors.Is(err, ErrInputRequired) && req.mrtr != nil && len(req.mrtr.asked) > 0:
		res, serr := req.mrtr.inputRequired(req.Started)
		if serr != nil {
			s.opts.Logger.ErrorContext(x.r.Context(), "seal request state", "requestId", x.reqID, "err", serr)
			return fail(&Error{Code: CodeInternalError, Message: "Internal error."})
		}
		rec.Outcome = "input_required"
		return res, nil, rec
	}
	if req.newSession != nil {
		x.create = req.newSession
		rec.SessionID = req.newSession.ID
		rec.Revision = string(req.newSession.Revision)
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			s.opts.Logger.ErrorContext(x.r.Context(), "method failed", "requestId", x.reqID, "method", req.Method, "err", err)
			e = &Error{Code: CodeInternalError, Message: "Internal error."}
		}
		if rec.Outcome == "" { // keep a refusal class the handler recorded (a resource read refused KILL_SWITCH)
			rec.Outcome = "rpc:" + strconv.Itoa(e.Code)
		}
		return nil, e, rec
	}
	if rec.Outcome == "" {
		rec.Outcome = audit.OutcomeOK
	}
	return result, nil, rec
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

// serveBatch answers a JSON-RPC batch, accepted only in 2025-03-26 sessions
// (2025-03-26 basic §Batching; removed in 2025-06-18).
func (s *Server) serveBatch(x *exchange, b *Body) {
	if !x.revision.HasBatch() {
		s.httpRefusal(x, "batch", http.StatusBadRequest, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Invalid request: JSON-RPC batches are not accepted in revision " + string(x.revision) + "."})
		return
	}
	if len(b.Messages) > maxBatch {
		s.httpRefusal(x, "batch", http.StatusBadRequest, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Invalid request: a batch may hold at most " + strconv.Itoa(maxBatch) + " messages."})
		return
	}
	if !x.adm.Rate.Allowed {
		secs := x.adm.Rate.RetryAfterSeconds()
		x.w.Header().Set("Retry-After", strconv.Itoa(secs))
		s.httpRefusal(x, "batch", http.StatusTooManyRequests, ID{}, &Error{Code: CodeRateLimited,
			Message: "Rate limit exceeded: retry after " + strconv.Itoa(secs) + " seconds.",
			Data:    map[string]any{"retry_after_s": secs, "limit": x.adm.Rate.Limit}})
		return
	}
	var out []json.RawMessage
	for _, m := range b.Messages {
		switch {
		case m.IsResponse():
			rec := s.auditFor(x, "response")
			rec.Outcome = "rpc:" + strconv.Itoa(CodeInvalidRequest)
			x.audits = append(x.audits, rec)
		case m.IsNotification():
			x.audits = append(x.audits, s.notificationAudit(x, m))
		case m.Method == "initialize":
			rec := s.auditFor(x, m.Method)
			rec.Outcome = "rpc:" + strconv.Itoa(CodeInvalidRequest)
			x.audits = append(x.audits, rec)
			out = append(out, encodeResponse(m.ID, nil, &Error{Code: CodeInvalidRequest,
				Message: "Invalid request: initialize cannot be part of a batch."}))
		default:
			result, rpcErr, rec := s.call(x, m, nil)
			x.audits = append(x.audits, rec)
			out = append(out, encodeResponse(m.ID, result, rpcErr))
		}
	}
	x.count = len(b.Messages)
	if len(out) == 0 {
		s.finish(x, http.StatusAccepted, nil, ID{})
		return
	}
	body, _ := json.Marshal(out)
	s.finish(x, http.StatusOK, body, ID{})
}

// maxBatch keeps a batch's audit rows within one store transaction.
const maxBatch = 20

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	if rev, ok := protocolHeader(r); ok && rev == Rev20260728 {
		s.methodNotAllowed(w)
		return
	}
	x, ok := s.admit(w, r, lookupID(r.Header.Get(headerSessionID)), ratelimit.LaneRead, ID{})
	if !ok {
		return
	}
	if r.Header.Get(headerSessionID) != "" && x.adm.Session == nil {
		s.httpRefusal(x, "GET /mcp", http.StatusNotFound, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Session not found: it expired or was ended; initialize a new one."})
		return
	}
	if s.opts.GETStream && x.adm.Session != nil && acceptsSSE(r.Header.Values("Accept")) {
		s.serveGETStream(x, s.streamToken(r))
		return
	}
	// Without a session, an SSE Accept or the stream switched on: 405 (MCP
	// basic/transports §Listening for Messages from the Server).
	msg := "Method not allowed: this server offers no GET stream."
	if s.opts.GETStream {
		msg = "Method not allowed: a GET stream needs a session (Mcp-Session-Id) and Accept: text/event-stream."
	}
	w.Header().Set("Allow", s.allow())
	s.httpRefusal(x, "GET /mcp", http.StatusMethodNotAllowed, ID{}, &Error{Code: CodeInvalidRequest, Message: msg})
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) {
	if rev, ok := protocolHeader(r); ok && rev == Rev20260728 {
		s.methodNotAllowed(w)
		return
	}
	raw := r.Header.Get(headerSessionID)
	x, ok := s.admit(w, r, lookupID(raw), ratelimit.LaneRead, ID{})
	if !ok {
		return
	}
	switch {
	case raw == "":
		s.httpRefusal(x, "DELETE /mcp", http.StatusBadRequest, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Bad request: the Mcp-Session-Id header names the session to end."})
	case x.adm.Session == nil:
		s.httpRefusal(x, "DELETE /mcp", http.StatusNotFound, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Session not found: it expired or was ended."})
	default:
		rec := s.auditFor(x, "DELETE /mcp")
		rec.Outcome = audit.OutcomeOK
		x.audits = append(x.audits, rec)
		x.count = s.countIfAllowed(x, 1)
		x.del = x.adm.Session.ID
		// Every unanswered question of the session is rejected, so whoever
		// waits on one stops at once.
		for _, it := range s.pendingParked(x) {
			x.ops = append(x.ops, store.UpdateOp(it.Key(), store.Update{Set: map[string]any{"status": parkedRejected}},
				store.AttrEquals("status", parkedPending)))
		}
		s.finish(x, http.StatusNoContent, nil, ID{})
	}
}

func (s *Server) methodNotAllowed(w http.ResponseWriter) {
	w.Header().Set("Allow", "POST, OPTIONS")
	writeError(w, http.StatusMethodNotAllowed, ID{}, &Error{Code: CodeInvalidRequest,
		Message: "Method not allowed: revision 2026-07-28 is served over POST only."})
}

// initialize negotiates the revision and mints the session (MCP lifecycle
// §Version Negotiation): a supported legacy revision is echoed; anything else
// is answered with LatestLegacy, never an echo of an unserved revision.
func (s *Server) initialize(ctx context.Context, req *Request) (any, error) {
	var p InitializeParams
	if err := DecodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == "" {
		return nil, InvalidParams("Invalid params: protocolVersion is required.")
	}
	caps := p.Capabilities
	if len(caps) == 0 || string(caps) == "null" {
		caps = json.RawMessage(`{}`)
	} else if !isJSONObject(caps) {
		return nil, InvalidParams("Invalid params: capabilities must be an object.")
	}
	rev := Revision(p.ProtocolVersion)
	if !rev.IsLegacy() {
		rev = LatestLegacy
	}
	now := req.Started
	c := req.Credential
	req.newSession = &Session{
		ID: NewSessionID(), Tenant: c.Tenant, Principal: c.Owner, CredentialID: c.ID,
		Revision: rev, ClientCapabilities: caps, ClientInfo: p.ClientInfo,
		CreatedAt: now.UTC(), ExpiresAt: now.Add(s.opts.SessionTTL).UTC(),
	}
	info := s.opts.ServerInfo
	if !rev.HasStructuredOutput() {
		info.Title = "" // Implementation.title is new in 2025-06-18
	}
	return InitializeResult{
		ProtocolVersion: rev, Capabilities: s.opts.Capabilities,
		ServerInfo: info, Instructions: s.instructionsFor(ctx, req),
	}, nil
}

// setLevel stores the session's logging level (MCP server/utilities/logging):
// notifications/message below it are not sent.
func (s *Server) setLevel(_ context.Context, req *Request) (any, error) {
	var p struct {
		Level string `json:"level"`
	}
	if err := DecodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if !ValidLogLevel(p.Level) {
		return nil, InvalidParams("Invalid params: level must be one of debug, info, notice, warning, error, critical, alert, emergency.")
	}
	if req.Session == nil {
		return nil, InvalidParams("Invalid params: logging/setLevel needs a session.")
	}
	req.AddOp(store.UpdateOp(SessionKey(req.Session.ID),
		store.Update{Set: map[string]any{"log_level": p.Level}}, store.Exists()))
	return struct{}{}, nil
}

// DecodeParams decodes request params (absent params decode as {}).
func DecodeParams(raw json.RawMessage, v any) *Error {
	if raw == nil {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return InvalidParams("Invalid params: " + describeJSONError(err))
	}
	return nil
}

func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return "the field '" + te.Field + "' has the wrong type."
	}
	return "the params do not match the method's schema."
}

func isJSONObject(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return true
		default:
			return false
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, status int, id ID, e *Error) {
	writeJSON(w, status, encodeResponse(id, nil, e))
}
