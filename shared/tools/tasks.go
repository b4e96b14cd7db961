package tools

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/custodymcp/custody/shared/mcp"
)

// TaskSupport is a tool's execution.taskSupport (MCP 2025-11-25
// basic/utilities/tasks §Tool-Level Negotiation).
type TaskSupport string

// Task support values. The zero value is TaskForbidden.
const (
	// TaskForbidden: the tool never runs as a task; a call with params.task
	// is -32601.
	TaskForbidden TaskSupport = "forbidden"
	// TaskOptional: the tool runs synchronously, or as a task when the call
	// asks with params.task.
	TaskOptional TaskSupport = "optional"
	// TaskRequired: the tool runs only as a task; a call without
	// params.task is -32601, and the tool is hidden (absent from tools/list,
	// "Unknown tool." to tools/call) from clients whose revision has no
	// tasks, since they could never call it.
	TaskRequired TaskSupport = "required"
)

// runsAsTask reports whether the tool may run as a task.
func (s TaskSupport) runsAsTask() bool { return s == TaskOptional || s == TaskRequired }

// Tasks serves task-augmented tools/call; package tasks implements it and
// the composition hands it to ServeTasks. The registry keeps the rules of
// the tool's taskSupport and screens the call first; Tasks keeps the task.
type Tasks interface {
	// Create starts the task of a screened call: the row's write joins
	// the request's one commit (mcp.Request.Write) with the queue send as
	// an effect after it, so the answer it returns is sent only once
	// tasks/get can read the row — a CreateTaskResult in 2025-11-25, the
	// flat resultType "task" result of the 2026-07-28 tasks extension.
	// inv.Audit is the request's audit row, the task's creation row.
	Create(ctx context.Context, req *mcp.Request, inv Invocation, task NewTask) (any, error)
}

// NewTask is what a screened call hands Tasks.Create beyond the
// invocation.
type NewTask struct {
	// TTL is params.task.ttl in milliseconds (2025-11-25), nil when absent
	// and always in the 2026 era, where the server alone decides.
	TTL *int64
	// Answers are the client's answers to the questions the tool asked
	// before its task was created (Spec.BeforeTask), by question key: the
	// task keeps them, and the tool's Peer.Ask returns them again in the
	// worker.
	Answers map[string]json.RawMessage
}

// BeforeTask is the part of a task tool's call that runs in the request,
// before its task is created: it may ask the client through p (in the
// 2026-07-28 era by multi-round-trip requests on tools/call itself, which
// then answers input_required until every question is answered; in a
// 2025-11-25 session on the call's stream), and returns nil when the task
// may be created, a *Refusal to answer instead, or the Peer's error. args
// are the validated arguments. The answers it received are handed to the
// task (NewTask.Answers): the tool asks the same questions again in the
// worker and gets them at once. The tasks extension asks exactly this of a
// tool that needs input to decide whether to proceed
// (modelcontextprotocol/ext-tasks, "Task Creation": MRTR exchanges are
// resolved synchronously before the CreateTaskResult).
type BeforeTask func(ctx context.Context, p mcp.Peer, args json.RawMessage) error

// ServeTasks makes task-augmented calls run through t. Until it is called
// no call runs as a task and required tools are hidden from everyone.
func (r *Registry) ServeTasks(t Tasks) { r.tasks = t }

// TasksServed reports whether req's client may run tools as tasks: tasks
// are served, and req is of the 2025-11-25 revision or of the 2026-07-28
// era (where a call becomes a task only for a request that declares the
// tasks extension: callTask2026).
func (r *Registry) TasksServed(req *mcp.Request) bool {
	return r.tasks != nil && (req.Era2026() || req.Revision.HasTasks())
}

// listed are the tools req's tools/list shows: those visible to its
// credential, less the required-task tools when its client cannot run
// tasks. A 2026-07-28 request sees them whether or not it declared the
// extension: its capabilities are per request, and the call that needs
// it is told so (-32021).
func (r *Registry) listed(req *mcp.Request) []string {
	names := r.visible(req.Credential)
	if r.TasksServed(req) {
		return names
	}
	return slices.DeleteFunc(names, func(n string) bool { return r.tools[n].spec.TaskSupport == TaskRequired })
}

// callTask applies the task rules of tools/call for a client that may run
// tasks. handled is false for a synchronous call, which the caller runs.
func (r *Registry) callTask(ctx context.Context, req *mcp.Request, t *tool) (result any, err error, handled bool) {
	if !req.Credential.Has(t.spec.Scope) {
		return nil, mcp.InvalidParams("Unknown tool."), true
	}
	if req.Era2026() {
		return r.callTask2026(ctx, req, t)
	}
	return r.callTask2025(ctx, req, t)
}

// callTask2025 applies the 2025-11-25 rules (MCP 2025-11-25 §Tool-Level
// Negotiation): a required tool without params.task and a forbidden one
// with it are -32601; params.task must be an object whose ttl, when
// present, is a non-negative integer (null is refused: Custody keeps no
// task for ever). A call with params.task is screened and started
// (startTask).
func (r *Registry) callTask2025(ctx context.Context, req *mcp.Request, t *tool) (result any, err error, handled bool) {
	raw := req.Params.Get("task")
	switch {
	case raw == nil && t.spec.TaskSupport == TaskRequired:
		return nil, &mcp.Error{Code: mcp.CodeMethodNotFound,
			Message: "Method not found: this tool runs only as a task; call it with params.task."}, true
	case raw == nil:
		return nil, nil, false
	case !t.spec.TaskSupport.runsAsTask():
		return nil, &mcp.Error{Code: mcp.CodeMethodNotFound,
			Message: "Method not found: this tool does not run as a task; call it without params.task."}, true
	}
	ttl, perr := taskTTL(raw)
	if perr != nil {
		return nil, perr, true
	}
	res, err := r.startTask(ctx, req, t, NewTask{TTL: ttl})
	return res, err, true
}

// callTask2026 applies the tasks extension's rules (docs/protocol.md
// "Tasks"; modelcontextprotocol/ext-tasks "Capability Negotiation"): the
// server decides, and a call of a tool that may run as a task becomes one
// whenever the request declares the extension; without it an optional
// tool runs at once and a required one is -32021 naming the extension. A
// legacy params.task is ignored: it never makes a forbidden tool a task,
// and its ttl is not read.
func (r *Registry) callTask2026(ctx context.Context, req *mcp.Request, t *tool) (result any, err error, handled bool) {
	switch {
	case !t.spec.TaskSupport.runsAsTask():
		return nil, nil, false
	case mcp.DeclaresExtension(req.ClientCapabilities(), mcp.ExtensionTasks):
		res, err := r.startTask(ctx, req, t, NewTask{})
		return res, err, true
	case t.spec.TaskSupport == TaskRequired:
		return nil, mcp.MissingExtension(mcp.ExtensionTasks,
			"This tool runs only as a task: declare the io.modelcontextprotocol/tasks extension in the request's client capabilities."), true
	}
	return nil, nil, false
}

// startTask screens a call as a synchronous call is (scope, kill switch,
// class, capabilities, validation, rate verdict: a refusal is answered as a
// tool result and no task is created), runs the tool's BeforeTask, and
// hands the call to Tasks.Create; the rest of the pipeline, from the
// access funnel on, runs in the worker.
func (r *Registry) startTask(ctx context.Context, req *mcp.Request, t *tool, task NewTask) (any, error) {
	inv := r.invocation(req, t.spec.Name, req.Params.Get("arguments"))
	if out, ok := r.screenCall(ctx, &inv, t); !ok {
		if out.Err != nil {
			return nil, out.Err
		}
		return out.Result.Encode()
	}
	if t.spec.BeforeTask != nil {
		g := &gathering{Peer: inv.Peer, answers: map[string]json.RawMessage{}}
		if err := t.spec.BeforeTask(ctx, g, inv.Arguments); err != nil {
			out := r.shape(ctx, &inv, t, nil, r.refusalFor(ctx, t.spec.Name, err))
			if out.Err != nil {
				return nil, out.Err
			}
			return out.Result.Encode()
		}
		task.Answers = g.answers
	}
	return r.tasks.Create(ctx, req, inv, task)
}

// gathering is the Peer of a BeforeTask: the request's, keeping every
// answer it returned, for the task.
type gathering struct {
	mcp.Peer
	answers map[string]json.RawMessage
}

// Ask implements mcp.Peer.
func (g *gathering) Ask(ctx context.Context, key, method string, params any) (json.RawMessage, error) {
	raw, err := g.Peer.Ask(ctx, key, method, params)
	if err == nil {
		g.answers[key] = raw
	}
	return raw, err
}

// taskTTL reads params.task: an object whose optional ttl is a
// non-negative integer of milliseconds.
func taskTTL(raw json.RawMessage) (*int64, *mcp.Error) {
	var task map[string]json.RawMessage
	if err := json.Unmarshal(raw, &task); err != nil || task == nil {
		return nil, mcp.InvalidParams("Invalid params: task must be an object, as {\"ttl\": milliseconds}.")
	}
	v, ok := task["ttl"]
	if !ok {
		return nil, nil
	}
	var n json.Number
	if string(v) == "null" || json.Unmarshal(v, &n) != nil {
		return nil, mcp.InvalidParams("Invalid params: task.ttl must be a whole number of milliseconds (null, an unlimited lifetime, is not offered).")
	}
	ms, err := n.Int64()
	if err != nil || ms < 0 {
		return nil, mcp.InvalidParams("Invalid params: task.ttl must be a whole number of milliseconds, zero or more.")
	}
	return &ms, nil
}

// screenCall screens inv before a task is created for it: the arguments
// object, then screen. ok is true when the call may run; otherwise out is
// its answer (a refusal result, or Err).
func (r *Registry) screenCall(ctx context.Context, inv *Invocation, t *tool) (out Outcome, ok bool) {
	args := inv.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	doc, err := decodeDoc(args)
	if _, isObject := doc.(map[string]any); err != nil || !isObject {
		return Outcome{Err: mcp.InvalidParams("Invalid params: arguments must be an object.")}, false
	}
	inv.Arguments = args
	inv.Audit.Tool = inv.Name
	if refusal := r.screen(ctx, inv, t, doc); refusal != nil {
		return r.shape(ctx, inv, t, nil, refusal), false
	}
	return Outcome{}, true
}

// Linked is implemented by a structured output that also answers with
// resource links (MCP 2025-06-18 ResourceLink): the links follow the text
// block of the structured result, in revisions that know them.
type Linked interface {
	ResourceLinks() []mcp.Content
}
