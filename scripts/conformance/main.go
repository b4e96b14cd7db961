// Command conformance is `make conformance` (and so part of `make test`):
// Custody against MCP implementations nobody here wrote.
//
//  1. It installs (package shared/nodetest), into the git-ignored .tools/
//     and only when missing or changed, Node 22 from npm
//     (node-<os>-<arch>@nodetest.NodeVersion; the machine's npm is only the
//     installer), the official conformance suite in two
//     releases side by side (scripts/conformance/npm/<version>/, each a
//     package.json and a lockfile pinning every dependency, the SDK client
//     the suite drives included) and the TypeScript SDK interop test
//     (scripts/interop/ts/). Installs run no package scripts.
//  2. It builds scripts/dev and starts it with -conformance on a free
//     loopback port and a fresh data folder (the first start seeds the demo
//     firm and mints the dev and fixture keys), waiting until it answers.
//  3. It runs `conformance server --url … -o DIR` of 0.1.16 (the 2025-era
//     scenarios) and of 0.2.0-alpha.12 with --requirements 2025-11-25 and
//     then with --requirements 2026-07-28 (the stateless era: _meta on every
//     request, server/discover, multi-round-trip requests, the tasks
//     extension), printing each run's output as it comes. A run passes
//     when the suite exits 0 and every per-scenario line of its summary
//     ("✓ name: N passed, 0 failed"), scored or not, shows no failure: a
//     suite's exit code ignores its unscored scenarios (the 2026 tasks
//     extension, pending header scenarios), this command does not. Each
//     run's "Total:" line, its failing scenarios and its "Not scored"
//     summary are repeated at the end.
//  4. It restarts the server on the same folder with a page size of 2 and
//     runs the TypeScript SDK interop test (node --test) against it: the dev
//     key's session pages every Custody list, reads, gets a prompt and calls
//     a tool; an unauthenticated session (the fixture profile) answers a form
//     elicitation and a sampling request from its own handlers.
//
// The servers are stopped in every case (and die with this process on
// Linux). Results (each scenario's checks.json, the server logs) stay in a
// temporary folder when anything failed, and its path is printed; -o keeps
// them in a folder of your choice (one subfolder per run, named by release
// and requirement set).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/custodymcp/custody/shared/nodetest"
)

// SDKVersion is the pinned TypeScript SDK (docs/decisions.md "Versions"; Node's
// is nodetest.NodeVersion). The suites and the SDK are pinned with their
// whole dependency trees by the lockfiles beside this file and in
// scripts/interop/ts.
const SDKVersion = "1.32.2"

// interopPageSize is the list page size of the interop run: small, so every
// list takes several pages.
const interopPageSize = 2

// suite is one run of a pinned release of the conformance suite: with a
// requirement set (--requirements REV, 0.2 releases) or its default scenarios.
type suite struct {
	Version      string
	Requirements string
}

// Args are the run's arguments after `server --url URL -o DIR`.
func (s suite) Args() []string {
	if s.Requirements == "" {
		return nil
	}
	return []string{"--requirements", s.Requirements}
}

// Out is the run's results folder under the results folder.
func (s suite) Out() string {
	if s.Requirements == "" {
		return s.Version
	}
	return s.Version + "-" + s.Requirements
}

// suites are the runs of `make conformance`, in order.
func suites() []suite {
	return []suite{
		{Version: "0.1.16"},
		{Version: "0.2.0-alpha.12", Requirements: "2025-11-25"},
		{Version: "0.2.0-alpha.12", Requirements: "2026-07-28"},
	}
}

// releases are the suite releases the runs need, each once, in order.
func releases() []string {
	var out []string
	for _, s := range suites() {
		if !slices.Contains(out, s.Version) {
			out = append(out, s.Version)
		}
	}
	return out
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run does everything and returns the exit code: 0 when every suite and the
// interop test passed, 1 when one failed, 2 when the run could not be made.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("conformance", flag.ContinueOnError)
	flags.SetOutput(stderr)
	out := flags.String("o", "", "keep results (checks.json per scenario, server logs) in this folder (default: a temporary one, kept only on failure)")
	timeout := flags.Duration("timeout", 10*time.Minute, "time limit of each suite run and of the interop test")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "conformance: "+format+"\n", a...) }

	root, err := nodetest.RepoRoot()
	if err != nil {
		logf("%v", err)
		return 2
	}
	results := *out
	keep := results != ""
	if results == "" {
		if results, err = os.MkdirTemp("", "custody-conformance-"); err != nil {
			logf("%v", err)
			return 2
		}
	} else if err := os.MkdirAll(results, 0o755); err != nil {
		logf("%v", err)
		return 2
	}
	failed := false
	defer func() {
		if keep || failed {
			logf("results and server logs are in %s", results)
			return
		}
		os.RemoveAll(results)
	}()
	fail := func(format string, a ...any) int {
		logf(format, a...)
		failed = true
		return 2
	}

	inst := &nodetest.Installer{Root: root, Log: logf}
	node, err := inst.Node(ctx)
	if err != nil {
		return fail("install Node %s: %v", nodetest.NodeVersion, err)
	}
	suiteDir := func(version string) string { return filepath.Join(inst.ToolsDir(), "conformance", version) }
	for _, v := range releases() {
		if err := inst.Tree(ctx, filepath.Join(root, "scripts", "conformance", "npm", v), suiteDir(v)); err != nil {
			return fail("install the conformance suite %s: %v", v, err)
		}
	}
	interopDir := filepath.Join(inst.ToolsDir(), "interop-ts")
	if err := inst.Tree(ctx, filepath.Join(root, "scripts", "interop", "ts"), interopDir); err != nil {
		return fail("install the interop test: %v", err)
	}

	bin, err := os.MkdirTemp("", "custody-conformance-bin-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(bin)
	dev := filepath.Join(bin, "dev")
	logf("building scripts/dev")
	if err := goBuild(ctx, root, dev, "./scripts/dev", stderr); err != nil {
		return fail("build scripts/dev: %v", err)
	}
	data := filepath.Join(bin, "data") // a fresh folder: the first start seeds

	var summary []string
	var ranAll = true
	func() {
		srv, err := startDev(ctx, dev, data, filepath.Join(results, "dev-suites.log"), logf)
		if err != nil {
			logf("start the dev server: %v", err)
			ranAll = false
			return
		}
		defer srv.stop()
		for _, s := range suites() {
			res := runSuite(ctx, node, suiteDir(s.Version), s, srv.URL, filepath.Join(results, s.Out()), *timeout, stdout)
			summary = append(summary, res.String())
			if !res.ok() {
				failed = true
			}
		}
	}()
	func() {
		if !ranAll || ctx.Err() != nil {
			return
		}
		srv, err := startDev(ctx, dev, data, filepath.Join(results, "dev-interop.log"), logf,
			"-page-size", fmt.Sprint(interopPageSize))
		if err != nil {
			logf("restart the dev server: %v", err)
			ranAll = false
			return
		}
		defer srv.stop()
		res := runInterop(ctx, node, interopDir, filepath.Join(root, "scripts", "interop", "ts"), srv.URL, data, *timeout, stdout)
		summary = append(summary, res.String())
		if !res.ok() {
			failed = true
		}
	}()

	fmt.Fprintln(stdout, "\n=== make conformance ===")
	for _, line := range summary {
		fmt.Fprintln(stdout, line)
	}
	switch {
	case !ranAll || ctx.Err() != nil:
		failed = true
		fmt.Fprintln(stdout, "FAILED: not every run could be made (see above)")
		return 2
	case failed:
		fmt.Fprintln(stdout, "FAILED")
		return 1
	}
	fmt.Fprintln(stdout, "ok")
	return 0
}

// goBuild builds a package of the module into out.
func goBuild(ctx context.Context, root, out, pkg string, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = stderr, stderr
	return cmd.Run()
}

// buildTimeout bounds the build of scripts/dev.
const buildTimeout = 10 * time.Minute
