package servertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Event is one server-sent event.
type Event struct {
	ID   string
	Name string
	Data string
}

// JSON decodes the event's data.
func (e Event) JSON(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(e.Data), &v); err != nil {
		t.Fatalf("event data %q: %v", e.Data, err)
	}
	return v
}

// EventStream reads a text/event-stream answer.
type EventStream struct {
	Status int
	Header http.Header
	resp   *http.Response
	rd     *bufio.Reader
	cancel context.CancelFunc
}

// OpenStream sends a request and returns its answer as an event stream; it
// fails the test unless the answer is 200 text/event-stream. The stream is
// closed with the test (or by Close) and gives up after a minute.
func OpenStream(t testing.TB, method, url string, body []byte, headers ...string) *EventStream {
	t.Helper()
	es, status := TryOpenStream(t, method, url, body, headers...)
	if es == nil {
		t.Fatalf("want 200 text/event-stream, got %d", status)
	}
	return es
}

// TryOpenStream is OpenStream that returns (nil, status) for an answer
// that is not a 200 event stream instead of failing.
func TryOpenStream(t testing.TB, method, url string, body []byte, headers ...string) (*EventStream, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	} else {
		req.Body = http.NoBody
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ":")
		req.Header[http.CanonicalHeaderKey(strings.TrimSpace(name))] = []string{strings.TrimSpace(value)}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	es := &EventStream{Status: resp.StatusCode, Header: resp.Header, resp: resp, rd: bufio.NewReader(resp.Body), cancel: cancel}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		es.Close()
		t.Logf("not an event stream: %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b.Bytes())
		return nil, resp.StatusCode
	}
	t.Cleanup(es.Close)
	return es, resp.StatusCode
}

// Next returns the next event (comments skipped); ok is false at the end.
func (s *EventStream) Next() (ev Event, ok bool) {
	var data []string
	seen := false
	for {
		line, err := s.rd.ReadString('\n')
		if err != nil {
			return ev, false
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if seen {
				ev.Data = strings.Join(data, "\n")
				return ev, true
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id:"):
			ev.ID, seen = strings.TrimSpace(line[3:]), true
		case strings.HasPrefix(line, "event:"):
			ev.Name, seen = strings.TrimSpace(line[6:]), true
		case strings.HasPrefix(line, "data:"):
			data, seen = append(data, strings.TrimPrefix(line[5:], " ")), true
		}
	}
}

// NextMessage skips events without data (priming events) and returns the
// next JSON-RPC message.
func (s *EventStream) NextMessage(t testing.TB) map[string]any {
	t.Helper()
	for {
		ev, ok := s.Next()
		if !ok {
			t.Fatal("the stream ended before the next message")
		}
		if strings.TrimSpace(ev.Data) != "" {
			return ev.JSON(t)
		}
	}
}

// Close ends the stream.
func (s *EventStream) Close() {
	s.cancel()
	s.resp.Body.Close()
}
