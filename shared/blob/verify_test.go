package blob_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/blobtest"
	"github.com/custodymcp/custody/shared/blob/s3local"
)

// heapSampler records the peak of the heap while something runs, from
// runtime/metrics every millisecond: live heap as of the last GC, and all
// heap object bytes (live and not yet swept), which bounds the live heap
// from above between GCs.
type heapSampler struct {
	stop chan struct{}
	done chan struct{}

	peakLive, peakObjects uint64
}

func sampleHeap() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	samples := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	read := func() {
		metrics.Read(samples)
		h.peakLive = max(h.peakLive, samples[0].Value.Uint64())
		h.peakObjects = max(h.peakObjects, samples[1].Value.Uint64())
	}
	read()
	go func() {
		defer close(h.done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-h.stop:
				read()
				return
			case <-tick.C:
				read()
			}
		}
	}()
	return h
}

// Stop ends the sampling and returns the peaks in bytes.
func (h *heapSampler) Stop() (live, objects uint64) {
	close(h.stop)
	<-h.done
	return h.peakLive, h.peakObjects
}

// patternObject is a deterministic object made on the fly: one random MiB
// (a fixed seed) repeated, each MiB stamped with its index so no two are
// alike. A flipped bit anywhere changes its digest.
type patternObject struct{ block []byte }

func newPatternObject() patternObject {
	block := make([]byte, 1<<20)
	r := rand.NewChaCha8([32]byte{'c', 'u', 's', 't', 'o', 'd', 'y'})
	_, _ = r.Read(block)
	return patternObject{block: block}
}

// fill writes the object's bytes from offset off (a multiple of 1 MiB)
// into p (a multiple of 1 MiB long).
func (o patternObject) fill(p []byte, off int64) {
	for i := 0; i < len(p); i += len(o.block) {
		copy(p[i:], o.block)
		binary.BigEndian.PutUint64(p[i:], uint64(off)+uint64(i))
	}
}

// upload puts size bytes of obj at a fresh incoming key as a multipart
// upload of partSize parts, each PUT with net/http to its presigned URL,
// and returns the ref and the object's SHA-256.
func upload(t testing.TB, e blob.Store, obj patternObject, size, partSize int64) (blob.Ref, [sha256.Size]byte) {
	t.Helper()
	ctx := t.Context()
	up, err := e.CreateMultipartUpload(ctx, blob.Incoming(blob.NewID()), blob.CreateOptions{})
	if err != nil {
		t.Fatalf("CreateMultipartUpload = %v", err)
	}
	whole := sha256.New()
	buf := make([]byte, partSize)
	for n, off := int32(1), int64(0); off < size; n, off = n+1, off+partSize {
		p := buf[:min(partSize, size-off)]
		obj.fill(p, off)
		whole.Write(p)
		sum := sha256.Sum256(p)
		req, err := e.PresignUploadPart(ctx, up, blob.PartRequest{
			PartNumber: n, Size: int64(len(p)), ChecksumSHA256: base64.StdEncoding.EncodeToString(sum[:]), Expires: 30 * time.Minute,
		})
		if err != nil {
			t.Fatalf("PresignUploadPart(%d) = %v", n, err)
		}
		if status, code := blobtest.Send(t, req.Method, req.URL, req.Header, p); status != http.StatusOK {
			t.Fatalf("PUT part %d = %d %s", n, status, code)
		}
	}
	parts, err := e.ListParts(ctx, up)
	if err != nil {
		t.Fatalf("ListParts = %v", err)
	}
	if err := e.CompleteMultipartUpload(ctx, up, parts); err != nil {
		t.Fatalf("CompleteMultipartUpload = %v", err)
	}
	return up.Ref, [sha256.Size]byte(whole.Sum(nil))
}

// TestVerifyStreams512MiBFromAnotherProcessInUnder64MiBOfHeap is docs/contracts.md
// §5's bound: complete_upload reads an upload of up to 1 GiB back through
// SHA-256 inside a Lambda, so memory must not grow with the object. The
// object is served by s3local in its own process (objects in a folder),
// so the heap sampled here is the verifier's alone. Skipped under -short.
func TestVerifyStreams512MiBFromAnotherProcessInUnder64MiBOfHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the 512 MiB verification under -short")
	}
	const size, limit = 512 << 20, 64 << 20
	url := blobtest.StartS3Local(t, blobtest.BuildS3Local(t), "-dir", t.TempDir())
	e, err := blob.New(s3local.NewClient(url), s3local.Buckets, blob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref, sum := upload(t, e, newPatternObject(), size, 16<<20)

	runtime.GC()
	heap := sampleHeap()
	start := time.Now()
	err = blob.Verify(t.Context(), e, ref, size, sum)
	elapsed := time.Since(start)
	live, objects := heap.Stop()
	if err != nil {
		t.Fatalf("Verify(the object's size and SHA-256) = %v, want nil", err)
	}
	t.Logf("verified %d MiB in %v (%.0f MB/s); peak live heap %.1f MiB, peak heap objects %.1f MiB",
		size>>20, elapsed.Round(time.Millisecond), float64(size)/1e6/elapsed.Seconds(), float64(live)/(1<<20), float64(objects)/(1<<20))
	if objects >= limit {
		t.Errorf("peak heap objects during Verify = %.1f MiB, want under %d MiB", float64(objects)/(1<<20), limit>>20)
	}

	wrong := sum
	wrong[sha256.Size-1] ^= 0x80
	if err := blob.Verify(t.Context(), e, ref, size, wrong); !errors.Is(err, blob.ErrMismatch) {
		t.Errorf("Verify(a wrong declared SHA-256) = %v, want ErrMismatch", err)
	}
}

// cutShort serves GETs of objects only half their body, then drops the
// connection: a network failure mid-stream.
func cutShort(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Query().Has("uploadId") {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&halfWriter{ResponseWriter: w}, r)
	})
}

type halfWriter struct {
	http.ResponseWriter
	sent, limit int64
}

func (h *halfWriter) WriteHeader(code int) {
	if n, err := parseLength(h.Header().Get("Content-Length")); err == nil {
		h.limit = n / 2
	}
	h.ResponseWriter.WriteHeader(code)
}

func (h *halfWriter) Write(p []byte) (int, error) {
	if h.limit > 0 && h.sent+int64(len(p)) > h.limit {
		n, _ := h.ResponseWriter.Write(p[:h.limit-h.sent])
		h.sent += int64(n)
		panic(http.ErrAbortHandler) // closes the connection mid-body
	}
	n, err := h.ResponseWriter.Write(p)
	h.sent += int64(n)
	return n, err
}

func parseLength(s string) (int64, error) {
	var n int64
	if s == "" {
		return 0, errors.New("no length")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("not a length")
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}

func TestVerifyOfAStreamCutShortIsErrUnavailableNotAMismatch(t *testing.T) {
	srv, err := s3local.New(s3local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(cutShort(srv))
	t.Cleanup(hs.Close)
	e, err := blob.New(s3local.NewClient(hs.URL), s3local.Buckets, blob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref := blob.Incoming(blob.NewID())
	body := blobtest.Pattern(3<<20, 7)
	if err := e.PutObject(t.Context(), ref, bytes.NewReader(body), blob.PutOptions{}); err != nil {
		t.Fatalf("PutObject = %v", err)
	}
	err = blob.Verify(t.Context(), e, ref, int64(len(body)), sha256.Sum256(body))
	if !errors.Is(err, blob.ErrUnavailable) || errors.Is(err, blob.ErrMismatch) {
		t.Fatalf("Verify of a cut stream = %v, want ErrUnavailable and not ErrMismatch (a mismatch deletes the upload)", err)
	}
}

// BenchmarkVerify measures the verifier's throughput over loopback against
// s3local in its own process (MB/s, from b.SetBytes, for a 256 MiB object)
// and reports the peak heap objects of this process while verifying
// (peak-heap-MiB).
func BenchmarkVerify(b *testing.B) {
	const size = 256 << 20
	url := blobtest.StartS3Local(b, blobtest.BuildS3Local(b), "-dir", b.TempDir())
	e, err := blob.New(s3local.NewClient(url), s3local.Buckets, blob.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ref, sum := upload(b, e, newPatternObject(), size, 16<<20)
	runtime.GC()
	b.SetBytes(size)
	heap := sampleHeap()
	b.ResetTimer()
	for b.Loop() {
		if err := blob.Verify(b.Context(), e, ref, size, sum); err != nil {
			b.Fatalf("Verify = %v", err)
		}
	}
	b.StopTimer()
	_, objects := heap.Stop()
	b.ReportMetric(float64(objects)/(1<<20), "peak-heap-MiB")
}
