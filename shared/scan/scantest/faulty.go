package scantest

import (
	"context"
	"fmt"
	"sync"

	"github.com/custodymcp/custody/shared/scan"
)

// Faulty is a scan.Scanner decorating a real engine that can be broken and
// healed while in use: broken, its posture is BROKEN and every Scan is
// failed with an error wrapping scan.ErrUnavailable (and the error given to
// Break) without reaching the engine, as a stopped daemon's would be. It
// counts the scans that reached the engine. Safe for concurrent use.
type Faulty struct {
	inner  scan.Scanner
	engine string

	mu     sync.Mutex
	broken error
	scans  int
}

var _ scan.Scanner = (*Faulty)(nil)

// NewFaulty returns a working Faulty over inner, whose failed verdicts
// name engine.
func NewFaulty(inner scan.Scanner, engine string) *Faulty {
	return &Faulty{inner: inner, engine: engine}
}

// Break makes every later call fail; cause (may be nil) is wrapped in the
// scan errors.
func (f *Faulty) Break(cause error) {
	if cause == nil {
		cause = fmt.Errorf("engine stopped")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.broken = cause
}

// Heal undoes Break.
func (f *Faulty) Heal() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.broken = nil
}

// Scans is the number of scans that reached the engine.
func (f *Faulty) Scans() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.scans
}

// Scan fails when broken, else asks the engine.
func (f *Faulty) Scan(ctx context.Context, open scan.Opener, size int64) (scan.Verdict, error) {
	f.mu.Lock()
	broken := f.broken
	if broken == nil {
		f.scans++
	}
	f.mu.Unlock()
	if broken != nil {
		return scan.Fail(f.engine, "engine unavailable", fmt.Errorf("%w: %w", scan.ErrUnavailable, broken))
	}
	return f.inner.Scan(ctx, open, size)
}

// Posture is BROKEN when broken, else the engine's.
func (f *Faulty) Posture(ctx context.Context) scan.Posture {
	f.mu.Lock()
	broken := f.broken
	f.mu.Unlock()
	if broken != nil {
		return scan.Broken
	}
	return f.inner.Posture(ctx)
}

// MaxBytes is the engine's.
func (f *Faulty) MaxBytes() int64 { return f.inner.MaxBytes() }
