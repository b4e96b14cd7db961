package writetools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/custodymcp/custody/shared/attest"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/handoff"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/tools"
)

const (
	scopeWrite = auth.ScopeWrite
	scopeRead  = auth.ScopeRead
)

// ActionArgs are propose_action's args: an object whose schema is the
// action's (list_actions). Numbers are kept exactly as written
// (json.Number), so the args are validated and stored as sent.
type ActionArgs map[string]any

// UnmarshalJSON decodes an object with numbers as json.Number.
func (a *ActionArgs) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return err
	}
	*a = m
	return nil
}

// ProposeInput is propose_action's input.
type ProposeInput struct {
	CaseID         string     `json:"case_id" jsonschema:"The matter's case_id (from list_matters)." schema:"minLength=1;maxLength=128"`
	Action         string     `json:"action" jsonschema:"The action to propose (list_actions)."`
	Args           ActionArgs `json:"args" jsonschema:"The action's arguments, following its args schema from list_actions. Override flags, matter and tenant ids and confirmation fields are removed before validation and listed in stripped_fields."`
	Reason         string     `json:"reason" jsonschema:"Why the action should be taken: shown to the approver as the agent's own, unverified reason." schema:"minLength=1;maxLength=2000"`
	IdempotencyKey string     `json:"idempotency_key" jsonschema:"A key of your choice naming this proposal: repeat it to retry safely (1 to 128 printable ASCII characters)." schema:"minLength=1;maxLength=128;pattern=^[ -~]+$"`

	plan *plan // what Prefetch worked out, for the handler
}

// MatterID implements tools.MatterScoped.
func (in ProposeInput) MatterID() string { return in.CaseID }

// plan is a proposal worked out before the batch read: the action, its
// args stripped and validated, the digest of the call as submitted, and
// where each prefetched row sits.
type plan struct {
	action   *proposals.Action
	via      string
	args     proposals.Args
	canon    json.RawMessage
	digest   string
	stripped []string
	target   proposals.Ref
	cites    []proposals.Ref
	id       string
	// indexes into Call.Prefetched
	proposal, counter, config int
	refAt                     map[proposals.Ref]int
}

// proposeInputSchema is propose_action's input schema: inferred from
// ProposeInput, with the registry's action names as the enum of "action".
func (wt *writeTools) proposeInputSchema() (json.RawMessage, error) {
	s, err := tools.NewArgsSchema(ToolProposeAction, reflect.TypeFor[ProposeInput]())
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(s.JSON(), &doc); err != nil {
		return nil, err
	}
	props, _ := doc["properties"].(map[string]any)
	action, _ := props["action"].(map[string]any)
	if action == nil {
		return nil, errors.New("writetools: propose_action's schema has no action property")
	}
	action["enum"] = wt.actions.Names()
	return json.Marshal(doc)
}

// prefetchPropose works out the proposal of a propose_action call (its
// pointer input) before the batch read: strips, validates, and names the
// rows to read.
func (wt *writeTools) prefetchPropose(c *tools.Call, in any) ([]store.Key, error) {
	p := in.(*ProposeInput)
	pl, err := wt.plan(c, p.CaseID, p.Action, p.Args, p.IdempotencyKey, ToolProposeAction)
	if err != nil {
		return nil, err
	}
	p.plan = pl
	return pl.keys(c.Who.Tenant, p.CaseID), nil
}

// plan strips and validates submitted args of action and lays out the
// rows the filing reads: the proposal id's row, the counter, the action's
// configuration, then the target and the cited rows (the matter itself is
// read by the core).
func (wt *writeTools) plan(c *tools.Call, matter, actionName string, submitted map[string]any, key, via string) (*plan, error) {
	a, ok := wt.actions.Action(actionName)
	if !ok {
		return nil, tools.Invalid("action", "The field 'action' must name an action list_actions lists.")
	}
	if submitted == nil {
		submitted = map[string]any{}
	}
	digest, err := proposals.CallDigest(actionName, submitted)
	if err != nil {
		return nil, tools.Invalid("args", "The field 'args' could not be read as an object.")
	}
	clean, stripped := proposals.Strip(submitted)
	canon, err := json.Marshal(clean)
	if err != nil {
		return nil, tools.Invalid("args", "The field 'args' could not be read as an object.")
	}
	doc, err := tools.DecodeJSON(canon)
	if err != nil {
		return nil, tools.Invalid("args", "The field 'args' could not be read as an object.")
	}
	if ref := wt.schemas[actionName].Validate(doc, "args"); ref != nil {
		return nil, ref
	}
	args, err := a.Decode(canon)
	if err != nil {
		// The schema accepted what Go cannot hold (an integer beyond int).
		return nil, tools.Invalid("args", "The field 'args' does not fit the action's schema.")
	}
	pl := &plan{action: a, via: via, args: args, canon: canon, digest: digest, stripped: stripped,
		target: a.TargetOf(args), cites: a.CitesOf(args), id: proposals.ID(c.Credential.ID, matter, key),
		refAt: map[proposals.Ref]int{}}
	if stripped == nil {
		pl.stripped = []string{}
	}
	return pl, nil
}

// keys lays out the plan's rows (and records where each sits).
func (pl *plan) keys(tenant, matter string) []store.Key {
	keys := []store.Key{
		proposals.Key(tenant, matter, pl.id),
		proposals.CounterKey(tenant, matter),
		proposals.ConfigKey(tenant, pl.action.Name),
	}
	pl.proposal, pl.counter, pl.config = 0, 1, 2
	for _, r := range append([]proposals.Ref{pl.target}, pl.cites...) {
		if r.Kind == proposals.TargetMatter {
			continue // the core reads the matter
		}
		if _, seen := pl.refAt[r]; seen {
			continue
		}
		k, err := proposals.RefKey(tenant, matter, r)
		if err != nil {
			continue // a kind the registry's tests rule out; the handler refuses it
		}
		pl.refAt[r] = len(keys)
		keys = append(keys, k)
	}
	return keys
}

// proposeAction files a proposal (docs/contracts.md §4): it answers
// pending_approval, read back from the stored row after the commit, or
// denied.
func (wt *writeTools) proposeAction(ctx context.Context, c *tools.Call, in ProposeInput) (tools.Decision, error) {
	return wt.file(ctx, c, in.plan, in.Reason)
}

// file files the plan's proposal, or answers the original receipt of the
// same call, or refuses.
func (wt *writeTools) file(ctx context.Context, c *tools.Call, pl *plan, reason string) (tools.Decision, error) {
	if pl == nil {
		return tools.Decision{}, errors.New("writetools: the proposal was not planned")
	}
	rows := c.Prefetched
	tenant := c.Who.Tenant
	key := proposals.Key(tenant, c.Matter.ID, pl.id)
	if it := rows[pl.proposal]; it != nil {
		// The same key was used before: the same call is a replay, answered
		// from the row read back after this call's commit (bucket and audit
		// only); another is CONFLICT.
		p, err := proposals.Decode(*it)
		if err != nil {
			return tools.Decision{}, err
		}
		if p.ArgsDigest != pl.digest {
			return tools.Denied(conflictRefusal()), nil
		}
		c.Write(tools.Write{Replay: true, Answer: wt.readBack(key)})
		return wt.receipt(p), nil
	}
	eff := pl.action.Effective(proposals.DecodeConfig(rows[pl.config]))
	if !eff.Enabled {
		return tools.Denied(tools.Refuse(tools.ClassKillSwitch, "This action is switched off for the firm right now; nothing was filed.")), nil
	}
	if proposals.Pending(rows[pl.counter]) >= proposals.MaxPending {
		return tools.Denied(backpressure()), nil
	}
	target := proposals.Target{Ref: pl.target}
	if target.Kind == proposals.TargetMatter {
		target.ID, target.Version = c.Matter.ID, c.MatterVersion
	}
	for _, r := range append([]proposals.Ref{pl.target}, pl.cites...) {
		if r.Kind == proposals.TargetMatter {
			continue
		}
		it := rows[pl.refAt[r]]
		if ref := visibleRef(c, r, it); ref != nil {
			return tools.Denied(ref), nil
		}
		if r == pl.target {
			target.Version = it.Version
		}
	}
	p := &proposals.Proposal{
		ID: pl.id, Tenant: tenant, CaseID: c.Matter.ID, Action: pl.action.Name, Args: pl.canon,
		ArgsDigest: pl.digest, Target: target, Cites: pl.cites, Impact: pl.action.Impact,
		WhatWillHappen:  pl.action.WhatWillHappen(pl.args, c.Matter),
		DeliverableNoun: pl.action.DeliverableNoun, SupervisionFloor: eff.Floor,
		ConfirmRequired: pl.action.Confirm, Conflict: pl.action.Conflict, BatchEligible: pl.action.BatchEligible(eff),
		Basis: pl.action.BasisOf(pl.args), Reason: reason,
		OverrideAttempted: len(pl.stripped) > 0, StrippedFields: pl.stripped,
		RequestedBy:       proposals.RequestedBy{Kind: "principal", Ref: c.Credential.Reference()},
		CredentialKeyHash: c.Credential.KeyHash,
		FiledVia:          pl.via, CreatedAt: c.Now.UTC(), ExpiresAt: c.Now.UTC().Add(wt.life), Status: proposals.StatusPending,
	}
	ho := wt.handOff(c, p)
	ops, err := p.FileOps()
	if err != nil {
		return tools.Decision{}, err
	}
	answer := wt.readBack(key)
	if ho != nil {
		// The binding and the parked question join the filing's one
		// transaction (issue 15, item 3): round trips stay 3 reads + 1 write.
		ops = append(ops, ho.ops...)
		answer = ho.answer(key, wt)
	}
	c.Write(tools.Write{
		Ops: ops,
		Conflict: func(ctx context.Context, failed int) (any, bool, error) {
			if failed == proposals.OpCounter {
				// Lost the race for the matter's last places.
				return tools.Denied(backpressure()), false, nil
			}
			// Lost the race to a call with the same key: the same call is
			// a replay of the row it wrote.
			it, err := wt.store.Get(ctx, key)
			if err != nil {
				return nil, false, readBackFailed()
			}
			orig, err := proposals.Decode(it)
			if err != nil {
				return nil, false, err
			}
			if orig.ArgsDigest != pl.digest {
				return tools.Denied(conflictRefusal()), false, nil
			}
			return wt.receipt(orig), true, nil
		},
		Answer: answer,
	})
	return wt.receipt(p), nil
}

// urlPeer is the client end of a call that may carry a URL-mode
// elicitation on its own stream without waiting (*mcp.Request in the 2025
// era).
type urlPeer interface {
	URLElicitationTarget() (mcp.URLTarget, bool)
	SendRequest(id, method string, params any) error
}

// handOffPlan is a filing's hand-off: the rows it writes with the
// proposal and the elicitation/create it sends once the proposal is read
// back pending.
type handOffPlan struct {
	id       string // the elicitation id
	parkedID string // the JSON-RPC id of the elicitation/create
	url      string
	ops      []store.Op
	peer     urlPeer
}

// handOff plans the hand-off of proposal p (docs/decisions.md "The
// hand-off"; issue 15): only when the call's peer is a 2025-11-25 session
// that declared elicitation.url, on a POST that accepts text/event-stream
// (mcp.Request.URLElicitationTarget), and the approval page is served.
// It names the binding in p and returns the binding row, expiring with the
// proposal, and the parked question, expiring after handoff.AnswerTTL —
// nil when no hand-off goes with this call.
func (wt *writeTools) handOff(c *tools.Call, p *proposals.Proposal) *handOffPlan {
	peer, ok := c.Peer.(urlPeer)
	if !ok || wt.publicBase == "" {
		return nil
	}
	target, ok := peer.URLElicitationTarget()
	if !ok {
		return nil
	}
	id := handoff.NewID()
	b := &handoff.Binding{ID: id, Tenant: p.Tenant, Owner: c.Credential.Owner, CredentialID: c.Credential.ID,
		ApprovalID: p.ID, CaseID: p.CaseID, SessionID: target.SessionID, RequestID: target.RequestID, ExpiresAt: p.ExpiresAt}
	parkedID, parked := mcp.NewQuestion(target.SessionID, c.Credential.ID, handoff.Method, target.RequestID, c.Now.Add(wt.answerTTL))
	parked.Attrs[handoff.ParkedAttr] = handoff.Key(id).PK
	p.Handoff = &proposals.HandoffRef{ID: id, Session: target.SessionID}
	return &handOffPlan{id: id, parkedID: parkedID, url: handoff.URL(wt.publicBase, id), peer: peer,
		ops: []store.Op{store.PutOp(b.Item(), store.NotExists()), store.PutOp(parked, store.NotExists())}}
}

// answer is the filing's answer with its hand-off: the receipt read back
// as readBack does, and — only when the row read back is pending and names
// this hand-off — the elicitation/create sent first on the call's stream.
// It never waits for the client's answer; a stream that is gone loses the
// link, never the receipt's standing (the proposal is filed).
func (ho *handOffPlan) answer(k store.Key, wt *writeTools) func(ctx context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		it, err := wt.store.Get(ctx, k)
		if err != nil {
			return tools.Denied(readBackFailed()), nil
		}
		p, err := proposals.Decode(it)
		if err != nil {
			return nil, err
		}
		if p.Status == proposals.StatusPending && p.Handoff != nil && p.Handoff.ID == ho.id {
			_ = ho.peer.SendRequest(ho.parkedID, handoff.Method, map[string]any{
				"mode": "url", "elicitationId": ho.id, "url": ho.url, "message": handoff.Message})
		}
		return wt.receipt(p), nil
	}
}

// readBack answers from the proposal row read back (strongly consistent)
// after the commit: the receipt is what the store holds. A failed read is
// UNAVAILABLE, saying what is safe.
func (wt *writeTools) readBack(k store.Key) func(ctx context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		it, err := wt.store.Get(ctx, k)
		if err != nil {
			return tools.Denied(readBackFailed()), nil
		}
		p, err := proposals.Decode(it)
		if err != nil {
			return nil, err
		}
		return wt.receipt(p), nil
	}
}

// receipt is the pending_approval decision of a stored proposal.
func (wt *writeTools) receipt(p *proposals.Proposal) tools.Decision {
	stripped := p.StrippedFields
	if stripped == nil {
		stripped = []string{}
	}
	return tools.Pending(tools.PendingApproval{
		ApprovalID: p.ID, Action: p.Action, CaseID: p.CaseID, WhatWillHappen: p.WhatWillHappen,
		DeliverableNoun: p.DeliverableNoun, SupervisionFloor: string(p.SupervisionFloor),
		ConfirmRequired: p.ConfirmRequired, BatchEligible: p.BatchEligible, CappedAt: CappedAt,
		OverrideAttempt: p.OverrideAttempted, StrippedFields: stripped,
		ExpiresAt: attest.At(p.ExpiresAt).String(), ReviewURL: wt.reviewURL, NextStep: NextStep,
	})
}

// visibleRef refuses a target or cited row that does not exist in the
// matter or that the credential may not see (withheld and absent are one
// answer, docs/contracts.md §3).
func visibleRef(c *tools.Call, r proposals.Ref, it *store.Item) *tools.Refusal {
	switch r.Kind {
	case proposals.TargetDocument:
		var d records.Document
		if it == nil || records.DecodeRow(*it, &d) != nil || !c.Sees(d.Privilege) {
			return tools.Refuse(tools.ClassNotFound, "A document the args name does not exist in this matter.")
		}
	case proposals.TargetFact:
		var f records.Fact
		if it == nil || records.DecodeRow(*it, &f) != nil || !c.Sees(f.Privilege) {
			return tools.Refuse(tools.ClassNotFound, "A fact the args name does not exist in this matter.")
		}
	default:
		return tools.Refuse(tools.ClassNotFound, "A row the args name does not exist in this matter.")
	}
	return nil
}

func conflictRefusal() *tools.Refusal {
	return tools.Refuse(tools.ClassConflict, "That idempotency_key already names another call on this matter with other arguments; nothing was filed. Use a new key for a new call.")
}

func backpressure() *tools.Refusal {
	return tools.Refuse(tools.ClassBackpressure, fmt.Sprintf("This matter already has %d proposals waiting for a decision; nothing was filed. Retry once some are decided or expire.", proposals.MaxPending))
}

func readBackFailed() *tools.Refusal {
	return tools.Refuse(tools.ClassUnavailable, "The proposal may have been filed, but it could not be read back just now. Retry with the same idempotency_key: a retry cannot file it twice.")
}

// autonomyNames: propose_action obeys its action's setting too.
func autonomyNames(in any) []string {
	p := in.(*ProposeInput)
	if p.plan == nil {
		return nil
	}
	return []string{p.plan.action.Name}
}
