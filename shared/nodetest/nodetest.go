// Package nodetest installs the Node.js tools that Custody's tests and
// test runners drive — Node 22 itself, the conformance suite, the
// TypeScript SDK, the fauxqs SQS emulator — into the checkout's git-ignored
// .tools/ folder, from the project's own files: the machine's npm (any
// version) is only the installer, every npm tree is pinned by a
// package.json and package-lock.json committed beside its user, and no
// package's install scripts run.
//
// Each install leaves a stamp naming what it installed (the Node package
// and version, or the SHA-256 of a tree's package.json and lockfile); a
// later call finding the same stamp and the files in place does nothing,
// so an installed machine works offline and without npm. Installs take a
// lock file in .tools, so test binaries of several packages running at
// once (go test ./...) install each thing once.
//
// Installer does the work (scripts/conformance uses it); Require is the
// form for a test: it skips locally when npm is missing, naming it, and
// fails when CI=true, where everything must be installable.
package nodetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// NodeVersion is the Node release every npm tool runs on (docs/decisions.md
// "Versions": node-<os>-<arch>@22 from npm).
const NodeVersion = "22.23.5"

// Errors that say a machine lacks what an install needs (test with
// errors.Is). Require skips on them outside CI.
var (
	// ErrNoNPM: npm is not on the PATH and something is not installed yet.
	ErrNoNPM = errors.New("npm not found on PATH: install Node.js with npm (any version; it only installs Node " + NodeVersion + " into .tools)")
	// ErrNoNodePackage: npm serves no Node binary package for this OS and
	// architecture.
	ErrNoNodePackage = errors.New("no Node binary package on npm for this OS and architecture")
)

// installTimeout bounds one attempt of an npm command, and installAttempts
// is how many are made: a registry fetch that stalls (seen once in a fresh
// clone: npm ci hung for ten minutes, then the next run took seconds) costs
// one attempt, not the test binary's whole timeout. npm's own fetches time
// out after npmFetchTimeout and are retried by npm.
const (
	installTimeout  = 3 * time.Minute
	installAttempts = 3
	npmFetchTimeout = "30000" // ms
)

// stampFile records what a folder under .tools holds.
const stampFile = ".installed"

// lockFile, in the tools folder, serialises installs across processes.
const lockFile = ".install.lock"

// Installer puts npm tools into Tools. The zero value is not usable: set
// Root (or use New).
type Installer struct {
	// Root is the checkout: the folder of Custody's go.mod.
	Root string
	// Tools is where installs go; "" means Root/.tools.
	Tools string
	// Log receives a line before each install that does work; nil discards.
	Log func(format string, a ...any)
}

// New returns an Installer for the checkout holding the working directory
// (RepoRoot).
func New(log func(format string, a ...any)) (*Installer, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	return &Installer{Root: root, Log: log}, nil
}

// ToolsDir is the folder installs go to.
func (in *Installer) ToolsDir() string {
	if in.Tools != "" {
		return in.Tools
	}
	return filepath.Join(in.Root, ".tools")
}

func (in *Installer) logf(format string, a ...any) {
	if in.Log != nil {
		in.Log(format, a...)
	}
}

// nodePackage is the npm package of Node's binary for this machine.
func nodePackage() (string, error) {
	osName := map[string]string{"linux": "linux", "darwin": "darwin"}[runtime.GOOS]
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if osName == "" || arch == "" {
		return "", fmt.Errorf("%s/%s: %w", runtime.GOOS, runtime.GOARCH, ErrNoNodePackage)
	}
	return "node-" + osName + "-" + arch, nil
}

// nodeDir is where Node is installed.
func (in *Installer) nodeDir() string { return filepath.Join(in.ToolsDir(), "node") }

// nodeBin is the installed node binary's path.
func (in *Installer) nodeBin(pkg string) string {
	return filepath.Join(in.nodeDir(), "node_modules", pkg, "bin", "node")
}

// Node installs Node NodeVersion into Tools/node (npm install --prefix
// Tools/node node-<os>-<arch>@NodeVersion), unless it is there, and
// returns the node binary's path.
func (in *Installer) Node(ctx context.Context) (string, error) {
	pkg, err := nodePackage()
	if err != nil {
		return "", err
	}
	dir, bin, want := in.nodeDir(), in.nodeBin(pkg), pkg+"@"+NodeVersion
	if stamped(dir, want) && executable(bin) {
		return bin, nil
	}
	unlock, err := in.lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	if stamped(dir, want) && executable(bin) { // another process installed it
		return bin, nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", ErrNoNPM // before removing anything
	}
	in.logf("installing Node %s (%s) into %s", NodeVersion, want, dir)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// No lockfile here: the package has no dependencies and an exact version.
	if err := in.npm(ctx, dir, "install", "--prefix", dir, "--no-save", want); err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("run %s --version: %w", bin, err)
	}
	if got := strings.TrimSpace(string(out)); got != "v"+NodeVersion {
		return "", fmt.Errorf("%s --version = %s, want v%s", bin, got, NodeVersion)
	}
	return bin, stamp(dir, want)
}

// Tree installs the npm project in src (its package.json and
// package-lock.json) into dst with `npm ci` on the installed Node, unless
// dst already holds exactly that lockfile's install.
func (in *Installer) Tree(ctx context.Context, src, dst string) error {
	want, err := ManifestHash(src)
	if err != nil {
		return err
	}
	if treeInstalled(dst, want) {
		return nil
	}
	unlock, err := in.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if treeInstalled(dst, want) {
		return nil
	}
	rel, err := filepath.Rel(in.Root, src)
	if err != nil {
		rel = src
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return ErrNoNPM // before removing anything
	}
	in.logf("installing %s into %s (npm ci)", rel, dst)
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, f := range manifestFiles {
		if err := CopyFile(filepath.Join(src, f), filepath.Join(dst, f)); err != nil {
			return err
		}
	}
	if err := in.npm(ctx, dst, "ci"); err != nil {
		return err
	}
	return stamp(dst, want)
}

func treeInstalled(dst, want string) bool {
	if !stamped(dst, want) {
		return false
	}
	_, err := os.Stat(filepath.Join(dst, "node_modules"))
	return err == nil
}

// manifestFiles are what pin an npm project.
var manifestFiles = []string{"package.json", "package-lock.json"}

// ManifestHash is the SHA-256 of an npm project's package.json and
// package-lock.json: what a tree's stamp records.
func ManifestHash(dir string) (string, error) {
	h := sha256.New()
	for _, f := range manifestFiles {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// npm runs the machine's npm in dir, on the installed Node once it is
// there, without running any package's install scripts (none of the pinned
// trees needs one).
func (in *Installer) npm(ctx context.Context, dir string, args ...string) error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return ErrNoNPM
	}
	args = append(args, "--ignore-scripts", "--no-audit", "--no-fund", "--no-update-notifier",
		"--fetch-timeout="+npmFetchTimeout, "--fetch-retries=5")
	for attempt := 1; attempt <= installAttempts; attempt++ {
		if err = in.npmOnce(ctx, npm, dir, args); err == nil || ctx.Err() != nil {
			return err
		}
		in.logf("npm attempt %d of %d failed: %v", attempt, installAttempts, err)
	}
	return err
}

// npmOnce runs npm once, for at most installTimeout.
func (in *Installer) npmOnce(ctx context.Context, npm, dir string, args []string) error {
	ctx, cancel := context.WithTimeout(ctx, installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	if pkg, err := nodePackage(); err == nil && executable(in.nodeBin(pkg)) {
		cmd.Env = append(cmd.Env, "PATH="+filepath.Dir(in.nodeBin(pkg))+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	setDeathSignal(cmd)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm %s in %s: %w\n%s", strings.Join(args, " "), dir, err, out.String())
	}
	return nil
}

// processLock serialises installs within this process; the lock file does
// across processes.
var processLock sync.Mutex

// lock takes the install lock of the tools folder and returns its release.
func (in *Installer) lock() (func(), error) {
	if err := os.MkdirAll(in.ToolsDir(), 0o755); err != nil {
		return nil, err
	}
	processLock.Lock()
	f, err := os.OpenFile(filepath.Join(in.ToolsDir(), lockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		processLock.Unlock()
		return nil, err
	}
	if err := lockFD(f); err != nil {
		f.Close()
		processLock.Unlock()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return func() {
		f.Close() // releases the lock
		processLock.Unlock()
	}, nil
}

func stamped(dir, want string) bool {
	b, err := os.ReadFile(filepath.Join(dir, stampFile))
	return err == nil && strings.TrimSpace(string(b)) == want
}

func stamp(dir, what string) error {
	return os.WriteFile(filepath.Join(dir, stampFile), []byte(what+"\n"), 0o644)
}

func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// CopyFile copies the file src to dst (mode 0644).
func CopyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

// RepoRoot is the folder of the go.mod of module
// github.com/custodymcp/custody at or above the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module github.com/custodymcp/custody\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run me inside the Custody checkout (no go.mod of github.com/custodymcp/custody above the working directory)")
		}
		dir = parent
	}
}

// ciVar, set to "true", makes a missing tool a failure (CI must install
// everything).
const ciVar = "CI"

// Require installs Node and the npm project in src (a folder of the
// checkout holding package.json and package-lock.json) into Tools/name,
// and returns the node binary and the installed folder. When the machine
// cannot install (no npm, no Node package for its platform) the test is
// skipped naming what is missing, or fails when CI=true; any other failure
// fails the test.
func Require(t testing.TB, src, name string) (node, dir string) {
	t.Helper()
	in, err := New(t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if src, err = filepath.Abs(src); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	node, err = in.Node(ctx)
	if err == nil {
		dir = filepath.Join(in.ToolsDir(), name)
		err = in.Tree(ctx, src, dir)
	}
	switch {
	case err == nil:
		return node, dir
	case (errors.Is(err, ErrNoNPM) || errors.Is(err, ErrNoNodePackage)) && os.Getenv(ciVar) != "true":
		t.Skipf("Node %s and %s cannot be installed into .tools: %v", NodeVersion, name, err)
	default:
		t.Fatalf("install Node %s and %s into .tools: %v", NodeVersion, name, err)
	}
	return "", ""
}

// Command returns a command running the installed node with args in dir,
// with node's folder first on the PATH (so a tool's child `node` is Node
// 22 too), NO_COLOR set, and, on Linux, killed when this process dies.
func Command(ctx context.Context, node, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	setDeathSignal(cmd)
	return cmd
}
