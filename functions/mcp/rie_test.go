package main

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/custodymcp/custody/shared/lambdaio/lambdaiotest"
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

// skipRIEVar, when set, skips the runtime emulator tests; nothing else does.
const skipRIEVar = "CUSTODY_SKIP_RIE_TEST"

// rieBinary returns the installed RIE (make tools-rie, which make test runs).
func rieBinary(t testing.TB) string {
	t.Helper()
	if os.Getenv(skipRIEVar) != "" {
		t.Skipf("%s is set: the Lambda runtime emulator test is skipped on request", skipRIEVar)
	}
	if runtime.GOOS != "linux" {
		t.Fatalf("the Lambda Runtime Interface Emulator runs on Linux only; set %s=1 to skip this test on purpose", skipRIEVar)
	}
	p := filepath.Join(repoRoot(t), ".tools", "bin", "aws-lambda-rie")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the Lambda Runtime Interface Emulator is not installed at %s: run `make tools-rie` (make test does), or set %s=1 to skip this test on purpose", p, skipRIEVar)
	}
	return p
}

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

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// bootstrap builds the function once per test binary, for this machine, as
// template.yaml's build does for linux/arm64 (-tags lambda.norpc -trimpath
// -ldflags='-s -w', CGO off), and returns the path of the binary named
// bootstrap.
func bootstrap(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "custody-bootstrap-"); buildErr != nil {
			return
		}
		buildErr = goBuild(filepath.Join(buildDir, "bootstrap"), nil)
	})
	if buildErr != nil {
		t.Fatalf("build the bootstrap: %v", buildErr)
	}
	return filepath.Join(buildDir, "bootstrap")
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
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// freePorts returns n distinct loopback ports that were free a moment ago
// (all held open together, so none is returned twice).
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// lockedBuffer collects a process's output.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// rieProcess is one RIE with the bootstrap under it.
type rieProcess struct {
	cmd     *exec.Cmd
	url     string
	started time.Time
	out     *lockedBuffer
	client  *http.Client
}

// startRIE starts the RIE on loopback ports (its invoke endpoint and the
// Runtime API it serves the bootstrap) with env as the function's
// environment; the RIE passes its own environment on to the function. The
// process group (the RIE and the bootstrap it spawns) ends with the test.
func startRIE(t testing.TB, rie, boot string, env map[string]string) *rieProcess {
	t.Helper()
	home := t.TempDir()
	procEnv := []string{
		"PATH=/usr/bin:/bin",
		"HOME=" + home,
		// The AWS SDK's default chain: static emulator credentials, no
		// shared files, no instance metadata.
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=emulator", "AWS_SECRET_ACCESS_KEY=emulator",
		"AWS_CONFIG_FILE=" + filepath.Join(home, "none"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "none"),
		"AWS_EC2_METADATA_DISABLED=true",
		// As template.yaml configures the function.
		"AWS_LAMBDA_FUNCTION_NAME=McpFunction", "AWS_LAMBDA_FUNCTION_TIMEOUT=900",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=1024",
	}
	for k, v := range env {
		procEnv = append(procEnv, k+"="+v)
	}
	ports := freePorts(t, 2)
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	cmd := exec.Command(rie,
		"--runtime-interface-emulator-address", addr,
		"--runtime-api-address", fmt.Sprintf("127.0.0.1:%d", ports[1]),
		"--log-level", "error",
		boot)
	cmd.Env = procEnv
	cmd.Dir = filepath.Dir(boot)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &rieProcess{cmd: cmd, url: "http://" + addr + "/2015-03-31/functions/function/invocations", out: out,
		client: &http.Client{Timeout: time.Minute}}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the RIE: %v", err)
	}
	t.Cleanup(p.stop)
	return p
}

// stop ends the RIE's process group (the RIE and the bootstrap under it).
func (p *rieProcess) stop() {
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
	}
}

// invoke posts one event to the RIE's invoke endpoint as Lambda's Invoke API
// would, with the Lambda request id requestID, retrying while the RIE is not
// yet listening. It returns the function's raw answer.
func (p *rieProcess) invoke(t testing.TB, event []byte, requestID string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(event))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Amzn-RequestId", requestID)
		resp, err := p.client.Do(req)
		if errors.Is(err, syscall.ECONNREFUSED) && ctx.Err() == nil {
			time.Sleep(2 * time.Millisecond) // the RIE is still starting
			continue
		}
		if err != nil {
			t.Fatalf("invoke through the RIE: %v\nRIE output:\n%s", err, p.out)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("RIE invoke = %d %q, %v\nRIE output:\n%s", resp.StatusCode, body, err, p.out)
		}
		return body
	}
}

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
		case "cold start":
		default:
			t.Errorf("unexpected log line at INFO: %s", sc.Bytes())
		}
	}
	return lines
}

// The samples, played in order through the real runtime (RIE) in the mode
// the template deploys: streaming. initialize → tools/list → a read tool →
// DELETE, each answer parsed from the streaming prelude and body; one
// outcome line per invocation, carrying the Lambda request id.
func TestRuntimeEmulatorStreamsTheSamples(t *testing.T) {
	rie, boot := rieBinary(t), bootstrap(t)
	emu := startEmulator(t)
	p := startRIE(t, rie, boot, emu.env(true))
	var ids []string
	playSamples(t, emu.session(t), func(t *testing.T, event []byte) response {
		var ev events.APIGatewayProxyRequest
		if err := json.Unmarshal(event, &ev); err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("rie-%d", len(ids)+1)
		ids = append(ids, id)
		return streamed(t, p.invoke(t, event, id), p.out)
	})
	p.stop()
	lines := outcomeLines(t, p.out.String())
	var got []string
	for _, l := range lines {
		if l["streamed"] != true {
			t.Errorf("outcome line %v did not stream", l)
		}
		got = append(got, fmt.Sprint(l["requestId"]))
	}
	if !slices.Equal(got, ids) {
		t.Errorf("outcome lines carry request ids %v, want exactly one per invocation %v\nRIE output:\n%s", got, ids, p.out)
	}
}

// With RESPONSE_STREAMING=false the same binary answers a buffered
// APIGatewayProxyResponse, for an integration that does not stream.
func TestRuntimeEmulatorBuffered(t *testing.T) {
	rie, boot := rieBinary(t), bootstrap(t)
	emu := startEmulator(t)
	p := startRIE(t, rie, boot, emu.env(false))
	s := &sampleSession{key: emu.Key}
	for _, step := range []sampleStep{sampleSteps[0], sampleSteps[len(sampleSteps)-1]} {
		raw := p.invoke(t, readSample(t, step.file, s), "rie-buffered-"+step.file)
		var resp events.APIGatewayProxyResponse
		if err := json.Unmarshal(raw, &resp); err != nil || resp.StatusCode == 0 {
			t.Fatalf("%s: answer %q is no APIGatewayProxyResponse: %v", step.file, raw, err)
		}
		step.check(t, proxyResponse(t, resp), s)
	}
}

// BenchmarkRuntimeEmulatorColdStart measures a cold start: from starting
// the RIE process to the answer of the first invoke (an initialize), which
// includes the RIE's own start, the bootstrap's exec and init (config, AWS
// config, handler) and one authenticated request against the emulator.
// ms/op is one cold start; the bootstrap's size for this machine is
// reported beside it.
func BenchmarkRuntimeEmulatorColdStart(b *testing.B) {
	rie, boot := rieBinary(b), bootstrap(b)
	emu := startEmulator(b)
	host, err := os.Stat(boot)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		p := startRIE(b, rie, boot, emu.env(true))
		s := &sampleSession{key: emu.Key}
		r := streamed(b, p.invoke(b, readSample(b, sampleSteps[0].file, s), fmt.Sprintf("cold-%d", i)), p.out)
		b.StopTimer()
		sampleSteps[0].check(b, r, s)
		p.stop()
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
	boot := bootstrap(t)
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
