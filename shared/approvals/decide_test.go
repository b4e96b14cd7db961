package approvals_test

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/approvals/ledger"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store/storetest"
)

// preselected finds an input that is checked before anyone touches it.
var preselected = regexp.MustCompile(`<input[^>]*\bchecked\b`)

func TestARoutineProposalApprovedByOneSelectionIsCarriedOutInOneTransaction(t *testing.T) {
	d := newDesk(t)
	id := d.deadline(t, servertest.Paralegal, seed.Alvarez, "Reply brief")
	dana := d.signIn(t, seed.DemoAttorney)

	inbox := dana.inbox(t).Body
	for _, want := range []string{`id="proposal-` + id + `"`, `name="ids" value="` + id + `"`, "unverified", "Reply brief"} {
		if !strings.Contains(inbox, want) {
			t.Errorf("the review page lacks %s:\n%s", want, inbox)
		}
	}
	if preselected.MatchString(inbox) {
		t.Errorf("the review page pre-selects a box:\n%s", inbox)
	}

	commits := d.Faulty.Calls("Transact")
	got := outcomes(t, dana.review(t, []string{id}, nil))
	if diff := cmp.Diff(map[string]outcome{id: {Status: "approved"}}, got); diff != "" {
		t.Errorf("the review's outcomes (-want +got):\n%s", diff)
	}
	if n := d.Faulty.Calls("Transact") - commits; n != 1 {
		t.Errorf("the approval made %d transactions, want 1", n)
	}
	if p := d.proposal(t, seed.Alvarez, id); p.Status != proposals.StatusApproved || p.Decision == nil || p.Decision.DecidedBy != seed.DemoAttorney {
		t.Errorf("the proposal after approval = %s %+v, want approved by %s", p.Status, p.Decision, seed.DemoAttorney)
	}
	if n := len(d.deadlines(t, seed.Alvarez, "Reply brief")); n != 1 {
		t.Errorf("%d deadline rows, want 1", n)
	}
	if n := len(d.rows(t, seed.Alvarez, proposals.InboxPrefix)); n != 0 {
		t.Errorf("%d inbox rows left, want 0", n)
	}
	if n := d.counter(t, seed.Alvarez); n != 0 {
		t.Errorf("the pending counter = %d, want 0", n)
	}
	es := d.ledgerOf(t, seed.Alvarez)
	if len(es) != 1 || es[0].Proposal != id || es[0].ApprovedBy != seed.DemoAttorney || es[0].Seq != 1 || es[0].Previous != ledger.Genesis {
		t.Errorf("the ledger = %+v, want one entry for %s", es, id)
	}
	rep, err := ledger.Verify(context.Background(), d.Store, seed.DemoTenant, seed.Alvarez)
	if err != nil || !rep.OK {
		t.Errorf("Verify = %+v, %v; want OK", rep, err)
	}
	// A second submission of the same form finds it decided, and says what
	// it became (the set it reloads no longer holds it: the probe tells).
	again := outcomes(t, dana.review(t, []string{id}, url.Values{}))
	if diff := cmp.Diff(outcome{Status: "approved", Code: "PROPOSAL_NOT_PENDING"}, again[id]); diff != "" {
		t.Errorf("the same selection again (-want +got):\n%s", diff)
	}
}

// The cost of a decision (docs/decisions.md "Approvers", round trips):
// the session's two reads, the set's reload (one query of the tenant's
// matters and one per matter the decider reaches: three for the demo
// attorney), then per decided proposal one batch read and one
// transaction. Nothing else.
func TestADecisionCostsOneBatchReadAndOneTransactionPerProposal(t *testing.T) {
	d := newDesk(t)
	var ids []string
	for i := range 3 {
		ids = append(ids, d.deadline(t, servertest.Paralegal, seed.Alvarez, fmt.Sprint("Counted ", i)))
	}
	dana := d.signIn(t, seed.DemoAttorney)
	methods := []string{storetest.MethodGet, storetest.MethodBatchGet, storetest.MethodQuery, storetest.MethodPut,
		storetest.MethodUpdate, storetest.MethodDelete, storetest.MethodTransact}
	count := func() map[string]int {
		m := map[string]int{}
		for _, name := range methods {
			if n := d.Faulty.Calls(name); n > 0 {
				m[name] = n
			}
		}
		return m
	}
	for _, c := range []struct {
		name string
		ids  []string
	}{
		{"one proposal", ids[:1]},
		{"two proposals in one selection", ids[1:]},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := count()
			a := dana.review(t, c.ids, nil)
			after := count()
			got := map[string]int{}
			for k, v := range after {
				if v-before[k] > 0 {
					got[k] = v - before[k]
				}
			}
			n := len(c.ids)
			want := map[string]int{storetest.MethodGet: 2, storetest.MethodQuery: 1 + len(seed.DemoMatters),
				storetest.MethodBatchGet: n, storetest.MethodTransact: n}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("store calls of a selection of %d (-want +got):\n%s", n, diff)
			}
			if !allOK(a) {
				t.Errorf("not all approved:\n%s", a.Body)
			}
		})
	}
}
