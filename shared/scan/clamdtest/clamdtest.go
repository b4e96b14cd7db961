// Package clamdtest starts real clamd daemons for tests: each test gets its
// own process with a generated clamd.conf, a private signature database and
// a free loopback port, and nothing of the system's ClamAV (its services,
// /etc/clamav, /var/lib/clamav, freshclam) is used or needed.
//
// The signature database is one generated file, custody.hdb, holding a
// ClamAV hash signature ("MD5:size:name", ClamAV's "Creating signatures"
// manual, .hdb) for the EICAR test file's bytes as scan.EICAR assembles
// them: so detection works with no network and no official database, and
// no file of the repository holds the EICAR string.
//
// Finding clamd follows the project's rule for external components: when
// it is missing and the test runs as root, Binary installs Debian's
// clamav-daemon with the repository's scripts/ci/install-clamav.sh;
// otherwise the test is skipped with a message naming what is missing, and
// fails instead when CI=true.
package clamdtest

import (
	"bufio"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/clamd"
)

// WantSeries is the clamd version the project pins (docs/decisions.md
// "Versions": Debian clamav-daemon 1.4.x).
const WantSeries = "1.4."

// EICARSignatureName is the name of the generated database's EICAR
// signature.
const EICARSignatureName = "Custody.Test.EICAR"

// EICARThreat is the name clamd reports for the EICAR file with the
// generated database: clamd marks a signature of a database it does not
// know as official with ".UNOFFICIAL".
const EICARThreat = EICARSignatureName + ".UNOFFICIAL"

// EICARSignature is custody.hdb's line for the EICAR file: its MD5, its
// size and EICARSignatureName.
func EICARSignature() string {
	b := scan.EICAR()
	sum := md5.Sum(b)
	return fmt.Sprintf("%s:%d:%s", hex.EncodeToString(sum[:]), len(b), EICARSignatureName)
}

// Config is one clamd's configuration. Sizes are in clamd.conf's notation
// ("64M"); empty fields take the defaults the scan gate's tests use.
type Config struct {
	// StreamMaxLength, MaxFileSize and MaxScanSize: 64M each by default.
	StreamMaxLength, MaxFileSize, MaxScanSize string
	// Signatures are custody.hdb's lines. Nil means EICARSignature() alone;
	// an empty, non-nil slice writes an empty custody.hdb (clamd 1.4 then
	// refuses to start: "Malformed database").
	Signatures []string
}

// Server is a running (or exited) clamd the test started.
type Server struct {
	// Addr is clamd's TCPSocket, 127.0.0.1:<port>.
	Addr string
	// Max is StreamMaxLength in bytes: the engine's max to match.
	Max int64
	// Dir holds clamd.conf, the database, the temporary directory, the pid
	// and log files.
	Dir string

	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has been waited for
	mu     sync.Mutex
	err    error // the process's exit
}

const (
	startTimeout = 60 * time.Second
	stopTimeout  = 10 * time.Second
)

// Start starts clamd with c and waits until it answers PING; it stops
// clamd when the test ends. It fails the test if clamd does not come up.
func Start(t testing.TB, c Config) *Server {
	t.Helper()
	s, err := TryStart(t, c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TryStart is Start returning an error instead of failing when clamd exits
// before it answers PING (an empty database, say). The Server is returned
// either way: an exited one's Addr has nothing listening.
func TryStart(t testing.TB, c Config) (*Server, error) {
	t.Helper()
	bin := Binary(t)
	for _, f := range []*string{&c.StreamMaxLength, &c.MaxFileSize, &c.MaxScanSize} {
		if *f == "" {
			*f = "64M"
		}
	}
	max, err := clamd.ParseSize(c.StreamMaxLength)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, sub := range []string{"db", "tmp"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	sigs := c.Signatures
	if sigs == nil {
		sigs = []string{EICARSignature()}
	}
	var db strings.Builder
	for _, l := range sigs {
		db.WriteString(l + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "db", "custody.hdb"), []byte(db.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// A free port is found by binding and releasing it; another process may
	// take it in between, so a failed bind is tried again on a new one.
	for try := 1; ; try++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		s, err := launch(t, bin, dir, port, c, max)
		if err != nil && try < 3 && strings.Contains(s.Log(), "bind") {
			continue
		}
		return s, err
	}
}

func launch(t testing.TB, bin, dir string, port int, c Config, max int64) (*Server, error) {
	conf := filepath.Join(dir, "clamd.conf")
	if err := os.WriteFile(conf, []byte(confText(dir, port, c)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(dir, "clamd.out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config-file="+conf)
	cmd.Stdout, cmd.Stderr = out, out
	setDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("start clamd: %v", err)
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Max: max, Dir: dir, cmd: cmd, exited: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		out.Close()
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(s.exited)
	}()
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stop clamd: %v", err)
		}
	})

	eng, err := clamd.New(clamd.Options{Addr: s.Addr, ProbeTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-s.exited:
			return s, fmt.Errorf("clamd exited before answering PING (%v):\n%s", s.exitErr(), s.Log())
		default:
		}
		if eng.Ping(context.Background()) == nil {
			return s, nil
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("clamd did not answer PING within %s:\n%s", startTimeout, s.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// confText is the generated clamd.conf. No User line: clamd then keeps the
// user that started it (switching from root to a clamav user would need
// that user to own the private directories). No LocalSocket: TCP only.
func confText(dir string, port int, c Config) string {
	lines := []string{
		"# Generated by shared/scan/clamdtest for one test; not the system's clamd.",
		"Foreground yes",
		"TCPSocket " + strconv.Itoa(port),
		"TCPAddr 127.0.0.1",
		"DatabaseDirectory " + filepath.Join(dir, "db"),
		"TemporaryDirectory " + filepath.Join(dir, "tmp"),
		"PidFile " + filepath.Join(dir, "clamd.pid"),
		"LogFile " + filepath.Join(dir, "clamd.log"),
		"LogTime yes",
		"StreamMaxLength " + c.StreamMaxLength,
		"MaxFileSize " + c.MaxFileSize,
		"MaxScanSize " + c.MaxScanSize,
		// Without it an object over MaxFileSize or MaxScanSize is answered
		// OK (docs/decisions.md "Scanning").
		"AlertExceedsMax yes",
		// Two scanning threads: the machine is shared.
		"MaxThreads 2",
		// Every scan really scans: no answer from clamd's cache of clean
		// hashes (benchmarks repeat one object).
		"DisableCache yes",
	}
	return strings.Join(lines, "\n") + "\n"
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Engine returns a clamd engine for s with o's settings, Addr set to s's
// and Max, when zero, to s.Max.
func (s *Server) Engine(t testing.TB, o clamd.Options) *clamd.Engine {
	t.Helper()
	o.Addr = s.Addr
	if o.Max == 0 {
		o.Max = s.Max
	}
	e, err := clamd.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Stop ends clamd with SIGTERM (SIGKILL after 10 s) and waits for it. It
// may be called more than once.
func (s *Server) Stop() error {
	select {
	case <-s.exited:
		return nil
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal clamd: %w", err)
	}
	select {
	case <-s.exited:
		return nil
	case <-time.After(stopTimeout):
		s.Kill()
		return fmt.Errorf("clamd did not stop within %s of SIGTERM; killed", stopTimeout)
	}
}

// Kill ends clamd with SIGKILL, as a crash would, and waits for it.
func (s *Server) Kill() {
	s.cmd.Process.Kill()
	<-s.exited
}

// Exited reports whether the process has ended.
func (s *Server) Exited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

func (s *Server) exitErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Log returns what clamd wrote to its standard output and error.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "clamd.out"))
	return string(b)
}

// Memory is a process's resident set size now and at its peak, in bytes
// (VmRSS and VmHWM of /proc/<pid>/status).
type Memory struct{ RSS, Peak int64 }

// Memory reads clamd's resident memory (Linux only).
func (s *Server) Memory() (Memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return Memory{}, fmt.Errorf("read clamd's memory: %w", err)
	}
	defer f.Close()
	var m Memory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("read clamd's memory: %s: %w", k, err)
		}
		if k == "VmRSS" {
			m.RSS = kb << 10
		} else {
			m.Peak = kb << 10
		}
	}
	if err := sc.Err(); err != nil {
		return Memory{}, fmt.Errorf("read clamd's memory: %w", err)
	}
	return m, nil
}

var (
	findOnce sync.Once
	found    string // the binary's path, or ""
	missing  string // why not, when found is ""
)

// Binary returns the path of clamd, installing Debian's clamav-daemon with
// scripts/ci/install-clamav.sh when it is missing and the process is root.
// Otherwise it skips the test naming what is missing, or fails it when
// CI=true. A clamd outside the pinned 1.4 series is treated as missing.
func Binary(t testing.TB) string {
	t.Helper()
	findOnce.Do(func() { found, missing = find(t) })
	if found == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (CI=true: the clamd tests may not be skipped)", missing)
		}
		t.Skip(missing)
	}
	return found
}

func find(t testing.TB) (string, string) {
	if p, v := lookClamd(); p != "" && strings.HasPrefix(v, WantSeries) {
		return p, ""
	}
	script, err := installScript()
	if err != nil {
		return "", fmt.Sprintf("clamd (Debian clamav-daemon %sx) is not installed, and %v", WantSeries, err)
	}
	if os.Geteuid() != 0 {
		return "", fmt.Sprintf("clamd (Debian clamav-daemon %sx) is not installed: run %s as root", WantSeries, script)
	}
	t.Logf("clamd is missing: running %s", script)
	out, err := exec.Command("bash", script).CombinedOutput()
	if err != nil {
		return "", fmt.Sprintf("installing clamd (Debian clamav-daemon %sx) with %s failed: %v\n%s", WantSeries, script, err, out)
	}
	p, v := lookClamd()
	if p == "" || !strings.HasPrefix(v, WantSeries) {
		return "", fmt.Sprintf("after %s, clamd is at %q version %q, want %sx", script, p, v, WantSeries)
	}
	return p, ""
}

// lookClamd finds clamd on PATH or in /usr/sbin (not on a normal user's
// PATH) and reads its version ("ClamAV 1.4.6" → "1.4.6").
func lookClamd() (path, version string) {
	path, err := exec.LookPath("clamd")
	if err != nil {
		for _, p := range []string{"/usr/sbin/clamd", "/usr/local/sbin/clamd"} {
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				path = p
				break
			}
		}
	}
	if path == "" {
		return "", ""
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return path, ""
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "ClamAV ")
	if i := strings.IndexAny(v, "/ \n"); i >= 0 {
		v = v[:i]
	}
	return path, v
}

// installScript is scripts/ci/install-clamav.sh of the module the test
// runs in.
func installScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "scripts", "ci", "install-clamav.sh")
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("the install script is missing: %w", err)
			}
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory to find scripts/ci/install-clamav.sh in")
		}
		dir = parent
	}
}
