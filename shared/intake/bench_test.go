package intake_test

import (
	"fmt"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/intake/intaketest"
	"github.com/custodymcp/custody/shared/uploads"
)

// BenchmarkGateIntake measures the scan gate with intake, end to end on
// the file engine and the local S3 server: one clean upload's event per
// iteration — the HEAD, the signature scan of its bytes, the verdict, the
// copy to the record bucket, the read back, the text extraction with the
// wasm PDF engine, the chunk rows and the document transaction. pages/s
// is pages taken in per second of that; peak-heap-MB the Go heap's
// highest sample during the runs (the engine instance's memory is Go
// heap). The deposit through the lane is outside the timer.
//
//	go test ./shared/intake -run '^$' -bench BenchmarkGateIntake -benchtime 10x
func BenchmarkGateIntake(b *testing.B) {
	for _, c := range []struct {
		name  string
		pages int
		text  bool
	}{{"pdf-20-pages", 20, false}, {"text-20-pages", 20, true}} {
		b.Run(c.name, func(b *testing.B) {
			e := newEnv(b)
			var body []byte
			name := "file.pdf"
			if c.text {
				var sb strings.Builder
				for p := 0; p < c.pages; p++ {
					for sb.Len() < (p+1)*2900 {
						sb.WriteString("The periwinkle scaffolding buckled under the gantry at dawn.\n")
					}
					sb.WriteString("\f")
				}
				body, name = []byte(sb.String()), "file.txt"
			} else {
				pages := make([][]string, c.pages)
				for p := range pages {
					for l := 0; l < 35; l++ {
						pages[p] = append(pages[p], fmt.Sprintf("Page %d line %d: the periwinkle scaffolding buckled under the gantry.", p+1, l+1))
					}
				}
				body = intaketest.PDF(b, pages...)
			}
			// Warm the engine (its compile is the cold start's, not intake's).
			if _, err := e.deliver(b, e.deposit(b, name, body)); err != nil {
				b.Fatal(err)
			}
			peak := watchHeap()
			var taken time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				// A byte of its own, so no two uploads are one file.
				u := e.deposit(b, name, append(append([]byte(nil), body...), fmt.Sprintf("\n%d", i)...))
				b.StartTimer()
				start := time.Now()
				if _, err := e.deliver(b, u); err != nil {
					b.Fatal(err)
				}
				taken += time.Since(start)
				b.StopTimer()
				if got := e.upload(b, u.ID); got.State != uploads.StateInReview {
					b.Fatalf("upload %s is %s", u.ID, got.State)
				}
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(c.pages*b.N)/taken.Seconds(), "pages/s")
			b.ReportMetric(float64(peak())/1e6, "peak-heap-MB")
		})
	}
}

// watchHeap samples the Go heap every millisecond until the returned
// function is called, which answers the highest sample in bytes.
func watchHeap() func() uint64 {
	var maxHeap atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > maxHeap.Load() {
				maxHeap.Store(v)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return maxHeap.Load() }
}
