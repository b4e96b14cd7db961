package approvals_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// Every action, proposed by the paralegal's key and approved by the
// attorney the way the page offers it (a selection for a routine one, the
// confirmation for the others), writes what its what_will_happen said and
// nothing else, and the ledger entry names what it wrote.
func TestEveryActionApprovedWritesWhatItSaid(t *testing.T) {
	ctx := context.Background()
	paralegal := func(d *desk) string { return d.Creds[servertest.Paralegal].ID }
	for _, c := range []struct {
		action string
		args   map[string]any
		effect string // the ledger's effect prefix
		check  func(t *testing.T, d *desk, id string)
	}{
		{proposals.ActionCreateDeadline, map[string]any{"title": "Opposition due", "due_date": "2027-02-01", "kind": "filing",
			"rule": "L.R. 7-3", "source_document_id": "d_alv_answer", "source_page": 2}, "deadline:", func(t *testing.T, d *desk, id string) {
			got := d.deadlines(t, seed.Alvarez, "Opposition due")
			want := []records.Deadline{{Matter: seed.Alvarez, Title: "Opposition due", Due: "2027-02-01", Kind: "filing", Rule: "L.R. 7-3",
				SourceDocumentID: "d_alv_answer", SourcePage: 2, Status: records.DeadlineOpen}}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(records.Deadline{}, "ID", "CreatedAt", "UpdatedAt")); diff != "" {
				t.Errorf("deadlines (-want +got):\n%s", diff)
			}
		}},
		{proposals.ActionAddExhibit, map[string]any{"document_id": "d_alv_offer", "label": "PX-12", "description": "The offer letter"}, "exhibit:",
			func(t *testing.T, d *desk, id string) {
				got, err := records.NewRepo(d.Store).Exhibits(ctx, seed.DemoTenant, seed.Alvarez)
				if err != nil {
					t.Fatal(err)
				}
				want := []records.Exhibit{{Label: "PX-12", Matter: seed.Alvarez, DocumentID: "d_alv_offer", Description: "The offer letter",
					MarkedBy: seed.DemoAttorney, Proposal: id}}
				if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(records.Exhibit{}, "CreatedAt", "UpdatedAt")); diff != "" {
					t.Errorf("exhibits (-want +got):\n%s", diff)
				}
			}},
		{proposals.ActionAddCaseNote, map[string]any{"body": "Client called about the offer.", "document_id": "d_alv_offer"}, "note:",
			func(t *testing.T, d *desk, id string) {
				notes, err := records.NewRepo(d.Store).Notes(ctx, seed.DemoTenant, seed.Alvarez)
				if err != nil {
					t.Fatal(err)
				}
				var got []records.Note
				for _, n := range notes {
					if n.Body == "Client called about the offer." {
						got = append(got, n)
					}
				}
				want := []records.Note{{Matter: seed.Alvarez, Author: seed.DemoParalegal, Body: "Client called about the offer.",
					Privilege: records.PrivilegeWorkProduct, DocumentID: "d_alv_offer", ViaCredential: paralegal(d)}}
				if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(records.Note{}, "ID", "CreatedAt", "UpdatedAt")); diff != "" {
					t.Errorf("notes (-want +got):\n%s", diff)
				}
			}},
		{proposals.ActionSetFactPosture, map[string]any{"fact_id": "f_alv_002", "posture": "disputed", "note": "The answer denies it at ¶ 12."}, "fact:",
			func(t *testing.T, d *desk, id string) {
				f, err := records.NewRepo(d.Store).Fact(ctx, seed.DemoTenant, seed.Alvarez, "f_alv_002")
				if err != nil {
					t.Fatal(err)
				}
				want := &records.PostureBasis{Note: "The answer denies it at ¶ 12.", Proposal: id, Requester: seed.DemoParalegal, Approver: seed.DemoAttorney}
				if f.Posture != records.PostureDisputed || f.RecordedBy != seed.DemoAttorney || !cmp.Equal(want, f.PostureBasis) {
					t.Errorf("the fact = posture %s by %s basis %+v, want disputed by %s with %+v", f.Posture, f.RecordedBy, f.PostureBasis, seed.DemoAttorney, want)
				}
			}},
		{proposals.ActionRecordFactCheck, map[string]any{"fact_id": "f_alv_003", "result": "confirmed", "method": "Compared the answer with the complaint",
			"authority_citation": "Answer ¶ 4 (d_alv_answer p. 2)"}, "fact:", func(t *testing.T, d *desk, id string) {
			f, err := records.NewRepo(d.Store).Fact(ctx, seed.DemoTenant, seed.Alvarez, "f_alv_003")
			if err != nil {
				t.Fatal(err)
			}
			last, _ := records.LatestCheck(f.Checks)
			want := records.Check{Method: "Compared the answer with the complaint", CheckedBy: seed.DemoAttorney, Result: records.CheckConfirmed,
				Citation: "Answer ¶ 4 (d_alv_answer p. 2)"}
			if diff := cmp.Diff(want, last, cmpopts.IgnoreFields(records.Check{}, "CheckedAt")); diff != "" || !f.Verified() {
				t.Errorf("the latest check (-want +got):\n%s\nverified %v", diff, f.Verified())
			}
		}},
		{proposals.ActionServeProduction, map[string]any{"document_ids": []any{"d_alv_complaint"}, "recipient": "Defense counsel", "method": "email"}, "outbox:",
			func(t *testing.T, d *desk, id string) {
				if m := d.outbox(t); len(m) != 1 || m[0].Proposal != id || m[0].State != "pending" || m[0].Requester != seed.DemoParalegal {
					t.Errorf("the outbox = %+v, want one pending message for %s", m, id)
				}
			}},
		{proposals.ActionSetLitigationHold, map[string]any{"custodians": []any{"HR director"}, "scope": "Staffing emails 2023"}, "outbox:",
			func(t *testing.T, d *desk, id string) {
				if m := d.outbox(t); len(m) != 1 || m[0].Proposal != id || m[0].Action != proposals.ActionSetLitigationHold {
					t.Errorf("the outbox = %+v, want one message for %s", m, id)
				}
			}},
	} {
		t.Run(c.action, func(t *testing.T) {
			d := newDesk(t)
			id := d.propose(t, servertest.Paralegal, seed.Alvarez, c.action, c.args)
			dana := d.signIn(t, seed.DemoAttorney)
			a, _ := proposals.Default().Action(c.action)
			var got map[string]outcome
			if a.BatchEligible(a.Effective(proposals.Config{})) {
				got = outcomes(t, dana.review(t, []string{id}, nil))
			} else {
				_, nonce := dana.confirm(t, id)
				if nonce == "" {
					t.Fatalf("no confirmation for %s", c.action)
				}
				got = outcomes(t, dana.decide(t, id, nonce))
			}
			if got[id] != (outcome{Status: "approved"}) {
				t.Fatalf("the approval = %+v, want approved", got[id])
			}
			c.check(t, d, id)
			es := d.ledgerOf(t, seed.Alvarez)
			if len(es) != 1 || es[0].Action != c.action || len(es[0].Effects) != 1 || !strings.HasPrefix(es[0].Effects[0], c.effect) {
				t.Errorf("the ledger = %+v, want one %s entry naming %s…", es, c.action, c.effect)
			}
		})
	}
}

// A label is unique in its matter whatever its letter case: the second
// exhibit under it is TARGET_CHANGED and waits.
func TestAnExhibitLabelIsUniqueInItsMatter(t *testing.T) {
	d := newDesk(t)
	first := d.propose(t, servertest.Paralegal, seed.Alvarez, proposals.ActionAddExhibit, map[string]any{"document_id": "d_alv_offer", "label": "PX-1"})
	second := d.propose(t, servertest.Paralegal, seed.Alvarez, proposals.ActionAddExhibit, map[string]any{"document_id": "d_alv_answer", "label": "px-1"})
	dana := d.signIn(t, seed.DemoAttorney)
	got := outcomes(t, dana.review(t, []string{first, second}, nil))
	if got[first] != (outcome{Status: "approved"}) || got[second].Code != "TARGET_CHANGED" || got[second].Status != "pending" {
		t.Errorf("two exhibits under one label = %+v", got)
	}
}
