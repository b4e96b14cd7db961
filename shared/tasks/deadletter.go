package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/sweep"
)

// ReasonDeadLettered is the data.reason of a task failed because its
// message was dead-lettered: the queue delivered it as often as its redrive
// policy allows (maxReceiveCount) and no delivery ended in a claim, so the
// queue set it aside in its dead-letter queue (docs/decisions.md "Tasks on
// AWS").
const ReasonDeadLettered = "dead_lettered"

// The actions of the dead-letter duty's report.
const (
	// DeadLetterFailed: the message's task was open and nobody held it; it
	// failed with ReasonDeadLettered and the message was deleted.
	DeadLetterFailed = "failed"
	// DeadLetterStale: the message's task was already terminal, gone, past
	// its ttl, waiting for input, or running under a live lease (another
	// message reached a worker); the message was deleted.
	DeadLetterStale = "stale"
	// DeadLetterKept: the message names no task (poison); it was left in
	// the dead-letter queue for an operator, and the queue's depth alarm
	// stays raised until someone looks.
	DeadLetterKept = "kept"
)

// deadLetterReceives bounds one sweep of the dead-letter queue: at most
// this many receives of MaxBatchSize messages; what is left waits for the
// next sweep.
const deadLetterReceives = 10

// DeadLetterDuty is the sweeper duty "task dead letter": it reads the task
// queue's dead-letter queue (dlq, its consuming side) and settles each
// message there. A message naming an open task that no worker holds (queued,
// or running with its lease lapsed) fails the task with -32603, data.reason
// dead_lettered, and its terminal audit row, with one conditional write that
// expects the row as read; any other task state makes the message stale;
// either way the message is deleted. A message naming no task is kept.
//
// Why the sweeper reads the dead-letter queue instead of the worker
// counting receives: a message reaches it only when deliveries kept
// failing before a claim (the store unavailable, the worker unable to
// start), and then the worker is exactly the part that cannot act. The
// attempt limit still rules claimed tasks: a claim lost to a dead worker is
// the lease rule's.
//
// Receives do not wait (short polling), so a message SQS's sampling misses
// is seen at a later sweep. A message whose settlement failed (a store
// failure) is left to come back after the dead-letter queue's visibility
// timeout.
func (s *Service) DeadLetterDuty(dlq queue.Consumer) sweep.Duty {
	return &deadLetter{s: s, dlq: dlq}
}

type deadLetter struct {
	s   *Service
	dlq queue.Consumer
}

func (d *deadLetter) Name() string { return "task dead letter" }

// Sweep implements sweep.Duty.
func (d *deadLetter) Sweep(ctx context.Context, now time.Time) (sweep.Report, error) {
	var rep sweep.Report
	var errs []error
	for range deadLetterReceives {
		recs, err := d.dlq.Receive(ctx, queue.MaxBatchSize, 0)
		if err != nil {
			errs = append(errs, fmt.Errorf("receive the dead-letter queue: %w", err))
			break
		}
		if len(recs) == 0 {
			break
		}
		var settled []string
		for _, rec := range recs {
			action, err := d.settle(ctx, rec, now)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			rep.Add(action)
			if action != DeadLetterKept {
				settled = append(settled, rec.ReceiptHandle)
			}
		}
		if len(settled) > 0 {
			if err := d.dlq.Delete(ctx, settled); err != nil {
				// Settled all the same: the next receive finds them stale.
				errs = append(errs, fmt.Errorf("delete settled dead letters: %w", err))
			}
		}
	}
	return rep, errors.Join(errs...)
}

// settle decides one dead-lettered message.
func (d *deadLetter) settle(ctx context.Context, rec events.SQSMessage, now time.Time) (string, error) {
	s := d.s
	m, err := queue.ParseMessage(rec.Body)
	if err == nil && (!keyspace.ValidID(m.Tenant) || !keyspace.ValidID(m.CredentialID) || !validID(m.TaskID)) {
		err = fmt.Errorf("message names no task: %w", queue.ErrInvalid)
	}
	if err != nil {
		s.log.ErrorContext(ctx, "dead-lettered message names no task; kept in the dead-letter queue", "messageId", rec.MessageId, "err", err)
		return DeadLetterKept, nil
	}
	it, err := s.opts.Store.Get(ctx, Key(m.Tenant, m.CredentialID, m.TaskID))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return DeadLetterStale, nil
	case err != nil:
		return "", fmt.Errorf("read dead-lettered task %s: %w", m.TaskID, err)
	}
	r, err := decodeRow(it)
	if err != nil {
		return "", fmt.Errorf("read dead-lettered task %s: %w", m.TaskID, err)
	}
	var expect []store.Condition
	switch {
	case !now.Before(r.Expires()):
		return DeadLetterStale, nil // the expiry duty purges it
	case r.Status == StatusQueued:
		expect = []store.Condition{store.AttrEquals(aStatus, StatusQueued), store.VersionEquals(r.Version)}
	case r.Status == StatusRunning && !now.Before(r.LeaseUntil):
		expect = []store.Condition{store.AttrEquals(aStatus, StatusRunning), store.AttrEquals(aLeaseHolder, r.LeaseHolder),
			store.AttrEquals(aLeaseUntil, ms(r.LeaseUntil))}
	default:
		return DeadLetterStale, nil
	}
	msg := "The task failed: no worker could take it; its queue message was set aside after the most deliveries the queue allows."
	body, _, _, err := encodeOutcome(KindRPCError, rpcError(r.ID, ReasonDeadLettered, msg), r.Dialect2026())
	if err != nil {
		return "", err
	}
	u := store.Update{
		Set: map[string]any{aStatus: StatusFailed, aOpen: false, aOutcomeKind: KindRPCError, aIsError: false,
			aOutcome: body, aMessage: msg, aUpdated: ms(now)},
		Remove: leaseAttrs(aArgs),
	}
	index(&u, indexExpires, r.ID, r.Expires())
	rec2 := &audit.Record{RequestID: r.ID + ".deadletter", At: now, Tenant: r.Tenant, Principal: r.Ref.Owner,
		CredentialID: r.CredentialID, Revision: string(r.Revision), Method: "tools/call", Tool: r.Tool,
		Matter: r.Matter, TaskID: r.ID, Outcome: fmt.Sprintf("rpc:%d", mcp.CodeInternalError)}
	err = s.opts.Store.Transact(ctx, append([]store.Op{store.UpdateOp(r.Key(), u, expect...)}, s.auditOps(rec2)...))
	var tx *store.TxCanceledError
	switch {
	case errors.As(err, &tx):
		return DeadLetterStale, nil // claimed, cancelled or renewed meanwhile
	case err != nil:
		return "", fmt.Errorf("fail dead-lettered task %s: %w", r.ID, err)
	}
	s.log.InfoContext(ctx, "task finished", "taskId", r.ID, "tool", r.Tool, "status", StatusFailed, "reason", ReasonDeadLettered)
	return DeadLetterFailed, nil
}
