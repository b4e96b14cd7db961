package mcp

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// ErrNoStream: the client did not accept text/event-stream, so nothing can
// be sent before the response.
var ErrNoStream = errors.New("mcp: the client holds no stream for this request")

// stream is the text/event-stream answer to one POST (MCP basic/transports
// §Sending Messages item 6): notifications and requests related to the
// request, then its response. It starts on the first message: status 200,
// the SSE headers and a priming event (an id and empty data) so the client
// has an event id before anything else. Writes are serialized and flushed
// at once (X-Accel-Buffering: no keeps proxies from buffering them).
type stream struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	allowed bool   // the client accepted text/event-stream
	id      string // this stream's id: event ids are "<id>-<seq>"
	seq     int
	started bool
	failed  error
}

func newStream(w http.ResponseWriter, allowed bool) *stream {
	return &stream{w: w, allowed: allowed, id: newRequestID()[:12]}
}

// send writes one JSON-RPC message as an SSE event, starting the stream if
// needed.
func (s *stream) send(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.allowed {
		return ErrNoStream
	}
	if err := s.startLocked(); err != nil {
		return err
	}
	return s.writeEvent(msg)
}

// start begins the stream now, with its priming event, when it has not
// begun (Request.OpenStream).
func (s *stream) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.allowed {
		return ErrNoStream
	}
	return s.startLocked()
}

func (s *stream) startLocked() error {
	if s.failed != nil {
		return s.failed
	}
	if s.started {
		return nil
	}
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	s.started = true
	return s.writeEvent(nil)
}

// writeEvent writes "id:" and the data lines of one event and flushes.
func (s *stream) writeEvent(data []byte) error {
	s.seq++
	var b bytes.Buffer
	b.WriteString("id: " + s.id + "-" + strconv.Itoa(s.seq) + "\n")
	if data == nil {
		b.WriteString("data: \n\n")
	} else {
		b.WriteString("event: message\n")
		for _, line := range strings.Split(string(data), "\n") {
			b.WriteString("data: " + line + "\n")
		}
		b.WriteString("\n")
	}
	if _, err := s.w.Write(b.Bytes()); err != nil {
		s.failed = err
		return err
	}
	return http.NewResponseController(s.w).Flush()
}

// comment writes an SSE comment (a heartbeat) on a started stream.
func (s *stream) comment(text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.failed != nil {
		return s.failed
	}
	if _, err := s.w.Write([]byte(": " + text + "\n\n")); err != nil {
		s.failed = err
		return err
	}
	return http.NewResponseController(s.w).Flush()
}

// isStarted reports whether the stream has begun (the status is sent).
func (s *stream) isStarted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// acceptsSSE reports whether the Accept header admits text/event-stream.
// An absent header accepts anything.
func acceptsSSE(vals []string) bool {
	return accepts(vals, "text/event-stream", "*/*", "text/*")
}
