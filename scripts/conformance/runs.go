package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/shared/nodetest"
)

// result is the outcome of one run (a suite or the interop test).
type result struct {
	Name string
	// Summary is the run's own summary line, e.g. the suite's
	// "Total: N passed, M failed" ("" when it printed none).
	Summary string
	// NotScored is a 0.2 suite's "Not scored for REV: …" line followed by
	// its unscored scenarios that failed (none when it printed no such line).
	NotScored []string
	// ExitCode is the process's (-1 when it did not end by itself).
	ExitCode int
	// Err says why the run could not be made or did not end.
	Err error
}

func (r result) ok() bool { return r.Err == nil && r.ExitCode == 0 && r.Summary != "" }

func (r result) String() string {
	summary := r.Summary
	if summary == "" {
		summary = "(no summary line)"
	}
	s := fmt.Sprintf("%s: %s (exit %d)", r.Name, summary, r.ExitCode)
	if r.Err != nil {
		s += ": " + r.Err.Error()
	}
	for _, line := range r.NotScored {
		s += "\n    " + line
	}
	return s
}

// The summary lines: the suite's (both releases print it last) and node
// --test's spec reporter's counts.
var (
	totalLine    = regexp.MustCompile(`(?m)^Total: \d+ passed, \d+ failed\s*$`)
	nodeTestLine = regexp.MustCompile(`(?m)^ℹ (tests|pass|fail) \d+\s*$`)
	// notScoredLine heads a 0.2 suite's list of unscored scenarios, one
	// "  ✓|✗ <name> (<reason>)" line each.
	notScoredLine    = regexp.MustCompile(`^Not scored for \S+: \d+ scenario\(s\) run`)
	unscoredFailLine = regexp.MustCompile(`^\s+✗ \S+`)
)

// notScored returns the last "Not scored for …" line of a suite's output
// and the failing unscored scenarios listed under it.
func notScored(output []byte) []string {
	var out []string
	lines := strings.Split(string(output), "\n")
	for i, line := range lines {
		if !notScoredLine.MatchString(line) {
			continue
		}
		out = []string{strings.TrimSpace(line)}
		for _, l := range lines[i+1:] {
			if !strings.HasPrefix(l, " ") {
				break
			}
			if unscoredFailLine.MatchString(l) {
				out = append(out, "unscored, failing: "+strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "✗")))
			}
		}
	}
	return out
}

// runSuite runs `conformance server --url URL -o OUT [args]` of the
// release installed in dir.
func runSuite(ctx context.Context, node, dir string, s suite, url, out string, timeout time.Duration, stdout io.Writer) result {
	name := strings.TrimSpace("@modelcontextprotocol/conformance@" + s.Version + " server " + strings.Join(s.Args(), " "))
	entry, err := filepath.EvalSymlinks(filepath.Join(dir, "node_modules", ".bin", "conformance"))
	if err != nil {
		return result{Name: name, ExitCode: -1, Err: err}
	}
	fmt.Fprintf(stdout, "\n=== %s --url %s ===\n", name, url)
	args := append([]string{entry, "server", "--url", url, "-o", out}, s.Args()...)
	code, output, err := runNode(ctx, node, dir, args, nil, timeout, stdout)
	res := result{Name: name, ExitCode: code, Err: err}
	if m := totalLine.FindAll(output, -1); len(m) > 0 {
		res.Summary = strings.TrimSpace(string(m[len(m)-1]))
	}
	res.NotScored = notScored(output)
	return res
}

// runInterop runs the TypeScript SDK interop test (node --test) installed
// in dir, after copying its current test files from src, against url with
// the dev key of the data folder.
func runInterop(ctx context.Context, node, dir, src, url, data string, timeout time.Duration, stdout io.Writer) result {
	name := "@modelcontextprotocol/sdk@" + SDKVersion + " interop (node --test)"
	key, err := datadir.Dir(data).Read(datadir.DevKeyFile)
	if err != nil {
		return result{Name: name, ExitCode: -1, Err: fmt.Errorf("the dev key: %w", err)}
	}
	tests, err := filepath.Glob(filepath.Join(src, "*.mjs"))
	if err != nil || len(tests) == 0 {
		return result{Name: name, ExitCode: -1, Err: fmt.Errorf("no *.mjs test in %s", src)}
	}
	args := []string{"--test", "--test-reporter=spec"}
	for _, t := range tests {
		if err := nodetest.CopyFile(t, filepath.Join(dir, filepath.Base(t))); err != nil {
			return result{Name: name, ExitCode: -1, Err: err}
		}
		args = append(args, filepath.Base(t))
	}
	fmt.Fprintf(stdout, "\n=== %s against %s ===\n", name, url)
	env := []string{"CUSTODY_MCP_URL=" + url, "CUSTODY_KEY=" + key,
		"CUSTODY_PAGE_SIZE=" + fmt.Sprint(interopPageSize)}
	code, output, err := runNode(ctx, node, dir, args, env, timeout, stdout)
	res := result{Name: name, ExitCode: code, Err: err}
	var counts []string
	for _, m := range nodeTestLine.FindAll(output, -1) {
		counts = append(counts, strings.TrimPrefix(strings.TrimSpace(string(m)), "ℹ "))
	}
	res.Summary = strings.Join(counts, ", ")
	return res
}

// runNode runs node with args in dir, its output streamed to stdout and
// returned; a run longer than timeout is stopped (SIGTERM, then SIGKILL).
func runNode(ctx context.Context, node, dir string, args, env []string, timeout time.Duration, stdout io.Writer) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(),
		"PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1"), env...)
	var out bytes.Buffer
	w := io.MultiWriter(stdout, &out)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	setDeathSignal(cmd)
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return -1, out.Bytes(), fmt.Errorf("stopped: %w", context.Cause(ctx))
	case errors.As(err, &exit):
		return exit.ExitCode(), out.Bytes(), nil
	case err != nil:
		return -1, out.Bytes(), err
	}
	return 0, out.Bytes(), nil
}
