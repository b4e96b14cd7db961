package nodetest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// manifest writes an npm project (package.json and its lockfile) into a
// fresh folder.
func manifest(t *testing.T, content string) string {
	t.Helper()
	src := t.TempDir()
	for _, f := range manifestFiles {
		if err := os.WriteFile(filepath.Join(src, f), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// installed lays out dst as Tree leaves it after npm ci, stamped with s.
func installed(t *testing.T, dst, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dst, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := stamp(dst, s); err != nil {
		t.Fatal(err)
	}
}

func TestAnInstalledTreeIsReusedWithoutNPMAndAChangedOneIsNot(t *testing.T) {
	src := manifest(t, `{"name":"x"}`)
	dst := filepath.Join(t.TempDir(), "tree")
	sum, err := ManifestHash(src)
	if err != nil {
		t.Fatal(err)
	}
	in := &Installer{Root: src, Tools: t.TempDir()}
	t.Setenv("PATH", "") // no npm: an install attempt fails
	installed(t, dst, sum)
	if err := in.Tree(context.Background(), src, dst); err != nil {
		t.Errorf("the installed tree was not reused: %v", err)
	}
	installed(t, dst, "the hash of an older lockfile")
	if err := in.Tree(context.Background(), src, dst); !errors.Is(err, ErrNoNPM) {
		t.Errorf("Tree(tree from another lockfile, no npm) = %v, want ErrNoNPM (an install attempt)", err)
	}
	if _, err := os.Stat(filepath.Join(dst, "node_modules")); err != nil {
		t.Errorf("the failed attempt removed the older install: %v", err)
	}
}

func TestAnInstalledNodeIsReusedWithoutNPMAndAnotherVersionIsNot(t *testing.T) {
	pkg, err := nodePackage()
	if err != nil {
		t.Skipf("%v", err)
	}
	in := &Installer{Root: t.TempDir(), Tools: t.TempDir()}
	bin := in.nodeBin(pkg)
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", "")
	if err := stamp(in.nodeDir(), pkg+"@"+NodeVersion); err != nil {
		t.Fatal(err)
	}
	if got, err := in.Node(context.Background()); err != nil || got != bin {
		t.Errorf("Node() = %q, %v, want the installed %q", got, err, bin)
	}
	if err := stamp(in.nodeDir(), pkg+"@20.0.0"); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Node(context.Background()); !errors.Is(err, ErrNoNPM) {
		t.Errorf("Node() over Node 20 without npm = %v, want ErrNoNPM (an install attempt)", err)
	}
}

// fakeNPM puts an npm on the PATH that records each call in the returned
// file and lays out node_modules as npm ci would.
func fakeNPM(t *testing.T) (calls string) {
	t.Helper()
	bin := t.TempDir()
	calls = filepath.Join(t.TempDir(), "calls")
	script := "#!/bin/sh\necho \"$@\" >> '" + calls + "'\nsleep 0.2\nmkdir -p node_modules\n"
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return calls
}

func TestManyGoroutinesInstallingOneTreeRunNPMOnce(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh for the stand-in npm")
	}
	src := manifest(t, `{"name":"x"}`)
	dst := filepath.Join(t.TempDir(), "tree")
	calls := fakeNPM(t)
	in := &Installer{Root: src, Tools: t.TempDir()}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := in.Tree(context.Background(), src, dst); err != nil {
				t.Errorf("Tree = %v", err)
			}
		})
	}
	wg.Wait()
	b, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(b), "\n"); got != 1 {
		t.Errorf("npm ran %d times, want once:\n%s", got, b)
	}
	if !strings.HasPrefix(string(b), "ci --ignore-scripts") {
		t.Errorf("npm ran as %q, want npm ci without install scripts", b)
	}
}

func TestRequireInstallsNodeOfThePinnedVersionAndATree(t *testing.T) {
	node, dir := Require(t, filepath.Join("testdata", "tiny"), "nodetest-tiny")
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", node, err)
	}
	if got := string(bytes.TrimSpace(out)); got != "v"+NodeVersion {
		t.Errorf("node --version = %s, want v%s", got, NodeVersion)
	}
	cmd := exec.Command(node, "-e", `process.stdout.write(require("ms")(60000))`)
	cmd.Dir = dir
	if out, err := cmd.Output(); err != nil || string(out) != "1m" {
		t.Errorf("node requiring the tree's package printed %q, %v, want 1m", out, err)
	}
}
