package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/sweep"
)

// Duties are the tasks' recovery duties (sweep.Duty), each over its own
// kind of sweeper index entry, each action one conditional write decided
// from the row re-read strongly (never from the index, which may lag):
//
//   - "task lease": a running task whose lease lapsed (its worker died or
//     hangs) is queued again and sent, while it has had fewer claims than
//     AttemptLimit; after that it fails with a reason (-32603,
//     attempts_exhausted) and its terminal audit row.
//   - "task unclaimed": a task queued for UnclaimedAfter without a claim
//     (its message was lost: the send after the creating commit failed, or
//     the queue lost it) is sent again.
//   - "task expiry": a task past its ttl is purged: the row, its payload
//     parts and its questions are deleted. Every duty purges a task past
//     its ttl that it comes upon.
//
// Overlapping sweeps and live workers are safe: of two writers racing for
// a row only one meets its condition.
func (s *Service) Duties() []sweep.Duty {
	return []sweep.Duty{duty{s, "task lease", indexLease, s.sweepLease},
		duty{s, "task unclaimed", indexQueued, s.sweepUnclaimed},
		duty{s, "task expiry", indexExpires, nil}}
}

// duty is one of the tasks' duties: its index kind and its rule for a due
// row within its ttl (nil: none beyond the purge).
type duty struct {
	s    *Service
	name string
	kind string
	rule func(ctx context.Context, r *Row, now time.Time, rep *sweep.Report) error
}

func (d duty) Name() string { return d.name }

// Sweep implements sweep.Duty: every due entry of its kind, re-read.
func (d duty) Sweep(ctx context.Context, now time.Time) (sweep.Report, error) {
	var rep sweep.Report
	due, err := sweep.Due(ctx, d.s.opts.Store, d.kind, now, 0)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for _, entry := range due {
		it, err := d.s.opts.Store.Get(ctx, entry.Key())
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r, err := decodeRow(it)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !now.Before(r.Expires()) {
			if err := d.s.purge(ctx, r); err != nil {
				errs = append(errs, err)
			} else {
				rep.Add("purged")
			}
			continue
		}
		if d.rule != nil {
			if err := d.rule(ctx, r, now, &rep); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return rep, errors.Join(errs...)
}

// sweepLease recovers a running task whose lease lapsed.
func (s *Service) sweepLease(ctx context.Context, r *Row, now time.Time, rep *sweep.Report) error {
	if r.Status != StatusRunning || now.Before(r.LeaseUntil) {
		return nil // renewed, or no longer running: the entry is stale
	}
	lapsed := []store.Condition{store.AttrEquals(aStatus, StatusRunning), store.AttrEquals(aLeaseHolder, r.LeaseHolder),
		store.AttrEquals(aLeaseUntil, ms(r.LeaseUntil))}
	if r.Attempts >= s.opts.AttemptLimit {
		msg := fmt.Sprintf("The task failed: its worker stopped %d times before finishing it.", r.Attempts)
		body, _, _, err := encodeOutcome(KindRPCError, rpcError(r.ID, ReasonAttemptsExhausted, msg), r.Dialect2026())
		if err != nil {
			return err
		}
		u := store.Update{
			Set: map[string]any{aStatus: StatusFailed, aOpen: false, aOutcomeKind: KindRPCError, aIsError: false,
				aOutcome: body, aMessage: msg, aUpdated: ms(now)},
			Remove: leaseAttrs(aArgs),
		}
		index(&u, indexExpires, r.ID, r.Expires())
		rec := &audit.Record{RequestID: r.ID + ".sweep", At: now, Tenant: r.Tenant, Principal: r.Ref.Owner,
			CredentialID: r.CredentialID, Revision: string(r.Revision), Method: "tools/call", Tool: r.Tool,
			Matter: r.Matter, TaskID: r.ID, Outcome: fmt.Sprintf("rpc:%d", mcp.CodeInternalError)}
		err = s.opts.Store.Transact(ctx, append([]store.Op{store.UpdateOp(r.Key(), u, lapsed...)}, s.auditOps(rec)...))
		var tx *store.TxCanceledError
		switch {
		case errors.As(err, &tx):
			return nil // renewed, cancelled or taken meanwhile
		case err != nil:
			return fmt.Errorf("fail task %s: %w", r.ID, err)
		}
		s.log.InfoContext(ctx, "task finished", "taskId", r.ID, "tool", r.Tool, "status", StatusFailed, "reason", ReasonAttemptsExhausted)
		rep.Add("failed")
		return nil
	}
	u := store.Update{
		Set: map[string]any{aStatus: StatusQueued, aQueued: ms(now), aUpdated: ms(now),
			aMessage: fmt.Sprintf("The task's worker stopped (%s); it is queued again.", attemptText(r.Attempts, s.opts.AttemptLimit))},
		Remove: leaseAttrs(),
	}
	index(&u, indexQueued, r.ID, now.Add(s.opts.UnclaimedAfter))
	_, err := s.opts.Store.Update(ctx, r.Key(), u, lapsed...)
	switch {
	case errors.Is(err, store.ErrConflict):
		return nil
	case err != nil:
		return fmt.Errorf("re-enqueue task %s: %w", r.ID, err)
	}
	rep.Add("re-enqueued")
	if err := s.send(ctx, r); err != nil {
		// Queued in the store: the unclaimed rule sends it later.
		return fmt.Errorf("send task %s: %w", r.ID, err)
	}
	return nil
}

// sweepUnclaimed sends again a task queued too long without a claim.
func (s *Service) sweepUnclaimed(ctx context.Context, r *Row, now time.Time, rep *sweep.Report) error {
	if r.Status != StatusQueued || now.Before(r.Queued.Add(s.opts.UnclaimedAfter)) {
		return nil
	}
	u := store.Update{Set: map[string]any{aQueued: ms(now)}}
	index(&u, indexQueued, r.ID, now.Add(s.opts.UnclaimedAfter))
	_, err := s.opts.Store.Update(ctx, r.Key(), u, store.AttrEquals(aStatus, StatusQueued), store.VersionEquals(r.Version))
	switch {
	case errors.Is(err, store.ErrConflict):
		return nil
	case err != nil:
		return fmt.Errorf("re-enqueue task %s: %w", r.ID, err)
	}
	rep.Add("re-enqueued")
	if err := s.send(ctx, r); err != nil {
		return fmt.Errorf("send task %s: %w", r.ID, err)
	}
	return nil
}

// purge deletes a task past its ttl: the row (conditional on the version
// read, so a row changed meanwhile is judged again at the next sweep) with
// its payload parts and questions in one transaction as far as it has
// room; parts and questions beyond it are deleted after, and expire on
// their own besides.
func (s *Service) purge(ctx context.Context, r *Row) error {
	var extra []store.Key
	for _, prefix := range []string{partPrefix(r.ID), questionPrefix(r.ID)} {
		page, err := s.opts.Store.Query(ctx, store.Query{PK: r.Key().PK, SK: store.SortKeyCondition{Prefix: prefix}})
		if err != nil {
			return fmt.Errorf("purge task %s: %w", r.ID, err)
		}
		for _, it := range page.Items {
			extra = append(extra, it.Key())
		}
	}
	ops := []store.Op{store.DeleteOp(r.Key(), store.VersionEquals(r.Version))}
	room := min(len(extra), store.MaxTransactItems-1)
	for _, k := range extra[:room] {
		ops = append(ops, store.DeleteOp(k))
	}
	var err error
	if len(ops) == 1 {
		err = s.opts.Store.Delete(ctx, r.Key(), store.VersionEquals(r.Version))
	} else {
		err = s.opts.Store.Transact(ctx, ops)
	}
	var tx *store.TxCanceledError
	switch {
	case errors.As(err, &tx), errors.Is(err, store.ErrConflict):
		return nil
	case err != nil:
		return fmt.Errorf("purge task %s: %w", r.ID, err)
	}
	for _, k := range extra[room:] {
		if err := s.opts.Store.Delete(ctx, k); err != nil {
			return fmt.Errorf("purge task %s: %w", r.ID, err)
		}
	}
	return nil
}
