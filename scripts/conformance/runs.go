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
	"strconv"
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
	// Suite marks a conformance suite's run, whose summary lists every
	// scenario it ran (Scenarios); the interop test has none.
	Suite bool
	// Scenarios are the per-scenario lines of a suite's summary, scored or
	// not: the run passes only when none failed (a suite's exit code
	// ignores its unscored scenarios; this run does not).
	Scenarios []scenario
	// ExitCode is the process's (-1 when it did not end by itself).
	ExitCode int
	// Err says why the run could not be made or did not end.
	Err error
}

func (r result) ok() bool {
	return r.Err == nil && r.ExitCode == 0 && r.Summary != "" && (!r.Suite || (len(r.Scenarios) > 0 && len(r.failing()) == 0))
}

// failing are the names of the scenarios that failed.
func (r result) failing() []string {
	var out []string
	for _, s := range r.Scenarios {
		if s.Failed > 0 || !s.OK {
			out = append(out, s.Name)
		}
	}
	return out
}

func (r result) String() string {
	summary := r.Summary
	if summary == "" {
		summary = "(no summary line)"
	}
	s := fmt.Sprintf("%s: %s (exit %d)", r.Name, summary, r.ExitCode)
	if r.Err != nil {
		s += ": " + r.Err.Error()
	}
	if r.Suite {
		s += fmt.Sprintf("\n    %d scenarios, %d failing", len(r.Scenarios), len(r.failing()))
		for _, name := range r.failing() {
			s += "\n    failing: " + name
		}
	}
	for _, line := range r.NotScored {
		s += "\n    " + line
	}
	return s
}

// scenario is one line of a suite's summary: "✓|✗ <name>: N passed, M
// failed[, W warnings]".
type scenario struct {
	Name           string
	OK             bool // marked ✓
	Passed, Failed int
}

// scenarios returns the per-scenario lines of a suite's last summary (the
// lines after its last "=== SUMMARY ===" line). The error says that they do
// not add up to the summary's Total line, so that no line was missed.
func scenarios(output []byte, total string) ([]scenario, error) {
	text := string(output)
	if i := strings.LastIndex(text, "=== SUMMARY ==="); i >= 0 {
		text = text[i:]
	}
	var out []scenario
	passed, failed := 0, 0
	for _, line := range strings.Split(text, "\n") {
		m := scenarioLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := scenario{Name: m[2], OK: m[1] == "✓"}
		s.Passed, _ = strconv.Atoi(m[3])
		s.Failed, _ = strconv.Atoi(m[4])
		passed, failed = passed+s.Passed, failed+s.Failed
		out = append(out, s)
	}
	if want := fmt.Sprintf("Total: %d passed, %d failed", passed, failed); total != "" && total != want {
		return out, fmt.Errorf("the scenario lines add up to %q, the summary says %q", want, total)
	}
	return out, nil
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
	// scenarioLine is one scenario of a suite's summary.
	scenarioLine = regexp.MustCompile(`^(✓|✗) (\S+): (\d+) passed, (\d+) failed(?:, \d+ warnings)?\s*$`)
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
	res := result{Name: name, ExitCode: code, Err: err, Suite: true}
	if m := totalLine.FindAll(output, -1); len(m) > 0 {
		res.Summary = strings.TrimSpace(string(m[len(m)-1]))
	}
	res.NotScored = notScored(output)
	var serr error
	res.Scenarios, serr = scenarios(output, res.Summary)
	if res.Err == nil {
		res.Err = serr
	}
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
	tests, err := filepath.Glob(filepath.Join(src, "*.test.mjs")) // node --test files; other scripts (handoff.mjs) are run by their own Go tests
	if err != nil || len(tests) == 0 {
		return result{Name: name, ExitCode: -1, Err: fmt.Errorf("no *.test.mjs test in %s", src)}
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
