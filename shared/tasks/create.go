package tasks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/tools"
)

// MinTTL is the shortest lifetime a task is given, whatever the request
// asks (MCP basic/utilities/tasks §TTL: a receiver may override the
// requested ttl): a task gone before its result can be read serves nobody.
const MinTTL = time.Minute

// CreateTaskResult answers a task-augmented tools/call (MCP schema
// CreateTaskResult).
type CreateTaskResult struct {
	Task Task           `json:"task"`
	Meta map[string]any `json:"_meta,omitempty"`
}

// metaImmediate is the _meta key of the text a host may hand its model at
// once while the task runs (MCP basic/utilities/tasks §Creating Tasks).
const metaImmediate = "io.modelcontextprotocol/model-immediate-response"

// ttlOf is the lifetime a request's ttl (milliseconds, nil when absent)
// gives: the default, else the request's within [MinTTL, MaxTTL].
func (s *Service) ttlOf(ttl *int64) time.Duration {
	if ttl == nil {
		return s.opts.DefaultTTL
	}
	if *ttl > s.opts.MaxTTL.Milliseconds() {
		return s.opts.MaxTTL
	}
	return max(time.Duration(*ttl)*time.Millisecond, MinTTL)
}

// Create implements tools.Tasks: the task row, queued, joins the
// request's one transaction (with its arguments' parts when they are
// large), the message to the worker follows the commit, and the audit row
// of the request is the task's creation row (outcome task:created). The
// task keeps the revision of the request that created it: its dialect
// (ext2026.go), in which alone its methods find it. The answer is the
// 2025-11-25 CreateTaskResult, or in the 2026-07-28 era the flat task
// (resultType "task", with ttlMs and pollIntervalMs).
func (s *Service) Create(ctx context.Context, req *mcp.Request, inv tools.Invocation, task tools.NewTask) (any, error) {
	now := req.Started
	cred := inv.Credential
	life := s.ttlOf(task.TTL)
	r := &Row{Tenant: cred.Tenant, CredentialID: cred.ID, ID: newID(now), Version: 1,
		Status: StatusQueued, Tool: inv.Name, Matter: inv.Audit.Matter, Revision: inv.Revision,
		Ref: cred.Reference(), Created: now, Updated: now, TTL: life, Poll: s.opts.PollInterval,
		Queued: now, Message: "The task is queued for a worker."}
	ref, err := json.Marshal(r.Ref)
	if err != nil {
		return nil, fmt.Errorf("create task: %w", err)
	}
	expiresAt := r.Expires().Add(PurgeGrace).Unix()
	args, err := split(r, "args", inv.Arguments, argsInlineMax, expiresAt)
	if errors.Is(err, ErrPayloadTooLarge) {
		return nil, mcp.InvalidParams(fmt.Sprintf("Invalid params: the arguments are too large to keep with a task (at most %d bytes).", maxParts*partBytes))
	}
	sum := sha256.Sum256(inv.Arguments)
	attrs := map[string]any{
		aTenant: r.Tenant, aCredentialID: r.CredentialID, aCredential: ref,
		aStatus: StatusQueued, aOpen: true, aTool: r.Tool, aRevision: string(r.Revision),
		aCreated: ms(now), aUpdated: ms(now), aTTL: life.Milliseconds(), aPoll: r.Poll.Milliseconds(),
		aAttempts: int64(0), aQueued: ms(now), aMessage: r.Message, aArgsSHA256: hex.EncodeToString(sum[:]),
		aClientCaps: []byte(req.ClientCapabilities()),
	}
	if r.Matter != "" {
		attrs[aMatter] = r.Matter
	}
	if args.inline != nil {
		attrs[aArgs] = args.inline
	} else {
		attrs[aArgsParts] = int64(len(args.parts))
	}
	if t := req.Params.ProgressToken(); t != nil && !req.Era2026() {
		// The extension sends no progress notifications: a 2026 task's
		// progress is its statusMessage (ext2026.go).
		attrs[aProgressToken] = []byte(t)
	}
	if len(task.Answers) > 0 {
		answers := make(map[string]Answer, len(task.Answers))
		for k, v := range task.Answers {
			answers[k] = Answer{Result: v}
		}
		enc, err := json.Marshal(answers)
		if err != nil {
			return nil, fmt.Errorf("create task: %w", err)
		}
		attrs[aInputAnswers] = enc
	}
	k := r.Key()
	pk, sk := indexEntry(indexQueued, r.ID, now.Add(s.opts.UnclaimedAfter))
	item := store.Item{PK: k.PK, SK: k.SK, Version: 1, ExpiresAt: expiresAt, GSI1PK: pk, GSI1SK: sk, Attrs: attrs}
	req.Write(mcp.Writes{
		Ops: append([]store.Op{store.PutOp(item, store.NotExists())}, args.parts...),
		OnConflict: func(context.Context, int) (any, error) {
			inv.Audit.Outcome = "" // the answer below records its own
			return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: "The task could not be created; retry."}
		},
		After: []mcp.Effect{s.sendEffect(r)},
	})
	inv.Audit.TaskID = r.ID
	inv.Audit.Outcome = audit.OutcomeTaskCreated
	if r.Dialect2026() {
		return createResult2026(r)
	}
	return CreateTaskResult{Task: r.Wire(), Meta: map[string]any{
		metaImmediate: fmt.Sprintf("Started task %s (%s); its result will come from tasks/result.", r.ID, r.Tool),
	}}, nil
}

// sendEffect is the queue send that follows a commit which left r queued.
// If the process dies before it runs, or the send fails, the sweeper's
// queued-unclaimed rule sends the message once the task has waited
// UnclaimedAfter.
func (s *Service) sendEffect(r *Row) mcp.Effect {
	return mcp.Effect{
		Name:     "queue task " + r.ID,
		Recovery: "the sweeper's queued-unclaimed rule sends it again after " + s.opts.UnclaimedAfter.String(),
		Run:      func(ctx context.Context) error { return s.send(ctx, r) },
	}
}

// send asks a worker to run r.
func (s *Service) send(ctx context.Context, r *Row) error {
	if s.opts.Queue == nil {
		return errors.New("tasks: no queue configured")
	}
	return s.opts.Queue.Send(ctx, queue.Message{Tenant: r.Tenant, TaskID: r.ID, CredentialID: r.CredentialID})
}
