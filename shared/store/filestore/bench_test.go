package filestore_test

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/custodymcp/custody/shared/store"
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

func BenchmarkPut(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "custody.db"), nil)
	ctx := b.Context()
	b.ReportAllocs()
	i := 0
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
