package proposals

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/sweep"
)

// Constants of the proposal ledger (docs/decisions.md "Time and size
// constants").
const (
	// MaxPending is how many pending agent proposals a matter holds.
	MaxPending = 25
	// Life is a proposal's default life; configurable within [MinLife,
	// MaxLife].
	Life    = 7 * 24 * time.Hour
	MinLife = time.Hour
	MaxLife = 30 * 24 * time.Hour
	// MaxReason bounds the agent's reason, in characters.
	MaxReason = 2000
	// ExpiryKind is the proposals' kind in the sweeper index.
	ExpiryKind = "proposal"
)

// Status is a proposal's state (docs/contracts.md §6).
type Status string

// Proposal statuses.
const (
	StatusPending  Status = "pending"
	StatusApproved Status = "approved"
	StatusDeclined Status = "declined"
	StatusDenied   Status = "denied"
	StatusExpired  Status = "expired"
)

// Statuses lists every status, in a fixed order.
func Statuses() []Status {
	return []Status{StatusPending, StatusApproved, StatusDeclined, StatusDenied, StatusExpired}
}

// RequestedBy is who asked: a reference to the principal acting through a
// credential, never a snapshot of its capabilities (docs/contracts.md §6):
// `{"kind":"principal","ref":{"type":"api_key","tenant",…}}`. The approval
// re-reads the credential and its owner by it. A proposal without it is
// never decided.
type RequestedBy struct {
	Kind string         `json:"kind"`
	Ref  auth.Reference `json:"ref"`
}

// Decision is how a decided proposal was decided.
type Decision struct {
	// Code is the denial code of docs/contracts.md §6 ("" for an approval
	// or a withdrawal).
	Code      string    `json:"code,omitempty"`
	DecidedBy string    `json:"decided_by,omitempty"`
	DecidedAt time.Time `json:"decided_at"`
}

// Proposal is one filed proposal. Everything but Status, Decision and
// UpdatedAt is immutable once filed.
type Proposal struct {
	ID     string `json:"id"`
	Tenant string `json:"tenant"`
	CaseID string `json:"case_id"`
	Action string `json:"action"`
	// Args are the stripped, validated args as canonical JSON.
	Args json.RawMessage `json:"args"`
	// ArgsDigest is the SHA-256 of the call as submitted (the action and
	// its args before stripping), which a retry with the same idempotency
	// key must repeat (CallDigest).
	ArgsDigest string  `json:"args_digest"`
	Target     Target  `json:"target"`
	Cites      []Ref   `json:"cites,omitempty"`
	Impact     *Impact `json:"impact"`
	// The registry's answers when it was filed (the approval page
	// re-derives them from the live registry).
	WhatWillHappen   string `json:"what_will_happen"`
	DeliverableNoun  string `json:"deliverable_noun"`
	SupervisionFloor Floor  `json:"supervision_floor"`
	ConfirmRequired  bool   `json:"confirm_required"`
	Conflict         bool   `json:"conflict"`
	BatchEligible    bool   `json:"batch_eligible"`
	Basis            *Basis `json:"basis,omitempty"`
	// Reason is the agent's reason, as it gave it: unverified.
	Reason            string      `json:"reason"`
	OverrideAttempted bool        `json:"override_attempted"`
	StrippedFields    []string    `json:"stripped_fields"`
	RequestedBy       RequestedBy `json:"requested_by"`
	// CredentialKeyHash is the requesting credential's key hash
	// (auth.Credential.KeyHash): a pointer that lets the approval page read
	// the credential row in its one batch read, never authority — the row
	// found must still name requested_by's credential, tenant and owner
	// (gate.ReadmitOptions.KeyHash is the same pointer). Empty: the
	// credential is looked up by its id.
	CredentialKeyHash string `json:"credential_key_hash,omitempty"`
	// FiledVia is the tool that filed it (propose_action, add_case_note).
	FiledVia string `json:"filed_via"`
	// Handoff names the URL-mode hand-off filed with it (issue 15), nil
	// when none was: the decision that ends it completes the binding.
	Handoff   *HandoffRef `json:"handoff,omitempty"`
	CreatedAt time.Time   `json:"created_at"`
	ExpiresAt time.Time   `json:"expires_at"`

	Status    Status    `json:"-"`
	Decision  *Decision `json:"-"`
	UpdatedAt time.Time `json:"-"`
	// Version is the row's version (optimistic concurrency of decisions).
	Version int64 `json:"-"`
}

// HandoffRef names a proposal's hand-off (package handoff): its
// elicitation id and the session that filed it, so the transaction that
// ends the proposal reads the binding and the session row in its one batch
// read and posts notifications/elicitation/complete to that session only.
type HandoffRef struct {
	ID      string `json:"id"`
	Session string `json:"session"`
}

// ID is the proposal id of (credential id, matter, idempotency key): "prp_"
// + 32 hex characters of the SHA-256 of the JSON array of the three, so a
// retry names the same row and no separator can make two triples collide.
func ID(credentialID, matter, key string) string {
	b, _ := json.Marshal([]string{credentialID, matter, key})
	sum := sha256.Sum256(b)
	return "prp_" + hex.EncodeToString(sum[:16])
}

// CallDigest is the digest of a call's identity beside its key: the action
// and its args exactly as submitted (canonical JSON: keys sorted, numbers
// as written). Two calls with one key are the same call when their digests
// are equal.
func CallDigest(action string, submitted map[string]any) (string, error) {
	b, err := json.Marshal(map[string]any{"action": action, "args": submitted})
	if err != nil {
		return "", fmt.Errorf("digest %s args: %w", action, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// StatusAt is the proposal's status as every reader must take it at now: a
// pending proposal past its expiry is expired, swept or not.
func (p *Proposal) StatusAt(now time.Time) Status {
	if p.Status == StatusPending && !now.Before(p.ExpiresAt) {
		return StatusExpired
	}
	return p.Status
}

// Sort-key prefixes of the ledger's rows.
const (
	skProposal = "PROP#"
	skInbox    = "PENDING#"
	skCounter  = "PROPCOUNT"
	skConfig   = "ACTION#"
)

// Key is the proposal row.
func Key(tenant, matter, id string) store.Key {
	return store.Key{PK: keyspace.MatterPK(tenant, matter), SK: skProposal + id}
}

// InboxKey is the proposal's inbox row, there while it is pending.
func InboxKey(tenant, matter string, created time.Time, id string) store.Key {
	return store.Key{PK: keyspace.MatterPK(tenant, matter), SK: InboxPrefix + created.UTC().Format(keyspace.SortableTimeLayout) + "#" + id}
}

// InboxPrefix starts the sort key of every inbox row of a matter: the
// approval page queries it, oldest first.
const InboxPrefix = skInbox

// PointerKey is the requester's pointer to the proposal.
func PointerKey(tenant, credentialID string, created time.Time, id string) store.Key {
	return store.Key{PK: keyspace.TenantCredentialPK(tenant, credentialID), SK: PointerPrefix + created.UTC().Format(keyspace.SortableTimeLayout) + "#" + id}
}

// PointerPrefix starts the sort key of every pointer of a credential.
const PointerPrefix = skProposal

// PointerPartition is the partition of a credential's pointers.
func PointerPartition(tenant, credentialID string) string {
	return keyspace.TenantCredentialPK(tenant, credentialID)
}

// CounterKey is the matter's pending counter (attribute "pending").
func CounterKey(tenant, matter string) store.Key {
	return store.Key{PK: keyspace.MatterPK(tenant, matter), SK: skCounter}
}

// CounterAttr is the counter's attribute.
const CounterAttr = "pending"

// Pending is the count the counter row holds (nil: 0).
func Pending(it *store.Item) int64 {
	if it == nil {
		return 0
	}
	return it.Int(CounterAttr)
}

// RefKey is the record row a Ref of matter names.
func RefKey(tenant, matter string, r Ref) (store.Key, error) {
	switch r.Kind {
	case TargetMatter:
		return records.MatterKey(tenant, matter), nil
	case TargetDocument:
		return records.DocumentKey(tenant, matter, r.ID), nil
	case TargetFact:
		return records.FactKey(tenant, matter, r.ID), nil
	}
	return store.Key{}, fmt.Errorf("proposals: unknown target kind %q", r.Kind)
}

// Attributes of the proposal and pointer rows beside the immutable JSON
// payload (AttrData): what decisions change.
const (
	AttrData     = "data"
	AttrStatus   = "status"
	attrDecision = "decision"
	attrUpdated  = "updated_at"
	attrExpires  = "proposal_expires_at"
)

// Item is the proposal row as filed: Version 1, status pending, in the
// sweeper index at its expiry.
func (p *Proposal) Item() (store.Item, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return store.Item{}, fmt.Errorf("encode proposal %s: %w", p.ID, err)
	}
	k := Key(p.Tenant, p.CaseID, p.ID)
	it := store.Item{PK: k.PK, SK: k.SK, Version: 1, Attrs: map[string]any{
		AttrData: data, AttrStatus: string(StatusPending), attrUpdated: formatTime(p.CreatedAt),
		attrExpires: formatTime(p.ExpiresAt),
	}}
	it.GSI1PK, it.GSI1SK = sweep.IndexKeys(ExpiryKind, p.ID, p.ExpiresAt)
	if err := store.ValidateItem(it); err != nil {
		return store.Item{}, fmt.Errorf("proposal %s: %w", p.ID, err)
	}
	return it, nil
}

// ErrCorrupt reports a ledger row that cannot be decoded.
var ErrCorrupt = errors.New("proposals: corrupt row")

// Decode reads a proposal row.
func Decode(it store.Item) (*Proposal, error) {
	var p Proposal
	if err := json.Unmarshal(it.Bytes(AttrData), &p); err != nil || p.ID == "" {
		return nil, fmt.Errorf("proposal row %s: %w", it.Key(), ErrCorrupt)
	}
	p.Status = Status(it.String(AttrStatus))
	p.Version = it.Version
	p.UpdatedAt = parseTime(it.String(attrUpdated))
	if raw := it.Bytes(attrDecision); raw != nil {
		var d Decision
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("proposal row %s: decision: %w", it.Key(), ErrCorrupt)
		}
		p.Decision = &d
	}
	return &p, nil
}

// Summary is what a pointer and an inbox row carry of their proposal: what
// a list shows without reading the proposal row itself.
type Summary struct {
	ID           string `json:"id"`
	CaseID       string `json:"case_id"`
	Action       string `json:"action"`
	CredentialID string `json:"credential_id"`
	// CredentialKeyHash is Proposal.CredentialKeyHash (a pointer).
	CredentialKeyHash string `json:"credential_key_hash,omitempty"`
	// Target is the proposal's target: the approval page tells from its
	// inbox rows alone whether two pending proposals act on one row. A
	// row without one (Kind "") is taken to conflict with every target.
	Target Target `json:"target"`
	// Cites are the further rows the args name (Proposal.Cites), so the
	// approval page reads them with the proposal in one batch.
	Cites            []Ref     `json:"cites,omitempty"`
	Requester        string    `json:"requester"`
	WhatWillHappen   string    `json:"what_will_happen"`
	DeliverableNoun  string    `json:"deliverable_noun"`
	SupervisionFloor Floor     `json:"supervision_floor"`
	CreatedAt        time.Time `json:"created_at"`
	ExpiresAt        time.Time `json:"expires_at"`
	// Handoff is Proposal.Handoff (a pointer: the decision checks it
	// against the proposal row).
	Handoff *HandoffRef `json:"handoff,omitempty"`
}

// Summary is the proposal's summary.
func (p *Proposal) Summary() Summary {
	return Summary{ID: p.ID, CaseID: p.CaseID, Action: p.Action, CredentialID: p.RequestedBy.Ref.CredentialID,
		CredentialKeyHash: p.CredentialKeyHash, Target: p.Target, Cites: p.Cites, Requester: p.RequestedBy.Ref.Owner, WhatWillHappen: p.WhatWillHappen, DeliverableNoun: p.DeliverableNoun,
		SupervisionFloor: p.SupervisionFloor, CreatedAt: p.CreatedAt, ExpiresAt: p.ExpiresAt, Handoff: p.Handoff}
}

// Pointer is a decoded pointer row: the summary and the proposal's
// status as its deciders last wrote it.
type Pointer struct {
	Summary
	Status    Status
	Decision  *Decision
	UpdatedAt time.Time
}

// StatusAt is the pointer's status as a reader takes it at now (an
// unswept pending proposal past its expiry is expired).
func (p *Pointer) StatusAt(now time.Time) Status {
	if p.Status == StatusPending && !now.Before(p.ExpiresAt) {
		return StatusExpired
	}
	return p.Status
}

// DecodePointer reads a pointer row.
func DecodePointer(it store.Item) (*Pointer, error) {
	var s Summary
	if err := json.Unmarshal(it.Bytes(AttrData), &s); err != nil || s.ID == "" {
		return nil, fmt.Errorf("pointer row %s: %w", it.Key(), ErrCorrupt)
	}
	p := &Pointer{Summary: s, Status: Status(it.String(AttrStatus)), UpdatedAt: parseTime(it.String(attrUpdated))}
	if raw := it.Bytes(attrDecision); raw != nil {
		var d Decision
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("pointer row %s: decision: %w", it.Key(), ErrCorrupt)
		}
		p.Decision = &d
	}
	return p, nil
}

// The operations of a filing, in FileOps' order: the index of a failed
// condition names which failed.
const (
	OpProposal = iota
	OpInbox
	OpPointer
	OpCounter
)

// FileOps are the writes that file p, for the caller's one transaction
// (its rate count and audit row join them): the proposal row (NotExists),
// its inbox row and pointer (NotExists), and the matter's counter
// incremented under AttrBelow(CounterAttr, MaxPending) — the cap holds
// across processes because the condition is evaluated by the engine in the
// same transaction.
func (p *Proposal) FileOps() ([]store.Op, error) {
	it, err := p.Item()
	if err != nil {
		return nil, err
	}
	sum, err := json.Marshal(p.Summary())
	if err != nil {
		return nil, fmt.Errorf("encode proposal %s summary: %w", p.ID, err)
	}
	ik := InboxKey(p.Tenant, p.CaseID, p.CreatedAt, p.ID)
	pk := PointerKey(p.Tenant, p.RequestedBy.Ref.CredentialID, p.CreatedAt, p.ID)
	attrs := func() map[string]any {
		return map[string]any{AttrData: sum, AttrStatus: string(StatusPending), attrUpdated: formatTime(p.CreatedAt)}
	}
	return []store.Op{
		OpProposal: store.PutOp(it, store.NotExists()),
		OpInbox:    store.PutOp(store.Item{PK: ik.PK, SK: ik.SK, Version: 1, Attrs: attrs()}, store.NotExists()),
		OpPointer:  store.PutOp(store.Item{PK: pk.PK, SK: pk.SK, Version: 1, Attrs: attrs()}, store.NotExists()),
		OpCounter: store.UpdateOp(CounterKey(p.Tenant, p.CaseID), store.Update{Add: map[string]int64{CounterAttr: 1}},
			store.AttrBelow(CounterAttr, MaxPending)),
	}, nil
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
