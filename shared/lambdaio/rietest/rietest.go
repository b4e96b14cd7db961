// Package rietest runs a Lambda function's bootstrap under the AWS Lambda
// Runtime Interface Emulator for the functions' runtime tests.
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
)

// The real Lambda runtime, locally: a function's bootstrap, built for this
// machine with -tags lambda.norpc as the template builds it for arm64,
// runs under the RIE (installed by `make tools-rie` into .tools/bin), which
// drives it through the Runtime API as Lambda does.

// SkipRIEVar, when set, skips the runtime emulator tests; nothing else
// does.
const SkipRIEVar = "CUSTODY_SKIP_RIE_TEST"

// RIEBinary returns the installed RIE, skipping the test when SkipRIEVar
// is set and failing it when the RIE is missing or the OS is not Linux.
func RIEBinary(t testing.TB) string {
	t.Helper()
	if os.Getenv(SkipRIEVar) != "" {
		t.Skipf("%s is set: the Lambda runtime emulator test is skipped on request", SkipRIEVar)
	}
	if runtime.GOOS != "linux" {
		t.Fatalf("the Lambda Runtime Interface Emulator runs on Linux only; set %s=1 to skip this test on purpose", SkipRIEVar)
	}
	p := filepath.Join(RepoRoot(t), ".tools", "bin", "aws-lambda-rie")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the Lambda Runtime Interface Emulator is not installed at %s: run `make tools-rie` (make test does), or set %s=1 to skip this test on purpose", p, SkipRIEVar)
	}
	return p
}

// RepoRoot is the module's root (where go.mod is) above the test's
// directory.
func RepoRoot(t testing.TB) string {
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

// BuildBootstrap builds the package in the test's directory into a binary
// named bootstrap in a temporary directory, as the template's build does
// (-tags lambda.norpc -trimpath, CGO off) with env added (GOOS, GOARCH for
// a cross build), and returns its path.
func BuildBootstrap(t testing.TB, env ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bootstrap")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(gobin, "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", out, ".")
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0"), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build the bootstrap: %v\n%s", err, b)
	}
	return out
}

// RIE is one emulator with a bootstrap under it.
type RIE struct {
	cmd    *exec.Cmd
	url    string
	out    *lockedBuffer
	client *http.Client
	once   sync.Once
}

// Function is what Lambda tells a function about itself.
type Function struct {
	Name      string
	TimeoutS  int
	MemoryMiB int
}

// StartRIE starts the RIE on loopback ports with boot under it and env as
// the function's environment (the AWS SDK's chain gets static credentials
// from env's AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or dummy ones,
// no shared files and no instance metadata). The process group ends with
// the test.
func StartRIE(t testing.TB, rie, boot string, fn Function, env map[string]string) *RIE {
	t.Helper()
	home := t.TempDir()
	procEnv := map[string]string{
		"PATH": "/usr/bin:/bin", "HOME": home,
		"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "emulator", "AWS_SECRET_ACCESS_KEY": "emulator",
		"AWS_CONFIG_FILE": filepath.Join(home, "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(home, "none"),
		"AWS_EC2_METADATA_DISABLED": "true",
		"AWS_LAMBDA_FUNCTION_NAME":  fn.Name, "AWS_LAMBDA_FUNCTION_TIMEOUT": fmt.Sprint(fn.TimeoutS),
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": fmt.Sprint(fn.MemoryMiB),
	}
	for k, v := range env {
		procEnv[k] = v
	}
	var list []string
	for k, v := range procEnv {
		list = append(list, k+"="+v)
	}
	ports := freePorts(t, 2)
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	cmd := exec.Command(rie,
		"--runtime-interface-emulator-address", addr,
		"--runtime-api-address", fmt.Sprintf("127.0.0.1:%d", ports[1]),
		"--log-level", "error",
		boot)
	cmd.Env = list
	cmd.Dir = filepath.Dir(boot)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r := &RIE{cmd: cmd, url: "http://" + addr + "/2015-03-31/functions/function/invocations", out: out,
		client: &http.Client{Timeout: 5 * time.Minute}}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the RIE: %v", err)
	}
	t.Cleanup(r.Stop)
	return r
}

// Invoke posts one event as Lambda's Invoke API would, with the Lambda
// request id requestID, retrying while the RIE is not yet listening, and
// returns the function's raw answer (a function error's JSON included).
func (r *RIE) Invoke(t testing.TB, event []byte, requestID string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(event))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Amzn-RequestId", requestID)
		resp, err := r.client.Do(req)
		if errors.Is(err, syscall.ECONNREFUSED) && ctx.Err() == nil {
			time.Sleep(2 * time.Millisecond) // the RIE is still starting
			continue
		}
		if err != nil {
			t.Fatalf("invoke through the RIE: %v\nRIE output:\n%s", err, r.out)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("RIE invoke = %d %q, %v\nRIE output:\n%s", resp.StatusCode, body, err, r.out)
		}
		return body
	}
}

// Output is what the RIE and the bootstrap wrote so far.
func (r *RIE) Output() string { return r.out.String() }

// Stop ends the RIE's process group (the RIE and the bootstrap under it).
// It may be called more than once.
func (r *RIE) Stop() {
	r.once.Do(func() {
		pgid := r.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = r.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-done
		}
	})
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
