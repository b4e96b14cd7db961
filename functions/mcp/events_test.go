package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/custodymcp/custody/shared/lambdaio"
	"github.com/custodymcp/custody/shared/lambdaio/lambdaiotest"
	"github.com/custodymcp/custody/shared/server"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
)

// Every sample is an event of one front door in aws-lambda-go's own
// encoding, by its prefix: apigw- an API Gateway REST proxy event, httpapi-
// an HTTP API event of payload format 2.0, url- a function URL event.
// Decoding it (unknown fields refused) and encoding it again gives the file
// byte for byte, so no field is misspelt or silently dropped.
func TestSampleEventsRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(sampleDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples in %s (%v)", sampleDir, err)
	}
	played := map[string]bool{}
	for _, d := range frontDoors {
		for _, s := range sampleSteps {
			played[s.file(d)] = true
		}
		for _, r := range refusalSamples {
			played[d.prefix+"-"+r.name+".json"] = true
		}
	}
	for _, f := range oauthSamples {
		played[f] = true
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			if !played[name] {
				t.Errorf("%s is not played by the sample tests: add it to sampleSteps, refusalSamples or oauthSamples", name)
			}
			if base := strings.TrimSuffix(name, ".json"); base != strings.ToLower(base) || strings.ContainsAny(base, "_ ") {
				t.Errorf("%s is not kebab-case (docs/decisions.md, Tests and the field cases: events/<function>/<source>-<case>.json)", name)
			}
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var (
				ev                     any
				method, path, resource string
			)
			switch prefix, _, _ := strings.Cut(name, "-"); prefix {
			case "apigw":
				e := &events.APIGatewayProxyRequest{}
				ev = e
				defer func() { path, resource = e.Path, e.Resource; checkRESTRoute(t, e) }()
			case "httpapi":
				e := &events.APIGatewayV2HTTPRequest{}
				ev = e
				defer func() {
					method, path, resource = e.RequestContext.HTTP.Method, e.RawPath, strings.TrimPrefix(e.RouteKey, e.RequestContext.HTTP.Method+" ")
					checkV2Route(t, method, path, resource, e.RequestContext.HTTP.Path, e.PathParameters, e.RouteKey == e.RequestContext.RouteKey)
				}()
			case "url":
				e := &events.LambdaFunctionURLRequest{}
				ev = e
				defer func() {
					if e.RawPath != e.RequestContext.HTTP.Path || e.Version != "2.0" {
						t.Errorf("rawPath %q, requestContext.http.path %q, version %q: want one path and 2.0", e.RawPath, e.RequestContext.HTTP.Path, e.Version)
					}
					if h := e.Headers["host"]; h != e.RequestContext.DomainName || !strings.HasSuffix(h, ".lambda-url.us-east-1.on.aws") {
						t.Errorf("host %q, domainName %q: want the function URL's own domain in both", h, e.RequestContext.DomainName)
					}
				}()
			default:
				t.Fatalf("%s has no known source prefix (apigw-, httpapi-, url-)", name)
			}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(ev); err != nil {
				t.Fatalf("decode: %v", err)
			}
			out, err := json.MarshalIndent(ev, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if got := append(out, '\n'); !bytes.Equal(got, raw) {
				t.Errorf("re-encoded sample differs from the file:\n%s", got)
			}
		})
	}
}

// checkRESTRoute holds a REST event to the routes the REST API has.
func checkRESTRoute(t *testing.T, ev *events.APIGatewayProxyRequest) {
	t.Helper()
	switch {
	case ev.Path == "/mcp" && ev.Resource == "/mcp":
	case ev.Path == "/approvals" && ev.Resource == "/approvals":
	case strings.HasPrefix(ev.Path, "/approvals/") && ev.Resource == "/approvals/{proxy+}" &&
		ev.PathParameters["proxy"] == strings.TrimPrefix(ev.Path, "/approvals/"):
	default:
		t.Errorf("path %q resource %q (proxy %q), want /mcp, /approvals or /approvals/{proxy+} as API Gateway routes them",
			ev.Path, ev.Resource, ev.PathParameters["proxy"])
	}
}

// checkV2Route holds an HTTP API event to the routes the HTTP API has.
func checkV2Route(t *testing.T, method, path, route, httpPath string, params map[string]string, sameRouteKey bool) {
	t.Helper()
	if path != httpPath || !sameRouteKey || method == "" {
		t.Errorf("rawPath %q, requestContext.http.path %q, routeKeys agree %v, method %q: want one path, one route key, a method", path, httpPath, sameRouteKey, method)
	}
	switch {
	case path == "/mcp" && route == "/mcp":
	case path == "/approvals" && route == "/approvals":
	case strings.HasPrefix(path, "/approvals/") && route == "/approvals/{proxy+}" && params["proxy"] == strings.TrimPrefix(path, "/approvals/"):
	default:
		t.Errorf("path %q route %q (proxy %q), want /mcp, /approvals or /approvals/{proxy+} as the HTTP API routes them", path, route, params["proxy"])
	}
}

// The function's own code never registers extra tools (the test fixtures
// and the conformance profile go through server.Config.RegisterExtra) and
// never imports a test helper; the samples' tools/list checks the same from
// the outside.
func TestFunctionRegistersNoFixtures(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, banned := range []string{"RegisterExtra", "servertest", "storetest", "dynamotest", "fixture_"} {
			if bytes.Contains(src, []byte(banned)) {
				t.Errorf("%s mentions %s: the Lambda must serve the read tools only", f, banned)
			}
		}
	}
}

// lambdaContext is an invocation's context as the runtime builds it.
func lambdaContext(t testing.TB, requestID string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: requestID})
}

// functionHandler is the function as the runtime sees it: what main would
// pass lambda.Start for cfg (handler over newServer and newAdapter), built
// over st, its outcome lines written to logs, wrapped by aws-lambda-go's own
// lambda.NewHandler, whose Invoke decodes the event JSON as the runtime
// does and returns the answer's bytes (a streamed answer read to its end).
func functionHandler(t testing.TB, cfg Config, st store.Store, logs io.Writer, opts ...func(*server.Config)) lambda.Handler {
	t.Helper()
	key, err := cfg.CursorKey(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(lambdaio.NewLogHandler(logs, cfg.LogLevel))
	h, err := handler(cfg, func(cfg Config) (*lambdaio.Adapter, error) {
		srv, err := newServer(cfg, st, key, slog.New(requestLines(lambdaio.NewLogHandler(logs, cfg.LogLevel), cfg.ServerLogLevel())), nil, opts...)
		if err != nil {
			return nil, err
		}
		return newAdapter(cfg, srv, logger), nil
	}, logger)
	if err != nil {
		t.Fatalf("handler() error = %v", err)
	}
	return lambda.NewHandler(h)
}

// loadDoor is the configuration of an emulator run behind door d, with env
// changes as key, value pairs.
func loadDoor(t testing.TB, emu *emulator, d frontDoor, kv ...string) Config {
	t.Helper()
	env := emu.envFor(d)
	for i := 0; i+1 < len(kv); i += 2 {
		env[kv[i]] = kv[i+1]
	}
	cfg, err := LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("LoadConfig() error = %v", err)
	}
	return cfg
}

// invokeEvent sends one event through h as the runtime does and reads the
// answer as door d's front would relay it.
func invokeEvent(t testing.TB, h lambda.Handler, d frontDoor, ctx context.Context, event []byte) response {
	t.Helper()
	raw, err := h.Invoke(ctx, event)
	if err != nil {
		t.Fatalf("Invoke() error = %v", err)
	}
	return readAnswer(t, d, raw)
}

// readAnswer reads the function's answer behind door d, as the runtime
// returns it: a streamed prelude and body (the REST stream and the function
// URL share the framing), a REST proxy response or an HTTP API response of
// payload format 2.0.
func readAnswer(t testing.TB, d frontDoor, raw []byte) response {
	t.Helper()
	switch {
	case d.streaming:
		pre, body, err := lambdaiotest.ReadPrelude(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("the answer %q is no streamed response: %v", raw, err)
		}
		b, _ := io.ReadAll(body)
		h := pre.Header()
		for _, c := range pre.Cookies {
			h.Add("Set-Cookie", c)
		}
		return response{Status: pre.StatusCode, Header: h, Body: b}
	case d.front == FrontHTTP:
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(raw, &resp); err != nil || resp.StatusCode == 0 {
			t.Fatalf("the answer %q is no HTTP API response: %v", raw, err)
		}
		if len(resp.MultiValueHeaders) > 0 {
			t.Errorf("HTTP API response has multiValueHeaders %v: payload format 2.0 has none", resp.MultiValueHeaders)
		}
		r := proxyResponse(t, events.APIGatewayProxyResponse{StatusCode: resp.StatusCode, Headers: resp.Headers,
			Body: resp.Body, IsBase64Encoded: resp.IsBase64Encoded})
		for _, c := range resp.Cookies {
			r.Header.Add("Set-Cookie", c)
		}
		return r
	}
	var resp events.APIGatewayProxyResponse
	if err := json.Unmarshal(raw, &resp); err != nil || resp.StatusCode == 0 {
		t.Fatalf("the answer %q is no APIGatewayProxyResponse: %v", raw, err)
	}
	return proxyResponse(t, resp)
}

// Every door's samples, played in order through the function as the runtime
// sees it (functionHandler: config from its environment, the DynamoDB
// client wired as main wires it, the adapter method main picks) over the
// DynamoDB emulator seeded with the demo firm, get the answer a client
// expects, with one outcome line per invocation. Behind the function URL
// the events carry the URL's own Host, and PUBLIC_BASE_URL (the custom
// domain) builds every link.
func TestSampleEventsThroughTheHandler(t *testing.T) {
	emu := startEmulator(t)
	for _, d := range frontDoors {
		t.Run(d.name, func(t *testing.T) {
			cfg := loadDoor(t, emu, d)
			var logs bytes.Buffer
			h := functionHandler(t, cfg, dynamostore.New(newDynamoDB(testAWSConfig(), cfg), cfg.TableName, dynamostore.Options{}), &logs)
			invocations := 0
			playSamples(t, d, emu.session(t), func(t *testing.T, raw []byte) response {
				invocations++
				return invokeEvent(t, h, d, lambdaContext(t, fmt.Sprintf("%s-%d", d.prefix, invocations)), raw)
			})
			outcomes := 0
			for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				var m map[string]any
				switch err := json.Unmarshal([]byte(l), &m); {
				case err != nil:
					t.Errorf("log line %s is not JSON", l)
				case m["message"] == "invocation" && m["streamed"] == d.streaming:
					outcomes++
				case m["message"] == "mcp request" && m["outcome"] != "ok":
					// The transport's line of a request that did not simply
					// succeed (requestLines), e.g. the unauthenticated one.
				default:
					t.Errorf("log line %s, want an outcome line with streamed %v or a not-plain request line", l, d.streaming)
				}
			}
			if outcomes != invocations {
				t.Errorf("%d outcome lines for %d invocations, want one each:\n%s", outcomes, invocations, logs.String())
			}
		})
	}
}

// refusalSamples are each door's refusals at its edge, before any
// credential is read: every one is JSON, shaped as the function shapes its
// errors (a JSON-RPC error from /mcp, {"error": …} from the adapter).
var refusalSamples = []struct {
	name   string
	status int
	// rpcCode is the JSON-RPC error code of the body; 0: the adapter's
	// {"error": "the request could not be read"}.
	rpcCode float64
}{
	// A body over MAX_BODY_BYTES (1024 in this test; 1 MiB on AWS, where
	// the REST API refuses bodies over 10 MB itself, the HTTP API over
	// 10 MB and a function URL over 6 MB, each with its own answer).
	{"body-too-large", http.StatusRequestEntityTooLarge, -32600},
	// An Origin that is neither ALLOWED_ORIGINS' nor the public base's.
	{"origin-refused", http.StatusForbidden, -32600},
	// A body flagged base64 that is not.
	{"malformed", http.StatusBadRequest, 0},
}

// Each door's refusals at the edge, played through the function as the
// runtime sees it; and an event of another door than the configured one is
// a malformed event (400 JSON), never a request built from half its fields.
func TestFrontDoorRefusalsAreJSON(t *testing.T) {
	emu := startEmulator(t)
	for _, d := range []frontDoor{restStreamed, restBuffered, httpAPI, functionURL} {
		t.Run(d.name, func(t *testing.T) {
			cfg := loadDoor(t, emu, d, "MAX_BODY_BYTES", "1024")
			h := functionHandler(t, cfg, emu.Store, io.Discard)
			s := emu.session(t)
			check := func(t *testing.T, r response, status int, rpcCode float64) {
				t.Helper()
				var body map[string]any
				if r.Status != status || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || json.Unmarshal(r.Body, &body) != nil {
					t.Fatalf("answer = %d %q %s, want %d with a JSON body", r.Status, r.Header.Get("Content-Type"), r.Body, status)
				}
				if rpcCode == 0 {
					if body["error"] != "the request could not be read" {
						t.Errorf("body %s, want the adapter's malformed-event error", r.Body)
					}
					return
				}
				rpcErr, _ := body["error"].(map[string]any)
				if body["jsonrpc"] != "2.0" || rpcErr["code"] != rpcCode {
					t.Errorf("body %s, want a JSON-RPC error %v", r.Body, rpcCode)
				}
			}
			for _, rs := range refusalSamples {
				t.Run(rs.name, func(t *testing.T) {
					file := d.prefix + "-" + rs.name + ".json"
					check(t, invokeEvent(t, h, d, lambdaContext(t, rs.name), readSample(t, file, s)), rs.status, rs.rpcCode)
				})
			}
			// The HTTP API's and the function URL's events share payload
			// format 2.0 (the configuration, not the event, tells them
			// apart); the REST API's differ from both.
			others := []frontDoor{httpAPI, functionURL}
			if d.front != FrontREST {
				others = []frontDoor{restStreamed}
			}
			for _, other := range others {
				t.Run("an event of the "+other.name, func(t *testing.T) {
					raw := readSample(t, sampleSteps[0].file(other), s)
					check(t, invokeEvent(t, h, d, lambdaContext(t, "other"), raw), http.StatusBadRequest, 0)
				})
			}
		})
	}
}

func invokeBuffer(t *testing.T, a *lambdaio.Adapter, ctx context.Context, ev events.APIGatewayProxyRequest) response {
	t.Helper()
	resp, err := a.Buffer(ctx, ev)
	if err != nil {
		t.Fatalf("Buffer() error = %v", err)
	}
	return proxyResponse(t, resp)
}

// proxyResponse reads a buffered proxy response as API Gateway would.
func proxyResponse(t testing.TB, resp events.APIGatewayProxyResponse) response {
	t.Helper()
	h := http.Header{}
	for k, v := range resp.Headers {
		h.Add(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			t.Fatalf("base64 body: %v", err)
		}
	}
	return response{Status: resp.StatusCode, Header: h, Body: body}
}
