package approvals

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
)

// storeInbox is the page's own Inbox, over the proposal rows of
// shared/proposals (docs/decisions.md "Approvers"): computed server-side
// at every page view from the store, never from anything the browser
// holds.
//
//   - Decidable: for a licensed attorney, every pending proposal of every
//     matter they reach (on the team, not screened), any requester, oldest
//     first, each with its eligibility derived from the live registry and
//     the record as it stands. For anyone else, none.
//   - Own: the proposals filed through the principal's own credentials, on
//     matters they reach: the pending ones (whatever credential, API key or
//     OAuth) from the same inbox rows, and the decided ones from their API
//     keys' pointers; newest first, read-only.
//
// Reads per page: the session's two, one query of the tenant's matters, one
// query of each reached matter's inbox rows, one query of the tenant's
// principals (for names), a batch read of the listed proposals with their
// action configuration and target rows (per 100 keys), and, for Own, the
// tenant's credential listing and one query per own credential.
type storeInbox struct{ p *Page }

var _ Inbox = (*storeInbox)(nil)

// Decidable implements Inbox.
func (si *storeInbox) Decidable(ctx context.Context, who Principal) ([]Proposal, error) {
	principal, err := si.p.repo.Principal(ctx, who.Tenant, who.ID)
	if err != nil {
		return nil, fmt.Errorf("read the principal: %w", err)
	}
	decidable, _, _ := si.lists(ctx, who, principal)
	if decidable.Unreadable {
		return nil, errUnreadable
	}
	return decidable.Rows, nil
}

// Own implements Inbox.
func (si *storeInbox) Own(ctx context.Context, who Principal) ([]Proposal, error) {
	principal, err := si.p.repo.Principal(ctx, who.Tenant, who.ID)
	if err != nil {
		return nil, fmt.Errorf("read the principal: %w", err)
	}
	_, own, _ := si.lists(ctx, who, principal)
	if own.Unreadable {
		return nil, errUnreadable
	}
	return own.Rows, nil
}

var errUnreadable = fmt.Errorf("approvals: the list could not be read: %w", store.ErrUnavailable)

// lists reads the set once and returns both lists (each unreadable on its
// own failure) and whether the principal approves at all.
func (si *storeInbox) lists(ctx context.Context, who Principal, principal records.Principal) (decidable, own list, approver bool) {
	p := si.p
	set, err := p.loadSet(ctx, who, principal)
	if err != nil {
		p.log.Warn("approvals: read the review set", "tenant", who.Tenant, "err", err)
		return list{Unreadable: true}, list{Unreadable: true}, isApprover(principal)
	}
	var shown []*setRow
	for _, r := range set.rows {
		if set.approver || r.Summary.Requester == who.ID {
			shown = append(shown, r)
		}
	}
	details, err := p.details(ctx, set, shown)
	if err != nil {
		p.log.Warn("approvals: read the listed proposals", "tenant", who.Tenant, "err", err)
		return list{Unreadable: true}, list{Unreadable: true}, set.approver
	}
	names := map[string]string{}
	if ps, err := p.repo.Principals(ctx, who.Tenant); err == nil {
		for _, x := range ps {
			names[x.ID] = x.Name
		}
	}
	now := p.now()
	var mine []Proposal
	decidable.Rows = []Proposal{}
	for _, r := range shown {
		v, ok := details.view(p, set, r, names, now)
		if !ok {
			continue
		}
		if set.approver {
			decidable.Rows = append(decidable.Rows, v)
		}
		if r.Summary.Requester == who.ID {
			mine = append(mine, v)
		}
	}
	history, err := p.history(ctx, set, names, now)
	if err != nil {
		p.log.Warn("approvals: read the principal's proposal pointers", "tenant", who.Tenant, "err", err)
		return decidable, list{Unreadable: true}, set.approver
	}
	for _, h := range history {
		if set.byID[h.ID] == nil {
			mine = append(mine, h)
		}
	}
	slices.SortStableFunc(mine, func(a, b Proposal) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	own.Rows = mine
	return decidable, own, set.approver
}

// history is the principal's decided proposals on matters they reach,
// from the pointers of their API keys (an OAuth credential's pending
// proposals are in the set; its history is what list_my_proposals shows).
func (p *Page) history(ctx context.Context, set *reviewSet, names map[string]string, now time.Time) ([]Proposal, error) {
	creds, err := auth.List(ctx, p.st, set.who.Tenant)
	if err != nil {
		return nil, err
	}
	var out []Proposal
	for _, c := range creds {
		if c.Owner != set.who.ID {
			continue
		}
		q := store.Query{PK: proposals.PointerPartition(set.who.Tenant, c.ID), SK: store.SortKeyCondition{Prefix: proposals.PointerPrefix}, Descending: true}
		for {
			page, err := p.st.Query(ctx, q)
			if err != nil {
				return nil, fmt.Errorf("read the pointers of %s: %w", c.ID, err)
			}
			for _, it := range page.Items {
				ptr, err := proposals.DecodePointer(it)
				if err != nil {
					continue
				}
				m, ok := set.matters[ptr.CaseID]
				if !ok {
					continue // a matter they no longer reach: not shown
				}
				v := Proposal{ID: ptr.ID, CaseID: ptr.CaseID, MatterName: m.Name, Noun: noun(ptr.DeliverableNoun, ptr.Action),
					Action: ptr.Action, WhatWillHappen: ptr.WhatWillHappen, Requester: ptr.Requester, RequesterName: names[ptr.Requester],
					Status: string(ptr.StatusAt(now)), CreatedAt: ptr.CreatedAt, ExpiresAt: ptr.ExpiresAt, Floor: string(ptr.SupervisionFloor)}
				if ptr.Decision != nil {
					v.Code = ptr.Decision.Code
				} else if ptr.StatusAt(now) == proposals.StatusExpired {
					v.Code = string(CodeProposalExpired)
				}
				out = append(out, v)
			}
			if page.NextToken == "" {
				break
			}
			q.PageToken = page.NextToken
		}
	}
	return out, nil
}

// details are the rows read to show a list of set rows: the proposals,
// their action configuration and their targets as they stand.
type details struct {
	rows map[store.Key]*store.Item
}

// details reads the proposal, configuration and target rows of the set
// rows in batches of at most 100 distinct keys.
func (p *Page) details(ctx context.Context, set *reviewSet, shown []*setRow) (*details, error) {
	d := &details{rows: map[store.Key]*store.Item{}}
	var keys []store.Key
	add := func(k store.Key) {
		if _, ok := d.rows[k]; !ok {
			d.rows[k] = nil
			keys = append(keys, k)
		}
	}
	t := set.who.Tenant
	for _, r := range shown {
		add(proposals.Key(t, r.Matter.ID, r.Summary.ID))
		add(proposals.ConfigKey(t, r.Summary.Action))
		if k, err := targetKey(t, r.Matter.ID, r.Summary.Target); err == nil {
			add(k)
		}
	}
	for start := 0; start < len(keys); start += store.MaxBatchGetKeys {
		batch := keys[start:min(start+store.MaxBatchGetKeys, len(keys))]
		got, err := p.st.BatchGet(ctx, batch)
		if err != nil {
			return nil, err
		}
		for i, it := range got {
			d.rows[batch[i]] = it
		}
	}
	return d, nil
}

// targetKey is the row a target names: the matter row for a matter
// target (whose version is the matter's), else its record row.
func targetKey(tenant, matter string, t proposals.Target) (store.Key, error) {
	if t.Kind == proposals.TargetMatter {
		return records.MatterKey(tenant, matter), nil
	}
	return proposals.RefKey(tenant, matter, t.Ref)
}

// view is a set row as the inbox shows it; false when its proposal row is
// gone or unreadable (decided meanwhile, or corrupt: never shown).
func (d *details) view(p *Page, set *reviewSet, r *setRow, names map[string]string, now time.Time) (Proposal, bool) {
	t := set.who.Tenant
	it := d.rows[proposals.Key(t, r.Matter.ID, r.Summary.ID)]
	if it == nil {
		return Proposal{}, false
	}
	prop, err := proposals.Decode(*it)
	if err != nil || prop.ID != r.Summary.ID || prop.CaseID != r.Matter.ID {
		return Proposal{}, false
	}
	var target *store.Item
	if k, err := targetKey(t, r.Matter.ID, prop.Target); err == nil {
		target = d.rows[k]
	}
	el := Eligibility{Proposal: prop, Actions: p.actions, Config: d.rows[proposals.ConfigKey(t, prop.Action)],
		Pending: set.pendingOf(r.Matter.ID), Target: target}
	exclusions := el.Exclusions()
	floor := prop.SupervisionFloor
	if a, ok := p.actions.Action(prop.Action); ok {
		floor = floor.Max(a.Effective(proposals.DecodeConfig(el.Config)).Floor)
	}
	owner := prop.RequestedBy.Ref.Owner
	v := Proposal{ID: prop.ID, CaseID: prop.CaseID, MatterName: r.Matter.Name, Noun: noun(prop.DeliverableNoun, prop.Action),
		Action: prop.Action, WhatWillHappen: prop.WhatWillHappen, Requester: owner, RequesterName: names[owner],
		Reason: prop.Reason, Status: string(prop.StatusAt(now)), CreatedAt: prop.CreatedAt, ExpiresAt: prop.ExpiresAt,
		OverrideAttempted: prop.OverrideAttempted, StrippedFields: prop.StrippedFields, Floor: string(floor),
		CanDecline: set.approver || (owner != "" && owner == set.who.ID), AwaitingAttorney: !set.approver}
	for _, e := range exclusions {
		v.Exclusions = append(v.Exclusions, e.Explain())
	}
	if set.approver {
		v.CanApprove = true
		if floor == proposals.FloorIndependent && owner == set.who.ID {
			v.CanApprove, v.NotApprovable = false, CodeIndependentApproverRequired.Explain()
		}
	}
	v.BatchEligible = v.CanApprove && len(exclusions) == 0
	return v, true
}

// noun is the deliverable noun, else the action's name.
func noun(n, action string) string {
	if n != "" {
		return n
	}
	return action
}
