package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/custodymcp/custody/shared/store"
)

// lossyFile is a log file that knows what a power loss would leave of it:
// the bytes as of its last Datasync (durable) and the writes since
// (unsynced). After cut, writes are dropped and syncs fail, as on a
// machine that has lost power; what the store acknowledged before the cut
// is exactly what its syncs covered.
type lossyFile struct {
	walFile
	mu       sync.Mutex
	durable  []byte
	unsynced []pendingWrite
	cut      bool
}

type pendingWrite struct {
	off int64
	b   []byte
}

var errPowerCut = errors.New("power cut")

func (f *lossyFile) WriteAt(b []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut {
		return 0, errPowerCut
	}
	f.unsynced = append(f.unsynced, pendingWrite{off, append([]byte(nil), b...)})
	return f.walFile.WriteAt(b, off)
}

func (f *lossyFile) Datasync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut {
		return errPowerCut
	}
	if err := f.walFile.Datasync(); err != nil {
		return err
	}
	for _, w := range f.unsynced {
		f.durable = apply(f.durable, w.off, w.b)
	}
	f.unsynced = nil
	return nil
}

func apply(img []byte, off int64, b []byte) []byte {
	if end := off + int64(len(b)); end > int64(len(img)) {
		img = append(img, make([]byte, end-int64(len(img)))...)
	}
	copy(img[off:], b)
	return img
}

// powerCut stops the file and returns what a power loss leaves of it: the
// durable bytes, plus the first half of every unsynced write (a torn
// write: the disk may keep any part of what was never synced).
func (f *lossyFile) powerCut() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cut = true
	img := append([]byte(nil), f.durable...)
	for _, w := range f.unsynced {
		img = apply(img, w.off, w.b[:len(w.b)/2])
	}
	return img
}

// TestAcknowledgedWritesSurvivePowerLoss simulates a power loss under
// concurrent writers and checkpoints: the log keeps only what its syncs
// covered (and half of each unsynced write, torn), bbolt keeps its last
// commit (each commit is synced before bbolt returns, and the copy is taken
// while no commit runs). Every acknowledged write must be there after
// reopening the copy, and no write that failed.
func TestAcknowledgedWritesSurvivePowerLoss(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries int
	}{
		{"the log alone holds the acknowledged writes", 1 << 20},
		{"the acknowledged writes are split between bbolt and the log", 16},
	} {
		t.Run(tc.name, func(t *testing.T) { powerLoss(t, tc.entries) })
	}
}

func powerLoss(t *testing.T, checkpointEntries int) {
	dir := t.TempDir()
	path := filepath.Join(dir, "custody.db")
	var (
		fmu   sync.Mutex
		files = map[string]*lossyFile{}
	)
	opts := Options{CheckpointEntries: checkpointEntries, openLog: func(p string) (walFile, int64, error) {
		f, size, err := openOSFile(p)
		if err != nil {
			return nil, 0, err
		}
		lf := &lossyFile{walFile: f, durable: make([]byte, size)}
		if _, err := f.ReadAt(lf.durable, 0); err != nil && size > 0 {
			return nil, 0, err
		}
		fmu.Lock()
		files[p] = lf
		fmu.Unlock()
		return lf, size, nil
	}}
	s, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open = %v", err)
	}

	const writers, perWriter = 8, 60
	var (
		mu     sync.Mutex
		acked  []string
		failed []string
		wg     sync.WaitGroup
	)
	cutAt := make(chan struct{})
	cut := sync.OnceFunc(func() { close(cutAt) })
	for g := range writers {
		wg.Go(func() {
			for i := range perWriter {
				sk := fmt.Sprintf("%02d-%04d", g, i)
				err := s.Put(context.Background(), store.Item{PK: "loss", SK: sk, GSI1PK: "g", GSI1SK: sk,
					Attrs: map[string]any{"n": int64(i)}})
				mu.Lock()
				if err == nil {
					acked = append(acked, sk)
				} else {
					failed = append(failed, sk)
				}
				if len(acked) == writers*perWriter/2 {
					cut()
				}
				mu.Unlock()
			}
		})
	}
	<-cutAt
	// The power goes: the log first (nothing more becomes durable), then
	// bbolt as of its last commit, copied while no commit can run.
	checkpoints := s.Checkpoints()
	images := map[string][]byte{}
	fmu.Lock()
	for p, f := range files {
		images[p] = f.powerCut()
	}
	fmu.Unlock()
	copyDir := t.TempDir()
	copyPath := filepath.Join(copyDir, "custody.db")
	tx, err := s.db.Begin(true)
	if err != nil {
		t.Fatalf("bbolt Begin = %v", err)
	}
	err = tx.CopyFile(copyPath, 0o600)
	_ = tx.Rollback()
	if err != nil {
		t.Fatalf("copy bbolt = %v", err)
	}
	wg.Wait()
	_ = s.Close() // fails: its log is gone
	for p, img := range images {
		if err := os.WriteFile(filepath.Join(copyDir, filepath.Base(p)), img, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	r, err := Open(copyPath, Options{})
	if err != nil {
		t.Fatalf("Open after the power loss = %v", err)
	}
	defer r.Close()
	ctx := t.Context()
	var missing []string
	for _, sk := range acked {
		if _, err := r.Get(ctx, store.Key{PK: "loss", SK: sk}); err != nil {
			missing = append(missing, sk)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("%d of %d acknowledged writes lost in the power loss: %v", len(missing), len(acked), missing)
	}
	// A write that failed at the cut never had its record synced: torn,
	// it must not be replayed.
	for _, sk := range failed {
		if _, err := r.Get(ctx, store.Key{PK: "loss", SK: sk}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(%s), a write that failed at the power cut = %v, want ErrNotFound", sk, err)
		}
	}
	p, err := r.Query(ctx, store.Query{Index: store.IndexGSI1, PK: "g"})
	if err != nil {
		t.Fatalf("index Query after the power loss = %v", err)
	}
	items, err := r.Query(ctx, store.Query{PK: "loss"})
	if err != nil {
		t.Fatalf("Query after the power loss = %v", err)
	}
	if len(p.Items) != len(items.Items) || len(items.Items) < len(acked) {
		t.Fatalf("after the power loss: %d rows, %d index entries, %d acknowledged; want rows = index entries >= acknowledged",
			len(items.Items), len(p.Items), len(acked))
	}
	t.Logf("%d acknowledged, %d failed at the cut; %d rows after reopening; %d checkpoints before the cut",
		len(acked), len(failed), len(items.Items), checkpoints)
}
