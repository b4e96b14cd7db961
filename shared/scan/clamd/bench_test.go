package clamd_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/clamd"
	"github.com/custodymcp/custody/shared/scan/clamdtest"
	"github.com/custodymcp/custody/shared/scan/scantest"
)

// BenchmarkScan measures INSTREAM throughput against a real clamd at
// ClamAV's default limits (100M), for a 1 MB and a 100 MB object of
// pseudo-random bytes (clamd's cache of clean hashes is off, so every
// iteration is scanned), and reports clamd's resident memory after the
// runs and at its peak (VmRSS, VmHWM). clamd loads one signature here, so
// the memory measured is the scanning's own; with the official databases
// (freshclam's main, daily and bytecode) the loaded signatures dominate
// instead, not measured here (no network to fetch them).
//
//	go test -run '^$' -bench BenchmarkScan -benchtime 3x ./shared/scan/clamd
func BenchmarkScan(b *testing.B) {
	srv := clamdtest.Start(b, clamdtest.Config{StreamMaxLength: "100M", MaxFileSize: "100M", MaxScanSize: "100M"})
	e := srv.Engine(b, clamd.Options{})
	for _, size := range []int{1_000_000, 100_000_000} {
		object := scantest.Noise(size, uint64(size))
		b.Run(fmt.Sprintf("%dMB", size/1_000_000), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				v, err := e.Scan(context.Background(), scan.Bytes(object), int64(size))
				if v.Result != scan.Clean {
					b.Fatalf("Scan() = %+v, %v; want clean", v, err)
				}
			}
			b.StopTimer()
			m, err := srv.Memory()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(m.RSS)/1e6, "clamd-RSS-MB")
			b.ReportMetric(float64(m.Peak)/1e6, "clamd-peak-RSS-MB")
		})
	}
}
