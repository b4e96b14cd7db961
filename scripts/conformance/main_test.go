package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
	for _, s := range suites() {
		locked, wanted := lockedVersion(t, filepath.Join("npm", s.Version), "@modelcontextprotocol/conformance")
		if locked != s.Version || wanted != s.Version {
			t.Errorf("npm/%s pins the suite at %q (lock) and %q (package.json), want exactly %s", s.Version, locked, wanted, s.Version)
		}
		// The SDK client the suite drives is the one the interop test pins.
		if sdk, _ := lockedVersion(t, filepath.Join("npm", s.Version), "@modelcontextprotocol/sdk"); sdk != SDKVersion {
			t.Errorf("npm/%s locks the SDK at %q, want %s", s.Version, sdk, SDKVersion)
		}
	}
	locked, wanted := lockedVersion(t, filepath.Join("..", "interop", "ts"), "@modelcontextprotocol/sdk")
	if locked != SDKVersion || wanted != SDKVersion {
		t.Errorf("the interop test pins the SDK at %q (lock) and %q (package.json), want exactly %s", locked, wanted, SDKVersion)
	}
}

func TestAnInstalledTreeIsReusedWithoutNPMAndAChangedOneIsNot(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "tree")
	for _, f := range []string{"package.json", "package-lock.json"} {
		if err := os.WriteFile(filepath.Join(src, f), []byte(`{"name":"x"}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := manifestHash(src)
	if err != nil {
		t.Fatal(err)
	}
	// installed lays out dst as tree leaves it after npm ci, stamped with s.
	installed := func(s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dst, "node_modules"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := stamp(dst, s); err != nil {
			t.Fatal(err)
		}
	}
	in := &installer{root: src, log: t.Logf}
	t.Setenv("PATH", "") // no npm: an install attempt fails
	installed(sum)
	if err := in.tree(context.Background(), src, dst); err != nil {
		t.Errorf("the installed tree was not reused: %v", err)
	}
	installed("the hash of an older lockfile")
	if err := in.tree(context.Background(), src, dst); err == nil {
		t.Error("a tree installed from another lockfile was reused")
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
