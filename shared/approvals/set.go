package approvals

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
)

// reviewSet is what a signed-in principal may see and act on, computed
// server-side from the store at each request (docs/decisions.md
// "Approvers"): the matters they reach (on the team, not screened) and the
// pending proposals of those matters (their inbox rows), any requester. It
// is reloaded by every page and every decision; nothing a form carries
// adds to it.
type reviewSet struct {
	who       Principal
	principal records.Principal
	// approver: a licensed attorney, so an approver on every matter of
	// the set (each reached: on the team and not screened).
	approver bool
	matters  map[string]records.Matter
	// rows are the pending proposals, oldest first; byID indexes them.
	rows []*setRow
	byID map[string]*setRow
}

// setRow is one pending proposal of the set, as its inbox row says: a
// pointer to the proposal row, never authority.
type setRow struct {
	Matter  records.Matter
	Summary proposals.Summary
}

// isApprover reports whether a principal is an approver wherever they
// reach: a licensed attorney (the team and the screen are the reach).
func isApprover(p records.Principal) bool {
	return p.Role == records.RoleAttorney && p.Licensed
}

// loadSet reads the set of who (the principal row read with the session):
// one query of the tenant's matters, then one query of the inbox rows of
// each matter who reaches.
func (p *Page) loadSet(ctx context.Context, who Principal, principal records.Principal) (*reviewSet, error) {
	s := &reviewSet{who: who, principal: principal, approver: isApprover(principal),
		matters: map[string]records.Matter{}, byID: map[string]*setRow{}}
	all, err := p.repo.Matters(ctx, who.Tenant)
	if err != nil {
		return nil, fmt.Errorf("read the matters: %w", err)
	}
	aw := access.Who{Tenant: who.Tenant, Principal: who.ID}
	for _, m := range all {
		if !access.Reaches(aw, m) {
			continue
		}
		s.matters[m.ID] = m
		q := store.Query{PK: keyspace.MatterPK(who.Tenant, m.ID), SK: store.SortKeyCondition{Prefix: proposals.InboxPrefix}}
		for {
			page, err := p.st.Query(ctx, q)
			if err != nil {
				return nil, fmt.Errorf("read the inbox of %s: %w", m.ID, err)
			}
			for _, it := range page.Items {
				ptr, err := proposals.DecodePointer(it)
				if err != nil {
					// A row that cannot be read is left out of the set: it
					// can be neither shown nor decided (fail closed).
					p.log.Warn("approvals: an inbox row cannot be read", "tenant", who.Tenant, "matter", m.ID, "err", err)
					continue
				}
				if ptr.CaseID != m.ID || s.byID[ptr.ID] != nil {
					continue
				}
				row := &setRow{Matter: m, Summary: ptr.Summary}
				s.rows = append(s.rows, row)
				s.byID[ptr.ID] = row
			}
			if page.NextToken == "" {
				break
			}
			q.PageToken = page.NextToken
		}
	}
	slices.SortStableFunc(s.rows, func(a, b *setRow) int {
		if c := a.Summary.CreatedAt.Compare(b.Summary.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.Summary.ID, b.Summary.ID)
	})
	return s, nil
}

// pendingOf returns the pending proposals of a matter in the set.
func (s *reviewSet) pendingOf(matter string) []proposals.Summary {
	var out []proposals.Summary
	for _, r := range s.rows {
		if r.Matter.ID == matter {
			out = append(out, r.Summary)
		}
	}
	return out
}

// errNotInSet: the id names no pending proposal of the set.
var errNotInSet = errors.New("approvals: no such proposal in the set")

// probe looks for ids that are not in the set among the proposals of the
// matters the set reaches (one batch read of at most 100 keys at a time),
// so an id that was decided meanwhile answers PROPOSAL_NOT_PENDING rather
// than looking planted. It returns the ids found decided, each with the
// status it was decided to (so the page tells who lost a race what the
// proposal became, whichever moment it lost it at); an id of a matter the
// set does not reach, of another tenant, or of nothing is never found.
func (p *Page) probe(ctx context.Context, s *reviewSet, ids []string) (map[string]proposals.Status, error) {
	var keys []store.Key
	for _, id := range ids {
		for m := range s.matters {
			keys = append(keys, proposals.Key(s.who.Tenant, m, id))
		}
	}
	decided := map[string]proposals.Status{}
	for start := 0; start < len(keys); start += store.MaxBatchGetKeys {
		batch := keys[start:min(start+store.MaxBatchGetKeys, len(keys))]
		rows, err := p.st.BatchGet(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("look for decided proposals: %w", err)
		}
		for _, it := range rows {
			if it == nil {
				continue
			}
			pr, err := proposals.Decode(*it)
			if err == nil && pr.Tenant == s.who.Tenant && s.matters[pr.CaseID].ID != "" && pr.Status != proposals.StatusPending {
				decided[pr.ID] = pr.Status
			}
		}
	}
	return decided, nil
}
