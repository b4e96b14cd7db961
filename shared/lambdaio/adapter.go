package lambdaio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Options configure an Adapter. The zero value of each field is documented.
type Options struct {
	// Logger receives each invocation's one outcome line (INFO "invocation")
	// and any handler panic (ERROR); nil discards.
	Logger *slog.Logger
	// Now is the clock of the outcome line's durationMs; nil means time.Now.
	Now func() time.Time
	// StreamBufferBytes is the size of the streaming body's write buffer. The
	// buffer is passed on when the handler flushes, when it is full and when
	// the handler returns; 0 means 16 KiB.
	StreamBufferBytes int
	// RequestTimeout, when positive, ends each request's context that long
	// after the invocation began, if the invocation's own deadline is later:
	// for a front door that gives up on the function before its timeout (a
	// buffered API Gateway integration answers 503 after at most 29 or 30 s
	// while the function may run 15 min), so that a handler that waits
	// answers within the front's patience. 0: the invocation's deadline.
	RequestTimeout time.Duration
}

// Adapter serves an http.Handler to the events of Lambda's HTTP front doors:
// API Gateway REST proxy events, buffered (Buffer) or streamed (Stream);
// HTTP API events of payload format 2.0, buffered (BufferHTTPAPI); and
// function URL events with InvokeMode RESPONSE_STREAM (StreamFunctionURL).
// It holds no per-invocation state and is safe for concurrent use; build it
// once at cold start.
type Adapter struct {
	h       http.Handler
	log     *slog.Logger
	now     func() time.Time
	bufSize int
	timeout time.Duration
}

// New returns an adapter serving h.
func New(h http.Handler, opts Options) *Adapter {
	a := &Adapter{h: h, log: opts.Logger, now: opts.Now, bufSize: opts.StreamBufferBytes, timeout: opts.RequestTimeout}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.bufSize <= 0 {
		a.bufSize = 16 << 10
	}
	return a
}

// errPanicked breaks off a stream whose handler panicked after committing.
var errPanicked = errors.New("lambdaio: the handler panicked after the response started")

// event is what the adapter needs of one invocation's event, whichever front
// door sent it: how to build the request, and what the outcome line names.
type event struct {
	request func(ctx context.Context) (*http.Request, error)
	// method, path and gatewayID (the API Gateway request id, "" for a
	// function URL) are logged on the outcome line.
	method, path, gatewayID string
}

func restEvent(ev *events.APIGatewayProxyRequest) event {
	return event{request: func(ctx context.Context) (*http.Request, error) { return NewRequest(ctx, ev) },
		method: ev.HTTPMethod, path: ev.Path, gatewayID: ev.RequestContext.RequestID}
}

func httpAPIEvent(ev *events.APIGatewayV2HTTPRequest) event {
	return event{request: func(ctx context.Context) (*http.Request, error) { return NewHTTPAPIRequest(ctx, ev) },
		method: ev.RequestContext.HTTP.Method, path: ev.RawPath, gatewayID: ev.RequestContext.RequestID}
}

func functionURLEvent(ev *events.LambdaFunctionURLRequest) event {
	return event{request: func(ctx context.Context) (*http.Request, error) { return NewFunctionURLRequest(ctx, ev) },
		method: ev.RequestContext.HTTP.Method, path: ev.RawPath}
}

// requestContext is the context of one request: the invocation's, ended
// early by RequestTimeout, and cancellable by the adapter.
func (a *Adapter) requestContext(ctx context.Context, start time.Time) (context.Context, context.CancelFunc) {
	if a.timeout > 0 {
		if d, ok := ctx.Deadline(); !ok || d.After(start.Add(a.timeout)) {
			return context.WithDeadline(ctx, start.Add(a.timeout))
		}
	}
	return context.WithCancel(ctx)
}

// Buffer serves one event through the handler and returns the whole
// response, for an integration in BUFFERED mode: statusCode (200 unless the
// handler chose), every header in multiValueHeaders, and the body as a
// string when it is UTF-8 text by its Content-Type, else base64 with
// isBase64Encoded (API Gateway developer guide, "Output format of a Lambda
// function for proxy integration"). A malformed event is answered 400 and a
// handler panic 500, both with a JSON body. A handler that panics with
// http.ErrAbortHandler makes Buffer return that error: the invocation fails
// and API Gateway answers 502, the nearest thing to a dropped connection.
func (a *Adapter) Buffer(ctx context.Context, ev events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	w, err := a.buffer(ctx, restEvent(&ev))
	if err != nil {
		return events.APIGatewayProxyResponse{}, err
	}
	resp := events.APIGatewayProxyResponse{StatusCode: w.status, MultiValueHeaders: w.sent}
	resp.Body, resp.IsBase64Encoded = w.encodedBody()
	return resp, nil
}

// BufferHTTPAPI serves one HTTP API event (payload format 2.0) through the
// handler and returns the whole response, as Buffer does for a REST API:
// HTTP APIs have no response streaming, so the answer leaves only when the
// handler returns. The response is payload format 2.0's (API Gateway
// developer guide, "Create AWS Lambda proxy integrations for HTTP APIs",
// Lambda function response format): each header once, repeated values
// joined with ", " (RFC 9110 §5.3), and every Set-Cookie in cookies, since
// those cannot be joined (RFC 6265 §3). The body, the 400 for a malformed
// event, the 500 for a panic and http.ErrAbortHandler are as Buffer's.
func (a *Adapter) BufferHTTPAPI(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	w, err := a.buffer(ctx, httpAPIEvent(&ev))
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	resp := events.APIGatewayV2HTTPResponse{StatusCode: w.status}
	resp.Headers, resp.Cookies = joinHeader(w.sent)
	resp.Body, resp.IsBase64Encoded = w.encodedBody()
	return resp, nil
}

// buffer runs the handler to completion for ev and returns what it wrote,
// or http.ErrAbortHandler when it panicked with that value.
func (a *Adapter) buffer(ctx context.Context, ev event) (*bufferWriter, error) {
	start := a.now()
	w := &bufferWriter{headerState: headerState{header: http.Header{}}}
	reqCtx, cancel := a.requestContext(ctx, start)
	defer cancel()
	var abort error
	if r, err := ev.request(reqCtx); err != nil {
		writeBadEvent(w)
	} else if p := a.serve(w, r); p != nil {
		if p.value == http.ErrAbortHandler {
			abort = http.ErrAbortHandler
		} else {
			a.logPanic(ctx, p)
			w.reset()
			writeJSONError(w, http.StatusInternalServerError, "internal error")
		}
	}
	w.commit()
	a.logOutcome(ctx, ev, outcome{status: w.status, bytes: int64(w.body.Len()), start: start, err: abort})
	if abort != nil {
		return nil, abort
	}
	return w, nil
}

// Stream serves one event through the handler as a streamed response, for
// an integration in STREAM mode (the response-streaming-invocations URI).
// It returns as soon as the handler has committed its status and headers
// (first Write or Flush, or its return); the response's Body then yields
// what the handler writes, each Flush passed on at once, and ends when the
// handler returns. Closing the Body (the runtime client does, after sending)
// cancels the handler's request context, fails its further writes and waits
// for it to return.
//
// The prelude carries single-valued headers in headers and repeated ones in
// multiValueHeaders (both in the streaming output format). A malformed event
// is answered 400 and a panic before the commit 500, both with a JSON body;
// a panic after the commit breaks the stream off with an error, which the
// runtime reports to Lambda as a function error.
func (a *Adapter) Stream(ctx context.Context, ev events.APIGatewayProxyRequest) (*events.APIGatewayProxyStreamingResponse, error) {
	w, body := a.stream(ctx, restEvent(&ev))
	single, multi := splitHeader(w.sent)
	return &events.APIGatewayProxyStreamingResponse{
		StatusCode: w.status, Headers: single, MultiValueHeaders: multi, Body: body,
	}, nil
}

// StreamFunctionURL serves one function URL event through the handler as a
// streamed response, for a function URL whose InvokeMode is RESPONSE_STREAM
// (Lambda developer guide, "Response streaming for Lambda functions"): the
// same prelude, delimiter and body as Stream, written by aws-lambda-go's
// events.LambdaFunctionURLStreamingResponse, whose prelude has no
// multiValueHeaders: each header goes once, repeated values joined with
// ", " (RFC 9110 §5.3), and every Set-Cookie in cookies. Commit, flushes,
// Close, the 400 for a malformed event and panics are as Stream's.
func (a *Adapter) StreamFunctionURL(ctx context.Context, ev events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error) {
	w, body := a.stream(ctx, functionURLEvent(&ev))
	headers, cookies := joinHeader(w.sent)
	return &events.LambdaFunctionURLStreamingResponse{StatusCode: w.status, Headers: headers, Cookies: cookies, Body: body}, nil
}

// stream starts the handler for ev and returns, once the handler committed
// its status and headers, the writer (status and headers fixed) and the
// body the runtime reads.
func (a *Adapter) stream(ctx context.Context, ev event) (*streamWriter, *streamBody) {
	start := a.now()
	pr, pw := io.Pipe()
	w := &streamWriter{headerState: headerState{header: http.Header{}}, ready: make(chan struct{})}
	w.buf = bufio.NewWriterSize(pw, a.bufSize)
	reqCtx, cancel := a.requestContext(ctx, start)
	body := &streamBody{pr: pr, cancel: cancel, done: make(chan struct{})}
	r, reqErr := ev.request(reqCtx)
	go func() {
		defer close(body.done)
		defer cancel()
		var abort error
		if reqErr != nil {
			writeBadEvent(w)
		} else if p := a.serve(w, r); p != nil {
			switch {
			case p.value == http.ErrAbortHandler:
				abort = http.ErrAbortHandler
			case w.committed:
				a.logPanic(ctx, p)
				abort = errPanicked
			default:
				a.logPanic(ctx, p)
				w.reset()
				writeJSONError(w, http.StatusInternalServerError, "internal error")
			}
		}
		w.commit() // also unblocks stream when the handler aborted uncommitted
		if abort == nil {
			abort = w.FlushError()
		}
		a.logOutcome(ctx, ev, outcome{status: w.status, bytes: w.bytes, start: start, streamed: true, err: abort})
		if abort != nil {
			pw.CloseWithError(abort)
		} else {
			pw.Close()
		}
	}()
	<-w.ready
	return w, body
}

// handlerPanic is a recovered panic with the stack where it happened.
type handlerPanic struct {
	value any
	stack []byte
}

// serve runs the handler and returns its panic, if any, with the stack
// taken inside the deferred recover (still the panicking goroutine's).
func (a *Adapter) serve(w http.ResponseWriter, r *http.Request) (p *handlerPanic) {
	defer func() {
		if v := recover(); v != nil {
			p = &handlerPanic{value: v, stack: debug.Stack()}
		}
	}()
	a.h.ServeHTTP(w, r)
	return nil
}

func (a *Adapter) logPanic(ctx context.Context, p *handlerPanic) {
	a.log.ErrorContext(ctx, "handler panicked", "panic", fmt.Sprint(p.value), "stack", string(p.stack))
}

// outcome is what the invocation's one log line reports.
type outcome struct {
	status   int
	bytes    int64
	start    time.Time
	streamed bool
	err      error
}

func (a *Adapter) logOutcome(ctx context.Context, ev event, o outcome) {
	attrs := []slog.Attr{
		slog.String("method", ev.method),
		slog.String("path", ev.path),
		slog.Int("status", o.status),
		slog.Int64("bytes", o.bytes),
		slog.Int64("durationMs", a.now().Sub(o.start).Milliseconds()),
		slog.Bool("streamed", o.streamed),
	}
	if id := ev.gatewayID; id != "" {
		attrs = append(attrs, slog.String("apiRequestId", id))
	}
	if o.err != nil {
		attrs = append(attrs, slog.Bool("aborted", true), slog.String("err", o.err.Error()))
	}
	a.log.LogAttrs(ctx, slog.LevelInfo, "invocation", attrs...)
}

// headerState is the header half of an http.ResponseWriter, as net/http
// keeps it: WriteHeader fixes the status and a snapshot of the headers
// (later changes to Header are ignored), a second call is ignored, and
// informational (1xx) statuses are dropped because API Gateway cannot relay
// them. The first Write without a Content-Type sniffs one
// (http.DetectContentType).
type headerState struct {
	header http.Header
	status int
	sent   http.Header
}

func (s *headerState) Header() http.Header { return s.header }

func (s *headerState) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("lambdaio: invalid WriteHeader code %d", code)) // as net/http
	}
	if s.status != 0 || code < 200 {
		return
	}
	s.status = code
	s.sent = s.header.Clone()
}

// implicit is the WriteHeader(200) of a first Write.
func (s *headerState) implicit(p []byte) {
	if s.status != 0 {
		return
	}
	if _, ok := s.header["Content-Type"]; !ok && len(p) > 0 {
		s.header.Set("Content-Type", http.DetectContentType(p))
	}
	s.WriteHeader(http.StatusOK)
}

// bodyAllowed reports whether a status may carry a body (RFC 9110 §15.3.5,
// §15.4.5: not 204 or 304).
func bodyAllowed(status int) bool {
	return status != http.StatusNoContent && status != http.StatusNotModified
}

// bufferWriter collects a whole response (Buffer).
type bufferWriter struct {
	headerState
	body bytes.Buffer
}

func (w *bufferWriter) Write(p []byte) (int, error) {
	w.implicit(p)
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	return w.body.Write(p)
}

// Flush fixes the status (200 when none was chosen), as net/http's does;
// nothing is sent before the handler returns, since a buffered integration
// answers only once the invocation has ended.
func (w *bufferWriter) Flush() { w.commit() }

func (w *bufferWriter) commit() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
}

// encodedBody is the body as a proxy response carries it: a string when it
// is UTF-8 text by its Content-Type, else base64 (isBase64Encoded true).
func (w *bufferWriter) encodedBody() (string, bool) {
	body := w.body.Bytes()
	if isText(w.sent.Get("Content-Type"), body) {
		return string(body), false
	}
	return base64.StdEncoding.EncodeToString(body), true
}

// reset discards everything the handler wrote (to answer a panic).
func (w *bufferWriter) reset() {
	w.header, w.status, w.sent = http.Header{}, 0, nil
	w.body.Reset()
}

// streamWriter writes a response into the pipe whose reader is the streamed
// body (Stream). It is used by the handler's goroutine only, like any
// http.ResponseWriter; ready is closed once the status and headers are fixed
// and committed.
type streamWriter struct {
	headerState
	ready     chan struct{}
	committed bool
	buf       *bufio.Writer
	bytes     int64 // body bytes accepted
	err       error // the first write error: the reader has gone
}

// commit fixes the prelude (status 200 when none was chosen) and lets Stream
// return it.
func (w *streamWriter) commit() {
	if w.committed {
		return
	}
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.committed = true
	close(w.ready)
}

func (w *streamWriter) Write(p []byte) (int, error) {
	w.implicit(p)
	w.commit()
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.buf.Write(p)
	w.bytes += int64(n)
	if err != nil {
		w.err = err
	}
	return n, err
}

// FlushError commits the prelude and passes the buffered body on; it blocks
// until the runtime client has read it. It is what http.ResponseController
// calls; an error means the reader has gone.
func (w *streamWriter) FlushError() error {
	w.commit()
	if w.err != nil {
		return w.err
	}
	if err := w.buf.Flush(); err != nil {
		w.err = err
	}
	return w.err
}

// Flush implements http.Flusher.
func (w *streamWriter) Flush() { _ = w.FlushError() }

// reset discards an uncommitted response (to answer a panic). Nothing is
// buffered yet: every Write commits first.
func (w *streamWriter) reset() {
	w.header, w.status, w.sent = http.Header{}, 0, nil
}

// streamBody is the streamed response body: the pipe's reader, whose Close
// also ends the handler (see Stream).
type streamBody struct {
	pr     *io.PipeReader
	cancel context.CancelFunc
	done   chan struct{}
}

func (b *streamBody) Read(p []byte) (int, error) { return b.pr.Read(p) }

// Close cancels the handler's context, makes its further writes fail with
// io.ErrClosedPipe and waits for it to return. It returns nil.
func (b *streamBody) Close() error {
	b.pr.Close()
	b.cancel()
	<-b.done
	return nil
}

// splitHeader divides headers into single-valued and repeated ones, nil when
// empty.
func splitHeader(h http.Header) (single map[string]string, multi map[string][]string) {
	for k, vs := range h {
		switch len(vs) {
		case 0:
		case 1:
			if single == nil {
				single = map[string]string{}
			}
			single[k] = vs[0]
		default:
			if multi == nil {
				multi = map[string][]string{}
			}
			multi[k] = append([]string(nil), vs...)
		}
	}
	return single, multi
}

// joinHeader gives headers as a map of one value each, the only form payload
// format 2.0 and the function URL's prelude carry: repeated field lines
// joined with ", " (RFC 9110 §5.3), Set-Cookie apart as cookies (RFC 6265
// §3 forbids folding it). Both are nil when empty.
func joinHeader(h http.Header) (single map[string]string, cookies []string) {
	for k, vs := range h {
		if len(vs) == 0 {
			continue
		}
		if k == "Set-Cookie" {
			cookies = append(cookies, vs...)
			continue
		}
		if single == nil {
			single = map[string]string{}
		}
		single[k] = strings.Join(vs, ", ")
	}
	return single, cookies
}

// writeBadEvent answers an event that is no HTTP request (ErrBadEvent).
func writeBadEvent(w http.ResponseWriter) {
	writeJSONError(w, http.StatusBadRequest, "the request could not be read")
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	body, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
