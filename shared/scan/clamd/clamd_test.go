package clamd_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/clamd"
	"github.com/custodymcp/custody/shared/scan/clamdtest"
	"github.com/custodymcp/custody/shared/scan/scantest"
)

// fast keeps retries quick in tests; every other option is the default.
var fast = clamd.Options{Backoff: 10 * time.Millisecond}

func TestConformance(t *testing.T) {
	srv := clamdtest.Start(t, clamdtest.Config{})
	stopped := clamdtest.Start(t, clamdtest.Config{})
	if err := stopped.Stop(); err != nil {
		t.Fatal(err)
	}
	scantest.Run(t, scantest.Harness{
		New:    func(t *testing.T) scan.Scanner { return srv.Engine(t, fast) },
		Broken: func(t *testing.T) scan.Scanner { return stopped.Engine(t, fast) },
	})
}

// By content, never by name: the file names are the ones a filename check
// would get wrong both ways, and the engine never sees them.
func TestVerdictsByContentNotName(t *testing.T) {
	srv := clamdtest.Start(t, clamdtest.Config{})
	e := srv.Engine(t, fast)
	dir := t.TempDir()
	tests := []struct {
		name    string
		file    string
		content []byte
		want    scan.Verdict
	}{
		{"the EICAR file named brief.pdf is infected", "brief.pdf", scan.EICAR(),
			scan.Verdict{Result: scan.Infected, Engine: clamd.Name, Threats: []string{clamdtest.EICARThreat}}},
		{"a clean file named eicar.com is clean", "eicar.com", []byte("Minutes of the 3 March hearing.\n"),
			scan.Verdict{Result: scan.Clean, Engine: clamd.Name}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.file)
			if err := os.WriteFile(p, tc.content, 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			v, err := e.Scan(context.Background(), scan.ReaderAt(f, int64(len(tc.content))), int64(len(tc.content)))
			scantest.Agree(t, v, err)
			if diff := cmp.Diff(tc.want, v); diff != "" {
				t.Errorf("Scan(%s) verdict (-want +got):\n%s", tc.file, diff)
			}
		})
	}
}

// clamd killed while the object streams: the attempt breaks, the retries
// find nothing answering PING, and the verdict is failed, never clean.
func TestKilledMidStreamIsFailed(t *testing.T) {
	srv := clamdtest.Start(t, clamdtest.Config{})
	e := srv.Engine(t, fast)
	if p := e.Posture(context.Background()); p != scan.Armed {
		t.Fatalf("Posture() = %s before the kill, want ARMED", p)
	}
	object := scantest.Noise(8<<20, 21)
	started, proceed := make(chan struct{}), make(chan struct{})
	var opens atomic.Int32
	open := func(context.Context) (io.ReadCloser, error) {
		if opens.Add(1) == 1 {
			return io.NopCloser(&pausingReader{b: object, pauseAt: 1 << 20, started: started, proceed: proceed}), nil
		}
		return scan.Bytes(object)(context.Background())
	}
	type result struct {
		v   scan.Verdict
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := e.Scan(context.Background(), open, int64(len(object)))
		done <- result{v, err}
	}()
	<-started
	srv.Kill()
	close(proceed)
	r := <-done
	scantest.Agree(t, r.v, r.err)
	if r.v.Result != scan.Failed || !errors.Is(r.err, scan.ErrUnavailable) {
		t.Errorf("Scan() = %+v, %v; want failed wrapping ErrUnavailable", r.v, r.err)
	}
	if p := e.Posture(context.Background()); p != scan.Broken {
		t.Errorf("Posture() = %s after the failed scan, want BROKEN", p)
	}
}

// A clamd whose limits are smaller than the object: with AlertExceedsMax
// yes it answers Heuristics.Limits.Exceeded.*, which is failed (not
// infected, and not retried); a stream over StreamMaxLength is answered
// "INSTREAM size limit exceeded", failed after three attempts.
func TestOverClamdLimitsIsFailed(t *testing.T) {
	object := scantest.Noise(2<<20, 31)
	tests := []struct {
		name       string
		config     clamdtest.Config
		wantReason string
		wantOpens  int32
	}{
		{
			"a file above MaxFileSize is failed, not infected",
			clamdtest.Config{MaxFileSize: "1M"},
			"engine limit exceeded: Heuristics.Limits.Exceeded.MaxFileSize", 1,
		},
		{
			"a stream above StreamMaxLength is failed after three attempts",
			clamdtest.Config{StreamMaxLength: "1M"},
			"engine limit exceeded: StreamMaxLength", clamd.DefaultAttempts,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := clamdtest.Start(t, tc.config)
			// The engine's max stays 64M: the limit met is clamd's own.
			e := srv.Engine(t, clamd.Options{Max: 64 << 20, Backoff: 10 * time.Millisecond})
			var opens atomic.Int32
			open := func(ctx context.Context) (io.ReadCloser, error) {
				opens.Add(1)
				return scan.Bytes(object)(ctx)
			}
			v, err := e.Scan(context.Background(), open, int64(len(object)))
			scantest.Agree(t, v, err)
			if v.Result != scan.Failed || !errors.Is(err, scan.ErrLimits) {
				t.Errorf("Scan() = %+v, %v; want failed wrapping ErrLimits", v, err)
			}
			if v.Reason != tc.wantReason {
				t.Errorf("Reason = %q, want %q", v.Reason, tc.wantReason)
			}
			if got := opens.Load(); got != tc.wantOpens {
				t.Errorf("the object was opened %d times, want %d", got, tc.wantOpens)
			}
			// Limits are the object's, not the engine's fault.
			if p := e.Posture(context.Background()); p != scan.Armed {
				t.Errorf("Posture() = %s, want ARMED", p)
			}
		})
	}
}

// A clamd that cannot detect EICAR is BROKEN and its verdicts are failed,
// never clean: with an empty custody.hdb clamd refuses to start (then PING
// fails); with a database lacking the EICAR signature it starts and
// answers OK to everything (then the self-test fails).
func TestWithoutTheEICARSignatureIsBroken(t *testing.T) {
	other := []byte("not the test file")
	sum := md5.Sum(other)
	tests := []struct {
		name       string
		signatures []string
	}{
		{"an empty signature file", []string{}},
		{"a signature file without EICAR", []string{hex.EncodeToString(sum[:]) + ":17:Custody.Test.Other"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, startErr := clamdtest.TryStart(t, clamdtest.Config{Signatures: tc.signatures})
			if startErr != nil {
				t.Logf("clamd did not start: %v", startErr)
			}
			e := srv.Engine(t, fast)
			if err := e.Check(context.Background()); !errors.Is(err, scan.ErrUnavailable) {
				t.Errorf("Check() = %v, want ErrUnavailable", err)
			}
			if p := e.Posture(context.Background()); p != scan.Broken {
				t.Errorf("Posture() = %s, want BROKEN", p)
			}
			for name, b := range map[string][]byte{"clean bytes": []byte("a letter of engagement"), "the EICAR file": scan.EICAR()} {
				v, err := e.Scan(context.Background(), scan.Bytes(b), int64(len(b)))
				scantest.Agree(t, v, err)
				if v.Result != scan.Failed || !errors.Is(err, scan.ErrUnavailable) {
					t.Errorf("Scan(%s) = %+v, %v; want failed wrapping ErrUnavailable", name, v, err)
				}
			}
		})
	}
}

// clamd stopped after the engine saw it ARMED: the cached posture is a hint
// for 30 s, a scan finds the truth (failed) and drops it, and a fresh check
// after 30 s says BROKEN on its own.
func TestStoppedClamd(t *testing.T) {
	ctx := context.Background()
	t.Run("verdicts are failed and the posture turns BROKEN", func(t *testing.T) {
		srv := clamdtest.Start(t, clamdtest.Config{})
		clock := newClock()
		e := srv.Engine(t, clamd.Options{Backoff: 10 * time.Millisecond, Now: clock.Now})
		if p := e.Posture(ctx); p != scan.Armed {
			t.Fatalf("Posture() = %s, want ARMED", p)
		}
		if err := srv.Stop(); err != nil {
			t.Fatal(err)
		}
		if p := e.Posture(ctx); p != scan.Armed {
			t.Errorf("Posture() = %s right after the stop, want the cached ARMED", p)
		}
		b := []byte("a clean memo")
		v, err := e.Scan(ctx, scan.Bytes(b), int64(len(b)))
		scantest.Agree(t, v, err)
		if v.Result != scan.Failed || !errors.Is(err, scan.ErrUnavailable) {
			t.Errorf("Scan() = %+v, %v; want failed wrapping ErrUnavailable", v, err)
		}
		if p := e.Posture(ctx); p != scan.Broken {
			t.Errorf("Posture() = %s after the failed scan, want BROKEN", p)
		}
	})
	t.Run("the cached posture lasts 30 s", func(t *testing.T) {
		srv := clamdtest.Start(t, clamdtest.Config{})
		clock := newClock()
		e := srv.Engine(t, clamd.Options{Now: clock.Now})
		if p := e.Posture(ctx); p != scan.Armed {
			t.Fatalf("Posture() = %s, want ARMED", p)
		}
		if err := srv.Stop(); err != nil {
			t.Fatal(err)
		}
		clock.Advance(clamd.DefaultPostureTTL - time.Second)
		if p := e.Posture(ctx); p != scan.Armed {
			t.Errorf("Posture() = %s 29 s on, want the cached ARMED", p)
		}
		clock.Advance(time.Second)
		if p := e.Posture(ctx); p != scan.Broken {
			t.Errorf("Posture() = %s 30 s on, want BROKEN", p)
		}
	})
}

// Many goroutines asking the posture of a fresh engine at once all get
// ARMED (one check runs, the others wait for its answer).
func TestPostureUnderConcurrency(t *testing.T) {
	srv := clamdtest.Start(t, clamdtest.Config{})
	e := srv.Engine(t, fast)
	var wg sync.WaitGroup
	got := make([]scan.Posture, 24)
	for i := range got {
		wg.Go(func() { got[i] = e.Posture(context.Background()) })
	}
	wg.Wait()
	for i, p := range got {
		if p != scan.Armed {
			t.Errorf("Posture() #%d = %s, want ARMED", i, p)
		}
	}
}

// pausingReader yields b, stopping once at pauseAt: it closes started and
// waits for proceed.
type pausingReader struct {
	b                []byte
	off, pauseAt     int
	started, proceed chan struct{}
	paused           bool
}

func (p *pausingReader) Read(buf []byte) (int, error) {
	if p.off >= len(p.b) {
		return 0, io.EOF
	}
	if !p.paused && p.off >= p.pauseAt {
		p.paused = true
		close(p.started)
		<-p.proceed
	}
	end := len(p.b)
	if !p.paused {
		end = min(end, p.pauseAt)
	}
	n := copy(buf, p.b[p.off:end])
	p.off += n
	return n, nil
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
