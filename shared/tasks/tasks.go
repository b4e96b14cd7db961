// Package tasks is Custody's durable tasks (docs/protocol.md "Tasks"), in
// two dialects on the same rows: the 2025-11-25 core (MCP
// basic/utilities/tasks) and the 2026-07-28 tasks extension
// io.modelcontextprotocol/tasks (ext2026.go). A tools/call that becomes a
// task answers at once with it, the tool runs in a worker that any process
// may host, and a sweeper finishes honestly whatever a dead process left
// behind. No state of a task lives in a process: it is one row in the
// store, under the credential that created it, and it keeps the revision
// that created it: its dialect.
//
// # The row and its states
//
// A task is the row T#<tenant>#CRED#<credential-id> / TASK#<id>
// (keyspace "task"), with its large payloads in parts beside it
// (TASKPART#…) and its questions to the client (TASKREQ#…). The stored
// status is one of
//
//	queued → running → completed | failed        (a result, or a JSON-RPC error)
//	           │  ↑ (lease lapsed: the sweeper re-enqueues, up to the attempt limit)
//	           ↓  │
//	      input_required → queued (the client answered) …
//	any open state → cancelled (tasks/cancel)
//
// and every transition is one conditional write on the row, so that of
// two writers racing only one moves it: a claim expects queued, the
// worker's renewals and its outcome expect running under its own lease, a
// cancellation expects the row still open. Terminal states never change: a
// late completion meets a cancelled row and writes nothing. The outcome is
// stored with its kind, "result" (the exact CallToolResult, isError or
// not) or "rpc_error" (the exact JSON-RPC error), so each dialect derives
// its own status: queued and running are working in both; a result with
// isError is failed in 2025-11-25 and completed in the extension, whose
// failed is only an rpc_error (Row.WireStatus, Row.WireStatus2026).
//
// # Who writes what
//
//   - Create (a tools/call with params.task in 2025-11-25; in 2026-07-28
//     any call of a task tool whose request declares the extension): the
//     row, in the request's one transaction with its rate count and audit
//     row; the task is answered after that commit, so tasks/get finds the
//     row at once. The
//     queue send follows the commit (an mcp.Effect); if the process dies in
//     between, the sweeper's queued-unclaimed rule sends it again.
//   - The worker (Handle, a queue.Handler): claims the row, re-admits the
//     creating credential (gate.Readmit: a revoked key fails the task with
//     a reason), runs the tool through the invocation core
//     (tools.Registry.Call) under an execution cap, renews its lease while
//     the tool runs, and stores the outcome with the terminal audit row.
//     It never charges the rate limit.
//   - The task methods (Install): tasks/get, tasks/list, tasks/result and
//     tasks/cancel (2025-11-25), tasks/get, tasks/update and tasks/cancel
//     (the extension), each reading under the caller's own credential, so a
//     second key of the same owner sees none of the first's tasks; an
//     unknown, foreign or purged id is the same -32602.
//   - The sweeper (Duties): lapsed leases, queued tasks nobody claimed, and
//     tasks past their ttl, each found through the sweeper index and acted
//     on with a conditional write.
//
// Input during a task: a tool asks through mcp.Peer as everywhere; in the
// worker the Peer answers from the task's stored answers or records the
// question and ends the run (mcp.ErrInputRequired), and the worker stores
// the questions and sets input_required. tasks/result sends them to the
// client with the related-task _meta, parked as rows bound to the task
// (not to the session); the client's answer, on any instance and in any
// session of the same credential, resolves its row, and once every
// question of the round is answered the task is queued again with the
// answers. In the extension the questions are the inputRequests of
// tasks/get, answered by tasks/update into the row itself (ext2026.go). The
// same tool, called synchronously in the 2026-07-28 era, asks through the
// same Peer with multi-round-trip requests.
package tasks

import (
	"context"
	"log/slog"
	"time"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/gate"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/tools"
)

// The time and size constants of tasks (docs/decisions.md "Time and size
// constants"; each is an Options field).
const (
	// DefaultLease is how long a claim holds a running task: past it
	// without a renewal the sweeper takes the worker for dead.
	DefaultLease = 60 * time.Second
	// DefaultRenewEvery is how often a running worker renews its lease: a
	// third of the lease, so two renewals may fail before it lapses.
	DefaultRenewEvery = 20 * time.Second
	// DefaultAttemptLimit is how many claims a task gets: after that many
	// workers stopped without finishing it, the sweeper fails it.
	DefaultAttemptLimit = 3
	// DefaultExecutionCap bounds one run of a tool; a worker whose host
	// ends sooner (a Lambda deadline) stops ExecutionMargin before that.
	DefaultExecutionCap = 10 * time.Minute
	// ExecutionMargin is the time kept between the cap and the host's
	// deadline, to store the outcome.
	ExecutionMargin = 30 * time.Second
	// DefaultTTL is a task's lifetime from its creation when the request
	// names none; MaxTTL the most a request may ask for.
	DefaultTTL = time.Hour
	MaxTTL     = 24 * time.Hour
	// DefaultPollInterval is the pollInterval suggested to clients.
	DefaultPollInterval = time.Second
	// DefaultUnclaimedAfter is how long a queued task may wait for a
	// worker before the sweeper sends its message again.
	DefaultUnclaimedAfter = 2 * time.Minute
	// ResultMargin is kept before the tasks/result request's deadline: the
	// "still running, retry" answer must reach the client in time.
	ResultMargin = 30 * time.Second
	// DefaultResultWait bounds one tasks/result when its request has no
	// deadline of its own (the dev server): below the 15-minute Lambda
	// and API Gateway limits on AWS, where the request's deadline rules.
	DefaultResultWait = 14 * time.Minute
	// PurgeGrace is how long after its ttl a task row expires in the
	// engine if no sweep deleted it first (the sweeper deletes it, with its
	// parts and questions, at the ttl).
	PurgeGrace = 24 * time.Hour
)

// Options configure a Service. Zero values take the documented defaults.
type Options struct {
	Store store.Store
	Tools *tools.Registry
	// Gate re-admits the creating credential (gate.Gate.Readmit).
	Gate *gate.Gate
	// Queue receives a message per task to run (and per re-enqueue).
	Queue queue.Sender
	// Funnel judges again, when a stored result is returned, whether the
	// caller still reaches the task's matter (nil: the stored result is
	// returned as it is).
	Funnel  MatterFunnel
	Cursors *mcp.CursorSealer
	Logger  *slog.Logger
	// Now is the clock of rows and sweeps; nil means time.Now.
	Now func() time.Time

	Lease, RenewEvery time.Duration
	AttemptLimit      int
	ExecutionCap      time.Duration
	DefaultTTL        time.Duration
	MaxTTL            time.Duration
	PollInterval      time.Duration
	UnclaimedAfter    time.Duration
	// ResultPollMin and ResultPollMax bound the backoff of tasks/result
	// polling its row (0: 100 ms and 1 s); Heartbeat is its SSE comment
	// interval (0: 15 s); ResultWait its longest wait without a request
	// deadline (0: DefaultResultWait).
	ResultPollMin, ResultPollMax time.Duration
	Heartbeat                    time.Duration
	ResultWait                   time.Duration
	// ProgressEvery is the least time between two progress writes of a
	// running task (0: 1 s).
	ProgressEvery time.Duration
	// PageSize is the tasks/list page size (0: 50).
	PageSize int
	// AuditRetention is the audit rows' TTL (0: gate.DefaultAuditRetention).
	AuditRetention time.Duration
}

// MatterFunnel is the access funnel as tasks/result uses it
// (access.Funnel satisfies it).
type MatterFunnel interface {
	Matter(ctx context.Context, who access.Who, caseID string) (records.Matter, error)
}

// Service is the tasks of one composition.
type Service struct {
	opts Options
	log  *slog.Logger
}

// New returns the service over opts' store, registry, gate and queue.
func New(opts Options) *Service {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&opts.Lease, DefaultLease)
	def(&opts.RenewEvery, DefaultRenewEvery)
	def(&opts.ExecutionCap, DefaultExecutionCap)
	def(&opts.DefaultTTL, DefaultTTL)
	def(&opts.MaxTTL, MaxTTL)
	def(&opts.PollInterval, DefaultPollInterval)
	def(&opts.UnclaimedAfter, DefaultUnclaimedAfter)
	def(&opts.ResultPollMin, 100*time.Millisecond)
	def(&opts.ResultPollMax, time.Second)
	def(&opts.Heartbeat, 15*time.Second)
	def(&opts.ResultWait, DefaultResultWait)
	def(&opts.ProgressEvery, time.Second)
	def(&opts.AuditRetention, gate.DefaultAuditRetention)
	if opts.AttemptLimit <= 0 {
		opts.AttemptLimit = DefaultAttemptLimit
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 50
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{opts: opts, log: opts.Logger}
}

var _ tools.Tasks = (*Service)(nil)

// Capability is the tasks capability the service serves.
func Capability() *mcp.TasksCapability { return mcp.ServedTasks() }
