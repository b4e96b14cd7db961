package extract

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
)

// Benchmarks of intake speed and the engine's memory. Run in a fresh
// process so the resident-set peak includes the engine's compile, as on a
// Lambda cold start:
//
//	go test ./shared/intake/extract -run '^$' -bench . -benchtime 5x
//
// pages/s is pages read per second; peak-heap-MB the Go heap's highest
// sample during the runs (an engine instance's memory is Go heap);
// peak-RSS-MB the process's VmHWM, compile included.

var (
	benchOnce sync.Once
	benchEx   *Extractor
	benchErr  error
)

// benchExtractor compiles the engine in memory, as the scangate does.
func benchExtractor(b *testing.B) *Extractor {
	b.Helper()
	benchOnce.Do(func() { benchEx, benchErr = New(nil) })
	if benchErr != nil {
		b.Fatalf("New: %v", benchErr)
	}
	return benchEx
}

// legalPage is about 3,000 characters in 40 lines, a dense page of a brief.
func legalPage(n int) []string {
	lines := make([]string, 40)
	for i := range lines {
		lines[i] = fmt.Sprintf("%d.%d The deponent stated that the ledger was kept at the branch office until", n, i)
	}
	return lines
}

func BenchmarkExtractPDF(b *testing.B) {
	typical := make([][]string, 100)
	for i := range typical {
		typical[i] = legalPage(i + 1)
	}
	sparse := make([]string, 2000)
	for i := range sparse {
		sparse[i] = fmt.Sprintf("page %d", i+1)
	}
	cases := []struct {
		name string
		spec pdfSpec
	}{
		{"100-pages-of-3000-chars", pdfSpec{pages: typical, fontSize: 6, lineStep: 4, compress: true}},
		{"2000-pages-of-10-chars", pdfSpec{pages: pagesOf(sparse...), compress: true}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			e := benchExtractor(b)
			pdf := makePDF(b, c.spec)
			stop := sampleHeap()
			b.ResetTimer()
			pages := 0
			for range b.N {
				res, err := e.Extract(context.Background(), bytes.NewReader(pdf), int64(len(pdf)), Hint{})
				if err != nil || res.TextState != Complete {
					b.Fatalf("Extract = %+v, %v", res, err)
				}
				pages += res.Pages
			}
			b.StopTimer()
			report(b, pages, stop())
		})
	}
}

func BenchmarkExtractText(b *testing.B) {
	e := benchExtractor(b)
	var s strings.Builder
	for s.Len() < 4<<20 {
		s.WriteString("The deponent stated that the ledger was kept at the branch office.\r\n")
	}
	text := []byte(s.String())
	stop := sampleHeap()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	pages := 0
	for range b.N {
		res, err := e.Extract(context.Background(), bytes.NewReader(text), int64(len(text)), Hint{Filename: "notes.txt"})
		if err != nil || res.TextState != Complete {
			b.Fatalf("Extract = %+v, %v", res, err)
		}
		pages += res.Pages
	}
	b.StopTimer()
	report(b, pages, stop())
}

// BenchmarkNew compiles the engine from nothing each time, the cold-start
// cost a scangate pays once.
func BenchmarkNew(b *testing.B) {
	saved := compiled
	defer func() { compiled = saved }()
	stop := sampleHeap()
	for range b.N {
		compiled = wazero.NewCompilationCache()
		e, err := New(nil)
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
		compiled.Close(context.Background())
	}
	b.StopTimer()
	b.ReportMetric(stop(), "peak-heap-MB")
	b.ReportMetric(peakRSS(), "peak-RSS-MB")
}

func report(b *testing.B, pages int, peakHeapMB float64) {
	b.ReportMetric(float64(pages)/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(peakHeapMB, "peak-heap-MB")
	b.ReportMetric(peakRSS(), "peak-RSS-MB")
}

// sampleHeap samples the live heap every 2 ms until the returned function
// is called, which returns the highest sample in MB.
func sampleHeap() func() float64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done, peak := make(chan struct{}), make(chan uint64)
	go func() {
		var max uint64
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			max = maxU(max, sample[0].Value.Uint64())
			select {
			case <-done:
				peak <- max
				return
			case <-t.C:
			}
		}
	}()
	return func() float64 {
		close(done)
		return float64(<-peak) / (1 << 20)
	}
}

func maxU(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

// peakRSS is the process's peak resident set (VmHWM) in MB, or 0 where
// /proc is not there.
func peakRSS() float64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}
