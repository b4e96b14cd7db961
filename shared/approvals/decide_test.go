package approvals_test

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/approvals/ledger"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
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
	// A second submission of the same form finds it decided.
	again := outcomes(t, dana.review(t, []string{id}, url.Values{}))
	if got, want := again[id].Code, "PROPOSAL_NOT_PENDING"; got != want {
		t.Errorf("the same selection again = %v, want %s", again[id], want)
	}
}
