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
	// an effect after it, so the CreateTaskResult it returns is sent only
	// once tasks/get can read the row. ttl is params.task.ttl in
	// milliseconds, nil when absent. inv.Audit is the request's audit row,
	// the task's creation row.
	Create(ctx context.Context, req *mcp.Request, inv Invocation, ttl *int64) (any, error)
}

// ServeTasks makes task-augmented calls run through t. Until it is called
// no call runs as a task and required tools are hidden from everyone.
func (r *Registry) ServeTasks(t Tasks) { r.tasks = t }

// TasksServed reports whether req's client may run tools as tasks: tasks
// are served, and req is of the 2025-11-25 revision (the 2026-07-28 tasks
// extension is planned: issue 12).
func (r *Registry) TasksServed(req *mcp.Request) bool {
	return r.tasks != nil && !req.Era2026() && req.Revision.HasTasks()
}

// listed are the tools req's tools/list shows: those visible to its
// credential, less the required-task tools when its client cannot run
// tasks.
func (r *Registry) listed(req *mcp.Request) []string {
	names := r.visible(req.Credential)
	if r.TasksServed(req) {
		return names
	}
	return slices.DeleteFunc(names, func(n string) bool { return r.tools[n].spec.TaskSupport == TaskRequired })
}

// callTask applies the task rules of tools/call for a client that may run
// tasks (MCP 2025-11-25 §Tool-Level Negotiation): a required tool without
// params.task and a forbidden one with it are -32601; params.task must be
// an object whose ttl, when present, is a non-negative integer (null is
// refused: Custody keeps no task for ever). A call with params.task is
// screened as a synchronous call is (scope, kill switch, class,
// capabilities, validation, rate verdict: the refusal is answered as a
// tool result and no task is created) and then handed to Tasks.Create;
// the rest of the pipeline, from the access funnel on, runs in the worker.
// handled is false for a synchronous call, which the caller runs.
func (r *Registry) callTask(ctx context.Context, req *mcp.Request, t *tool) (result any, err error, handled bool) {
	raw := req.Params.Get("task")
	if !req.Credential.Has(t.spec.Scope) {
		return nil, mcp.InvalidParams("Unknown tool."), true
	}
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
	inv := r.invocation(req, t.spec.Name, req.Params.Get("arguments"))
	if out, ok := r.screenCall(ctx, &inv, t); !ok {
		if out.Err != nil {
			return nil, out.Err, true
		}
		res, err := out.Result.Encode()
		return res, err, true
	}
	res, err := r.tasks.Create(ctx, req, inv, ttl)
	return res, err, true
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
