// Package tools is Custody's tool registry and the governed call pipeline.
//
// A tool is one Go input type, one Go output type and a handler. The input
// type is the single schema source: inferred once, on first use (Check
// builds every tool's at once), it is both what tools/list advertises and
// what arguments are validated against.
// The output schema is inferred from the output type and relaxed so a
// refusal ({"error": {...}}) validates too.
//
// tools/call runs the request path of docs/architecture.md from step 3 on:
// kill switch, tool resolution and its scope (a tool the credential's scopes
// do not allow is absent from tools/list and "unknown" to tools/call), the
// credential class (a Spec.StandardOnly tool is absent from a client-safe
// credential's tools/list and refused CLIENT_SAFE_REFUSED when called),
// argument validation (nothing written on failure), the rate-limit verdict
// the gate decided before execution, the access funnel for any case_id, and
// then the handler, which applies the credential-class floor and stamps the
// attestation. Every outcome is one audit row (the gate writes it); every
// result carries _meta.ms.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"slices"
	"sync"
	"time"

	validator "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/autonomy"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
)

// Spec describes a tool.
type Spec struct {
	Name        string
	Title       string
	Description string
	// Scope is the scope a credential needs to see and call the tool.
	Scope auth.Scope
	// Lane is the rate-limit lane ("" means read).
	Lane ratelimit.Lane
	// Requires lists client capabilities the tool cannot work without
	// ("sampling", "elicitation"): a 2026-era request that does not declare
	// them is refused -32021 before the tool runs; a 2025 session without
	// them gets a VALIDATION refusal.
	Requires []string
	// StandardOnly marks a tool the client-safe credential class may never
	// call: it is absent from a client-safe credential's tools/list, as a
	// tool its scopes do not allow is, and a call of it is refused
	// CLIENT_SAFE_REFUSED before its arguments are looked at — the one use
	// of that class (docs/contracts.md §3). A read tool is never StandardOnly: it
	// filters what the class may not see instead.
	StandardOnly bool
	// Write marks a governed write (docs/contracts.md §4): its lane is the
	// write budget (ratelimit.LaneWrite), it is StandardOnly (a client-safe
	// credential never writes), it is refused inside a JSON-RPC batch, and
	// every answer is a Decision: its handler's output type must be
	// Decision, and each refusal, the pipeline's included, is the denied
	// decision (decision.go).
	Write bool
	// TaskSupport says whether the tool runs as a task (MCP 2025-11-25
	// execution.taskSupport; in the 2026-07-28 era, whether the server makes
	// a call of it a task for a client that declared the tasks extension):
	// "" or TaskForbidden (the default), or TaskOptional, or TaskRequired —
	// a required tool is hidden from clients whose revision has no tasks
	// (tasks.go). Write tools are forbidden (docs/decisions.md "Pipeline
	// choices").
	TaskSupport TaskSupport
	// BeforeTask, for a tool that runs as a task, is the part of its call
	// that runs in the request before the task is created, where it may ask
	// the client (tasks.go); nil: the task is created at once.
	BeforeTask BeforeTask
	// Prefetch, for a write tool, names rows of its own — an idempotency
	// row, a counter, a target — to read before its handler runs, in the
	// same one batch as its matter and autonomy settings (the write step,
	// docs/architecture.md step 9; docs/decisions.md, the round trips of
	// the write paths); the handler finds them in Call.Prefetched, aligned
	// with the keys. The keys must be distinct, not the matter's, and with
	// the matter and autonomy rows within store.MaxBatchGetKeys. It runs
	// after validation and before any read, with in a pointer to the
	// decoded input, which it may refine (the handler then receives it);
	// a *Refusal it returns is answered as is.
	Prefetch func(c *Call, in any) ([]store.Key, error)
	// AutonomyNames, for a write tool, names the autonomy settings its call
	// obeys beyond its tool's own (propose_action: the action it files;
	// docs/decisions.md "Autonomy"); in is a pointer to the decoded input.
	AutonomyNames func(in any) []string
	// AtMostOnce marks a tool with effects that must happen at most once:
	// in the 2026 era its request state's round is claimed with a
	// conditional write before it runs, so a replay is refused CONFLICT.
	AtMostOnce bool
	// ReportsSpent marks a tool that spends an upload grant
	// (begin_upload_session, complete_upload): every refusal of it carries
	// spent, the grant's state after the call (docs/contracts.md §3). A
	// refusal the pipeline decides before the tool reads its grant
	// (validation, rate limit, kill switch) says false: the call spent
	// nothing, and it does not tell the state of a grant it did not read.
	ReportsSpent bool
	Annotations  mcp.ToolAnnotations
	// InputSchema, when set, is the tool's input schema verbatim: a JSON
	// object with "type":"object" that tools/list advertises as given (only
	// compacted) and arguments are validated against, instead of the schema
	// inferred from the input type, which then only decodes the arguments
	// (map[string]any fits any schema). For schemas the Go type cannot
	// express, such as the conformance suite's JSON Schema 2020-12 fixture
	// ($defs, $anchor, $ref, allOf/anyOf, if/then/else). Nil: inferred.
	InputSchema json.RawMessage
}

// MatterScoped is implemented by inputs that name a matter; the pipeline
// resolves MatterID through the access funnel before the handler runs. An
// input whose matter is optional returns "" when none is named (its handler
// then works across the matters the funnel lists).
type MatterScoped interface{ MatterID() string }

// Call is what a handler knows about the call it serves.
type Call struct {
	Credential *auth.Credential
	// Also is the second credential of an intersected call
	// (Invocation.Also), nil otherwise.
	Also *auth.Credential
	// Who is the caller as the access funnel sees it.
	Who access.Who
	// Matter is the matter the input names, resolved through the funnel
	// (the zero Matter when the input names none).
	Matter   records.Matter
	Now      time.Time
	Revision mcp.Revision
	Funnel   access.Funnel
	// Peer is the client end of the call: log, report progress, ask for
	// input (elicitation, sampling) in either era.
	Peer mcp.Peer

	// The write step (docs/architecture.md "The request path", step 9), for
	// a write tool (Spec.Write) only: its matter, its autonomy settings and
	// the rows Spec.Prefetch names are read in one batch.
	//
	// MatterVersion is the matter row's version (0 when no matter is
	// named). Autonomy is the level the call runs at (autonomy.Resolve of
	// the tool's setting and Spec.AutonomyNames); an L0 call never
	// reaches its handler. Prefetched are the rows Spec.Prefetch
	// named, aligned with its keys, nil where absent.
	MatterVersion int64
	Autonomy      autonomy.Level
	Prefetched    []*store.Item

	write   *Write
	matters []string // reported by ReportMatter
	replay  bool     // set by Replayed
}

// Replayed marks a governed write answered with its original receipt
// without writing (the receipt read from its row): the audit outcome is
// "ok:replay", as for a replay settled on the conflict path.
func (c *Call) Replayed() { c.replay = true }

// ReportMatter records that the answer contains rows of the matter id, so
// the call's audit row is indexed under it (audit.Record.Matters: "who read
// this matter" stays complete for answers across matters). The pipeline
// reports the matter the input names itself, once the handler succeeded; a
// handler that answers from other matters (list_matters, search_documents
// without case_id) reports each of them. A report of a refused call is
// dropped: its answer contains no rows.
func (c *Call) ReportMatter(id string) { c.matters = append(c.matters, id) }

// ClientSafe reports whether the call is of the client-safe class: its
// credential's, or either credential's of an intersected call.
func (c *Call) ClientSafe() bool {
	return c.Who.ClientSafe || (c.Also != nil && c.Also.ClientSafe())
}

// Write is a handler's conditional write (issue 9, "answers after the
// write"): its ops are committed in the call's one transaction with the
// rate count and the audit row, and the handler's answer stands only once
// they are written.
type Write struct {
	Ops []store.Op
	// Conflict answers when a condition of Ops failed (failed indexes Ops)
	// and nothing was written: the answer to give instead — it may read,
	// such as the original receipt of a replayed call, reported with
	// replay true (audit outcome "ok:replay") — or an error (a *Refusal
	// such as CONFLICT). Nil answers CONFLICT.
	Conflict func(ctx context.Context, failed int) (out any, replay bool, err error)
	// After are the effects that must follow the commit (a queue send),
	// each naming its recovery path.
	After []mcp.Effect
	// Answer, when set, gives the call's answer after a successful commit,
	// replacing the handler's: a write that answers from the row it reads
	// back (propose_action). Its error is answered as the handler's would
	// be (a *Refusal as is). The audit row, committed by then, keeps the
	// outcome of the commit.
	Answer func(ctx context.Context) (any, error)
	// Replay marks an answer that repeats an earlier call's receipt
	// without writing anything of its own: the audit outcome is
	// "ok:replay".
	Replay bool
}

// Write hands the call's writes to the invocation core; a handler calls it
// at most once, before it returns its answer.
func (c *Call) Write(w Write) { c.write = &w }

// Sees reports whether the credential may see material of privilege p: a
// client-safe credential sees only privilege "none" (docs/architecture.md step 8;
// the rule is access.Who.Sees, the funnel's).
func (c *Call) Sees(p records.Privilege) bool { return c.Who.Sees(p) }

// Handler serves one tool.
type Handler[In, Out any] func(ctx context.Context, c *Call, in In) (Out, error)

type tool struct {
	spec Spec
	run  func(ctx context.Context, c *Call, args json.RawMessage) (any, *Refusal)

	inType  reflect.Type // the handler's input type
	outType reflect.Type // the handler's output type; nil for a Raw tool

	// Built on first use (prepare): inferring and encoding schemas and
	// compiling a validator cost about a millisecond for the read tools,
	// which a server pays at its first tools/list or call rather than at
	// start. Check builds them all at once.
	once      sync.Once
	prepErr   error
	in        json.RawMessage   // set at Register for a verbatim schema
	headers   map[string]string // x-mcp-header: property → Mcp-Param-* suffix
	wire      mcp.Tool
	strict    json.RawMessage
	validator *validator.Schema
}

// prepare builds the tool's schemas, advertised definition and validator
// once; later calls return the first call's error.
func (r *Registry) prepare(t *tool) error {
	t.once.Do(func() {
		if t.in == nil {
			in, err := inputSchemaOf(t.spec, t.inType)
			if err != nil {
				t.prepErr = fmt.Errorf("tool %q: %w", t.spec.Name, err)
				return
			}
			t.in = in
		}
		var outJSON json.RawMessage
		if t.outType != nil {
			out, err := inferSchema(t.outType)
			if err != nil {
				t.prepErr = fmt.Errorf("tool %q: output schema: %w", t.spec.Name, err)
				return
			}
			if t.strict, err = json.Marshal(out); err == nil {
				outJSON, err = json.Marshal(outputSchema(out))
			}
			if err != nil {
				t.prepErr = fmt.Errorf("tool %q: encode output schema: %w", t.spec.Name, err)
				return
			}
		}
		if t.headers, t.prepErr = headerParams(t.in); t.prepErr != nil {
			t.prepErr = fmt.Errorf("tool %q: %w", t.spec.Name, t.prepErr)
			return
		}
		r.compileMu.Lock()
		v, err := compile(r.compiler, t.spec.Name, t.in)
		r.compileMu.Unlock()
		if err != nil {
			t.prepErr = fmt.Errorf("tool %q: compile input schema: %w", t.spec.Name, err)
			return
		}
		ann := t.spec.Annotations
		ann.Title = t.spec.Title
		t.validator = v
		t.wire = mcp.Tool{
			Name: t.spec.Name, Title: t.spec.Title, Description: t.spec.Description,
			InputSchema: t.in, OutputSchema: outJSON, Annotations: &ann,
		}
		if t.spec.TaskSupport.runsAsTask() {
			t.wire.Execution = &mcp.ToolExecution{TaskSupport: string(t.spec.TaskSupport)}
		}
	})
	return t.prepErr
}

// Check prepares every tool and returns the first failure: a server's tests
// call it so that no schema problem waits for a first call.
func (r *Registry) Check() error {
	for _, n := range r.Names() {
		if err := r.prepare(r.tools[n]); err != nil {
			return err
		}
	}
	return nil
}

// KillSwitch turns off tools or whole tenants from configuration: a frozen
// tenant or disabled tool produces nothing (docs/architecture.md step 3). It is
// configuration, not a store row, so it costs no round trip.
type KillSwitch struct {
	FrozenTenants map[string]bool
	DisabledTools map[string]bool
}

// Options configure a Registry.
type Options struct {
	Funnel  access.Funnel
	Cursors *mcp.CursorSealer
	// PageSize is the tools/list page size; 0 means 50.
	PageSize   int
	KillSwitch KillSwitch
	Logger     *slog.Logger
	// Store is read by the write step of a write tool whose input names no
	// matter (its autonomy settings); tools that name a matter read
	// through the Funnel.
	Store store.Store
}

// Registry holds the tools and serves tools/list and tools/call.
type Registry struct {
	opts      Options
	tasks     Tasks // nil until ServeTasks: no call runs as a task
	tools     map[string]*tool
	compiler  *validator.Compiler
	compileMu sync.Mutex // a Compiler is not safe for concurrent use
	// scratch holds *bytes.Buffer reused to encode results (encode).
	scratch sync.Pool
}

// NewRegistry returns an empty registry.
func NewRegistry(opts Options) *Registry {
	if opts.PageSize <= 0 {
		opts.PageSize = 50
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Registry{opts: opts, tools: map[string]*tool{}, compiler: newCompiler()}
}

// Register adds a tool. It fails when the spec is incomplete, the name is
// taken, or a verbatim input schema is malformed. Schemas inferred from In
// and Out are built on first use; Check builds every one, so a type no
// schema can be inferred from fails the server's tests rather than a call.
func Register[In, Out any](r *Registry, spec Spec, h Handler[In, Out]) error {
	if spec.Name == "" || spec.Title == "" || spec.Description == "" || spec.Scope == "" {
		return fmt.Errorf("register tool %q: name, title, description and scope are required", spec.Name)
	}
	if _, dup := r.tools[spec.Name]; dup {
		return fmt.Errorf("register tool %q: already registered", spec.Name)
	}
	switch spec.TaskSupport {
	case "", TaskForbidden, TaskOptional, TaskRequired:
	default:
		return fmt.Errorf("register tool %q: taskSupport %q is not forbidden, optional or required", spec.Name, spec.TaskSupport)
	}
	if spec.Write && spec.TaskSupport.runsAsTask() {
		return fmt.Errorf("register tool %q: a write tool never runs as a task", spec.Name)
	}
	if spec.BeforeTask != nil && !spec.TaskSupport.runsAsTask() {
		return fmt.Errorf("register tool %q: BeforeTask is for a tool that runs as a task", spec.Name)
	}
	if spec.Write {
		if reflect.TypeFor[Out]() != reflect.TypeFor[Decision]() {
			return fmt.Errorf("register tool %q: a write tool answers a tools.Decision", spec.Name)
		}
		spec.Lane, spec.StandardOnly = ratelimit.LaneWrite, true
	}
	if spec.Lane == "" {
		spec.Lane = ratelimit.LaneRead
	}
	t := &tool{spec: spec, inType: reflect.TypeFor[In]()}
	if reflect.TypeFor[Out]() != reflect.TypeFor[Raw]() {
		t.outType = reflect.TypeFor[Out]()
	}
	if spec.InputSchema != nil {
		// A verbatim schema is checked now: it is data, not a type.
		if err := r.prepare(t); err != nil {
			return fmt.Errorf("register %w", err)
		}
	}
	t.run = func(ctx context.Context, c *Call, args json.RawMessage) (any, *Refusal) {
		var input In
		if field, err := decodeArgs(args, &input); err != nil {
			if field != "" {
				return nil, Invalid(field, fmt.Sprintf("The field '%s' does not fit this tool's input type.", field))
			}
			return nil, Invalid("", "The arguments do not match this tool's input schema.")
		}
		if spec.Write {
			if ref := r.writeStep(ctx, c, spec, &input); ref != nil {
				return nil, ref
			}
		} else if ms, ok := any(input).(MatterScoped); ok && ms.MatterID() != "" {
			m, err := c.Funnel.Matter(ctx, c.Who, ms.MatterID())
			if err == nil && c.Also != nil {
				// An intersected call reaches a matter only when both do.
				_, err = c.Funnel.Matter(ctx, access.WhoOf(c.Also), ms.MatterID())
			}
			if err != nil {
				return nil, r.refusalFor(ctx, spec.Name, err)
			}
			c.Matter = m
		}
		out, err := h(ctx, c, input)
		if err != nil {
			return nil, r.refusalFor(ctx, spec.Name, err)
		}
		return out, nil
	}
	r.tools[spec.Name] = t
	return nil
}

// MustRegister is Register for tool sets built at start; it panics on error.
func MustRegister[In, Out any](r *Registry, spec Spec, h Handler[In, Out]) {
	if err := Register(r, spec, h); err != nil {
		panic(err)
	}
}

// refusalFor maps a handler error to a refusal: refusals pass through, the
// funnel's answers (no such matter, document, fact: absent and withheld
// alike) become NOT_FOUND with one fixed sentence each, store faults
// UNAVAILABLE, anything else INTERNAL (logged here, never shown).
func (r *Registry) refusalFor(ctx context.Context, name string, err error) *Refusal {
	var (
		ref  *Refusal
		perr *mcp.Error
	)
	switch {
	case errors.As(err, &ref):
		return ref
	case errors.Is(err, mcp.ErrAskCancelled), errors.Is(err, context.Canceled):
		return cancelled
	case errors.Is(err, mcp.ErrInputRequired):
		return inputRequired
	case errors.As(err, &perr):
		return &Refusal{Class: classProtocol, protocol: perr}
	case errors.Is(err, mcp.ErrNoStream), errors.Is(err, mcp.ErrNotDeclared):
		return Refuse(ClassValidation, msgCannotAsk)
	case errors.Is(err, mcp.ErrAskExpired):
		return Refuse(ClassUnavailable, msgAskExpired)
	case errors.Is(err, access.ErrNoMatter):
		return Refuse(ClassNotFound, msgNoMatter)
	case errors.Is(err, access.ErrNoDocument):
		return Refuse(ClassNotFound, msgNoDocument)
	case errors.Is(err, access.ErrNoFact):
		return Refuse(ClassNotFound, msgNoFact)
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		r.opts.Logger.WarnContext(ctx, "tool read failed", "tool", name, "err", err)
		return Refuse(ClassUnavailable, msgUnavailable)
	default:
		r.opts.Logger.ErrorContext(ctx, "tool failed", "tool", name, "err", err)
		return Refuse(ClassInternal, msgInternal)
	}
}

// Install registers tools/list and tools/call on the server.
func (r *Registry) Install(s *mcp.Server) {
	s.Register("tools/list", mcp.Method{Handler: r.list, Cacheable: true})
	s.Register("tools/call", mcp.Method{Handler: r.call, NameParam: "name", MayAsk: true,
		Lane: r.lane, RatesItself: true, RateLimited: r.rateLimited, ParamHeaders: r.paramHeaders})
}

// Names returns every registered tool name, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.tools))
	for n := range r.tools {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Tool returns a registered tool's definition.
func (r *Registry) Tool(name string) (mcp.Tool, bool) {
	t, ok := r.tools[name]
	if !ok || r.prepare(t) != nil {
		return mcp.Tool{}, false
	}
	return t.wire, true
}

// Spec returns a registered tool's spec.
func (r *Registry) Spec(name string) (Spec, bool) {
	t, ok := r.tools[name]
	if !ok {
		return Spec{}, false
	}
	return t.spec, true
}

// StrictSchema returns the success schema of a tool's output with every
// non-omitempty field required: the strict internal envelope schema that
// success results are tested against.
func (r *Registry) StrictSchema(name string) json.RawMessage {
	t := r.tools[name]
	if r.prepare(t) != nil {
		return nil
	}
	return t.strict
}

// visible returns the names of the tools the credential's scopes allow and
// its class may call, sorted.
func (r *Registry) visible(c *auth.Credential) []string {
	var names []string
	for n, t := range r.tools {
		if r.visibleTo(t, c) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// visibleTo reports whether a credential may see and call a tool: its
// scopes allow it, and it is not StandardOnly for a client-safe
// credential. A tool the credential may not see is absent from its
// tools/list; a scope it lacks makes the tool unknown to tools/call.
func (r *Registry) visibleTo(t *tool, c *auth.Credential) bool {
	return c.Has(t.spec.Scope) && !(t.spec.StandardOnly && c.ClientSafe())
}

// paramHeaders are the Mcp-Param-* headers a 2026-era tools/call of the
// named tool must carry: one per argument its input schema annotates with
// x-mcp-header (SEP-2243), with the argument's value in the body.
func (r *Registry) paramHeaders(p *mcp.Params) []mcp.ParamHeader {
	name, _ := p.String("name")
	t, ok := r.tools[name]
	if !ok || r.prepare(t) != nil || len(t.headers) == 0 {
		return nil
	}
	out := make([]mcp.ParamHeader, 0, len(t.headers))
	for prop, suffix := range t.headers {
		out = append(out, mcp.ParamHeaderOf(suffix, p, prop))
	}
	return out
}

// lane is tools/call's rate lane: the named tool's.
func (r *Registry) lane(p *mcp.Params) ratelimit.Lane {
	if name, ok := p.String("name"); ok {
		if t, ok := r.tools[name]; ok {
			return t.spec.Lane
		}
	}
	return ratelimit.LaneRead
}

// list serves tools/list: the tools the credential's scopes allow, paged
// with sealed cursors (docs/contracts.md §2).
func (r *Registry) list(_ context.Context, req *mcp.Request) (any, error) {
	names := r.listed(req)
	start, end, next, err := r.opts.Cursors.PageRequest(req, names, r.opts.PageSize)
	if err != nil {
		return nil, err
	}
	res := mcp.ListToolsResult{Tools: make([]mcp.Tool, 0, end-start), NextCursor: next}
	for _, n := range names[start:end] {
		t := r.tools[n]
		if err := r.prepare(t); err != nil {
			return nil, err
		}
		res.Tools = append(res.Tools, t.wire.ForRevision(req.Revision))
	}
	return res, nil
}

// call serves tools/call: a thin adapter from the request to the
// invocation core (Call); the call's writes join the request's commit and
// its answer is settled after it.
func (r *Registry) call(ctx context.Context, req *mcp.Request) (any, error) {
	name, ok := req.Params.String("name")
	switch {
	case !ok && req.Params.Get("name") != nil:
		return nil, mcp.InvalidParams("Invalid params: the field 'name' has the wrong type.")
	case name == "":
		return nil, mcp.InvalidParams("Invalid params: the tool name is required.")
	}
	if t, ok := r.tools[name]; ok && r.TasksServed(req) {
		// The task rules of the request's dialect (tasks.go) come before
		// anything runs.
		if res, err, handled := r.callTask(ctx, req, t); handled {
			return res, err
		}
	} else if ok && t.spec.TaskSupport == TaskRequired {
		return nil, mcp.InvalidParams("Unknown tool.") // hidden from this client (tasks.go)
	}
	out := r.Call(ctx, r.invocation(req, name, req.Params.Get("arguments")))
	if out.Err != nil {
		if errors.Is(out.Err, ErrUnknownTool) {
			return nil, mcp.InvalidParams("Unknown tool.")
		}
		return nil, out.Err
	}
	if w := out.Writes; w != nil {
		mw := mcp.Writes{Ops: w.Ops, After: w.After, OnConflict: func(ctx context.Context, failed int) (any, error) {
			o := w.Settle(ctx, failed)
			if o.Err != nil {
				return nil, o.Err
			}
			return o.Result.Encode()
		}}
		if w.Committed != nil {
			mw.OnCommit = func(ctx context.Context) (any, error) {
				o := w.Committed(ctx)
				if o.Err != nil {
					return nil, o.Err
				}
				return o.Result.Encode()
			}
		}
		req.Write(mw)
	}
	return out.Result.Encode()
}

// rateLimited is tools/call's rate refusal when the reservation fails at
// commit: the isError RATE_LIMITED result admission would have answered.
func (r *Registry) rateLimited(req *mcp.Request) any {
	name, _ := req.Params.String("name") // a write tool's refusal is its denied decision
	inv := r.invocation(req, name, nil)
	secs := max(1, req.Rate.RetryAfterSeconds())
	res, _ := r.refusalResult(&inv, &Refusal{Class: ClassRateLimited, Limit: req.Rate.Limit, RetryAfterS: secs,
		Message: fmt.Sprintf("Rate limit exceeded for this credential: retry after %d seconds.", secs)}).Encode()
	return res
}

// screen runs the steps of a call that need no store read, before its
// handler: the kill switch (3), the credential class and the client
// capabilities the tool needs (4), validation (5) with the audit row's tool
// fields, and the rate verdict (6). It returns the refusal, or nil when the
// call may run.
func (r *Registry) screen(ctx context.Context, inv *Invocation, t *tool, doc any) *Refusal {
	cred := inv.Credential
	if r.opts.KillSwitch.FrozenTenants[cred.Tenant] || r.opts.KillSwitch.DisabledTools[t.spec.Name] {
		return Refuse(ClassKillSwitch, msgKillSwitch)
	}
	if t.spec.StandardOnly && (cred.ClientSafe() || (inv.Also != nil && inv.Also.ClientSafe())) {
		return Refuse(ClassClientSafeRefused, msgClientSafeRefused)
	}
	peer := inv.Peer
	if peer == nil {
		peer = mcp.NoPeer{}
	}
	if missing := missingCapabilities(peer, t.spec.Requires); missing != nil {
		if inv.Revision == mcp.Rev20260728 {
			// Decided before anything runs (docs/protocol.md "body first", step 4).
			return &Refusal{Class: classProtocol, protocol: &mcp.Error{Code: mcp.CodeMissingRequiredCapability,
				Message: "This tool needs a client capability the request did not declare.",
				Data:    map[string]any{"requiredCapabilities": missing}}}
		}
		return Refuse(ClassValidation, msgCannotAsk)
	}
	if err := r.prepare(t); err != nil {
		r.opts.Logger.ErrorContext(ctx, "tool not prepared", "tool", t.spec.Name, "err", err)
		return Refuse(ClassInternal, msgInternal)
	}
	if err := t.validator.Validate(doc); err != nil {
		return validationRefusal(err)
	}
	if q := queryOf(doc); q != "" {
		inv.Audit.SetQuery(q)
	}
	if caseID, ok := doc.(map[string]any)["case_id"].(string); ok {
		inv.Audit.Matter = caseID
	}
	if !inv.Rate.Allowed {
		secs := inv.Rate.RetryAfterSeconds()
		return &Refusal{Class: ClassRateLimited, Limit: inv.Rate.Limit, RetryAfterS: secs,
			Message: fmt.Sprintf("Rate limit exceeded for this credential: retry after %d seconds.", secs)}
	}
	if t.spec.Write && inv.InBatch {
		return Refuse(ClassValidation, "Write tools are not accepted inside a JSON-RPC batch; send this call on its own.")
	}
	return nil
}

// govern runs steps 3 and 5–10 for a known tool the credential may call:
// the screen (kill switch, class, client capabilities, validation, the
// rate verdict), then the handler (funnel, class floor, attestation). It
// returns the handler's result and writes, or the refusal.
func (r *Registry) govern(ctx context.Context, inv *Invocation, t *tool, args json.RawMessage, doc any) (any, *Write, *Refusal) {
	if refusal := r.screen(ctx, inv, t, doc); refusal != nil {
		return nil, nil, refusal
	}
	peer := inv.Peer
	if peer == nil {
		peer = mcp.NoPeer{}
	}
	cred := inv.Credential
	c := &Call{
		Credential: cred, Also: inv.Also, Who: access.WhoOf(cred),
		Now: inv.Now, Revision: inv.Revision, Funnel: r.opts.Funnel, Peer: peer,
	}
	out, refusal := t.run(ctx, c, args)
	if refusal != nil {
		return nil, nil, refusal
	}
	inv.Audit.AddMatter(c.Matter.ID)
	inv.Audit.AddMatter(c.matters...)
	inv.replay = c.replay
	return out, c.write, nil
}

// queryOf returns the free-text "query" argument, if any: the audit row
// records its SHA-256 and length, never the text.
func queryOf(doc any) string {
	q, _ := doc.(map[string]any)["query"].(string)
	return q
}

// elapsedMs is the time since the request arrived, in milliseconds with
// microsecond precision (_meta.ms).
func elapsedMs(arrived time.Time) float64 {
	return math.Round(float64(time.Since(arrived).Microseconds())) / 1000
}

// Raw is the output of a tool that answers with content blocks of its own
// (the conformance fixtures: images, audio, embedded resources) instead of
// a structured envelope; such a tool declares no outputSchema.
type Raw struct {
	Content []mcp.Content
	IsError bool
}

// refusalResult shapes a refusal: isError, the sentence as text, and
// {"error": …} as structuredContent — for a write tool the denied decision
// {"status":"denied","executed":false,"error":…} — or, for revisions
// without structured output, as a second text block.
func (r *Registry) refusalResult(inv *Invocation, ref *Refusal) *mcp.CallToolResult {
	t, known := r.tools[inv.Name]
	if known && t.spec.ReportsSpent && ref.Spent == nil {
		spent := false
		cp := *ref
		cp.Spent = &spent
		ref = &cp
	}
	var body any = map[string]*Refusal{"error": ref}
	if known && t.spec.Write {
		body = Denied(ref)
	}
	res := &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{mcp.TextContent(ref.Message)},
		Meta:    map[string]any{"ms": elapsedMs(inv.Arrived)},
	}
	if inv.Revision.HasStructuredOutput() {
		res.StructuredContent = body
	} else {
		raw, _ := mcp.Marshal(body)
		res.Content = append(res.Content, mcp.TextContent(string(raw)))
	}
	return res
}

// missingCapabilities returns the client capabilities a tool requires that
// the request did not declare ({"sampling": {}}), or nil.
func missingCapabilities(peer mcp.Peer, required []string) map[string]any {
	if len(required) == 0 {
		return nil
	}
	var declared map[string]json.RawMessage
	_ = json.Unmarshal(peer.ClientCapabilities(), &declared)
	var missing map[string]any
	for _, c := range required {
		if declared[c] == nil {
			if missing == nil {
				missing = map[string]any{}
			}
			missing[c] = map[string]any{}
		}
	}
	return missing
}
