package filestore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/filestore"
	"github.com/custodymcp/custody/shared/store/storetest"
)

// open opens a store in dir and closes it when the test ends.
func open(t testing.TB, path string, now func() time.Time) *filestore.Store {
	t.Helper()
	s, err := filestore.Open(path, filestore.Options{Now: now})
	if err != nil {
		t.Fatalf("Open(%s) = %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
		return open(t, filepath.Join(t.TempDir(), "custody.db"), now)
	})
}

// TestConformanceCheckpointingConstantly runs the suite with a checkpoint
// after every few keys written, so that reads merge the overlay with bbolt
// and cross checkpoints in every case, not only at Close.
func TestConformanceCheckpointingConstantly(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
		s, err := filestore.Open(filepath.Join(t.TempDir(), "custody.db"), filestore.Options{Now: now, CheckpointEntries: 3})
		if err != nil {
			t.Fatalf("Open = %v", err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
		})
		return s
	})
}

func TestSurvivesCloseAndReopen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "custody.db")
	s, err := filestore.Open(path, filestore.Options{})
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	want := store.Item{PK: "T#1", SK: "CRED", GSI1PK: "g", GSI1SK: "1", Version: 3,
		Attrs: map[string]any{"s": "x", "n": int64(-9), "b": true, "y": []byte{}}}
	if err := s.Put(ctx, want); err != nil {
		t.Fatalf("Put = %v", err)
	}
	if _, err := s.Update(ctx, store.Key{PK: "T#1", SK: "counter"}, store.Update{Add: map[string]int64{"n": 2}}); err != nil {
		t.Fatalf("Update = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}

	s = open(t, path, nil)
	got, err := s.Get(ctx, want.Key())
	if err != nil {
		t.Fatalf("Get after reopen = %v", err)
	}
	if got.Version != 3 || got.String("s") != "x" || got.Int("n") != -9 || !got.Bool("b") || got.Bytes("y") == nil {
		t.Fatalf("Get after reopen = %+v, want %+v", got, want)
	}
	if p, err := s.Query(ctx, store.Query{Index: store.IndexGSI1, PK: "g"}); err != nil || len(p.Items) != 1 {
		t.Fatalf("index after reopen = %v, %v; want the item", p.Items, err)
	}
	if c, err := s.Get(ctx, store.Key{PK: "T#1", SK: "counter"}); err != nil || c.Int("n") != 2 {
		t.Fatalf("counter after reopen = %+v, %v; want n=2", c, err)
	}
}

func TestClosedStoreIsUnavailable(t *testing.T) {
	ctx := t.Context()
	s, err := filestore.Open(filepath.Join(t.TempDir(), "custody.db"), filestore.Options{})
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close = %v, want nil", err)
	}
	k := store.Key{PK: "p", SK: "a"}
	calls := map[string]error{
		"Put":      s.Put(ctx, store.Item{PK: "p", SK: "a"}),
		"Transact": s.Transact(ctx, []store.Op{store.DeleteOp(k)}),
	}
	_, calls["Get"] = s.Get(ctx, k)
	_, calls["Query"] = s.Query(ctx, store.Query{PK: "p"})
	_, calls["BatchGet"] = s.BatchGet(ctx, []store.Key{k})
	for name, err := range calls {
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s on a closed store = %v, want ErrUnavailable", name, err)
		}
	}
}

func TestSecondOpenOfOneFileIsUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "custody.db")
	open(t, path, nil)
	if s, err := filestore.Open(path, filestore.Options{}); !errors.Is(err, store.ErrUnavailable) {
		if s != nil {
			_ = s.Close()
		}
		t.Fatalf("second Open of a locked file = %v, want ErrUnavailable", err)
	}
}

// TestCloseDrainsQueuedWrites closes the store while writers race it: every
// write either is acknowledged and then readable after reopening, or fails
// with ErrUnavailable.
func TestCloseDrainsQueuedWrites(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "custody.db")
	s, err := filestore.Open(path, filestore.Options{})
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	const n = 64
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = s.Put(ctx, store.Item{PK: "p", SK: fmt.Sprintf("%03d", i)}) })
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	wg.Wait()

	s = open(t, path, nil)
	for i, err := range errs {
		_, gerr := s.Get(ctx, store.Key{PK: "p", SK: fmt.Sprintf("%03d", i)})
		switch {
		case err == nil && gerr != nil:
			t.Errorf("Put #%d was acknowledged but Get after reopen = %v", i, gerr)
		case err != nil && !errors.Is(err, store.ErrUnavailable):
			t.Errorf("Put #%d racing Close = %v, want nil or ErrUnavailable", i, err)
		case err != nil && gerr == nil:
			t.Errorf("Put #%d failed (%v) but its item is stored", i, err)
		}
	}
}

// TestConcurrentWritesShareCommits proves group commit: 64 concurrent Puts
// take fewer than 64 bbolt commits.
func TestConcurrentWritesShareCommits(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "custody.db"), nil)
	before := s.Commits()
	const n = 64
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-gate
			if err := s.Put(ctx, store.Item{PK: "p", SK: fmt.Sprintf("%03d", i)}); err != nil {
				t.Errorf("Put #%d = %v", i, err)
			}
		})
	}
	close(gate)
	wg.Wait()
	commits := s.Commits() - before
	t.Logf("%d concurrent puts took %d commits", n, commits)
	if commits >= n || commits == 0 {
		t.Fatalf("%d concurrent puts took %d commits, want between 1 and %d", n, commits, n-1)
	}
	p, err := s.Query(ctx, store.Query{PK: "p"})
	if err != nil || len(p.Items) != n {
		t.Fatalf("Query after the puts = %d items, %v; want %d", len(p.Items), err, n)
	}
}

// TestFailedConditionsShareABatchWithoutEffect mixes failing and succeeding
// conditional writes in concurrent batches: each failure is its request's
// alone.
func TestFailedConditionsShareABatchWithoutEffect(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "custody.db"), nil)
	const n = 64
	for i := range n {
		if i%2 == 1 {
			if err := s.Put(ctx, store.Item{PK: "p", SK: fmt.Sprintf("%03d", i), Version: 1}); err != nil {
				t.Fatalf("Put = %v", err)
			}
		}
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			k := store.Key{PK: "p", SK: fmt.Sprintf("%03d", i)}
			// Odd keys exist: the transaction's CheckOp fails and its Put of
			// a fresh row must not land.
			errs[i] = s.Transact(ctx, []store.Op{
				store.PutOp(store.Item{PK: "q", SK: k.SK}),
				store.CheckOp(k, store.NotExists()),
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		_, gerr := s.Get(ctx, store.Key{PK: "q", SK: fmt.Sprintf("%03d", i)})
		if i%2 == 1 {
			if !errors.Is(err, store.ErrExists) || !errors.Is(gerr, store.ErrNotFound) {
				t.Errorf("transaction #%d over an existing key = %v (row: %v), want ErrExists and no row", i, err, gerr)
			}
		} else if err != nil || gerr != nil {
			t.Errorf("transaction #%d = %v (row: %v), want success", i, err, gerr)
		}
	}
}

func TestPurgeExpired(t *testing.T) {
	ctx := t.Context()
	now := time.Unix(1_800_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := open(t, filepath.Join(t.TempDir(), "custody.db"), clock)
	for i := range 10 {
		it := store.Item{PK: "p", SK: fmt.Sprintf("%02d", i), GSI1PK: "g", GSI1SK: fmt.Sprintf("%02d", i)}
		if i%2 == 0 {
			it.ExpiresAt = now.Unix() + 5
		}
		if err := s.Put(ctx, it); err != nil {
			t.Fatalf("Put = %v", err)
		}
	}
	if n, err := s.PurgeExpired(ctx, 0); err != nil || n != 0 {
		t.Fatalf("PurgeExpired before expiry = %d, %v; want 0", n, err)
	}
	mu.Lock()
	now = now.Add(5 * time.Second)
	mu.Unlock()
	if n, err := s.PurgeExpired(ctx, 2); err != nil || n != 2 {
		t.Fatalf("PurgeExpired(limit 2) = %d, %v; want 2", n, err)
	}
	if n, err := s.PurgeExpired(ctx, 0); err != nil || n != 3 {
		t.Fatalf("PurgeExpired = %d, %v; want the other 3", n, err)
	}
	for _, q := range []store.Query{{PK: "p"}, {Index: store.IndexGSI1, PK: "g"}} {
		if p, err := s.Query(ctx, q); err != nil || len(p.Items) != 5 {
			t.Fatalf("Query(%+v) after purge = %d items, %v; want 5", q, len(p.Items), err)
		}
	}
}

// crashEnv names the variable that turns TestCrashHelper into the child
// process of TestAcknowledgedWritesSurviveKill; its value is the store path.
// crashCheckpointEnv, when set, is the child's Options.CheckpointEntries.
const (
	crashEnv           = "CUSTODY_FILESTORE_CRASH_PATH"
	crashCheckpointEnv = "CUSTODY_FILESTORE_CRASH_CHECKPOINT_ENTRIES"
)

// TestCrashHelper is the child of TestAcknowledgedWritesSurviveKill: it
// writes rows from 8 goroutines forever, printing "acked <n>" after each
// acknowledged Put, until it is killed. Without the variable it has nothing
// to do and passes.
func TestCrashHelper(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		return
	}
	entries, _ := strconv.Atoi(os.Getenv(crashCheckpointEnv))
	s, err := filestore.Open(path, filestore.Options{CheckpointEntries: entries})
	if err != nil {
		fmt.Println("open failed:", err)
		os.Exit(2)
	}
	var (
		mu   sync.Mutex
		next int
	)
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				mu.Lock()
				n := next
				next++
				mu.Unlock()
				err := s.Put(context.Background(), store.Item{
					PK: "crash", SK: fmt.Sprintf("%09d", n), Version: 1,
					Attrs: map[string]any{"n": int64(n), "pad": strings.Repeat("x", 200)},
				})
				if err != nil {
					fmt.Println("put failed:", err)
					os.Exit(2)
				}
				mu.Lock()
				fmt.Fprintf(out, "acked %d\n", n)
				_ = out.Flush() // the parent must see an ack only after the Put returned
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// TestAcknowledgedWritesSurviveKill runs TestCrashHelper in a child process,
// kills it with SIGKILL after some acknowledged writes, and checks that every
// write the child acknowledged is in the file: once with the writes only in
// the log (no checkpoint before the kill), once with checkpoints every few
// writes, so that the kill lands among them.
func TestAcknowledgedWritesSurviveKill(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries int
	}{
		{"acknowledged writes in the log alone are replayed", 1 << 20},
		{"acknowledged writes survive a kill among checkpoints", 16},
	} {
		t.Run(tc.name, func(t *testing.T) { crashAndCheck(t, tc.entries) })
	}
}

func crashAndCheck(t *testing.T, checkpointEntries int) {
	path := filepath.Join(t.TempDir(), "custody.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+path, fmt.Sprintf("%s=%d", crashCheckpointEnv, checkpointEntries))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("StdoutPipe = %v", err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child = %v", err)
	}
	acked := map[int]bool{}
	sc := bufio.NewScanner(stdout)
	for len(acked) < 300 && sc.Scan() {
		line := sc.Text()
		n, err := strconv.Atoi(strings.TrimPrefix(line, "acked "))
		if err != nil || !strings.HasPrefix(line, "acked ") {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("child said %q, want acked <n>", line)
		}
		acked[n] = true
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill child = %v", err)
	}
	// Acks printed before the kill landed are acknowledged writes too.
	for sc.Scan() {
		if n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "acked ")); err == nil {
			acked[n] = true
		}
	}
	_ = cmd.Wait()
	if len(acked) < 300 {
		t.Fatalf("child acknowledged %d writes before it ended, want at least 300", len(acked))
	}

	s := open(t, path, nil)
	ctx := t.Context()
	var missing []int
	for n := range acked {
		it, err := s.Get(ctx, store.Key{PK: "crash", SK: fmt.Sprintf("%09d", n)})
		if err != nil || it.Int("n") != int64(n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d of %d acknowledged writes lost after kill -9: %v", len(missing), len(acked), missing)
	}
	p, err := s.Query(ctx, store.Query{PK: "crash"})
	if err != nil {
		t.Fatalf("Query after kill = %v", err)
	}
	t.Logf("child acknowledged %d writes; %d rows survived the kill", len(acked), len(p.Items))
}
