package storetest

import (
	"math"
	"testing"

	"github.com/custodymcp/custody/shared/store"
)

func (s suite) getTests() []test {
	return []test{
		{"absent key is ErrNotFound", func(t *testing.T) {
			e := s.env(t)
			e.put(item("p", "a"))
			e.wantAbsent(key("p", "b"))
			e.wantAbsent(key("q", "a"))
		}},
		{"returns the item as put", func(t *testing.T) {
			e := s.env(t)
			want := store.Item{
				PK: "T#1#M#7", SK: "DOC#0001",
				GSI1PK: "M#7", GSI1SK: "2026-01-01T00:00:00Z",
				Version: 42, ExpiresAt: e.unix() + 3600,
				Attrs: map[string]any{"title": "Lease", "pages": int64(12), "privileged": true, "sha": []byte{1, 2, 3}},
			}
			e.put(want)
			e.wantItem(want)
		}},
		{"invalid key is ErrInvalid", func(t *testing.T) {
			e := s.env(t)
			for _, k := range invalidKeys {
				_, err := e.s.Get(t.Context(), k)
				wantErr(t, "Get("+k.String()+")", err, store.ErrInvalid)
			}
		}},
	}
}

// invalidKeys break the port's key rules (store.ValidateKey).
var invalidKeys = []store.Key{
	{PK: "", SK: "a"},
	{PK: "p", SK: ""},
	{PK: "p\x00", SK: "a"},
	{PK: "p", SK: "a\x00b"},
	{PK: "p\xff", SK: "a"},
	{PK: "p", SK: "\xc3"},
}

func (s suite) attributeTests() []test {
	return []test{
		{"every type round-trips exactly through every read", func(t *testing.T) {
			e := s.env(t)
			attrs := map[string]any{
				"s.empty":          "",
				"s.text":           "héllo, wörld ✓ 𝄞",
				"s.nul":            "a\x00b",
				"i.zero":           int64(0),
				"i.neg":            int64(-1),
				"i.min":            int64(math.MinInt64),
				"i.max":            int64(math.MaxInt64),
				"b.true":           true,
				"b.false":          false,
				"y.empty":          []byte{},
				"y.binary":         []byte{0, 1, 0xfe, 0xff},
				"y.nil":            []byte(nil),
				"name with spaces": "ok",
				"ünïcode":          "ok",
				"#:.[]":            "ok",
			}
			want := store.Item{PK: "p", SK: "a", GSI1PK: "g", GSI1SK: "a", Version: 1, Attrs: attrs}
			e.put(want)
			want.Attrs = map[string]any{}
			for k, v := range attrs {
				want.Attrs[k] = v
			}
			want.Attrs["y.nil"] = []byte{} // a nil []byte reads back empty

			check := func(via string, got store.Item) {
				t.Helper()
				if d := diffItem(want, got); d != "" {
					t.Fatalf("%s mismatch (-want +got):\n%s", via, d)
				}
				for name, v := range want.Attrs {
					if _, isBytes := v.([]byte); !isBytes {
						continue
					}
					if b, ok := got.Attrs[name].([]byte); !ok || b == nil {
						t.Fatalf("%s: attribute %q = %#v, want a non-nil []byte", via, name, got.Attrs[name])
					}
				}
			}
			check("Get", e.mustGet(want.Key()))
			got, err := e.s.BatchGet(t.Context(), []store.Key{want.Key()})
			if err != nil || len(got) != 1 || got[0] == nil {
				t.Fatalf("BatchGet = %v, %v; want the item", got, err)
			}
			check("BatchGet", *got[0])
			for _, q := range []store.Query{{PK: "p"}, {Index: store.IndexGSI1, PK: "g"}} {
				p := e.page(q)
				if len(p.Items) != 1 {
					t.Fatalf("Query(%+v) = %d items, want 1", q, len(p.Items))
				}
				check("Query "+q.Index, p.Items[0])
			}
			updated, err := e.s.Update(t.Context(), want.Key(), store.Update{Set: map[string]any{"extra": "x"}})
			if err != nil {
				t.Fatalf("Update = %v", err)
			}
			want.Version, want.Attrs["extra"] = 2, "x"
			check("Update result", updated)
			check("Get after Update", e.mustGet(want.Key()))
		}},
		{"an item without attributes round-trips", func(t *testing.T) {
			e := s.env(t)
			want := store.Item{PK: "p", SK: "a", Version: 3}
			e.put(want)
			e.wantItem(want)
		}},
		{"read items do not alias the caller's values", func(t *testing.T) {
			e := s.env(t)
			b := []byte{1, 2, 3}
			it := item("p", "a", "b", b)
			e.put(it)
			b[0] = 9
			got := e.mustGet(it.Key())
			if g := got.Bytes("b"); len(g) != 3 || g[0] != 1 {
				t.Fatalf("Get after changing the put slice = %v, want [1 2 3]", g)
			}
		}},
	}
}

func (s suite) putTests() []test {
	return []test{
		{"replaces the whole item", func(t *testing.T) {
			e := s.env(t)
			first := store.Item{
				PK: "p", SK: "a", GSI1PK: "g", GSI1SK: "1", Version: 1, ExpiresAt: e.unix() + 60,
				Attrs: map[string]any{"x": "1", "y": int64(2)},
			}
			second := item("p", "a", "z", true)
			second.Version = 2
			e.put(first, second)
			e.wantItem(second)
			if p := e.page(store.Query{Index: store.IndexGSI1, PK: "g"}); len(p.Items) != 0 {
				t.Fatalf("index after a Put without index keys = %v, want empty", sks(p.Items))
			}
		}},
		{"stores Version as given", func(t *testing.T) {
			e := s.env(t)
			for _, v := range []int64{7, 0, -3} {
				it := item("p", "a")
				it.Version = v
				e.put(it)
				if got := e.mustGet(it.Key()).Version; got != v {
					t.Fatalf("Version after Put(Version %d) = %d", v, got)
				}
			}
		}},
		{"keeps items of other keys apart", func(t *testing.T) {
			e := s.env(t)
			// Keys whose joined forms could collide under a careless encoding.
			items := []store.Item{
				item("a", "bc", "n", int64(1)), item("ab", "c", "n", int64(2)),
				item("a#", "b", "n", int64(3)), item("a", "#b", "n", int64(4)),
			}
			e.put(items...)
			for _, it := range items {
				e.wantItem(it)
			}
		}},
	}
}

func (s suite) updateTests() []test {
	return []test{
		{"creates an absent item at Version 1, Add counting from 0", func(t *testing.T) {
			e := s.env(t)
			got, err := e.s.Update(t.Context(), key("p", "a"), store.Update{
				Set: map[string]any{"s": "x"}, Add: map[string]int64{"n": 5},
			})
			if err != nil {
				t.Fatalf("Update(absent) = %v", err)
			}
			want := item("p", "a", "s", "x", "n", int64(5))
			if d := diffItem(want, got); d != "" {
				t.Fatalf("Update(absent) mismatch (-want +got):\n%s", d)
			}
			e.wantItem(want)
		}},
		{"increments Version by one on every update", func(t *testing.T) {
			e := s.env(t)
			it := item("p", "a")
			it.Version = 7
			e.put(it)
			for want := int64(8); want <= 10; want++ {
				got, err := e.s.Update(t.Context(), it.Key(), store.Update{})
				if err != nil || got.Version != want {
					t.Fatalf("Update = Version %d, %v; want %d", got.Version, err, want)
				}
			}
			if got := e.mustGet(it.Key()).Version; got != 10 {
				t.Fatalf("Get after 3 updates: Version %d, want 10", got)
			}
		}},
		{"Set assigns, Add adds, Remove deletes, the rest is kept", func(t *testing.T) {
			e := s.env(t)
			e.put(item("p", "a", "s", "1", "n", int64(10), "keep", true, "gone", "x", "retype", "7"))
			got, err := e.s.Update(t.Context(), key("p", "a"), store.Update{
				Set:    map[string]any{"s": "2", "new": []byte{1}, "retype": int64(7)},
				Add:    map[string]int64{"n": -3, "m": 4},
				Remove: []string{"gone", "never-there"},
			})
			if err != nil {
				t.Fatalf("Update = %v", err)
			}
			want := item("p", "a", "s", "2", "n", int64(7), "m", int64(4), "keep", true, "new", []byte{1}, "retype", int64(7))
			want.Version = 2
			if d := diffItem(want, got); d != "" {
				t.Fatalf("Update mismatch (-want +got):\n%s", d)
			}
			e.wantItem(want)
		}},
		{"ExpiresAt: nil keeps, a value sets, zero clears", func(t *testing.T) {
			e := s.env(t)
			at := e.unix() + 100
			e.put(expiring(item("p", "a"), at))
			steps := []struct {
				u    store.Update
				want int64
			}{
				{store.Update{}, at},
				{store.Update{ExpiresAt: ptr(at + 50)}, at + 50},
				{store.Update{ExpiresAt: ptr(int64(0))}, 0},
				{store.Update{}, 0},
			}
			for i, st := range steps {
				got, err := e.s.Update(t.Context(), key("p", "a"), st.u)
				if err != nil || got.ExpiresAt != st.want {
					t.Fatalf("step %d: Update = ExpiresAt %d, %v; want %d", i, got.ExpiresAt, err, st.want)
				}
				if g := e.mustGet(key("p", "a")).ExpiresAt; g != st.want {
					t.Fatalf("step %d: Get = ExpiresAt %d, want %d", i, g, st.want)
				}
			}
		}},
		{"index keys: nil keeps, values set, empty strings remove", func(t *testing.T) {
			e := s.env(t)
			e.put(item("p", "a"))
			steps := []struct {
				u          store.Update
				pk, sk     string
				inG1, inG2 bool
			}{
				{store.Update{GSI1PK: ptr("g1"), GSI1SK: ptr("s")}, "g1", "s", true, false},
				{store.Update{Set: map[string]any{"x": "y"}}, "g1", "s", true, false},
				{store.Update{GSI1PK: ptr("g2"), GSI1SK: ptr("t")}, "g2", "t", false, true},
				{store.Update{GSI1PK: ptr(""), GSI1SK: ptr("")}, "", "", false, false},
			}
			for i, st := range steps {
				got, err := e.s.Update(t.Context(), key("p", "a"), st.u)
				if err != nil || got.GSI1PK != st.pk || got.GSI1SK != st.sk {
					t.Fatalf("step %d: Update = index keys %q/%q, %v; want %q/%q", i, got.GSI1PK, got.GSI1SK, err, st.pk, st.sk)
				}
				if g := e.mustGet(key("p", "a")); g.GSI1PK != st.pk || g.GSI1SK != st.sk {
					t.Fatalf("step %d: Get = index keys %q/%q, want %q/%q", i, g.GSI1PK, g.GSI1SK, st.pk, st.sk)
				}
				for g, in := range map[string]bool{"g1": st.inG1, "g2": st.inG2} {
					want := 0
					if in {
						want = 1
					}
					if n := len(e.page(store.Query{Index: store.IndexGSI1, PK: g}).Items); n != want {
						t.Fatalf("step %d: index partition %s holds %d items, want %d", i, g, n, want)
					}
				}
			}
		}},
		{"returns the item as written", func(t *testing.T) {
			e := s.env(t)
			e.put(indexed(item("p", "a", "n", int64(1)), "g", "s"))
			got, err := e.s.Update(t.Context(), key("p", "a"), store.Update{Add: map[string]int64{"n": 1}, ExpiresAt: ptr(e.unix() + 9)})
			if err != nil {
				t.Fatalf("Update = %v", err)
			}
			e.wantItem(got)
		}},
		{"Add to an attribute that is not an int64 is ErrInvalid and writes nothing", func(t *testing.T) {
			e := s.env(t)
			before := item("p", "a", "s", "1", "b", true, "y", []byte{1})
			e.put(before)
			for _, name := range []string{"s", "b", "y"} {
				_, err := e.s.Update(t.Context(), key("p", "a"), store.Update{Add: map[string]int64{name: 1}, Set: map[string]any{"other": "x"}})
				wantErr(t, "Update(Add "+name+")", err, store.ErrInvalid)
			}
			e.wantItem(before)
		}},
		{"an attribute named twice in one update is ErrInvalid", func(t *testing.T) {
			e := s.env(t)
			before := item("p", "a", "x", "1", "n", int64(1))
			e.put(before)
			for name, u := range map[string]store.Update{
				"Set and Remove": {Set: map[string]any{"x": "2"}, Remove: []string{"x"}},
				"Add and Remove": {Add: map[string]int64{"n": 1}, Remove: []string{"n"}},
				"Set and Add":    {Set: map[string]any{"n": int64(2)}, Add: map[string]int64{"n": 1}},
				"Remove twice":   {Remove: []string{"x", "x"}},
			} {
				_, err := e.s.Update(t.Context(), key("p", "a"), u)
				wantErr(t, "Update("+name+")", err, store.ErrInvalid)
			}
			e.wantItem(before)
		}},
	}
}

func (s suite) deleteTests() []test {
	return []test{
		{"removes the item", func(t *testing.T) {
			e := s.env(t)
			e.put(item("p", "a"), item("p", "b"))
			if err := e.s.Delete(t.Context(), key("p", "a")); err != nil {
				t.Fatalf("Delete = %v", err)
			}
			e.wantAbsent(key("p", "a"))
			e.mustGet(key("p", "b"))
		}},
		{"of an absent item without conditions succeeds, twice", func(t *testing.T) {
			e := s.env(t)
			for i := range 2 {
				if err := e.s.Delete(t.Context(), key("p", "never")); err != nil {
					t.Fatalf("Delete #%d of an absent item = %v, want nil", i+1, err)
				}
			}
		}},
		{"removes the item from the index", func(t *testing.T) {
			e := s.env(t)
			e.put(indexed(item("p", "a"), "g", "1"), indexed(item("p", "b"), "g", "2"))
			if err := e.s.Delete(t.Context(), key("p", "a")); err != nil {
				t.Fatalf("Delete = %v", err)
			}
			if got := sks(e.queryAll(store.Query{Index: store.IndexGSI1, PK: "g"})); len(got) != 1 || got[0] != "b" {
				t.Fatalf("index after Delete = %v, want [b]", got)
			}
		}},
	}
}

func (s suite) batchGetTests() []test {
	return []test{
		{"results align with keys, nil where no live item is", func(t *testing.T) {
			e := s.env(t)
			a, c := item("p", "a", "n", int64(1)), item("p", "c", "n", int64(3))
			e.put(a, c, expiring(item("p", "x"), e.unix()+5))
			e.clk.advance(5e9)
			keys := []store.Key{key("p", "c"), key("p", "b"), key("p", "x"), key("p", "a"), key("q", "a")}
			got, err := e.s.BatchGet(t.Context(), keys)
			if err != nil {
				t.Fatalf("BatchGet = %v", err)
			}
			want := []*store.Item{&c, nil, nil, &a, nil}
			if len(got) != len(want) {
				t.Fatalf("BatchGet(%s) returned %d results, want %d", fmtKeys(keys), len(got), len(want))
			}
			for i := range want {
				switch {
				case (want[i] == nil) != (got[i] == nil):
					t.Fatalf("BatchGet result %d (%s) = %v, want %v", i, keys[i], got[i], want[i])
				case want[i] != nil:
					if d := diffItem(*want[i], *got[i]); d != "" {
						t.Fatalf("BatchGet result %d mismatch (-want +got):\n%s", i, d)
					}
				}
			}
		}},
		{"reads MaxBatchGetKeys keys at once", func(t *testing.T) {
			e := s.env(t)
			keys := make([]store.Key, store.MaxBatchGetKeys)
			var ops []store.Op
			for i := range keys {
				keys[i] = key("p", string(rune('A'+i/26))+string(rune('a'+i%26)))
				if i%2 == 0 {
					ops = append(ops, store.PutOp(item(keys[i].PK, keys[i].SK)))
				}
				if len(ops) == store.MaxTransactItems || i == len(keys)-1 && len(ops) > 0 {
					if err := e.s.Transact(t.Context(), ops); err != nil {
						t.Fatalf("Transact = %v", err)
					}
					ops = nil
				}
			}
			got, err := e.s.BatchGet(t.Context(), keys)
			if err != nil || len(got) != len(keys) {
				t.Fatalf("BatchGet(%d keys) = %d results, %v", len(keys), len(got), err)
			}
			for i, it := range got {
				if (it != nil) != (i%2 == 0) || it != nil && it.Key() != keys[i] {
					t.Fatalf("BatchGet result %d (%s) = %v", i, keys[i], it)
				}
			}
		}},
		{"no keys read nothing", func(t *testing.T) {
			e := s.env(t)
			got, err := e.s.BatchGet(t.Context(), nil)
			if err != nil || len(got) != 0 {
				t.Fatalf("BatchGet(nil) = %v, %v; want empty, nil", got, err)
			}
		}},
		{"more than MaxBatchGetKeys, a duplicate or an invalid key is ErrInvalid", func(t *testing.T) {
			e := s.env(t)
			tooMany := make([]store.Key, store.MaxBatchGetKeys+1)
			for i := range tooMany {
				tooMany[i] = key("p", string(rune('A'+i/26))+string(rune('a'+i%26)))
			}
			cases := map[string][]store.Key{
				"too many":  tooMany,
				"duplicate": {key("p", "a"), key("p", "b"), key("p", "a")},
			}
			for _, k := range invalidKeys {
				cases["invalid "+k.String()] = []store.Key{key("p", "a"), k}
			}
			for name, keys := range cases {
				_, err := e.s.BatchGet(t.Context(), keys)
				wantErr(t, "BatchGet("+name+")", err, store.ErrInvalid)
			}
		}},
	}
}
