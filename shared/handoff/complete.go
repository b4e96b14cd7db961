package handoff

import (
	"errors"
	"time"

	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/store"
)

// Completion is what the transaction ending a proposal adds for its
// hand-off (issue 15, item 6): when the proposal becomes approved,
// declined, denied or expired and its binding is sent or accepted, the
// binding moves to completed (at the version read, so a client's answer
// that lands meanwhile makes the decision read again) and
// notifications/elicitation/complete {elicitationId} is put in the
// initiating session's outbox if that session's row still exists — never
// another session's, at most once (the binding leaves sent|accepted in
// the same transaction). A session that ended gets nothing, and the
// decision fails nothing for it.
//
// It serves the approval page's decisions (through a DecisionHook adapter
// in shared/server: this package may not import shared/approvals' users'
// transports) and the sweeper's expiry (proposals.EndHook).
type Completion struct {
	// Outbox builds the outbox row of a notification for a session's GET
	// stream, expiring with the session (mcp.OutboxOp).
	Outbox func(sessionID string, sessionExpires time.Time, method string, params any, now time.Time) (store.Op, error)
}

var _ proposals.EndHook = (*Completion)(nil)

// SessionKey is a session's row (mcp.SessionKey: SESS#<id> / SESS).
func SessionKey(sessionID string) store.Key {
	return store.Key{PK: keyspace.SessionPK(sessionID), SK: "SESS"}
}

// Keys are the rows to read for ending a proposal whose inbox row or
// proposal row names ref: its binding and its session (none without a
// hand-off).
func (c *Completion) Keys(ref *proposals.HandoffRef) []store.Key {
	if ref == nil || !ValidID(ref.ID) || ref.Session == "" || len(ref.Session) > 128 {
		return nil
	}
	return []store.Key{Key(ref.ID), SessionKey(ref.Session)}
}

// Ops are the writes for p becoming status, from the rows Keys named for
// p.Handoff (aligned; nil where absent). A binding that is missing, of
// another proposal or tenant, or no longer sent or accepted adds nothing.
func (c *Completion) Ops(p *proposals.Proposal, status proposals.Status, rows []*store.Item, now time.Time) ([]store.Op, error) {
	if p == nil || p.Handoff == nil || status == proposals.StatusPending || len(rows) < 2 || rows[0] == nil {
		return nil, nil
	}
	b := Decode(p.Handoff.ID, *rows[0])
	if b.ApprovalID != p.ID || b.Tenant != p.Tenant || b.SessionID != p.Handoff.Session {
		return nil, nil
	}
	if b.State != StateSent && b.State != StateAccepted {
		return nil, nil
	}
	ops := []store.Op{store.UpdateOp(Key(b.ID), store.Update{Set: map[string]any{attrState: string(StateCompleted)}},
		store.VersionEquals(b.Version), store.AttrEquals(attrState, string(b.State)))}
	if sess := rows[1]; sess != nil {
		if c.Outbox == nil {
			return nil, errors.New("handoff: no outbox to post the completion to")
		}
		op, err := c.Outbox(b.SessionID, time.Unix(sess.ExpiresAt, 0), CompleteMethod,
			map[string]any{"elicitationId": b.ID}, now)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// EndKeys implements proposals.EndHook.
func (c *Completion) EndKeys(p *proposals.Proposal) []store.Key { return c.Keys(p.Handoff) }

// EndOps implements proposals.EndHook.
func (c *Completion) EndOps(p *proposals.Proposal, status proposals.Status, rows []*store.Item, now time.Time) ([]store.Op, error) {
	return c.Ops(p, status, rows, now)
}
