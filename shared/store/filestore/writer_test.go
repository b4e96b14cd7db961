package filestore

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/custodymcp/custody/shared/store"
)

// These tests drive the writer with requests of their own, so they can hold
// it mid-batch and know which requests share a batch.

func openT(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "custody.db"), Options{})
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// hold queues a write that blocks the writer until release is closed, and
// returns once the writer is inside it.
func hold(t *testing.T, s *Store) (release func(), done <-chan error) {
	t.Helper()
	entered, gate := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- s.write(context.Background(), "hold", func(*writeTx) error {
			close(entered)
			<-gate
			return nil
		})
	}()
	<-entered
	return func() { close(gate) }, errc
}

// waitQueued waits until n requests wait for the writer.
func waitQueued(s *Store, n int) {
	for {
		s.mu.Lock()
		q := len(s.queue)
		s.mu.Unlock()
		if q >= n {
			return
		}
		runtime.Gosched()
	}
}

func TestAbandonedWriteIsNeverApplied(t *testing.T) {
	s := openT(t)
	release, held := hold(t, s)

	ctx, cancel := context.WithCancel(t.Context())
	var applied atomic.Bool
	errc := make(chan error, 1)
	go func() {
		errc <- s.write(ctx, "abandoned", func(w *writeTx) error { applied.Store(true); return nil })
	}()
	waitQueued(s, 1)
	cancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) || !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("write abandoned while queued = %v, want context.Canceled and ErrUnavailable", err)
	}
	release()
	if err := <-held; err != nil {
		t.Fatalf("held write = %v", err)
	}
	// A later write proves the writer went past the abandoned request.
	if err := s.Put(t.Context(), store.Item{PK: "p", SK: "after"}); err != nil {
		t.Fatalf("Put after = %v", err)
	}
	if applied.Load() {
		t.Fatal("the abandoned write was applied")
	}
}

func TestTakenWriteCompletesDespiteCancel(t *testing.T) {
	s := openT(t)
	ctx, cancel := context.WithCancel(t.Context())
	entered, gate := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- s.write(ctx, "taken", func(w *writeTx) error {
			close(entered)
			<-gate
			c, err := w.load(store.Key{PK: "p", SK: "a"}, false)
			if err != nil {
				return err
			}
			w.put(c, encodeItem(store.Item{PK: "p", SK: "a"}), "", "")
			return nil
		})
	}()
	<-entered
	cancel()
	close(gate)
	if err := <-errc; err != nil {
		t.Fatalf("write taken before its context ended = %v, want its own result (nil)", err)
	}
	if _, err := s.Get(t.Context(), store.Key{PK: "p", SK: "a"}); err != nil {
		t.Fatalf("Get = %v, want the acknowledged item", err)
	}
}

// TestFailedTransactionFailsItsWholeBatch: when the bbolt transaction
// itself fails, every request of the batch gets ErrUnavailable and none is
// written, while the next batch works.
func TestFailedTransactionFailsItsWholeBatch(t *testing.T) {
	s := openT(t)
	release, held := hold(t, s)

	keys := []string{"a", "b", "c"}
	errs := make(chan error, len(keys)+1)
	for _, sk := range keys {
		go func() { errs <- s.Put(t.Context(), store.Item{PK: "p", SK: sk}) }()
	}
	waitQueued(s, len(keys))
	go func() {
		errs <- s.write(t.Context(), "broken", func(w *writeTx) error {
			w.check(errors.New("disk on fire"))
			return nil
		})
	}()
	waitQueued(s, len(keys)+1)
	release()
	if err := <-held; err != nil {
		t.Fatalf("held write = %v", err)
	}
	for range len(keys) + 1 {
		if err := <-errs; !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("write in the failed batch = %v, want ErrUnavailable", err)
		}
	}
	for _, sk := range keys {
		if _, err := s.Get(t.Context(), store.Key{PK: "p", SK: sk}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(p / %s) after the failed batch = %v, want ErrNotFound", sk, err)
		}
	}
	if err := s.Put(t.Context(), store.Item{PK: "p", SK: "next"}); err != nil {
		t.Fatalf("Put in the next batch = %v", err)
	}
}

// TestBatchAppliesRequestsInOrder: requests of one batch see the writes of
// those before them, and one commit covers the batch.
func TestBatchAppliesRequestsInOrder(t *testing.T) {
	s := openT(t)
	release, held := hold(t, s)
	before := s.Commits()

	k := store.Key{PK: "p", SK: "a"}
	first := make(chan error, 1)
	go func() { first <- s.Put(t.Context(), store.Item{PK: "p", SK: "a", Version: 1}, store.NotExists()) }()
	waitQueued(s, 1)
	second := make(chan error, 1)
	go func() { second <- s.Put(t.Context(), store.Item{PK: "p", SK: "a", Version: 2}, store.VersionEquals(1)) }()
	waitQueued(s, 2)
	third := make(chan error, 1)
	go func() { third <- s.Put(t.Context(), store.Item{PK: "p", SK: "a", Version: 9}, store.NotExists()) }()
	waitQueued(s, 3)
	release()
	if err := <-held; err != nil {
		t.Fatalf("held write = %v", err)
	}
	if err := <-first; err != nil {
		t.Fatalf("first Put(NotExists) = %v", err)
	}
	if err := <-second; err != nil {
		t.Fatalf("second Put(VersionEquals 1) = %v, want it to see the first", err)
	}
	if err := <-third; !errors.Is(err, store.ErrExists) {
		t.Fatalf("third Put(NotExists) = %v, want ErrExists", err)
	}
	if got, err := s.Get(t.Context(), k); err != nil || got.Version != 2 {
		t.Fatalf("Get = Version %d, %v; want 2", got.Version, err)
	}
	// The held request wrote nothing (rolled back, not counted); the three
	// puts shared one commit.
	if n := s.Commits() - before; n != 1 {
		t.Fatalf("commits for one batch = %d, want 1", n)
	}
}
