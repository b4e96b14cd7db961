package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/store"
)

// serveAnswer takes the client's response to a parked server-to-client
// request: 202 when it resolves a pending question this credential was asked
// in this session, or one of its durable work's (Options.BoundQuestions,
// whose effects then follow the commit); otherwise 400 with an id-less error, and no parked row is
// touched (docs/decisions.md "Answers on the wire").
func (s *Server) serveAnswer(x *exchange, m *Message) {
	refusal := &Error{Code: CodeInvalidRequest, Message: "Bad request: no server request with that id is pending in this session."}
	id, ok := m.ID.stringID()
	if !ok || s.opts.Store == nil {
		s.httpRefusal(x, "response", http.StatusBadRequest, ID{}, refusal)
		return
	}
	var (
		key   store.Key
		after []Effect
	)
	switch {
	case validParkedID(id):
		key = ParkedKey(x.adm.Session.ID, id)
	case s.opts.BoundQuestions != nil:
		// A question of durable work (a task's): parked under the work's
		// owner, not the session, so a new session of the same credential
		// may answer it.
		if key, after, ok = s.opts.BoundQuestions(x.adm.Credential, id); !ok {
			s.httpRefusal(x, "response", http.StatusBadRequest, ID{}, refusal)
			return
		}
	default:
		s.httpRefusal(x, "response", http.StatusBadRequest, ID{}, refusal)
		return
	}
	it, err := s.opts.Store.Get(x.r.Context(), key)
	if err != nil || it.String("status") != parkedPending || it.String("credential_id") != x.adm.Credential.ID {
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			s.commitFailed(x, ID{}, err)
			return
		}
		s.httpRefusal(x, "response", http.StatusBadRequest, ID{}, refusal)
		return
	}
	if msg := invalidAnswer(it.String("method"), m); msg != "" {
		// Not an answer to what was asked: refused, and the question stays
		// pending for a real one (basic/transports: a server that cannot
		// accept the input answers an HTTP error status).
		s.httpRefusal(x, "response", http.StatusBadRequest, ID{}, &Error{Code: CodeInvalidParams, Message: msg})
		return
	}
	rec := s.newAudit(x, "response")
	rec.Outcome = audit.OutcomeAccepted
	x.count = s.countIfAllowed(x, 1)
	lost := false // the question was answered or withdrawn meanwhile
	var moves *writeGroup
	x.addWrites(Writes{Ops: []store.Op{answerOp(key, x.adm.Credential.ID, m)}, After: after},
		func(context.Context, int) {
			lost = true
			rec.Outcome = "http:400"
			if moves != nil {
				moves.dropped = true // nothing moves for an answer not taken
			}
		})
	if s.opts.AnswerOps != nil {
		// A group of its own: a condition of it that fails (the binding
		// moved already) drops it and leaves the answer standing.
		if ops := s.opts.AnswerOps(it, json.RawMessage(m.Result), m.Error != nil); len(ops) > 0 {
			moves = x.addWrites(Writes{Ops: ops}, func(context.Context, int) {})
		}
	}
	if err := s.commit(x); err != nil {
		s.commitFailed(x, ID{}, err)
		return
	}
	if lost {
		s.logOutcome(x, http.StatusBadRequest)
		writeError(x.w, http.StatusBadRequest, ID{}, refusal)
		return
	}
	s.logOutcome(x, http.StatusAccepted)
	x.w.WriteHeader(http.StatusAccepted)
}

// validParkedID reports whether id could name a parked request.
func validParkedID(id string) bool {
	return len(id) > 2 && len(id) <= 64 && id[:2] == "s-" && ValidSessionID(id)
}

// cancelled withdraws the session's pending questions that were asked for
// the request the client cancels (MCP basic/utilities/cancellation), so the
// instance waiting on them stops. A question answered meanwhile is left
// as it is.
func (s *Server) cancelled(x *exchange, m *Message) {
	origin := bytes.TrimSpace(m.Params.Get("requestId"))
	if s.opts.Store == nil || len(origin) == 0 {
		return
	}
	for _, it := range s.pendingParked(x) {
		if it.String("origin") == string(origin) && it.String("credential_id") == x.adm.Credential.ID {
			x.addWrites(Writes{Ops: []store.Op{store.UpdateOp(it.Key(),
				store.Update{Set: map[string]any{"status": parkedCancelled}},
				store.AttrEquals("status", parkedPending))}}, nil)
		}
	}
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

// invalidAnswer says why a client's result cannot answer the parked
// request of method, or "": an elicitation/create result must carry an
// action of accept, decline or cancel (MCP 2025-11-25 client/elicitation,
// ElicitResult). An error response answers any request.
func invalidAnswer(method string, m *Message) string {
	if method != "elicitation/create" || m.Error != nil {
		return ""
	}
	var r struct {
		Action string `json:"action"`
	}
	if json.Unmarshal(m.Result, &r) != nil {
		return "Invalid params: an elicitation result must be an object with an action."
	}
	switch r.Action {
	case "accept", "decline", "cancel":
		return ""
	}
	return "Invalid params: an elicitation result's action must be accept, decline or cancel."
}
