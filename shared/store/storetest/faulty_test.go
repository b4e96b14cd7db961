package storetest_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/filestore"
	"github.com/custodymcp/custody/shared/store/storetest"
)

func newFaulty(t *testing.T, now func() time.Time) *storetest.Faulty {
	t.Helper()
	s, err := filestore.Open(filepath.Join(t.TempDir(), "custody.db"), filestore.Options{Now: now})
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return storetest.NewFaulty(s)
}

// TestFaultyWithoutRulesConforms: with no rules the decorator is invisible.
func TestFaultyWithoutRulesConforms(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store { return newFaulty(t, now) })
}

func TestFaulty(t *testing.T) {
	errBoom := errors.New("boom")
	cred, sess := store.Key{PK: "CRED#1", SK: "CRED"}, store.Key{PK: "SESS#1", SK: "SESS"}

	t.Run("fails the chosen method on matching keys only", func(t *testing.T) {
		f := newFaulty(t, time.Now)
		ctx := t.Context()
		for _, k := range []store.Key{cred, sess} {
			if err := f.Put(ctx, store.Item{PK: k.PK, SK: k.SK}); err != nil {
				t.Fatalf("Put(%s) = %v", k, err)
			}
		}
		f.Add(storetest.Rule{Method: storetest.MethodGet, Key: storetest.Prefix("CRED#", ""), Err: store.ErrUnavailable})
		if _, err := f.Get(ctx, cred); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("Get(%s) = %v, want ErrUnavailable", cred, err)
		}
		if _, err := f.Get(ctx, sess); err != nil {
			t.Errorf("Get(%s) = %v, want nil", sess, err)
		}
		if _, err := f.BatchGet(ctx, []store.Key{sess, cred}); err != nil {
			t.Errorf("BatchGet = %v, want nil (the rule is for Get)", err)
		}
		if got := f.Calls(storetest.MethodGet); got != 2 {
			t.Errorf("Calls(Get) = %d, want 2", got)
		}
		f.Reset()
		if _, err := f.Get(ctx, cred); err != nil {
			t.Errorf("Get(%s) after Reset = %v, want nil", cred, err)
		}
	})

	t.Run("Nth fails only that matching call", func(t *testing.T) {
		f := newFaulty(t, time.Now)
		ctx := t.Context()
		f.Add(storetest.Rule{Method: storetest.MethodPut, Nth: 2, Err: errBoom})
		var errs []error
		for _, sk := range []string{"a", "b", "c"} {
			errs = append(errs, f.Put(ctx, store.Item{PK: "p", SK: sk}))
		}
		if errs[0] != nil || !errors.Is(errs[1], errBoom) || errs[2] != nil {
			t.Fatalf("three Puts = %v, want nil, boom, nil", errs)
		}
		if _, err := f.Get(ctx, store.Key{PK: "p", SK: "b"}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Get(p / b) = %v, want ErrNotFound: the failed Put never reached the engine", err)
		}
	})

	t.Run("After applies the write, then fails it", func(t *testing.T) {
		f := newFaulty(t, time.Now)
		ctx := t.Context()
		f.Add(storetest.Rule{Method: storetest.MethodTransact, Err: store.ErrUnavailable, After: true})
		err := f.Transact(ctx, []store.Op{store.PutOp(store.Item{PK: "p", SK: "a"})})
		if !errors.Is(err, store.ErrUnavailable) {
			t.Fatalf("Transact = %v, want ErrUnavailable", err)
		}
		if _, err := f.Get(ctx, store.Key{PK: "p", SK: "a"}); err != nil {
			t.Fatalf("Get = %v, want the write that landed", err)
		}
		// The engine's own error wins over the injected one.
		err = f.Transact(ctx, []store.Op{store.PutOp(store.Item{PK: "p", SK: "a"}, store.NotExists())})
		if !errors.Is(err, store.ErrExists) {
			t.Fatalf("Transact(NotExists over an item) = %v, want ErrExists", err)
		}
	})

	t.Run("Block holds the call until its context ends", func(t *testing.T) {
		f := newFaulty(t, time.Now)
		f.Add(storetest.Rule{Method: storetest.MethodQuery, Block: true})
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() {
			_, err := f.Query(ctx, store.Query{PK: "p"})
			errc <- err
		}()
		select {
		case err := <-errc:
			t.Fatalf("blocked Query returned %v before its context ended", err)
		default:
		}
		cancel()
		if err := <-errc; !errors.Is(err, store.ErrUnavailable) || !errors.Is(err, context.Canceled) {
			t.Fatalf("blocked Query = %v, want ErrUnavailable and context.Canceled", err)
		}
	})

	t.Run("Delay passes the call through, or fails it when the context ends first", func(t *testing.T) {
		f := newFaulty(t, time.Now)
		f.Add(storetest.Rule{Method: storetest.MethodDelete, Delay: time.Millisecond})
		if err := f.Delete(t.Context(), store.Key{PK: "p", SK: "a"}); err != nil {
			t.Fatalf("delayed Delete = %v, want nil", err)
		}
		f.Reset()
		f.Add(storetest.Rule{Delay: time.Hour})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := f.Update(ctx, store.Key{PK: "p", SK: "a"}, store.Update{}); !errors.Is(err, store.ErrUnavailable) {
			t.Fatalf("Update delayed past a canceled context = %v, want ErrUnavailable", err)
		}
	})

	t.Run("passes the commit counter through", func(t *testing.T) {
		f := newFaulty(t, time.Now)
		if err := f.Put(t.Context(), store.Item{PK: "p", SK: "a"}); err != nil {
			t.Fatalf("Put = %v", err)
		}
		if f.Commits() == 0 || f.Commits() != f.Unwrap().(store.CommitCounter).Commits() {
			t.Fatalf("Commits = %d, want the engine's non-zero count", f.Commits())
		}
	})
}
