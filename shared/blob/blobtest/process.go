package blobtest

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The local S3 server in a process of its own, for tests that measure the
// memory of the process under test (a verifier streaming 512 MiB) or span
// processes: cmd/s3local, built here without the race detector.

// BuildS3Local builds cmd/s3local without the race detector into a temp
// folder. It skips without the go tool, and fails when CI=true.
func BuildS3Local(t testing.TB) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the go tool is needed to build cmd/s3local: %v", err)
		}
		t.Skipf("skipping: the go tool is needed to build cmd/s3local: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "s3local")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, goTool, "build", "-o", bin, "github.com/custodymcp/custody/shared/blob/s3local/cmd/s3local").CombinedOutput()
	if err != nil {
		t.Fatalf("go build cmd/s3local: %v\n%s", err, out)
	}
	return bin
}

// StartS3Local runs the s3local command with args until t ends and returns
// its base URL.
func StartS3Local(t testing.TB, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start s3local: %v", err)
	}
	done := make(chan struct{})
	urls := make(chan string, 1)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			urls <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("s3local stderr:\n%s", stderr.String())
		}
	})
	select {
	case url := <-urls:
		if !strings.HasPrefix(url, "http://127.0.0.1:") {
			t.Fatalf("s3local printed %q, want its base URL", url)
		}
		return url
	case <-done:
		t.Fatalf("s3local exited before serving: %s", stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("s3local not serving after 30 s")
	}
	return ""
}
