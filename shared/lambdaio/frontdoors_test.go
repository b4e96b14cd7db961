package lambdaio_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net/http"
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

// The two payload-format-2.0 doors: an HTTP API event and a function URL
// event carrying the same request, and the constructor of each.
type v2Door struct {
	name    string
	request func(ctx context.Context, method, rawPath, rawQuery string, headers map[string]string, cookies []string, body string, b64 bool, domain string) (*http.Request, error)
}

var v2Doors = []v2Door{
	{"HTTP API", func(ctx context.Context, method, rawPath, rawQuery string, headers map[string]string, cookies []string, body string, b64 bool, domain string) (*http.Request, error) {
		ev := events.APIGatewayV2HTTPRequest{
			Version: "2.0", RouteKey: method + " /mcp", RawPath: rawPath, RawQueryString: rawQuery,
			Headers: headers, Cookies: cookies, Body: body, IsBase64Encoded: b64,
			RequestContext: events.APIGatewayV2HTTPRequestContext{
				RequestID: "httpapi-1", DomainName: domain, Stage: "$default",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: rawPath, Protocol: "HTTP/1.1", SourceIP: "203.0.113.9"},
			},
		}
		return lambdaio.NewHTTPAPIRequest(ctx, &ev)
	}},
	{"function URL", func(ctx context.Context, method, rawPath, rawQuery string, headers map[string]string, cookies []string, body string, b64 bool, domain string) (*http.Request, error) {
		ev := events.LambdaFunctionURLRequest{
			Version: "2.0", RawPath: rawPath, RawQueryString: rawQuery,
			Headers: headers, Cookies: cookies, Body: body, IsBase64Encoded: b64,
			RequestContext: events.LambdaFunctionURLRequestContext{
				RequestID: "url-1", DomainName: domain,
				HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: method, Path: rawPath, Protocol: "HTTP/1.1", SourceIP: "203.0.113.9"},
			},
		}
		return lambdaio.NewFunctionURLRequest(ctx, &ev)
	}},
}

func TestPayloadFormat2RequestsCarryTheWholeEvent(t *testing.T) {
	deadline := time.Date(2026, 11, 30, 12, 15, 0, 0, time.UTC)
	ctx := invocation(t, "req-v2", deadline)
	const domain = "abcdefghijklmnopqrstuvwxyz012345.lambda-url.us-east-1.on.aws"
	for _, door := range v2Doors {
		t.Run(door.name, func(t *testing.T) {
			r, err := door.request(ctx, "POST", "/approvals/a%2Fb", "x=1&x=2&y=a+b",
				map[string]string{"host": domain, "accept": "application/json, text/event-stream", "x-forwarded-for": "203.0.113.9"},
				[]string{"a=1", "__Host-custody-approvals=s"},
				base64.StdEncoding.EncodeToString([]byte{0, 1, 'x'}), true, domain)
			if err != nil {
				t.Fatalf("request() error = %v", err)
			}
			body, _ := io.ReadAll(r.Body)
			got := map[string]any{
				"method": r.Method, "path": r.URL.Path, "escapedPath": r.URL.EscapedPath(), "rawQuery": r.URL.RawQuery,
				"accept": r.Header.Values("Accept"), "cookie": r.Header.Get("Cookie"), "host": r.Host,
				"body": body, "contentLength": r.ContentLength, "remoteAddr": r.RemoteAddr, "requestURI": r.RequestURI,
			}
			want := map[string]any{
				"method": "POST", "path": "/approvals/a/b", "escapedPath": "/approvals/a%2Fb", "rawQuery": "x=1&x=2&y=a+b",
				"accept": []string{"application/json, text/event-stream"}, "cookie": "a=1; __Host-custody-approvals=s", "host": domain,
				"body": []byte{0, 1, 'x'}, "contentLength": int64(3), "remoteAddr": "203.0.113.9:0",
				"requestURI": "/approvals/a%2Fb?x=1&x=2&y=a+b",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("request mismatch (-want +got):\n%s", diff)
			}
			if d, ok := r.Context().Deadline(); !ok || !d.Equal(deadline) {
				t.Errorf("request deadline = %v, %v; want %v", d, ok, deadline)
			}
			if lc, ok := lambdacontext.FromContext(r.Context()); !ok || lc.AwsRequestID != "req-v2" {
				t.Errorf("request context lambda id = %+v, %v; want req-v2", lc, ok)
			}
		})
		t.Run(door.name+": host falls back to the domain name, the path to /", func(t *testing.T) {
			r, err := door.request(ctx, "GET", "", "", nil, nil, "", false, domain)
			if err != nil {
				t.Fatal(err)
			}
			if r.Host != domain || r.URL.Path != "/" || r.Body != http.NoBody || r.Header.Get("Cookie") != "" {
				t.Errorf("request = host %q path %q body %v cookie %q; want the domain name, /, NoBody, none", r.Host, r.URL.Path, r.Body, r.Header.Get("Cookie"))
			}
		})
		for name, bad := range map[string]struct {
			method, path, body string
			b64                bool
		}{
			"no method":            {path: "/mcp"},
			"invalid base64":       {method: "POST", path: "/mcp", body: "%%%", b64: true},
			"a relative path":      {method: "POST", path: "mcp"},
			"a broken escape":      {method: "POST", path: "/mcp%zz"},
			"an absolute-form URI": {method: "POST", path: "https://other.example/mcp"},
		} {
			t.Run(door.name+": "+name+" is ErrBadEvent", func(t *testing.T) {
				if _, err := door.request(ctx, bad.method, bad.path, "", nil, nil, bad.body, bad.b64, domain); !errors.Is(err, lambdaio.ErrBadEvent) {
					t.Errorf("request() error = %v, want ErrBadEvent", err)
				}
			})
		}
	}
}

func httpAPIPost(body string) events.APIGatewayV2HTTPRequest {
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "POST /mcp", RawPath: "/mcp",
		Headers: map[string]string{"content-type": "application/json", "host": "abc.execute-api.us-east-1.amazonaws.com"},
		Body:    body,
		RequestContext: events.APIGatewayV2HTTPRequestContext{RequestID: "httpapi-7", Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/mcp", Protocol: "HTTP/1.1"}},
	}
}

func TestBufferHTTPAPIReturnsPayloadFormat2(t *testing.T) {
	ctx := invocation(t, "req-h", time.Now().Add(time.Minute))
	tests := []struct {
		name    string
		handler http.HandlerFunc
		event   events.APIGatewayV2HTTPRequest
		want    events.APIGatewayV2HTTPResponse
	}{{
		name: "JSON text; repeated headers joined, cookies apart",
		handler: func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Add("Vary", "Origin")
			w.Header().Add("Vary", "Accept")
			w.Header().Add("Set-Cookie", "a=1; Path=/")
			w.Header().Add("Set-Cookie", "b=2; Path=/")
			w.WriteHeader(http.StatusCreated)
			w.Write(b)
		},
		event: httpAPIPost(`{"jsonrpc":"2.0"}`),
		want: events.APIGatewayV2HTTPResponse{StatusCode: 201, Body: `{"jsonrpc":"2.0"}`,
			Headers: map[string]string{"Content-Type": "application/json", "Vary": "Origin, Accept"},
			Cookies: []string{"a=1; Path=/", "b=2; Path=/"}},
	}, {
		name: "binary body is base64",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write([]byte{0xff, 0x00, 0x10})
		},
		event: httpAPIPost(""),
		want: events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: "/wAQ", IsBase64Encoded: true,
			Headers: map[string]string{"Content-Type": "application/octet-stream"}},
	}, {
		name:    "panic is 500 JSON",
		handler: func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-Partial", "1"); panic("boom") },
		event:   httpAPIPost(""),
		want: events.APIGatewayV2HTTPResponse{StatusCode: 500, Body: "{\"error\":\"internal error\"}\n",
			Headers: map[string]string{"Content-Type": "application/json"}},
	}, {
		name:    "a REST event (no requestContext.http) is 400 JSON",
		handler: func(w http.ResponseWriter, r *http.Request) { t.Error("handler called for a malformed event") },
		event:   events.APIGatewayV2HTTPRequest{RawPath: "/mcp"},
		want: events.APIGatewayV2HTTPResponse{StatusCode: 400, Body: "{\"error\":\"the request could not be read\"}\n",
			Headers: map[string]string{"Content-Type": "application/json"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := lambdaio.New(tt.handler, lambdaio.Options{}).BufferHTTPAPI(ctx, tt.event)
			if err != nil {
				t.Fatalf("BufferHTTPAPI() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("BufferHTTPAPI() mismatch (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("ErrAbortHandler fails the invocation", func(t *testing.T) {
		h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
		if _, err := lambdaio.New(h, lambdaio.Options{}).BufferHTTPAPI(ctx, httpAPIPost("")); !errors.Is(err, http.ErrAbortHandler) {
			t.Errorf("BufferHTTPAPI() error = %v, want http.ErrAbortHandler", err)
		}
	})
	t.Run("the outcome line names the HTTP API request", func(t *testing.T) {
		var logs bytes.Buffer
		a := lambdaio.New(http.NotFoundHandler(), lambdaio.Options{Logger: slog.New(lambdaio.NewLogHandler(&logs, slog.LevelInfo))})
		if _, err := a.BufferHTTPAPI(ctx, httpAPIPost("")); err != nil {
			t.Fatal(err)
		}
		lines := logLines(t, &logs)
		want := map[string]any{"message": "invocation", "method": "POST", "path": "/mcp", "status": float64(404),
			"streamed": false, "apiRequestId": "httpapi-7", "requestId": "req-h"}
		if len(lines) != 1 {
			t.Fatalf("%d log lines, want 1: %s", len(lines), logs.String())
		}
		for k, v := range want {
			if lines[0][k] != v {
				t.Errorf("outcome line %s = %v, want %v", k, lines[0][k], v)
			}
		}
	})
}

func urlPost(body string) events.LambdaFunctionURLRequest {
	return events.LambdaFunctionURLRequest{
		Version: "2.0", RawPath: "/mcp",
		Headers: map[string]string{"content-type": "application/json", "host": "abc.lambda-url.us-east-1.on.aws"},
		Body:    body,
		RequestContext: events.LambdaFunctionURLRequestContext{RequestID: "req-u", DomainName: "abc.lambda-url.us-east-1.on.aws",
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: "/mcp", Protocol: "HTTP/1.1"}},
	}
}

// A function URL's stream is the REST stream's framing with the function
// URL's prelude: statusCode, headers (one value each) and cookies.
func TestStreamFunctionURLPrelude(t *testing.T) {
	ctx := invocation(t, "req-u", time.Now().Add(time.Minute))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Add("Vary", "Origin")
		w.Header().Add("Vary", "Accept")
		w.Header().Add("Set-Cookie", "a=1")
		w.Header().Add("Set-Cookie", "b=2")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "data: 1\n\n")
	})
	resp, err := lambdaio.New(h, lambdaio.Options{}).StreamFunctionURL(ctx, urlPost(`{}`))
	if err != nil {
		t.Fatalf("StreamFunctionURL() error = %v", err)
	}
	if got := resp.ContentType(); got != "application/vnd.awslambda.http-integration-response" {
		t.Errorf("ContentType() = %q, want the HTTP integration response type", got)
	}
	p, body, err := lambdaiotest.ReadPrelude(resp)
	if err != nil {
		t.Fatalf("ReadPrelude() error = %v", err)
	}
	rest, _ := io.ReadAll(body)
	resp.Close()
	want := &lambdaiotest.Prelude{StatusCode: 202,
		Headers: map[string]string{"Content-Type": "text/event-stream", "Vary": "Origin, Accept"},
		Cookies: []string{"a=1", "b=2"}}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("prelude mismatch (-want +got):\n%s", diff)
	}
	if string(rest) != "data: 1\n\n" {
		t.Errorf("body = %q, want the one event", rest)
	}

	t.Run("a malformed event is 400 JSON", func(t *testing.T) {
		resp, err := lambdaio.New(h, lambdaio.Options{}).StreamFunctionURL(ctx, events.LambdaFunctionURLRequest{RawPath: "/mcp"})
		if err != nil {
			t.Fatal(err)
		}
		p, body, err := lambdaiotest.ReadPrelude(resp)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(body)
		resp.Close()
		if p.StatusCode != 400 || p.Headers["Content-Type"] != "application/json" || string(b) != "{\"error\":\"the request could not be read\"}\n" {
			t.Errorf("answer = %+v %q, want 400 with the JSON error", p, b)
		}
	})
}

// FB-34 behind a function URL: an event the handler flushed reaches the
// reader while the handler still runs (see the REST stream's test).
func TestStreamFunctionURLPassesEachFlushOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var done sync.WaitGroup
		done.Add(1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer done.Done()
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "id: 1\ndata: {}\n\n")
			http.NewResponseController(w).Flush()
			<-release
			io.WriteString(w, "id: 2\ndata: {}\n\n")
		})
		ctx := invocation(t, "req-u2", time.Now().Add(15*time.Minute))
		resp, err := lambdaio.New(h, lambdaio.Options{}).StreamFunctionURL(ctx, urlPost(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		_, body, err := lambdaiotest.ReadPrelude(resp)
		if err != nil {
			t.Fatal(err)
		}
		if ev, err := lambdaiotest.ReadEvent(body); err != nil || !cmp.Equal(ev, []string{"id: 1", "data: {}"}) {
			t.Fatalf("event 1 = %q, %v; want it while the handler still runs", ev, err)
		}
		close(release)
		if ev, err := lambdaiotest.ReadEvent(body); err != nil || !cmp.Equal(ev, []string{"id: 2", "data: {}"}) {
			t.Fatalf("event 2 = %q, %v", ev, err)
		}
		resp.Close()
		done.Wait()
	})
}

// RequestTimeout ends the request's context that long after the invocation
// began when the invocation's deadline is later, and leaves an earlier
// deadline alone.
func TestRequestTimeoutBoundsTheRequestContext(t *testing.T) {
	begin := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name              string
		invocationEnds    time.Time
		timeout           time.Duration
		wantRequestEndsAt time.Time
	}{
		{"a 15 min invocation behind a 29 s front ends at 29 s", begin.Add(15 * time.Minute), 29 * time.Second, begin.Add(29 * time.Second)},
		{"an invocation ending sooner keeps its deadline", begin.Add(10 * time.Second), 29 * time.Second, begin.Add(10 * time.Second)},
		{"no timeout keeps the invocation's deadline", begin.Add(15 * time.Minute), 0, begin.Add(15 * time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got time.Time
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got, _ = r.Context().Deadline() })
			a := lambdaio.New(h, lambdaio.Options{RequestTimeout: tt.timeout, Now: func() time.Time { return begin }})
			ctx := invocation(t, "req-t", tt.invocationEnds)
			if _, err := a.BufferHTTPAPI(ctx, httpAPIPost("")); err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tt.wantRequestEndsAt) {
				t.Errorf("buffered request deadline = %v, want %v", got, tt.wantRequestEndsAt)
			}
			resp, err := a.StreamFunctionURL(ctx, urlPost(""))
			if err != nil {
				t.Fatal(err)
			}
			io.ReadAll(resp)
			resp.Close()
			if !got.Equal(tt.wantRequestEndsAt) {
				t.Errorf("streamed request deadline = %v, want %v", got, tt.wantRequestEndsAt)
			}
		})
	}
}
