package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// target is one server under test.
type target struct {
	Name string // column title: "go-sdk", "mcp-go", "custody"
	Bin  string // its binary
	// Args are its flags for a listen address.
	Args func(addr string) []string
	// Env is added to the server's environment (-server-env).
	Env []string
	// Key is the bearer key sent on every request (Custody only).
	Key string
	// Setup runs once before anything is measured (Custody: seed + mint;
	// on DynamoDB the emulator is started first).
	Setup func(ctx context.Context, t *target) error
	// Teardown runs once after the target is measured (stops the emulator).
	Teardown func()
	// Dynamo is the DynamoDB emulator serving this target, once Setup ran
	// (custody-dynamodb only): its CPU is read beside the server's.
	Dynamo *process
	// Era2026 speaks the stateless 2026-07-28 revision: no initialize, no
	// session; every call carries its _meta and the standard headers.
	Era2026 bool
}

// targetResult is everything measured about one target.
type targetResult struct {
	Name          string        `json:"name"`
	Binary        string        `json:"binary"`
	BinaryBytes   int64         `json:"binaryBytes"`
	CPUsAllowed   string        `json:"cpusAllowed"` // the server's Cpus_allowed_list under load
	Startup       startupResult `json:"startup"`
	PeakRSSKiB    int64         `json:"peakRssKiB"` // VmHWM after the last level
	ResponseBytes int           `json:"responseBytes"`
	Levels        []levelResult `json:"levels"`
	Error         string        `json:"error,omitempty"`
	Notes         []string      `json:"notes,omitempty"`
}

// startupResult is process start → first answered initialize.
type startupResult struct {
	MedianMs  float64   `json:"medianMs"`
	MinMs     float64   `json:"minMs"`
	MaxMs     float64   `json:"maxMs"`
	SamplesMs []float64 `json:"samplesMs"`
}

// freeAddr returns a loopback address with a port the kernel just handed
// out (and that we released for the server to take).
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startupClient dials afresh for every attempt (no pooled connection can
// outlive a server) and gives up on a dial quickly.
func startupClient() *http.Client {
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext:       (&net.Dialer{Timeout: 200 * time.Millisecond}).DialContext,
		},
	}
}

// awaitInitialize polls addr with initialize until it is answered with a
// result, the process exits, or timeout passes. It returns when the answer
// was read.
func awaitInitialize(ctx context.Context, hc *http.Client, p *process, addr, key string, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"custody-bench","version":"1"}}}`, protocolVersion)
	s := newSession(hc, "http://"+addr+"/mcp", key, false)
	var last error
	for {
		_, raw, err := s.post(ctx, body)
		if err == nil {
			var r struct {
				Result *struct {
					ProtocolVersion string `json:"protocolVersion"`
				} `json:"result"`
			}
			if json.Unmarshal(raw, &r) == nil && r.Result != nil && r.Result.ProtocolVersion != "" {
				return time.Now(), nil
			}
			err = &callError{Kind: "bad response", Detail: truncate(string(raw), 200)}
		}
		last = err
		var ce *callError
		if errors.As(err, &ce) && ce.Kind != "transport" {
			// It listens but does not answer initialize: no use waiting.
			return time.Time{}, fmt.Errorf("initialize: %w", err)
		}
		if done, werr := p.exited(); done {
			return time.Time{}, fmt.Errorf("server exited (%v) before answering initialize: %s", werr, p.logTail(600))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return time.Time{}, fmt.Errorf("no answer to initialize within %s: %v", timeout, last)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// measureStartups starts the server n times (pinned to cpu), each time
// timing exec → first answered initialize, then stopping it.
func measureStartups(ctx context.Context, t *target, n, cpu int, logPath string) (startupResult, error) {
	var r startupResult
	hc := startupClient()
	defer hc.CloseIdleConnections()
	for range n {
		addr, err := freeAddr()
		if err != nil {
			return r, err
		}
		begin := time.Now()
		p, err := launch(t, addr, cpu, logPath)
		if err != nil {
			return r, err
		}
		answered, err := awaitInitialize(ctx, hc, p, addr, t.Key, 30*time.Second)
		stopErr := p.stop(10 * time.Second)
		if err != nil {
			return r, err
		}
		if stopErr != nil {
			return r, stopErr
		}
		r.SamplesMs = append(r.SamplesMs, ms(answered.Sub(begin)))
	}
	sorted := slices.Sorted(slices.Values(r.SamplesMs))
	r.MinMs, r.MaxMs = sorted[0], sorted[len(sorted)-1]
	if len(sorted)%2 == 1 {
		r.MedianMs = sorted[len(sorted)/2]
	} else {
		r.MedianMs = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	return r, nil
}

// custodySetup seeds a fresh data folder and mints the bench key: one start
// of the server on the empty folder (which seeds the demo firm), a mint
// through its loopback admin endpoint with custodyctl while it runs, then a
// clean stop. Every measured start is therefore on the same seeded, keyed
// folder, and no admin traffic reaches the measured process.
func custodySetup(cfg *config) func(ctx context.Context, t *target) error {
	return func(ctx context.Context, t *target) error {
		if err := os.RemoveAll(cfg.custodyData); err != nil {
			return err
		}
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		logPath := filepath.Join(cfg.work, "custody-seed.log")
		begin := time.Now()
		p, err := launch(t, addr, cfg.serverCPU, logPath)
		if err != nil {
			return err
		}
		defer p.stop(10 * time.Second)
		// The server listens once the demo firm is seeded. On the file
		// engine custodyctl then needs the admin address it writes into the
		// data folder; on DynamoDB custodyctl goes to the table and the
		// server writes no address, so accepting connections is the sign.
		adminAddr := filepath.Join(cfg.custodyData, "admin-addr")
		ready := func() bool { _, err := os.Stat(adminAddr); return err == nil }
		if t.Dynamo != nil {
			ready = func() bool {
				c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
				if err == nil {
					c.Close()
				}
				return err == nil
			}
		}
		for {
			if ready() {
				break
			}
			if done, werr := p.exited(); done {
				return fmt.Errorf("custody exited (%v) during its first start: %s", werr, p.logTail(800))
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if time.Since(begin) > 3*time.Minute {
				return fmt.Errorf("custody did not finish seeding within 3 min: %s", p.logTail(800))
			}
			time.Sleep(20 * time.Millisecond)
		}
		seeded := time.Since(begin)

		mintCtx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		cmd := exec.CommandContext(mintCtx, cfg.custodyctl, "--data", cfg.custodyData, "keys", "mint",
			"--owner", cfg.owner, "--scopes", cfg.scopes, "--rate-read", fmt.Sprint(cfg.rateRead),
			"--label", "bench")
		cmd.Env = serverEnv(t.Env) // the same store as the server's
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("custodyctl keys mint: %w: %s", err, strings.TrimSpace(stderr.String()))
		}
		t.Key = strings.TrimSpace(string(out))
		if t.Key == "" || strings.ContainsAny(t.Key, " \n") {
			return fmt.Errorf("custodyctl keys mint printed %q, not one key", out)
		}
		if err := p.stop(10 * time.Second); err != nil {
			return err
		}
		logf("custody: first start seeded %s in %s; minted the bench key (read lane %d/min)",
			cfg.custodyData, seeded.Round(time.Millisecond), cfg.rateRead)
		return nil
	}
}

// dynamoTable is the table the emulator creates for custody-dynamodb.
const dynamoTable = "custody-bench"

// dynamoSetup starts the DynamoDB emulator (cmd minidyn, which creates the
// table) in its own process pinned to the load client's CPU, so that its
// work neither counts as the server's nor competes with it, points the
// target at it, then runs Custody's own setup (seed, mint) there.
func dynamoSetup(cfg *config, custody func(ctx context.Context, t *target) error) func(ctx context.Context, t *target) error {
	return func(ctx context.Context, t *target) error {
		emu := &target{Name: "minidyn", Bin: filepath.Join(cfg.bin, "minidyn"),
			Args: func(addr string) []string { return []string{"-addr", addr, "-table", dynamoTable} }}
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		p, err := launch(emu, addr, cfg.clientCPU, filepath.Join(cfg.work, "minidyn.log"))
		if err != nil {
			return err
		}
		t.Dynamo = p
		url := "http://" + addr
		begin := time.Now()
		for {
			// minidyn prints its URL once the table exists; its log is the
			// file launch gave it.
			if strings.Contains(p.logTail(400), url) {
				break
			}
			if done, werr := p.exited(); done {
				return fmt.Errorf("minidyn exited (%v): %s", werr, p.logTail(600))
			}
			if time.Since(begin) > 30*time.Second {
				return fmt.Errorf("minidyn did not start within 30 s: %s", p.logTail(600))
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Env = append(t.Env, "STORE_ENGINE=dynamodb", "DYNAMODB_TABLE="+dynamoTable, "DYNAMODB_ENDPOINT="+url)
		logf("%s: DynamoDB emulator at %s on CPU %d (pid %d)", t.Name, url, cfg.clientCPU, p.pid())
		return custody(ctx, t)
	}
}

// benchTarget measures one target: setup, start-ups, then each level on one
// long-running process.
func benchTarget(ctx context.Context, cfg *config, hc *http.Client, t *target) (res targetResult) {
	res = targetResult{Name: t.Name, Binary: filepath.Base(t.Bin)}
	fail := func(err error) targetResult {
		res.Error = err.Error()
		logf("%s: FAILED: %v", t.Name, err)
		return res
	}
	fi, err := os.Stat(t.Bin)
	if err != nil {
		return fail(err)
	}
	res.BinaryBytes = fi.Size()
	if t.Teardown != nil {
		defer t.Teardown()
	}
	if t.Setup != nil {
		if err := t.Setup(ctx, t); err != nil {
			return fail(fmt.Errorf("setup: %w", err))
		}
	}

	logPath := filepath.Join(cfg.work, t.Name+".log")
	st, err := measureStartups(ctx, t, cfg.starts, cfg.serverCPU, logPath)
	if err != nil {
		return fail(fmt.Errorf("start-up: %w", err))
	}
	res.Startup = st
	logf("%s: start → first initialize answer: median %.2f ms (min %.2f, max %.2f, n=%d)",
		t.Name, st.MedianMs, st.MinMs, st.MaxMs, len(st.SamplesMs))

	addr, err := freeAddr()
	if err != nil {
		return fail(err)
	}
	p, err := launch(t, addr, cfg.serverCPU, logPath)
	if err != nil {
		return fail(err)
	}
	defer func() {
		if err := p.stop(10 * time.Second); err != nil {
			res.Notes = append(res.Notes, err.Error())
		}
	}()
	sc := startupClient()
	if _, err := awaitInitialize(ctx, sc, p, addr, t.Key, 30*time.Second); err != nil {
		return fail(err)
	}
	sc.CloseIdleConnections()
	res.CPUsAllowed, _ = procStatus(p.pid(), "Cpus_allowed_list")
	if res.CPUsAllowed != fmt.Sprint(cfg.serverCPU) {
		return fail(fmt.Errorf("server allowed on CPUs %q, want only %d", res.CPUsAllowed, cfg.serverCPU))
	}

	url := "http://" + addr + "/mcp"
	args := fmt.Sprintf(`{"case_id":%q}`, cfg.caseID)
	probe := newSession(hc, url, t.Key, t.Era2026)
	if err := probe.initialize(ctx); err != nil {
		return fail(fmt.Errorf("probe initialize: %w", err))
	}
	raw, err := probe.callTool(ctx, cfg.tool, args)
	if err != nil {
		return fail(fmt.Errorf("probe %s(%s): %w", cfg.tool, args, err))
	}
	res.ResponseBytes = len(raw)
	probe.close(ctx)

	for _, c := range cfg.levels {
		lc := levelConfig{
			http: hc, url: url, key: t.Key, era2026: t.Era2026, tool: cfg.tool, args: args,
			concurrency: c, warmup: cfg.warmup, duration: cfg.duration,
			pid: p.pid(), cpu: cfg.serverCPU, clkTck: cfg.clkTck,
		}
		if t.Dynamo != nil {
			lc.dynamoPID = t.Dynamo.pid()
		}
		lr, err := runLevel(ctx, lc)
		if err != nil {
			return fail(fmt.Errorf("concurrency %d: %w", c, err))
		}
		if done, werr := p.exited(); done {
			return fail(fmt.Errorf("server exited during concurrency %d (%v): %s", c, werr, p.logTail(600)))
		}
		res.Levels = append(res.Levels, lr)
		logf("%s: c=%-3d %8.0f calls/s  p50 %.3f ms  p99 %.3f ms  max %.1f ms  CPU %.1f µs/call (server %.0f%% of its core; core busy %.0f%%, iowait %.0f%%)  errors %d",
			t.Name, c, lr.CallsPerSec, lr.P50Ms, lr.P99Ms, lr.MaxMs, lr.CPUMicrosPerCall,
			100*lr.CPUUtilization, 100*lr.ServerCore.Busy, 100*lr.ServerCore.IOWait, lr.Errors)
		if t.Dynamo != nil {
			logf("%s: c=%-3d emulator CPU %.1f µs/call (on the client's CPU, not counted above)", t.Name, c, lr.DynamoMicrosPerCall)
		}
		if math.Abs(lr.CPUStatSeconds-lr.CPUSeconds) > 0.05*lr.CPUSeconds+2/float64(cfg.clkTck) {
			res.Notes = append(res.Notes, fmt.Sprintf("c=%d: schedstat %.3f s vs utime+stime %.3f s disagree", c, lr.CPUSeconds, lr.CPUStatSeconds))
		}
		if other := lr.ServerCore.Busy - lr.CPUUtilization; other > 0.05 || lr.ServerCore.Steal > 0.02 {
			res.Notes = append(res.Notes, fmt.Sprintf("c=%d: other processes used %.0f%% of the server's CPU and the hypervisor stole %.0f%%: this level's numbers are noisy",
				c, 100*other, 100*lr.ServerCore.Steal))
		}
		hc.CloseIdleConnections()
	}
	if res.PeakRSSKiB, err = peakRSSKiB(p.pid()); err != nil {
		return fail(err)
	}
	return res
}
