// Package outbox is the firm's outbox of approved external acts: what a
// person at the firm approved that only the firm's own systems may carry
// out (serving a production, issuing a litigation hold). Custody never
// performs such an act; approving one writes a message here, in the same
// transaction as the approval, and the firm's systems (or an operator with
// `custodyctl outbox list|ack`) take it from here and acknowledge it
// (docs/decisions.md "Approvers", external actions).
//
// # Rows
//
//	message  T#<t>#OUTBOX  <created, fixed-width UTC>#<id>  the approved act, pending until acknowledged
//
// One partition per tenant, oldest first, read with strongly consistent
// queries. A message is never deleted by Custody: acknowledging it records
// who did and when, so the outbox is also the history of what left the
// record for the firm's systems.
package outbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/store"
)

// Message states.
const (
	StatePending      = "pending"
	StateAcknowledged = "acknowledged"
)

// Message is one approved external act.
type Message struct {
	// ID is "obx_" + 24 hex, derived from the proposal: one proposal makes
	// at most one message.
	ID       string `json:"id"`
	Tenant   string `json:"tenant"`
	CaseID   string `json:"case_id"`
	Proposal string `json:"proposal"`
	Action   string `json:"action"`
	// Args are the approved args, as the proposal stored them (canonical
	// JSON).
	Args           json.RawMessage `json:"args"`
	WhatWillHappen string          `json:"what_will_happen"`
	// Requester is the requesting credential's owner; RequesterCredential
	// the credential.
	Requester           string    `json:"requester"`
	RequesterCredential string    `json:"requester_credential"`
	ApprovedBy          string    `json:"approved_by"`
	ApprovedAt          time.Time `json:"approved_at"`
	State               string    `json:"state"`
	AcknowledgedBy      string    `json:"acknowledged_by,omitempty"`
	AcknowledgedAt      time.Time `json:"acknowledged_at,omitzero"`
	// Note is what the acknowledger said (a reference in the firm's
	// system), when anything.
	Note string `json:"note,omitempty"`
}

// partition is a tenant's outbox.
func partition(tenant string) string { return keyspace.TenantPK(tenant) + "#OUTBOX" }

// Key is the row of a message created at created.
func Key(tenant string, created time.Time, id string) store.Key {
	return store.Key{PK: partition(tenant), SK: created.UTC().Format(keyspace.SortableTimeLayout) + "#" + id}
}

// IDFor is the message id of an approved proposal.
func IDFor(proposal string) string {
	sum := sha256.Sum256([]byte("custody outbox\x00" + proposal))
	return "obx_" + hex.EncodeToString(sum[:12])
}

// Attributes of a message row beside its JSON (attrData).
const (
	attrData  = "data"
	attrState = "state"
)

// Put is the write of a new message, for the approval's transaction:
// NotExists, so an approval carried out twice writes one message.
func Put(m Message) (store.Op, error) {
	m.ApprovedAt = m.ApprovedAt.UTC()
	m.State = StatePending
	data, err := json.Marshal(m)
	if err != nil {
		return store.Op{}, fmt.Errorf("encode outbox message %s: %w", m.ID, err)
	}
	k := Key(m.Tenant, m.ApprovedAt, m.ID)
	it := store.Item{PK: k.PK, SK: k.SK, Version: 1, Attrs: map[string]any{attrData: data, attrState: m.State}}
	if err := store.ValidateItem(it); err != nil {
		return store.Op{}, fmt.Errorf("outbox message %s: %w", m.ID, err)
	}
	return store.PutOp(it, store.NotExists()), nil
}

// ErrCorrupt reports a row that is not a message.
var ErrCorrupt = errors.New("outbox: corrupt row")

func decode(it store.Item) (Message, error) {
	var m Message
	if err := json.Unmarshal(it.Bytes(attrData), &m); err != nil || m.ID == "" {
		return Message{}, fmt.Errorf("outbox row %s: %w", it.Key(), ErrCorrupt)
	}
	m.State = it.String(attrState)
	return m, nil
}

// List returns a tenant's messages, oldest first: only the pending ones
// unless all. Store failures are returned wrapped.
func List(ctx context.Context, st store.Store, tenant string, all bool) ([]Message, error) {
	var out []Message
	err := scan(ctx, st, tenant, func(it store.Item) (bool, error) {
		m, err := decode(it)
		if err != nil {
			return false, err
		}
		if all || m.State == StatePending {
			out = append(out, m)
		}
		return true, nil
	})
	return out, err
}

func scan(ctx context.Context, st store.Store, tenant string, f func(store.Item) (bool, error)) error {
	if !keyspace.ValidID(tenant) {
		return nil
	}
	q := store.Query{PK: partition(tenant)}
	for {
		page, err := st.Query(ctx, q)
		if err != nil {
			return fmt.Errorf("read the outbox of %s: %w", tenant, err)
		}
		for _, it := range page.Items {
			more, err := f(it)
			if err != nil || !more {
				return err
			}
		}
		if page.NextToken == "" {
			return nil
		}
		q.PageToken = page.NextToken
	}
}

// Errors of Acknowledge.
var (
	ErrUnknown      = errors.New("outbox: no such message in that tenant")
	ErrAcknowledged = errors.New("outbox: the message was already acknowledged")
)

// Acknowledge records that by took message id from the outbox (note: their
// system's reference, optional), with one conditional update: pending, at
// the version read, so two acknowledgements record one. ErrUnknown,
// ErrAcknowledged, or a store error (wrapped).
func Acknowledge(ctx context.Context, st store.Store, tenant, id, by, note string, now time.Time) (Message, error) {
	if strings.TrimSpace(by) == "" {
		return Message{}, errors.New("outbox: say who acknowledges the message")
	}
	var found *store.Item
	err := scan(ctx, st, tenant, func(it store.Item) (bool, error) {
		if strings.HasSuffix(it.SK, "#"+id) {
			found = &it
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return Message{}, err
	}
	if found == nil {
		return Message{}, fmt.Errorf("acknowledge %s: %w", id, ErrUnknown)
	}
	m, err := decode(*found)
	if err != nil {
		return Message{}, err
	}
	if m.State != StatePending {
		return Message{}, fmt.Errorf("acknowledge %s: %w", id, ErrAcknowledged)
	}
	m.State, m.AcknowledgedBy, m.AcknowledgedAt, m.Note = StateAcknowledged, by, now.UTC(), note
	data, err := json.Marshal(m)
	if err != nil {
		return Message{}, err
	}
	_, err = st.Update(ctx, found.Key(), store.Update{Set: map[string]any{attrData: data, attrState: m.State}},
		store.VersionEquals(found.Version), store.AttrEquals(attrState, StatePending))
	if errors.Is(err, store.ErrConflict) {
		return Message{}, fmt.Errorf("acknowledge %s: %w", id, ErrAcknowledged)
	}
	if err != nil {
		return Message{}, fmt.Errorf("acknowledge %s: %w", id, err)
	}
	return m, nil
}
