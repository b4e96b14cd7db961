package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/custodymcp/custody/shared/store"
)

// MaxSlice is the most requests one lease hands a process at once
// (docs/decisions.md "Pipeline choices": rate leases).
const MaxSlice = 10

// SliceFor is the slice a process leases of a lane limited to limit
// requests a minute: a sixtieth of the limit (a second's worth), between 1
// and MaxSlice. 600 reads a minute lease 10 at a time; 60 expensive calls
// and 30 writes one at a time.
func SliceFor(limit int) int64 {
	return max(1, min(MaxSlice, int64(limit)/60))
}

// maxLeaseAttempts bounds the reads of a bucket that other processes keep
// changing while this one leases.
const maxLeaseAttempts = 5

// maxHeld is the number of buckets a Leases keeps before it forgets those
// of past windows.
const maxHeld = 4096

// Leases are one process's slices of credentials' budgets (issue 19, item
// 6). A request is admitted against its bucket's slice held in memory; only
// when the slice is spent (or belongs to a past window) does the process
// lease another with one conditional write to the bucket row, before the
// request runs. The write counts the whole slice in the window under the
// same condition a single request's reservation had (Reserve: the window's
// count never passes what the limit admits at the time of the lease), so
// every request served in a window was counted before it ran:
//
//   - overshoot: none. The sliding estimate of the requests served never
//     passes the limit, as with a reservation per request, across any
//     number of processes (a lease taken at t admits its slice at any later
//     t' of the same window, where the previous window's share is smaller).
//     Clock skew between instances is trusted as before (Bucket.view).
//   - undershoot: the units leased but not yet served are counted too, so a
//     credential may be refused while up to P × (SliceFor(limit) − 1) of
//     its counted requests sit unserved in the slices of the P processes
//     holding one; a slice dies with its window. With 600 reads a minute
//     and 10 instances that is at most 90 of the 600.
//
// Refused requests take nothing. The zero value is not usable; use
// NewLeases.
type Leases struct {
	mu   sync.Mutex
	held map[store.Key]*lease
}

// lease is one bucket's slice in this process.
type lease struct {
	mu     sync.Mutex // one acquisition at a time per bucket and process
	window int64      // the window the slice belongs to
	left   int64      // requests of the slice not yet admitted
	// known: count and prev are the bucket row as this process last read
	// or wrote it in window.
	known       bool
	count, prev int64
}

// NewLeases returns an empty set of leases.
func NewLeases() *Leases { return &Leases{held: map[store.Key]*lease{}} }

func (ls *Leases) get(key store.Key, w int64) *lease {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.held[key]
	if l == nil {
		if len(ls.held) >= maxHeld {
			for k, old := range ls.held {
				if old.window < w-windowSeconds {
					delete(ls.held, k)
				}
			}
		}
		l = &lease{}
		ls.held[key] = l
	}
	return l
}

// Take admits n requests (a batch is charged per message before any runs)
// of the bucket at key against limit at now: from the process's slice when
// it holds n, otherwise after leasing a new slice of at least n with one
// conditional write — an Update that adds the slice under the window and
// the cap when this process knows the row's window, else a strongly
// consistent Get and the write Reserve builds (a Put for a new window). A
// limit of 0 is unlimited: nothing is read or written. The Decision is
// refused (with RetryAfter) when the window has no room for n; an error
// means the store could not answer, or the row kept changing for
// maxLeaseAttempts reads.
func (ls *Leases) Take(ctx context.Context, st store.Store, key store.Key, limit int, now time.Time, n int) (Decision, error) {
	if limit <= 0 {
		return Decision{Allowed: true}, nil
	}
	want := int64(max(1, n))
	sec := now.Unix()
	w := sec - sec%windowSeconds
	l := ls.get(key, w)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.window != w {
		l.window, l.left, l.known, l.count, l.prev = w, 0, false, 0, 0
	}
	if l.left >= want {
		l.left -= want
		return Decision{Allowed: true, Limit: limit}, nil
	}
	need := want - l.left
	slice := max(need, SliceFor(limit))
	if l.known {
		// The row's window is this one: add the slice, capped as Reserve
		// caps (the count may have grown meanwhile; the condition sees it).
		c := countCap(limit, l.prev, now, w)
		if got := min(slice, c-l.count); got >= need {
			it, err := st.Update(ctx, key, store.Update{Add: map[string]int64{"count": got}},
				store.AttrEquals("window", w), store.AttrBelow("count", c-got+1))
			switch {
			case err == nil:
				l.count = it.Int("count")
				l.left += got - want
				return Decision{Allowed: true, Limit: limit}, nil
			case !isCondition(err):
				return Decision{}, fmt.Errorf("ratelimit: lease: %w", err)
			}
		}
	}
	for range maxLeaseAttempts {
		it, err := st.Get(ctx, key)
		var b Bucket
		switch {
		case errors.Is(err, store.ErrNotFound):
			b = DecodeBucket(key, nil)
		case err != nil:
			return Decision{}, fmt.Errorf("ratelimit: lease: read bucket: %w", err)
		default:
			b = DecodeBucket(key, &it)
		}
		_, count, prev := b.view(sec)
		l.known, l.count, l.prev = true, count, prev
		c := countCap(limit, prev, now, w)
		got := min(slice, c-count)
		if got < need {
			elapsed := float64(now.Sub(time.Unix(w, 0))) / float64(Window)
			return Decision{Limit: limit, RetryAfter: retryAfter(count, prev, limit, elapsed)}, nil
		}
		op := Reserve(b, limit, now, got)
		switch op.Kind {
		case store.OpPut:
			err = st.Put(ctx, op.Item, op.Conditions...)
			if err == nil {
				l.count = count + got
			}
		default:
			var out store.Item
			out, err = st.Update(ctx, op.Key, op.Update, op.Conditions...)
			if err == nil {
				l.count = out.Int("count")
			}
		}
		switch {
		case err == nil:
			l.left += got - want
			return Decision{Allowed: true, Limit: limit}, nil
		case !isCondition(err):
			return Decision{}, fmt.Errorf("ratelimit: lease: %w", err)
		}
	}
	l.known = false
	return Decision{}, fmt.Errorf("ratelimit: lease: the bucket changed under %d attempts", maxLeaseAttempts)
}

// Refund gives back n requests Take admitted at now that were then not
// served (refused by the concurrency cap, or not counted after all): they
// return to the process's slice while its window lasts, and are lost
// otherwise (they stay counted in the row, which only errs towards
// refusing).
func (ls *Leases) Refund(key store.Key, limit int, now time.Time, n int) {
	if limit <= 0 || n <= 0 {
		return
	}
	sec := now.Unix()
	w := sec - sec%windowSeconds
	ls.mu.Lock()
	l := ls.held[key]
	ls.mu.Unlock()
	if l == nil {
		return
	}
	l.mu.Lock()
	if l.window == w {
		l.left += int64(n)
	}
	l.mu.Unlock()
}

// Held reports the requests of key's slice this process holds for the
// window of now (for tests and diagnostics).
func (ls *Leases) Held(key store.Key, now time.Time) int64 {
	sec := now.Unix()
	w := sec - sec%windowSeconds
	ls.mu.Lock()
	l := ls.held[key]
	ls.mu.Unlock()
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.window != w {
		return 0
	}
	return l.left
}

func isCondition(err error) bool {
	return errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrExists)
}
