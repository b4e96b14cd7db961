package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// config is the command line.
type config struct {
	bin, work   string
	targets     []string
	levels      []int
	warmup      time.Duration
	duration    time.Duration
	starts      int
	serverCPU   int
	clientCPU   int
	tool        string
	caseID      string
	jsonOut     string
	textOut     string
	serverEnv   []string
	allowErrors bool
	clkTck      int64

	// Custody
	custodyData string
	custodyctl  string
	owner       string
	scopes      string
	rateRead    int
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg := &config{}
	targets := flag.String("targets", "go-sdk,mcp-go,custody,go-sdk-2026,custody-2026,custody-dynamodb", "targets to measure, in order (a -2026 target speaks the stateless 2026-07-28 revision; custody-dynamodb runs Custody on the DynamoDB emulator in a process of its own)")
	levels := flag.String("levels", "1,8,64", "concurrency levels (workers)")
	flag.StringVar(&cfg.bin, "bin", "", "folder with the built binaries: gosdk, mcpgo, custody, custodyctl (required)")
	flag.StringVar(&cfg.work, "work", "", "scratch folder for logs and Custody's data (required)")
	flag.DurationVar(&cfg.warmup, "warmup", 2*time.Second, "warm-up per level, not measured")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Second, "measured window per level")
	flag.IntVar(&cfg.starts, "starts", 11, "process starts timed per target (the median is reported)")
	flag.IntVar(&cfg.serverCPU, "server-cpu", 0, "the one CPU the servers run on")
	flag.IntVar(&cfg.clientCPU, "client-cpu", 1, "the CPU of the load client, where the DynamoDB emulator of custody-dynamodb runs too")
	flag.StringVar(&cfg.tool, "tool", "get_matter", "tool to call")
	flag.StringVar(&cfg.caseID, "case-id", "m_meridian", "case_id argument (a matter every target knows)")
	flag.StringVar(&cfg.jsonOut, "json", "", "also write the results as JSON to this file")
	flag.StringVar(&cfg.textOut, "text", "", "also write the table to this file")
	flag.Func("server-env", "KEY=VALUE added to every server's environment, for experiments (repeatable; e.g. GOMAXPROCS=2)", func(v string) error {
		if !strings.Contains(v, "=") {
			return errors.New("want KEY=VALUE")
		}
		cfg.serverEnv = append(cfg.serverEnv, v)
		return nil
	})
	flag.BoolVar(&cfg.allowErrors, "allow-errors", false, "exit 0 even when calls failed")
	flag.StringVar(&cfg.owner, "custody-owner", "p_dana_whitfield", "principal owning Custody's bench key")
	flag.StringVar(&cfg.scopes, "custody-scopes", "read docs:read", "scopes of Custody's bench key")
	flag.IntVar(&cfg.rateRead, "custody-rate-read", 100_000_000, "the bench key's read-lane limit (requests/minute), far above the offered load")
	flag.Parse()
	if cfg.bin == "" || cfg.work == "" {
		flag.Usage()
		return errors.New("-bin and -work are required")
	}
	for _, f := range strings.Split(*levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-levels: %q is not a positive integer", f)
		}
		cfg.levels = append(cfg.levels, n)
	}
	if cfg.starts < 1 || cfg.duration <= 0 || cfg.warmup < 0 {
		return errors.New("-starts must be at least 1, -duration positive and -warmup not negative")
	}
	cfg.targets = strings.Split(*targets, ",")
	cfg.clkTck = clockTicks()
	cfg.custodyData = filepath.Join(cfg.work, "custody-data")
	cfg.custodyctl = filepath.Join(cfg.bin, "custodyctl")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	rep := newReport(cfg)
	if shared, err := cpuListHas(rep.Host.BenchCPUs, cfg.serverCPU); err != nil || shared {
		logf("warning: the load client may run on CPU %d with the servers (its CPUs: %q); run it under `taskset -c 1`", cfg.serverCPU, rep.Host.BenchCPUs)
	}

	// One client for every target: keep-alive, a pooled connection per
	// worker (the pool keeps them all, so none is redialled under load).
	hc := &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns:        0, // no limit
			MaxIdleConnsPerHost: slices.Max(cfg.levels) + 1,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
	}

	for _, name := range cfg.targets {
		t, err := newTarget(cfg, strings.TrimSpace(name))
		if err != nil {
			return err
		}
		logf("%s: measuring %s", t.Name, t.Bin)
		rep.Targets = append(rep.Targets, benchTarget(ctx, cfg, hc, t))
		hc.CloseIdleConnections()
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	rep.Finished = time.Now().UTC()

	var table bytes.Buffer
	rep.writeTable(&table)
	fmt.Printf("\n%s", table.Bytes())
	if cfg.textOut != "" {
		if err := os.WriteFile(cfg.textOut, table.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if cfg.jsonOut != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(cfg.jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Printf("\nJSON: %s\n", cfg.jsonOut)
	}
	var failed []string
	for _, t := range rep.Targets {
		if t.Error != "" {
			failed = append(failed, t.Name+" did not complete")
		}
		for _, l := range t.Levels {
			if l.Errors > 0 && !cfg.allowErrors {
				failed = append(failed, fmt.Sprintf("%s had %d failed calls at c=%d", t.Name, l.Errors, l.Concurrency))
			}
		}
	}
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "; "))
	}
	return nil
}

// newTarget describes a target by name.
func newTarget(cfg *config, name string) (*target, error) {
	t, err := describe(cfg, name)
	if err != nil {
		return nil, err
	}
	t.Env = append(t.Env, cfg.serverEnv...)
	return t, nil
}

func describe(cfg *config, name string) (*target, error) {
	switch name {
	case "go-sdk":
		return &target{Name: name, Bin: filepath.Join(cfg.bin, "gosdk"),
			Args: func(addr string) []string { return []string{"-addr", addr} }}, nil
	case "mcp-go":
		return &target{Name: name, Bin: filepath.Join(cfg.bin, "mcpgo"),
			Args: func(addr string) []string { return []string{"-addr", addr} }}, nil
	case "go-sdk-2026":
		return &target{Name: name, Bin: filepath.Join(cfg.bin, "gosdk"), Era2026: true,
			Args: func(addr string) []string { return []string{"-addr", addr, "-stateless"} }}, nil
	case "custody", "custody-2026":
		t := &target{Name: name, Bin: filepath.Join(cfg.bin, "custody"), Era2026: name == "custody-2026",
			Args: func(addr string) []string { return []string{"-addr", addr, "-data", cfg.custodyData} }}
		t.Setup = custodySetup(cfg)
		return t, nil
	case "custody-dynamodb":
		// The dev server built with its DynamoDB engine (-tags dynamodb).
		t := &target{Name: name, Bin: filepath.Join(cfg.bin, "custody-dynamodb"),
			Args: func(addr string) []string { return []string{"-addr", addr, "-data", cfg.custodyData} }}
		t.Setup = dynamoSetup(cfg, custodySetup(cfg))
		t.Teardown = func() {
			if t.Dynamo != nil {
				_ = t.Dynamo.stop(10 * time.Second)
			}
		}
		return t, nil
	}
	return nil, fmt.Errorf("unknown target %q (want go-sdk, go-sdk-2026, mcp-go, custody, custody-2026 or custody-dynamodb)", name)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// cpuListHas reports whether a Cpus_allowed_list ("0-3,5") includes cpu.
func cpuListHas(list string, cpu int) (bool, error) {
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil {
			return false, fmt.Errorf("CPU list %q", list)
		}
		if a <= cpu && cpu <= b {
			return true, nil
		}
	}
	return false, nil
}
