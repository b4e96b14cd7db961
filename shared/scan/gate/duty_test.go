package gate_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/gate"
	"github.com/custodymcp/custody/shared/scan/guardduty"
	"github.com/custodymcp/custody/shared/scan/scantest"
	"github.com/custodymcp/custody/shared/scan/signature"
	"github.com/custodymcp/custody/shared/sweep"
	"github.com/custodymcp/custody/shared/uploads"
)

// duties are the sweeper's duties of the lane, as server.Server composes
// them.
func (e *env) duties() []sweep.Duty {
	return []sweep.Duty{
		&uploads.GrantExpiryDuty{Store: e.store},
		&uploads.CopyDuty{Store: e.store, Blob: e.blob},
		&uploads.OpenDuty{Store: e.store, Blob: e.blob},
		&gate.NoVerdictDuty{Gate: e.gate},
	}
}

// sweepAt runs the duties once at the clock's time plus d (the clock moves
// there) and returns the actions of every duty.
func (e *env) sweepAt(t *testing.T, d time.Duration) map[string]int {
	t.Helper()
	e.clock.Advance(d)
	reports, err := sweep.Run(context.Background(), e.duties(), e.clock.Now())
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	return actions(reports)
}

func actions(reports []sweep.Report) map[string]int {
	out := map[string]int{}
	for _, r := range reports {
		for a, n := range r.Actions {
			out[r.Duty+": "+a] += n
		}
	}
	return out
}

// A scan_pending upload no event decided: the copy duty records its copy,
// and 30 minutes later the no-verdict duty decides it — scan_failed "no
// verdict", or GuardDuty's result from the object's tag when it has one.
func TestAnUploadWithoutAnEventIsDecidedThirtyMinutesAfterItsCopy(t *testing.T) {
	tests := []struct {
		name  string
		tag   string // the GuardDutyMalwareScanStatus tag; "" none
		state uploads.State
		why   string
	}{
		{"with no tag it is scan_failed, no verdict", "", uploads.StateScanFailed, gate.ReasonNoVerdict},
		{"with a NO_THREATS_FOUND tag it is clean", guardduty.NoThreatsFound, uploads.StateClean, ""},
		{"with a THREATS_FOUND tag it is infected and quarantined", guardduty.ThreatsFound, uploads.StateInfected, ""},
		{"with an UNSUPPORTED tag it is scan_failed", guardduty.Unsupported, uploads.StateScanFailed, "GuardDuty could not scan the object: UNSUPPORTED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := guardEnv(t)
			u := e.deposit(t, "memo.txt", memo)
			if tc.tag != "" {
				if err := e.blob.Unwrap().PutObjectTagging(context.Background(), blob.Verified(u.Object),
					map[string]string{guardduty.TagKey: tc.tag}); err != nil {
					t.Fatal(err)
				}
			}
			if got := e.sweepAt(t, uploads.CopyGrace); got["upload copy to verified/: "+uploads.ActionRecorded] != 1 {
				t.Fatalf("the first sweep = %v, want the copy recorded", got)
			}
			if got := e.sweepAt(t, uploads.NoVerdictTimeout-time.Second); len(got) != 0 {
				t.Fatalf("a sweep 29:59 after the copy = %v, want nothing", got)
			}
			got := e.sweepAt(t, time.Second)
			want := gate.ActionNoVerdict
			if tc.tag != "" {
				want = gate.ActionTagVerdict
			}
			if got["upload no-verdict timeout: "+want] != 1 {
				t.Errorf("the sweep 30 min after the copy = %v, want %q once", got, want)
			}
			up := e.upload(t, u.ID)
			if up.State != tc.state || up.ScanReason != tc.why {
				t.Errorf("upload = %s %q, want %s %q", up.State, up.ScanReason, tc.state, tc.why)
			}
			if tc.state == uploads.StateInfected && e.exists(t, blob.Verified(u.Object)) {
				t.Error("the infected object is still in verified/")
			}
			if wantIntake := int32(map[bool]int{true: 1}[tc.state == uploads.StateClean]); e.intake.n.Load() != wantIntake {
				t.Errorf("%d intakes, want %d", e.intake.n.Load(), wantIntake)
			}
			if got := e.sweepAt(t, time.Hour); len(got) != 0 {
				t.Errorf("a later sweep = %v, want nothing", got)
			}
		})
	}
}

// Overlapping sweeps — two at once, then a third — each act once on every
// row: the verdict, the abandoned upload, the expired grant.
func TestOverlappingSweepsActOnceEach(t *testing.T) {
	for _, dynamo := range []bool{false, true} {
		t.Run(map[bool]string{false: "file", true: "dynamodb"}[dynamo], func(t *testing.T) {
			e := newEnv(t, envOptions{dynamo: dynamo})
			e.dep.GrantTTL = 48 * time.Hour
			pending := e.deposit(t, "memo.txt", memo) // no event: no verdict
			_, open := e.dep.Begin(t, seed.Alvarez, "abandoned.txt", memo)
			e.dep.GrantTTL = time.Hour
			expiring, _, err := uploads.MintGrant(context.Background(), e.store, uploads.MintRequest{Tenant: seed.DemoTenant,
				CredentialID: e.dep.Credential.ID, Matter: seed.Alvarez, By: seed.DemoAdmin, TTL: time.Hour}, e.clock.Now())
			if err != nil || expiring == "" {
				t.Fatal(err)
			}
			e.sweepAt(t, uploads.CopyGrace) // the copy is recorded

			e.clock.Advance(uploads.UploadLife)
			now := e.clock.Now()
			var (
				wg  sync.WaitGroup
				mu  sync.Mutex
				all = map[string]int{}
			)
			for range 3 {
				wg.Go(func() {
					reports, err := sweep.Run(context.Background(), e.duties(), now)
					if err != nil {
						t.Errorf("sweep: %v", err)
					}
					mu.Lock()
					defer mu.Unlock()
					for a, n := range actions(reports) {
						all[a] += n
					}
				})
			}
			wg.Wait()
			want := map[string]int{
				"upload no-verdict timeout: " + gate.ActionNoVerdict: 1,
				"open upload lapse: " + uploads.ActionAbandoned:      1,
				"grant expiry: " + uploads.ActionExpired:             1,
			}
			if diff := cmp.Diff(want, all); diff != "" {
				t.Errorf("actions of three overlapping sweeps (-want +got):\n%s", diff)
			}
			if got := e.upload(t, pending.ID); got.State != uploads.StateScanFailed {
				t.Errorf("the pending upload is %s, want scan_failed", got.State)
			}
			got := e.upload(t, open.ID)
			if got.State != uploads.StateAbandoned {
				t.Errorf("the open upload is %s, want abandoned", got.State)
			}
			grants, err := uploads.ListGrants(context.Background(), e.store, seed.DemoTenant)
			if err != nil {
				t.Fatal(err)
			}
			states := map[uploads.GrantState]int{}
			for _, g := range grants {
				states[g.State]++
				if g.ID == got.GrantID && (g.OpenUploads == nil || *g.OpenUploads != 0) {
					t.Errorf("the abandoned upload's grant has %v open uploads, want its slot freed (0)", g.OpenUploads)
				}
			}
			if want := map[uploads.GrantState]int{uploads.GrantSpent: 1, uploads.GrantUnspent: 1, uploads.GrantExpired: 1}; !cmp.Equal(states, want) {
				t.Errorf("grant states = %v, want %v", states, want)
			}
		})
	}
}

// A firm administrator's rescan is the only way from scan_failed back to
// scan_pending: the copy duty re-creates the object in verified/, whose
// event the healed engine judges.
func TestARescanByAFirmAdministratorScansTheObjectAgain(t *testing.T) {
	sc := scantest.NewFaulty(signature.New(), signature.Name)
	e := newEnv(t, envOptions{scanner: sc})
	ctx := context.Background()
	sc.Break(nil)
	u := e.deposit(t, "memo.txt", memo)
	if out, err := e.created(t, u); err != nil || out.State != uploads.StateScanFailed {
		t.Fatalf("verdict while broken = %+v, %v; want scan_failed", out, err)
	}
	sc.Heal()
	clean := e.deposit(t, "other.txt", memo)
	if _, err := e.created(t, clean); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, upload, by string
		want             error
	}{
		{"an attorney is refused", u.ID, seed.DemoAttorney, uploads.ErrNotAdmin},
		{"a clean upload is refused", clean.ID, seed.DemoAdmin, uploads.ErrNotRescanable},
		{"an unknown upload is refused", uploads.UploadID(blob.NewID()), seed.DemoAdmin, uploads.ErrUnknownUpload},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := uploads.Rescan(ctx, e.store, seed.DemoTenant, tc.upload, tc.by, e.clock.Now()); !errors.Is(err, tc.want) {
				t.Errorf("Rescan = %v, want %v", err, tc.want)
			}
		})
	}
	if got := e.upload(t, u.ID); got.State != uploads.StateScanFailed {
		t.Fatalf("after the refusals the upload is %s, want scan_failed", got.State)
	}
	if _, err := uploads.Rescan(ctx, e.store, seed.DemoTenant, u.ID, seed.DemoAdmin, e.clock.Now()); err != nil {
		t.Fatalf("Rescan by the firm administrator = %v", err)
	}
	if got := e.upload(t, u.ID); got.State != uploads.StateScanPending || got.ScanEngine != "" {
		t.Fatalf("after the rescan the upload is %s (engine %q), want scan_pending without the old verdict", got.State, got.ScanEngine)
	}
	held, err := uploads.ListHeld(ctx, e.store, seed.DemoTenant, uploads.StateScanFailed)
	if err != nil || len(held) != 0 {
		t.Errorf("ListHeld(scan_failed) = %v, %v; want none", held, err)
	}
	copies := e.blob.Calls("CopyObject")
	if got := e.sweepAt(t, time.Second); got["upload copy to verified/: "+uploads.ActionRescanned] != 1 {
		t.Fatalf("the sweep after the rescan = %v, want the object re-created in verified/", got)
	}
	if n := e.blob.Calls("CopyObject") - copies; n != 2 {
		t.Errorf("%d copies, want 2 (verified/ to incoming/ and back)", n)
	}
	out, err := e.created(t, u)
	if err != nil || out.State != uploads.StateClean {
		t.Errorf("the event of the re-created object = %+v, %v; want clean", out, err)
	}
	if p := e.gate.Posture(ctx); p != scan.Armed {
		t.Errorf("Posture() = %s, want ARMED", p)
	}
}
