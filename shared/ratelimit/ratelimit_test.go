package ratelimit

import (
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/store"
)

func bucketAfter(t *testing.T, b Bucket, op store.Op) Bucket {
	t.Helper()
	var it store.Item
	switch op.Kind {
	case store.OpPut:
		it = op.Item
	case store.OpUpdate:
		var live *store.Item
		if b.Exists {
			live = &store.Item{PK: b.Key.PK, SK: b.Key.SK, Version: b.Version,
				Attrs: map[string]any{"window": b.Window, "count": b.Count, "prev": b.Prev}}
		}
		if err := store.CheckConditions(op.Conditions, live); err != nil {
			t.Fatalf("update guard fails on the bucket it was built from: %v", err)
		}
		it = store.ApplyUpdate(op.Key, live, op.Update)
	}
	return DecodeBucket(b.Key, &it)
}

func TestSlidingWindow(t *testing.T) {
	key := Key("h", "mcp", LaneRead)
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	b := DecodeBucket(key, nil)
	now := start
	// Ten requests in the first minute at limit 10 all pass; the eleventh not.
	for i := 0; i < 10; i++ {
		if d := Decide(b, 10, now, 1); !d.Allowed {
			t.Fatalf("request %d refused: %+v", i+1, d)
		}
		b = bucketAfter(t, b, Reserve(b, 10, now, 1))
		now = now.Add(time.Second)
	}
	d := Decide(b, 10, now, 1)
	if d.Allowed {
		t.Fatal("request 11 in the same minute was allowed at limit 10")
	}
	if d.RetryAfter < time.Second || d.RetryAfter > 2*time.Minute {
		t.Errorf("RetryAfter = %v, want between 1 s and 2 min", d.RetryAfter)
	}
	// Just after the window turns, the previous minute still weighs fully.
	if d := Decide(b, 10, start.Add(Window+time.Second), 1); d.Allowed {
		t.Error("allowed at the start of the next minute although the previous minute was full")
	}
	// After the suggested wait, a request passes.
	if d2 := Decide(b, 10, now.Add(d.RetryAfter), 1); !d2.Allowed {
		t.Errorf("refused after waiting Retry-After %v", d.RetryAfter)
	}
	// Two minutes later the bucket is empty again.
	if d := Decide(b, 10, start.Add(2*Window+time.Second), 1); !d.Allowed {
		t.Error("refused two minutes later")
	}
	if d := Decide(b, 0, now, 1); !d.Allowed {
		t.Error("limit 0 means unlimited, but refused")
	}
}

func TestConsumeGuards(t *testing.T) {
	key := Key("h", "mcp", LaneRead)
	now := time.Date(2026, 11, 30, 12, 0, 30, 0, time.UTC)
	if op := Reserve(DecodeBucket(key, nil), 10, now, 1); op.Kind != store.OpPut || op.Conditions[0].Kind != store.CondNotExists {
		t.Errorf("first write = %+v, want a Put guarded by not-exists", op)
	}
	same := Bucket{Key: key, Exists: true, Window: now.Unix() - 30, Count: 3, Version: 4}
	if op := Reserve(same, 10, now, 2); op.Kind != store.OpUpdate || op.Update.Add["count"] != 2 {
		t.Errorf("write in the same window = %+v, want an Add of 2", op)
	}
	old := Bucket{Key: key, Exists: true, Window: now.Unix() - 90, Count: 7, Version: 4}
	op := Reserve(old, 10, now, 1)
	if op.Kind != store.OpPut || op.Conditions[0].Version != 4 || op.Item.Int("prev") != 7 || op.Item.Int("count") != 1 {
		t.Errorf("write in the next window = %+v, want a versioned Put carrying prev=7", op)
	}
}
