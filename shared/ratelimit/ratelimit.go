// Package ratelimit meters requests per (surface, lane, credential) with a
// sliding-window counter kept in one store row per bucket.
//
// The estimate for the window now running is
//
//	prev × (60 s − elapsed) / 60 s + count
//
// where count is the current minute's requests and prev the previous
// minute's (the approximation Cloudflare described for its edge limiter). n
// requests are admitted while estimate + n ≤ limit; a JSON-RPC batch is
// charged per message, before any runs.
//
// Admission reserves (issue 8, item 3), by leases (issue 19, item 6;
// docs/decisions.md "Pipeline choices"). A process admits requests from
// its slice of the bucket (Leases), which it counted in the row under the
// condition that the window's count stays within what the limit admits
// (Reserve: AttrBelow on the count) before handing any of it out — so the
// requests served in a window never pass the limit, across any number of
// processes, and the bucket is written once per slice (SliceFor), not per
// request. The price is a stated undershoot: slices leased but unserved
// count too (Leases). The work done at once is bounded separately: the
// gate caps each credential's concurrent calls in the expensive lane per
// process (gate.Options.MaxConcurrent), and on Lambda one instance serves
// one request at a time, under the function's reserved concurrency.
//
// Refused requests are not counted (a client that honours Retry-After gets
// in when it says); every other authenticated request is, invalid ones too.
package ratelimit

import (
	"math"
	"time"

	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/store"
)

// Lane separates cheap from expensive work so a burst of searches cannot
// starve ordinary reads.
type Lane string

// The lanes (docs/decisions.md "Pipeline choices"); LaneWrite is below.
const (
	LaneRead      Lane = "read"
	LaneExpensive Lane = "expensive"
)

// Window is the counter's window.
const Window = time.Minute

const windowSeconds = int64(Window / time.Second)

// MaxCall is the longest a request can run between its admission and its
// one write: the Lambda timeout of a streaming /mcp (docs/decisions.md "Time and
// size constants"). A bucket row outlives its two windows by this much, so a
// call admitted against a live row still finds it live when it commits: an
// update of an expired row would cost DynamoDB one more write (dynamostore
// package doc) and the gate a re-read. The extra lifetime changes no
// decision: Bucket.view judges a row by its window, never by its expiry.
const MaxCall = 15 * time.Minute

// Limits are requests per minute per lane; a lane without an entry is
// unlimited.
type Limits map[Lane]int

// DefaultLimits are the configured defaults: 600 reads, 60 expensive
// calls and 30 writes a minute per credential.
func DefaultLimits() Limits { return Limits{LaneRead: 600, LaneExpensive: 60, LaneWrite: 30} }

// Key is the bucket row of a credential's lane on a surface ("mcp", …). It
// lives in the credential's partition, keyed by the key hash, so it can be
// fetched in the same batch as the credential before the credential is known.
func Key(keyHash, surface string, lane Lane) store.Key {
	return store.Key{PK: keyspace.CredentialPK(keyHash), SK: "RATE#" + surface + "#" + string(lane)}
}

// Bucket is a decoded bucket row.
type Bucket struct {
	Key     store.Key
	Exists  bool
	Window  int64 // epoch seconds of the window's start
	Count   int64
	Prev    int64
	Version int64
}

// DecodeBucket decodes the row read at key (nil: no row yet).
func DecodeBucket(key store.Key, it *store.Item) Bucket {
	b := Bucket{Key: key}
	if it != nil {
		b.Exists = true
		b.Window = it.Int("window")
		b.Count = it.Int("count")
		b.Prev = it.Int("prev")
		b.Version = it.Version
	}
	return b
}

// Decision is the verdict on one request.
type Decision struct {
	Allowed bool
	// Limit is the lane's per-minute limit (0: unlimited).
	Limit int
	// RetryAfter is how long to wait before a retry can pass; whole seconds,
	// at least one, set only when refused.
	RetryAfter time.Duration
}

// RetryAfterSeconds is RetryAfter in whole seconds.
func (d Decision) RetryAfterSeconds() int { return int(d.RetryAfter / time.Second) }

// view is the bucket as seen from the window containing now.
func (b Bucket) view(now int64) (window, count, prev int64) {
	w := now - now%windowSeconds
	switch {
	case !b.Exists || b.Window < w-windowSeconds:
		return w, 0, 0
	case b.Window == w-windowSeconds:
		return w, 0, b.Count
	case b.Window == w:
		return w, b.Count, b.Prev
	default: // a row from the future (clock skew between instances): trust it
		return w, b.Count, b.Prev
	}
}

// Decide judges n requests (a batch is charged per message before any
// runs) against the bucket at now: allowed while estimate + n ≤ limit.
func Decide(b Bucket, limit int, now time.Time, n int) Decision {
	if limit <= 0 {
		return Decision{Allowed: true}
	}
	if n < 1 {
		n = 1
	}
	sec := now.Unix()
	w, count, prev := b.view(sec)
	elapsed := float64(now.Sub(time.Unix(w, 0))) / float64(Window)
	est := float64(prev)*(1-elapsed) + float64(count)
	if est+float64(n) <= float64(limit) {
		return Decision{Allowed: true, Limit: limit}
	}
	return Decision{Limit: limit, RetryAfter: retryAfter(count, prev, limit, elapsed)}
}

// retryAfter finds the earliest time the estimate admits one more request.
func retryAfter(count, prev int64, limit int, elapsed float64) time.Duration {
	room := float64(limit - 1)
	var wait float64 // in windows
	if float64(count) <= room && prev > 0 {
		// Still this window: wait for the previous minute's share to decay.
		need := 1 - (room-float64(count))/float64(prev)
		wait = need - elapsed
	} else {
		// Next window: this minute's count becomes prev and decays.
		need := 0.0
		if count > 0 {
			need = math.Max(0, 1-room/float64(count))
		}
		wait = (1 - elapsed) + need
	}
	secs := math.Ceil(wait * Window.Seconds())
	if secs < 1 {
		secs = 1
	}
	return time.Duration(secs) * time.Second
}

// Reserve returns the write that counts n admitted requests in the bucket,
// for the request's transaction, guarded so that the window's count cannot
// pass what the limit admits: of concurrent requests decided on the same
// read, only those that fit commit (issue 8, item 3; see the package doc).
// Within a window it is an atomic Add under AttrEquals(window) and
// AttrBelow(count, room); a new window is a Put guarded by the read version
// (or by absence), whose losers re-read the row and reserve again as Adds.
// A limit of 0 (unlimited) reserves without the cap.
func Reserve(b Bucket, limit int, now time.Time, n int64) store.Op {
	sec := now.Unix()
	w, count, prev := b.view(sec)
	if b.Exists && b.Window == w {
		conds := []store.Condition{store.AttrEquals("window", w)}
		if limit > 0 {
			conds = append(conds, store.AttrBelow("count", countCap(limit, prev, now, w)-n+1))
		}
		return store.UpdateOp(b.Key, store.Update{Add: map[string]int64{"count": n}}, conds...)
	}
	guard := store.NotExists()
	if b.Exists {
		guard = store.VersionEquals(b.Version)
	}
	return store.PutOp(store.Item{
		PK: b.Key.PK, SK: b.Key.SK, Version: b.Version + 1,
		// Kept two windows so the next minute still sees this one as prev,
		// and MaxCall more so a slow call still commits with one write.
		ExpiresAt: w + 2*windowSeconds + int64(MaxCall/time.Second),
		Attrs:     map[string]any{"window": w, "count": count + n, "prev": prev},
	}, guard)
}

// countCap is the most requests the window starting at w may count at now:
// the limit less the previous window's decaying share, rounded down.
func countCap(limit int, prev int64, now time.Time, w int64) int64 {
	elapsed := float64(now.Sub(time.Unix(w, 0))) / float64(Window)
	return int64(math.Floor(float64(limit) - float64(prev)*(1-elapsed)))
}

// LaneWrite is the write budget of governed writes (docs/decisions.md
// "Pipeline choices": 30 per minute per credential).
const LaneWrite Lane = "write"

// Costlier reports whether lane a is charged before lane b when one body
// holds calls of both (a batch is charged in its costliest lane): read <
// write < expensive.
func Costlier(a, b Lane) bool { return laneRank(a) > laneRank(b) }

func laneRank(l Lane) int {
	switch l {
	case LaneExpensive:
		return 2
	case LaneWrite:
		return 1
	}
	return 0
}
