// Command bench measures Custody's governed MCP tools/call against two
// minimal MCP servers that do less: one on the official Go SDK
// (peer/gosdk, github.com/modelcontextprotocol/go-sdk v1.8.0) and one on
// github.com/mark3labs/mcp-go v1.2.1 (peer/mcpgo). Each peer serves one tool,
// get_matter({case_id}), from a Go map of three matters (internal/matters),
// with no authentication, rate limiting or audit. Custody's get_matter
// authenticates the bearer key, checks and counts the rate limit, reads the
// matter, its deadlines and notes, attests the answer and writes one audit
// row per call (docs/decisions.md "Pipeline choices"). The comparison is what
// that governance costs per call. `make bench` runs it through run.sh.
//
// This folder is its own Go module, so the peers' dependencies never enter
// Custody's module.
//
// # What is measured, and how
//
// Every server runs alone, pinned to one CPU (-server-cpu, 0): bench sets
// the affinity of the thread it forks the server from, which the child
// inherits — what `taskset -c 0` does, without taskset's own exec (0.75 ms
// on the reference machine) inside the start-up time. The server's
// Cpus_allowed_list is checked before load; its Go runtime therefore starts
// with GOMAXPROCS=1 (GOMAXPROCS, GOGC, GOMEMLIMIT and GODEBUG are removed
// from its environment so every server has the runtime's defaults — which
// Custody's dev server then raises to 2 processors on its one CPU, so that
// requests run while its writer syncs; -server-env GOMAXPROCS=1 keeps it at
// one for a like-for-like run —, and
// STORE_ENGINE and DYNAMODB_* so Custody runs on its default embedded file
// store; -server-env adds variables back for an experiment). A
// server runs in its own process group and dies with the bench
// (Pdeathsig). run.sh runs bench itself under `taskset -c 1`, so the load
// never competes with the server for its core.
//
// Load. One net/http client (HTTP/1.1 keep-alive, a pooled connection per
// worker) is shared by all workers. For each concurrency level (-levels,
// 1,8,64) N workers each open their own MCP session — initialize, then
// notifications/initialized, before the clock starts, as N independent
// agents would — and call tools/call get_matter {"case_id": -case-id} back to
// back: -warmup (2 s) unmeasured, then -duration (10 s) measured. A call
// counts when it completes inside the measured window; its latency is from
// just before the request is built to its parsed answer. Sessions are ended
// with DELETE after each level. The requested protocol revision is
// 2025-11-25; the negotiated one is sent as MCP-Protocol-Version.
//
// custody-dynamodb runs Custody's dev server built with its DynamoDB engine
// (-tags dynamodb) on the minidyn emulator (cmd minidyn, the emulator of
// the DynamoDB engine's tests), which runs in a process of its own pinned to
// the load client's CPU (-client-cpu, 1): its work neither counts as the
// server's nor competes with it for the server's core. The emulator's CPU
// per call is read the same way and shown beside the server's ("emulator
// µs/call"); on AWS that work is DynamoDB's.
//
// The -2026 targets (custody-2026, go-sdk-2026) run the same server and the
// same call in the stateless 2026-07-28 revision: no initialize and no
// session; every tools/call carries params._meta (protocol version, empty
// client capabilities, client info) and the MCP-Protocol-Version, Mcp-Method
// and Mcp-Name headers. Their CPU per call beside the 2025 targets is what
// the new revision costs each server.
//
// Errors. Every failed call of a level is counted, warm-up included: a
// transport error, any status but 200, a JSON-RPC error, or a result with
// isError (Custody's refusal class is recorded, e.g. "isError RATE_LIMITED").
// Custody's bench key has a read-lane limit of 100 million per minute, far
// above the offered load, so it must show zero. Any error makes bench exit 1
// (unless -allow-errors) after printing the table.
//
// Server CPU per call. At the start and the end of the measured window
// bench reads the server's CPU time: the sum of the first field of
// /proc/PID/task/*/schedstat (nanoseconds on CPU, per thread), and, as a
// cross-check, utime+stime of /proc/PID/stat (clock ticks, `getconf CLK_TCK`).
// CPU per call is the schedstat delta divided by the calls counted in the
// window; a disagreement of the two beyond 5 % + 2 ticks is noted. It
// includes everything the process does: HTTP, JSON, the SDK or pipeline,
// garbage collection, and for Custody its embedded store's writes.
//
// Noise. The machine may be shared, so bench also reads the server CPU's
// line of /proc/stat at both ends of the window: the share of that CPU busy
// beyond the server's own use is "other load on CPU %" (kernel work done
// for the server outside its own threads, such as disk writeback, counts
// there too), and its iowait share is recorded. Above 5 % the level is
// noted as noisy. Throughput and latency suffer from other load far more
// than CPU per call does.
//
// Peak RSS is VmHWM from /proc/PID/status after the last level. Binary size
// is the size of the `go build -trimpath` output. Start-up is the time from
// just before fork/exec to the first answered initialize, polling a fresh
// connection every 0.1 ms until the server answers; the median of -starts
// (11) starts is reported. Custody is started on a data folder that has
// already been seeded (see below), so seeding is excluded; its target is
// 5 ms.
//
// Custody's setup. bench starts Custody once on an empty data folder (the
// first start seeds the demo firm), mints the bench key while it runs with
// `custodyctl keys mint --owner p_dana_whitfield --scopes "read docs:read"
// --rate-read 100000000 --label bench` through its loopback admin endpoint,
// and stops it. Every measured start, and the long-running process the
// levels use, then opens the same seeded, keyed folder, and no admin
// traffic reaches the measured process. On DynamoDB the server leaves no
// admin address (custodyctl goes to the table), so setup waits for its
// listener instead, which it opens once the firm is seeded.
//
// # The cost model
//
// The cost target (last by default; -targets cost runs it alone) prices a
// million calls per front door and call type (docs/decisions.md "The cost
// model"). It starts the minidyn emulator on the client's CPU and runs
// BenchmarkCallCost from functions/mcp's test binary (bin/mcp.test, built by
// run.sh; -cost-calls timed calls per door and call, 300) pinned to the
// server's CPU, in functions/mcp's folder of -repo. The benchmark sends each
// door's events through the function as the Lambda runtime would and
// measures: the DynamoDB requests of a call and the read and write request
// units their items' sizes consume (dynamotest.Meter), the function's CPU
// time and log bytes per call, and the answer's size. cost.go multiplies
// those by the prices of -prices (prices.json: us-east-1 list prices with
// their date and sources; assumptions beside them, such as DynamoDB's
// round-trip time, which the loopback emulator cannot show): the front
// door's request fee, Lambda's request and its billed duration (the CPU
// time stretched by 1769 MB / MemorySize from template.yaml, plus each
// DynamoDB round trip, rounded up to the millisecond), DynamoDB's units,
// CloudWatch Logs' ingestion; the answers' data transfer out is shown beside
// the total. The table follows the CPU table, with the arithmetic of every
// get_matter and the verdict on the target (≤ $2.00 per million governed
// get_matter calls behind the function URL, all-in).
//
// # Peer configuration
//
// Both peers use their SDK's defaults except where noted, and the same
// net/http server (internal/peerhttp). The Go SDK peer answers POSTs with
// application/json (StreamableHTTPOptions.JSONResponse) rather than its
// default one-event text/event-stream: on the reference machine JSON took
// 157–228 µs of CPU per call against 162–263 µs for SSE (3–13 % less, at
// every level), and it is the framing Custody and mcp-go use. Its typed
// AddTool validates input and output against their schemas, as Custody
// does. The mcp-go peer uses server.WithStateful so session ids are tracked
// and checked (its default only checks their format); its schema
// validation is off, its default. Both return structuredContent plus the
// same JSON as a text block.
//
// # Output
//
// One table, a column per server: for each level calls/s, p50, p99 and max
// latency in ms, server CPU µs per call, errors and other load on the
// server's CPU; then start-up median, binary size, peak RSS and the size of
// one get_matter response; then Custody against its targets (CPU per call
// no higher than the Go SDK's; start-up within 5 ms; on DynamoDB at most
// 1 ms of CPU per call at c=8). -json writes
// everything for later comparison, with per level also p90 and p99.9, a
// latency histogram, a per-second timeline (calls, max latency), the
// server's CPU utilisation, the CPU's busy and iowait shares, both CPU
// readings and error kinds and samples; -text writes the table. run.sh
// keeps both in scripts/bench/results/ (git-ignored), latest.* being the
// last run.
//
// Usage (run.sh builds the binaries and passes these):
//
//	taskset -c 1 bench -bin DIR -work DIR [-targets go-sdk,mcp-go,custody,go-sdk-2026,custody-2026,custody-dynamodb,cost]
//	    [-prices prices.json] [-repo ../..] [-cost-calls 300]
//	    [-levels 1,8,64] [-warmup 2s] [-duration 10s] [-starts 11]
//	    [-server-cpu 0] [-client-cpu 1] [-case-id m_meridian] [-server-env K=V]...
//	    [-json FILE] [-text FILE] [-allow-errors]
package main
