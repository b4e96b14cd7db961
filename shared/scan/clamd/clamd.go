// Package clamd is the scanner port's ClamAV engine: it streams each object
// to a clamd daemon over TCP with the INSTREAM command and reads its
// verdict. It is CI's real engine and an option of the dev server
// (`-scanner clamd=127.0.0.1:3310`); the deployed stack uses GuardDuty,
// since a zip Lambda cannot host clamd and its signature updates
// (docs/decisions.md "Scanning").
//
// # Protocol
//
// clamd's own documentation (clamd(8), "INSTREAM") defines the exchange:
// the client sends "zINSTREAM\0", then the object in chunks, each prefixed
// by its length as a 4-byte big-endian integer, then a zero-length chunk;
// clamd answers one NUL-terminated line (the "z" prefix) and closes:
//
//	stream: OK                         → clean
//	stream: <signature> FOUND          → infected
//	stream: Heuristics.Limits.* FOUND  → failed (ErrLimits): clamd stopped
//	                                     at MaxFileSize, MaxScanSize, ...
//	INSTREAM size limit exceeded. ERROR → failed (ErrLimits) after retries
//	<anything> ERROR                   → failed (ErrUnavailable) after retries
//
// Chunks are 64 KiB. A reset or refused connection, a timeout, an ERROR
// answer or an unreadable one is tried again, three attempts in all with a
// doubling backoff, each attempt reading the object afresh from its Opener.
// A reader that fails is not retried (ErrSource: the engine is not at
// fault), nor is a Heuristics.Limits answer (the same object meets the same
// limit). Every attempt starts by knowing clamd ARMED (see Posture), so an
// attempt after one that found clamd unavailable asks it again first. Only an explicit "stream: OK" to a stream that was sent whole is
// clean.
//
// # Limits
//
// clamd must run with AlertExceedsMax yes: without it a file over
// MaxFileSize or MaxScanSize is scanned only in part and answered OK. The
// engine's Max (default 100 MiB, ClamAV's compiled-in default for both
// StreamMaxLength and MaxFileSize) should equal clamd's StreamMaxLength and
// MaxFileSize: it is MaxBytes, which bounds the upload lane, and an object
// above it is failed with ErrTooLarge before a byte is sent.
//
// # Posture
//
// Check asks clamd now: PING must answer PONG, and a scan of the EICAR test
// file must answer FOUND, because a clamd without signatures answers OK to
// everything. Posture caches Check's answer for 30 s (a hint, not
// authority). Each Scan attempt trusts a cached ARMED and otherwise runs
// Check first, so no verdict is clean unless clamd detected EICAR within
// the last 30 s; an attempt that finds clamd unavailable drops the cached
// ARMED. The cache's price: a clamd that lost its signatures while a cached
// ARMED lasts could answer OK for up to 30 s (a restarted clamd with no
// signature file at all refuses to start).
package clamd

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/custodymcp/custody/shared/scan"
)

// Name is the engine's name in verdicts.
const Name = "clamd"

// Defaults of Options (docs/decisions.md "Time and size constants": clamd
// attempts 3, posture cache 30 s).
const (
	DefaultMax          int64 = 100 << 20 // 100M, as clamd reads sizes
	DefaultDialTimeout        = 5 * time.Second
	DefaultIOTimeout          = 30 * time.Second
	DefaultReplyTimeout       = 3 * time.Minute // clamd's MaxScanTime defaults to 120 s
	DefaultProbeTimeout       = 10 * time.Second
	DefaultAttempts           = 3
	DefaultBackoff            = 250 * time.Millisecond
	DefaultPostureTTL         = 30 * time.Second
)

// ChunkSize is the INSTREAM chunk length, in bytes.
const ChunkSize = 64 << 10

// maxReply bounds what the engine reads of an answer: one line naming a
// signature is well under it.
const maxReply = 64 << 10

// Options configure an Engine. Zero values take the defaults above.
type Options struct {
	// Addr is clamd's TCPSocket as host:port (TCPAddr and TCPSocket of
	// clamd.conf). Required.
	Addr string
	// Max is the engine's size limit in bytes (MaxBytes): set it to clamd's
	// StreamMaxLength and MaxFileSize (ParseSize reads clamd's notation).
	Max int64
	// DialTimeout bounds each connection's set-up.
	DialTimeout time.Duration
	// IOTimeout bounds each write of a chunk: clamd that stops reading for
	// this long is given up.
	IOTimeout time.Duration
	// ReplyTimeout bounds the wait for the verdict after the last chunk.
	ReplyTimeout time.Duration
	// ProbeTimeout bounds PING and the self-test scan, each.
	ProbeTimeout time.Duration
	// Attempts is how many times one Scan tries clamd.
	Attempts int
	// Backoff is the wait before the second attempt, doubled for each
	// further one.
	Backoff time.Duration
	// PostureTTL is how long a Check answer is cached.
	PostureTTL time.Duration
	// Now is the clock of the posture cache (time.Now if nil).
	Now func() time.Time
}

// Engine is the clamd engine. Safe for concurrent use.
type Engine struct {
	o      Options
	dialer net.Dialer
	probe  chan struct{} // held by the one goroutine running Check for the cache

	mu        sync.Mutex
	posture   scan.Posture // "" until the first Check
	checkedAt time.Time
}

var _ scan.Scanner = (*Engine)(nil)

// New returns an engine for the clamd at o.Addr. It does not connect; an
// invalid option is an error.
func New(o Options) (*Engine, error) {
	if _, _, err := net.SplitHostPort(o.Addr); err != nil || o.Addr == "" {
		return nil, fmt.Errorf("clamd engine: address %q is not host:port", o.Addr)
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&o.DialTimeout, DefaultDialTimeout}, {&o.IOTimeout, DefaultIOTimeout},
		{&o.ReplyTimeout, DefaultReplyTimeout}, {&o.ProbeTimeout, DefaultProbeTimeout},
		{&o.Backoff, DefaultBackoff}, {&o.PostureTTL, DefaultPostureTTL},
	} {
		if *d.v < 0 {
			return nil, fmt.Errorf("clamd engine: negative duration %s", *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	switch {
	case o.Max < 0:
		return nil, fmt.Errorf("clamd engine: negative max %d", o.Max)
	case o.Max == 0:
		o.Max = DefaultMax
	case o.Max >= 1<<32:
		// clamd refuses a StreamMaxLength of 4 GiB or more.
		return nil, fmt.Errorf("clamd engine: max %d is not below clamd's 4 GiB stream limit", o.Max)
	}
	switch {
	case o.Attempts < 0:
		return nil, fmt.Errorf("clamd engine: negative attempts %d", o.Attempts)
	case o.Attempts == 0:
		o.Attempts = DefaultAttempts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Engine{o: o, dialer: net.Dialer{Timeout: o.DialTimeout}, probe: make(chan struct{}, 1)}, nil
}

// MaxBytes is Options.Max.
func (e *Engine) MaxBytes() int64 { return e.o.Max }

// Scan streams the object to clamd (see the package doc). Errors as the
// port's: ErrTooLarge above Max, ErrSource for the object's reader,
// ErrLimits for clamd's limits, ErrUnavailable for everything else that
// kept clamd from answering, and the context's error when ctx ended.
func (e *Engine) Scan(ctx context.Context, open scan.Opener, size int64) (scan.Verdict, error) {
	if reason, err := scan.CheckRequest(open, size, e.o.Max); err != nil {
		return scan.Fail(Name, reason, err)
	}
	if err := ctx.Err(); err != nil {
		return cancelled(err)
	}
	var last *attemptError
	attempts := 0
	for attempts < e.o.Attempts {
		if attempts > 0 {
			if err := sleep(ctx, e.o.Backoff<<(attempts-1)); err != nil {
				return cancelled(err)
			}
		}
		attempts++
		v, aerr := e.attempt(ctx, open, size)
		if aerr == nil {
			return v, nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return cancelled(ctxErr)
		}
		last = aerr
		if errors.Is(aerr.err, scan.ErrUnavailable) {
			// The next attempt, and Posture, ask clamd again first.
			e.forget()
		}
		if !aerr.retry {
			break
		}
	}
	return scan.Fail(Name, last.reason, fmt.Errorf("after %d attempt(s): %w", attempts, last.err))
}

// attempt is one try: clamd known ARMED (cached, or checked now), then the
// object streamed.
func (e *Engine) attempt(ctx context.Context, open scan.Opener, size int64) (scan.Verdict, *attemptError) {
	if err := e.armed(ctx); err != nil {
		return scan.Verdict{}, &attemptError{retry: true, reason: "engine unavailable or failed its self-test", err: err}
	}
	return e.instream(ctx, open, size, e.o.IOTimeout, e.o.ReplyTimeout)
}

// Posture is the cached answer of Check, asked again once it is older than
// PostureTTL: ARMED when Check passed, BROKEN otherwise.
func (e *Engine) Posture(ctx context.Context) scan.Posture {
	if p, ok := e.cached(false); ok {
		return p
	}
	p, _ := e.recheck(ctx, false)
	return p
}

// Check asks clamd now, uncached: PING must answer PONG and a scan of the
// EICAR test file must answer FOUND. It returns nil (ARMED) or an error
// wrapping scan.ErrUnavailable saying which step failed.
func (e *Engine) Check(ctx context.Context) error {
	if err := e.Ping(ctx); err != nil {
		return err
	}
	eicar := scan.EICAR()
	v, aerr := e.instream(ctx, scan.Bytes(eicar), int64(len(eicar)), e.o.ProbeTimeout, e.o.ProbeTimeout)
	if aerr != nil {
		return fmt.Errorf("%w: self-test scan of the EICAR file: %w", scan.ErrUnavailable, aerr.err)
	}
	if v.Result != scan.Infected {
		return fmt.Errorf("%w: self-test: clamd answered %s to the EICAR file (no signatures loaded?)", scan.ErrUnavailable, v.Result)
	}
	return nil
}

// Ping sends zPING and expects PONG, within ProbeTimeout. Errors wrap
// scan.ErrUnavailable.
func (e *Engine) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, e.o.ProbeTimeout)
	defer cancel()
	conn, err := e.dialer.DialContext(ctx, "tcp", e.o.Addr)
	if err != nil {
		return fmt.Errorf("%w: ping: %w", scan.ErrUnavailable, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if d, ok := ctx.Deadline(); ok {
		conn.SetDeadline(d)
	}
	if _, err := conn.Write([]byte("zPING\x00")); err != nil {
		return fmt.Errorf("%w: ping: %w", scan.ErrUnavailable, err)
	}
	b, err := io.ReadAll(io.LimitReader(conn, maxReply))
	if err != nil {
		return fmt.Errorf("%w: ping: %w", scan.ErrUnavailable, err)
	}
	if got := strings.TrimSpace(strings.TrimRight(string(b), "\x00")); got != "PONG" {
		return fmt.Errorf("%w: ping: clamd answered %q, want PONG", scan.ErrUnavailable, got)
	}
	return nil
}

// armed returns nil when the cached posture is a fresh ARMED, or when Check
// passes now.
func (e *Engine) armed(ctx context.Context) error {
	if p, ok := e.cached(true); ok && p == scan.Armed {
		return nil
	}
	_, err := e.recheck(ctx, true)
	return err
}

// cached returns the cached posture when it is younger than PostureTTL;
// armedOnly accepts only a cached ARMED.
func (e *Engine) cached(armedOnly bool) (scan.Posture, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.posture == "" || e.o.Now().Sub(e.checkedAt) >= e.o.PostureTTL {
		return "", false
	}
	if armedOnly && e.posture != scan.Armed {
		return "", false
	}
	return e.posture, true
}

// recheck runs Check for the cache, one goroutine at a time: a goroutine
// that waited finds the answer its predecessor cached. An answer cut short
// by the caller's own context is not cached.
func (e *Engine) recheck(ctx context.Context, armedOnly bool) (scan.Posture, error) {
	select {
	case e.probe <- struct{}{}:
	case <-ctx.Done():
		return scan.Broken, fmt.Errorf("%w: %w", scan.ErrUnavailable, ctx.Err())
	}
	defer func() { <-e.probe }()
	if p, ok := e.cached(armedOnly); ok {
		return p, nil
	}
	err := e.Check(ctx)
	p := scan.Armed
	if err != nil {
		p = scan.Broken
	}
	if ctx.Err() == nil {
		e.mu.Lock()
		e.posture, e.checkedAt = p, e.o.Now()
		e.mu.Unlock()
	}
	return p, err
}

// forget drops a cached ARMED after clamd failed a scan: the posture says
// BROKEN until a Check passes again.
func (e *Engine) forget() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.posture == scan.Armed {
		e.posture, e.checkedAt = scan.Broken, e.o.Now()
	}
}

// attemptError is one failed attempt: whether to try again, the reason
// phrase for the verdict and the error (wrapping a scan sentinel).
type attemptError struct {
	retry  bool
	reason string
	err    error
}

func unavailable(format string, args ...any) *attemptError {
	return &attemptError{retry: true, reason: "engine unavailable", err: fmt.Errorf("%w: "+format, append([]any{scan.ErrUnavailable}, args...)...)}
}

// instream is one attempt: a connection, the object in chunks, the answer.
func (e *Engine) instream(ctx context.Context, open scan.Opener, size int64, ioTimeout, replyTimeout time.Duration) (scan.Verdict, *attemptError) {
	rc, err := open(ctx)
	if err != nil {
		return scan.Verdict{}, &attemptError{reason: "object could not be read", err: fmt.Errorf("%w: open: %w", scan.ErrSource, err)}
	}
	defer rc.Close()

	conn, err := e.dialer.DialContext(ctx, "tcp", e.o.Addr)
	if err != nil {
		return scan.Verdict{}, unavailable("connect: %w", err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	// The answer is read while the object is still being sent: clamd
	// answers early (and closes) when the stream passes StreamMaxLength,
	// and that answer must be read before the reset that follows loses it.
	answer := make(chan readResult, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(conn, maxReply+1))
		answer <- readResult{b, err}
	}()

	sent, werr := e.send(conn, scan.Exact(rc, size), ioTimeout)
	if werr != nil && errors.Is(werr, scan.ErrSource) {
		conn.Close()
		<-answer
		return scan.Verdict{}, &attemptError{reason: "object could not be read", err: werr}
	}
	if werr != nil {
		// The connection broke while sending: take an answer clamd gave
		// before it closed, if any, else the write error.
		conn.SetReadDeadline(time.Now().Add(min(ioTimeout, 2*time.Second)))
	} else {
		conn.SetReadDeadline(time.Now().Add(replyTimeout))
	}
	res := <-answer
	if len(res.b) > maxReply {
		return scan.Verdict{}, unavailable("answer longer than %d bytes", maxReply)
	}
	if len(bytes.TrimSpace(bytes.ReplaceAll(res.b, []byte{0}, nil))) == 0 {
		if werr != nil {
			return scan.Verdict{}, unavailable("send after %d bytes: %w", sent, werr)
		}
		if res.err != nil {
			return scan.Verdict{}, unavailable("read answer: %w", res.err)
		}
		return scan.Verdict{}, unavailable("clamd closed the connection without an answer")
	}
	return decide(res.b, werr == nil)
}

type readResult struct {
	b   []byte
	err error
}

// send writes the INSTREAM command, the chunks and the terminator, each
// write within ioTimeout. It returns the object bytes sent and an error
// wrapping scan.ErrSource when the object's reader failed.
func (e *Engine) send(conn net.Conn, src io.Reader, ioTimeout time.Duration) (int64, error) {
	write := func(b []byte) error {
		conn.SetWriteDeadline(time.Now().Add(ioTimeout))
		_, err := conn.Write(b)
		return err
	}
	if err := write([]byte("zINSTREAM\x00")); err != nil {
		return 0, err
	}
	buf := make([]byte, 4+ChunkSize)
	var sent int64
	for {
		n, err := io.ReadFull(src, buf[4:])
		last := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !last {
			return sent, err
		}
		if n > 0 {
			binary.BigEndian.PutUint32(buf[:4], uint32(n))
			if err := write(buf[:4+n]); err != nil {
				return sent, err
			}
			sent += int64(n)
		}
		if last {
			break
		}
	}
	// The end: a zero-length chunk.
	return sent, write([]byte{0, 0, 0, 0})
}

// decide reads clamd's answer. complete says whether the whole stream and
// its terminator were sent: only then may an OK be clean.
func decide(b []byte, complete bool) (scan.Verdict, *attemptError) {
	var found, limits, errs []string
	ok := false
	for _, line := range strings.FieldsFunc(string(b), func(r rune) bool { return r == 0 || r == '\n' }) {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case line == "stream: OK":
			ok = true
		case strings.HasPrefix(line, "stream: ") && strings.HasSuffix(line, " FOUND"):
			name := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(line, "stream: "), " FOUND"))
			if strings.HasPrefix(name, "Heuristics.Limits.") {
				limits = append(limits, name)
			} else if name != "" {
				found = append(found, name)
			}
		case strings.HasSuffix(line, " ERROR"):
			errs = append(errs, strings.TrimSpace(strings.TrimSuffix(line, " ERROR")))
		default:
			return scan.Verdict{}, unavailable("unreadable answer %q", line)
		}
	}
	switch {
	case len(found) > 0:
		return scan.Verdict{Result: scan.Infected, Engine: Name, Threats: found}, nil
	case len(limits) > 0:
		return scan.Verdict{}, &attemptError{reason: "engine limit exceeded: " + strings.Join(limits, ", "),
			err: fmt.Errorf("%w: clamd answered %s", scan.ErrLimits, strings.Join(limits, ", "))}
	case len(errs) > 0:
		msg := strings.Join(errs, "; ")
		if strings.Contains(msg, "size limit exceeded") {
			return scan.Verdict{}, &attemptError{retry: true, reason: "engine limit exceeded: StreamMaxLength",
				err: fmt.Errorf("%w: clamd answered %q", scan.ErrLimits, msg)}
		}
		return scan.Verdict{}, &attemptError{retry: true, reason: "engine answered an error",
			err: fmt.Errorf("%w: clamd answered %q", scan.ErrUnavailable, msg)}
	case ok && complete:
		return scan.Verdict{Result: scan.Clean, Engine: Name}, nil
	case ok:
		return scan.Verdict{}, unavailable("clamd answered OK to a stream that was not sent whole")
	}
	return scan.Verdict{}, unavailable("clamd closed the connection without an answer")
}

func cancelled(err error) (scan.Verdict, error) {
	return scan.Fail(Name, "scan cancelled or timed out", fmt.Errorf("%w: %w", scan.ErrUnavailable, err))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ParseSize reads a size in clamd.conf's notation: a whole number of
// bytes, or one followed by K or M (either case), 1024-based, as clamd
// reads StreamMaxLength and MaxFileSize ("100M" is 104857600).
func ParseSize(s string) (int64, error) {
	mult := int64(1)
	num := s
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			mult, num = 1<<10, s[:n-1]
		case 'm', 'M':
			mult, num = 1<<20, s[:n-1]
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v < 0 || v > (1<<62)/mult {
		return 0, fmt.Errorf("clamd size %q: want a whole number of bytes, optionally followed by K or M", s)
	}
	return v * mult, nil
}
