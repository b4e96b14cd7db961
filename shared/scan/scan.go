// Package scan is Custody's malware-scanner port: the one question the
// upload lane and the scan gate ask of an engine ("is this object clean?")
// and the one status they report about it (its posture).
//
// Three engines implement it, each a sibling package: signature (the dev
// server's default, which knows only the EICAR test file), clamd (ClamAV's
// daemon over TCP: CI's real engine and a dev-server option) and guardduty
// (Amazon GuardDuty Malware Protection for S3, the deployed stack's, which
// scans objects where they are stored and answers by event). The suite in
// scantest is the contract the byte-scanning engines pass; this file states
// it in prose (docs/contracts.md §5, docs/decisions.md "Scanning").
//
// # Verdicts
//
// Scan answers one Verdict: clean, infected or failed. Only Clean lets an
// object go on to intake; infected objects are quarantined; failed ones are
// kept and never served. The rule every engine keeps is that a failing
// engine never yields a pass: Scan returns a non-nil error if and only if
// the verdict is Failed, so a caller that checks only the error and one that
// checks only the verdict both refuse the object. The zero Verdict is not
// clean. A timeout, a reset connection, an engine that answered something it
// did not understand, a reader that failed or gave a different length than
// declared, an object over the engine's limits: each is Failed, never Clean.
//
// # Reading the object
//
// Scan takes an Opener rather than an io.Reader: an engine that retries (the
// clamd engine makes three attempts) must read the object again from its
// first byte, and the scan gate's object lives in S3, where a fresh GetObject
// per attempt is cheaper than buffering a 1 GiB object (a ranged-read
// io.ReaderAt would cost one request per chunk). Bytes and ReaderAt adapt
// what tests and the dev server hold. Scan reads exactly size bytes from
// each reader it opens and closes it.
//
// # Posture
//
// Posture is what the lane reports and what it refuses on: OFF (no engine
// registered; the whole lane refuses with SCANNER_UNAVAILABLE and the grant
// stays unspent), ARMED (the engine answers and detects the EICAR test
// file) or BROKEN (it does not; uploads are still accepted, their verdicts
// are failed). Posture is a hint, possibly cached for a while (the clamd
// engine: 30 s); the verdict of each Scan is the authority.
//
// # Errors
//
// A failed verdict's error wraps one of the sentinels below (errors.Is),
// and the Verdict's Reason says the same in a short phrase safe to store
// and show an operator (no address, path or argument value).
package scan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
)

// Scanner is the port. Implementations are safe for concurrent use.
type Scanner interface {
	// Scan reads the size bytes that open yields and answers the verdict.
	// The error is non-nil exactly when the verdict is Failed; it wraps
	// ErrInvalid (size < 0 or open nil), ErrTooLarge (size > MaxBytes; open
	// is not called), ErrSource (open or a read failed, or the reader held
	// fewer or more than size bytes), ErrUnavailable (the engine did not
	// answer, answered an error, or failed its self-test), ErrLimits (the
	// engine stopped at one of its own limits) or ErrEventDriven (an engine
	// that does not scan bytes). ctx bounds the whole scan.
	Scan(ctx context.Context, open Opener, size int64) (Verdict, error)
	// Posture reports OFF, ARMED or BROKEN (see the package doc).
	Posture(ctx context.Context) Posture
	// MaxBytes is the largest object, in bytes, Scan accepts: the lane caps
	// an upload at min(1 GiB, MaxBytes) (docs/decisions.md "Time and size
	// constants"). Zero when no engine is registered.
	MaxBytes() int64
}

// Opener returns a fresh reader of the object from its first byte. Scan may
// call it more than once (once per attempt) and closes every reader it gets.
type Opener func(ctx context.Context) (io.ReadCloser, error)

// Bytes returns an Opener over b (not copied: b must not change during the
// scan).
func Bytes(b []byte) Opener {
	return func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}
}

// ReaderAt returns an Opener reading the first size bytes of r, each reader
// from offset 0 (an *os.File, a *bytes.Reader).
func ReaderAt(r io.ReaderAt, size int64) Opener {
	return func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(io.NewSectionReader(r, 0, size)), nil
	}
}

// Result is a verdict's outcome, as stored on the upload row.
type Result string

const (
	// Clean: the engine scanned the whole object and found nothing.
	Clean Result = "clean"
	// Infected: the engine found something (Verdict.Threats names it).
	Infected Result = "infected"
	// Failed: no verdict could be had (Verdict.Reason says why). Never
	// served, never called clean.
	Failed Result = "failed"
)

// Verdict is one scan's answer.
type Verdict struct {
	// Result is Clean, Infected or Failed. Only Clean passes; the zero
	// value ("") does not.
	Result Result `json:"result"`
	// Engine names the engine that answered: "signature", "clamd",
	// "guardduty" (or "off").
	Engine string `json:"engine"`
	// Threats, for Infected, holds the engine's names for what it found
	// (clamd's signature names, GuardDuty's threat names), at least one.
	Threats []string `json:"threats,omitempty"`
	// Reason, for Failed, is a short phrase saying why, safe to store and
	// show an operator ("engine unavailable", "object over the engine's
	// size limit", ...). Engine limits reported as detections keep their
	// name ("Heuristics.Limits.Exceeded.MaxFileSize").
	Reason string `json:"reason,omitempty"`
}

// Passed reports whether the verdict lets the object go on to intake:
// Result is Clean, and nothing else is.
func (v Verdict) Passed() bool { return v.Result == Clean }

// Fail returns the Failed verdict of engine with reason and the error that
// goes with it: err wrapped so that errors.Is finds both it and every
// sentinel it wraps. A nil err is ErrUnavailable: a failed verdict always
// comes with an error.
func Fail(engine, reason string, err error) (Verdict, error) {
	if err == nil {
		err = ErrUnavailable
	}
	return Verdict{Result: Failed, Engine: engine, Reason: reason}, fmt.Errorf("scan (%s): %s: %w", engine, reason, err)
}

// Posture is an engine's state as the lane reports it.
type Posture string

const (
	// Off: no engine registered; the lane refuses with SCANNER_UNAVAILABLE,
	// grant unspent (docs/contracts.md §5).
	Off Posture = "OFF"
	// Armed: the engine answers and detects the EICAR test file.
	Armed Posture = "ARMED"
	// Broken: the engine errs or fails its self-test; uploads are accepted
	// and their verdicts are failed.
	Broken Posture = "BROKEN"
)

// Sentinel errors of the port. Engines wrap them; callers use errors.Is.
var (
	// ErrOff: no engine is registered (the Off scanner).
	ErrOff = errors.New("scan: no scanner registered")
	// ErrInvalid: the request breaks the port's rules (negative size, nil
	// opener).
	ErrInvalid = errors.New("scan: invalid request")
	// ErrTooLarge: size is above MaxBytes; nothing was read.
	ErrTooLarge = errors.New("scan: object larger than the engine accepts")
	// ErrSource: opening or reading the object failed, or it held fewer or
	// more bytes than declared. The engine is not at fault.
	ErrSource = errors.New("scan: object could not be read")
	// ErrUnavailable: the engine did not give a verdict: unreachable, reset,
	// timed out, answered an error or something unreadable, or failed its
	// self-test. Retrying later may succeed.
	ErrUnavailable = errors.New("scan: engine unavailable")
	// ErrLimits: the engine stopped at one of its own limits (stream
	// length, file size, scan size, recursion, time) before it could
	// answer: the object was not fully scanned.
	ErrLimits = errors.New("scan: engine limit exceeded")
	// ErrEventDriven: the engine scans objects where they are stored and
	// reports by event (GuardDuty); it has no verdict to give for bytes.
	ErrEventDriven = errors.New("scan: engine reports by event, not by Scan")
)

// CheckRequest applies the port's request rules that every engine shares: a
// non-nil open, size in [0, maxBytes]. It returns nil or an error wrapping
// ErrInvalid or ErrTooLarge, and the reason phrase for Fail.
func CheckRequest(open Opener, size, maxBytes int64) (reason string, err error) {
	switch {
	case open == nil:
		return "invalid request", fmt.Errorf("%w: no opener", ErrInvalid)
	case size < 0:
		return "invalid request", fmt.Errorf("%w: size %d is negative", ErrInvalid, size)
	case size > maxBytes:
		return "object over the engine's size limit", fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, size, maxBytes)
	}
	return "", nil
}

// OffScanner is the scanner of a lane with no engine registered: posture
// OFF, MaxBytes 0, and every Scan failed with ErrOff.
var OffScanner Scanner = off{}

type off struct{}

func (off) Scan(context.Context, Opener, int64) (Verdict, error) {
	return Fail("off", "no scanner is configured", ErrOff)
}
func (off) Posture(context.Context) Posture { return Off }
func (off) MaxBytes() int64                 { return 0 }

// PostureOf is s's posture, OFF when s is nil: a lane holding no scanner
// is a lane with none registered.
func PostureOf(ctx context.Context, s Scanner) Posture {
	if s == nil {
		return Off
	}
	return s.Posture(ctx)
}

// Exact returns a reader of r that yields exactly size bytes and then
// io.EOF. A reader that ends early fails with an error wrapping ErrSource
// and io.ErrUnexpectedEOF, one that holds more than size bytes with an error
// wrapping ErrSource, and any error of r is wrapped with ErrSource: so an
// engine never gives a verdict on bytes other than the ones declared.
func Exact(r io.Reader, size int64) io.Reader {
	return &exact{r: r, left: size}
}

type exact struct {
	r    io.Reader
	left int64
	done bool // r has answered io.EOF or been found to hold exactly size bytes
	err  error
}

func (e *exact) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	if e.left == 0 {
		if !e.done {
			e.err = e.probeEnd()
			if e.err != nil {
				return 0, e.err
			}
			e.done = true
		}
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	switch {
	case err == io.EOF && e.left > 0:
		e.err = fmt.Errorf("%w: the object ended %d bytes short of its declared size: %w", ErrSource, e.left, io.ErrUnexpectedEOF)
		return n, e.err
	case err == io.EOF:
		e.done = true
		return n, nil
	case err != nil:
		e.err = fmt.Errorf("%w: read: %w", ErrSource, err)
		return n, e.err
	}
	return n, nil
}

// probeEnd checks that r has nothing after the declared size. io.Reader
// allows (0, nil) answers, so it asks a few times before giving up.
func (e *exact) probeEnd() error {
	var one [1]byte
	for range 100 {
		n, err := e.r.Read(one[:])
		switch {
		case n > 0:
			return fmt.Errorf("%w: the object holds more than its declared size", ErrSource)
		case err == io.EOF:
			return nil
		case err != nil:
			return fmt.Errorf("%w: read: %w", ErrSource, err)
		}
	}
	return fmt.Errorf("%w: read: %w", ErrSource, io.ErrNoProgress)
}
