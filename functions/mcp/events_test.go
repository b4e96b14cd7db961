package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/custodymcp/custody/shared/lambdaio"
	"github.com/custodymcp/custody/shared/lambdaio/lambdaiotest"
	"github.com/custodymcp/custody/shared/store/dynamostore"
)

// Every sample is an API Gateway REST proxy event in aws-lambda-go's own
// encoding: decoding it (unknown fields refused) and encoding it again gives
// the file byte for byte, so no field is misspelt or silently dropped.
func TestSampleEventsRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(sampleDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples in %s (%v)", sampleDir, err)
	}
	var inSequence []string
	for _, s := range sampleSteps {
		inSequence = append(inSequence, s.file)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			if !slices.Contains(inSequence, name) {
				t.Errorf("%s is not played by the sample test: add it to sampleSteps", name)
			}
			if base := strings.TrimSuffix(name, ".json"); base != strings.ToLower(base) || strings.ContainsAny(base, "_ ") {
				t.Errorf("%s is not kebab-case (STYLE.md: events/<function>/<source>-<case>.json)", name)
			}
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			var ev events.APIGatewayProxyRequest
			if err := dec.Decode(&ev); err != nil {
				t.Fatalf("decode: %v", err)
			}
			out, err := json.MarshalIndent(ev, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if got := append(out, '\n'); !bytes.Equal(got, raw) {
				t.Errorf("re-encoded sample differs from the file:\n%s", got)
			}
			switch {
			case ev.Path == "/mcp" && ev.Resource == "/mcp":
			case ev.Path == "/approvals" && ev.Resource == "/approvals":
			case strings.HasPrefix(ev.Path, "/approvals/") && ev.Resource == "/approvals/{proxy+}" &&
				ev.PathParameters["proxy"] == strings.TrimPrefix(ev.Path, "/approvals/"):
			default:
				t.Errorf("path %q resource %q (proxy %q), want /mcp, /approvals or /approvals/{proxy+} as API Gateway routes them",
					ev.Path, ev.Resource, ev.PathParameters["proxy"])
			}
		})
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
func lambdaContext(t *testing.T, requestID string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: requestID})
}

// Every sample, played in order through the function's own handler (config
// from its environment, the DynamoDB client wired as main wires it, the
// adapter) over the DynamoDB emulator seeded with the demo firm, gets the
// answer a client expects; in the streaming mode the template configures and
// in the buffered one.
func TestSampleEventsThroughTheHandler(t *testing.T) {
	emu := startEmulator(t)
	for _, streaming := range []bool{true, false} {
		name := map[bool]string{true: "streaming", false: "buffered"}[streaming]
		t.Run(name, func(t *testing.T) {
			env := emu.env(streaming)
			cfg, err := LoadConfig(func(k string) string { return env[k] })
			if err != nil {
				t.Fatalf("LoadConfig() error = %v", err)
			}
			st := dynamostore.New(newDynamoDB(testAWSConfig(), cfg), cfg.TableName, dynamostore.Options{})
			key, err := cfg.CursorKey(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			srv, err := newServer(cfg, st, key, slog.New(lambdaio.NewLogHandler(io.Discard, cfg.ServerLogLevel())), nil)
			if err != nil {
				t.Fatalf("newServer() error = %v", err)
			}
			adapter := lambdaio.New(srv.Handler(), lambdaio.Options{Logger: slog.New(lambdaio.NewLogHandler(&logs, cfg.LogLevel))})
			invocations := 0
			playSamples(t, emu.session(t), func(t *testing.T, raw []byte) response {
				var ev events.APIGatewayProxyRequest
				if err := json.Unmarshal(raw, &ev); err != nil {
					t.Fatalf("decode sample: %v", err)
				}
				invocations++
				ctx := lambdaContext(t, ev.RequestContext.RequestID)
				if cfg.Streaming {
					return invokeStream(t, adapter, ctx, ev)
				}
				return invokeBuffer(t, adapter, ctx, ev)
			})
			lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
			if len(lines) != invocations {
				t.Errorf("%d log lines for %d invocations, want one outcome line each:\n%s", len(lines), invocations, logs.String())
			}
		})
	}
}

func invokeStream(t *testing.T, a *lambdaio.Adapter, ctx context.Context, ev events.APIGatewayProxyRequest) response {
	t.Helper()
	resp, err := a.Stream(ctx, ev)
	if err != nil {
		t.Fatalf("Stream() error = %v", err)
	}
	defer resp.Close()
	p, body, err := lambdaiotest.ReadPrelude(resp)
	if err != nil {
		t.Fatalf("ReadPrelude() error = %v", err)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatalf("read the streamed body: %v", err)
	}
	return response{Status: p.StatusCode, Header: p.Header(), Body: b}
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
func proxyResponse(t *testing.T, resp events.APIGatewayProxyResponse) response {
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
