package lambdaio_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/lambdaio"
	"github.com/custodymcp/custody/shared/lambdaio/lambdaiotest"
)

// invocation returns the context the Lambda runtime gives a handler: the
// deadline and the request id.
func invocation(t *testing.T, requestID string, deadline time.Time) context.Context {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	t.Cleanup(cancel)
	return lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: requestID})
}

func postEvent(body string) events.APIGatewayProxyRequest {
	return events.APIGatewayProxyRequest{
		HTTPMethod: "POST", Path: "/mcp", Resource: "/mcp",
		Headers:           map[string]string{"Content-Type": "application/json", "Host": "mcp.example.com"},
		MultiValueHeaders: map[string][]string{"Content-Type": {"application/json"}, "Host": {"mcp.example.com"}},
		Body:              body,
		RequestContext:    events.APIGatewayProxyRequestContext{RequestID: "apigw-1", Protocol: "HTTP/1.1"},
	}
}

// logLines decodes the JSON lines a handler wrote.
func logLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// syncBuffer is a bytes.Buffer safe for the handler goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}

func (b *syncBuffer) snapshot() *bytes.Buffer {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.NewBuffer(append([]byte(nil), b.Bytes()...))
}

// FB-34: behind API Gateway, server-sent events must reach the client as they
// are written, not all at once when the handler finishes. The handler writes
// event 1, flushes and blocks; the test reads event 1 from the stream while
// the handler is still blocked, then releases it and reads event 2. No clock
// is involved: under synctest a stream that held event 1 back would leave
// every goroutine blocked, which synctest reports as a deadlock.
func TestFB34_EventOneReachesTheClientWhileTheHandlerStillRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var handlerDone sync.WaitGroup
		handlerDone.Add(1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer handlerDone.Done()
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-cache")
			io.WriteString(w, "id: 1\ndata: {\"n\":1}\n\n")
			if err := http.NewResponseController(w).Flush(); err != nil {
				t.Errorf("Flush() = %v, want nil", err)
			}
			<-release
			io.WriteString(w, "id: 2\ndata: {\"n\":2}\n\n")
		})
		var logs syncBuffer
		a := lambdaio.New(h, lambdaio.Options{Logger: slog.New(lambdaio.NewLogHandler(&logs, slog.LevelInfo))})
		ctx := invocation(t, "req-fb34", time.Now().Add(15*time.Minute))

		resp, err := a.Stream(ctx, postEvent(`{}`))
		if err != nil {
			t.Fatalf("Stream() error = %v", err)
		}
		p, body, err := lambdaiotest.ReadPrelude(resp)
		if err != nil {
			t.Fatalf("ReadPrelude() error = %v", err)
		}
		if p.StatusCode != 200 || p.Header().Get("Content-Type") != "text/event-stream" {
			t.Fatalf("prelude = %+v, want 200 text/event-stream", p)
		}
		ev1, err := lambdaiotest.ReadEvent(body)
		if err != nil {
			t.Fatalf("read event 1: %v", err)
		}
		if want := []string{"id: 1", `data: {"n":1}`}; !cmp.Equal(ev1, want) {
			t.Fatalf("event 1 = %q, want %q", ev1, want)
		}
		synctest.Wait()
		if got := logs.snapshot().Len(); got != 0 {
			t.Fatalf("an outcome line was logged before the handler was released (%d bytes): event 1 came from a finished handler", got)
		}

		close(release)
		ev2, err := lambdaiotest.ReadEvent(body)
		if err != nil {
			t.Fatalf("read event 2: %v", err)
		}
		if want := []string{"id: 2", `data: {"n":2}`}; !cmp.Equal(ev2, want) {
			t.Fatalf("event 2 = %q, want %q", ev2, want)
		}
		if rest, err := io.ReadAll(body); err != nil || len(rest) != 0 {
			t.Fatalf("after event 2: %q, %v; want EOF", rest, err)
		}
		if err := resp.Close(); err != nil {
			t.Fatalf("Close() = %v", err)
		}
		handlerDone.Wait()
		lines := logLines(t, logs.snapshot())
		if len(lines) != 1 {
			t.Fatalf("%d log lines, want one outcome line: %v", len(lines), lines)
		}
		want := map[string]any{"message": "invocation", "requestId": "req-fb34", "status": 200.0, "streamed": true,
			"method": "POST", "path": "/mcp", "apiRequestId": "apigw-1"}
		for k, v := range want {
			if lines[0][k] != v {
				t.Errorf("outcome line %s = %v, want %v", k, lines[0][k], v)
			}
		}
	})
}

func TestNewRequestCarriesTheWholeEvent(t *testing.T) {
	deadline := time.Date(2026, 11, 30, 12, 15, 0, 0, time.UTC)
	ctx := invocation(t, "req-1", deadline)
	ev := events.APIGatewayProxyRequest{
		HTTPMethod: "POST",
		Path:       "/mcp",
		Headers:    map[string]string{"host": "mcp.example.com", "X-Api-Key": "k", "Accept": "text/event-stream"},
		MultiValueHeaders: map[string][]string{
			"Accept": {"application/json", "text/event-stream"},
			"host":   {"mcp.example.com"},
		},
		QueryStringParameters:           map[string]string{"a": "2", "b": "x y"},
		MultiValueQueryStringParameters: map[string][]string{"a": {"1", "2"}},
		Body:                            base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 'x'}),
		IsBase64Encoded:                 true,
		RequestContext: events.APIGatewayProxyRequestContext{
			Protocol: "HTTP/1.1", DomainName: "abc.execute-api.eu-west-1.amazonaws.com",
			Identity: events.APIGatewayRequestIdentity{SourceIP: "203.0.113.9"},
		},
	}
	r, err := lambdaio.NewRequest(ctx, &ev)
	if err != nil {
		t.Fatalf("NewRequest() error = %v", err)
	}
	body, _ := io.ReadAll(r.Body)
	got := map[string]any{
		"method": r.Method, "path": r.URL.Path, "query": r.URL.Query(), "rawQuery": r.URL.RawQuery,
		"accept": r.Header.Values("Accept"), "apiKey": r.Header.Get("X-Api-Key"), "host": r.Host,
		"body": body, "contentLength": r.ContentLength, "remoteAddr": r.RemoteAddr, "requestURI": r.RequestURI,
	}
	want := map[string]any{
		"method": "POST", "path": "/mcp",
		"query":    url.Values{"a": {"1", "2"}, "b": {"x y"}},
		"rawQuery": "a=1&a=2&b=x+y",
		"accept":   []string{"application/json", "text/event-stream"}, "apiKey": "k", "host": "mcp.example.com",
		"body": []byte{0, 1, 2, 'x'}, "contentLength": int64(4), "remoteAddr": "203.0.113.9:0",
		"requestURI": "/mcp?a=1&a=2&b=x+y",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NewRequest() mismatch (-want +got):\n%s", diff)
	}
	if d, ok := r.Context().Deadline(); !ok || !d.Equal(deadline) {
		t.Errorf("request deadline = %v, %v; want %v", d, ok, deadline)
	}
	if lc, ok := lambdacontext.FromContext(r.Context()); !ok || lc.AwsRequestID != "req-1" {
		t.Errorf("request context lambda id = %+v, %v; want req-1", lc, ok)
	}

	t.Run("host falls back to the domain name", func(t *testing.T) {
		ev := events.APIGatewayProxyRequest{HTTPMethod: "GET", RequestContext: ev.RequestContext}
		r, err := lambdaio.NewRequest(ctx, &ev)
		if err != nil {
			t.Fatal(err)
		}
		if r.Host != ev.RequestContext.DomainName || r.URL.Path != "/" || r.Body != http.NoBody {
			t.Errorf("NewRequest() = host %q path %q body %v; want the domain name, /, NoBody", r.Host, r.URL.Path, r.Body)
		}
	})
	for name, bad := range map[string]events.APIGatewayProxyRequest{
		"no method":      {Path: "/mcp"},
		"invalid base64": {HTTPMethod: "POST", Body: "%%%", IsBase64Encoded: true},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := lambdaio.NewRequest(ctx, &bad); !errors.Is(err, lambdaio.ErrBadEvent) {
				t.Errorf("NewRequest() error = %v, want ErrBadEvent", err)
			}
		})
	}
}

func TestBufferReturnsOneProxyResponse(t *testing.T) {
	ctx := invocation(t, "req-b", time.Now().Add(time.Minute))
	tests := []struct {
		name    string
		handler http.HandlerFunc
		event   events.APIGatewayProxyRequest
		want    events.APIGatewayProxyResponse
	}{{
		name: "JSON text with repeated headers",
		handler: func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Add("Vary", "Origin")
			w.Header().Add("Vary", "Accept")
			w.WriteHeader(http.StatusCreated)
			w.Header().Set("X-Late", "ignored, as in net/http")
			w.Write(b)
		},
		event: postEvent(`{"jsonrpc":"2.0"}`),
		want: events.APIGatewayProxyResponse{StatusCode: 201, Body: `{"jsonrpc":"2.0"}`,
			MultiValueHeaders: map[string][]string{"Content-Type": {"application/json"}, "Vary": {"Origin", "Accept"}}},
	}, {
		name: "binary body is base64",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write([]byte{0xff, 0x00, 0x10})
		},
		event: postEvent(""),
		want: events.APIGatewayProxyResponse{StatusCode: 200, Body: "/wAQ", IsBase64Encoded: true,
			MultiValueHeaders: map[string][]string{"Content-Type": {"application/octet-stream"}}},
	}, {
		name:    "no body, no status: 200",
		handler: func(w http.ResponseWriter, r *http.Request) {},
		event:   postEvent(""),
		want:    events.APIGatewayProxyResponse{StatusCode: 200, MultiValueHeaders: map[string][]string{}},
	}, {
		name:    "panic is 500 JSON",
		handler: func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-Partial", "1"); panic("boom") },
		event:   postEvent(""),
		want: events.APIGatewayProxyResponse{StatusCode: 500, Body: "{\"error\":\"internal error\"}\n",
			MultiValueHeaders: map[string][]string{"Content-Type": {"application/json"}}},
	}, {
		name:    "malformed event is 400 JSON",
		handler: func(w http.ResponseWriter, r *http.Request) { t.Error("handler called for a malformed event") },
		event:   events.APIGatewayProxyRequest{Path: "/mcp"},
		want: events.APIGatewayProxyResponse{StatusCode: 400, Body: "{\"error\":\"the request could not be read\"}\n",
			MultiValueHeaders: map[string][]string{"Content-Type": {"application/json"}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := lambdaio.New(tt.handler, lambdaio.Options{}).Buffer(ctx, tt.event)
			if err != nil {
				t.Fatalf("Buffer() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Buffer() mismatch (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("ErrAbortHandler fails the invocation", func(t *testing.T) {
		h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
		if _, err := lambdaio.New(h, lambdaio.Options{}).Buffer(ctx, postEvent("")); !errors.Is(err, http.ErrAbortHandler) {
			t.Errorf("Buffer() error = %v, want http.ErrAbortHandler", err)
		}
	})
}

// readAll reads a streamed response: its prelude and whole body.
func readAll(t *testing.T, resp *events.APIGatewayProxyStreamingResponse) (*lambdaiotest.Prelude, []byte, error) {
	t.Helper()
	p, body, err := lambdaiotest.ReadPrelude(resp)
	if err != nil {
		t.Fatalf("ReadPrelude() error = %v", err)
	}
	b, err := io.ReadAll(body)
	return p, b, err
}

func TestStreamPrelude(t *testing.T) {
	ctx := invocation(t, "req-s", time.Now().Add(time.Minute))
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		event      events.APIGatewayProxyRequest
		wantStatus int
		wantHeader http.Header
		wantBody   string
	}{{
		name: "status and headers fixed at WriteHeader, sent at the first write",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "s1")
			w.Header().Add("Vary", "Origin")
			w.Header().Add("Vary", "Accept")
			w.WriteHeader(http.StatusAccepted)
			w.Header().Set("X-Late", "ignored")
			io.WriteString(w, `{"ok":true}`)
		},
		event:      postEvent(`{}`),
		wantStatus: 202,
		wantHeader: http.Header{"Content-Type": {"application/json"}, "Mcp-Session-Id": {"s1"}, "Vary": {"Origin", "Accept"}},
		wantBody:   `{"ok":true}`,
	}, {
		name:       "no write: committed at return",
		handler:    func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) },
		event:      postEvent(""),
		wantStatus: 204,
		wantHeader: http.Header{},
	}, {
		name:       "content type sniffed at the first write",
		handler:    func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "plain words") },
		event:      postEvent(""),
		wantStatus: 200,
		wantHeader: http.Header{"Content-Type": {"text/plain; charset=utf-8"}},
		wantBody:   "plain words",
	}, {
		name:       "panic before commit is 500 JSON",
		handler:    func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299); panic("boom") },
		event:      postEvent(""),
		wantStatus: 500,
		wantHeader: http.Header{"Content-Type": {"application/json"}},
		wantBody:   "{\"error\":\"internal error\"}\n",
	}, {
		name:       "malformed event is 400 JSON",
		handler:    func(w http.ResponseWriter, r *http.Request) { t.Error("handler called for a malformed event") },
		event:      events.APIGatewayProxyRequest{Path: "/mcp"},
		wantStatus: 400,
		wantHeader: http.Header{"Content-Type": {"application/json"}},
		wantBody:   "{\"error\":\"the request could not be read\"}\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := lambdaio.New(tt.handler, lambdaio.Options{}).Stream(ctx, tt.event)
			if err != nil {
				t.Fatalf("Stream() error = %v", err)
			}
			defer resp.Close()
			p, body, err := readAll(t, resp)
			if err != nil {
				t.Fatalf("read body: %v", err)
			}
			if p.StatusCode != tt.wantStatus {
				t.Errorf("statusCode = %d, want %d", p.StatusCode, tt.wantStatus)
			}
			if diff := cmp.Diff(tt.wantHeader, p.Header()); diff != "" {
				t.Errorf("headers mismatch (-want +got):\n%s", diff)
			}
			if string(body) != tt.wantBody {
				t.Errorf("body = %q, want %q", body, tt.wantBody)
			}
		})
	}
}

func TestStreamPanicAfterCommitBreaksTheStream(t *testing.T) {
	ctx := invocation(t, "req-p", time.Now().Add(time.Minute))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: 1\n\n")
		w.(http.Flusher).Flush()
		panic("boom")
	})
	var logs syncBuffer
	resp, err := lambdaio.New(h, lambdaio.Options{Logger: slog.New(lambdaio.NewLogHandler(&logs, slog.LevelInfo))}).Stream(ctx, postEvent(""))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Close()
	p, body, err := readAll(t, resp)
	if p.StatusCode != 200 || string(body) != "data: 1\n\n" || err == nil {
		t.Fatalf("stream = %d %q, err %v; want 200, the flushed event, then an error", p.StatusCode, body, err)
	}
	resp.Close()
	lines := logLines(t, logs.snapshot())
	if len(lines) != 2 || lines[0]["message"] != "handler panicked" || lines[1]["aborted"] != true {
		t.Fatalf("log lines = %v, want the panic then an aborted outcome", lines)
	}
	// The stack is the panicking handler's, not the logger's.
	if stack, _ := lines[0]["stack"].(string); !strings.Contains(stack, "TestStreamPanicAfterCommitBreaksTheStream.func1") {
		t.Errorf("logged stack does not show the panicking handler:\n%s", stack)
	}
}

func TestStreamCloseEndsTheHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := invocation(t, "req-c", time.Now().Add(time.Minute))
		var handlerErr error
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "data: first\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done() // the client has gone: the runtime closed the body
			_, handlerErr = io.WriteString(w, "data: too late\n\n")
			if handlerErr == nil {
				handlerErr = http.NewResponseController(w).Flush()
			}
		})
		resp, err := lambdaio.New(h, lambdaio.Options{}).Stream(ctx, postEvent(""))
		if err != nil {
			t.Fatal(err)
		}
		_, body, err := lambdaiotest.ReadPrelude(resp)
		if err != nil {
			t.Fatal(err)
		}
		if ev, err := lambdaiotest.ReadEvent(body); err != nil || len(ev) != 1 {
			t.Fatalf("first event = %q, %v", ev, err)
		}
		resp.Close() // returns only once the handler has returned
		if !errors.Is(handlerErr, io.ErrClosedPipe) {
			t.Errorf("handler's write after Close = %v, want io.ErrClosedPipe", handlerErr)
		}
	})
}

func TestLogHandlerNamesTheLambdaRequestID(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(lambdaio.NewLogHandler(&buf, slog.LevelInfo))
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "aws-1"})
	log.InfoContext(ctx, "with context", "requestId", "component-7")
	log.With("requestId", "component-8").Info("without context")
	log.Debug("below the level")
	lines := logLines(t, &buf)
	want := []map[string]any{
		{"message": "with context", "level": "INFO", "requestId": "aws-1", "handlerRequestId": "component-7"},
		{"message": "without context", "level": "INFO", "handlerRequestId": "component-8"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d: %v", len(lines), len(want), lines)
	}
	for i := range want {
		if _, ok := lines[i]["timestamp"]; !ok {
			t.Errorf("line %d has no timestamp: %v", i, lines[i])
		}
		delete(lines[i], "timestamp")
		if diff := cmp.Diff(want[i], lines[i]); diff != "" {
			t.Errorf("line %d mismatch (-want +got):\n%s", i, diff)
		}
	}
}
