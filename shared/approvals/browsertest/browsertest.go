// Package browsertest drives a real browser for the approval page's tests:
// Debian's chromium (156, docs/decisions.md "Versions") started headless by
// github.com/chromedp/chromedp over the DevTools protocol, with a fresh
// profile per test, so cookies, the Origin and Sec-Fetch-* headers of form
// posts, the content security policy and redirects are the browser's own,
// not a test client's idea of them.
//
// Chromium is started with --no-sandbox (tests run as root, where its
// sandbox refuses to start), GPU, QUIC, sync, component updates and
// background networking off: this machine's network is closed, and without
// those flags Chromium spends its start on connections that are refused.
//
// Finding Chromium follows the project's rule for external components:
// when it is missing and the test runs as root, Chromium installs Debian's
// chromium with the repository's scripts/ci/install-chromium.sh; otherwise
// the test is skipped with a message naming what is missing, and fails
// instead when CI=true.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// WantSeries is the chromium version the project pins.
const WantSeries = "156."

// Timeout bounds one test's browser (start, every step, the screenshot).
const Timeout = 2 * time.Minute

var (
	findOnce       sync.Once
	found, missing string
)

// Chromium returns the path of Debian's chromium at WantSeries, installing
// it first when missing and the test runs as root; else it skips the test
// naming what is missing (fails it when CI=true).
func Chromium(t testing.TB) string {
	t.Helper()
	findOnce.Do(func() { found, missing = find(t) })
	if found == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (CI=true: the browser tests may not be skipped)", missing)
		}
		t.Skip(missing)
	}
	return found
}

func find(t testing.TB) (string, string) {
	if p, v := lookChromium(); p != "" && strings.HasPrefix(v, WantSeries) {
		return p, ""
	}
	script, err := installScript()
	if err != nil {
		return "", fmt.Sprintf("chromium (Debian chromium %sx) is not installed, and %v", WantSeries, err)
	}
	if os.Geteuid() != 0 {
		return "", fmt.Sprintf("chromium (Debian chromium %sx) is not installed: run %s as root", WantSeries, script)
	}
	t.Logf("chromium is missing: running %s", script)
	out, err := exec.Command("bash", script).CombinedOutput()
	if err != nil {
		return "", fmt.Sprintf("installing chromium (Debian chromium %sx) with %s failed: %v\n%s", WantSeries, script, err, out)
	}
	p, v := lookChromium()
	if p == "" || !strings.HasPrefix(v, WantSeries) {
		return "", fmt.Sprintf("after %s, chromium is at %q version %q, want %sx", script, p, v, WantSeries)
	}
	return p, ""
}

// lookChromium finds /usr/bin/chromium (or chromium on PATH) and reads its
// version ("Chromium 156.0.8078.114 built on Debian …" → "156.0.8078.114").
func lookChromium() (path, version string) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		if fi, err := os.Stat("/usr/bin/chromium"); err != nil || fi.Mode()&0o111 == 0 {
			return "", ""
		}
		path = "/usr/bin/chromium"
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return path, ""
	}
	f := strings.Fields(string(out))
	if len(f) < 2 {
		return path, ""
	}
	return path, f[1]
}

// installScript is scripts/ci/install-chromium.sh of the repository the
// test runs in.
func installScript() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, "scripts", "ci", "install-chromium.sh")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("the repository has no %s", p)
	}
	return p, nil
}

// RepoRoot is the module's root (where go.mod is), found from the working
// directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		dir = parent
	}
}

// New starts a headless Chromium with a fresh profile and returns a
// context of one tab in it, bounded by Timeout. The browser is stopped when
// the test ends.
func New(t testing.TB) context.Context {
	t.Helper()
	path := Chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, Timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	// Start the browser now, so a broken install fails here, named.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium %s: %v", path, err)
	}
	return ctx
}

// Screenshot saves a full-page PNG of the tab to path (below the
// repository root when relative), creating its folder.
func Screenshot(t testing.TB, ctx context.Context, path string) string {
	t.Helper()
	if !filepath.IsAbs(path) {
		root, err := RepoRoot()
		if err != nil {
			t.Fatal(err)
		}
		path = filepath.Join(root, path)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("full-page screenshot: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}
