package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/store"
)

// invalidWrite is a write the port refuses with ErrInvalid. Every case
// writes under partition "p" only, so "nothing written" is an empty "p".
type invalidWrite struct {
	name string
	do   func(e *env) error
}

func invalidWrites() []invalidWrite {
	var cases []invalidWrite
	putCase := func(name string, it store.Item, conds ...store.Condition) {
		cases = append(cases, invalidWrite{"Put " + name, func(e *env) error { return e.s.Put(e.t.Context(), it, conds...) }})
	}
	updateCase := func(name string, k store.Key, u store.Update, conds ...store.Condition) {
		cases = append(cases, invalidWrite{"Update " + name, func(e *env) error {
			_, err := e.s.Update(e.t.Context(), k, u, conds...)
			return err
		}})
	}
	txCase := func(name string, ops []store.Op) {
		cases = append(cases, invalidWrite{"Transact " + name, func(e *env) error { return e.s.Transact(e.t.Context(), ops) }})
	}

	for _, k := range invalidKeys {
		putCase("with key "+k.String(), item(k.PK, k.SK))
		updateCase("with key "+k.String(), k, store.Update{Set: map[string]any{"x": "y"}})
		cases = append(cases, invalidWrite{"Delete with key " + k.String(), func(e *env) error { return e.s.Delete(e.t.Context(), k) }})
		txCase("CheckOp with key "+k.String(), []store.Op{store.PutOp(item("p", "a")), store.CheckOp(k, store.Exists())})
	}
	for name := range store.ReservedAttr {
		putCase("with reserved attribute "+name, item("p", "a", name, "x"))
		updateCase("setting reserved attribute "+name, key("p", "a"), store.Update{Set: map[string]any{name: "x"}})
		updateCase("adding to reserved attribute "+name, key("p", "a"), store.Update{Add: map[string]int64{name: 1}})
		updateCase("removing reserved attribute "+name, key("p", "a"), store.Update{Remove: []string{name}})
		putCase("with AttrEquals on reserved attribute "+name, item("p", "a"), store.AttrEquals(name, "x"))
		cases = append(cases, invalidWrite{"Delete with AttrEquals on reserved attribute " + name, func(e *env) error {
			return e.s.Delete(e.t.Context(), key("p", "a"), store.AttrEquals(name, "x"))
		}})
	}
	for name, v := range map[string]any{
		"int": 1, "int32": int32(1), "uint64": uint64(1), "float64": 1.5, "nil": nil,
		"[]string": []string{"a"}, "map": map[string]any{}, "time.Time": time.Unix(0, 0), "*string": ptr("x"),
	} {
		putCase("with an attribute of type "+name, item("p", "a", "x", v))
		updateCase("setting an attribute of type "+name, key("p", "a"), store.Update{Set: map[string]any{"x": v}})
	}
	putCase("with an empty attribute name", item("p", "a", "", "x"))
	putCase("with a string that is not UTF-8", item("p", "a", "x", "\xff"))
	putCase("with GSI1PK alone", indexed(item("p", "a"), "g", ""))
	putCase("with GSI1SK alone", indexed(item("p", "a"), "", "s"))
	putCase("with NUL in GSI1PK", indexed(item("p", "a"), "g\x00", "s"))
	putCase("with NUL in GSI1SK", indexed(item("p", "a"), "g", "s\x00"))
	putCase("with a negative ExpiresAt", expiring(item("p", "a"), -1))
	putCase("with an unknown condition kind", item("p", "a"), store.Condition{Kind: 99})
	putCase("with AttrBelow on a reserved attribute", item("p", "a"), store.AttrBelow("version", 3))
	putCase("with AttrBelow of a string bound", item("p", "a"), store.Condition{Kind: store.CondAttrBelow, Attr: "n", Value: "3"})
	putCase("with a zero condition", item("p", "a"), store.Condition{})
	putCase("with AttrEquals on []byte", item("p", "a"), store.AttrEquals("x", []byte("y")))
	putCase("with AttrEquals on int", item("p", "a"), store.AttrEquals("x", 1))
	putCase("with AttrEquals without a name", item("p", "a"), store.AttrEquals("", "y"))
	putCase("with AttrEquals on a string that is not UTF-8", item("p", "a"), store.AttrEquals("x", "\xff"))
	putCase("with AttrEquals on the reserved name version", item("p", "a"), store.AttrEquals("version", int64(1)))
	putCase("with AttrEquals on the reserved name PK", item("p", "a"), store.AttrEquals("PK", "p"))

	updateCase("setting GSI1PK without GSI1SK", key("p", "a"), store.Update{GSI1PK: ptr("g")})
	updateCase("setting GSI1PK to a value and GSI1SK to empty", key("p", "a"), store.Update{GSI1PK: ptr("g"), GSI1SK: ptr("")})
	updateCase("setting GSI1SK with NUL", key("p", "a"), store.Update{GSI1PK: ptr("g"), GSI1SK: ptr("s\x00")})
	updateCase("setting a negative ExpiresAt", key("p", "a"), store.Update{ExpiresAt: ptr(int64(-1))})
	updateCase("with an unknown condition kind", key("p", "a"), store.Update{}, store.Condition{Kind: 99})

	cases = append(cases, invalidWrite{"Delete with an unknown condition kind", func(e *env) error {
		return e.s.Delete(e.t.Context(), key("p", "a"), store.Condition{Kind: 99})
	}})

	many := make([]store.Op, store.MaxTransactItems+1)
	for i := range many {
		many[i] = store.PutOp(item("p", strings.Repeat("x", i+1)))
	}
	txCase("of no operations", nil)
	txCase("of MaxTransactItems+1 operations", many)
	txCase("with two operations on one item", []store.Op{store.PutOp(item("p", "a")), store.PutOp(item("p", "b")), store.DeleteOp(key("p", "a"))})
	txCase("with a CheckOp without conditions", []store.Op{store.PutOp(item("p", "a")), store.CheckOp(key("p", "b"))})
	txCase("with an unknown operation kind", []store.Op{store.PutOp(item("p", "a")), {Kind: 99, Key: key("p", "b")}})
	txCase("with an invalid item in its last operation", []store.Op{store.PutOp(item("p", "a")), store.PutOp(item("p", "b", "version", int64(1)))})
	txCase("with an invalid update", []store.Op{store.PutOp(item("p", "a")), store.UpdateOp(key("p", "b"), store.Update{Set: map[string]any{"x": 1.5}})})
	txCase("with an invalid condition", []store.Op{store.PutOp(item("p", "a")), store.DeleteOp(key("p", "b"), store.Condition{Kind: 99})})
	return cases
}

// invalidQueries are queries the port refuses with ErrInvalid.
var invalidQueries = map[string]store.Query{
	"without a partition":     {},
	"with NUL in PK":          {PK: "p\x00"},
	"with a PK not UTF-8":     {PK: "p\xff"},
	"with PK over MaxPKBytes": {PK: strings.Repeat("p", store.MaxPKBytes+1)},
	"with a prefix not UTF-8": {PK: "p", SK: store.SortKeyCondition{Prefix: "\xff"}},
	"with NUL in From":        {PK: "p", SK: store.SortKeyCondition{From: "a\x00"}},
	"with a To not UTF-8":     {PK: "p", SK: store.SortKeyCondition{To: "\xff"}},
	"of an unknown index":     {Index: "GSI2", PK: "p"},
	"with prefix and From":    {PK: "p", SK: store.SortKeyCondition{Prefix: "a", From: "a"}},
	"with prefix and To":      {PK: "p", SK: store.SortKeyCondition{Prefix: "a", To: "b"}},
	"with a negative limit":   {PK: "p", Limit: -1},
	"over MaxQueryLimit":      {PK: "p", Limit: store.MaxQueryLimit + 1},
	"with a garbage token":    {PK: "p", PageToken: "%%% not a token %%%"},
	"with a truncated token":  {PK: "p", PageToken: "eA"},
}

func (s suite) invalidTests() []test {
	var tests []test
	for _, c := range invalidWrites() {
		tests = append(tests, test{c.name + " is ErrInvalid and writes nothing", func(t *testing.T) {
			e := s.env(t)
			wantErr(t, c.name, c.do(e), store.ErrInvalid)
			if got := e.queryAll(store.Query{PK: "p"}); len(got) != 0 {
				t.Fatalf("after a refused write, partition p holds %v, want nothing", sks(got))
			}
		}})
	}
	for name, q := range invalidQueries {
		tests = append(tests, test{"Query " + name + " is ErrInvalid", func(t *testing.T) {
			e := s.env(t)
			e.put(item("p", "a"))
			_, err := e.s.Query(t.Context(), q)
			wantErr(t, "Query "+name, err, store.ErrInvalid)
		}})
	}
	tests = append(tests, test{"Query with a token of another query is ErrInvalid", func(t *testing.T) {
		e := s.env(t)
		for _, sk := range []string{"a1", "a2", "a3", "b1", "b2"} {
			e.put(indexed(item("p", sk), "p", sk), indexed(item("q", sk), "q", sk))
		}
		base := store.Query{PK: "p", Limit: 1}
		tok := e.page(base).NextToken
		if tok == "" {
			t.Fatal("first page of 1 of 5 items has no NextToken")
		}
		others := map[string]store.Query{
			"another partition":   {PK: "q"},
			"descending":          {PK: "p", Descending: true},
			"the index":           {Index: store.IndexGSI1, PK: "p"},
			"a prefix":            {PK: "p", SK: store.SortKeyCondition{Prefix: "a"}},
			"a range":             {PK: "p", SK: store.SortKeyCondition{From: "a1", To: "b2"}},
			"a range from only":   {PK: "p", SK: store.SortKeyCondition{From: "a1"}},
			"an index descending": {Index: store.IndexGSI1, PK: "p", Descending: true},
		}
		for name, q := range others {
			q.PageToken, q.Limit = tok, 1
			_, err := e.s.Query(t.Context(), q)
			wantErr(t, "Query("+name+", token of the table ascending)", err, store.ErrInvalid)
		}
		// The same query with another limit continues.
		q := base
		q.PageToken, q.Limit = tok, 10
		if got := sks(e.page(q).Items); len(got) != 4 || got[0] != "a2" {
			t.Fatalf("Query(same query, limit 10, token) = %v, want [a2 a3 b1 b2]", got)
		}
	}})
	tests = append(tests, test{"keys at the length limits are stored; a byte more is ErrInvalid", func(t *testing.T) {
		e := s.env(t)
		long := func(n int) string { return strings.Repeat("k", n) }
		for _, it := range []store.Item{
			{PK: long(store.MaxPKBytes), SK: long(store.MaxSKBytes), Version: 1},
			{PK: "p", SK: "a", GSI1PK: long(store.MaxPKBytes), GSI1SK: long(store.MaxSKBytes), Version: 1},
		} {
			if err := e.s.Put(t.Context(), it); err != nil {
				t.Errorf("Put(keys of %d/%d/%d/%d bytes) = %v, want nil", len(it.PK), len(it.SK), len(it.GSI1PK), len(it.GSI1SK), err)
			}
		}
		for _, it := range []store.Item{
			{PK: long(store.MaxPKBytes + 1), SK: "a"},
			{PK: "p", SK: long(store.MaxSKBytes + 1)},
			{PK: "p", SK: "b", GSI1PK: long(store.MaxPKBytes + 1), GSI1SK: "s"},
			{PK: "p", SK: "b", GSI1PK: "g", GSI1SK: long(store.MaxSKBytes + 1)},
		} {
			wantErr(t, fmt.Sprintf("Put(keys of %d/%d/%d/%d bytes)", len(it.PK), len(it.SK), len(it.GSI1PK), len(it.GSI1SK)), e.s.Put(t.Context(), it), store.ErrInvalid)
		}
		_, err := e.s.Update(t.Context(), key("p", "a"), store.Update{GSI1PK: ptr("g"), GSI1SK: ptr(long(store.MaxSKBytes + 1))})
		wantErr(t, "Update(GSI1SK one byte over)", err, store.ErrInvalid)
	}})
	return tests
}

func (s suite) sizeTests() []test {
	// fill returns an item whose store.ItemSize is exactly n, padded by one
	// attribute made by pad.
	fill := func(n int, pad func(int) any) store.Item {
		it := store.Item{PK: "p", SK: "big", GSI1PK: "g", GSI1SK: "s", Version: 1, ExpiresAt: 0,
			Attrs: map[string]any{"n": int64(12345), "flag": true, "pad": pad(0)}}
		it.Attrs["pad"] = pad(n - store.ItemSize(it))
		return it
	}
	bytesPad := func(n int) any { return make([]byte, n) }
	stringPad := func(n int) any { return strings.Repeat("é", n/2) + strings.Repeat("x", n%2) }

	var tests []test
	for name, pad := range map[string]func(int) any{"[]byte": bytesPad, "string": stringPad} {
		tests = append(tests,
			test{"an item of exactly MaxItemBytes padded by " + name + " is stored", func(t *testing.T) {
				e := s.env(t)
				it := fill(store.MaxItemBytes, pad)
				if n := store.ItemSize(it); n != store.MaxItemBytes {
					t.Fatalf("test item size %d, want %d", n, store.MaxItemBytes)
				}
				e.put(it)
				e.wantItem(it)
			}},
			test{"an item of MaxItemBytes+1 padded by " + name + " is ErrTooLarge and not stored", func(t *testing.T) {
				e := s.env(t)
				it := fill(store.MaxItemBytes+1, pad)
				wantErr(t, "Put(MaxItemBytes+1)", e.s.Put(t.Context(), it), store.ErrTooLarge)
				wantErr(t, "Transact(Put MaxItemBytes+1)", e.s.Transact(t.Context(), []store.Op{
					store.PutOp(item("p", "a")), store.PutOp(it),
				}), store.ErrTooLarge)
				e.wantAbsent(it.Key())
				e.wantAbsent(key("p", "a"))
			}},
		)
	}
	tests = append(tests, test{"an update whose attributes alone exceed MaxItemBytes is ErrTooLarge", func(t *testing.T) {
		e := s.env(t)
		before := item("p", "a", "x", "small")
		e.put(before)
		u := store.Update{Set: map[string]any{"pad": make([]byte, store.MaxItemBytes)}}
		_, err := e.s.Update(t.Context(), before.Key(), u)
		wantErr(t, "Update(Set MaxItemBytes)", err, store.ErrTooLarge)
		err = e.s.Transact(t.Context(), []store.Op{store.PutOp(item("p", "b")), store.UpdateOp(before.Key(), u)})
		wantErr(t, "Transact(Update Set MaxItemBytes)", err, store.ErrTooLarge)
		e.wantItem(before)
		e.wantAbsent(key("p", "b"))
	}})
	return tests
}
