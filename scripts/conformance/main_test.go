package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// lockedVersion returns the version a package-lock.json resolves pkg to,
// and the version range its package.json asks for.
func lockedVersion(t *testing.T, dir, pkg string) (locked, wanted string) {
	t.Helper()
	var manifest struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	for file, v := range map[string]any{"package.json": &manifest, "package-lock.json": &lock} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s/%s: %v", dir, file, err)
		}
	}
	return lock.Packages["node_modules/"+pkg].Version, manifest.Dependencies[pkg]
}

func TestEveryRunIsPinnedToAnExactVersionByItsLockfile(t *testing.T) {
	for _, v := range releases() {
		locked, wanted := lockedVersion(t, filepath.Join("npm", v), "@modelcontextprotocol/conformance")
		if locked != v || wanted != v {
			t.Errorf("npm/%s pins the suite at %q (lock) and %q (package.json), want exactly %s", v, locked, wanted, v)
		}
		// The SDK client the suite drives is the one the interop test pins.
		if sdk, _ := lockedVersion(t, filepath.Join("npm", v), "@modelcontextprotocol/sdk"); sdk != SDKVersion {
			t.Errorf("npm/%s locks the SDK at %q, want %s", v, sdk, SDKVersion)
		}
	}
	locked, wanted := lockedVersion(t, filepath.Join("..", "interop", "ts"), "@modelcontextprotocol/sdk")
	if locked != SDKVersion || wanted != SDKVersion {
		t.Errorf("the interop test pins the SDK at %q (lock) and %q (package.json), want exactly %s", locked, wanted, SDKVersion)
	}
}

func TestSummaryLinesAreFound(t *testing.T) {
	out := []byte("=== SUMMARY ===\n✓ ping: 1 passed, 0 failed\n\nTotal: 39 passed, 0 failed\n\nNot scored for 2025-11-25: 3 scenario(s) run\n")
	if m := totalLine.FindAll(out, -1); len(m) != 1 || string(m[0]) != "Total: 39 passed, 0 failed\n" {
		t.Errorf("Total line = %q", m)
	}
	node := []byte("ℹ tests 13\nℹ suites 2\nℹ pass 13\nℹ fail 0\n")
	if m := nodeTestLine.FindAll(node, -1); len(m) != 3 {
		t.Errorf("node --test counts = %q, want tests, pass and fail", m)
	}
	if r := (result{Name: "x", Summary: "Total: 1 passed, 0 failed"}); !r.ok() {
		t.Error("a clean run is not ok")
	}
	if r := (result{Name: "x", Summary: "", ExitCode: 0}); r.ok() {
		t.Error("a run without its summary line is ok")
	}
	if r := (result{Name: "x", Summary: "Total: 1 passed, 1 failed", ExitCode: 1}); r.ok() {
		t.Error("a run exiting 1 is ok")
	}
}

func TestEveryEraIsRunEachRunInItsOwnFolderAndEachReleaseInstalledOnce(t *testing.T) {
	var reqs, outs []string
	for _, s := range suites() {
		reqs = append(reqs, s.Requirements)
		if slices.Contains(outs, s.Out()) {
			t.Errorf("two runs write to %s", s.Out())
		}
		outs = append(outs, s.Out())
	}
	if !slices.Equal(reqs, []string{"", "2025-11-25", "2026-07-28"}) {
		t.Errorf("requirement sets %q, want 0.1.16's default, then 2025-11-25 and 2026-07-28", reqs)
	}
	if got := suites()[2].Args(); !slices.Equal(got, []string{"--requirements", "2026-07-28"}) {
		t.Errorf("the 2026 run's arguments %q", got)
	}
	if got := releases(); !slices.Equal(got, []string{"0.1.16", "0.2.0-alpha.12"}) {
		t.Errorf("releases %q, want each once", got)
	}
}

func TestTheNotScoredSummaryKeepsItsLineAndTheFailingScenarios(t *testing.T) {
	out := []byte("✗ tasks-lifecycle: 1 passed, 8 failed\n\nTotal: 150 passed, 35 failed\n\n" +
		"Not scored for 2026-07-28: 3 scenario(s) run, 2 failing. These do not affect conformance.\n" +
		"  ✗ tasks-lifecycle (extension)\n  ✓ json-schema-2020-12 (pending)\n  ✗ http-custom-header-server-validation (pending)\n")
	want := []string{
		"Not scored for 2026-07-28: 3 scenario(s) run, 2 failing. These do not affect conformance.",
		"unscored, failing: tasks-lifecycle (extension)",
		"unscored, failing: http-custom-header-server-validation (pending)",
	}
	if got := notScored(out); !slices.Equal(got, want) {
		t.Errorf("notScored = %q, want %q", got, want)
	}
	if got := notScored([]byte("Total: 39 passed, 0 failed\n")); got != nil {
		t.Errorf("0.1.16's output has no such summary, got %q", got)
	}
	r := result{Name: "x", Summary: "Total: 1 passed, 1 failed", NotScored: want[:2]}
	if s := r.String(); !strings.Contains(s, "\n    Not scored for 2026-07-28") || !strings.Contains(s, "\n    unscored, failing: tasks-lifecycle") {
		t.Errorf("String() = %q, want the not-scored lines indented below", s)
	}
}

func TestAnUnscoredFailingScenarioFailsTheRunThoughTheSuiteExitsZero(t *testing.T) {
	out := []byte("=== Running scenario: ping ===\n✗ not a summary line: 1 passed, 1 failed\n\n=== SUMMARY ===\n" +
		"✓ server-initialize: 2 passed, 0 failed\n✗ tasks-lifecycle: 1 passed, 8 failed\n✓ auth/basic-cimd: 3 passed, 0 failed, 1 warnings\n" +
		"\nTotal: 6 passed, 8 failed\n\nNot scored for 2026-07-28: 1 scenario(s) run, 1 failing. These do not affect conformance.\n  ✗ tasks-lifecycle (extension)\n")
	got, err := scenarios(out, "Total: 6 passed, 8 failed")
	if err != nil {
		t.Fatal(err)
	}
	want := []scenario{{"server-initialize", true, 2, 0}, {"tasks-lifecycle", false, 1, 8}, {"auth/basic-cimd", true, 3, 0}}
	if !slices.Equal(got, want) {
		t.Errorf("scenarios = %v, want %v", got, want)
	}
	for _, c := range []struct {
		name string
		r    result
		ok   bool
	}{
		{"a run whose every scenario passed is ok", result{Suite: true, Summary: "Total: 2 passed, 0 failed", Scenarios: want[:1]}, true},
		{"an unscored failing scenario fails a run that exited 0", result{Suite: true, Summary: "Total: 6 passed, 8 failed", Scenarios: want}, false},
		{"a suite run without scenario lines fails", result{Suite: true, Summary: "Total: 0 passed, 0 failed"}, false},
		{"the interop run has no scenarios", result{Summary: "tests 3, pass 3, fail 0"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.r.ok(); got != c.ok {
				t.Errorf("ok() = %t, want %t", got, c.ok)
			}
		})
	}
	if s := (result{Name: "x", Suite: true, Summary: "Total: 6 passed, 8 failed", Scenarios: want}).String(); !strings.Contains(s, "\n    3 scenarios, 1 failing\n    failing: tasks-lifecycle") {
		t.Errorf("String() = %q, want the failing scenarios listed", s)
	}
	if _, err := scenarios(out, "Total: 7 passed, 8 failed"); err == nil {
		t.Error("scenario lines that do not add up to the Total line are accepted")
	}
}
