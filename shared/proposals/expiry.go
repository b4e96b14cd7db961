package proposals

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/sweep"
)

// Expiry is the sweeper duty that ends pending proposals past their
// expiry (issue 13, item 8): each becomes expired in one conditional
// transaction — the proposal pending → expired (its version unchanged
// since it was read, so a decision that landed meanwhile wins), its inbox
// row deleted, its pointer updated, the matter's counter decremented —
// and leaves the sweeper index. Readers do not wait for it: a pending
// proposal past its expiry is expired to every reader (Proposal.StatusAt).
type Expiry struct {
	store store.Store
	limit int
	hooks []EndHook
}

// An EndHook adds writes to the transaction that expires a proposal, as
// approvals.DecisionHook does to the page's decisions: what must move with
// the proposal (issue 15's hand-off binding and its completion message)
// moves in it or not at all. Its rows are read in one batch read after the
// proposal row.
type EndHook interface {
	// EndKeys names rows to read for ending p (none: no read).
	EndKeys(p *Proposal) []store.Key
	// EndOps returns the writes to add when p becomes status; rows are
	// aligned with EndKeys (nil where absent). An error fails the expiry
	// (nothing is written; the next pass tries again).
	EndOps(p *Proposal, status Status, rows []*store.Item, now time.Time) ([]store.Op, error)
}

// WithHooks returns e with hooks joining every expiry's transaction.
func (e *Expiry) WithHooks(hooks ...EndHook) *Expiry {
	e.hooks = append(e.hooks, hooks...)
	return e
}

var _ sweep.Duty = (*Expiry)(nil)

// NewExpiry returns the duty over st; each pass ends at most limit
// proposals per sweeper index shard (0: 100).
func NewExpiry(st store.Store, limit int) *Expiry {
	if limit <= 0 {
		limit = 100
	}
	return &Expiry{store: st, limit: limit}
}

// Name implements sweep.Duty.
func (e *Expiry) Name() string { return "proposal expiry" }

// Report actions of a pass.
const (
	ReportExpired   = "expired"
	ReportDecided   = "already decided"
	ReportNotDue    = "not due"
	ReportRaced     = "decided meanwhile"
	ReportUnindexed = "left the index"
)

// Sweep implements sweep.Duty: it reads the due index entries and, for
// each, re-reads the proposal (strongly) and decides from the row, never
// from the entry, which may lag on DynamoDB. A proposal no longer pending
// only leaves the index. Overlapping passes act at most once on a
// proposal: the second finds its condition failed (ReportRaced).
func (e *Expiry) Sweep(ctx context.Context, now time.Time) (sweep.Report, error) {
	var rep sweep.Report
	due, err := sweep.Due(ctx, e.store, ExpiryKind, now, e.limit)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for _, entry := range due {
		action, err := e.expire(ctx, entry.Key(), now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rep.Add(action)
	}
	return rep, errors.Join(errs...)
}

// expire ends one proposal, re-read at k.
func (e *Expiry) expire(ctx context.Context, k store.Key, now time.Time) (string, error) {
	it, err := e.store.Get(ctx, k)
	if errors.Is(err, store.ErrNotFound) {
		return ReportDecided, nil
	}
	if err != nil {
		return "", fmt.Errorf("expire %s: %w", k, err)
	}
	p, err := Decode(it)
	if err != nil {
		return "", fmt.Errorf("expire %s: %w", k, err)
	}
	empty := ""
	unindex := store.Update{GSI1PK: &empty, GSI1SK: &empty}
	switch {
	case p.Status != StatusPending:
		// Decided, but its decider left the entry: drop it.
		_, err := e.store.Update(ctx, k, unindex, store.VersionEquals(p.Version))
		if err != nil && !errors.Is(err, store.ErrConflict) {
			return "", fmt.Errorf("unindex %s: %w", p.ID, err)
		}
		return ReportUnindexed, nil
	case now.Before(p.ExpiresAt):
		return ReportNotDue, nil
	}
	ops := ExpireOps(p, now)
	for _, h := range e.hooks {
		keys := h.EndKeys(p)
		var rows []*store.Item
		if len(keys) > 0 {
			if rows, err = e.store.BatchGet(ctx, keys); err != nil {
				return "", fmt.Errorf("expire %s: read its hook's rows: %w", p.ID, err)
			}
		}
		more, err := h.EndOps(p, StatusExpired, rows, now)
		if err != nil {
			return "", fmt.Errorf("expire %s: %w", p.ID, err)
		}
		ops = append(ops, more...)
	}
	err = e.store.Transact(ctx, ops)
	var tx *store.TxCanceledError
	if errors.As(err, &tx) {
		return ReportRaced, nil
	}
	if err != nil {
		return "", fmt.Errorf("expire %s: %w", p.ID, err)
	}
	return ReportExpired, nil
}

// ExpireOps are the writes that end pending proposal p (read at
// p.Version) as expired at now: one transaction.
func ExpireOps(p *Proposal, now time.Time) []store.Op {
	return EndOps(p, StatusExpired, &Decision{Code: "PROPOSAL_EXPIRED", DecidedAt: now}, now)
}

// EndOps are the writes that end pending proposal p (read at p.Version)
// with status and decision: the proposal (its status still pending and its
// version unchanged, else the transaction is cancelled at index 0), out of
// the sweeper index; its inbox row deleted; its pointer updated; the
// matter's counter decremented. The approval page's decisions (issue 14)
// use the same shape for a declined or denied row.
func EndOps(p *Proposal, status Status, d *Decision, now time.Time) []store.Op {
	empty := ""
	set := map[string]any{AttrStatus: string(status), attrUpdated: formatTime(now)}
	if d != nil {
		if raw, err := marshalDecision(d); err == nil {
			set[attrDecision] = raw
		}
	}
	return []store.Op{
		store.UpdateOp(Key(p.Tenant, p.CaseID, p.ID), store.Update{Set: set, GSI1PK: &empty, GSI1SK: &empty},
			store.VersionEquals(p.Version), store.AttrEquals(AttrStatus, string(StatusPending))),
		store.DeleteOp(InboxKey(p.Tenant, p.CaseID, p.CreatedAt, p.ID)),
		store.UpdateOp(PointerKey(p.Tenant, p.RequestedBy.Ref.CredentialID, p.CreatedAt, p.ID), store.Update{Set: set}, store.Exists()),
		store.UpdateOp(CounterKey(p.Tenant, p.CaseID), store.Update{Add: map[string]int64{CounterAttr: -1}}),
	}
}
