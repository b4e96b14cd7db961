package tasks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/gate"
	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/tools"
)

// Reasons of the worker faults that end a task as a JSON-RPC error
// (-32603, data.reason; docs/decisions.md "Pipeline choices"): what a
// synchronous tools/call would have answered had its process failed so.
const (
	ReasonAttemptsExhausted = "attempts_exhausted"
	ReasonExecutionCap      = "execution_cap"
	ReasonCreatorRefused    = "creator_refused"
	ReasonResultTooLarge    = "result_too_large"
	ReasonInternal          = "internal"
)

// Causes of a run's context ending early.
var (
	errLeaseLost    = errors.New("tasks: the lease was lost (cancelled, or taken over after it lapsed)")
	errExecutionCap = errors.New("tasks: the execution cap was reached")
)

// Handle is the worker: a queue.Handler taking a batch of task messages,
// as Lambda's SQS event source (with ReportBatchItemFailures) or a
// queue.Dispatcher delivers them. Each record runs its task at most once
// per claim (Run); only records whose task could not be read or finished
// for a store failure are named in BatchItemFailures, to be delivered
// again after the visibility timeout. A message that names no task of
// the right shape is poison — no redelivery can mend it — and is dropped
// with a log line; a claim lost to another worker (a duplicate delivery)
// is a success.
func (s *Service) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	for _, rec := range ev.Records {
		m, err := queue.ParseMessage(rec.Body)
		if err == nil && (!keyspace.ValidID(m.Tenant) || !keyspace.ValidID(m.CredentialID) || !validID(m.TaskID)) {
			err = fmt.Errorf("message names no task: %w", queue.ErrInvalid)
		}
		if err != nil {
			s.log.ErrorContext(ctx, "task message dropped", "messageId", rec.MessageId, "err", err)
			continue
		}
		if err := s.Run(ctx, m); err != nil {
			s.log.WarnContext(ctx, "task run failed; its message will be delivered again", "taskId", m.TaskID, "messageId", rec.MessageId, "err", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
		}
	}
	return resp, nil
}

// newHolder names one claim: the lease holder of its renewals and outcome.
func newHolder() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "w-" + base64.RawURLEncoding.EncodeToString(b[:])
}

// Run runs the task m names: it claims the row with one conditional
// update (queued → running, with a lease and one more attempt), so that
// of two deliveries racing only one runs it and a delivery of a task
// already running, waiting or finished does nothing. The error is a store
// failure only (the message is then delivered again).
func (s *Service) Run(ctx context.Context, m queue.Message) error {
	holder := newHolder()
	now := s.opts.Now()
	u := store.Update{
		Set: map[string]any{aStatus: StatusRunning, aLeaseHolder: holder, aLeaseUntil: ms(now.Add(s.opts.Lease)),
			aUpdated: ms(now), aMessage: "The task is running."},
		Add: map[string]int64{aAttempts: 1},
	}
	index(&u, indexLease, m.TaskID, now.Add(s.opts.Lease))
	it, err := s.opts.Store.Update(ctx, Key(m.Tenant, m.CredentialID, m.TaskID), u, store.AttrEquals(aStatus, StatusQueued))
	switch {
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrExists):
		return nil // not queued: another delivery has it, or it waits, or it is done, or gone
	case err != nil:
		return fmt.Errorf("claim task %s: %w", m.TaskID, err)
	}
	r, err := decodeRow(it)
	if err != nil {
		return fmt.Errorf("claim task %s: %w", m.TaskID, err)
	}
	if !now.Before(r.Expires()) {
		return nil // its ttl ended while it waited: the sweeper purges it
	}
	return s.execute(ctx, r, holder, now)
}

// execute runs a claimed task's tool and stores what came of it.
func (s *Service) execute(ctx context.Context, r *Row, holder string, claimed time.Time) error {
	arrived := time.Now()
	rec := &audit.Record{RequestID: r.ID + ".run" + strconv.Itoa(r.Attempts), Tenant: r.Tenant,
		Principal: r.Ref.Owner, CredentialID: r.CredentialID, Revision: string(r.Revision),
		Method: "tools/call", Tool: r.Tool, Matter: r.Matter, TaskID: r.ID}
	args, err := s.args(ctx, r)
	if err != nil {
		return err // the lease lapses and the sweeper re-enqueues it
	}
	adm, err := s.opts.Gate.Readmit(ctx, r.Ref, claimed)
	var refused *gate.RefusedError
	switch {
	case errors.As(err, &refused):
		return s.fail(ctx, r, holder, rec, arrived, ReasonCreatorRefused, "The task failed: "+refused.Reason+".")
	case err != nil:
		return fmt.Errorf("re-admit the creator of task %s: %w", r.ID, err)
	}
	peer := &workerPeer{caps: r.ClientCaps, answers: r.InputAnswers, asked: map[string]Question{}}
	limit := s.opts.ExecutionCap
	if d, ok := ctx.Deadline(); ok {
		limit = min(limit, time.Until(d)-ExecutionMargin)
	}
	runCtx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	runCtx, cancelCap := context.WithTimeoutCause(runCtx, max(limit, 0), errExecutionCap)
	defer cancelCap()
	stopLease := s.keepLease(runCtx, r, holder, peer, cancelRun)
	out, panicked := s.call(runCtx, tools.Invocation{
		Name: r.Tool, Arguments: args, Credential: adm.Credential, Revision: r.Revision, Rate: adm.Rate,
		Peer: peer, Now: claimed, Arrived: arrived, Audit: rec,
	})
	stopLease()
	cause := context.Cause(runCtx)
	switch {
	case panicked != nil:
		// What the synchronous call would have answered (the transport
		// turns a handler's panic into -32603): at once, not after every
		// attempt's lease lapsed.
		s.log.ErrorContext(ctx, "task tool panicked", "taskId", r.ID, "tool", r.Tool, "panic", panicked)
		return s.fail(ctx, r, holder, rec, arrived, ReasonInternal, "The task failed: internal error.")
	case errors.Is(cause, errLeaseLost):
		s.log.InfoContext(ctx, "task run ended: its lease was lost", "taskId", r.ID)
		return nil
	case ctx.Err() != nil:
		// The host is going away: no outcome; the lease lapses and the
		// sweeper gives the task to another worker.
		return ctx.Err()
	case errors.Is(cause, errExecutionCap):
		return s.fail(ctx, r, holder, rec, arrived, ReasonExecutionCap,
			fmt.Sprintf("The task failed: it ran longer than its execution cap of %v and was stopped.", limit.Round(time.Second)))
	case errors.Is(out.Err, mcp.ErrInputRequired) && len(peer.asked) > 0:
		return s.needInput(ctx, r, holder, peer.asked)
	case errors.Is(out.Err, tools.ErrUnknownTool):
		// The creator's scopes no longer allow the tool: what tools/call
		// would answer it now.
		return s.finish(ctx, r, holder, rec, arrived, KindRPCError, mcp.InvalidParams("Unknown tool."), nil)
	case out.Err != nil:
		var perr *mcp.Error
		if errors.As(out.Err, &perr) {
			return s.finish(ctx, r, holder, rec, arrived, KindRPCError, perr, nil)
		}
		s.log.ErrorContext(ctx, "task tool failed", "taskId", r.ID, "tool", r.Tool, "err", out.Err)
		return s.fail(ctx, r, holder, rec, arrived, ReasonInternal, "The task failed: internal error.")
	}
	return s.finish(ctx, r, holder, rec, arrived, KindResult, out.Result, out.Writes)
}

// call runs the tool through the invocation core, turning a panic of the
// tool into panicked (non-nil) instead of ending the worker.
func (s *Service) call(ctx context.Context, inv tools.Invocation) (out tools.Outcome, panicked any) {
	defer func() {
		if p := recover(); p != nil {
			out, panicked = tools.Outcome{}, p
		}
	}()
	return s.opts.Tools.Call(ctx, inv), nil
}

// rpcError is a worker fault's JSON-RPC error.
func rpcError(id, reason, message string) *mcp.Error {
	return &mcp.Error{Code: mcp.CodeInternalError, Message: message, Data: map[string]any{"taskId": id, "reason": reason}}
}

// fail ends a claimed task with a worker fault's error.
func (s *Service) fail(ctx context.Context, r *Row, holder string, rec *audit.Record, arrived time.Time, reason, message string) error {
	rec.Outcome = "rpc:" + strconv.Itoa(mcp.CodeInternalError)
	return s.finish(ctx, r, holder, rec, arrived, KindRPCError, rpcError(r.ID, reason, message), nil)
}

// maxFinishAttempts bounds the writes of one outcome (a failed tool
// write's settled answer, an over-size result, a store failure retried).
const maxFinishAttempts = 4

// finish stores the outcome of a run with one transaction: the row moves
// from running under this worker's lease to its terminal state (completed
// for a result, isError or not; failed for a JSON-RPC error), with the
// outcome inline or in parts, the terminal audit row and the tool's own
// writes beside it. Its condition expects running under this lease, so a
// task cancelled (or taken over after its lease lapsed) meanwhile is left
// as it is: the late outcome writes nothing.
func (s *Service) finish(ctx context.Context, r *Row, holder string, rec *audit.Record, arrived time.Time,
	kind string, outcome any, writes *tools.Writes) error {
	ctx = context.WithoutCancel(ctx)
	for attempt := 0; ; attempt++ {
		now := s.opts.Now()
		body, isError, message, err := encodeOutcome(kind, outcome, r.Dialect2026())
		if err != nil {
			return fmt.Errorf("encode the outcome of task %s: %w", r.ID, err)
		}
		expiresAt := r.Expires().Add(PurgeGrace).Unix()
		p, err := split(r, "outcome", body, outcomeInlineMax, expiresAt)
		if errors.Is(err, ErrPayloadTooLarge) {
			kind, writes = KindRPCError, nil
			outcome = rpcError(r.ID, ReasonResultTooLarge, fmt.Sprintf("The task failed: its result is larger than the %d bytes a task keeps.", maxParts*partBytes))
			rec.Outcome = "rpc:" + strconv.Itoa(mcp.CodeInternalError)
			continue
		}
		status := StatusCompleted
		if kind == KindRPCError {
			status = StatusFailed
			if rec.Outcome == "" {
				rec.Outcome = "rpc:" + strconv.Itoa(outcome.(*mcp.Error).Code)
			}
		}
		u := store.Update{
			Set: map[string]any{aStatus: status, aOpen: false, aOutcomeKind: kind, aIsError: isError,
				aMessage: message, aUpdated: ms(now)},
			Remove: leaseAttrs(aInputRequests, aInputAnswers, aArgs),
		}
		if p.inline != nil {
			u.Set[aOutcome] = p.inline
		} else {
			u.Set[aOutcomeParts] = int64(len(p.parts))
		}
		index(&u, indexExpires, r.ID, r.Expires())
		rec.At = now
		rec.DurationMs = time.Since(arrived).Milliseconds()
		ops := []store.Op{store.UpdateOp(r.Key(), u, running(holder)...)}
		ops = append(ops, s.auditOps(rec)...)
		ops = append(ops, p.parts...)
		own := len(ops)
		if writes != nil {
			ops = append(ops, writes.Ops...)
		}
		err = s.opts.Store.Transact(ctx, ops)
		var tx *store.TxCanceledError
		switch {
		case err == nil:
			// One line per outcome: what the worker function's log metrics
			// count (template.yaml, TasksCompleted and TasksFailed).
			s.log.InfoContext(ctx, "task finished", "taskId", r.ID, "tool", r.Tool, "status", status, "attempt", r.Attempts)
			if writes != nil {
				for _, e := range writes.After {
					if err := e.Run(ctx); err != nil {
						s.log.ErrorContext(ctx, "effect after a task's commit failed", "taskId", r.ID, "effect", e.Name, "recovery", e.Recovery, "err", err)
					}
				}
			}
			return nil
		case errors.As(err, &tx) && tx.Index == 0:
			s.log.InfoContext(ctx, "task outcome not stored: the task was cancelled or taken over meanwhile", "taskId", r.ID)
			return nil
		case attempt >= maxFinishAttempts:
			return fmt.Errorf("store the outcome of task %s: %w", r.ID, err)
		case errors.As(err, &tx) && tx.Index >= own && writes != nil && writes.Settle != nil:
			o := writes.Settle(ctx, tx.Index-own)
			writes = nil
			if o.Err != nil {
				kind, outcome = KindRPCError, o.Err
				if _, ok := o.Err.(*mcp.Error); !ok {
					outcome = rpcError(r.ID, ReasonInternal, "The task failed: internal error.")
				}
			} else {
				kind, outcome = KindResult, o.Result
			}
		case errors.Is(err, store.ErrTooLarge):
			kind, writes = KindRPCError, nil
			outcome = rpcError(r.ID, ReasonResultTooLarge, "The task failed: its result is too large to keep.")
			rec.Outcome = "rpc:" + strconv.Itoa(mcp.CodeInternalError)
		case errors.As(err, &tx):
			return fmt.Errorf("store the outcome of task %s: %w", r.ID, err)
		default:
			// A store failure: try again shortly, within the lease.
			time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
		}
	}
}

// encodeOutcome encodes a result (a *mcp.CallToolResult) or a JSON-RPC
// error, with the status message the task shows for it in its dialect.
func encodeOutcome(kind string, outcome any, dialect2026 bool) (body []byte, isError bool, message string, err error) {
	if kind == KindRPCError {
		e := outcome.(*mcp.Error)
		body, err = mcp.Marshal(e)
		return body, false, e.Message, err
	}
	res := outcome.(*mcp.CallToolResult)
	enc, err := res.Encode()
	if err != nil {
		return nil, false, "", err
	}
	if !res.IsError {
		return enc, false, "The task completed.", nil
	}
	message = "The tool answered with an error; tasks/result returns it."
	if dialect2026 {
		message = "The tool answered with an error; tasks/get returns it."
	}
	for _, c := range res.Content {
		if c.Type == "text" && c.Text != "" {
			message = "The tool answered with an error: " + c.Text
			break
		}
	}
	return enc, true, message, nil
}

// auditOps are the puts of a terminal audit row and its index items,
// expiring after the retention (the gate's rule, for rows written outside
// a request).
func (s *Service) auditOps(rec *audit.Record) []store.Op {
	rec.ExpiresAt = rec.At.Add(s.opts.AuditRetention)
	ops := []store.Op{store.PutOp(rec.Item(), store.NotExists())}
	for _, it := range rec.IndexItems() {
		ops = append(ops, store.PutOp(it))
	}
	return ops
}

// needInput stores the questions a run asked and ends it: the task waits
// in input_required, under its ttl, for the client's answers.
func (s *Service) needInput(ctx context.Context, r *Row, holder string, asked map[string]Question) error {
	enc, err := json.Marshal(asked)
	if err != nil {
		return err
	}
	now := s.opts.Now()
	message := "The task needs input from the client: call tasks/result to receive its questions."
	if r.Dialect2026() {
		message = "The task needs input from the client: answer its inputRequests with tasks/update."
	}
	u := store.Update{
		Set: map[string]any{aStatus: StatusInputRequired, aInputRequests: enc, aInputRound: int64(r.InputRound + 1),
			aUpdated: ms(now), aMessage: message},
		Remove: leaseAttrs(),
	}
	index(&u, indexExpires, r.ID, r.Expires())
	_, err = s.opts.Store.Update(context.WithoutCancel(ctx), r.Key(), u, running(holder)...)
	if errors.Is(err, store.ErrConflict) {
		return nil // cancelled meanwhile
	}
	if err != nil {
		return fmt.Errorf("store the questions of task %s: %w", r.ID, err)
	}
	return nil
}

// keepLease renews the claim every RenewEvery while the tool runs, and
// writes the tool's progress at most every ProgressEvery, each with one
// update conditional on this lease. When the condition fails the task was
// cancelled (or its lease lapsed and another took it over): the run is
// cancelled with errLeaseLost. When renewals fail until the lease ends,
// the run is cancelled too, before a second worker may start. stop ends
// the renewals and waits for the last.
func (s *Service) keepLease(ctx context.Context, r *Row, holder string, peer *workerPeer, cancel context.CancelCauseFunc) (stop func()) {
	tick := min(s.opts.RenewEvery, s.opts.ProgressEvery)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		leaseUntil := time.Now().Add(s.opts.Lease)
		renewed := time.Now()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			progress := peer.takeProgress()
			if progress == nil && time.Since(renewed) < s.opts.RenewEvery {
				continue
			}
			now := s.opts.Now()
			u := store.Update{Set: map[string]any{aLeaseUntil: ms(now.Add(s.opts.Lease))}}
			index(&u, indexLease, r.ID, now.Add(s.opts.Lease))
			if progress != nil {
				enc, _ := json.Marshal(progress)
				u.Set[aProgress] = enc
			}
			_, err := s.opts.Store.Update(ctx, r.Key(), u, running(holder)...)
			switch {
			case errors.Is(err, store.ErrConflict):
				cancel(errLeaseLost)
				return
			case err != nil:
				if progress != nil {
					peer.restoreProgress(progress)
				}
				if time.Now().After(leaseUntil) {
					cancel(errLeaseLost)
					return
				}
			default:
				renewed, leaseUntil = time.Now(), time.Now().Add(s.opts.Lease)
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}
