package lanetools_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/blobtest"
	"github.com/custodymcp/custody/shared/blob/s3local"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/scan/signature"
	"github.com/custodymcp/custody/shared/server"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/uploads"
)

// fill writes the bytes of a synthetic file at offset off into p (8-byte
// aligned offsets): every 8 bytes their own offset, so no part equals
// another.
func fill(p []byte, off int64) {
	for i := 0; i+8 <= len(p); i += 8 {
		binary.BigEndian.PutUint64(p[i:], uint64(off)+uint64(i))
	}
}

// peakLiveHeap samples the live heap every millisecond until stop is
// called, and returns the peak in bytes.
func peakLiveHeap() (stop func() uint64) {
	samples := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	done, result := make(chan struct{}), make(chan uint64)
	go func() {
		var peak uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(samples)
			peak = max(peak, samples[0].Value.Uint64())
			select {
			case <-done:
				result <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-result }
}

// BenchmarkBeginToComplete512MiB measures the lane end to end on loopback
// (issue 16's closing note): begin_upload_session of a 512 MiB file (32
// parts), the 32 PUTs with net/http, and complete_upload (ListParts,
// CompleteMultipartUpload, the verifying read, the spend, the copy to
// verified/), against cmd/s3local in its own process so the heap sampled
// during complete_upload is this process's: the endpoint and the verifier.
// Hashing the file beforehand (the agent's work) is not timed. Reports
// MB/s begin to complete, MB/s of complete_upload alone, and the peak live
// heap during complete_upload. Run with -benchtime=1x: one iteration
// moves 1.5 GiB through loopback.
func BenchmarkBeginToComplete512MiB(b *testing.B) {
	const size = 512 << 20
	url := blobtest.StartS3Local(b, blobtest.BuildS3Local(b))
	eng, err := blob.New(s3local.NewClient(url), s3local.Buckets, blob.Options{})
	if err != nil {
		b.Fatal(err)
	}
	env := servertest.New(b, servertest.Options{Clock: servertest.NewClock(time.Now()), Limits: generous,
		Lane: &server.LaneConfig{Blob: eng, Buckets: s3local.Buckets, Scanner: signature.New()}})
	ctx := context.Background()
	key, cred, err := auth.Mint(ctx, env.Store, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney,
		Scopes: []auth.Scope{auth.ScopeWrite}}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	env.Keys["writer"] = key
	sess := env.Initialize(b, "writer", rev)
	var total, completeOnly time.Duration
	var peak uint64
	for b.Loop() {
		b.StopTimer()
		buf := make([]byte, uploads.PartSize)
		token, _, err := uploads.MintGrant(ctx, env.Store, uploads.MintRequest{Tenant: seed.DemoTenant, CredentialID: cred.ID,
			Matter: seed.Alvarez, By: seed.DemoAdmin}, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		whole := sha256.New()
		var sums []string
		for off := int64(0); off < size; off += uploads.PartSize {
			p := buf[:min(uploads.PartSize, size-off)]
			fill(p, off)
			whole.Write(p)
			s := sha256.Sum256(p)
			sums = append(sums, base64.StdEncoding.EncodeToString(s[:]))
		}
		runtime.GC()
		b.StartTimer()

		began := time.Now()
		res := sess.Tool(b, uploads.ToolBegin, map[string]any{"grant_token": token, "case_id": seed.Alvarez, "filename": "bench.bin",
			"size_bytes": size, "sha256": hex.EncodeToString(whole.Sum(nil)), "part_sha256": sums})
		var d struct {
			Data struct {
				UploadID string `json:"upload_id"`
				Parts    []struct {
					URL     string            `json:"url"`
					Headers map[string]string `json:"headers"`
				} `json:"parts"`
			} `json:"data"`
		}
		raw, _ := json.Marshal(servertest.Structured(b, res))
		if err := json.Unmarshal(raw, &d); err != nil || d.Data.UploadID == "" {
			b.Fatalf("begin_upload_session: %s", raw)
		}
		for i, p := range d.Data.Parts {
			off := int64(i) * uploads.PartSize
			part := buf[:min(uploads.PartSize, size-off)]
			fill(part, off)
			h := http.Header{}
			for k, v := range p.Headers {
				h.Set(k, v)
			}
			if status, code := blobtest.Send(b, http.MethodPut, p.URL, h, part); status != http.StatusOK {
				b.Fatalf("PUT part %d = %d %s", i+1, status, code)
			}
		}
		buf = nil // the heap sampled below is the endpoint's and the verifier's
		runtime.GC()
		stop := peakLiveHeap()
		completing := time.Now()
		res = sess.Tool(b, uploads.ToolComplete, map[string]any{"grant_token": token, "upload_id": d.Data.UploadID})
		done := time.Now()
		peak = max(peak, stop())
		if sc := servertest.Structured(b, res); sc["status"] != "executed" {
			b.Fatalf("complete_upload: %v", sc)
		}
		total += done.Sub(began)
		completeOnly += done.Sub(completing)
	}
	n := float64(b.N)
	mb := float64(size) / 1e6
	b.ReportMetric(mb*n/total.Seconds(), "MB/s")
	b.ReportMetric(mb*n/completeOnly.Seconds(), "complete-MB/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-live-MiB")
	b.Log(fmt.Sprintf("512 MiB begin to complete in %v (complete_upload %v); peak live heap during complete_upload %.1f MiB",
		(total / time.Duration(b.N)).Round(time.Millisecond), (completeOnly / time.Duration(b.N)).Round(time.Millisecond), float64(peak)/(1<<20)))
}
