// Package storetest is the conformance suite of the storage port (package
// store): Run proves that an engine keeps every promise the port writes down,
// so the DynamoDB engine and the file engine behave the same
// (docs/architecture.md "Ports and engines"). Each engine's tests call Run with a
// factory for fresh, empty stores.
//
// The suite tests only what the port promises, never an engine's internals,
// and has no engine-specific skips: an engine that cannot do something fails.
// Every leaf test gets a fresh store and its own clock, which the suite moves
// to expire items (no sleeps). Leaf tests run in parallel.
//
// Where the port's prose leaves room, the suite pins one reading so both
// engines agree:
//   - a []byte attribute reads back non-nil; a nil []byte reads back as
//     []byte{} (DynamoDB keeps an empty B in a non-key attribute);
//   - an Update naming one attribute in two of Set, Add and Remove, or twice
//     in Remove, and an Add to an attribute that is not an int64, are
//     store.ErrInvalid (DynamoDB refuses both expressions);
//   - an Update setting index keys is held to the item rules (both set or
//     both "", no NUL): store.ErrInvalid otherwise;
//   - a sort-key range whose From is above To keeps nothing: an empty page,
//     as the port's "From <= s <= To" says (DynamoDB refuses such a BETWEEN,
//     so its engine answers without asking);
//   - BatchGet refuses duplicate keys (store.ErrInvalid, as DynamoDB does)
//     and answers an empty key list with an empty result.
//
// The package also holds Faulty, a fault-injecting decorator over a real
// engine for failure tests (docs/decisions.md "Pipeline choices").
package storetest

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodymcp/custody/shared/store"
)

// Run runs the conformance suite. newStore returns a fresh, empty store
// whose engine clock is now (the suite's clock) and registers the store's
// cleanup on t; it is called once per leaf test, from parallel tests.
func Run(t *testing.T, newStore func(t *testing.T, now func() time.Time) store.Store) {
	s := suite{newStore: newStore}
	groups := []struct {
		name  string
		tests []test
	}{
		{"Get", s.getTests()},
		{"Attributes", s.attributeTests()},
		{"Put", s.putTests()},
		{"Conditions", s.conditionTests()},
		{"Update", s.updateTests()},
		{"Delete", s.deleteTests()},
		{"BatchGet", s.batchGetTests()},
		{"Invalid", s.invalidTests()},
		{"Size", s.sizeTests()},
		{"Transact", s.transactTests()},
		{"Query", s.queryTests()},
		{"Index", s.indexTests()},
		{"Expiry", s.expiryTests()},
		{"Context", s.contextTests()},
		{"Concurrency", s.concurrencyTests()},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.fn(t)
				})
			}
		})
	}
}

// test is one leaf of the suite. Its name states the expectation.
type test struct {
	name string
	fn   func(t *testing.T)
}

type suite struct {
	newStore func(t *testing.T, now func() time.Time) store.Store
}

// start is the suite clock's first reading: a whole second, so Unix()
// arithmetic in tests is exact.
var start = time.Unix(1_800_000_000, 0).UTC()

// clock is the engine clock a test controls.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is one fresh store with its clock.
type env struct {
	t   *testing.T
	s   store.Store
	clk *clock
}

func (s suite) env(t *testing.T) *env {
	t.Helper()
	clk := &clock{now: start}
	st := s.newStore(t, clk.Now)
	if st == nil {
		t.Fatal("newStore returned nil")
	}
	return &env{t: t, s: st, clk: clk}
}

// unix is the engine clock in epoch seconds.
func (e *env) unix() int64 { return e.clk.Now().Unix() }

func (e *env) put(items ...store.Item) {
	e.t.Helper()
	for _, it := range items {
		if err := e.s.Put(e.t.Context(), it); err != nil {
			e.t.Fatalf("Put(%s) = %v, want nil", it.Key(), err)
		}
	}
}

func (e *env) mustGet(k store.Key) store.Item {
	e.t.Helper()
	it, err := e.s.Get(e.t.Context(), k)
	if err != nil {
		e.t.Fatalf("Get(%s) = %v, want the item", k, err)
	}
	return it
}

func (e *env) wantAbsent(k store.Key) {
	e.t.Helper()
	if it, err := e.s.Get(e.t.Context(), k); !errors.Is(err, store.ErrNotFound) {
		e.t.Fatalf("Get(%s) = %+v, %v; want ErrNotFound", k, it, err)
	}
}

// wantItem checks that the live item at want's key equals want.
func (e *env) wantItem(want store.Item) {
	e.t.Helper()
	got := e.mustGet(want.Key())
	if d := diffItem(want, got); d != "" {
		e.t.Fatalf("Get(%s) mismatch (-want +got):\n%s", want.Key(), d)
	}
}

// page runs one query, failing the test on error.
func (e *env) page(q store.Query) store.Page {
	e.t.Helper()
	p, err := e.s.Query(e.t.Context(), q)
	if err != nil {
		e.t.Fatalf("Query(%+v) = %v, want a page", q, err)
	}
	return p
}

// queryAll follows NextToken to the end and returns every item in order. It
// checks that each page holds at most the limit, that a page with a token is
// full (the port filters expired items before the limit counts) and that
// the walk ends.
func (e *env) queryAll(q store.Query) []store.Item {
	e.t.Helper()
	limit := q.Limit
	if limit == 0 {
		limit = store.MaxQueryLimit
	}
	var all []store.Item
	for range 10_000 {
		p := e.page(q)
		if len(p.Items) > limit {
			e.t.Fatalf("Query(%+v) returned %d items, over the limit %d", q, len(p.Items), limit)
		}
		all = append(all, p.Items...)
		if p.NextToken == "" {
			return all
		}
		if len(p.Items) != limit {
			e.t.Fatalf("Query(%+v) returned %d items and a NextToken, want a full page of %d", q, len(p.Items), limit)
		}
		q.PageToken = p.NextToken
	}
	e.t.Fatalf("Query(%+v) did not end after 10000 pages", q)
	return nil
}

// item is a shorthand for an item with a Version of 1 and optional
// attributes given as name, value pairs.
func item(pk, sk string, attrs ...any) store.Item {
	it := store.Item{PK: pk, SK: sk, Version: 1}
	if len(attrs) > 0 {
		it.Attrs = map[string]any{}
		for i := 0; i+1 < len(attrs); i += 2 {
			it.Attrs[attrs[i].(string)] = attrs[i+1]
		}
	}
	return it
}

// indexed returns it placed in GSI1.
func indexed(it store.Item, gsi1pk, gsi1sk string) store.Item {
	it.GSI1PK, it.GSI1SK = gsi1pk, gsi1sk
	return it
}

// expiring returns it with ExpiresAt set.
func expiring(it store.Item, at int64) store.Item {
	it.ExpiresAt = at
	return it
}

func key(pk, sk string) store.Key { return store.Key{PK: pk, SK: sk} }

// diffItem compares items, treating nil and empty Attrs (and []byte) alike;
// the attribute test pins []byte nil-ness on its own.
func diffItem(want, got store.Item) string {
	return cmp.Diff(want, got, cmpopts.EquateEmpty())
}

// sks lists the items' sort keys (GSI1 tests list "SK" of the table key).
func sks(items []store.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.SK
	}
	return out
}

// sorted returns a sorted copy of ss (byte order, the port's order).
func sorted(ss []string) []string {
	out := append([]string(nil), ss...)
	sort.Strings(out)
	return out
}

// reversed returns a reversed copy of ss.
func reversed[T any](ss []T) []T {
	out := make([]T, len(ss))
	for i, s := range ss {
		out[len(ss)-1-i] = s
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// wantErr checks errors.Is(err, want); want nil means success.
func wantErr(t *testing.T, call string, err, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("%s = %v, want nil", call, err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("%s = %v, want %v", call, err, want)
	}
}

// wantCondErr checks that err is exactly one of the port's condition
// sentinels: want, and not the other (ErrExists and ErrConflict exclude each
// other).
func wantCondErr(t *testing.T, call string, err, want error) {
	t.Helper()
	wantErr(t, call, err, want)
	if want == nil {
		return
	}
	for _, other := range []error{store.ErrExists, store.ErrConflict, store.ErrNotFound, store.ErrInvalid} {
		if other != want && errors.Is(err, other) {
			t.Fatalf("%s = %v, want %v and not %v", call, err, want, other)
		}
	}
}

func fmtKeys(keys []store.Key) string {
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += k.String()
	}
	return fmt.Sprintf("[%s]", s)
}
