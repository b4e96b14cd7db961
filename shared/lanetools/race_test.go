package lanetools_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/uploads"
)

// generous limits let a race's calls all through the write lane (30 a
// minute by default).
var generous = ratelimit.Limits{ratelimit.LaneRead: 10_000, ratelimit.LaneWrite: 10_000, ratelimit.LaneExpensive: 10_000}

// The race on the spend itself (issue 16; ARCHITECTURE invariant "a grant
// is spent by a conditional write whose matched-row count is the
// verdict"): 64 verified uploads of one grant completed by 64 goroutines at
// once on the file engine: exactly one spends it, the 63 others are
// GRANT_INVALID with spent true, and their 63 objects are gone.
func TestSixtyFourUploadsRacingOneGrantSpendItOnceAndTheLosersObjectsGo(t *testing.T) {
	const n = 64
	e := newLaneEnv(t, laneOptions{Options: servertest.Options{Limits: generous}})
	grant, g := e.grantOf(t, seed.Alvarez)
	// A grant allows at most uploads.MaxMaxOpen open uploads; the race
	// needs 64 at once, so this fixture raises the cap on the row itself.
	if _, err := e.Store.Update(context.Background(), uploads.GrantKey(g.Hash), store.Update{Set: map[string]any{"max_open": int64(n)}}); err != nil {
		t.Fatal(err)
	}
	sessions := make([]session, n)
	for i := range sessions {
		f := newFile(pattern(2000, byte(i)))
		sessions[i] = e.mustBegin(t, grant, seed.Alvarez, f)
		put(t, sessions[i], f)
	}
	results := make([]decision, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			<-start
			results[i] = e.completeConcurrently(t, 1000+i, grant, sessions[i].UploadID)
		})
	}
	close(start)
	wg.Wait()

	won, lost := -1, 0
	for i, d := range results {
		if d.Status == "executed" {
			if won >= 0 {
				t.Fatalf("uploads %d and %d both spent the grant", won, i)
			}
			won = i
			continue
		}
		if class, spent := d.refused(t); class != "GRANT_INVALID" || !spent {
			t.Errorf("upload %d = %s spent %v, want GRANT_INVALID spent true", i, class, spent)
		}
		lost++
	}
	if won < 0 || lost != n-1 {
		t.Fatalf("%d spent, %d refused; want 1 and %d", n-lost, lost, n-1)
	}
	gone := 0
	for i, s := range sessions {
		id := objectOf(t, s.UploadID)
		stored := e.exists(t, blob.Incoming(id)) || e.exists(t, blob.Verified(id))
		if i == won && !e.exists(t, blob.Verified(id)) {
			t.Errorf("the winner's object is not in verified/")
		}
		if i != won && !stored {
			gone++
		}
	}
	if gone != n-1 {
		t.Errorf("%d losers' objects are gone, want %d", gone, n-1)
	}
	if state, _ := e.grantState(t, grant); state != "spent" {
		t.Errorf("grant = %s, want spent", state)
	}
}

// Racing complete_upload on one upload is decided by S3 first: one call
// assembles the parts, the others meet NoSuchUpload, resume from the
// assembled object or the row, and all answer the one receipt; the grant
// is spent once.
func TestSixteenCallsCompletingOneUploadAllAnswerOneReceipt(t *testing.T) {
	const n = 16
	e := newLaneEnv(t, laneOptions{Options: servertest.Options{Limits: generous}})
	grant := e.grant(t, seed.Alvarez)
	f := newFile(pattern(300_000, 16))
	s := e.mustBegin(t, grant, seed.Alvarez, f)
	put(t, s, f)
	answers := make([]decision, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			<-start
			answers[i] = e.completeConcurrently(t, 1000+i, grant, s.UploadID)
		})
	}
	close(start)
	wg.Wait()
	receipts := make([]receiptData, n)
	for i, d := range answers {
		receipts[i] = receiptOf(t, d)
	}
	for i, r := range receipts[1:] {
		if diff := cmp.Diff(receipts[0], r); diff != "" {
			t.Errorf("receipt %d differs (-first +this):\n%s", i+1, diff)
		}
	}
	if state, _ := e.grantState(t, grant); state != "spent" {
		t.Errorf("grant = %s, want spent", state)
	}
	if !e.exists(t, blob.Verified(objectOf(t, s.UploadID))) {
		t.Error("the object is not in verified/")
	}
}
