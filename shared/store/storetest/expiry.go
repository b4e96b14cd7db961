package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/store"
)

func (s suite) expiryTests() []test {
	// visible reports what each read path sees of the item at p / a, indexed
	// under g.
	visible := func(e *env) map[string]bool {
		e.t.Helper()
		_, getErr := e.s.Get(e.t.Context(), key("p", "a"))
		if getErr != nil && !errors.Is(getErr, store.ErrNotFound) {
			e.t.Fatalf("Get = %v", getErr)
		}
		batch, err := e.s.BatchGet(e.t.Context(), []store.Key{key("p", "a")})
		if err != nil || len(batch) != 1 {
			e.t.Fatalf("BatchGet = %v, %v", batch, err)
		}
		return map[string]bool{
			"Get":         getErr == nil,
			"BatchGet":    batch[0] != nil,
			"Query":       len(e.page(store.Query{PK: "p"}).Items) == 1,
			"Query GSI1":  len(e.page(store.Query{Index: store.IndexGSI1, PK: "g"}).Items) == 1,
			"Query desc":  len(e.page(store.Query{PK: "p", Descending: true, Limit: 1}).Items) == 1,
			"Query range": len(e.page(store.Query{PK: "p", SK: store.SortKeyCondition{From: "a", To: "a"}}).Items) == 1,
		}
	}
	wantVisible := func(e *env, when string, want bool) {
		e.t.Helper()
		for read, got := range visible(e) {
			if got != want {
				e.t.Fatalf("%s: %s sees the item: %v, want %v", when, read, got, want)
			}
		}
	}
	return []test{
		{"an item is live while ExpiresAt is after now and absent from then on, on every read", func(t *testing.T) {
			e := s.env(t)
			e.put(expiring(indexed(item("p", "a"), "g", "s"), e.unix()+10))
			wantVisible(e, "at put", true)
			e.clk.advance(9 * time.Second)
			wantVisible(e, "1s before ExpiresAt", true)
			e.clk.advance(999 * time.Millisecond)
			wantVisible(e, "1ms before ExpiresAt", true)
			e.clk.advance(time.Millisecond)
			wantVisible(e, "at ExpiresAt", false)
			e.clk.advance(time.Hour)
			wantVisible(e, "an hour later", false)
		}},
		{"an item put with ExpiresAt at or before now is absent at once", func(t *testing.T) {
			e := s.env(t)
			for _, at := range []int64{e.unix(), e.unix() - 3600, 1} {
				e.put(expiring(indexed(item("p", "a"), "g", "s"), at))
				wantVisible(e, fmt.Sprintf("ExpiresAt now%+d", at-e.unix()), false)
			}
		}},
		{"an item without ExpiresAt never expires", func(t *testing.T) {
			e := s.env(t)
			e.put(indexed(item("p", "a"), "g", "s"))
			e.clk.advance(100 * 365 * 24 * time.Hour)
			wantVisible(e, "a century later", true)
		}},
		{"an update of an expired item starts from an empty item", func(t *testing.T) {
			e := s.env(t)
			old := store.Item{PK: "p", SK: "a", GSI1PK: "g", GSI1SK: "s", Version: 5, ExpiresAt: e.unix() + 10,
				Attrs: map[string]any{"n": int64(41), "s": "old"}}
			e.put(old)
			e.clk.advance(10 * time.Second)
			got, err := e.s.Update(t.Context(), old.Key(), store.Update{Add: map[string]int64{"n": 1}})
			if err != nil {
				t.Fatalf("Update(expired) = %v", err)
			}
			want := item("p", "a", "n", int64(1))
			if d := diffItem(want, got); d != "" {
				t.Fatalf("Update(expired) mismatch (-want +got):\n%s", d)
			}
			e.wantItem(want)
			if p := e.page(store.Query{Index: store.IndexGSI1, PK: "g"}); len(p.Items) != 0 {
				t.Fatalf("index after Update of an expired item = %q, want empty", ids(p.Items))
			}
		}},
		{"a put over an expired item drops the old index entry", func(t *testing.T) {
			e := s.env(t)
			e.put(expiring(indexed(item("p", "a"), "g", "s"), e.unix()+10))
			e.clk.advance(10 * time.Second)
			if err := e.s.Put(t.Context(), item("p", "a", "new", true), store.NotExists()); err != nil {
				t.Fatalf("Put(NotExists) over an expired item = %v", err)
			}
			e.wantItem(item("p", "a", "new", true))
			if p := e.page(store.Query{Index: store.IndexGSI1, PK: "g"}); len(p.Items) != 0 {
				t.Fatalf("index after Put over an expired item = %q, want empty", ids(p.Items))
			}
		}},
		{"deleting an expired item succeeds and it stays absent", func(t *testing.T) {
			e := s.env(t)
			e.put(expiring(indexed(item("p", "a"), "g", "s"), e.unix()+10))
			e.clk.advance(10 * time.Second)
			if err := e.s.Delete(t.Context(), key("p", "a")); err != nil {
				t.Fatalf("Delete(expired) = %v", err)
			}
			wantVisible(e, "after Delete", false)
		}},
	}
}

func (s suite) contextTests() []test {
	return []test{
		{"a canceled context fails every method and writes nothing", func(t *testing.T) {
			e := s.env(t)
			seeded := item("p", "a", "n", int64(1))
			e.put(seeded)
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			calls := map[string]func() error{
				"Get":      func() error { _, err := e.s.Get(ctx, seeded.Key()); return err },
				"BatchGet": func() error { _, err := e.s.BatchGet(ctx, []store.Key{seeded.Key()}); return err },
				"Query":    func() error { _, err := e.s.Query(ctx, store.Query{PK: "p"}); return err },
				"Put":      func() error { return e.s.Put(ctx, item("p", "b")) },
				"Update": func() error {
					_, err := e.s.Update(ctx, seeded.Key(), store.Update{Add: map[string]int64{"n": 1}})
					return err
				},
				"Delete":   func() error { return e.s.Delete(ctx, seeded.Key()) },
				"Transact": func() error { return e.s.Transact(ctx, []store.Op{store.PutOp(item("p", "c"))}) },
			}
			for name, call := range calls {
				wantErr(t, name+"(canceled)", call(), context.Canceled)
			}
			e.wantItem(seeded)
			e.wantAbsent(key("p", "b"))
			e.wantAbsent(key("p", "c"))
		}},
	}
}

// race starts n goroutines at once, each running f(i), and returns their
// errors in order.
func race(n int, f func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-gate
			errs[i] = f(i)
		})
	}
	close(gate)
	wg.Wait()
	return errs
}

// tally counts nil errors and checks that every other error is want.
func tally(t *testing.T, call string, errs []error, want error) (wins int) {
	t.Helper()
	for i, err := range errs {
		if err == nil {
			wins++
			continue
		}
		wantCondErr(t, fmt.Sprintf("%s #%d", call, i), err, want)
	}
	return wins
}

const racers = 32

func (s suite) concurrencyTests() []test {
	return []test{
		{fmt.Sprintf("one of %d conditional updates of one version wins", racers), func(t *testing.T) {
			e := s.env(t)
			e.put(item("p", "grant", "spent", false))
			errs := race(racers, func(i int) error {
				_, err := e.s.Update(t.Context(), key("p", "grant"),
					store.Update{Set: map[string]any{"spent": true, "by": int64(i)}}, store.VersionEquals(1))
				return err
			})
			if wins := tally(t, "Update(VersionEquals 1)", errs, store.ErrConflict); wins != 1 {
				t.Fatalf("%d of %d conditional updates won, want 1", wins, racers)
			}
			got := e.mustGet(key("p", "grant"))
			if winner := got.Int("by"); got.Version != 2 || errs[winner] != nil || !got.Bool("spent") {
				t.Fatalf("after the race: %+v, want Version 2 written by the winner", got)
			}
		}},
		{fmt.Sprintf("one of %d NotExists puts wins, the others get ErrExists", racers), func(t *testing.T) {
			e := s.env(t)
			errs := race(racers, func(i int) error {
				return e.s.Put(t.Context(), item("p", "once", "by", int64(i)), store.NotExists())
			})
			if wins := tally(t, "Put(NotExists)", errs, store.ErrExists); wins != 1 {
				t.Fatalf("%d of %d NotExists puts won, want 1", wins, racers)
			}
			if by := e.mustGet(key("p", "once")).Int("by"); errs[by] != nil {
				t.Fatalf("the stored item is put #%d, which failed: %v", by, errs[by])
			}
		}},
		{fmt.Sprintf("one of %d transactions on one version wins, and only its writes land", racers), func(t *testing.T) {
			e := s.env(t)
			e.put(item("p", "cap"))
			errs := race(racers, func(i int) error {
				return e.s.Transact(t.Context(), []store.Op{
					store.UpdateOp(key("p", "cap"), store.Update{Add: map[string]int64{"n": 1}}, store.VersionEquals(1)),
					store.PutOp(item("p", fmt.Sprintf("row%02d", i))),
				})
			})
			if wins := tally(t, "Transact", errs, store.ErrConflict); wins != 1 {
				t.Fatalf("%d of %d transactions won, want 1", wins, racers)
			}
			for i, err := range errs {
				_, gerr := e.s.Get(t.Context(), key("p", fmt.Sprintf("row%02d", i)))
				if (err == nil) != (gerr == nil) {
					t.Fatalf("transaction #%d = %v, but its row: %v", i, err, gerr)
				}
			}
			if n := e.mustGet(key("p", "cap")).Int("n"); n != 1 {
				t.Fatalf("counter after the race = %d, want 1", n)
			}
		}},
		{fmt.Sprintf("%d concurrent Adds of 1 sum to %d", racers, racers), func(t *testing.T) {
			e := s.env(t)
			var versions sync.Map
			errs := race(racers, func(int) error {
				it, err := e.s.Update(t.Context(), key("p", "counter"), store.Update{Add: map[string]int64{"n": 1}})
				if err == nil {
					if _, dup := versions.LoadOrStore(it.Version, true); dup {
						return fmt.Errorf("version %d returned twice", it.Version)
					}
				}
				return err
			})
			for i, err := range errs {
				if err != nil {
					t.Fatalf("Add #%d = %v", i, err)
				}
			}
			got := e.mustGet(key("p", "counter"))
			if got.Int("n") != racers || got.Version != racers {
				t.Fatalf("counter = %d at Version %d, want %d at Version %d", got.Int("n"), got.Version, racers, racers)
			}
		}},
		{"concurrent writes to distinct items all land", func(t *testing.T) {
			e := s.env(t)
			errs := race(2*racers, func(i int) error {
				return e.s.Put(t.Context(), item("p", fmt.Sprintf("%03d", i), "i", int64(i)))
			})
			for i, err := range errs {
				if err != nil {
					t.Fatalf("Put #%d = %v", i, err)
				}
			}
			if got := len(e.queryAll(store.Query{PK: "p", Limit: 7})); got != 2*racers {
				t.Fatalf("after %d concurrent puts the partition holds %d items", 2*racers, got)
			}
		}},
	}
}
