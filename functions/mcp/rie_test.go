package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/lambdaio/lambdaiotest"
	"github.com/custodymcp/custody/shared/lambdaio/rietest"
)

// The real Lambda runtime, locally: the function's bootstrap, built for this
// machine with -tags lambda.norpc exactly as the template builds it for
// arm64, runs under the AWS Lambda Runtime Interface Emulator (RIE), which
// drives it through the Runtime API as Lambda does (GET /next, POST
// /response with the streaming content type and chunked body). The store is
// the DynamoDB emulator over HTTP on loopback.
//
// What the RIE cannot show: it reads the whole response before answering its
// caller (internal/lambda/rapidcore/server.go: io.ReadAll), so the bytes come
// back at once; that each flush travels on its own is FB-34's test in
// shared/lambdaio. The RIE also sends no API Gateway in front: the test
// posts the proxy events itself.

// repoRoot is the module's root (where go.mod is).
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func goBuild(out string, env []string) error {
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	// The flags of the Makefile's build-McpFunction.
	cmd := exec.Command(gobin, "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", out, ".")
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0"), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, b)
	}
	return nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	rietest.Cleanup()
	os.Exit(code)
}

// mcpPkg is the function's package, which rietest builds as the template
// does; mcpTimeout is its Timeout in template.yaml.
const (
	mcpPkg     = "github.com/custodymcp/custody/functions/mcp"
	mcpTimeout = 900 * time.Second
)

// streamed reads a streaming answer: prelude, delimiter, body.
func streamed(t testing.TB, raw []byte, rieOut fmt.Stringer) response {
	t.Helper()
	pre, body, err := lambdaiotest.ReadPrelude(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("the function's answer %q is no streaming response: %v\nRIE output:\n%s", raw, err, rieOut)
	}
	b, _ := io.ReadAll(body)
	return response{Status: pre.StatusCode, Header: pre.Header(), Body: b}
}

// outcomeLines returns the function's "invocation" log lines (its JSON
// lines; the RIE's own START/END/REPORT lines are text). At LOG_LEVEL INFO
// the function logs nothing else but its one "cold start" line.
func outcomeLines(t testing.TB, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch m["message"] {
		case "invocation":
			lines = append(lines, m)
		case "cold start", "public base URL from the function URL":
		default:
			t.Errorf("unexpected log line at INFO: %s", sc.Bytes())
		}
	}
	return lines
}

// The samples, played in order through the real runtime (RIE) behind each
// streaming door: the REST API's streaming integration (what the template
// deploys by default) and the function URL (InvokeMode RESPONSE_STREAM).
// initialize → tools/list → a read tool → DELETE → the approval page → an
// unauthenticated call, each answer parsed from the streaming prelude and
// body; one outcome line per invocation, carrying the Lambda request id.
// The RIE runs the function's side of Lambda (the Runtime API and its
// streaming response); no function URL or API Gateway sits in front, so
// the test posts each door's events itself.
func TestRuntimeEmulatorStreamsTheSamples(t *testing.T) {
	rie, boot := rietest.Binary(t), rietest.Build(t, mcpPkg)
	emu := startEmulator(t)
	for _, d := range []frontDoor{restStreamed, functionURL} {
		t.Run(d.name, func(t *testing.T) {
			p := rietest.Start(t, rie, boot, "McpFunction", mcpTimeout, emu.envFor(d))
			var ids []string
			playSamples(t, d, emu.session(t), func(t *testing.T, event []byte) response {
				id := fmt.Sprintf("rie-%s-%d", d.prefix, len(ids)+1)
				ids = append(ids, id)
				return readAnswer(t, d, p.Invoke(t, event, id))
			})
			p.Stop()
			lines := outcomeLines(t, p.Output())
			var got []string
			for _, l := range lines {
				if l["streamed"] != true {
					t.Errorf("outcome line %v did not stream", l)
				}
				got = append(got, fmt.Sprint(l["requestId"]))
			}
			if !slices.Equal(got, ids) {
				t.Errorf("outcome lines carry request ids %v, want exactly one per invocation %v\nRIE output:\n%s", got, ids, p.Output())
			}
		})
	}
}

// With RESPONSE_STREAMING=false the same binary answers a buffered
// APIGatewayProxyResponse, for a REST integration that does not stream;
// with FRONT_DOOR=http, an HTTP API response of payload format 2.0.
func TestRuntimeEmulatorBuffered(t *testing.T) {
	rie, boot := rietest.Binary(t), rietest.Build(t, mcpPkg)
	emu := startEmulator(t)
	for _, d := range []frontDoor{restBuffered, httpAPI} {
		t.Run(d.name, func(t *testing.T) {
			p := rietest.Start(t, rie, boot, "McpFunction", mcpTimeout, emu.envFor(d))
			s := &sampleSession{key: emu.Key}
			for _, step := range []sampleStep{sampleSteps[0], sampleSteps[len(sampleSteps)-1]} {
				raw := p.Invoke(t, readSample(t, step.file(d), s), "rie-buffered-"+step.file(d))
				step.check(t, readAnswer(t, d, raw), s)
			}
		})
	}
}

// BenchmarkRuntimeEmulatorColdStart measures a cold start: from starting
// the RIE process to the answer of the first invoke (an initialize), which
// includes the RIE's own start, the bootstrap's exec and init (config, AWS
// config, handler) and one authenticated request against the emulator.
// ms/op is one cold start; the bootstrap's size for this machine is
// reported beside it.
func BenchmarkRuntimeEmulatorColdStart(b *testing.B) {
	rie, boot := rietest.Binary(b), rietest.Build(b, mcpPkg)
	emu := startEmulator(b)
	host, err := os.Stat(boot)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		p := rietest.Start(b, rie, boot, "McpFunction", mcpTimeout, emu.env(true))
		s := &sampleSession{key: emu.Key}
		r := streamed(b, p.Invoke(b, readSample(b, sampleSteps[0].file(restStreamed), s), fmt.Sprintf("cold-%d", i)), p)
		b.StopTimer()
		sampleSteps[0].check(b, r, s)
		p.Stop()
		b.StartTimer()
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/coldstart")
	b.ReportMetric(float64(host.Size())/1e6, "bootstrap-MB")
}

// maxBootstrapBytes bounds the shipped bootstrap, which Lambda downloads
// and maps at every cold start. Issue 19 asked for 12 MiB; the upload lane
// put the S3 client (multipart calls and presigning) into /mcp, which brings
// the stripped linux/arm64 binary to about 21 MB, so the bound is 24 MiB and
// the miss is recorded in docs/decisions.md ("start-up and footprint").
const maxBootstrapBytes = 24 << 20

func TestShippedBootstrapIsStrippedAndBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the function for linux/arm64")
	}
	arm := filepath.Join(t.TempDir(), "bootstrap")
	if err := goBuild(arm, []string{"GOOS=linux", "GOARCH=arm64"}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(arm)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > maxBootstrapBytes {
		t.Fatalf("linux/arm64 bootstrap built as make build-McpFunction does = %d bytes, want at most %d", fi.Size(), maxBootstrapBytes)
	}
	f, err := elf.Open(arm)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if sec := f.Section(".symtab"); sec != nil {
		t.Fatalf("linux/arm64 bootstrap has a symbol table (%d bytes): want it stripped (-ldflags='-s -w')", sec.Size)
	}
}

// A missing or invalid variable fails the cold start: one log line naming
// each offending variable, exit status 1, before any Lambda traffic.
func TestColdStartFailsWithOneLineNamingTheVariable(t *testing.T) {
	boot := rietest.Build(t, mcpPkg)
	cmd := exec.Command(boot)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "DYNAMODB_TABLE=custody", "PUBLIC_BASE_URL=https://mcp.firm.example",
		"CURSOR_KEY_SECRET_ARN=" + testSecretARN, "LOG_LEVEL=LOUD"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("bootstrap with a bad environment: %v, want exit status 1", err)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 1 || stdout.Len() != 0 {
		t.Fatalf("output = stdout %q, stderr %q; want exactly one line on stderr", stdout.String(), stderr.String())
	}
	var line struct {
		Level     string   `json:"level"`
		Variables []string `json:"variables"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &line); err != nil {
		t.Fatalf("the line %q is not JSON: %v", lines[0], err)
	}
	if want := []string{"RESPONSE_STREAMING", "LOG_LEVEL"}; line.Level != "ERROR" || !slices.Equal(line.Variables, want) {
		t.Errorf("line = %s, want an ERROR naming %v", lines[0], want)
	}
}
