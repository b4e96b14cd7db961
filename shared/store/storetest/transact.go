package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/custodymcp/custody/shared/store"
)

func (s suite) transactTests() []test {
	return []test{
		{"applies every operation", func(t *testing.T) {
			e := s.env(t)
			upd, del, chk := item("p", "upd", "n", int64(1)), item("p", "del"), item("p", "chk")
			e.put(upd, del, chk)
			err := e.s.Transact(t.Context(), []store.Op{
				store.PutOp(indexed(item("p", "new", "x", "y"), "g", "1"), store.NotExists()),
				store.UpdateOp(upd.Key(), store.Update{Add: map[string]int64{"n": 1}}, store.VersionEquals(1)),
				store.DeleteOp(del.Key(), store.Exists()),
				store.CheckOp(chk.Key(), store.VersionEquals(1)),
				store.UpdateOp(key("p", "created"), store.Update{Set: map[string]any{"s": "v"}}),
			})
			if err != nil {
				t.Fatalf("Transact = %v", err)
			}
			e.wantItem(indexed(item("p", "new", "x", "y"), "g", "1"))
			wantUpd := item("p", "upd", "n", int64(2))
			wantUpd.Version = 2
			e.wantItem(wantUpd)
			e.wantAbsent(del.Key())
			e.wantItem(chk)
			e.wantItem(item("p", "created", "s", "v"))
			if got := sks(e.page(store.Query{Index: store.IndexGSI1, PK: "g"}).Items); len(got) != 1 || got[0] != "new" {
				t.Fatalf("index after Transact = %v, want [new]", got)
			}
		}},
		{"accepts MaxTransactItems operations", func(t *testing.T) {
			e := s.env(t)
			ops := make([]store.Op, store.MaxTransactItems)
			for i := range ops {
				ops[i] = store.PutOp(item("p", fmt.Sprintf("%02d", i)), store.NotExists())
			}
			if err := e.s.Transact(t.Context(), ops); err != nil {
				t.Fatalf("Transact(%d puts) = %v", len(ops), err)
			}
			if got := e.queryAll(store.Query{PK: "p"}); len(got) != store.MaxTransactItems {
				t.Fatalf("after Transact: %d items, want %d", len(got), store.MaxTransactItems)
			}
		}},
		{"a failed condition in operation k writes no operation, before or after k", func(t *testing.T) {
			e := s.env(t)
			upd, del, chk := item("p", "upd", "n", int64(1)), item("p", "del"), item("p", "chk")
			e.put(upd, del, chk)
			err := e.s.Transact(t.Context(), []store.Op{
				store.PutOp(indexed(item("p", "new"), "g", "1"), store.NotExists()),
				store.UpdateOp(upd.Key(), store.Update{Add: map[string]int64{"n": 1}}),
				store.DeleteOp(del.Key()),
				store.CheckOp(chk.Key(), store.VersionEquals(2)),
				store.PutOp(item("p", "after")),
			})
			wantTxCanceled(t, err, 3, chk.Key(), store.ErrConflict)
			e.wantAbsent(key("p", "new"))
			e.wantItem(upd)
			e.wantItem(del)
			e.wantItem(chk)
			e.wantAbsent(key("p", "after"))
			if got := e.page(store.Query{Index: store.IndexGSI1, PK: "g"}).Items; len(got) != 0 {
				t.Fatalf("index after a cancelled Transact = %v, want empty", sks(got))
			}
		}},
		{"the cancellation names the first failed operation", func(t *testing.T) {
			e := s.env(t)
			e.put(item("p", "a"), item("p", "b"), item("p", "c"))
			err := e.s.Transact(t.Context(), []store.Op{
				store.UpdateOp(key("p", "a"), store.Update{}, store.Exists()),
				store.PutOp(item("p", "x"), store.NotExists()),
				store.DeleteOp(key("p", "b"), store.VersionEquals(9)),
				store.CheckOp(key("p", "c"), store.AttrEquals("s", "nope")),
			})
			wantTxCanceled(t, err, 2, key("p", "b"), store.ErrConflict)
		}},
		{"the cancellation is ErrExists when only NotExists failed", func(t *testing.T) {
			e := s.env(t)
			e.put(item("p", "a"))
			err := e.s.Transact(t.Context(), []store.Op{
				store.PutOp(item("p", "b"), store.NotExists()),
				store.PutOp(item("p", "a", "x", "y"), store.NotExists()),
			})
			wantTxCanceled(t, err, 1, key("p", "a"), store.ErrExists)
			e.wantAbsent(key("p", "b"))
			e.wantItem(item("p", "a"))
		}},
		{"two operations on one item are refused before conditions are evaluated", func(t *testing.T) {
			e := s.env(t)
			e.put(item("p", "a"))
			err := e.s.Transact(t.Context(), []store.Op{
				store.CheckOp(key("p", "a"), store.NotExists()), // would fail
				store.UpdateOp(key("p", "a"), store.Update{}),
			})
			wantErr(t, "Transact(two ops on p / a)", err, store.ErrInvalid)
			var tx *store.TxCanceledError
			if errors.As(err, &tx) {
				t.Fatalf("Transact(two ops on p / a) = %v, want ErrInvalid without a cancellation", err)
			}
			e.wantItem(item("p", "a"))
		}},
		{"CheckOp writes nothing", func(t *testing.T) {
			e := s.env(t)
			it := item("p", "a", "s", "x")
			e.put(it)
			err := e.s.Transact(t.Context(), []store.Op{
				store.CheckOp(it.Key(), store.Exists(), store.VersionEquals(1), store.AttrEquals("s", "x")),
				store.PutOp(item("p", "b")),
			})
			if err != nil {
				t.Fatalf("Transact = %v", err)
			}
			e.wantItem(it)
			e.mustGet(key("p", "b"))
		}},
		{"a cancelled transaction's cancellation error is a condition error", func(t *testing.T) {
			e := s.env(t)
			err := e.s.Transact(t.Context(), []store.Op{store.CheckOp(key("p", "a"), store.Exists())})
			wantTxCanceled(t, err, 0, key("p", "a"), store.ErrConflict)
			wantCondErr(t, "Transact(CheckOp Exists on absent)", err, store.ErrConflict)
		}},
	}
}

// wantTxCanceled checks that err is a *store.TxCanceledError naming
// operation index at k, with cause want (errors.Is through the chain too).
func wantTxCanceled(t *testing.T, err error, index int, k store.Key, want error) {
	t.Helper()
	var tx *store.TxCanceledError
	if !errors.As(err, &tx) {
		t.Fatalf("Transact = %v, want a *store.TxCanceledError", err)
	}
	if tx.Index != index || tx.Key != k || !errors.Is(tx.Err, want) {
		t.Fatalf("Transact = TxCanceledError{Index %d, Key %s, Err %v}, want {%d, %s, %v}", tx.Index, tx.Key, tx.Err, index, k, want)
	}
	wantCondErr(t, "Transact", err, want)
}
