// Package rietest runs a Lambda function's bootstrap under the AWS Lambda
// Runtime Interface Emulator (RIE): the real runtime locally, which drives
// the function through the Runtime API as Lambda does (GET /next, POST
// /response or /error), so a test sees the exact bytes the function answers
// an invocation with, and its log lines.
//
// Binary finds the RIE that `make tools-rie` installs into .tools/bin (make
// test runs that target; docs/decisions.md "Versions" pins it). Without it the
// test is skipped, naming the target, except when CI=true, where it fails.
// Build builds a function as the template builds it (-tags lambda.norpc
// -trimpath -ldflags='-s -w', CGO off), for this machine. Start runs the
// RIE on loopback ports with the bootstrap under it, in its own process
// group, stopped when the test ends.
//
// functions/mcp's tests came first and keep their own copy of this
// machinery beside their streaming checks.
package rietest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/nodetest"
)

// SkipVar, when set, skips the runtime emulator tests on request.
const SkipVar = "CUSTODY_SKIP_RIE_TEST"

// Binary returns the installed RIE, skipping (or failing, with CI=true)
// when it is not there.
func Binary(t testing.TB) string {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if os.Getenv(SkipVar) != "" {
		t.Skipf("%s is set: the Lambda runtime emulator test is skipped on request", SkipVar)
	}
	if runtime.GOOS != "linux" {
		missing("the Lambda Runtime Interface Emulator runs on Linux only")
	}
	root, err := nodetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, ".tools", "bin", "aws-lambda-rie")
	if _, err := os.Stat(p); err != nil {
		missing("the Lambda Runtime Interface Emulator is not installed at %s: run `make tools-rie` (make test does)", p)
	}
	return p
}

var (
	buildMu sync.Mutex
	builds  = map[string]string{}
)

// Build builds the main package pkg (an import path, e.g.
// "github.com/custodymcp/custody/functions/worker") once per test binary,
// for this machine, with the template's flags, and returns the path of the
// binary, named bootstrap. Cleanup, from TestMain, removes the builds.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := builds[pkg]; ok {
		return p
	}
	dir, err := os.MkdirTemp("", "custody-bootstrap-")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "bootstrap")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	// The flags of the Makefile's build-<Function> targets.
	cmd := exec.Command(gobin, "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, b)
	}
	builds[pkg] = out
	return out
}

// Cleanup removes the bootstraps Build made; call it from TestMain.
func Cleanup() {
	buildMu.Lock()
	defer buildMu.Unlock()
	for _, p := range builds {
		os.RemoveAll(filepath.Dir(p))
	}
}

// Process is one RIE with a bootstrap under it.
type Process struct {
	cmd    *exec.Cmd
	url    string
	out    *lockedBuffer
	client *http.Client
	once   sync.Once
}

// Start runs the RIE with boot as the function named function, env its
// environment (besides static emulator AWS credentials, no shared config
// files, and the function's name, memory and timeout as Lambda sets them).
func Start(t testing.TB, rie, boot, function string, timeout time.Duration, env map[string]string) *Process {
	t.Helper()
	home := t.TempDir()
	procEnv := []string{
		"PATH=/usr/bin:/bin", "HOME=" + home,
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=emulator", "AWS_SECRET_ACCESS_KEY=emulator",
		"AWS_CONFIG_FILE=" + filepath.Join(home, "none"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "none"),
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_LAMBDA_FUNCTION_NAME=" + function, fmt.Sprintf("AWS_LAMBDA_FUNCTION_TIMEOUT=%d", int(timeout/time.Second)),
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
	p := &Process{cmd: cmd, url: "http://" + addr + "/2015-03-31/functions/function/invocations", out: out,
		client: &http.Client{Timeout: timeout + time.Minute}}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the RIE: %v", err)
	}
	t.Cleanup(p.Stop)
	return p
}

// Stop ends the RIE's process group (the RIE and the bootstrap under it).
func (p *Process) Stop() {
	p.once.Do(func() {
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
	})
}

// Output is what the RIE and the function wrote so far.
func (p *Process) Output() string { return p.out.String() }

// String is Output, so a Process prints as what it wrote (in a failure's
// message, read when the message is).
func (p *Process) String() string { return p.Output() }

// Invoke posts one event as Lambda's Invoke API would, with the Lambda
// request id requestID, retrying while the RIE is not yet listening, and
// returns the function's raw answer.
func (p *Process) Invoke(t testing.TB, event []byte, requestID string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), p.client.Timeout)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(event))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Amzn-RequestId", requestID)
		resp, err := p.client.Do(req)
		if errors.Is(err, syscall.ECONNREFUSED) && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond) // the RIE is still starting
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

// freePorts returns n distinct loopback ports that were free a moment ago.
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
