package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
	"unicode/utf8"
)

// report is the whole run, as written to JSON.
type report struct {
	Started  time.Time      `json:"started"`
	Finished time.Time      `json:"finished"`
	Host     hostInfo       `json:"host"`
	Config   reportConfig   `json:"config"`
	Targets  []targetResult `json:"targets"`
}

type hostInfo struct {
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpuModel"`
	Kernel    string `json:"kernel"`
	GoVersion string `json:"goVersion"`
	ServerCPU int    `json:"serverCpu"`
	BenchCPUs string `json:"benchCpus"` // the load client's Cpus_allowed_list
	ClkTck    int64  `json:"clkTck"`
}

type reportConfig struct {
	Levels          []int    `json:"levels"`
	Warmup          string   `json:"warmup"`
	Duration        string   `json:"duration"`
	Starts          int      `json:"starts"`
	Tool            string   `json:"tool"`
	CaseID          string   `json:"caseId"`
	ProtocolVersion string   `json:"protocolVersion"`
	Sessions        string   `json:"sessions"`
	ServerEnv       []string `json:"serverEnv,omitempty"`
}

func newReport(cfg *config) *report {
	r := &report{Started: time.Now().UTC()}
	r.Host.CPUs = runtime.NumCPU()
	r.Host.GoVersion = runtime.Version() // the toolchain run.sh also built the servers with
	r.Host.ServerCPU = cfg.serverCPU
	r.Host.BenchCPUs, _ = procStatus(0, "Cpus_allowed_list")
	r.Host.ClkTck = cfg.clkTck
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		r.Host.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				r.Host.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	r.Config = reportConfig{
		Levels: cfg.levels, Warmup: cfg.warmup.String(), Duration: cfg.duration.String(),
		Starts: cfg.starts, Tool: cfg.tool, CaseID: cfg.caseID, ProtocolVersion: protocolVersion,
		Sessions:  "one per worker, initialized before each level's warm-up, deleted after it",
		ServerEnv: cfg.serverEnv,
	}
	return r
}

// writeTable prints the side-by-side table: one column per target.
func (r *report) writeTable(w io.Writer) {
	env := "runtime defaults: GOMAXPROCS=1, Custody raises it to 2"
	if len(r.Config.ServerEnv) > 0 {
		env = "extra environment " + strings.Join(r.Config.ServerEnv, " ")
	}
	fmt.Fprintf(w, "MCP tools/call %s — %s warm-up + %s measured per level; server on CPU %d (%s), load client on CPUs %s; %s, %s\n\n",
		r.Config.Tool, r.Config.Warmup, r.Config.Duration, r.Host.ServerCPU, env, r.Host.BenchCPUs, r.Host.CPUModel, r.Host.GoVersion)
	var rows [][]string // nil: a separator line
	row := func(label string, cell func(t targetResult) string) {
		cells := []string{label}
		for _, t := range r.Targets {
			v := cell(t)
			if v == "" {
				v = "—"
			}
			cells = append(cells, v)
		}
		rows = append(rows, cells)
	}
	level := func(t targetResult, c int) (levelResult, bool) {
		for _, l := range t.Levels {
			if l.Concurrency == c {
				return l, true
			}
		}
		return levelResult{}, false
	}
	row("", func(t targetResult) string { return t.Name })
	for _, c := range r.Config.Levels {
		rows = append(rows, nil)
		for _, m := range []struct {
			name string
			f    func(levelResult) string
		}{
			{"calls/s", func(l levelResult) string { return fmt.Sprintf("%.0f", l.CallsPerSec) }},
			{"p50 ms", func(l levelResult) string { return fmt.Sprintf("%.3f", l.P50Ms) }},
			{"p99 ms", func(l levelResult) string { return fmt.Sprintf("%.3f", l.P99Ms) }},
			{"max ms", func(l levelResult) string { return fmt.Sprintf("%.1f", l.MaxMs) }},
			{"CPU µs/call", func(l levelResult) string { return fmt.Sprintf("%.1f", l.CPUMicrosPerCall) }},
			{"emulator µs/call", func(l levelResult) string {
				if l.DynamoMicrosPerCall == 0 {
					return ""
				}
				return fmt.Sprintf("%.1f", l.DynamoMicrosPerCall)
			}},
			{"errors", func(l levelResult) string { return fmt.Sprint(l.Errors) }},
			{"other load on CPU %", func(l levelResult) string {
				return fmt.Sprintf("%.0f", 100*max(0, l.ServerCore.Busy-l.CPUUtilization))
			}},
		} {
			row(fmt.Sprintf("c=%-3d %s", c, m.name), func(t targetResult) string {
				if l, ok := level(t, c); ok {
					return m.f(l)
				}
				return ""
			})
		}
	}
	rows = append(rows, nil)
	row("start-up median ms", func(t targetResult) string {
		if len(t.Startup.SamplesMs) == 0 {
			return ""
		}
		return fmt.Sprintf("%.2f", t.Startup.MedianMs)
	})
	row("binary MB", func(t targetResult) string { return fmt.Sprintf("%.1f", float64(t.BinaryBytes)/1e6) })
	row("peak RSS MB", func(t targetResult) string {
		if t.PeakRSSKiB == 0 {
			return ""
		}
		return fmt.Sprintf("%.1f", float64(t.PeakRSSKiB)/1024)
	})
	row("response bytes", func(t targetResult) string {
		if t.ResponseBytes == 0 {
			return ""
		}
		return fmt.Sprint(t.ResponseBytes)
	})
	writeGrid(w, rows)

	fmt.Fprintln(w)
	for _, t := range r.Targets {
		if t.Error != "" {
			fmt.Fprintf(w, "%s: did not complete: %s\n", t.Name, t.Error)
		}
		for _, n := range t.Notes {
			fmt.Fprintf(w, "%s: note: %s\n", t.Name, n)
		}
		for _, l := range t.Levels {
			for kind, n := range l.ErrorKinds {
				fmt.Fprintf(w, "%s c=%d: %d × %s\n", t.Name, l.Concurrency, n, kind)
			}
			for _, s := range l.ErrorSamples {
				fmt.Fprintf(w, "%s c=%d:   e.g. %s\n", t.Name, l.Concurrency, s)
			}
		}
	}
	r.writeVerdicts(w)
}

// Custody's targets (issue 19): start-up to the first initialize answer,
// and CPU per call on the DynamoDB engine at c=8 with the emulator out of
// process.
const (
	startupTargetMs      = 5
	dynamoCPUTargetMicro = 1000
	dynamoTargetLevel    = 8
)

// writeVerdicts states Custody against its targets: CPU per call no
// higher than the Go SDK's, start-up within startupTargetMs, and on
// DynamoDB CPU per call within dynamoCPUTargetMicro at c=8; then what the
// 2026-07-28 revision costs each server against the 2025 era.
func (r *report) writeVerdicts(w io.Writer) {
	byName := map[string]*targetResult{}
	for i := range r.Targets {
		if r.Targets[i].Error == "" {
			byName[r.Targets[i].Name] = &r.Targets[i]
		}
	}
	defer func() {
		for _, name := range []string{"custody", "go-sdk"} {
			old, neu := byName[name], byName[name+"-2026"]
			if old == nil || neu == nil {
				continue
			}
			for _, a := range old.Levels {
				for _, b := range neu.Levels {
					if a.Concurrency == b.Concurrency && a.CPUMicrosPerCall > 0 {
						fmt.Fprintf(w, "%s CPU/call at c=%d in the 2026-07-28 era: %.1f µs against %.1f µs in the 2025 era (%+.0f%%)\n",
							name, a.Concurrency, b.CPUMicrosPerCall, a.CPUMicrosPerCall, 100*(b.CPUMicrosPerCall/a.CPUMicrosPerCall-1))
					}
				}
			}
		}
	}()
	if dyn := byName["custody-dynamodb"]; dyn != nil {
		for _, l := range dyn.Levels {
			if l.Concurrency != dynamoTargetLevel {
				continue
			}
			verdict := "meets"
			if l.CPUMicrosPerCall > dynamoCPUTargetMicro {
				verdict = "MISSES"
			}
			fmt.Fprintf(w, "custody-dynamodb CPU/call at c=%d: %.1f µs (the emulator, out of process, %.1f µs more) %s the target (≤ %d µs)\n",
				l.Concurrency, l.CPUMicrosPerCall, l.DynamoMicrosPerCall, verdict, dynamoCPUTargetMicro)
		}
	}
	custody, gosdk := byName["custody"], byName["go-sdk"]
	if custody == nil {
		return
	}
	if len(custody.Startup.SamplesMs) > 0 {
		verdict := "meets"
		if custody.Startup.MedianMs > startupTargetMs {
			verdict = "MISSES"
		}
		fmt.Fprintf(w, "custody start-up (seeded data folder, seeding excluded): median %.2f ms %s the %d ms target\n", custody.Startup.MedianMs, verdict, startupTargetMs)
	}
	if gosdk == nil {
		return
	}
	for _, c := range custody.Levels {
		for _, g := range gosdk.Levels {
			if g.Concurrency != c.Concurrency || g.CPUMicrosPerCall == 0 {
				continue
			}
			verdict := "meets"
			if c.CPUMicrosPerCall > g.CPUMicrosPerCall {
				verdict = "MISSES"
			}
			fmt.Fprintf(w, "custody CPU/call at c=%d: %.1f µs = %.2f× the Go SDK's %.1f µs — %s the target (≤ Go SDK)\n",
				c.Concurrency, c.CPUMicrosPerCall, c.CPUMicrosPerCall/g.CPUMicrosPerCall, g.CPUMicrosPerCall, verdict)
		}
	}
}

// writeGrid prints rows with the first column left-aligned and the others
// right-aligned; a nil row is a blank line.
func writeGrid(w io.Writer, rows [][]string) {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		fmt.Fprintln(w, b.String())
	}
}
