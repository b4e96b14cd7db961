package storetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/custodymcp/custody/shared/store"
)

// indexEntry is one item of the index tests: its table key and GSI1SK.
type indexEntry struct{ pk, sk, gsi1sk string }

// indexEntries live in index partition "g". Several share a GSI1SK, so the
// table-key order of equal index sort keys shows (including "p1" before
// "p10" before "p2").
var indexEntries = []indexEntry{
	{"p2", "a", "s1"}, {"p1", "z", "s1"}, {"p1", "b", "s1"}, {"p10", "a", "s1"},
	{"p1", "c", "a"}, {"p3", "a", "a#1"}, {"p3", "b", "ab"}, {"p3", "c", "abc"},
	{"p1", "d", "b"}, {"p2", "b", "b"}, {"p2", "c", "é"}, {"p2", "d", "~"},
}

// indexOrder returns the entries kept by c in index order: GSI1SK, then PK,
// then SK, as "PK/SK" strings.
func indexOrder(entries []indexEntry, c store.SortKeyCondition) []string {
	kept := slices.Clone(entries)
	kept = slices.DeleteFunc(kept, func(x indexEntry) bool { return !keeps(c, x.gsi1sk) })
	slices.SortFunc(kept, func(a, b indexEntry) int {
		if d := strings.Compare(a.gsi1sk, b.gsi1sk); d != 0 {
			return d
		}
		if d := strings.Compare(a.pk, b.pk); d != 0 {
			return d
		}
		return strings.Compare(a.sk, b.sk)
	})
	out := make([]string, len(kept))
	for i, x := range kept {
		out[i] = x.pk + "/" + x.sk
	}
	return out
}

// ids lists the items' table keys as "PK/SK".
func ids(items []store.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.PK + "/" + it.SK
	}
	return out
}

func (s suite) indexTests() []test {
	seed := func(e *env) {
		for _, x := range indexEntries {
			e.put(indexed(item(x.pk, x.sk, "g", x.gsi1sk), "g", x.gsi1sk))
		}
		// Neighbours: other index partitions and items outside the index.
		e.put(
			indexed(item("p1", "other"), "g2", "s1"), indexed(item("p1", "other2"), "gg", "a"),
			indexed(item("p1", "other3"), "g#", "a"), item("g", "s1"), item("p1", "unindexed"),
		)
	}
	gsi := func(c store.SortKeyCondition, desc bool, limit int) store.Query {
		return store.Query{Index: store.IndexGSI1, PK: "g", SK: c, Descending: desc, Limit: limit}
	}
	tests := []test{
		{"holds exactly the items with both index keys, ordered by GSI1SK then table key", func(t *testing.T) {
			e := s.env(t)
			seed(e)
			want := indexOrder(indexEntries, store.SortKeyCondition{})
			if got := ids(e.queryAll(gsi(store.SortKeyCondition{}, false, 0))); !slices.Equal(got, want) {
				t.Fatalf("Query(GSI1 g) = %q, want %q", got, want)
			}
			if got := ids(e.queryAll(gsi(store.SortKeyCondition{}, true, 0))); !slices.Equal(got, reversed(want)) {
				t.Fatalf("Query(GSI1 g, descending) = %q, want %q", got, reversed(want))
			}
		}},
		{"returns whole items", func(t *testing.T) {
			e := s.env(t)
			it := store.Item{PK: "p", SK: "a", GSI1PK: "g", GSI1SK: "s", Version: 4, ExpiresAt: e.unix() + 99,
				Attrs: map[string]any{"s": "x", "n": int64(-2), "b": false, "y": []byte{7}}}
			e.put(it)
			got := e.page(gsi(store.SortKeyCondition{}, false, 0)).Items
			if len(got) != 1 {
				t.Fatalf("Query(GSI1 g) = %d items, want 1", len(got))
			}
			if d := diffItem(it, got[0]); d != "" {
				t.Fatalf("Query(GSI1 g) item mismatch (-want +got):\n%s", d)
			}
		}},
		{"follows puts, updates, index-key changes and deletes", func(t *testing.T) {
			e := s.env(t)
			q := gsi(store.SortKeyCondition{}, false, 0)
			want := func(step string, wantIDs ...string) {
				t.Helper()
				if got := ids(e.queryAll(q)); !slices.Equal(got, wantIDs) {
					t.Fatalf("%s: Query(GSI1 g) = %q, want %q", step, got, wantIDs)
				}
			}
			e.put(indexed(item("p", "a"), "g", "2"), indexed(item("p", "b"), "g", "1"))
			want("put", "p/b", "p/a")
			update := func(k store.Key, u store.Update) {
				t.Helper()
				if _, err := e.s.Update(t.Context(), k, u); err != nil {
					t.Fatalf("Update(%s) = %v", k, err)
				}
			}
			update(key("p", "a"), store.Update{GSI1PK: ptr("g"), GSI1SK: ptr("0")})
			want("GSI1SK changed", "p/a", "p/b")
			update(key("p", "a"), store.Update{Set: map[string]any{"x": "new"}})
			if got := e.page(q).Items[0]; got.String("x") != "new" {
				t.Fatalf("index entry after Update of an attribute = %+v, want x=new", got)
			}
			update(key("p", "a"), store.Update{GSI1PK: ptr("h"), GSI1SK: ptr("0")})
			want("GSI1PK changed", "p/b")
			if got := ids(e.queryAll(store.Query{Index: store.IndexGSI1, PK: "h"})); !slices.Equal(got, []string{"p/a"}) {
				t.Fatalf("Query(GSI1 h) = %q, want [p/a]", got)
			}
			update(key("p", "b"), store.Update{GSI1PK: ptr(""), GSI1SK: ptr("")})
			want("index keys removed")
			update(key("p", "c"), store.Update{GSI1PK: ptr("g"), GSI1SK: ptr("5")})
			want("created by Update", "p/c")
			e.put(item("p", "c"))
			want("Put without index keys")
			e.put(indexed(item("p", "c"), "g", "5"))
			want("Put with index keys", "p/c")
			if err := e.s.Delete(t.Context(), key("p", "c")); err != nil {
				t.Fatalf("Delete = %v", err)
			}
			want("deleted")
			err := e.s.Transact(t.Context(), []store.Op{
				store.PutOp(indexed(item("p", "d"), "g", "1")),
				store.UpdateOp(key("p", "b"), store.Update{GSI1PK: ptr("g"), GSI1SK: ptr("2")}),
			})
			if err != nil {
				t.Fatalf("Transact = %v", err)
			}
			want("transaction", "p/d", "p/b")
			err = e.s.Transact(t.Context(), []store.Op{
				store.DeleteOp(key("p", "d")),
				store.UpdateOp(key("p", "b"), store.Update{GSI1PK: ptr(""), GSI1SK: ptr("")}),
			})
			if err != nil {
				t.Fatalf("Transact = %v", err)
			}
			want("transaction removing")
		}},
		{"expired items inside pages are skipped and pages stay exact", func(t *testing.T) {
			e := s.env(t)
			mk := func(sk string) store.Item { return indexed(item("p", sk), "g", "x"+sk) }
			s.seedExpiring(e, mk)
			q := gsi(store.SortKeyCondition{}, false, 2)
			wantPageSKs(t, e, q, [][]string{{"s01", "s04"}, {"s06", "s07"}, {"s09"}})
			q.Descending = true
			wantPageSKs(t, e, q, [][]string{{"s09", "s07"}, {"s06", "s04"}, {"s01"}})
		}},
		{"expired items at either end do not cause an extra token", func(t *testing.T) {
			e := s.env(t)
			// All entries share one GSI1SK: the table key orders them.
			s.seedExpiringEnds(e, func(sk string) store.Item { return indexed(item("p", sk), "g", "same") })
			q := gsi(store.SortKeyCondition{}, false, 2)
			wantPageSKs(t, e, q, [][]string{{"a", "b"}, {"c", "d"}})
			q.Descending = true
			wantPageSKs(t, e, q, [][]string{{"d", "c"}, {"b", "a"}})
		}},
		{"an exactly full last page has no NextToken", func(t *testing.T) {
			e := s.env(t)
			seed(e)
			n := len(indexEntries) // 12
			for _, desc := range []bool{false, true} {
				wantPages(t, e, gsi(store.SortKeyCondition{}, desc, 3), 3, 3, 3, 3)
				wantPages(t, e, gsi(store.SortKeyCondition{}, desc, 4), 4, 4, 4)
				wantPages(t, e, gsi(store.SortKeyCondition{}, desc, n), n)
				wantPages(t, e, gsi(store.SortKeyCondition{Prefix: "s1"}, desc, 2), 2, 2)
			}
		}},
		{"an empty index partition returns no items and no token", func(t *testing.T) {
			e := s.env(t)
			seed(e)
			for _, q := range []store.Query{{Index: store.IndexGSI1, PK: "nobody"}, {Index: store.IndexGSI1, PK: "p1"}} {
				if p := e.page(q); len(p.Items) != 0 || p.NextToken != "" {
					t.Fatalf("Query(%+v) = %q, token %q; want nothing", q, ids(p.Items), p.NextToken)
				}
			}
		}},
	}
	for _, c := range skConds {
		tests = append(tests, test{"with " + condName(c) + " on GSI1SK pages of every size collect each entry once in order", func(t *testing.T) {
			e := s.env(t)
			seed(e)
			want := indexOrder(indexEntries, c)
			for _, desc := range []bool{false, true} {
				w := want
				if desc {
					w = reversed(want)
				}
				for _, limit := range []int{0, 1, 2, 3, len(want), len(want) + 1} {
					if got := ids(e.queryAll(gsi(c, desc, limit))); !slices.Equal(got, w) {
						t.Fatalf("Query(GSI1 g, %s, descending %v, limit %d) = %q, want %q", condName(c), desc, limit, got, w)
					}
				}
			}
		}})
	}
	return tests
}
