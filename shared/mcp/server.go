// Package mcp is Custody's Model Context Protocol layer: JSON-RPC 2.0
// messages, protocol revisions, sessions, sealed list cursors and the
// streamable HTTP transport on one endpoint (MCP basic/transports). It knows
// nothing of AWS; every piece of state it keeps is a store row, so any
// request may land on any instance.
//
// The transport orders each POST as docs/architecture.md "The request path"
// draws it: Origin/Host, body limit and JSON-RPC shape first (the params
// of each message are decoded once, here, into the Params every later step
// reads); then the credential, authenticated from scratch through the Gate
// (one batch read of credential, session and rate bucket); then the
// session, bound to the principal; then the method, looked up in the
// method table, which carries each method's facts: its name parameter,
// lane, eras and whether it may ask the client.
//
// Answers follow the write (docs/decisions.md "Pipeline choices"): every
// authenticated request ends in one write through Gate.Commit — the rate
// reservation, its audit rows, any session change and the method's own
// conditional writes (Request.Write), in one transaction — and only after
// that write is the answer settled and sent. When a method's condition
// fails, its OnConflict answer is used and the rate count and audit row are
// committed in one more write; when the rate reservation fails because
// concurrent requests spent the budget, the request is answered as
// rate-limited. A few writes happen before the answer for state other
// instances must see at once: a question parked for the client (and its
// withdrawal) and a GET stream's delivered outbox rows.
//
// Files, by concern: server.go (options, the method table, routing),
// transport.go (the HTTP edge), exchange.go (admission, the commit, the
// answer), dispatch.go (one message to its handler), lifecycle.go
// (initialize, logging, DELETE, GET), batch.go, answers.go (the client's
// answers and cancellations), era2026.go, mrtr.go, peer.go, getstream.go.
package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/store"
)

// MethodHandler serves one method. It returns the result, or an error: a
// *Error is answered as that JSON-RPC error; any other error is logged and
// answered -32603 without detail.
type MethodHandler func(ctx context.Context, req *Request) (any, error)

// Eras is a set of protocol eras.
type Eras uint8

// The eras (docs/protocol.md "Revisions and what changes between them").
const (
	// Era2025 is every legacy revision, 2024-11-05 to 2025-11-25.
	Era2025 Eras = 1 << iota
	// Era2026 is 2026-07-28.
	Era2026
	// BothEras is both.
	BothEras = Era2025 | Era2026
)

// Method is one row of the method table: a handler with the facts the
// transport needs about it, so no switch on method names lives outside
// this table.
type Method struct {
	Handler MethodHandler
	// Eras are the eras the method is served in; zero means both. Outside
	// them it is unknown: legacy 200 + -32601, 2026-07-28 404 + -32601.
	Eras Eras
	// NameParam is the params member naming what the method acts on
	// ("name" for tools/call and prompts/get, "uri" for resources/read): a
	// 2026-era request's Mcp-Name header must equal it, and a request state
	// is bound to it. "" for methods that name nothing.
	NameParam string
	// MayAsk marks a method whose handler may ask the client (sampling,
	// elicitation, roots): in the 2026 era its request carries the answers
	// and state of multi-round-trip requests (mrtr.go).
	MayAsk bool
	// Lane picks the rate lane from the params; nil means the read lane.
	Lane func(p *Params) ratelimit.Lane
	// RatesItself marks a method that answers a rate refusal in its own
	// result (tools/call answers isError RATE_LIMITED); others get 429.
	RatesItself bool
	// RateLimited builds a RatesItself method's rate refusal for req, used
	// when the reservation fails at commit; nil answers 429 like others.
	RateLimited func(req *Request) any
	// Cacheable marks a list, read or discover method: its 2026-era results
	// carry ttlMs and cacheScope.
	Cacheable bool
	// NoBatch refuses the method inside a JSON-RPC batch with -32600
	// (initialize; write tools refuse themselves, per tool).
	NoBatch bool
	// ParamHeaders lists the Mcp-Param-* headers a 2026-era request of the
	// method must carry, with the values the body holds (SEP-2243;
	// tools/call: the arguments its tool annotates with x-mcp-header).
	ParamHeaders func(p *Params) []ParamHeader
}

// servedIn reports whether the method is served in the request's era.
func (m Method) servedIn(era2026 bool) bool {
	eras := m.Eras
	if eras == 0 {
		eras = BothEras
	}
	if era2026 {
		return eras&Era2026 != 0
	}
	return eras&Era2025 != 0
}

// Notification is one row of the notification table.
type Notification struct {
	// Eras the notification is known in; zero means both. A legacy
	// notification of no row is accepted (202) and audited; a 2026-era one
	// is 404, like an unknown method.
	Eras Eras
	// Handle may add the notification's writes to its exchange (x) and
	// returns nothing: a notification is never answered.
	handle func(s *Server, x *exchange, m *Message)
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
	// client's answer; 0 means 100 ms and 2 s (docs/decisions.md constants).
	PollMin, PollMax time.Duration
	// GETStream offers the held GET stream for server-initiated messages.
	GETStream bool
	// Buffered says the front door delivers an answer only once the handler
	// has returned (an HTTP API's Lambda integration, a REST API integration
	// in BUFFERED mode; docs/decisions.md "Front doors"). No POST is then
	// answered as text/event-stream, whatever the client accepts: the answer
	// is application/json, the notifications that would have preceded it are
	// dropped, and a question to the client fails at once with ErrNoStream
	// (a tool answers it as its "cannot ask" refusal) instead of waiting for
	// an answer to a request the client could never see. Buffered also turns
	// GETStream off: GET /mcp is 405.
	Buffered bool
	// MaxGETStreams caps the GET streams one session holds at once; 0
	// means 3. A stream beyond the cap is refused 429.
	MaxGETStreams int
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
	// read deadlines (net/http; not Lambda): a body that stops arriving is
	// refused, not a held connection (0: 30 s).
	BodyReadTimeout time.Duration
	// AnswerOps, when set, adds writes to the transaction that records the
	// client's answer to a parked question (the hand-off binding's move,
	// issue 15); nil adds none.
	AnswerOps AnswerOps
	// BoundQuestions, when set, resolves the client's answers to questions
	// bound to durable work rather than to the session: a task's questions,
	// sent on its tasks/result stream and parked under the task's
	// credential (package tasks), so that deleting the session orphans
	// nothing. nil: only the session's own questions are answered.
	BoundQuestions BoundQuestions
	// ParamsDecoded, when set, is told after each request how many times
	// its params were decoded (Params.Decodes): the measurement hook of
	// "params parsed once" (issue 9). Nil in production.
	ParamsDecoded func(method string, decodes int)
}

// Server is the streamable HTTP endpoint. It is an http.Handler.
type Server struct {
	opts          Options
	methods       map[string]Method
	notifications map[string]Notification
}

// NewServer returns a server with the lifecycle methods registered:
// initialize, ping, logging/setLevel (2025 era) and server/discover (2026).
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
	if opts.Buffered {
		opts.GETStream = false // a held stream cannot be carried
	}
	if opts.MaxGETStreams == 0 {
		opts.MaxGETStreams = 3
	}
	s := &Server{opts: opts, methods: map[string]Method{}, notifications: map[string]Notification{}}
	s.Register("initialize", Method{Handler: s.initialize, Eras: Era2025, NoBatch: true})
	s.Register("ping", Method{Handler: func(context.Context, *Request) (any, error) { return struct{}{}, nil }, Eras: Era2025})
	s.Register("logging/setLevel", Method{Handler: s.setLevel, Eras: Era2025})
	s.Register("server/discover", Method{Handler: s.discover, Eras: Era2026, Cacheable: true})
	// Closing the stream is the 2026 cancellation: the notification is
	// accepted there and does nothing.
	s.notifications["notifications/cancelled"] = Notification{handle: (*Server).cancelled}
	s.notifications["notifications/initialized"] = Notification{Eras: Era2025}
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

// method looks a method up in the table for an era.
func (s *Server) method(name string, era2026 bool) (Method, bool) {
	md, ok := s.methods[name]
	if !ok || !md.servedIn(era2026) {
		return Method{}, false
	}
	return md, true
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
