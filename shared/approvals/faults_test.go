package approvals_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/approvals"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/storetest"
)

// untouched checks that nothing of a proposal was carried out: it is
// still pending, its matter's ledger and counter are as before, and no
// record row names it.
func (d *desk) untouched(t *testing.T, matter, id string, ledgerBefore int, counterBefore int64) {
	t.Helper()
	if p := d.proposal(t, matter, id); p.Status != proposals.StatusPending || p.Decision != nil {
		t.Errorf("proposal %s is %s %+v, want still pending", id, p.Status, p.Decision)
	}
	if n := len(d.ledgerOf(t, matter)); n != ledgerBefore {
		t.Errorf("the ledger of %s has %d entries, want %d", matter, n, ledgerBefore)
	}
	if n := d.counter(t, matter); n != counterBefore {
		t.Errorf("the pending counter of %s = %d, want %d", matter, n, counterBefore)
	}
}

// ended checks that a code ended a proposal (denied or expired) without
// carrying anything out: the status and code stored, the inbox row gone,
// the counter one lower, no ledger entry.
func (d *desk) ended(t *testing.T, matter, id string, status proposals.Status, code approvals.Code, ledgerBefore int, counterBefore int64) {
	t.Helper()
	p := d.proposal(t, matter, id)
	if p.Status != status || p.Decision == nil || p.Decision.Code != string(code) {
		t.Errorf("proposal %s is %s %+v, want %s with %s", id, p.Status, p.Decision, status, code)
	}
	for _, it := range d.rows(t, matter, proposals.InboxPrefix) {
		if strings.HasSuffix(it.SK, id) {
			t.Errorf("the inbox row of %s is still there", id)
		}
	}
	if n := d.counter(t, matter); n != counterBefore-1 {
		t.Errorf("the pending counter of %s = %d, want %d", matter, n, counterBefore-1)
	}
	if n := len(d.ledgerOf(t, matter)); n != ledgerBefore {
		t.Errorf("the ledger of %s has %d entries, want %d", matter, n, ledgerBefore)
	}
}

// A direct POST of the review form may name anything; the decider's set
// is reloaded and eligibility derived again, so each of these is
// NOT_BATCH_ELIGIBLE and nothing is carried out (a check made only when
// the page was drawn would pass the browser test and fail this).
func TestADirectPostOfIneligibleIdsIsRefusedIdByIdAndExecutesNothing(t *testing.T) {
	d := newDesk(t)
	const lee = "p_lee_marsh"
	d.addAttorney(t, lee, seed.Alvarez)
	ownMatter := d.deadline(t, servertest.Paralegal, seed.Alvarez, "On Lee's matter")
	otherMatter := d.deadline(t, servertest.Paralegal, seed.Meridian, "Not on Lee's matter")
	otherTenant := d.deadline(t, servertest.OtherFirm, seed.Northwind, "Another firm's")
	confirmNeeded := d.production(t, servertest.Paralegal, seed.Alvarez, "d_alv_complaint")
	moving := d.propose(t, servertest.Paralegal, seed.Alvarez, proposals.ActionAddExhibit,
		map[string]any{"document_id": "d_alv_answer", "label": "DX-1"})
	lee1 := d.signIn(t, lee)
	dana := d.signIn(t, seed.DemoAttorney)

	// The page offers the exhibit for a selection when it is drawn…
	if body := dana.inbox(t).Body; !strings.Contains(body, `name="ids" value="`+moving+`"`) {
		t.Fatalf("the exhibit is not offered for a selection:\n%s", body)
	}
	// …and then its document moves.
	doc, err := d.Store.Get(context.Background(), records.DocumentKey(seed.DemoTenant, seed.Alvarez, "d_alv_answer"))
	if err != nil {
		t.Fatal(err)
	}
	doc.Version++
	d.putRow(t, doc)

	alvLedger, alvCount := len(d.ledgerOf(t, seed.Alvarez)), d.counter(t, seed.Alvarez)
	merCount := d.counter(t, seed.Meridian)
	for _, c := range []struct {
		name   string
		who    *person
		id     string
		matter string
	}{
		{"a proposal of a matter the decider is not on", lee1, otherMatter, seed.Meridian},
		{"a proposal of another tenant", dana, otherTenant, ""},
		{"a confirm-required proposal", dana, confirmNeeded, seed.Alvarez},
		{"a proposal whose target moved after the page was drawn", dana, moving, seed.Alvarez},
		{"an id that names nothing", dana, "prp_00000000000000000000000000000000", ""},
		{"something that is not an id", dana, "'; DROP TABLE custody; --", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := outcomes(t, c.who.review(t, []string{c.id}, nil))
			if got[c.id].Code != string(approvals.CodeNotBatchEligible) {
				t.Errorf("review(%s) = %+v, want NOT_BATCH_ELIGIBLE", c.id, got[c.id])
			}
		})
	}
	d.untouched(t, seed.Alvarez, confirmNeeded, alvLedger, alvCount)
	d.untouched(t, seed.Alvarez, moving, alvLedger, alvCount)
	d.untouched(t, seed.Meridian, otherMatter, 0, merCount)
	if ex, _ := records.NewRepo(d.Store).Exhibits(context.Background(), seed.DemoTenant, seed.Alvarez); len(ex) != 0 {
		t.Errorf("exhibits %v were written", ex)
	}
	if got := len(d.deadlines(t, seed.Meridian, "Not on Lee's matter")); got != 0 {
		t.Errorf("%d deadlines on the matter Lee is not on", got)
	}

	// The eligible one in the same selection is decided on its own.
	got := outcomes(t, lee1.review(t, []string{otherMatter, ownMatter}, nil))
	if got[ownMatter].Status != "approved" || got[otherMatter].Code != string(approvals.CodeNotBatchEligible) {
		t.Errorf("a mixed selection = %v, want the eligible one approved and the other refused", got)
	}
}

func TestTheReviewFormIgnoresConfirmationFields(t *testing.T) {
	d := newDesk(t)
	id := d.production(t, servertest.Paralegal, seed.Alvarez, "d_alv_complaint")
	dana := d.signIn(t, seed.DemoAttorney)
	_, nonce := dana.confirm(t, id)
	if nonce == "" {
		t.Fatal("the confirmation page minted no nonce")
	}
	before := len(d.ledgerOf(t, seed.Alvarez))
	count := d.counter(t, seed.Alvarez)
	got := outcomes(t, dana.review(t, []string{id}, url.Values{"nonce": {nonce}, "confirm": {"true"}, "confirmed": {"yes"}}))
	if got[id].Code != string(approvals.CodeNotBatchEligible) {
		t.Errorf("review with a valid nonce planted = %+v, want NOT_BATCH_ELIGIBLE", got[id])
	}
	d.untouched(t, seed.Alvarez, id, before, count)
	// The nonce is still good for its own form.
	if got := outcomes(t, dana.decide(t, id, nonce)); got[id].Status != "approved" {
		t.Errorf("the decide form with the nonce = %+v, want approved", got[id])
	}
}

func TestARequesterWhoLostTheirRightsIsDeniedAndNothingIsExecuted(t *testing.T) {
	for _, c := range []struct {
		name  string
		after func(t *testing.T, d *desk, cred *auth.Credential)
		want  approvals.Code
	}{
		{"the requester's key was revoked", func(t *testing.T, d *desk, cred *auth.Credential) {
			if err := auth.Revoke(context.Background(), d.Store, seed.DemoTenant, cred.ID); err != nil {
				t.Fatal(err)
			}
		}, approvals.CodeRequesterRevoked},
		{"the requester was screened from the matter", func(t *testing.T, d *desk, _ *auth.Credential) {
			if _, _, err := records.Screen(context.Background(), d.Store, seed.DemoTenant, seed.Alvarez, seed.DemoParalegal, true, "conflict"); err != nil {
				t.Fatal(err)
			}
		}, approvals.CodeRequesterAccessLost},
		{"the requester was taken off the team", func(t *testing.T, d *desk, _ *auth.Credential) {
			ctx := context.Background()
			m, _ := records.NewRepo(d.Store).Matter(ctx, seed.DemoTenant, seed.Alvarez)
			m.Team = []string{seed.DemoAttorney}
			row, err := records.MatterItem(seed.DemoTenant, m)
			if err != nil {
				t.Fatal(err)
			}
			d.putRow(t, row)
		}, approvals.CodeRequesterAccessLost},
		{"the requester's key row lost write", func(t *testing.T, d *desk, cred *auth.Credential) {
			c := *cred
			c.Scopes = []auth.Scope{auth.ScopeRead}
			d.putRow(t, c.Item())
		}, approvals.CodeRequesterRevoked},
		{"requested_by was removed from the row", func(t *testing.T, d *desk, _ *auth.Credential) {
			id := d.lastID
			d.editProposal(t, seed.Alvarez, id, func(doc map[string]any) { delete(doc, "requested_by") })
		}, approvals.CodeApprovalProvenanceMissing},
		{"requested_by names another owner than the key's", func(t *testing.T, d *desk, _ *auth.Credential) {
			d.editProposal(t, seed.Alvarez, d.lastID, func(doc map[string]any) {
				doc["requested_by"].(map[string]any)["ref"].(map[string]any)["owner"] = seed.DemoAdmin
			})
		}, approvals.CodeApprovalProvenanceInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newDesk(t)
			// An exhibit: its target is a document, which none of the
			// changes above moves.
			id := d.propose(t, servertest.Paralegal, seed.Alvarez, proposals.ActionAddExhibit,
				map[string]any{"document_id": "d_alv_answer", "label": "PX-7"})
			d.lastID = id
			ledgerBefore, count := len(d.ledgerOf(t, seed.Alvarez)), d.counter(t, seed.Alvarez)
			c.after(t, d, d.Creds[servertest.Paralegal])
			dana := d.signIn(t, seed.DemoAttorney)
			got := outcomes(t, dana.review(t, []string{id}, nil))
			if got[id].Code != string(c.want) || got[id].Status != "denied" {
				t.Errorf("review = %+v, want denied %s", got[id], c.want)
			}
			d.ended(t, seed.Alvarez, id, proposals.StatusDenied, c.want, ledgerBefore, count)
			if ex, _ := records.NewRepo(d.Store).Exhibits(context.Background(), seed.DemoTenant, seed.Alvarez); len(ex) != 0 {
				t.Errorf("exhibits %v were written", ex)
			}
		})
	}
}

func TestNoncesAreSingleUseBoundAndShortLived(t *testing.T) {
	const lee = "p_lee_marsh"
	for _, c := range []struct {
		name string
		// spoil does what makes the nonce invalid and returns the person
		// who then posts it.
		spoil func(t *testing.T, d *desk, id, nonce string, dana, lee *person) *person
	}{
		{"used twice", func(t *testing.T, d *desk, id, nonce string, dana, _ *person) *person {
			if got := outcomes(t, dana.decide(t, id, nonce)); got[id].Status != "approved" {
				t.Fatalf("the first use = %+v, want approved", got[id])
			}
			return dana
		}},
		{"expired", func(t *testing.T, d *desk, _, _ string, dana, _ *person) *person {
			d.Clock.Advance(approvals.NonceTTL + time.Second)
			return dana
		}},
		{"minted for another person", func(t *testing.T, d *desk, _, _ string, _, lee *person) *person {
			return lee
		}},
		{"the args were edited in the store after minting", func(t *testing.T, d *desk, id, _ string, dana, _ *person) *person {
			d.editProposal(t, seed.Alvarez, id, func(doc map[string]any) {
				doc["args"].(map[string]any)["recipient"] = "Someone else entirely"
			})
			return dana
		}},
		{"for another proposal", func(t *testing.T, d *desk, _, _ string, dana, _ *person) *person {
			d.lastID = d.production(t, servertest.Paralegal, seed.Alvarez, "d_alv_answer")
			return dana
		}},
		{"malformed", func(t *testing.T, d *desk, _, _ string, dana, _ *person) *person {
			d.lastID = "cnf_not-a-nonce"
			return dana
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newDesk(t)
			d.addAttorney(t, lee, seed.Alvarez)
			id := d.production(t, servertest.Paralegal, seed.Alvarez, "d_alv_complaint")
			dana, leeP := d.signIn(t, seed.DemoAttorney), d.signIn(t, lee)
			_, nonce := dana.confirm(t, id)
			if nonce == "" {
				t.Fatal("no nonce minted")
			}
			d.lastID = ""
			who := c.spoil(t, d, id, nonce, dana, leeP)
			target, n := id, nonce
			switch {
			case strings.HasPrefix(d.lastID, "prp_"):
				target = d.lastID
			case d.lastID != "":
				n = d.lastID
			}
			ledgerBefore := len(d.ledgerOf(t, seed.Alvarez))
			got := outcomes(t, who.decide(t, target, n))
			if got[target].Code != string(approvals.CodeNonceInvalid) {
				t.Errorf("decide = %+v, want NONCE_INVALID", got[target])
			}
			if n := len(d.ledgerOf(t, seed.Alvarez)); n != ledgerBefore {
				t.Errorf("the ledger grew to %d entries", n)
			}
		})
	}
}

func TestAConfirmRequiredProposalNeedsItsConfirmation(t *testing.T) {
	d := newDesk(t)
	id := d.production(t, servertest.Paralegal, seed.Alvarez, "d_alv_complaint", "d_alv_answer")
	dana := d.signIn(t, seed.DemoAttorney)
	if body := dana.inbox(t).Body; strings.Contains(body, `name="ids" value="`+id+`"`) || !strings.Contains(body, `id="open-`+id+`"`) {
		t.Errorf("a confirm-required row must have no box and its own action:\n%s", body)
	}
	ledgerBefore, count := len(d.ledgerOf(t, seed.Alvarez)), d.counter(t, seed.Alvarez)
	if got := outcomes(t, dana.decide(t, id, "")); got[id].Code != string(approvals.CodeConfirmationRequired) {
		t.Errorf("decide without a nonce = %+v, want CONFIRMATION_REQUIRED", got[id])
	}
	d.untouched(t, seed.Alvarez, id, ledgerBefore, count)
	a, nonce := dana.confirm(t, id)
	if nonce == "" || !strings.Contains(a.Body, `id="confirm-again"`) || !strings.Contains(a.Body, "Opposing counsel") {
		t.Fatalf("the confirmation page = %d, nonce %q:\n%s", a.Status, nonce, a.Body)
	}
	if got := outcomes(t, dana.decide(t, id, nonce)); got[id].Status != "approved" {
		t.Fatalf("decide with the nonce = %+v, want approved", got[id])
	}
	// An external act goes to the outbox, never anywhere else.
	msgs := d.outbox(t)
	if len(msgs) != 1 || msgs[0].Proposal != id || msgs[0].Action != proposals.ActionServeProduction || msgs[0].ApprovedBy != seed.DemoAttorney {
		t.Errorf("the outbox = %+v, want one message for %s", msgs, id)
	}
	es := d.ledgerOf(t, seed.Alvarez)
	if len(es) != ledgerBefore+1 || len(es[len(es)-1].Effects) != 1 || !strings.HasPrefix(es[len(es)-1].Effects[0], "outbox:") {
		t.Errorf("the ledger = %+v, want one more entry naming the outbox message", es)
	}
}

func TestWhoMayDecide(t *testing.T) {
	t.Run("a paralegal posting a decide form is DECIDER_NOT_ELIGIBLE", func(t *testing.T) {
		d := newDesk(t)
		id := d.deadline(t, servertest.Attorney, seed.Alvarez, "Paralegal tries")
		sam := d.signIn(t, seed.DemoParalegal)
		ledgerBefore, count := len(d.ledgerOf(t, seed.Alvarez)), d.counter(t, seed.Alvarez)
		for name, a := range map[string]page{
			"decide":  sam.decide(t, id, ""),
			"review":  sam.review(t, []string{id}, nil),
			"confirm": func() page { a, _ := sam.confirm(t, id); return a }(),
			"decline": sam.decline(t, id),
		} {
			if got := outcomes(t, a); got[id].Code != string(approvals.CodeDeciderNotEligible) {
				t.Errorf("%s = %+v, want DECIDER_NOT_ELIGIBLE", name, got[id])
			}
		}
		d.untouched(t, seed.Alvarez, id, ledgerBefore, count)
	})
	t.Run("the owner approving their own key's independent action is INDEPENDENT_APPROVER_REQUIRED", func(t *testing.T) {
		d := newDesk(t)
		id := d.production(t, servertest.Attorney, seed.Alvarez, "d_alv_complaint")
		dana := d.signIn(t, seed.DemoAttorney)
		if body := dana.inbox(t).Body; strings.Contains(body, `id="open-`+id+`"`) || !strings.Contains(body, "other than the owner") {
			t.Errorf("the page offers the owner their own independent act:\n%s", body)
		}
		ledgerBefore, count := len(d.ledgerOf(t, seed.Alvarez)), d.counter(t, seed.Alvarez)
		a, nonce := dana.confirm(t, id)
		if got := outcomes(t, a); nonce != "" || got[id].Code != string(approvals.CodeIndependentApproverRequired) {
			t.Errorf("confirm = %+v (nonce %q), want INDEPENDENT_APPROVER_REQUIRED and no nonce", got[id], nonce)
		}
		if got := outcomes(t, dana.decide(t, id, "")); got[id].Code != string(approvals.CodeIndependentApproverRequired) {
			t.Errorf("decide = %+v, want INDEPENDENT_APPROVER_REQUIRED", got[id])
		}
		d.untouched(t, seed.Alvarez, id, ledgerBefore, count)
		// Another attorney may.
		d.addAttorney(t, "p_lee_marsh", seed.Alvarez)
		lee := d.signIn(t, "p_lee_marsh")
		_, nonce = lee.confirm(t, id)
		if got := outcomes(t, lee.decide(t, id, nonce)); got[id].Status != "approved" {
			t.Errorf("another attorney's decision = %+v, want approved", got[id])
		}
	})
	t.Run("a non-approver sees their own proposals read-only and may withdraw them", func(t *testing.T) {
		d := newDesk(t)
		mine := d.deadline(t, servertest.Paralegal, seed.Alvarez, "Sam's own")
		theirs := d.deadline(t, servertest.Attorney, seed.Alvarez, "Dana's own")
		sam := d.signIn(t, seed.DemoParalegal)
		body := sam.inbox(t).Body
		for _, want := range []string{`id="not-an-approver"`, `id="own-` + mine + `"`, "awaiting a licensed attorney on this matter", `id="withdraw-` + mine + `"`} {
			if !strings.Contains(body, want) {
				t.Errorf("the paralegal's page lacks %s:\n%s", want, body)
			}
		}
		for _, unwanted := range []string{`name="ids"`, `id="approve-selected"`, `id="open-`, theirs} {
			if strings.Contains(body, unwanted) {
				t.Errorf("the paralegal's page shows %s:\n%s", unwanted, body)
			}
		}
		count := d.counter(t, seed.Alvarez)
		if got := outcomes(t, sam.decline(t, mine)); got[mine].Status != "declined" {
			t.Errorf("withdraw = %+v, want declined", got[mine])
		}
		if p := d.proposal(t, seed.Alvarez, mine); p.Status != proposals.StatusDeclined || p.Decision.DecidedBy != seed.DemoParalegal || p.Decision.Code != "" {
			t.Errorf("the withdrawn proposal = %s %+v", p.Status, p.Decision)
		}
		if n := d.counter(t, seed.Alvarez); n != count-1 {
			t.Errorf("counter = %d, want %d", n, count-1)
		}
		if got := outcomes(t, sam.decline(t, theirs)); got[theirs].Code != string(approvals.CodeDeciderNotEligible) {
			t.Errorf("declining another's = %+v, want DECIDER_NOT_ELIGIBLE", got[theirs])
		}
	})
}

func TestRefusedDecisionFormsAre403AndWriteNothing(t *testing.T) {
	d := newDesk(t)
	id := d.deadline(t, servertest.Paralegal, seed.Alvarez, "Forged")
	dana, sam := d.signIn(t, seed.DemoAttorney), d.signIn(t, seed.DemoParalegal)
	for _, form := range []struct{ path, name string }{
		{"/approvals/review", approvals.FormReview},
		{"/approvals/p/" + id + "/confirm", approvals.FormConfirm},
		{"/approvals/p/" + id + "/decide", approvals.FormDecide},
		{"/approvals/p/" + id + "/decline", approvals.FormDecline},
	} {
		for _, c := range []struct {
			name   string
			csrf   string
			header map[string]string
		}{
			{"no CSRF token", "", nil},
			{"another session's token", sam.csrf(form.name), nil},
			{"another form's token", dana.csrf(approvals.FormSignOut), nil},
			{"a foreign Origin", dana.csrf(form.name), map[string]string{"Origin": "https://evil.example"}},
			{"no Origin", dana.csrf(form.name), map[string]string{"Origin": ""}},
		} {
			t.Run(form.name+": "+c.name, func(t *testing.T) {
				before := writes(d)
				f := url.Values{"ids": {id}}
				if c.csrf != "" {
					f.Set("csrf", c.csrf)
				}
				a := d.request(t, http.MethodPost, form.path, f, dana.cookie, c.header)
				if a.Status != http.StatusForbidden {
					t.Errorf("POST %s = %d, want 403", form.path, a.Status)
				}
				if n := writes(d) - before; n != 0 {
					t.Errorf("a refused form made %d writes, want 0", n)
				}
			})
		}
	}
	d.untouched(t, seed.Alvarez, id, 0, 1)
}

// writes counts the writes the store has seen.
func writes(d *desk) int {
	n := 0
	for _, m := range []string{storetest.MethodPut, storetest.MethodUpdate, storetest.MethodDelete, storetest.MethodTransact} {
		n += d.Faulty.Calls(m)
	}
	return n
}

func TestAStoreFaultInsideTheDecisionWritesNothing(t *testing.T) {
	for _, c := range []struct {
		name string
		rule storetest.Rule
	}{
		{"the transaction fails", storetest.Rule{Method: storetest.MethodTransact, Err: store.ErrUnavailable}},
		{"the decision's batch read fails", storetest.Rule{Method: storetest.MethodBatchGet, Err: store.ErrUnavailable}},
		{"the transaction times out", storetest.Rule{Method: storetest.MethodTransact, Err: context.DeadlineExceeded}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newDesk(t)
			id := d.deadline(t, servertest.Paralegal, seed.Alvarez, "Faulted")
			dana := d.signIn(t, seed.DemoAttorney)
			count := d.counter(t, seed.Alvarez)
			d.Faulty.Add(c.rule)
			a := dana.review(t, []string{id}, nil)
			d.Faulty.Reset()
			got := outcomes(t, a)
			if got[id].Status != "" || allOK(a) || !strings.Contains(a.Body, "could not be decided just now") {
				t.Errorf("the review under a fault = %+v:\n%s", got[id], a.Body)
			}
			d.untouched(t, seed.Alvarez, id, 0, count)
			if n := len(d.deadlines(t, seed.Alvarez, "Faulted")); n != 0 {
				t.Errorf("%d deadlines written", n)
			}
			// And once the store is back, the same selection approves it.
			if got := outcomes(t, dana.review(t, []string{id}, nil)); got[id].Status != "approved" {
				t.Errorf("after the fault = %+v, want approved", got[id])
			}
		})
	}
}

func TestCodesThatLeaveOrEndTheRow(t *testing.T) {
	t.Run("an expired proposal is PROPOSAL_EXPIRED and ends expired", func(t *testing.T) {
		d := newDesk(t)
		id := d.deadline(t, servertest.Paralegal, seed.Alvarez, "Too late")
		dana := d.signIn(t, seed.DemoAttorney)
		count := d.counter(t, seed.Alvarez)
		d.Clock.Advance(proposals.Life + time.Minute)
		dana = d.signIn(t, seed.DemoAttorney) // the first session ended after 8 h
		if got := outcomes(t, dana.review(t, []string{id}, nil)); got[id].Code != string(approvals.CodeProposalExpired) || got[id].Status != "expired" {
			t.Errorf("review = %+v, want expired PROPOSAL_EXPIRED", got[id])
		}
		d.ended(t, seed.Alvarez, id, proposals.StatusExpired, approvals.CodeProposalExpired, 0, count)
	})
	t.Run("a frozen tenant is KILL_SWITCH and the row waits", func(t *testing.T) {
		d := newDesk(t)
		id := d.deadline(t, servertest.Paralegal, seed.Alvarez, "Frozen")
		dana := d.signIn(t, seed.DemoAttorney)
		ctx := context.Background()
		tn, _ := records.NewRepo(d.Store).Tenant(ctx, seed.DemoTenant)
		tn.Frozen = true
		row, err := records.TenantItem(tn)
		if err != nil {
			t.Fatal(err)
		}
		d.putRow(t, row)
		count := d.counter(t, seed.Alvarez)
		if got := outcomes(t, dana.review(t, []string{id}, nil)); got[id].Code != string(approvals.CodeKillSwitch) {
			t.Errorf("review = %+v, want KILL_SWITCH", got[id])
		}
		d.untouched(t, seed.Alvarez, id, 0, count)
	})
	t.Run("a disabled action is KILL_SWITCH and the row waits", func(t *testing.T) {
		d := newDesk(t)
		id := d.deadline(t, servertest.Paralegal, seed.Alvarez, "Switched off")
		dana := d.signIn(t, seed.DemoAttorney)
		if err := proposals.SetConfig(context.Background(), d.Store, proposals.Default(), seed.DemoTenant,
			proposals.Config{Action: proposals.ActionCreateDeadline, Disabled: true}, d.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		count := d.counter(t, seed.Alvarez)
		if got := outcomes(t, dana.decide(t, id, "")); got[id].Code != string(approvals.CodeKillSwitch) {
			t.Errorf("decide = %+v, want KILL_SWITCH", got[id])
		}
		d.untouched(t, seed.Alvarez, id, 0, count)
	})
	t.Run("a fact that moved before confirming is TARGET_CHANGED and the row waits", func(t *testing.T) {
		d := newDesk(t)
		id := d.propose(t, servertest.Paralegal, seed.Alvarez, proposals.ActionSetFactPosture,
			map[string]any{"fact_id": "f_alv_002", "posture": "disputed", "note": "The answer denies it."})
		dana := d.signIn(t, seed.DemoAttorney)
		fact, err := d.Store.Get(context.Background(), records.FactKey(seed.DemoTenant, seed.Alvarez, "f_alv_002"))
		if err != nil {
			t.Fatal(err)
		}
		fact.Version++
		d.putRow(t, fact)
		count := d.counter(t, seed.Alvarez)
		a, nonce := dana.confirm(t, id)
		if got := outcomes(t, a); nonce != "" || got[id].Code != string(approvals.CodeTargetChanged) {
			t.Errorf("confirm = %+v, want TARGET_CHANGED and no nonce", got[id])
		}
		d.untouched(t, seed.Alvarez, id, 0, count)
	})
	t.Run("an action the registry no longer has is ACTION_UNAVAILABLE and ends denied", func(t *testing.T) {
		d := newDesk(t)
		id := d.deadline(t, servertest.Paralegal, seed.Alvarez, "Teleport")
		d.editProposal(t, seed.Alvarez, id, func(doc map[string]any) { doc["action"] = "teleport" })
		dana := d.signIn(t, seed.DemoAttorney)
		count := d.counter(t, seed.Alvarez)
		a, _ := dana.confirm(t, id)
		if got := outcomes(t, a); got[id].Code != string(approvals.CodeActionUnavailable) {
			t.Errorf("confirm = %+v, want ACTION_UNAVAILABLE", got[id])
		}
		d.ended(t, seed.Alvarez, id, proposals.StatusDenied, approvals.CodeActionUnavailable, 0, count)
	})
	t.Run("a requester credential that cannot be read is REQUESTER_RESOLUTION_FAILED and the row waits", func(t *testing.T) {
		d := newDesk(t)
		id := d.deadline(t, servertest.Paralegal, seed.Alvarez, "Unreadable key")
		c := d.Creds[servertest.Paralegal].Item()
		c.Attrs["class"] = "neither"
		d.putRow(t, c)
		dana := d.signIn(t, seed.DemoAttorney)
		count := d.counter(t, seed.Alvarez)
		if got := outcomes(t, dana.review(t, []string{id}, nil)); got[id].Code != string(approvals.CodeRequesterResolutionFailed) {
			t.Errorf("review = %+v, want REQUESTER_RESOLUTION_FAILED", got[id])
		}
		d.untouched(t, seed.Alvarez, id, 0, count)
	})
	t.Run("an approver declines", func(t *testing.T) {
		d := newDesk(t)
		id := d.deadline(t, servertest.Paralegal, seed.Alvarez, "Not this one")
		dana := d.signIn(t, seed.DemoAttorney)
		count := d.counter(t, seed.Alvarez)
		a := dana.decline(t, id)
		if got := outcomes(t, a); got[id].Status != "declined" || !allOK(a) {
			t.Errorf("decline = %+v, want declined", got[id])
		}
		if p := d.proposal(t, seed.Alvarez, id); p.Status != proposals.StatusDeclined || p.Decision.DecidedBy != seed.DemoAttorney {
			t.Errorf("the declined proposal = %s %+v", p.Status, p.Decision)
		}
		if n := d.counter(t, seed.Alvarez); n != count-1 {
			t.Errorf("counter = %d, want %d", n, count-1)
		}
		if n := len(d.deadlines(t, seed.Alvarez, "Not this one")); n != 0 {
			t.Errorf("a declined deadline was written")
		}
	})
}
