package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The cost model (docs/decisions.md "The cost model"): dollars per million
// calls, per front door and call type, from what BenchmarkCallCost
// (functions/mcp) measures at bench time — the DynamoDB requests of a call
// and the request units their items' sizes consume, the function's CPU time
// and log bytes per call, the answer's size — and the prices of
// prices.json, which carries their date and sources and is never fetched.
// Nothing a measurement can give is a constant here: when a change cuts a
// call's write units or its CPU, the next run shows it.

// price is one list price of prices.json.
type price struct {
	USD    float64 `json:"usd"`
	Source string  `json:"source"`
}

// assumption is a figure the model needs that is neither a price nor
// measurable on this machine, with where it comes from.
type assumption struct {
	Value  float64 `json:"value"`
	Source string  `json:"source"`
}

// prices is prices.json.
type prices struct {
	Date     string `json:"date"`
	Region   string `json:"region"`
	Currency string `json:"currency"`
	Note     string `json:"note"`
	// FrontDoor is the price of a million requests by front door (rest,
	// http, url: the template's FrontDoor values).
	FrontDoor      map[string]price `json:"frontDoorPerMillionRequests"`
	LambdaRequests price            `json:"lambdaPerMillionRequests"`
	LambdaGBSecond price            `json:"lambdaArm64PerGBSecond"`
	DynamoDBWrite  price            `json:"dynamodbPerMillionWriteUnits"`
	DynamoDBRead   price            `json:"dynamodbPerMillionReadUnits"`
	SQSRequests    price            `json:"sqsPerMillionRequests"`
	Logs           price            `json:"cloudwatchLogsPerGBIngested"`
	TransferOut    price            `json:"dataTransferOutPerGB"`
	Assumptions    struct {
		MBPerVCPU        assumption `json:"lambdaMBPerVCPU"`
		RoundTripMs      assumption `json:"dynamodbRoundTripMs"`
		LogEventOverhead assumption `json:"logEventOverheadBytes"`
	} `json:"assumptions"`
}

// frontDoors are the template's FrontDoor values, in the order of the table.
var frontDoors = []string{"rest", "http", "url"}

// loadPrices reads and checks a prices file: every field known, every
// price and assumption with a source, a date, and a price for each door.
func loadPrices(path string) (*prices, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read prices: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var p prices
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("decode prices %s: %w", path, err)
	}
	var bad []string
	if _, err := time.Parse(time.DateOnly, p.Date); err != nil {
		bad = append(bad, "date (YYYY-MM-DD)")
	}
	if p.Region == "" || p.Currency != "USD" {
		bad = append(bad, "region, currency USD")
	}
	check := func(name string, v float64, source string) {
		if v < 0 || math.IsNaN(v) || strings.TrimSpace(source) == "" {
			bad = append(bad, name)
		}
	}
	for _, d := range frontDoors {
		fp, ok := p.FrontDoor[d]
		if !ok {
			bad = append(bad, "frontDoorPerMillionRequests."+d)
			continue
		}
		check("frontDoorPerMillionRequests."+d, fp.USD, fp.Source)
	}
	for name, pr := range map[string]price{"lambdaPerMillionRequests": p.LambdaRequests, "lambdaArm64PerGBSecond": p.LambdaGBSecond,
		"dynamodbPerMillionWriteUnits": p.DynamoDBWrite, "dynamodbPerMillionReadUnits": p.DynamoDBRead, "sqsPerMillionRequests": p.SQSRequests,
		"cloudwatchLogsPerGBIngested": p.Logs, "dataTransferOutPerGB": p.TransferOut} {
		check(name, pr.USD, pr.Source)
	}
	a := p.Assumptions
	check("assumptions.lambdaMBPerVCPU", a.MBPerVCPU.Value, a.MBPerVCPU.Source)
	check("assumptions.dynamodbRoundTripMs", a.RoundTripMs.Value, a.RoundTripMs.Source)
	check("assumptions.logEventOverheadBytes", a.LogEventOverhead.Value, a.LogEventOverhead.Source)
	if a.MBPerVCPU.Value == 0 {
		bad = append(bad, "assumptions.lambdaMBPerVCPU (not 0)")
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return nil, fmt.Errorf("prices %s: missing or invalid: %s", path, strings.Join(bad, ", "))
	}
	return &p, nil
}

// costInput is what BenchmarkCallCost writes (functions/mcp/callcost_test.go,
// callCostReport): the fields the model reads.
type costInput struct {
	Schema               int               `json:"schema"`
	LambdaMemoryMB       int               `json:"lambdaMemoryMB"`
	EmulatorOutOfProcess bool              `json:"emulatorOutOfProcess"`
	Calls                []callMeasure     `json:"calls"`
	Unmeasured           map[string]string `json:"unmeasured,omitempty"`
}

// callMeasure is one call type behind one front door, as measured.
type callMeasure struct {
	Front             string  `json:"front"`
	Call              string  `json:"call"`
	Era               string  `json:"era"`
	Governed          bool    `json:"governed"`
	Write             bool    `json:"write"`
	Metered           int     `json:"metered"`
	DynamoDBRequests  float64 `json:"dynamodbRequests"`
	ReadUnits         float64 `json:"readUnits"`
	WriteUnits        float64 `json:"writeUnits"`
	Timed             int     `json:"timed"`
	CPUMicrosPerCall  float64 `json:"cpuMicrosPerCall"`
	WallMicrosPerCall float64 `json:"wallMicrosPerCall"`
	LogBytesPerCall   float64 `json:"logBytesPerCall"`
	LogEventsPerCall  float64 `json:"logEventsPerCall"`
	ResponseBytes     int     `json:"responseBytes"`
	QueueSendsPerCall float64 `json:"queueSendsPerCall"`
}

// costSchema is the version of costInput this bench reads.
const costSchema = 1

// parseCostInput decodes BenchmarkCallCost's JSON.
func parseCostInput(raw []byte) (*costInput, error) {
	var in costInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("decode the call cost measurements: %w", err)
	}
	if in.Schema != costSchema || in.LambdaMemoryMB <= 0 || len(in.Calls) == 0 {
		return nil, fmt.Errorf("call cost measurements: schema %d (want %d), memory %d MB, %d calls", in.Schema, costSchema, in.LambdaMemoryMB, len(in.Calls))
	}
	return &in, nil
}

// costLine is one item of a call's bill, per million calls.
type costLine struct {
	Item       string  `json:"item"`
	Arithmetic string  `json:"arithmetic"`
	USD        float64 `json:"usd"`
}

// callCost is a call's bill per million calls behind one front door.
type callCost struct {
	Front string     `json:"front"`
	Call  string     `json:"call"`
	Era   string     `json:"era"`
	Lines []costLine `json:"lines"`
	// TotalUSD is the all-in cost of a million calls: the front door,
	// Lambda's requests and duration, DynamoDB and CloudWatch Logs.
	TotalUSD float64 `json:"totalUsd"`
	// BilledMs is Lambda's billed duration of one call.
	BilledMs float64 `json:"billedMs"`
	// TransferOut is the answers' data transfer out, beside the total
	// (the target counts what is above).
	TransferOut costLine `json:"transferOut"`
}

// gib is the GB of AWS's per-GB prices.
const gib = 1 << 30

// priceCall is the bill of a million calls of m behind its front door, on a
// function of memoryMB:
//
//	front door       1 request × its price
//	Lambda requests  1 request × the price of a million
//	Lambda duration  ceil(CPU ms × max(1, MBPerVCPU/memoryMB) + requests × round-trip ms)
//	                 × memoryMB/1024 GB × the GB-second price
//	DynamoDB         read units × their price + write units × theirs
//	SQS              a task create's messages × the price of a million requests
//	CloudWatch Logs  (log bytes + events × the per-event overhead) / 2^30 × the GB price
//
// and, beside the total, the answer bytes' data transfer out.
func priceCall(m callMeasure, memoryMB int, p *prices) (callCost, error) {
	fd, ok := p.FrontDoor[m.Front]
	if !ok {
		return callCost{}, fmt.Errorf("no price for front door %q", m.Front)
	}
	if memoryMB <= 0 {
		return callCost{}, errors.New("no Lambda memory size")
	}
	c := callCost{Front: m.Front, Call: m.Call, Era: m.Era}
	add := func(item, arithmetic string, usd float64) {
		c.Lines = append(c.Lines, costLine{item, arithmetic, usd})
		c.TotalUSD += usd
	}
	add("front door", fmt.Sprintf("1 request × $%.2f/M", fd.USD), fd.USD)
	add("Lambda requests", fmt.Sprintf("1 request × $%.2f/M", p.LambdaRequests.USD), p.LambdaRequests.USD)

	stretch := math.Max(1, p.Assumptions.MBPerVCPU.Value/float64(memoryMB))
	cpuMs := m.CPUMicrosPerCall / 1000
	ms := cpuMs*stretch + m.DynamoDBRequests*p.Assumptions.RoundTripMs.Value
	c.BilledMs = math.Ceil(ms)
	gb := float64(memoryMB) / 1024
	duration := c.BilledMs / 1000 * gb * p.LambdaGBSecond.USD * 1e6
	add("Lambda duration", fmt.Sprintf("ceil(%.3f ms CPU × %.0f/%d + %.2f requests × %.0f ms) = %.0f ms × %.3f GB × $%s/GB-s × 1M",
		cpuMs, p.Assumptions.MBPerVCPU.Value, memoryMB, m.DynamoDBRequests, p.Assumptions.RoundTripMs.Value, c.BilledMs, gb,
		strconv.FormatFloat(p.LambdaGBSecond.USD, 'f', -1, 64)), duration)

	add("DynamoDB reads", fmt.Sprintf("%.2f RRU × $%.3f/M", m.ReadUnits, p.DynamoDBRead.USD), m.ReadUnits*p.DynamoDBRead.USD)
	add("DynamoDB writes", fmt.Sprintf("%.2f WRU × $%.3f/M", m.WriteUnits, p.DynamoDBWrite.USD), m.WriteUnits*p.DynamoDBWrite.USD)
	if m.QueueSendsPerCall > 0 {
		add("SQS sends", fmt.Sprintf("%.2f SendMessage × $%.2f/M", m.QueueSendsPerCall, p.SQSRequests.USD), m.QueueSendsPerCall*p.SQSRequests.USD)
	}

	logBytes := m.LogBytesPerCall + m.LogEventsPerCall*p.Assumptions.LogEventOverhead.Value
	add("CloudWatch Logs", fmt.Sprintf("(%.0f B + %.2f events × %.0f B) × 1M / 2^30 B × $%.2f/GB",
		m.LogBytesPerCall, m.LogEventsPerCall, p.Assumptions.LogEventOverhead.Value, p.Logs.USD), logBytes*1e6/gib*p.Logs.USD)

	c.TransferOut = costLine{"data transfer out",
		fmt.Sprintf("%d B × 1M / 2^30 B × $%.2f/GB", m.ResponseBytes, p.TransferOut.USD), float64(m.ResponseBytes) * 1e6 / gib * p.TransferOut.USD}
	return c, nil
}

// costResult is the cost model's part of the report.
type costResult struct {
	PricesFile  string            `json:"pricesFile"`
	PricesDate  string            `json:"pricesDate"`
	Region      string            `json:"region"`
	MemoryMB    int               `json:"lambdaMemoryMB"`
	OutOfProc   bool              `json:"emulatorOutOfProcess"`
	Measured    []callMeasure     `json:"measured"`
	Calls       []callCost        `json:"calls"`
	Unmeasured  map[string]string `json:"unmeasured,omitempty"`
	Error       string            `json:"error,omitempty"`
	Assumptions map[string]string `json:"assumptions"`
}

// priceAll prices every measured call.
func priceAll(in *costInput, p *prices, pricesFile string) (*costResult, error) {
	r := &costResult{PricesFile: pricesFile, PricesDate: p.Date, Region: p.Region, MemoryMB: in.LambdaMemoryMB,
		OutOfProc: in.EmulatorOutOfProcess, Measured: in.Calls, Unmeasured: in.Unmeasured,
		Assumptions: map[string]string{
			"lambdaMBPerVCPU":       fmt.Sprintf("%g: %s", p.Assumptions.MBPerVCPU.Value, p.Assumptions.MBPerVCPU.Source),
			"dynamodbRoundTripMs":   fmt.Sprintf("%g: %s", p.Assumptions.RoundTripMs.Value, p.Assumptions.RoundTripMs.Source),
			"logEventOverheadBytes": fmt.Sprintf("%g: %s", p.Assumptions.LogEventOverhead.Value, p.Assumptions.LogEventOverhead.Source),
		}}
	for _, m := range in.Calls {
		c, err := priceCall(m, in.LambdaMemoryMB, p)
		if err != nil {
			return nil, err
		}
		r.Calls = append(r.Calls, c)
	}
	return r, nil
}

// The cost target (issue 19): a million governed get_matter calls behind
// the function URL, all-in, within costTargetUSD.
const (
	costTargetUSD   = 2.00
	costTargetFront = "url"
	costTargetCall  = "get_matter"
)

// writeCost prints the cost table: a grid of totals (call types by front
// door), the arithmetic of every get_matter, and the verdict.
func (r *costResult) writeCost(w io.Writer) {
	if r == nil {
		return
	}
	fmt.Fprintf(w, "\nCost per million calls — %s list prices of %s (%s), measured by BenchmarkCallCost (functions/mcp): MemorySize %d MB; DynamoDB units from the item sizes of metered calls, CPU and log bytes per call from timed calls",
		r.Region, r.PricesDate, r.PricesFile, r.MemoryMB)
	if !r.OutOfProc {
		fmt.Fprint(w, " (the emulator in process: its CPU counted as the function's)")
	}
	fmt.Fprint(w, "\n\n")
	if r.Error != "" {
		fmt.Fprintf(w, "cost: did not complete: %s\n", r.Error)
		return
	}
	type key struct{ call, era string }
	var rowsOrder []key
	byKey := map[key]map[string]callCost{}
	for _, c := range r.Calls {
		k := key{c.Call, c.Era}
		if byKey[k] == nil {
			byKey[k] = map[string]callCost{}
			rowsOrder = append(rowsOrder, k)
		}
		byKey[k][c.Front] = c
	}
	rows := [][]string{append([]string{""}, frontDoors...)}
	for _, k := range rowsOrder {
		row := []string{fmt.Sprintf("%s (%s)", k.call, k.era)}
		for _, f := range frontDoors {
			if c, ok := byKey[k][f]; ok {
				row = append(row, fmt.Sprintf("$%.2f", c.TotalUSD))
			} else {
				row = append(row, "—")
			}
		}
		rows = append(rows, row)
	}
	writeGrid(w, rows)
	for _, call := range slices.Sorted(maps.Keys(r.Unmeasured)) {
		fmt.Fprintf(w, "%s: not measured: %s\n", call, r.Unmeasured[call])
	}
	for _, c := range r.Calls {
		if c.Call != costTargetCall {
			continue
		}
		fmt.Fprintf(w, "\n%s (%s) behind the %s front door, per million calls:\n", c.Call, c.Era, c.Front)
		lines := append(slices.Clone(c.Lines), costLine{Item: "total", USD: c.TotalUSD},
			costLine{Item: "(beside: " + c.TransferOut.Item + ")", Arithmetic: c.TransferOut.Arithmetic, USD: c.TransferOut.USD})
		width := 0
		for _, l := range lines {
			width = max(width, utf8.RuneCountInString(l.Arithmetic))
		}
		for _, l := range lines {
			pad := strings.Repeat(" ", width-utf8.RuneCountInString(l.Arithmetic))
			fmt.Fprintf(w, "  %-28s %s%s  %9s\n", l.Item, l.Arithmetic, pad, fmt.Sprintf("$%.4f", l.USD))
		}
	}
	fmt.Fprintln(w)
	for _, c := range r.Calls {
		if c.Front != costTargetFront || c.Call != costTargetCall {
			continue
		}
		verdict := "meets"
		if c.TotalUSD > costTargetUSD {
			verdict = "MISSES"
		}
		fmt.Fprintf(w, "cost of a million governed %s calls (%s) behind the function URL, all-in: $%.2f — %s the target (≤ $%.2f)\n",
			costTargetCall, c.Era, c.TotalUSD, verdict, costTargetUSD)
	}
}

// runCost measures the calls and prices them: the DynamoDB emulator
// (minidyn) in a process of its own on the client's CPU, then
// BenchmarkCallCost in functions/mcp's test binary (mcp.test, built by
// run.sh) pinned to the server's CPU, so the CPU it measures is the
// function's alone; its JSON is priced with the prices file.
func runCost(ctx context.Context, cfg *config) *costResult {
	fail := func(err error) *costResult {
		logf("cost: FAILED: %v", err)
		return &costResult{PricesFile: cfg.pricesFile, Error: err.Error()}
	}
	p, err := loadPrices(cfg.pricesFile)
	if err != nil {
		return fail(err)
	}
	emu := &target{Name: "minidyn", Bin: filepath.Join(cfg.bin, "minidyn"),
		Args: func(addr string) []string { return []string{"-addr", addr, "-table", "custody-cost-unused"} }}
	addr, err := freeAddr()
	if err != nil {
		return fail(err)
	}
	dyn, err := launch(emu, addr, cfg.clientCPU, filepath.Join(cfg.work, "cost-minidyn.log"))
	if err != nil {
		return fail(err)
	}
	defer dyn.stop(10 * time.Second)
	url := "http://" + addr
	for begin := time.Now(); !strings.Contains(dyn.logTail(400), url); time.Sleep(5 * time.Millisecond) {
		if done, werr := dyn.exited(); done {
			return fail(fmt.Errorf("minidyn exited (%v): %s", werr, dyn.logTail(600)))
		}
		if time.Since(begin) > 30*time.Second {
			return fail(fmt.Errorf("minidyn did not start within 30 s: %s", dyn.logTail(600)))
		}
	}
	out := filepath.Join(cfg.work, "callcost.json")
	logPath := filepath.Join(cfg.work, "callcost.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return fail(err)
	}
	defer logFile.Close()
	runCtx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(runCtx, filepath.Join(cfg.bin, "mcp.test"),
		"-test.run", "^$", "-test.bench", "^BenchmarkCallCost$", "-test.benchtime", fmt.Sprintf("%dx", cfg.costCalls), "-test.count", "1",
		"-callcost.out", out, "-callcost.dynamodb", url)
	cmd.Dir = filepath.Join(cfg.repo, "functions", "mcp") // its tests read ../../events and ../../template.yaml
	cmd.Env = serverEnv(cfg.serverEnv)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	logf("cost: BenchmarkCallCost on CPU %d (%d timed calls per front door and call type), the emulator at %s on CPU %d", cfg.serverCPU, cfg.costCalls, url, cfg.clientCPU)
	if err := startPinned(cmd, cfg.serverCPU); err != nil {
		return fail(err)
	}
	if err := cmd.Wait(); err != nil {
		tail, _ := os.ReadFile(logPath)
		if len(tail) > 1500 {
			tail = tail[len(tail)-1500:]
		}
		return fail(fmt.Errorf("BenchmarkCallCost: %w: %s", err, strings.TrimSpace(string(tail))))
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		return fail(err)
	}
	in, err := parseCostInput(raw)
	if err != nil {
		return fail(err)
	}
	r, err := priceAll(in, p, filepath.Base(cfg.pricesFile))
	if err != nil {
		return fail(err)
	}
	for _, c := range r.Calls {
		logf("cost: %s (%s) behind %s: $%.2f per million calls", c.Call, c.Era, c.Front, c.TotalUSD)
	}
	return r
}
