package ondynamo_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/gate"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// TestRoundTripsOfRateLeasesArePinned pins what rate admission costs on
// DynamoDB now that it leases slices (issue 19, item 6; docs/decisions.md
// "Pipeline choices"): with the default 600 reads a minute a slice is 10
// requests, so of a key's read-lane requests in one window on one
// instance, the first leases with a GetItem and a PutItem of the bucket
// row, every tenth after it with one UpdateItem, and the rest touch the
// bucket not at all — while every get_matter is its BatchGetItem, the
// matter's GetItem and its audit row's PutItem. In the expensive lane (60
// a minute: slices of 1) every call leases. The bucket row counts what was
// leased: never less than what was served.
func TestRoundTripsOfRateLeasesArePinned(t *testing.T) {
	clock := servertest.NewClock(servertest.Epoch)
	env := newDynEnv(t, servertest.Options{Clock: clock, MaxConcurrent: map[ratelimit.Lane]int{}})
	env.ops.take()
	env.ops.takeLeases()
	s := env.Initialize(t, servertest.Attorney, rev) // initialize and its notification: 2 of the first slice
	if got := env.ops.takeLeases(); !cmp.Equal(got, map[string]int{"GetItem": 1, "PutItem": 1}) {
		t.Errorf("the window's first request leased with %v, want a GetItem and a PutItem", got)
	}
	slice := int(ratelimit.SliceFor(ratelimit.DefaultLimits()[ratelimit.LaneRead]))
	if slice != 10 {
		t.Fatalf("SliceFor(600) = %d, want 10", slice)
	}
	charged := 2
	for i := 1; i <= 25; i++ {
		env.ops.take()
		r := s.Post(t, []byte(toolCall(100+i, "get_matter", map[string]any{"case_id": seed.Meridian})))
		got, leases := env.ops.take(), env.ops.takeLeases()
		if class, code := refusalClass(t, r); r.Status != 200 || class != "" || code != 0 {
			t.Fatalf("call %d: %d %s", i, r.Status, r.Body)
		}
		var want map[string]int
		if charged%slice == 0 {
			want = map[string]int{"UpdateItem": 1}
		}
		charged++
		if !cmp.Equal(leases, want, cmp.Comparer(func(a, b map[string]int) bool { return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b) })) {
			t.Errorf("call %d (request %d of the window): lease requests %v, want %v", i, charged, leases, want)
		}
		if diff := cmp.Diff(map[string]int(authed(1, 0)), got); diff != "" {
			t.Errorf("call %d: DynamoDB requests (-want +got):\n%s", i, diff)
		}
	}
	cred := env.Creds[servertest.Attorney]
	it, err := env.Store.Get(context.Background(), ratelimit.Key(cred.KeyHash, gate.Surface, ratelimit.LaneRead))
	if err != nil {
		t.Fatal(err)
	}
	leased := (charged + slice - 1) / slice * slice
	if n := it.Int("count"); n != int64(leased) {
		t.Errorf("bucket count = %d, want %d: %d requests served, in slices of %d", n, leased, charged, slice)
	}

	// The expensive lane: one UpdateItem per call after the first's lease.
	env.ops.takeLeases() // the test's own read of the bucket
	for i := 1; i <= 3; i++ {
		env.ops.take()
		s.Post(t, []byte(toolCall(200+i, "search_documents", map[string]any{"case_id": seed.Meridian, "query": "delivery"})))
		leases := env.ops.takeLeases()
		want := map[string]int{"UpdateItem": 1}
		if i == 1 {
			want = map[string]int{"GetItem": 1, "PutItem": 1}
		}
		if !cmp.Equal(leases, want) {
			t.Errorf("search %d: lease requests %v, want %v", i, leases, want)
		}
	}
}

// Issue 19, item 6, on DynamoDB: two instances' leases of one bucket keep
// issue 8's bound (servertest.LeasesAcrossInstances): a read limit of 300
// (slices of 5) against a 400-way barrier of get_matter, and an expensive
// limit of 60 (slices of 1) against 200 search_documents.
func TestRateLeasesAcrossTwoInstancesServeNoMoreThanTheLimitOnDynamoDB(t *testing.T) {
	t.Run("read lane, slices of 5", func(t *testing.T) {
		env := newDynEnv(t, servertest.Options{Clock: servertest.NewClock(servertest.Epoch),
			Limits: ratelimit.Limits{ratelimit.LaneRead: 300}})
		servertest.LeasesAcrossInstances(t, env.Env, 300, 2, 400, "get_matter", map[string]any{"case_id": seed.Meridian})
	})
	t.Run("expensive lane, slices of 1", func(t *testing.T) {
		env := newDynEnv(t, servertest.Options{Clock: servertest.NewClock(servertest.Epoch),
			Limits:        ratelimit.Limits{ratelimit.LaneRead: 10000, ratelimit.LaneExpensive: 60},
			MaxConcurrent: map[ratelimit.Lane]int{}})
		servertest.LeasesAcrossInstances(t, env.Env, 60, 0, 200, "search_documents", map[string]any{"query": "delivery", "case_id": seed.Meridian})
	})
}
