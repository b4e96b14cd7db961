package ratelimit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/store/filestore"
	"github.com/custodymcp/custody/shared/store/storetest"
)

func leaseStore(t *testing.T) *storetest.Faulty {
	t.Helper()
	fs, err := filestore.Open(t.TempDir()+"/custody.db", filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	return storetest.NewFaulty(fs)
}

// calls are a Faulty's store calls by method since the last look.
type calls struct {
	f    *storetest.Faulty
	last map[string]int
}

var methods = []string{storetest.MethodGet, storetest.MethodBatchGet, storetest.MethodPut,
	storetest.MethodUpdate, storetest.MethodDelete, storetest.MethodQuery, storetest.MethodTransact}

func (c *calls) take() map[string]int {
	got := map[string]int{}
	for _, m := range methods {
		if n := c.f.Calls(m) - c.last[m]; n > 0 {
			got[m] = n
		}
		c.last[m] = c.f.Calls(m)
	}
	return got
}

func same(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestALeaseWritesTheBucketOncePerSlice pins the store calls of rate
// leases (issue 19, item 6): the first request of a window reads the row
// and puts it with the slice counted; the slice's other requests touch the
// store not at all; the next slice is one Update; a refusal writes
// nothing; a new window is a read and a put again.
func TestALeaseWritesTheBucketOncePerSlice(t *testing.T) {
	st := leaseStore(t)
	c := &calls{f: st, last: map[string]int{}}
	ctx := context.Background()
	key := ratelimit.Key("hash", "mcp", ratelimit.LaneRead)
	// 600 a minute: slices of 10.
	ls := ratelimit.NewLeases()
	now := time.Now().Truncate(time.Minute)
	if s := ratelimit.SliceFor(600); s != 10 {
		t.Fatalf("SliceFor(600) = %d, want 10", s)
	}
	for i := 1; i <= 25; i++ {
		d, err := ls.Take(ctx, st, key, 600, now, 1)
		if err != nil || !d.Allowed {
			t.Fatalf("request %d: %+v, %v", i, d, err)
		}
		got := c.take()
		var want map[string]int
		switch i {
		case 1:
			want = map[string]int{storetest.MethodGet: 1, storetest.MethodPut: 1}
		case 11, 21:
			want = map[string]int{storetest.MethodUpdate: 1}
		}
		if !same(got, want) {
			t.Errorf("request %d: store calls %v, want %v", i, got, want)
		}
	}
	it, err := st.Get(ctx, key)
	if err != nil || it.Int("count") != 30 {
		t.Fatalf("bucket count = %d (%v), want 30: three slices counted", it.Int("count"), err)
	}
	c.take() // the test's own Get
	if h := ls.Held(key, now); h != 5 {
		t.Errorf("held = %d, want 5 of the third slice", h)
	}
	// The next minute: a read and a put of the new window.
	if d, err := ls.Take(ctx, st, key, 600, now.Add(time.Minute), 1); err != nil || !d.Allowed {
		t.Fatalf("next window: %+v, %v", d, err)
	}
	if got := c.take(); !same(got, map[string]int{storetest.MethodGet: 1, storetest.MethodPut: 1}) {
		t.Errorf("next window: store calls %v, want a Get and a Put", got)
	}
}

// TestALeaseNeverAdmitsPastTheLimit: three processes' leases of one
// bucket, limit 120 (slices of 2), 300 requests at once: at most 120
// admitted, at least 120 − 3 × 1 (the undershoot bound), the rest refused
// with a Retry-After; a Refund returns a request to its process's slice.
func TestALeaseNeverAdmitsPastTheLimit(t *testing.T) {
	st := leaseStore(t)
	ctx := context.Background()
	key := ratelimit.Key("hash", "mcp", ratelimit.LaneExpensive)
	now := time.Now().Truncate(time.Minute).Add(30 * time.Second)
	procs := []*ratelimit.Leases{ratelimit.NewLeases(), ratelimit.NewLeases(), ratelimit.NewLeases()}
	var mu sync.Mutex
	admitted, refused := 0, 0
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			d, err := procs[i%3].Take(ctx, st, key, 120, now, 1)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Errorf("Take: %v", err)
			case d.Allowed:
				admitted++
			case d.RetryAfter >= time.Second:
				refused++
			default:
				t.Errorf("refused without a Retry-After: %+v", d)
			}
		}()
	}
	close(start)
	wg.Wait()
	t.Logf("300 requests over 3 processes, limit 120, slices of %d: %d admitted, %d refused", ratelimit.SliceFor(120), admitted, refused)
	if admitted > 120 || admitted < 120-3 || admitted+refused != 300 {
		t.Errorf("admitted %d, refused %d; want 117..120 admitted and the rest refused", admitted, refused)
	}
	it, err := st.Get(ctx, key)
	if err != nil || it.Int("count") > 120 {
		t.Errorf("bucket count = %d (%v), want at most the limit", it.Int("count"), err)
	}
	// A refunded request is admitted again from the slice, without a write.
	held := procs[0].Held(key, now)
	procs[0].Refund(key, 120, now, 1)
	if h := procs[0].Held(key, now); h != held+1 {
		t.Errorf("held after a refund = %d, want %d", h, held+1)
	}
	if d, err := procs[0].Take(ctx, st, key, 120, now, 1); err != nil || !d.Allowed {
		t.Errorf("the refunded request: %+v, %v", d, err)
	}
	// A refund in another window is lost, never carried over.
	procs[0].Refund(key, 120, now.Add(time.Minute), 5)
	if h := procs[0].Held(key, now.Add(time.Minute)); h != 0 {
		t.Errorf("held in the next window = %d, want 0", h)
	}
	// An unlimited lane touches nothing.
	f := &calls{f: st, last: map[string]int{}}
	f.take()
	if d, err := procs[1].Take(ctx, st, ratelimit.Key("hash", "mcp", "other"), 0, now, 1); err != nil || !d.Allowed {
		t.Errorf("unlimited: %+v, %v", d, err)
	}
	if got := f.take(); len(got) != 0 {
		t.Errorf("unlimited lane: store calls %v, want none", got)
	}
}
