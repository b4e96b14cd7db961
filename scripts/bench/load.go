package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"
)

// levelResult is one concurrency level against one server.
type levelResult struct {
	Concurrency int     `json:"concurrency"`
	Seconds     float64 `json:"seconds"`     // measured window
	Calls       int64   `json:"calls"`       // successful calls completed in the window
	CallsPerSec float64 `json:"callsPerSec"` // Calls / Seconds
	P50Ms       float64 `json:"p50Ms"`
	P90Ms       float64 `json:"p90Ms"`
	P99Ms       float64 `json:"p99Ms"`
	P999Ms      float64 `json:"p999Ms"`
	MaxMs       float64 `json:"maxMs"`
	// Histogram counts the window's calls by latency, in buckets doubling
	// from 0.25 ms (each bucket holds the calls up to its LeMs).
	Histogram []bucket `json:"histogram"`
	// Errors counts every failed tools/call of the level, warm-up included:
	// transport errors, any status but 200, JSON-RPC errors, isError results.
	Errors       int64            `json:"errors"`
	WarmupErrors int64            `json:"warmupErrors"`
	ErrorKinds   map[string]int64 `json:"errorKinds,omitempty"`
	ErrorSamples []string         `json:"errorSamples,omitempty"`
	// Server CPU over the window: schedstat (ns) and utime+stime (ticks).
	CPUSeconds       float64 `json:"cpuSeconds"`
	CPUStatSeconds   float64 `json:"cpuStatSeconds"`
	CPUMicrosPerCall float64 `json:"cpuMicrosPerCall"`
	// DynamoMicrosPerCall is the DynamoDB emulator's CPU per call
	// (custody-dynamodb; the emulator runs on the client's CPU).
	DynamoMicrosPerCall float64 `json:"dynamoMicrosPerCall,omitempty"`
	// CPUUtilization is server CPU seconds per wall second (1.0 = its core saturated).
	CPUUtilization float64 `json:"cpuUtilization"`
	// ServerCore is how the server's CPU spent the window, from /proc/stat:
	// a busy share well above CPUUtilization means other processes ran there.
	ServerCore coreShare `json:"serverCore"`
	// Timeline is the window second by second, to place latency outliers.
	Timeline []second `json:"timeline"`
}

// bucket is one latency bucket of a histogram.
type bucket struct {
	LeMs  float64 `json:"leMs"`
	Calls int64   `json:"calls"`
}

// histogram buckets sorted latencies by powers of two from 0.25 ms.
func histogram(sorted []time.Duration) []bucket {
	var h []bucket
	le := 250 * time.Microsecond
	i := 0
	for i < len(sorted) {
		n := int64(0)
		for i < len(sorted) && sorted[i] <= le {
			n++
			i++
		}
		h = append(h, bucket{LeMs: ms(le), Calls: n})
		le *= 2
	}
	return h
}

// second is one second of a measured window.
type second struct {
	Calls int64   `json:"calls"`
	MaxMs float64 `json:"maxMs"`
}

// levelConfig is what runLevel needs.
type levelConfig struct {
	http        *http.Client
	url, key    string
	era2026     bool
	tool, args  string
	concurrency int
	warmup      time.Duration
	duration    time.Duration
	pid         int   // server process, for CPU samples
	dynamoPID   int   // the DynamoDB emulator's process (0: none)
	cpu         int   // the CPU it is pinned to
	clkTck      int64 // USER_HZ
}

// worker is one client: its session and what it saw.
type worker struct {
	s         *session
	latencies []time.Duration // successful calls completed in the window
	timeline  []second
	errs      map[string]int64
	warmErrs  int64
	samples   []string
}

// runLevel measures one level: cfg.concurrency workers, each with its own
// session (initialize + notifications/initialized, done before the clock
// starts), call the tool back to back for warm-up + duration. A call counts
// in the window when it completes within [t0, t1); server CPU is sampled at
// t0 and t1. Workers stop issuing calls at t1; the call in flight then is
// neither counted nor waited for in the CPU sample.
func runLevel(ctx context.Context, cfg levelConfig) (levelResult, error) {
	res := levelResult{Concurrency: cfg.concurrency}
	workers := make([]*worker, 0, cfg.concurrency)
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, w := range workers {
			w.s.close(closeCtx)
		}
	}()
	for i := range cfg.concurrency {
		s := newSession(cfg.http, cfg.url, cfg.key, cfg.era2026)
		if err := s.initialize(ctx); err != nil {
			return res, fmt.Errorf("initialize session %d of %d: %w", i+1, cfg.concurrency, err)
		}
		workers = append(workers, &worker{
			s: s, errs: map[string]int64{}, latencies: make([]time.Duration, 0, 1<<14),
			timeline: make([]second, int(math.Ceil(cfg.duration.Seconds()))),
		})
	}

	start := time.Now()
	t0 := start.Add(cfg.warmup)
	t1 := t0.Add(cfg.duration)
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(ctx, cfg.tool, cfg.args, t0, t1)
		}()
	}
	// On an early return the workers stop with ctx; wait for them before
	// their sessions are closed (deferred above, so run after this).
	defer wg.Wait()

	sleepUntil(ctx, t0)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	before, err := sampleCPU(cfg.pid)
	if err != nil {
		return res, fmt.Errorf("server CPU at t0: %w", err)
	}
	var dynBefore, dynAfter cpuSample
	if cfg.dynamoPID != 0 {
		if dynBefore, err = sampleCPU(cfg.dynamoPID); err != nil {
			return res, fmt.Errorf("emulator CPU at t0: %w", err)
		}
	}
	coreBefore, err := sampleCore(cfg.cpu)
	if err != nil {
		return res, err
	}
	sleepUntil(ctx, t1)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	after, err := sampleCPU(cfg.pid)
	if err != nil {
		return res, fmt.Errorf("server CPU at t1: %w", err)
	}
	if cfg.dynamoPID != 0 {
		if dynAfter, err = sampleCPU(cfg.dynamoPID); err != nil {
			return res, fmt.Errorf("emulator CPU at t1: %w", err)
		}
	}
	coreAfter, err := sampleCore(cfg.cpu)
	if err != nil {
		return res, err
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return res, err
	}

	var all []time.Duration
	res.ErrorKinds = map[string]int64{}
	res.Timeline = make([]second, len(workers[0].timeline))
	for _, w := range workers {
		all = append(all, w.latencies...)
		for i, sec := range w.timeline {
			res.Timeline[i].Calls += sec.Calls
			res.Timeline[i].MaxMs = max(res.Timeline[i].MaxMs, sec.MaxMs)
		}
		for k, n := range w.errs {
			res.ErrorKinds[k] += n
			res.Errors += n
		}
		res.WarmupErrors += w.warmErrs
		for _, s := range w.samples {
			if len(res.ErrorSamples) < 5 && !slices.Contains(res.ErrorSamples, s) {
				res.ErrorSamples = append(res.ErrorSamples, s)
			}
		}
	}
	if len(res.ErrorKinds) == 0 {
		res.ErrorKinds = nil
	}
	slices.Sort(all)
	res.Seconds = cfg.duration.Seconds()
	res.Calls = int64(len(all))
	res.CallsPerSec = float64(res.Calls) / res.Seconds
	res.P50Ms = ms(quantile(all, 0.50))
	res.P90Ms = ms(quantile(all, 0.90))
	res.P99Ms = ms(quantile(all, 0.99))
	res.P999Ms = ms(quantile(all, 0.999))
	res.Histogram = histogram(all)
	if len(all) > 0 {
		res.MaxMs = ms(all[len(all)-1])
	}
	res.CPUSeconds = float64(after.SchedNS-before.SchedNS) / 1e9
	res.CPUStatSeconds = float64(after.StatTicks-before.StatTicks) / float64(cfg.clkTck)
	res.CPUUtilization = res.CPUSeconds / res.Seconds
	res.ServerCore = coreAfter.since(coreBefore)
	if res.Calls > 0 {
		res.CPUMicrosPerCall = res.CPUSeconds / float64(res.Calls) * 1e6
		if cfg.dynamoPID != 0 {
			res.DynamoMicrosPerCall = float64(dynAfter.SchedNS-dynBefore.SchedNS) / 1e3 / float64(res.Calls)
		}
	}
	return res, nil
}

// run calls the tool until t1, recording successes completed in [t0, t1)
// and every failure.
func (w *worker) run(ctx context.Context, tool, args string, t0, t1 time.Time) {
	for ctx.Err() == nil {
		begin := time.Now()
		if !begin.Before(t1) {
			return
		}
		_, err := w.s.callTool(ctx, tool, args)
		end := time.Now()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			kind := "error"
			var ce *callError
			if errors.As(err, &ce) {
				kind = ce.Kind
			}
			w.errs[kind]++
			if end.Before(t0) {
				w.warmErrs++
			}
			if len(w.samples) < 5 {
				w.samples = append(w.samples, truncate(err.Error(), 300))
			}
			continue
		}
		if !end.Before(t0) && end.Before(t1) {
			d := end.Sub(begin)
			w.latencies = append(w.latencies, d)
			if i := int(end.Sub(t0) / time.Second); i < len(w.timeline) {
				w.timeline[i].Calls++
				w.timeline[i].MaxMs = max(w.timeline[i].MaxMs, ms(d))
			}
		}
	}
}

func sleepUntil(ctx context.Context, t time.Time) {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}

// quantile is the nearest-rank q-quantile of sorted d.
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(d)))) - 1
	return d[min(max(i, 0), len(d)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
