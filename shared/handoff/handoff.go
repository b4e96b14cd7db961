// Package handoff is the URL-mode hand-off of a filed proposal (issue 15;
// docs/decisions.md "The hand-off"): after propose_action files a proposal
// in a 2025-11-25 session whose client declared elicitation.url, the
// tools/call's SSE stream carries an elicitation/create in URL mode whose
// link, <public base>/approvals/h/<elicitation id>, opens the firm's
// approval page for the owner of the filing credential. It is a
// convenience, never an authority: the link pre-authorizes nothing, and
// the durable proposal and the approval page decide everything.
//
// This package holds the binding row (HANDOFF#<sha256(elicitation id)> /
// HANDOFF) and its states, the writes that move it — the client's answer
// (AnswerOps), the decision that ends its proposal (Completion) — and the
// rules for who may open its link (Binding.OpenableBy). It imports neither
// shared/mcp nor shared/tools, so the approval page may use it.
package handoff

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/store"
)

// Constants of the hand-off (docs/decisions.md "Time and size constants").
const (
	// AnswerTTL is how long the parked elicitation/create waits for the
	// client's answer (HANDOFF_ANSWER_TTL): a later answer is 400 and moves
	// nothing.
	AnswerTTL = time.Hour
	// MaxReviewSet is how many pending proposals the link's page shows: the
	// bound one first, then up to 24 others of the owner's credentials.
	MaxReviewSet = 25
	// RowGrace is how long a binding row outlives its proposal's expiry in
	// the engine, so the sweeper's expiry — which comes after it — still
	// finds the binding to complete; the link itself stops at the expiry
	// (Binding.OpenableBy), as a task's rows expire a day after its ttl.
	RowGrace = 24 * time.Hour
	// IDPrefix starts every elicitation id: "eli_" + 32 hex characters.
	IDPrefix = "eli_"
	// Message is the elicitation's fixed text: it names no user, key,
	// matter, client, action or approval.
	Message = "A proposal was filed for a person at the firm to decide. Open this link to review it on the firm's approval page: you sign in there, and opening the link approves nothing."
	// Method is the server-to-client request that carries the hand-off.
	Method = "elicitation/create"
	// CompleteMethod is the notification that tells the initiating session
	// the proposal was decided (MCP 2025-11-25 client/elicitation, URL mode).
	CompleteMethod = "notifications/elicitation/complete"
)

// State is a binding's state.
type State string

// Binding states: sent when filed; accepted, declined or cancelled by the
// client's first answer; completed when its proposal ended while sent or
// accepted.
const (
	StateSent      State = "sent"
	StateAccepted  State = "accepted"
	StateDeclined  State = "declined"
	StateCancelled State = "cancelled"
	StateCompleted State = "completed"
)

// NewID returns a fresh elicitation id: "eli_" + 32 hex characters from
// crypto/rand.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return IDPrefix + hex.EncodeToString(b[:])
}

// ValidID reports whether s is shaped as an elicitation id, so nothing
// else costs a store read.
func ValidID(s string) bool {
	rest, ok := strings.CutPrefix(s, IDPrefix)
	if !ok || len(rest) != 32 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Key is the binding row of elicitation id: HANDOFF#<sha256 hex> /
// HANDOFF (docs/decisions.md "Key layout").
func Key(id string) store.Key {
	sum := sha256.Sum256([]byte(id))
	return store.Key{PK: "HANDOFF#" + hex.EncodeToString(sum[:]), SK: "HANDOFF"}
}

// URL is the link of elicitation id below the configured public base
// (never a request's Host or X-Forwarded-*): it carries only the id.
func URL(publicBase, id string) string {
	return strings.TrimSuffix(publicBase, "/") + "/approvals/h/" + id
}

// Binding is a decoded binding row.
type Binding struct {
	ID           string // the elicitation id (not stored: the key is its hash)
	Tenant       string
	Owner        string // the principal who owns the filing credential
	CredentialID string
	ApprovalID   string // the proposal id
	CaseID       string
	SessionID    string // the initiating session
	RequestID    string // the tools/call's JSON-RPC id, as JSON
	State        State
	ExpiresAt    time.Time // the proposal's expiry
	Version      int64
}

// Attributes of the binding row.
const (
	attrTenant     = "tenant"
	attrOwner      = "owner"
	attrCredential = "credential_id"
	attrApproval   = "approval_id"
	attrCase       = "case_id"
	attrSession    = "session_id"
	attrRequest    = "jsonrpc_id"
	attrState      = "state"
	attrExpires    = "proposal_expires_at" // epoch seconds
)

// Item is the binding row as filed: state sent, expiring with its
// proposal (the engine keeps the row RowGrace longer).
func (b *Binding) Item() store.Item {
	k := Key(b.ID)
	return store.Item{PK: k.PK, SK: k.SK, Version: 1, ExpiresAt: b.ExpiresAt.Add(RowGrace).Unix(), Attrs: map[string]any{
		attrExpires: b.ExpiresAt.Unix(),
		attrTenant:  b.Tenant, attrOwner: b.Owner, attrCredential: b.CredentialID, attrApproval: b.ApprovalID,
		attrCase: b.CaseID, attrSession: b.SessionID, attrRequest: b.RequestID, attrState: string(StateSent),
	}}
}

// Decode reads a binding row of elicitation id.
func Decode(id string, it store.Item) *Binding {
	return &Binding{ID: id, Tenant: it.String(attrTenant), Owner: it.String(attrOwner),
		CredentialID: it.String(attrCredential), ApprovalID: it.String(attrApproval), CaseID: it.String(attrCase),
		SessionID: it.String(attrSession), RequestID: it.String(attrRequest), State: State(it.String(attrState)),
		ExpiresAt: time.Unix(it.Int(attrExpires), 0).UTC(), Version: it.Version}
}

// OpenableBy reports whether the link opens for principal of tenant at
// now: the binding's owner, in its tenant, while it is sent, accepted or
// completed (a completed one shows the owner's other proposals) and
// unexpired. Everything else — another principal, another tenant, a
// declined or cancelled hand-off, an expired one — gets one answer.
func (b *Binding) OpenableBy(tenant, principal string, now time.Time) bool {
	if b == nil || b.Tenant == "" || b.Owner == "" || b.Tenant != tenant || b.Owner != principal {
		return false
	}
	if !now.Before(b.ExpiresAt) {
		return false
	}
	switch b.State {
	case StateSent, StateAccepted, StateCompleted:
		return true
	}
	return false
}

// Parked-row attribute naming the binding whose hand-off a parked
// elicitation/create carries (its key's PK; the SK is fixed).
const ParkedAttr = "handoff"

// AnswerOps are the writes that move the binding named by a parked
// question row when the client answers it (mcp.Options.AnswerOps): result
// {"action":"accept"} → accepted, "decline" → declined, "cancel" →
// cancelled, each only from sent (the first answer wins: the parked row's
// own condition lets one answer through, and a binding already completed
// stays completed). A row of another question, or an error answer, moves
// nothing.
func AnswerOps(parked store.Item, result json.RawMessage, isError bool) []store.Op {
	pk := parked.String(ParkedAttr)
	if pk == "" || isError {
		return nil
	}
	var r struct {
		Action string `json:"action"`
	}
	_ = json.Unmarshal(result, &r)
	var to State
	switch r.Action {
	case "accept":
		to = StateAccepted
	case "decline":
		to = StateDeclined
	case "cancel":
		to = StateCancelled
	default:
		return nil
	}
	return []store.Op{store.UpdateOp(store.Key{PK: pk, SK: "HANDOFF"},
		store.Update{Set: map[string]any{attrState: string(to)}}, store.AttrEquals(attrState, string(StateSent)))}
}
