package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unsafe"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/store"
)

// ErrUnknownTool is the outcome for a tool that does not exist or that the
// credential's scopes do not allow: the two are indistinguishable, as on
// tools/call (docs/decisions.md "Answers on the wire").
var ErrUnknownTool = errors.New("tools: unknown tool")

// Invocation is one governed tool call, wherever it runs (issue 9, "the
// invocation core"): the /mcp handler's tools/call and resources/read, a
// task worker long after its request ended, and an approval executing with
// two credentials' rights all build one and call Registry.Call, which runs
// docs/architecture.md "The request path" steps 3–10 — kill switch, scope,
// validation, the rate decision, the matter funnel, the credential-class
// floor, (writes) the write budget, then the handler and the attestation —
// and reports the outcome with the writes to commit. Nothing in it is HTTP.
type Invocation struct {
	// Name is the tool; Arguments its arguments object (nil or null: {}).
	Name      string
	Arguments json.RawMessage
	// Credential is the admitted credential: a request's, or one re-admitted
	// from the store for work that outlives its request (gate.Readmit).
	Credential *auth.Credential
	// Also, when set, is a second credential whose rights the call must
	// also have (an approval executes with the requester's and the
	// decider's rights intersected): its scope, its funnel and its class
	// floor all apply too.
	Also *auth.Credential
	// Revision is the protocol revision whose features apply: structured
	// output from 2025-06-18, multi-round-trip questions in 2026-07-28.
	Revision mcp.Revision
	// Rate is the rate-limit verdict decided at admission. Work that does
	// not charge the limit (a task worker) passes an allowed Decision.
	Rate ratelimit.Decision
	// Peer is the client end of the call (log, progress, ask); nil means
	// the client cannot be asked (mcp.NoPeer).
	Peer mcp.Peer
	// Once, when set, is the at-most-once claim of the request (the 2026
	// request state's nonce row): an AtMostOnce tool's writes are
	// committed with it, so a replay is refused CONFLICT.
	Once *store.Op
	// Now is when the call arrived by the server's clock (what data and
	// expiries are judged against); Arrived by the monotonic clock, for
	// durations.
	Now, Arrived time.Time
	// Audit is the call's audit row being built: the core sets Tool,
	// Matter, the query digest and Outcome ("ok", "ok:replay" or the
	// refusal class); its caller commits it.
	Audit *audit.Record
	// InBatch marks a call inside a JSON-RPC batch (write tools refuse).
	InBatch bool

	replay bool // the handler answered a replay from its row (Call.Replayed)
}

// Outcome is what a governed invocation decided.
type Outcome struct {
	// Result is the CallToolResult to answer, success or refusal; nil when
	// Err is set.
	Result *mcp.CallToolResult
	// Structured is a success's structured result as compact JSON (what
	// resources/read serves); nil for a refusal or a Raw tool.
	Structured json.RawMessage
	// Refusal is the refusal, when the pipeline or the tool refused.
	Refusal *Refusal
	// Err is an outcome that is not a tool result: ErrUnknownTool,
	// mcp.ErrAskCancelled, mcp.ErrInputRequired, or a *mcp.Error the
	// transport answers as a protocol error.
	Err error
	// Writes are the call's conditional writes, to commit with its audit
	// row and rate count; the answer above holds only once they are
	// written. Nil for a call that writes nothing.
	Writes *Writes
}

// Writes are a call's writes as the invocation core hands them to whoever
// commits (issue 9, "answers after the write").
type Writes struct {
	Ops []store.Op
	// After are the effects that must follow the commit.
	After []mcp.Effect
	// Settle is the outcome to answer when a condition of Ops failed
	// (failed indexes Ops): nothing of Ops was written. It may read (the
	// original receipt). The audit row's outcome follows it.
	Settle func(ctx context.Context, failed int) Outcome
	// Committed, when set, is the outcome to answer once the commit
	// succeeded, replacing the one Call returned: the handler's answer
	// read back after its write (Write.Answer). Nil: the outcome stands.
	Committed func(ctx context.Context) Outcome
}

// Call runs one tool through the governed pipeline (Invocation). It never
// commits: the caller commits Outcome.Writes with the audit row (the /mcp
// exchange, or Run).
func (r *Registry) Call(ctx context.Context, inv Invocation) Outcome {
	t, ok := r.tools[inv.Name]
	// A scope the credential lacks makes the tool unknown; a StandardOnly
	// tool is refused CLIENT_SAFE_REFUSED in govern (it is only hidden from
	// a client-safe credential's tools/list).
	if !ok || !inv.Credential.Has(t.spec.Scope) || (inv.Also != nil && !inv.Also.Has(t.spec.Scope)) {
		return Outcome{Err: ErrUnknownTool}
	}
	args := inv.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	doc, err := decodeDoc(args)
	if err != nil {
		return Outcome{Err: mcp.InvalidParams("Invalid params: arguments must be an object.")}
	}
	if _, isObject := doc.(map[string]any); !isObject {
		return Outcome{Err: mcp.InvalidParams("Invalid params: arguments must be an object.")}
	}
	inv.Audit.Tool = inv.Name
	if d, ok := inv.Peer.(interface{ DropUnsealedAnswers() }); ok && t.spec.AtMostOnce {
		d.DropUnsealedAnswers() // its answers must come with the state its claim binds
	}
	structured, w, refusal := r.govern(ctx, &inv, t, args, doc)
	out := r.shape(ctx, &inv, t, structured, refusal)
	// A write tool's own denied decision may carry writes (an upload
	// rejected after its bytes failed verification frees its slot): they
	// are committed with its refusal. Every other refusal writes nothing.
	if out.Err != nil || (out.Refusal != nil && (refusal != nil || w == nil)) {
		return out
	}
	if (inv.replay || (w != nil && w.Replay)) && out.Refusal == nil {
		inv.Audit.Outcome = audit.OutcomeReplay
	}
	if ops := r.opsOf(&inv, t, w); len(ops) > 0 || (w != nil && (len(w.After) > 0 || w.Answer != nil)) {
		out.Writes = &Writes{Ops: ops, Settle: func(ctx context.Context, failed int) Outcome {
			return r.settle(ctx, &inv, t, w, failed)
		}}
		if w != nil {
			out.Writes.After = w.After
		}
		if w != nil && w.Answer != nil {
			out.Writes.Committed = func(ctx context.Context) Outcome {
				return r.committed(ctx, &inv, t, w)
			}
		}
	}
	return out
}

// committed answers a call whose writes were committed from its Answer
// (the row read back). The audit row was committed with the call's
// outcome, which is kept.
func (r *Registry) committed(ctx context.Context, inv *Invocation, t *tool, w *Write) Outcome {
	outcome := inv.Audit.Outcome
	defer func() { inv.Audit.Outcome = outcome }()
	res, err := w.Answer(ctx)
	if err != nil {
		return r.shape(ctx, inv, t, nil, r.refusalFor(ctx, t.spec.Name, err))
	}
	return r.shape(ctx, inv, t, res, nil)
}

// opsOf are the writes of a call: the at-most-once claim first (when the
// tool is AtMostOnce and the request carries one), then the handler's.
func (r *Registry) opsOf(inv *Invocation, t *tool, w *Write) []store.Op {
	var ops []store.Op
	if t.spec.AtMostOnce && inv.Once != nil {
		ops = append(ops, *inv.Once)
	}
	if w != nil {
		ops = append(ops, w.Ops...)
	}
	return ops
}

// settle answers a call whose writes were cancelled by a condition: the
// claim's failure is a replay of an at-most-once call (CONFLICT); a
// handler op's failure is the handler's Conflict answer.
func (r *Registry) settle(ctx context.Context, inv *Invocation, t *tool, w *Write, failed int) Outcome {
	if t.spec.AtMostOnce && inv.Once != nil {
		if failed == 0 {
			return r.shape(ctx, inv, t, nil, Refuse(ClassConflict, msgReplayed))
		}
		failed--
	}
	if w == nil || w.Conflict == nil {
		return r.shape(ctx, inv, t, nil, Refuse(ClassConflict, msgConflict))
	}
	out, replay, err := w.Conflict(ctx, failed)
	if err != nil {
		return r.shape(ctx, inv, t, nil, r.refusalFor(ctx, t.spec.Name, err))
	}
	o := r.shape(ctx, inv, t, out, nil)
	if replay && o.Refusal == nil && o.Err == nil {
		inv.Audit.Outcome = audit.OutcomeReplay
	}
	return o
}

// shape turns the pipeline's result or refusal into the outcome answered:
// the CallToolResult for the invocation's revision and the audit outcome.
func (r *Registry) shape(ctx context.Context, inv *Invocation, t *tool, structured any, refusal *Refusal) Outcome {
	if err := refusal.passThrough(); err != nil {
		return Outcome{Err: err} // cancelled, input required, or a protocol error
	}
	if refusal != nil {
		inv.Audit.Outcome = refusal.Class
		return Outcome{Result: r.refusalResult(inv, refusal), Refusal: refusal}
	}
	inv.Audit.Outcome = audit.OutcomeOK
	if d, ok := structured.(Decision); ok && d.Status == StatusDenied && d.Error != nil {
		// A write tool's own refusal, answered as a decision: isError.
		inv.Audit.Outcome = d.Error.Class
		return Outcome{Result: r.refusalResult(inv, d.Error), Refusal: d.Error}
	}
	if raw, ok := structured.(Raw); ok {
		return Outcome{Result: &mcp.CallToolResult{Content: raw.Content, IsError: raw.IsError,
			Meta: map[string]any{"ms": elapsedMs(inv.Arrived)}}}
	}
	enc, err := r.encode(structured)
	if err != nil {
		r.opts.Logger.ErrorContext(ctx, "encode tool result", "tool", t.spec.Name, "err", err)
		ref := Refuse(ClassInternal, msgInternal)
		inv.Audit.Outcome = ref.Class
		return Outcome{Result: r.refusalResult(inv, ref), Refusal: ref}
	}
	// The one encoding is both the text block and structuredContent (issue
	// 19, item 2): the text is enc itself, not a copy — enc is never
	// written after encode returns it.
	res := &mcp.CallToolResult{
		Content: []mcp.Content{mcp.TextContent(unsafe.String(unsafe.SliceData(enc), len(enc)))},
		Meta:    map[string]any{"ms": elapsedMs(inv.Arrived)},
	}
	if inv.Revision.HasStructuredOutput() {
		res.StructuredContent = json.RawMessage(enc)
		if l, ok := structured.(Linked); ok {
			res.Content = append(res.Content, l.ResourceLinks()...)
		}
	}
	return Outcome{Result: res, Structured: enc}
}

// maxScratch is the largest encoding buffer kept for reuse; a larger
// result's buffer is left to the collector.
const maxScratch = 256 << 10

// encode is mcp.Marshal (compact, no HTML escaping) through a buffer the
// registry reuses across calls, so that a result's encoding grows no
// buffer of its own: it returns a new slice of exactly the result's bytes.
func (r *Registry) encode(v any) ([]byte, error) {
	buf, _ := r.scratch.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	e := json.NewEncoder(buf)
	e.SetEscapeHTML(false)
	err := e.Encode(v)
	var out []byte
	if err == nil {
		out = bytes.Clone(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	if buf.Cap() <= maxScratch {
		r.scratch.Put(buf)
	}
	return out, err
}

// Committer is what Run commits through: the gate (mcp.Gate).
type Committer interface {
	Commit(ctx context.Context, adm *mcp.Admission, c mcp.Commitment) error
}

// Run is the whole governed invocation outside HTTP: Call, then the one
// commit of the audit row, count requests of rate count (0 for work that
// does not charge the limit) and the call's writes through the gate, then
// the effects that follow it. When a condition of the writes fails, the
// settled outcome is answered and the audit row and count are committed in
// one more write. adm is the admission the call runs under (a request's,
// or gate.Readmit's). The error is only a failure to commit at all: then
// nothing of the call happened.
//
// The task worker, the approval page and tests call it; the /mcp exchange
// commits a request's calls itself (it batches messages and sessions).
func (r *Registry) Run(ctx context.Context, c Committer, adm *mcp.Admission, inv Invocation, count int) (Outcome, error) {
	out := r.Call(ctx, inv)
	if out.Err != nil && inv.Audit.Outcome == "" {
		inv.Audit.Outcome = errOutcome(out.Err)
	}
	ctx = context.WithoutCancel(ctx)
	writes := out.Writes
	for round := 0; round < 3; round++ {
		inv.Audit.DurationMs = time.Since(inv.Arrived).Milliseconds()
		cm := mcp.Commitment{Audit: []audit.Record{*inv.Audit}, Count: count}
		if writes != nil {
			cm.Ops = writes.Ops
		}
		err := c.Commit(ctx, adm, cm)
		var oc *mcp.OpsConflictError
		switch {
		case err == nil:
			if writes != nil {
				if writes.Committed != nil {
					out = writes.Committed(ctx)
				}
				runEffects(ctx, writes.After, r.opts.Logger.ErrorContext)
			}
			return out, nil
		case errors.As(err, &oc) && writes != nil && writes.Settle != nil:
			out = writes.Settle(ctx, oc.Index)
			writes = nil
		case errors.Is(err, mcp.ErrRateExceeded) && count > 0:
			count = 0
			writes = nil
			secs := max(1, inv.Rate.RetryAfterSeconds())
			ref := &Refusal{Class: ClassRateLimited, Limit: inv.Rate.Limit, RetryAfterS: secs,
				Message: fmt.Sprintf("Rate limit exceeded for this credential: retry after %d seconds.", secs)}
			inv.Audit.Outcome = ref.Class
			out = Outcome{Result: r.refusalResult(&inv, ref), Refusal: ref}
		default:
			return Outcome{}, fmt.Errorf("run %s: commit: %w", inv.Name, err)
		}
	}
	return Outcome{}, fmt.Errorf("run %s: commit did not settle", inv.Name)
}

// errOutcome is the audit outcome of an outcome that is not a tool result,
// as the /mcp exchange records the same: "rpc:<code>" for a protocol error
// (an unknown tool is -32602), "cancelled", "input_required".
func errOutcome(err error) string {
	var e *mcp.Error
	switch {
	case errors.Is(err, ErrUnknownTool):
		return "rpc:" + strconv.Itoa(mcp.CodeInvalidParams)
	case errors.As(err, &e):
		return "rpc:" + strconv.Itoa(e.Code)
	case errors.Is(err, mcp.ErrInputRequired):
		return "input_required"
	}
	return "cancelled"
}

// runEffects runs the effects that follow a commit, logging a failure
// with its recovery path.
func runEffects(ctx context.Context, effects []mcp.Effect, logf func(context.Context, string, ...any)) {
	for _, e := range effects {
		ectx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := e.Run(ectx)
		cancel()
		if err != nil {
			logf(ctx, "effect after commit failed", "effect", e.Name, "recovery", e.Recovery, "err", err)
		}
	}
}

// Invoke runs one tool for a protocol method other than tools/call —
// resources/read, which serves Custody's read tools addressed by URI —
// through the same invocation core as tools/call (Call), with req's
// credential, revision, rate verdict, client and audit row. args is the
// tool's arguments object. On success it returns the tool's structured
// result as compact JSON: exactly the structuredContent tools/call would
// answer (for a read tool, the attested envelope of docs/contracts.md §1).
// Errors: ErrUnknownTool; a *Refusal (use errors.As) when the pipeline or
// the tool refused; mcp.ErrAskCancelled, mcp.ErrInputRequired or a
// *mcp.Error for the method handler to return as is. A read tool writes
// nothing; a tool with writes cannot be served this way (an error).
func (r *Registry) Invoke(ctx context.Context, req *mcp.Request, name string, args map[string]any) (json.RawMessage, error) {
	if args == nil {
		args = map[string]any{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("invoke %s: encode arguments: %w", name, err)
	}
	out := r.Call(ctx, r.invocation(req, name, raw))
	switch {
	case out.Err != nil:
		return nil, out.Err
	case out.Refusal != nil:
		return nil, out.Refusal
	case out.Writes != nil:
		return nil, fmt.Errorf("invoke %s: a tool with writes is not served by URI", name)
	case out.Structured == nil:
		return nil, fmt.Errorf("invoke %s: the tool answers with content blocks, not a structured result", name)
	}
	return out.Structured, nil
}

// invocation builds the Invocation of a /mcp request.
func (r *Registry) invocation(req *mcp.Request, name string, args json.RawMessage) Invocation {
	inv := Invocation{
		Name: name, Arguments: args, Credential: req.Credential, Revision: req.Revision,
		Rate: req.Rate, Peer: req, Now: req.Started, Arrived: req.Arrived, Audit: req.Audit,
		InBatch: req.InBatch,
	}
	if op, ok := req.OnceClaim(); ok {
		inv.Once = &op
	}
	return inv
}
