package filestore_test

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/filestore"
)

// benchItem is shaped like a session or credential row: a handful of short
// strings, two counters, a flag and a hash.
func benchItem(pk, sk string) store.Item {
	return store.Item{
		PK: pk, SK: sk, GSI1PK: "T#tenant-0001#SESS", GSI1SK: "2026-05-01T12:00:00Z#" + sk, Version: 1,
		Attrs: map[string]any{
			"tenant":      "tenant-0001",
			"principal":   "user:alice@example.com",
			"surface":     "mcp",
			"protocol":    "2025-11-25",
			"created_at":  int64(1_800_000_000),
			"requests":    int64(42),
			"client_safe": false,
			"sha256":      make([]byte, 32),
		},
	}
}

// processCPU is the CPU time the process has used (user and system, every
// thread: the writer's syncs and checkpoints included).
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the process CPU per operation since start as
// cpu-ns/op: what a write costs the machine, beside the wall time that
// the sync's wait dominates.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
}

func BenchmarkPut(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "custody.db"), nil)
	ctx := b.Context()
	b.ReportAllocs()
	i := 0
	defer reportCPU(b, processCPU(b))
	for b.Loop() {
		if err := s.Put(ctx, benchItem("SESS#bench", fmt.Sprintf("%09d", i))); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkPutParallel shows group commit: parallel writers share fsyncs.
func BenchmarkPutParallel(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "custody.db"), nil)
	ctx := b.Context()
	var n atomic.Int64
	before := s.Commits()
	b.SetParallelism(16) // 16 × GOMAXPROCS writers
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, processCPU(b))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			if err := s.Put(ctx, benchItem("SESS#bench", fmt.Sprintf("%09d", i))); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(n.Load())/float64(max(s.Commits()-before, 1)), "writes/commit")
}

func BenchmarkGet(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "custody.db"), nil)
	ctx := b.Context()
	seed(b, s, 1000)
	k := store.Key{PK: "SESS#bench", SK: fmt.Sprintf("%09d", 500)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Get(ctx, k); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkQuery reads one page of 20 from a partition of 1000 items, on
// the table and on the index.
func BenchmarkQuery(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "custody.db"), nil)
	seed(b, s, 1000)
	for _, q := range []store.Query{
		{PK: "SESS#bench", SK: store.SortKeyCondition{From: fmt.Sprintf("%09d", 500)}, Limit: 20},
		{Index: store.IndexGSI1, PK: "T#tenant-0001#SESS", Descending: true, Limit: 20},
	} {
		b.Run("index="+q.Index, func(b *testing.B) {
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				p, err := s.Query(ctx, q)
				if err != nil || len(p.Items) != 20 || p.NextToken == "" {
					b.Fatalf("Query = %d items, %v", len(p.Items), err)
				}
			}
		})
	}
}

// BenchmarkTransact is the pipeline's write per call: a rate-limit bucket
// update and an audit row, in one transaction.
func BenchmarkTransact(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "custody.db"), nil)
	ctx := b.Context()
	bucket := store.Key{PK: "CRED#bench", SK: "BUCKET#read"}
	b.ReportAllocs()
	i := 0
	defer reportCPU(b, processCPU(b))
	for b.Loop() {
		err := s.Transact(ctx, []store.Op{
			store.UpdateOp(bucket, store.Update{Add: map[string]int64{"tokens": -1}, Set: map[string]any{"refilled_at": int64(i)}}),
			store.PutOp(benchItem("AUDIT#bench", fmt.Sprintf("%09d", i)), store.NotExists()),
		})
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkTransactParallel is the pipeline's write per call from 64
// concurrent callers, each with its own bucket, into an audit partition that
// already holds 100,000 rows: group commit over an ever-growing partition.
func BenchmarkTransactParallel(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "custody.db"), nil)
	ctx := b.Context()
	var ops []store.Op
	for i := range 100_000 {
		ops = append(ops, store.PutOp(benchItem("AUDIT#bench", fmt.Sprintf("a%09d", i))))
		if len(ops) == store.MaxTransactItems {
			if err := s.Transact(ctx, ops); err != nil {
				b.Fatal(err)
			}
			ops = nil
		}
	}
	var n, callers atomic.Int64
	before := s.Commits()
	b.SetParallelism(32) // 32 × GOMAXPROCS callers
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, processCPU(b))
	b.RunParallel(func(pb *testing.PB) {
		bucket := store.Key{PK: fmt.Sprintf("CRED#bench%d", callers.Add(1)), SK: "BUCKET#read"}
		for pb.Next() {
			i := n.Add(1)
			err := s.Transact(ctx, []store.Op{
				store.UpdateOp(bucket, store.Update{Add: map[string]int64{"tokens": -1}, Set: map[string]any{"refilled_at": i}}),
				store.PutOp(benchItem("AUDIT#bench", fmt.Sprintf("b%09d", i)), store.NotExists()),
			})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(n.Load())/float64(max(s.Commits()-before, 1)), "writes/commit")
}

func seed(b *testing.B, s store.Store, n int) {
	b.Helper()
	var ops []store.Op
	for i := range n {
		ops = append(ops, store.PutOp(benchItem("SESS#bench", fmt.Sprintf("%09d", i))))
		if len(ops) == store.MaxTransactItems || i == n-1 {
			if err := s.Transact(b.Context(), ops); err != nil {
				b.Fatal(err)
			}
			ops = nil
		}
	}
}

// BenchmarkOpen opens a store of 10,000 items that was closed cleanly,
// reads one item and closes it again: what every start of the dev server
// pays before its first answer.
func BenchmarkOpen(b *testing.B) {
	path := filepath.Join(b.TempDir(), "custody.db")
	s, err := filestore.Open(path, filestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	seed(b, s, 10_000)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	k := store.Key{PK: "SESS#bench", SK: fmt.Sprintf("%09d", 500)}
	b.ReportAllocs()
	defer reportCPU(b, processCPU(b))
	for b.Loop() {
		s, err := filestore.Open(path, filestore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Get(b.Context(), k); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
