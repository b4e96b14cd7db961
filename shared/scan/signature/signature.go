// Package signature is the dev server's default scanning engine: it knows
// one file, the EICAR Standard Anti-Virus Test File, and recognises it by
// content, never by name, exactly as the file's specification defines it.
// It exists so that the upload lane, the scan gate and quarantine can be
// tried end to end on a laptop with nothing installed; it finds no real
// malware and is never the engine of a deployed stack (docs/decisions.md
// "Scanning": GuardDuty there, clamd in CI).
//
// The rule (eicar.org, "Anti Malware Testfile"): a file is the test file
// when it starts with the 68-character test string, optionally followed by
// white space — space, tab, LF, CR, Ctrl-Z — for at most 128 bytes in all.
// A longer file that merely contains the string is not the test file (and
// this engine, like ClamAV's hash signature for it, calls it clean).
package signature

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/custodymcp/custody/shared/scan"
)

// Name is the engine's name in verdicts.
const Name = "signature"

// MaxBytes is the largest object the engine accepts: the lane's own cap
// (1 GiB, docs/decisions.md "Time and size constants"), since the engine has no
// limit of its own.
const MaxBytes int64 = 1 << 30

// MaxTestFileLen is the EICAR specification's bound on the test file's
// length, trailing white space included.
const MaxTestFileLen = 128

// Engine is the signature engine. The zero value is ready; it is safe for
// concurrent use.
type Engine struct{}

var _ scan.Scanner = Engine{}

// New returns the engine.
func New() Engine { return Engine{} }

// Scan reads the whole object (so a reader that fails, ends early or runs
// long is failed with scan.ErrSource even after the first 128 bytes) and
// answers infected, with threat scan.EICARThreat, when it is the EICAR test
// file, clean otherwise. Errors as the port's (scan.Scanner).
func (Engine) Scan(ctx context.Context, open scan.Opener, size int64) (scan.Verdict, error) {
	if reason, err := scan.CheckRequest(open, size, MaxBytes); err != nil {
		return scan.Fail(Name, reason, err)
	}
	if err := ctx.Err(); err != nil {
		return cancelled(err)
	}
	rc, err := open(ctx)
	if err != nil {
		return scan.Fail(Name, "object could not be read", fmt.Errorf("%w: open: %w", scan.ErrSource, err))
	}
	defer rc.Close()
	r := scan.Exact(&ctxReader{ctx: ctx, r: rc}, size)
	head := make([]byte, min(size, MaxTestFileLen))
	if _, err := io.ReadFull(r, head); err != nil {
		return readFailed(ctx, err)
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return readFailed(ctx, err)
	}
	if size <= MaxTestFileLen && IsTestFile(head) {
		return scan.Verdict{Result: scan.Infected, Engine: Name, Threats: []string{scan.EICARThreat}}, nil
	}
	return scan.Verdict{Result: scan.Clean, Engine: Name}, nil
}

// Posture is always ARMED: the engine's one signature is compiled in, so
// its self-test cannot fail.
func (Engine) Posture(context.Context) scan.Posture { return scan.Armed }

// MaxBytes returns MaxBytes.
func (Engine) MaxBytes() int64 { return MaxBytes }

// IsTestFile reports whether b is the EICAR test file: the 68-byte test
// string, then only space, tab, LF, CR or Ctrl-Z, at most 128 bytes in all
// (eicar.org's specification of the file).
func IsTestFile(b []byte) bool {
	if len(b) < scan.EICARLen || len(b) > MaxTestFileLen {
		return false
	}
	if !bytes.Equal(b[:scan.EICARLen], scan.EICAR()) {
		return false
	}
	for _, c := range b[scan.EICARLen:] {
		switch c {
		case ' ', '\t', '\n', '\r', 0x1a:
		default:
			return false
		}
	}
	return true
}

func readFailed(ctx context.Context, err error) (scan.Verdict, error) {
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return cancelled(ctxErr)
	}
	return scan.Fail(Name, "object could not be read", err)
}

func cancelled(err error) (scan.Verdict, error) {
	return scan.Fail(Name, "scan cancelled or timed out", fmt.Errorf("%w: %w", scan.ErrUnavailable, err))
}

// ctxReader stops reading once ctx is done, so a long object does not
// outlive its caller's deadline.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
