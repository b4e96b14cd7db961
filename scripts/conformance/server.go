package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"time"
)

// devServer is a running scripts/dev process.
type devServer struct {
	// URL is its /mcp endpoint.
	URL  string
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// Start-up limits: the first start seeds the demo firm.
const (
	bannerTimeout = 2 * time.Minute
	readyTimeout  = 30 * time.Second
	stopGrace     = 10 * time.Second
)

var servingLine = regexp.MustCompile(`serving MCP at (http://127\.0\.0\.1:\d+/mcp) `)

// startDev starts the dev server with the fixture profile on a free
// loopback port over the file engine in data, logging every request to
// logPath, and returns once /mcp answers.
func startDev(ctx context.Context, bin, data, logPath string, logf func(string, ...any), extra ...string) (*devServer, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := append([]string{"-conformance", "-addr", "127.0.0.1:0", "-data", data, "-v"}, extra...)
	cmd := exec.Command(bin, args...)
	// Only what the server needs: the file engine, whatever the caller's
	// STORE_ENGINE says.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TMPDIR=" + os.TempDir()}
	cmd.Stderr = log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		log.Close()
		return nil, err
	}
	setDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	s := &devServer{cmd: cmd, done: make(chan struct{}), log: log}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Fprintln(log, sc.Text())
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(log, stdout)
		_ = cmd.Wait()
		close(s.done)
	}()
	logf("starting the dev server (%v), log in %s", args, logPath)
	select {
	case s.URL = <-urls:
	case <-s.done:
		s.stop()
		return nil, fmt.Errorf("it exited (%v) before serving; see %s", cmd.ProcessState, logPath)
	case <-time.After(bannerTimeout):
		s.stop()
		return nil, fmt.Errorf("it printed no address within %v; see %s", bannerTimeout, logPath)
	case <-ctx.Done():
		s.stop()
		return nil, ctx.Err()
	}
	if err := s.awaitReady(ctx); err != nil {
		s.stop()
		return nil, err
	}
	logf("the dev server serves %s", s.URL)
	return s, nil
}

// awaitReady polls /mcp with a CORS preflight (answered before any
// credential or store access) until it is answered.
func (s *devServer) awaitReady(ctx context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(readyTimeout)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodOptions, s.URL, nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode < 500 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer within %v (last: %v)", s.URL, readyTimeout, err)
		}
		select {
		case <-s.done:
			return errors.New("the dev server exited while starting")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop ends the server: SIGTERM (it shuts down cleanly), SIGKILL after the
// grace period.
func (s *devServer) stop() {
	defer s.log.Close()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(stopGrace):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}
