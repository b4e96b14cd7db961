package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// cpuMask is a Linux cpu_set_t for up to 1024 CPUs.
type cpuMask [16]uint64

func threadAffinity(op uintptr, m *cpuMask) error {
	// pid 0 is the calling thread, not the process.
	_, _, errno := syscall.RawSyscall(op, 0, unsafe.Sizeof(*m), uintptr(unsafe.Pointer(m)))
	if errno != 0 {
		return errno
	}
	return nil
}

// startPinned starts cmd with its CPU affinity set to the one CPU cpu, the
// way `taskset -c cpu cmd` does (sched_setaffinity, then execve) but
// without taskset's own exec in the measured start-up time: the calling
// goroutine locks its OS thread, narrows that thread's affinity, forks the
// child from it (a child inherits the forking thread's mask), and restores
// the thread. The child gets SIGKILL if the bench dies (Pdeathsig), so a
// crashed or killed bench leaves no server behind.
func startPinned(cmd *exec.Cmd, cpu int) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	// Its own process group: a Ctrl-C reaches the bench, which stops the
	// server itself, rather than the server mid-measurement.
	cmd.SysProcAttr.Setpgid = true
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		var old, want cpuMask
		if err := threadAffinity(syscall.SYS_SCHED_GETAFFINITY, &old); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("sched_getaffinity: %w", err)
			return
		}
		want[cpu/64] = 1 << (cpu % 64)
		if err := threadAffinity(syscall.SYS_SCHED_SETAFFINITY, &want); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("sched_setaffinity to CPU %d: %w", cpu, err)
			return
		}
		err := cmd.Start()
		if rerr := threadAffinity(syscall.SYS_SCHED_SETAFFINITY, &old); rerr != nil {
			// Leave the thread locked: it exits with this goroutine rather
			// than run bench code on the server's CPU. Pdeathsig is tied to
			// the forking thread, so the child dies with it; report why.
			if err == nil {
				err = fmt.Errorf("restore the bench's affinity: %w", rerr)
			}
			errc <- err
			return
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// serverEnv is the bench's environment without the Go runtime's tuning
// variables, so every server runs with the runtime's defaults (GOMAXPROCS
// derived from its one-CPU affinity, so 1; GOGC 100; no memory limit), and
// without Custody's engine choice, so it runs on its default embedded file
// store; plus extra ("KEY=VALUE", from -server-env, for experiments).
func serverEnv(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "GOMAXPROCS", "GOGC", "GOMEMLIMIT", "GODEBUG",
			"STORE_ENGINE", "DYNAMODB_TABLE", "DYNAMODB_ENDPOINT":
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// process is a running server.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // Wait's result, valid after done
	log  string        // file with its stdout and stderr
}

// launch starts t's server listening on addr, pinned to CPU cpu, its
// output appended to logPath.
func launch(t *target, addr string, cpu int, logPath string) (*process, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(t.Bin, t.Args(addr)...)
	cmd.Env = serverEnv(t.Env)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := startPinned(cmd, cpu); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", filepath.Base(t.Bin), err)
	}
	p := &process{cmd: cmd, done: make(chan struct{}), log: logPath}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended (and how).
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop sends SIGTERM and waits for a clean exit, then SIGKILL after grace.
func (p *process) stop(grace time.Duration) error {
	if done, _ := p.exited(); done {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return fmt.Errorf("%s did not stop within %s of SIGTERM; killed", filepath.Base(p.cmd.Path), grace)
}

// logTail returns the last n bytes of the process's log, for error messages.
func (p *process) logTail(n int) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return ""
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}

// cpuSample is a process's CPU time so far, two ways.
type cpuSample struct {
	// SchedNS sums the first field of /proc/PID/task/*/schedstat: the
	// nanoseconds each thread has run (precise; a thread that exited
	// between samples would be lost, which Go servers do not do).
	SchedNS int64
	// StatTicks is utime+stime of /proc/PID/stat (whole thread group, exited
	// threads included) in clock ticks: a coarse cross-check.
	StatTicks int64
}

func sampleCPU(pid int) (cpuSample, error) {
	var s cpuSample
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return s, err
	}
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // the thread ended while we listed
			}
			return s, err
		}
		f := strings.Fields(string(b))
		if len(f) < 1 {
			return s, fmt.Errorf("%s/%s/schedstat: %q", dir, t.Name(), b)
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return s, fmt.Errorf("%s/%s/schedstat: %w", dir, t.Name(), err)
		}
		s.SchedNS += ns
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	// The command name (field 2) may hold spaces; count from after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return s, fmt.Errorf("/proc/%d/stat: no ')'", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return s, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return s, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		s.StatTicks += n
	}
	return s, nil
}

// procStatus returns a field of /proc/PID/status ("VmHWM", "Cpus_allowed_list").
func procStatus(pid int, field string) (string, error) {
	path := "/proc/self/status"
	if pid > 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if name, v, ok := strings.Cut(line, ":"); ok && name == field {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("%s: no %s", path, field)
}

// peakRSSKiB is VmHWM, the process's resident-set high-water mark.
func peakRSSKiB(pid int) (int64, error) {
	v, err := procStatus(pid, "VmHWM")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
}

// clockTicks is USER_HZ from `getconf CLK_TCK` (100 if getconf fails).
func clockTicks() int64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 100
}

// coreSample is one CPU's line of /proc/stat, in clock ticks.
type coreSample struct{ busy, iowait, steal, total int64 }

// sampleCore reads CPU cpu's times from /proc/stat (system-wide: every
// process, ours or not).
func sampleCore(cpu int) (coreSample, error) {
	var c coreSample
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return c, err
	}
	name := fmt.Sprintf("cpu%d", cpu)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || f[0] != name {
			continue
		}
		var v [8]int64 // user nice system idle iowait irq softirq steal
		for i := range v {
			if v[i], err = strconv.ParseInt(f[i+1], 10, 64); err != nil {
				return c, fmt.Errorf("/proc/stat %s: %w", name, err)
			}
		}
		c.busy = v[0] + v[1] + v[2] + v[5] + v[6]
		c.iowait, c.steal = v[4], v[7]
		for _, n := range v {
			c.total += n
		}
		return c, nil
	}
	return c, fmt.Errorf("/proc/stat: no %s", name)
}

// coreShare is how one CPU spent an interval, as fractions of it.
type coreShare struct {
	Busy   float64 `json:"busy"`   // user, nice, system, irq, softirq: anyone's
	IOWait float64 `json:"iowait"` // idle with I/O outstanding
	Steal  float64 `json:"steal"`  // taken by the hypervisor
}

func (c coreSample) since(prev coreSample) coreShare {
	total := float64(c.total - prev.total)
	if total <= 0 {
		return coreShare{}
	}
	return coreShare{
		Busy:   float64(c.busy-prev.busy) / total,
		IOWait: float64(c.iowait-prev.iowait) / total,
		Steal:  float64(c.steal-prev.steal) / total,
	}
}
