package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// installer puts the npm tools into .tools/. Each install leaves a stamp
// naming what it installed; a later run with the same stamp and the files
// in place does nothing (offline included).
type installer struct {
	root, tools    string
	log            func(format string, a ...any)
	stdout, stderr io.Writer
	// nodeDir is the folder of the installed node binary, put first on the
	// PATH of npm so that npm itself runs on Node 22.
	nodeDir string
}

// installTimeout bounds one npm command.
const installTimeout = 10 * time.Minute

// stampFile records what a folder under .tools holds.
const stampFile = ".installed"

// nodePackage is the npm package of Node's binary for this machine.
func nodePackage() (string, error) {
	osName := map[string]string{"linux": "linux", "darwin": "darwin"}[runtime.GOOS]
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if osName == "" || arch == "" {
		return "", fmt.Errorf("no Node binary package for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return "node-" + osName + "-" + arch, nil
}

// node installs Node NodeVersion into .tools/node (npm install --prefix
// .tools/node node-<os>-<arch>@NodeVersion) and returns the binary's path.
func (in *installer) node(ctx context.Context) (string, error) {
	pkg, err := nodePackage()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(in.tools, "node")
	bin := filepath.Join(dir, "node_modules", pkg, "bin", "node")
	want := pkg + "@" + NodeVersion
	in.nodeDir = filepath.Dir(bin)
	if stamped(dir, want) && executable(bin) {
		return bin, nil
	}
	in.log("installing Node %s (%s) into %s", NodeVersion, want, dir)
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

// suiteDir is where a release of the conformance suite is installed.
func (in *installer) suiteDir(version string) string {
	return filepath.Join(in.tools, "conformance", version)
}

// tree installs the npm project in src (package.json and package-lock.json)
// into dst with `npm ci`, unless dst already holds exactly that lockfile.
func (in *installer) tree(ctx context.Context, src, dst string) error {
	want, err := manifestHash(src)
	if err != nil {
		return err
	}
	if stamped(dst, want) {
		if _, err := os.Stat(filepath.Join(dst, "node_modules")); err == nil {
			return nil
		}
	}
	rel, _ := filepath.Rel(in.root, src)
	in.log("installing %s into %s (npm ci)", rel, dst)
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, f := range []string{"package.json", "package-lock.json"} {
		if err := copyFile(filepath.Join(src, f), filepath.Join(dst, f)); err != nil {
			return err
		}
	}
	if err := in.npm(ctx, dst, "ci"); err != nil {
		return err
	}
	return stamp(dst, want)
}

// manifestHash is the SHA-256 of an npm project's package.json and
// package-lock.json: what a tree's stamp records.
func manifestHash(dir string) (string, error) {
	h := sha256.New()
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// npm runs the machine's npm in dir, on Node 22 once that is installed,
// without running any package's install scripts (none of the pinned trees
// has one; npm 11 would only warn about them anyway).
func (in *installer) npm(ctx context.Context, dir string, args ...string) error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return errors.New("npm not found on PATH: install Node.js with npm (any version; it only installs Node " + NodeVersion + " into .tools)")
	}
	ctx, cancel := context.WithTimeout(ctx, installTimeout)
	defer cancel()
	args = append(args, "--ignore-scripts", "--no-audit", "--no-fund", "--no-update-notifier")
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	if in.nodeDir != "" && executable(filepath.Join(in.nodeDir, "node")) {
		cmd.Env = append(cmd.Env, "PATH="+in.nodeDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	setDeathSignal(cmd)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm %s in %s: %w\n%s", strings.Join(args, " "), dir, err, out.String())
	}
	return nil
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

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

// goBuild builds a package of the module into out.
func goBuild(ctx context.Context, root, out, pkg string, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = stderr, stderr
	return cmd.Run()
}
