package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/store"
)

// Size bounds of what initialize stores in the session row (issue 8, item
// 4): a client's declared capabilities and its clientInfo are kept for the
// session's life, so an over-size one is refused with HTTP 400 and -32602
// saying which field and what the bound is.
const (
	// MaxCapabilitiesBytes bounds initialize's capabilities object.
	MaxCapabilitiesBytes = 16 << 10
	// MaxClientInfoBytes bounds initialize's clientInfo object.
	MaxClientInfoBytes = 2 << 10
)

// initialize negotiates the revision and mints the session (MCP lifecycle
// §Version Negotiation): a supported legacy revision is echoed; anything else
// is answered with LatestLegacy, never an echo of an unserved revision.
func (s *Server) initialize(ctx context.Context, req *Request) (any, error) {
	if raw := req.Params.Get("capabilities"); len(raw) > MaxCapabilitiesBytes {
		return nil, tooLargeParam("capabilities", MaxCapabilitiesBytes)
	}
	if raw := req.Params.Get("clientInfo"); len(raw) > MaxClientInfoBytes {
		return nil, tooLargeParam("clientInfo", MaxClientInfoBytes)
	}
	var p InitializeParams
	if err := req.Params.Decode(&p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == "" {
		return nil, InvalidParams("Invalid params: protocolVersion is required.")
	}
	caps := p.Capabilities
	if isNull(caps) {
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
	served := s.opts.Capabilities
	if !rev.HasTasks() {
		served.Tasks = nil // tasks are 2025-11-25's (MCP basic/utilities/tasks)
	}
	return InitializeResult{
		ProtocolVersion: rev, Capabilities: served,
		ServerInfo: info, Instructions: s.instructionsFor(ctx, req),
	}, nil
}

// tooLargeParam is the 400 + -32602 of a params member over its bound.
func tooLargeParam(name string, limit int) *Error {
	return &Error{Code: CodeInvalidParams, httpStatus: http.StatusBadRequest,
		Message: "Invalid params: " + name + " is larger than the " + strconv.Itoa(limit) + "-byte limit."}
}

// setLevel stores the session's logging level (MCP server/utilities/logging):
// notifications/message below it are not sent.
func (s *Server) setLevel(_ context.Context, req *Request) (any, error) {
	level, ok := req.Params.String("level")
	if !ok || !ValidLogLevel(level) {
		return nil, InvalidParams("Invalid params: level must be one of debug, info, notice, warning, error, critical, alert, emergency.")
	}
	if req.Session == nil {
		return nil, InvalidParams("Invalid params: logging/setLevel needs a session.")
	}
	req.Write(Writes{
		Ops: []store.Op{store.UpdateOp(SessionKey(req.Session.ID),
			store.Update{Set: map[string]any{"log_level": level}}, store.Exists())},
		OnConflict: func(context.Context, int) (any, error) {
			return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: the session ended before its logging level could be set."}
		},
	})
	return struct{}{}, nil
}

// get serves GET /mcp: the held stream of a session's server-initiated
// messages, where offered.
func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	if rev, ok := protocolHeader(r); ok && rev == Rev20260728 {
		s.methodNotAllowed(w)
		return
	}
	x, ok := s.admit(w, r, admitSpec{sessionID: lookupID(r.Header.Get(headerSessionID)), lane: ratelimit.LaneRead})
	if !ok {
		return
	}
	defer x.done()
	if r.Header.Get(headerSessionID) != "" && x.adm.Session == nil {
		s.httpRefusal(x, "GET /mcp", http.StatusNotFound, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Session not found: it expired or was ended; initialize a new one."})
		return
	}
	if s.opts.GETStream && x.adm.Session != nil && acceptsSSE(r.Header.Values("Accept")) {
		if !x.adm.Rate.Allowed {
			s.rateLimited(x, &Message{Method: "GET /mcp"})
			return
		}
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

// delete serves DELETE /mcp: the session ends (its row is deleted under an
// Exists condition, so of concurrent DELETEs one answers 204 and the others
// 404) and every question still pending in it is rejected, so whoever
// waits on one stops at once.
func (s *Server) delete(w http.ResponseWriter, r *http.Request) {
	if rev, ok := protocolHeader(r); ok && rev == Rev20260728 {
		s.methodNotAllowed(w)
		return
	}
	raw := r.Header.Get(headerSessionID)
	x, ok := s.admit(w, r, admitSpec{sessionID: lookupID(raw), lane: ratelimit.LaneRead})
	if !ok {
		return
	}
	defer x.done()
	notFound := &Error{Code: CodeInvalidRequest, Message: "Session not found: it expired or was ended."}
	switch {
	case raw == "":
		s.httpRefusal(x, "DELETE /mcp", http.StatusBadRequest, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Bad request: the Mcp-Session-Id header names the session to end."})
	case x.adm.Session == nil:
		s.httpRefusal(x, "DELETE /mcp", http.StatusNotFound, ID{}, notFound)
	default:
		rec := s.newAudit(x, "DELETE /mcp")
		rec.Outcome = audit.OutcomeOK
		x.count = s.countIfAllowed(x, 1)
		x.del = x.adm.Session
		for _, it := range s.pendingParked(x) {
			// A question answered meanwhile keeps its answer: its reject is
			// dropped and the rest written.
			x.addWrites(Writes{Ops: []store.Op{store.UpdateOp(it.Key(),
				store.Update{Set: map[string]any{"status": parkedRejected}},
				store.AttrEquals("status", parkedPending))}}, nil)
		}
		if err := s.commit(x); err != nil {
			s.commitFailed(x, ID{}, err)
			return
		}
		if x.goneStatus {
			s.logOutcome(x, http.StatusNotFound)
			writeError(w, http.StatusNotFound, ID{}, notFound)
			return
		}
		s.logOutcome(x, http.StatusNoContent)
		w.WriteHeader(http.StatusNoContent)
	}
}
