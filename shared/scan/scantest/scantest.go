// Package scantest is the conformance suite of the scanner port (package
// scan): Run proves that an engine keeps the port's promises — clean bytes
// are clean, the EICAR test file is infected, and every way a scan can go
// wrong is failed, never clean — so the signature engine and the clamd
// engine behave the same (docs/decisions.md "Scanning"). Each engine's tests call
// Run with a Harness building it.
//
// The suite tests only what the port promises, never an engine's
// internals, and has no engine-specific skips. The object bytes it scans
// are assembled at run time (the EICAR file from scan.EICAR, never from a
// committed copy).
//
// The package also holds Faulty, a decorator that breaks a real engine on
// demand, for tests of what uses a scanner (the lane, the gate): a
// decorator over a real engine, never a mock (docs/decisions.md "Pipeline
// choices").
package scantest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/custodymcp/custody/shared/scan"
)

// Harness builds the engines the suite runs. Both functions are called once
// per leaf test, possibly from parallel tests, and register any cleanup on
// t.
type Harness struct {
	// New returns a working engine, posture ARMED.
	New func(t *testing.T) scan.Scanner
	// Broken returns an engine of the same kind that cannot give verdicts:
	// its daemon stopped or unreachable, its self-test failing.
	Broken func(t *testing.T) scan.Scanner
}

// Run runs the conformance suite.
func Run(t *testing.T, h Harness) {
	if h.New == nil || h.Broken == nil {
		t.Fatal("scantest.Run needs both Harness.New and Harness.Broken")
	}
	groups := []struct {
		name  string
		tests []test
	}{
		{"Verdicts", verdictTests(h)},
		{"Requests", requestTests(h)},
		{"Sources", sourceTests(h)},
		{"Broken", brokenTests(h)},
		{"Concurrency", concurrencyTests(h)},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.fn(t)
				})
			}
		})
	}
}

type test struct {
	name string
	fn   func(t *testing.T)
}

// CleanSamples are objects no engine may call infected: empty, short text,
// a PDF header, and pseudo-random bytes spanning several 64 KiB chunks.
func CleanSamples() map[string][]byte {
	return map[string][]byte{
		"empty":              {},
		"short text":         []byte("Privileged and confidential: draft settlement terms.\n"),
		"a PDF header":       []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"),
		"300 KiB of noise":   Noise(300<<10, 1),
		"one 64 KiB chunk":   Noise(64<<10, 2),
		"one byte past it":   Noise(64<<10+1, 3),
		"EICAR minus a byte": scan.EICAR()[:scan.EICARLen-1],
	}
}

// Noise returns n pseudo-random bytes from seed: incompressible, with no
// file type an engine would recognise.
func Noise(n int, seed uint64) []byte {
	var key [32]byte
	key[0] = byte(seed)
	key[1] = byte(seed >> 8)
	r := rand.NewChaCha8(key)
	b := make([]byte, n)
	r.Read(b)
	return b
}

// Agree fails t unless v and err keep the port's pairing: err != nil
// exactly when v.Result is scan.Failed, v.Engine named, Threats only (and
// at least one) on Infected, Reason only (and always) on Failed.
func Agree(t testing.TB, v scan.Verdict, err error) {
	t.Helper()
	switch v.Result {
	case scan.Clean:
		if err != nil || len(v.Threats) > 0 || v.Reason != "" {
			t.Errorf("clean verdict %+v with error %v: want no error, threats or reason", v, err)
		}
	case scan.Infected:
		if err != nil || len(v.Threats) == 0 || v.Reason != "" {
			t.Errorf("infected verdict %+v with error %v: want threats, no error or reason", v, err)
		}
	case scan.Failed:
		if err == nil || v.Reason == "" || len(v.Threats) > 0 {
			t.Errorf("failed verdict %+v with error %v: want an error and a reason, no threats", v, err)
		}
	default:
		t.Errorf("verdict result %q (error %v): want clean, infected or failed", v.Result, err)
	}
	if v.Engine == "" {
		t.Errorf("verdict %+v names no engine", v)
	}
	if v.Passed() != (v.Result == scan.Clean) {
		t.Errorf("verdict %+v: Passed() = %v", v, v.Passed())
	}
}

// scanBytes scans b through a counting opener and checks the pairing and
// that every reader was closed.
func scanBytes(t *testing.T, s scan.Scanner, b []byte) (scan.Verdict, error) {
	t.Helper()
	o := &countingOpener{inner: scan.Bytes(b)}
	v, err := s.Scan(context.Background(), o.Open, int64(len(b)))
	Agree(t, v, err)
	if opened, closed := o.opened.Load(), o.closed.Load(); opened != closed {
		t.Errorf("Scan opened %d readers and closed %d", opened, closed)
	}
	return v, err
}

func verdictTests(h Harness) []test {
	tests := []test{
		{"the EICAR test file is infected, with a threat name", func(t *testing.T) {
			s := h.New(t)
			v, err := scanBytes(t, s, scan.EICAR())
			if v.Result != scan.Infected {
				t.Errorf("Scan(EICAR) = %+v, %v; want infected", v, err)
			}
		}},
		{"the posture of a working engine is ARMED", func(t *testing.T) {
			if got := h.New(t).Posture(context.Background()); got != scan.Armed {
				t.Errorf("Posture() = %s, want ARMED", got)
			}
		}},
		{"MaxBytes is positive", func(t *testing.T) {
			if got := h.New(t).MaxBytes(); got <= 0 {
				t.Errorf("MaxBytes() = %d, want > 0", got)
			}
		}},
		{"an object of exactly MaxBytes is not refused as too large", func(t *testing.T) {
			s := h.New(t)
			// The reader fails at once: the point is that the size check
			// lets MaxBytes through and the engine then opens the object.
			o := &countingOpener{inner: func(context.Context) (io.ReadCloser, error) {
				return io.NopCloser(failingReader{}), nil
			}}
			v, err := s.Scan(context.Background(), o.Open, s.MaxBytes())
			Agree(t, v, err)
			if errors.Is(err, scan.ErrTooLarge) || o.opened.Load() == 0 {
				t.Errorf("Scan(size = MaxBytes) = %+v, %v (opened %d); want it opened, not ErrTooLarge", v, err, o.opened.Load())
			}
			if v.Result != scan.Failed {
				t.Errorf("Scan of a failing reader = %+v, want failed", v)
			}
		}},
	}
	for name, b := range CleanSamples() {
		tests = append(tests, test{fmt.Sprintf("%s (%d bytes) is clean", name, len(b)), func(t *testing.T) {
			v, err := scanBytes(t, h.New(t), b)
			if v.Result != scan.Clean {
				t.Errorf("Scan(%s) = %+v, %v; want clean", name, v, err)
			}
		}})
	}
	return tests
}

func requestTests(h Harness) []test {
	return []test{
		{"a size above MaxBytes is failed with ErrTooLarge and the object is never opened", func(t *testing.T) {
			s := h.New(t)
			o := &countingOpener{inner: scan.Bytes(nil)}
			v, err := s.Scan(context.Background(), o.Open, s.MaxBytes()+1)
			Agree(t, v, err)
			if !errors.Is(err, scan.ErrTooLarge) {
				t.Errorf("Scan(MaxBytes+1) error = %v, want ErrTooLarge", err)
			}
			if n := o.opened.Load(); n != 0 {
				t.Errorf("the object was opened %d times, want 0", n)
			}
		}},
		{"a negative size is failed with ErrInvalid", func(t *testing.T) {
			v, err := h.New(t).Scan(context.Background(), scan.Bytes(nil), -1)
			Agree(t, v, err)
			if !errors.Is(err, scan.ErrInvalid) {
				t.Errorf("Scan(size -1) error = %v, want ErrInvalid", err)
			}
		}},
		{"a nil opener is failed with ErrInvalid", func(t *testing.T) {
			v, err := h.New(t).Scan(context.Background(), nil, 0)
			Agree(t, v, err)
			if !errors.Is(err, scan.ErrInvalid) {
				t.Errorf("Scan(nil opener) error = %v, want ErrInvalid", err)
			}
		}},
		{"a cancelled context is failed, never clean", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			b := Noise(256<<10, 7)
			v, err := h.New(t).Scan(ctx, scan.Bytes(b), int64(len(b)))
			Agree(t, v, err)
			if v.Result != scan.Failed || !errors.Is(err, context.Canceled) {
				t.Errorf("Scan(cancelled) = %+v, %v; want failed wrapping context.Canceled", v, err)
			}
		}},
	}
}

func sourceTests(h Harness) []test {
	var tests []test
	for _, content := range []struct {
		name string
		b    []byte
	}{
		{"clean bytes", Noise(200<<10, 11)},
		{"the EICAR file", scan.EICAR()},
	} {
		b := content.b
		cases := []struct {
			name string
			open scan.Opener
			size int64
		}{
			{"an opener that fails", func(context.Context) (io.ReadCloser, error) {
				return nil, errors.New("object store down")
			}, int64(len(b))},
			{"a reader that fails midway", func(context.Context) (io.ReadCloser, error) {
				return io.NopCloser(io.MultiReader(bytes.NewReader(b[:len(b)/2]), failingReader{})), nil
			}, int64(len(b))},
			{"a reader that ends before the declared size", scan.Bytes(b[:len(b)-1]), int64(len(b))},
			{"a reader holding more than the declared size", scan.Bytes(append(append([]byte{}, b...), ' ')), int64(len(b))},
			{"a declared size smaller than the reader", scan.Bytes(b), int64(len(b) - 1)},
		}
		for _, c := range cases {
			tests = append(tests, test{fmt.Sprintf("%s from %s is failed with ErrSource, never clean", content.name, c.name), func(t *testing.T) {
				o := &countingOpener{inner: c.open}
				v, err := h.New(t).Scan(context.Background(), o.Open, c.size)
				Agree(t, v, err)
				if v.Result != scan.Failed || !errors.Is(err, scan.ErrSource) {
					t.Errorf("Scan() = %+v, %v; want failed wrapping ErrSource", v, err)
				}
				if opened, closed := o.opened.Load(), o.closed.Load(); opened != closed {
					t.Errorf("Scan opened %d readers and closed %d", opened, closed)
				}
			}})
		}
	}
	return tests
}

func brokenTests(h Harness) []test {
	return []test{
		{"a broken engine's posture is BROKEN", func(t *testing.T) {
			if got := h.Broken(t).Posture(context.Background()); got != scan.Broken {
				t.Errorf("Posture() = %s, want BROKEN", got)
			}
		}},
		{"a broken engine fails clean bytes with ErrUnavailable", func(t *testing.T) {
			v, err := scanBytes(t, h.Broken(t), []byte("nothing to see"))
			if v.Result != scan.Failed || !errors.Is(err, scan.ErrUnavailable) {
				t.Errorf("Scan() = %+v, %v; want failed wrapping ErrUnavailable", v, err)
			}
		}},
		{"a broken engine fails the EICAR file with ErrUnavailable", func(t *testing.T) {
			v, err := scanBytes(t, h.Broken(t), scan.EICAR())
			if v.Result != scan.Failed || !errors.Is(err, scan.ErrUnavailable) {
				t.Errorf("Scan() = %+v, %v; want failed wrapping ErrUnavailable", v, err)
			}
		}},
	}
}

func concurrencyTests(h Harness) []test {
	return []test{
		{"32 scans at once, clean and EICAR interleaved, each get their own verdict", func(t *testing.T) {
			s := h.New(t)
			const n = 32
			var wg sync.WaitGroup
			results := make([]scan.Verdict, n)
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					b := scan.EICAR()
					if i%2 == 1 {
						b = Noise(40<<10, uint64(100+i))
					}
					results[i], errs[i] = s.Scan(context.Background(), scan.Bytes(b), int64(len(b)))
				})
			}
			wg.Wait()
			for i := range n {
				Agree(t, results[i], errs[i])
				want := scan.Infected
				if i%2 == 1 {
					want = scan.Clean
				}
				if results[i].Result != want {
					t.Errorf("scan %d = %+v, %v; want %s", i, results[i], errs[i], want)
				}
			}
		}},
	}
}

type countingOpener struct {
	inner          scan.Opener
	opened, closed atomic.Int64
}

func (o *countingOpener) Open(ctx context.Context) (io.ReadCloser, error) {
	rc, err := o.inner(ctx)
	if err != nil {
		return nil, err
	}
	o.opened.Add(1)
	return &closeCounter{ReadCloser: rc, n: &o.closed}, nil
}

type closeCounter struct {
	io.ReadCloser
	n    *atomic.Int64
	once sync.Once
}

func (c *closeCounter) Close() error {
	c.once.Do(func() { c.n.Add(1) })
	return c.ReadCloser.Close()
}

// failingReader fails every read, as a dropped object-store connection
// does.
type failingReader struct{}

func (failingReader) Read([]byte) (int, error) {
	return 0, errors.New("connection to the object store reset")
}
