package mcp

import (
	"encoding/json"
	"time"

	"github.com/custodymcp/custody/shared/store"
)

// URL elicitation sent without waiting (issue 15, docs/protocol.md
// "Elicitation"): a tool may tell the client to open a link and answer at
// once, instead of parking a question and polling for the answer (Ask).
// The question row is written in the request's one transaction, so the
// client's answer — a separate POST, on any instance — is judged like any
// other (serveAnswer), and Options.AnswerOps adds what it must move.

// URLTarget is where a URL elicitation that does not wait can go: the
// request's session and its JSON-RPC id.
type URLTarget struct {
	SessionID      string
	SessionExpires time.Time
	// RequestID is the request's JSON-RPC id as JSON ("1", "\"abc\"").
	RequestID string
}

// URLElicitationTarget reports whether the request may carry a URL-mode
// elicitation/create on its own stream without waiting: a 2025-11-25
// session whose client declared elicitation.url (not {}, not form only),
// a POST whose client accepts text/event-stream on a door that streams,
// outside a batch. Never in the 2026-07-28 era, where URL mode is an
// input_required result that would replace the answer (docs/protocol.md
// "Elicitation"); never in an older revision.
func (r *Request) URLElicitationTarget() (URLTarget, bool) {
	if r == nil || r.meta != nil || r.mrtr != nil || r.srv == nil || r.Session == nil ||
		r.Session.Revision != Rev20251125 || r.out == nil || !r.out.allowed || r.InBatch {
		return URLTarget{}, false
	}
	if !Declared(r.Session.ClientCapabilities, "elicitation/create", map[string]any{"mode": "url"}) {
		return URLTarget{}, false
	}
	return URLTarget{SessionID: r.Session.ID, SessionExpires: r.Session.ExpiresAt, RequestID: string(r.ID.raw)}, true
}

// NewQuestion returns the JSON-RPC id and the row of a question parked in
// session sessionID for credential credentialID, asked on behalf of the
// request with JSON-RPC id origin (so cancelling that request withdraws
// it), pending until expiresAt. The caller writes the row in its own
// transaction and sends the request with SendRequest once it committed.
func NewQuestion(sessionID, credentialID, method, origin string, expiresAt time.Time) (id string, row store.Item) {
	id = newParkedID()
	row = QuestionRow(ParkedKey(sessionID, id), credentialID, method, expiresAt.Unix())
	row.Attrs["origin"] = origin
	return id, row
}

// AnswerOps adds writes to the transaction that records a client's answer
// to a parked question (Options.AnswerOps): parked is the question row as
// read, result the client's result (nil with isError). Its writes are a
// group of their own: a condition of theirs that fails drops them, never
// the answer.
type AnswerOps func(parked store.Item, result json.RawMessage, isError bool) []store.Op
