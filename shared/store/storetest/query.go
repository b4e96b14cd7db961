package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/custodymcp/custody/shared/store"
)

// tableSKs are the sort keys of partition "p" in the table query tests:
// prefixes of each other, punctuation below letters, upper case, a digit,
// "~" and a multi-byte letter (above every ASCII byte).
var tableSKs = []string{"b", "a", "ab", "a#1", "a#2", "abc", "b#", "c", "é", "~", "A", "0"}

// skConds are the sort-key conditions every query test runs, with the port's
// definition of what each keeps.
var skConds = []store.SortKeyCondition{
	{},
	{Prefix: "a"},
	{Prefix: "a#"},
	{Prefix: "é"},
	{Prefix: "zz"},
	{From: "a#2", To: "b"},
	{From: "ab"},
	{To: "a#1"},
	{From: "b", To: "b"},
	{From: "a0", To: "a1"},
	{From: "c", To: "b"}, // From above To keeps nothing
}

// keeps is the port's SortKeyCondition rule, literally.
func keeps(c store.SortKeyCondition, sk string) bool {
	if c.Prefix != "" {
		return strings.HasPrefix(sk, c.Prefix)
	}
	return (c.From == "" || sk >= c.From) && (c.To == "" || sk <= c.To)
}

func condName(c store.SortKeyCondition) string {
	switch {
	case c.Prefix != "":
		return fmt.Sprintf("prefix %q", c.Prefix)
	case c.From != "" || c.To != "":
		return fmt.Sprintf("range %q..%q", c.From, c.To)
	}
	return "no condition"
}

func (s suite) queryTests() []test {
	seed := func(e *env) {
		for _, sk := range tableSKs {
			e.put(item("p", sk, "sk", sk))
		}
		// Neighbouring partitions a careless key encoding would leak into p.
		for _, pk := range []string{"o", "p2", "p#", "pp", "P", "p\x01"} {
			e.put(item(pk, "a"), item(pk, "b"))
		}
		// Index entries named like p, which a table query must not read.
		e.put(indexed(item("x", "1"), "p", "a"), indexed(item("x", "2"), "p", "zz"))
	}
	tests := []test{
		{"returns the partition in sort-key order and nothing else", func(t *testing.T) {
			e := s.env(t)
			seed(e)
			want := sorted(tableSKs)
			if got := sks(e.queryAll(store.Query{PK: "p"})); !slices.Equal(got, want) {
				t.Fatalf("Query(p) = %q, want %q", got, want)
			}
			if got := sks(e.queryAll(store.Query{PK: "p", Descending: true})); !slices.Equal(got, reversed(want)) {
				t.Fatalf("Query(p, descending) = %q, want %q", got, reversed(want))
			}
		}},
		{"returns whole items", func(t *testing.T) {
			e := s.env(t)
			it := store.Item{PK: "p", SK: "a", GSI1PK: "g", GSI1SK: "s", Version: 4, ExpiresAt: e.unix() + 99,
				Attrs: map[string]any{"s": "x", "n": int64(-2), "b": false, "y": []byte{7}}}
			e.put(it)
			got := e.page(store.Query{PK: "p"}).Items
			if len(got) != 1 {
				t.Fatalf("Query(p) = %d items, want 1", len(got))
			}
			if d := diffItem(it, got[0]); d != "" {
				t.Fatalf("Query(p) item mismatch (-want +got):\n%s", d)
			}
		}},
		{"an empty partition returns no items and no token", func(t *testing.T) {
			e := s.env(t)
			seed(e)
			for _, q := range []store.Query{{PK: "nobody"}, {PK: "nobody", Descending: true}, {PK: "p", SK: store.SortKeyCondition{Prefix: "zz"}, Limit: 1}} {
				if p := e.page(q); len(p.Items) != 0 || p.NextToken != "" {
					t.Fatalf("Query(%+v) = %d items, token %q; want none", q, len(p.Items), p.NextToken)
				}
			}
		}},
		{"a zero limit returns MaxQueryLimit items", func(t *testing.T) {
			e := s.env(t)
			n := store.MaxQueryLimit + 1
			var ops []store.Op
			for i := range n {
				ops = append(ops, store.PutOp(item("p", fmt.Sprintf("%05d", i))))
				if len(ops) == store.MaxTransactItems || i == n-1 {
					if err := e.s.Transact(t.Context(), ops); err != nil {
						t.Fatalf("Transact = %v", err)
					}
					ops = nil
				}
			}
			first := e.page(store.Query{PK: "p"})
			if len(first.Items) != store.MaxQueryLimit || first.NextToken == "" {
				t.Fatalf("Query(p, limit 0) = %d items, token %q; want %d and a token", len(first.Items), first.NextToken, store.MaxQueryLimit)
			}
			second := e.page(store.Query{PK: "p", PageToken: first.NextToken})
			if len(second.Items) != 1 || second.Items[0].SK != fmt.Sprintf("%05d", n-1) || second.NextToken != "" {
				t.Fatalf("second page = %q, token %q; want [%05d] and no token", sks(second.Items), second.NextToken, n-1)
			}
		}},
		{"an exactly full last page has no NextToken", func(t *testing.T) {
			e := s.env(t)
			for _, sk := range []string{"a", "b", "c", "d", "e", "f"} {
				e.put(item("p", sk))
			}
			for _, desc := range []bool{false, true} {
				wantPages(t, e, store.Query{PK: "p", Limit: 3, Descending: desc}, 3, 3)
				wantPages(t, e, store.Query{PK: "p", Limit: 6, Descending: desc}, 6)
				wantPages(t, e, store.Query{PK: "p", Limit: 7, Descending: desc}, 6)
				wantPages(t, e, store.Query{PK: "p", Limit: 2, Descending: desc, SK: store.SortKeyCondition{Prefix: ""}}, 2, 2, 2)
				wantPages(t, e, store.Query{PK: "p", Limit: 2, Descending: desc, SK: store.SortKeyCondition{From: "b", To: "e"}}, 2, 2)
			}
		}},
		{"expired items inside pages are skipped and pages stay exact", func(t *testing.T) {
			e := s.env(t)
			s.seedExpiring(e, func(sk string) store.Item { return item("p", sk) })
			q := store.Query{PK: "p", Limit: 2}
			wantPageSKs(t, e, q, [][]string{{"s01", "s04"}, {"s06", "s07"}, {"s09"}})
			q.Descending = true
			wantPageSKs(t, e, q, [][]string{{"s09", "s07"}, {"s06", "s04"}, {"s01"}})
		}},
		{"expired items at either end do not cause an extra token", func(t *testing.T) {
			e := s.env(t)
			s.seedExpiringEnds(e, func(sk string) store.Item { return item("p", sk) })
			q := store.Query{PK: "p", Limit: 2}
			wantPageSKs(t, e, q, [][]string{{"a", "b"}, {"c", "d"}})
			q.Descending = true
			wantPageSKs(t, e, q, [][]string{{"d", "c"}, {"b", "a"}})
			q.Limit = 4
			wantPageSKs(t, e, q, [][]string{{"d", "c", "b", "a"}})
		}},
		{"a page token outlives the deletion of the last returned item", func(t *testing.T) {
			e := s.env(t)
			for _, sk := range []string{"a", "b", "c", "d", "e"} {
				e.put(item("p", sk))
			}
			for _, desc := range []bool{false, true} {
				q := store.Query{PK: "p", Limit: 2, Descending: desc}
				p1 := e.page(q)
				last := p1.Items[len(p1.Items)-1]
				if err := e.s.Delete(t.Context(), last.Key()); err != nil {
					t.Fatalf("Delete = %v", err)
				}
				q.PageToken = p1.NextToken
				want := []string{"c", "d"}
				if desc {
					want = []string{"c", "b"}
				}
				if got := sks(e.page(q).Items); !slices.Equal(got, want) {
					t.Fatalf("page after deleting %s (descending %v) = %q, want %q", last.SK, desc, got, want)
				}
				e.put(last)
			}
		}},
	}
	for _, c := range skConds {
		tests = append(tests, test{"with " + condName(c) + " pages of every size collect each item once in order", func(t *testing.T) {
			e := s.env(t)
			seed(e)
			var want []string
			for _, sk := range sorted(tableSKs) {
				if keeps(c, sk) {
					want = append(want, sk)
				}
			}
			for _, desc := range []bool{false, true} {
				w := want
				if desc {
					w = reversed(want)
				}
				for _, limit := range []int{0, 1, 2, 3, len(want), len(want) + 1} {
					q := store.Query{PK: "p", SK: c, Descending: desc, Limit: limit}
					if got := sks(e.queryAll(q)); !slices.Equal(got, w) {
						t.Fatalf("Query(%s, descending %v, limit %d) = %q, want %q", condName(c), desc, limit, got, w)
					}
				}
			}
		}})
	}
	return tests
}

// seedExpiring writes s01…s09 made by mk and expires s02, s03, s05 and s08.
func (s suite) seedExpiring(e *env, mk func(sk string) store.Item) {
	for i := 1; i <= 9; i++ {
		it := mk(fmt.Sprintf("s%02d", i))
		if i == 2 || i == 3 || i == 5 || i == 8 {
			it.ExpiresAt = e.unix() + 10
		}
		e.put(it)
	}
	e.clk.advance(10e9)
}

// seedExpiringEnds writes live a, b, c, d made by mk between expired items
// 0, 1 (below) and e, f (above).
func (s suite) seedExpiringEnds(e *env, mk func(sk string) store.Item) {
	for _, sk := range []string{"0", "1", "a", "b", "c", "d", "e", "f"} {
		it := mk(sk)
		if sk < "a" || sk > "d" {
			it.ExpiresAt = e.unix() + 10
		}
		e.put(it)
	}
	e.clk.advance(10e9)
}

// wantPages walks q page by page and checks every page's size; only the
// last may (and must) lack a NextToken.
func wantPages(t *testing.T, e *env, q store.Query, sizes ...int) {
	t.Helper()
	for i, n := range sizes {
		p := e.page(q)
		last := i == len(sizes)-1
		if len(p.Items) != n || (p.NextToken == "") != last {
			t.Fatalf("Query(%s, limit %d, descending %v) page %d = %d items, token %q; want %d items, a token: %v",
				condName(q.SK), q.Limit, q.Descending, i+1, len(p.Items), p.NextToken, n, !last)
		}
		q.PageToken = p.NextToken
	}
}

// wantPageSKs walks q page by page and checks every page's sort keys (table
// SKs; for the index, the table SKs of the entries).
func wantPageSKs(t *testing.T, e *env, q store.Query, pages [][]string) {
	t.Helper()
	for i, want := range pages {
		p := e.page(q)
		last := i == len(pages)-1
		if got := sks(p.Items); !slices.Equal(got, want) || (p.NextToken == "") != last {
			t.Fatalf("Query(%s %s, limit %d, descending %v) page %d = %q, token %q; want %q, a token: %v",
				q.Index, q.PK, q.Limit, q.Descending, i+1, got, p.NextToken, want, !last)
		}
		q.PageToken = p.NextToken
	}
}
