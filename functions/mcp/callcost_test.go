package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
)

// BenchmarkCallCost measures what one call costs the function on AWS, per
// front door and call type, for the cost model of scripts/bench (make bench
// prints dollars per million calls from it with the prices of
// scripts/bench/prices.json; docs/decisions.md "The cost model"). Each call
// goes through the function as the runtime sees it (functionHandler: the
// door's event JSON decoded by aws-lambda-go, the adapter method main
// picks, the composed endpoint over the DynamoDB engine) and is measured
// twice:
//
//   - metered, a few calls: every DynamoDB request the call sends and the
//     read and write request units it consumes, from the sizes of the items
//     it reads and writes (dynamotest.Meter);
//   - timed, b.N calls with the meter off: the process's CPU time per call
//     (getrusage; with -callcost.dynamodb the emulator runs in another
//     process, so this is the function's own), the wall time per call, and
//     the bytes and lines the function logs per call (what Lambda sends to
//     CloudWatch Logs: the adapter's outcome line and anything else).
//
// With -callcost.out FILE it writes every figure as JSON (callCostReport)
// for scripts/bench; it reports the headline figures as benchmark metrics
// too. Nothing here is a price.
func BenchmarkCallCost(b *testing.B) {
	emu := costEmulator(b)
	tpl := loadTemplate(b)
	memory, _ := path(tpl.Resources["McpFunction"], "Properties", "MemorySize").(int)
	rep := &callCostReport{Schema: 1, LambdaMemoryMB: memory, EmulatorOutOfProcess: *callCostDynamoDB != "",
		Unmeasured: map[string]string{
			"the worker's run of a task": "a task create here is the /mcp call only: the worker's invocation, claim, re-admission and outcome (functions/worker) are not measured",
		}}
	for _, d := range []frontDoor{restStreamed, httpAPI, functionURL} {
		for _, c := range costCalls {
			b.Run(fmt.Sprintf("front=%s/call=%s/era=%s", d.front, c.name, c.era()), func(b *testing.B) {
				rep.Calls = append(rep.Calls, measureCall(b, emu, d, c))
			})
		}
	}
	if *callCostOut != "" {
		out, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(*callCostOut, append(out, '\n'), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

var (
	callCostOut      = flag.String("callcost.out", "", "BenchmarkCallCost writes its measurements as JSON to this file (scripts/bench reads it)")
	callCostDynamoDB = flag.String("callcost.dynamodb", "", "BenchmarkCallCost's DynamoDB emulator endpoint, in another process (scripts/bench starts minidyn on another CPU) so that the CPU measured is the function's alone; empty: an emulator in this process")
)

// callCostReport is the JSON BenchmarkCallCost writes and scripts/bench
// reads (scripts/bench/cost.go holds the same shape).
type callCostReport struct {
	Schema int `json:"schema"`
	// LambdaMemoryMB is McpFunction's MemorySize in template.yaml.
	LambdaMemoryMB int `json:"lambdaMemoryMB"`
	// EmulatorOutOfProcess: the CPU figures exclude the emulator's.
	EmulatorOutOfProcess bool              `json:"emulatorOutOfProcess"`
	Calls                []callCostMeasure `json:"calls"`
	// Unmeasured names call types the function cannot serve yet, and why.
	Unmeasured map[string]string `json:"unmeasured,omitempty"`
}

// callCostMeasure is one call type behind one front door.
type callCostMeasure struct {
	Front string `json:"front"` // rest, http, url (FRONT_DOOR)
	Call  string `json:"call"`  // the call type, e.g. "get_matter"
	Era   string `json:"era"`   // the protocol revision spoken
	// Governed says the call runs the governed pipeline (credential, rate
	// limit, audit row); Write that it is a governed write.
	Governed bool `json:"governed"`
	Write    bool `json:"write"`
	// Metered is how many calls were metered; the units are their mean.
	Metered int `json:"metered"`
	// DynamoDBRequests is how many requests (round trips) one call sends;
	// ReadUnits and WriteUnits what they consume; Requests the last metered
	// call's, item by item.
	DynamoDBRequests float64                     `json:"dynamodbRequests"`
	ReadUnits        float64                     `json:"readUnits"`
	WriteUnits       float64                     `json:"writeUnits"`
	Requests         []dynamotest.MeteredRequest `json:"requests"`
	// Timed is how many calls the timed figures are the mean of.
	Timed             int     `json:"timed"`
	CPUMicrosPerCall  float64 `json:"cpuMicrosPerCall"`
	WallMicrosPerCall float64 `json:"wallMicrosPerCall"`
	// LogBytesPerCall and LogEventsPerCall are what the function writes to
	// its log per call (JSON lines; each line one CloudWatch Logs event).
	LogBytesPerCall  float64 `json:"logBytesPerCall"`
	LogEventsPerCall float64 `json:"logEventsPerCall"`
	// ResponseBytes is the size of one answer's body.
	ResponseBytes int `json:"responseBytes"`
	// QueueSendsPerCall is how many task messages one call sends (SQS
	// SendMessage requests behind TASK_QUEUE_URL).
	QueueSendsPerCall float64 `json:"queueSendsPerCall"`
}

// costCall is one call type: the body of its tools/call ({{N}} is a
// number unique to each call) and its era.
type costCall struct {
	name, body string
	era2026    bool
	write      bool
	// task: the call creates a task (the 2025-11-25 dialect's params.task),
	// so the function is composed with a task queue, as TASK_QUEUE_URL does.
	task bool
}

// The _meta a 2026-07-28 request carries instead of a session.
const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"custody-bench","version":"1"}}`

var costCalls = []costCall{
	{name: "get_matter", body: `{"jsonrpc":"2.0","id":{{N}},"method":"tools/call","params":{"name":"get_matter","arguments":{"case_id":"` + seed.Meridian + `"}}}`},
	{name: "get_matter", era2026: true, body: `{"jsonrpc":"2.0","id":{{N}},"method":"tools/call","params":{"name":"get_matter","arguments":{"case_id":"` + seed.Meridian + `"},` + meta2026 + `}}`},
	{name: "task create", task: true, body: `{"jsonrpc":"2.0","id":{{N}},"method":"tools/call","params":{"name":"export_fact_record","arguments":{"case_id":"` + seed.Meridian + `"},"task":{"ttl":60000}}}`},
	{name: "add_case_note", write: true, body: `{"jsonrpc":"2.0","id":{{N}},"method":"tools/call","params":{"name":"add_case_note","arguments":{"case_id":"` + seed.Meridian + `","body":"Call {{N}} of the cost model: a governed write of a short note.","idempotency_key":"cost-{{FRONT}}-{{N}}"}}}`},
}

// era is the protocol revision the call speaks.
func (c costCall) era() string {
	if c.era2026 {
		return "2026-07-28"
	}
	return "2025-11-25"
}

// costEmulator is the DynamoDB emulator of the benchmark: the one at
// -callcost.dynamodb, or one in process.
func costEmulator(b *testing.B) *emulator {
	if *callCostDynamoDB != "" {
		return seedEmulator(b, *callCostDynamoDB)
	}
	return startEmulator(b)
}

// meteredCalls is how many calls are metered after the warm-up call: one
// rate lease's slice of the key's budget (ratelimit.MaxSlice: its limits
// are far above 600 a minute), so the mean carries exactly one lease's
// write of the bucket, as a warm instance's calls do in the steady state
// (issue 19, item 6; a window that ends while metering adds a read and a
// write).
const meteredCalls = ratelimit.MaxSlice

func measureCall(b *testing.B, emu *emulator, d frontDoor, c costCall) callCostMeasure {
	m := callCostMeasure{Front: string(d.front), Call: c.name, Era: c.era(), Governed: true, Write: c.write}
	// A key that may write and is never rate-limited by the loop.
	ctx := context.Background()
	key, _, err := auth.Mint(ctx, emu.Store, auth.MintRequest{
		Tenant: seed.DemoTenant, Owner: seed.DemoAttorney, Label: "cost model",
		Scopes:     []auth.Scope{auth.ScopeRead, auth.ScopeDocsRead, auth.ScopeWrite},
		RateLimits: map[string]int{"read": 1 << 30, "write": 1 << 30, "expensive": 1 << 30},
	}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	cfg := loadDoor(b, emu, d)
	meter := dynamotest.NewMeter(dynamotest.NewClient(emu.URL))
	logs := &countingWriter{}
	sends := &countingSender{}
	var opts []func(*server.Config)
	if c.task {
		opts = append(opts, withTaskQueue(sends))
	}
	h := functionHandler(b, cfg, dynamostore.New(newDynamoDB(testAWSConfig(), cfg, meter.Option()), cfg.TableName, dynamostore.Options{}), logs, opts...)
	s := &sampleSession{key: key}
	if !c.era2026 {
		r := invokeEvent(b, h, d, lambdaContext(b, "cost-init"), readSample(b, sampleSteps[0].file(d), s))
		if s.sessionID = r.Header.Get("Mcp-Session-Id"); r.Status != 200 || s.sessionID == "" {
			b.Fatalf("initialize = %d %s", r.Status, r.Body)
		}
	}
	template := callEvent(b, d, s, strings.ReplaceAll(c.body, "{{FRONT}}", string(d.front)), c.era2026)
	n := 0
	call := func(check bool) []byte {
		n++
		payload := bytes.ReplaceAll(template, []byte("{{N}}"), strconv.AppendInt(nil, int64(n), 10))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		raw, err := h.Invoke(lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: "cost"}), payload)
		if err != nil {
			b.Fatalf("Invoke() error = %v", err)
		}
		if check {
			r := readAnswer(b, d, raw)
			res := rpcResult(b, r, 200)
			if res["isError"] == true || (c.task && res["task"] == nil) {
				b.Fatalf("%s refused or made no task: %s", c.name, r.Body)
			}
			m.ResponseBytes = len(r.Body)
		} else if bytes.Contains(raw, []byte(`"isError":true`)) {
			b.Fatalf("%s refused: %s", c.name, raw)
		}
		return raw
	}

	call(true) // warm-up: first use of each validator, connection, cache
	meter.Take()
	for range meteredCalls {
		call(true)
		reqs := meter.Take()
		m.Metered++
		m.Requests = reqs
		m.DynamoDBRequests += float64(len(reqs))
		for _, r := range reqs {
			m.ReadUnits += r.ReadUnits
			m.WriteUnits += r.WriteUnits
		}
	}
	m.DynamoDBRequests /= float64(m.Metered)
	m.ReadUnits /= float64(m.Metered)
	m.WriteUnits /= float64(m.Metered)

	meter.SetOn(false)
	logs.reset()
	sent0 := sends.count()
	cpu0 := processCPU(b)
	for b.Loop() {
		call(false)
	}
	cpu := processCPU(b) - cpu0
	m.Timed = b.N
	m.CPUMicrosPerCall = float64(cpu.Microseconds()) / float64(b.N)
	m.WallMicrosPerCall = float64(b.Elapsed().Microseconds()) / float64(b.N)
	bytesLogged, lines := logs.totals()
	m.LogBytesPerCall = float64(bytesLogged) / float64(b.N)
	m.LogEventsPerCall = float64(lines) / float64(b.N)
	m.QueueSendsPerCall = float64(sends.count()-sent0) / float64(b.N)

	b.ReportMetric(m.DynamoDBRequests, "dynamodb-requests/op")
	b.ReportMetric(m.ReadUnits, "RRU/op")
	b.ReportMetric(m.WriteUnits, "WRU/op")
	b.ReportMetric(m.CPUMicrosPerCall, "cpu-µs/op")
	b.ReportMetric(m.LogBytesPerCall, "log-B/op")
	return m
}

// callEvent is door d's tools/call sample with body in place of its own
// (plain text), the session's placeholders filled; for the 2026-07-28 era
// without a session and with the revision's headers.
func callEvent(b *testing.B, d frontDoor, s *sampleSession, body string, era2026 bool) []byte {
	raw := readSample(b, d.prefix+"-tools-call.json", s)
	set := func(h map[string]string, lower bool) {
		name := func(k string) string {
			if lower {
				return strings.ToLower(k)
			}
			return k
		}
		if era2026 {
			delete(h, name("Mcp-Session-Id"))
			h[name("MCP-Protocol-Version")] = "2026-07-28"
			h[name("Mcp-Method")] = "tools/call"
			h[name("Mcp-Name")] = "get_matter"
			// get_matter's case_id is an x-mcp-header argument (SEP-2243).
			h[name("Mcp-Param-Case-Id")] = seed.Meridian
		}
	}
	var ev any
	switch d.front {
	case FrontREST:
		var e events.APIGatewayProxyRequest
		mustDecode(b, raw, &e)
		set(e.Headers, false)
		if era2026 {
			delete(e.MultiValueHeaders, "Mcp-Session-Id")
			for _, k := range []string{"MCP-Protocol-Version", "Mcp-Method", "Mcp-Name", "Mcp-Param-Case-Id"} {
				e.MultiValueHeaders[k] = []string{e.Headers[k]}
			}
		}
		e.Body, e.IsBase64Encoded = body, false
		ev = e
	case FrontHTTP:
		var e events.APIGatewayV2HTTPRequest
		mustDecode(b, raw, &e)
		set(e.Headers, true)
		e.Body, e.IsBase64Encoded = body, false
		ev = e
	case FrontURL:
		var e events.LambdaFunctionURLRequest
		mustDecode(b, raw, &e)
		set(e.Headers, true)
		e.Body, e.IsBase64Encoded = body, false
		ev = e
	}
	out, err := json.Marshal(ev)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

func mustDecode(b *testing.B, raw []byte, v any) {
	if err := json.Unmarshal(raw, v); err != nil {
		b.Fatalf("decode sample: %v", err)
	}
}

// processCPU is the process's CPU time so far, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// countingSender is the task queue of a task create: it counts the
// messages the function sends (SQS SendMessage requests on AWS) and keeps
// none (no worker runs here).
type countingSender struct {
	mu sync.Mutex
	n  int
}

func (q *countingSender) Send(context.Context, queue.Message) error {
	q.mu.Lock()
	q.n++
	q.mu.Unlock()
	return nil
}

func (q *countingSender) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// countingWriter counts the bytes and lines the function logs.
type countingWriter struct {
	mu           sync.Mutex
	bytes, lines int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.bytes += int64(len(p))
	w.lines += int64(bytes.Count(p, []byte{'\n'}))
	w.mu.Unlock()
	return len(p), nil
}

func (w *countingWriter) reset() {
	w.mu.Lock()
	w.bytes, w.lines = 0, 0
	w.mu.Unlock()
}

func (w *countingWriter) totals() (int64, int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bytes, w.lines
}
