package writetools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/attest"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/tools"
)

// ListActionsInput takes nothing.
type ListActionsInput struct{}

// ActionItem is one action list_actions shows.
type ActionItem struct {
	Name            string `json:"name"`
	DeliverableNoun string `json:"deliverable_noun"`
	Description     string `json:"description"`
	// ExternalEffectClass is "none" or "external"; null when the action's
	// impact is unavailable (never taken for none).
	ExternalEffectClass *string `json:"external_effect_class"`
	// SupervisionFloor is the floor in this firm (the registry's, or
	// higher when the firm raised it).
	SupervisionFloor string `json:"supervision_floor"`
	// Confirm: its approval needs a second confirmation.
	Confirm bool `json:"confirm"`
	// Basis names the basis its args must carry ("note",
	// "authority_citation"), or null.
	Basis      *string        `json:"basis"`
	ArgsSchema map[string]any `json:"args_schema"`
}

// ListActionsOutput is list_actions' answer.
type ListActionsOutput struct {
	Actions []ActionItem `json:"actions"`
}

// listActions lists the firm's enabled actions with their args schemas
// (propose_action advertises args as a bare object): one batch read of
// the actions' configuration rows.
func (wt *writeTools) listActions(ctx context.Context, c *tools.Call, _ ListActionsInput) (ListActionsOutput, error) {
	names := wt.actions.Names()
	keys := make([]store.Key, len(names))
	for i, n := range names {
		keys[i] = proposals.ConfigKey(c.Who.Tenant, n)
	}
	rows, err := wt.store.BatchGet(ctx, keys)
	if err != nil {
		return ListActionsOutput{}, fmt.Errorf("read the action configuration: %w", err)
	}
	out := ListActionsOutput{Actions: []ActionItem{}}
	for i, n := range names {
		a, _ := wt.actions.Action(n)
		eff := a.Effective(proposals.DecodeConfig(rows[i]))
		if !eff.Enabled {
			continue
		}
		var schema map[string]any
		if err := json.Unmarshal(wt.schemas[n].JSON(), &schema); err != nil {
			return ListActionsOutput{}, err
		}
		item := ActionItem{Name: n, DeliverableNoun: a.DeliverableNoun, Description: a.Description,
			SupervisionFloor: string(eff.Floor), Confirm: a.Confirm, ArgsSchema: schema}
		if a.Impact != nil {
			class := string(a.Impact.ExternalEffectClass)
			item.ExternalEffectClass = &class
		}
		if a.Basis != proposals.BasisNone {
			b := string(a.Basis)
			item.Basis = &b
		}
		out.Actions = append(out.Actions, item)
	}
	return out, nil
}

// ListMyProposalsInput filters and pages the credential's proposals.
type ListMyProposalsInput struct {
	CaseID string `json:"case_id,omitempty" jsonschema:"Only proposals on this matter." schema:"minLength=1;maxLength=128"`
	Status string `json:"status,omitempty" jsonschema:"Only proposals in this status." schema:"enum=pending|approved|declined|denied|expired"`
	tools.Paging
}

// MatterID implements tools.MatterScoped (the matter is optional).
func (in ListMyProposalsInput) MatterID() string { return in.CaseID }

// DecisionItem is how a decided proposal was decided.
type DecisionItem struct {
	// Code is the decision code (docs/contracts.md §6), null for an
	// approval or a withdrawal.
	Code      *string     `json:"code"`
	DecidedAt attest.Time `json:"decided_at"`
}

// ProposalItem is one of the credential's proposals.
type ProposalItem struct {
	ApprovalID       string        `json:"approval_id"`
	CaseID           string        `json:"case_id"`
	Action           string        `json:"action"`
	DeliverableNoun  string        `json:"deliverable_noun"`
	WhatWillHappen   string        `json:"what_will_happen"`
	SupervisionFloor string        `json:"supervision_floor"`
	Status           string        `json:"status"`
	Decision         *DecisionItem `json:"decision"`
	CreatedAt        attest.Time   `json:"created_at"`
	ExpiresAt        attest.Time   `json:"expires_at"`
	UpdatedAt        attest.Time   `json:"updated_at"`
	attest.Item
}

// ListMyProposalsOutput is list_my_proposals' answer.
type ListMyProposalsOutput struct {
	attest.Envelope
	Results          *[]ProposalItem  `json:"results"`
	ResultsReadState attest.ReadState `json:"results_read_state"`
	Page             *tools.Page      `json:"page"`
}

// listMyProposals lists the calling credential's proposals, newest first,
// from its pointer rows (one strongly consistent query of its partition):
// the status as readers must take it (an unswept pending proposal past its
// expiry is expired) and decision.code once decided. Proposals on matters
// the credential no longer reaches are left out, with a note. It can read
// no other credential's proposals and change none.
func (wt *writeTools) listMyProposals(ctx context.Context, c *tools.Call, in ListMyProposalsInput) (ListMyProposalsOutput, error) {
	b := attest.New(c.Now, c.Matter.ID, "Read this credential's own proposal pointers (strongly consistent); each item is its stored proposal, cited by its row.")
	// The matter rows read to decide what the credential reaches are
	// behind the answer (provenance and as_of), as for every read.
	reach := map[string]records.Matter{}
	if c.Matter.ID != "" {
		reach[c.Matter.ID] = c.Matter
		b.Row(urn(c, "matter", c.Matter.ID), c.Matter.UpdatedAt)
	} else {
		ms, err := c.Funnel.Matters(ctx, c.Who)
		if err != nil {
			return ListMyProposalsOutput{}, fmt.Errorf("list reachable matters: %w", err)
		}
		for _, m := range ms {
			reach[m.ID] = m
			b.Row(urn(c, "matter", m.ID), m.UpdatedAt)
		}
	}
	pointers, err := wt.pointers(ctx, c.Who, c.Credential.ID)
	var shown []*proposals.Pointer
	hidden := 0
	for _, p := range pointers {
		if in.CaseID != "" && p.CaseID != in.CaseID {
			continue
		}
		if _, ok := reach[p.CaseID]; !ok {
			hidden++
			continue
		}
		if in.Status != "" && string(p.StatusAt(c.Now)) != in.Status {
			continue
		}
		shown = append(shown, p)
	}
	out := ListMyProposalsOutput{}
	if err != nil {
		b.Unreadable("proposals")
		out.ResultsReadState = attest.StateUnreadable
		out.Envelope = b.Envelope()
		return out, nil
	}
	if hidden > 0 {
		b.Note(fmt.Sprintf("%d of this credential's proposals are on matters it no longer reaches and are not shown.", hidden))
	}
	page, block := tools.Paginate(shown, in.Paging, tools.MaxLimit, true)
	items := make([]ProposalItem, len(page))
	for i, p := range page {
		c.ReportMatter(p.CaseID)
		items[i] = proposalItem(c, p)
		b.Row(items[i].ProvenanceIDs[0], p.UpdatedAt)
		b.Add(items[i].Item)
	}
	out.Results, out.ResultsReadState, out.Page = &items, attest.ReadStateOf(len(shown), nil), &block
	out.Envelope = b.Envelope()
	return out, nil
}

// pointers reads every pointer of the credential, newest first.
func (wt *writeTools) pointers(ctx context.Context, who access.Who, credentialID string) ([]*proposals.Pointer, error) {
	q := store.Query{PK: proposals.PointerPartition(who.Tenant, credentialID),
		SK: store.SortKeyCondition{Prefix: proposals.PointerPrefix}, Descending: true}
	var out []*proposals.Pointer
	for {
		page, err := wt.store.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("read proposal pointers: %w", err)
		}
		for _, it := range page.Items {
			p, err := proposals.DecodePointer(it)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		if page.NextToken == "" {
			return out, nil
		}
		q.PageToken = page.NextToken
	}
}

func proposalItem(c *tools.Call, p *proposals.Pointer) ProposalItem {
	status := p.StatusAt(c.Now)
	it := ProposalItem{ApprovalID: p.ID, CaseID: p.CaseID, Action: p.Action, DeliverableNoun: p.DeliverableNoun,
		WhatWillHappen: p.WhatWillHappen, SupervisionFloor: string(p.SupervisionFloor), Status: string(status),
		CreatedAt: attest.At(p.CreatedAt), ExpiresAt: attest.At(p.ExpiresAt), UpdatedAt: attest.At(updated(p)),
		Item: attest.Item{ProvenanceIDs: []string{urn(c, "proposal", p.ID)}, VerificationStatus: attest.Grounded}}
	switch {
	case p.Decision != nil:
		d := &DecisionItem{DecidedAt: attest.At(p.Decision.DecidedAt)}
		if p.Decision.Code != "" {
			code := p.Decision.Code
			d.Code = &code
		}
		it.Decision = d
	case status == proposals.StatusExpired:
		code := "PROPOSAL_EXPIRED"
		it.Decision = &DecisionItem{Code: &code, DecidedAt: attest.At(p.ExpiresAt)}
	}
	return it
}

func updated(p *proposals.Pointer) time.Time {
	if p.UpdatedAt.IsZero() {
		return p.CreatedAt
	}
	return p.UpdatedAt
}
