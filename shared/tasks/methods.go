package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/store"
)

// Install registers the task methods on srv: tasks/get and tasks/cancel in
// both eras (each dialect its own handler), tasks/list and tasks/result in
// the 2025 era only (a session of a revision without tasks gets -32601;
// the 2026 era 404 -32601: the extension has neither), tasks/update in the
// 2026 era only. The methods that name a task take its id as their
// NameParam, so a 2026 request's Mcp-Name must equal params.taskId
// (ext-tasks "Streamable HTTP: Routing Headers"). The answers to the
// 2025 dialect's questions are resolved by Answers (BoundQuestions, set on
// the server's options by the composition).
func (s *Service) Install(srv *mcp.Server) {
	srv.Register("tasks/get", mcp.Method{Handler: byEra(s.get, s.get2026), NameParam: "taskId"})
	srv.Register("tasks/list", mcp.Method{Handler: s.list, Eras: mcp.Era2025})
	srv.Register("tasks/result", mcp.Method{Handler: s.result, Eras: mcp.Era2025})
	srv.Register("tasks/cancel", mcp.Method{Handler: byEra(s.cancel, s.cancel2026), NameParam: "taskId"})
	srv.Register("tasks/update", mcp.Method{Handler: s.update2026, Eras: mcp.Era2026, NameParam: "taskId"})
}

// byEra serves a method with the handler of the request's era.
func byEra(h2025, h2026 mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, req *mcp.Request) (any, error) {
		if req.Era2026() {
			return h2026(ctx, req)
		}
		return h2025(ctx, req)
	}
}

// errNoTask is the answer for an id that names no task of the caller's:
// unknown, another credential's (the same owner's other key included),
// malformed or purged after its ttl, alike (MCP basic/utilities/tasks §Error
// Handling; docs/decisions.md "Identity and binding").
func errNoTask() *mcp.Error {
	return mcp.InvalidParams("Invalid params: no task with that taskId exists for this credential (a task is kept until its ttl ends).")
}

// errUnavailable is the answer when the task row cannot be read or written
// now: never "not found", which would tell a polling client to give up.
func errUnavailable() *mcp.Error {
	return &mcp.Error{Code: mcp.CodeInternalError, Message: "The task could not be read just now; retry shortly.",
		Data: map[string]any{"retry_after_s": 1}}
}

// errNoTasks answers a task method in a revision without tasks.
func errNoTasks() *mcp.Error {
	return &mcp.Error{Code: mcp.CodeMethodNotFound, Message: "Method not found: tasks are served to 2025-11-25 sessions."}
}

// taskParam reads params.taskId.
func taskParam(req *mcp.Request) (string, *mcp.Error) {
	id, ok := req.Params.String("taskId")
	if !ok {
		return "", mcp.InvalidParams("Invalid params: taskId (a string) is required.")
	}
	return id, nil
}

// load reads the task id under cred, strongly, and re-checks its binding:
// the row must be cred's, of its tenant and owner, and within its ttl.
func (s *Service) load(ctx context.Context, cred *auth.Credential, id string) (*Row, *mcp.Error) {
	if !validID(id) {
		return nil, errNoTask()
	}
	it, err := s.opts.Store.Get(ctx, Key(cred.Tenant, cred.ID, id))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, errNoTask()
	case err != nil:
		s.log.WarnContext(ctx, "read task", "taskId", id, "err", err)
		return nil, errUnavailable()
	}
	r, err := decodeRow(it)
	if err != nil {
		s.log.ErrorContext(ctx, "decode task", "taskId", id, "err", err)
		return nil, errUnavailable()
	}
	if r.CredentialID != cred.ID || r.Tenant != cred.Tenant || r.Ref.Owner != cred.Owner || r.Ref.CredentialID != cred.ID {
		return nil, errNoTask()
	}
	if !s.opts.Now().Before(r.Expires()) {
		return nil, errNoTask() // purged: its ttl has ended
	}
	return r, nil
}

// begin is the start of every task method: the revision has tasks, the
// taskId names the caller's task; the audit row names it.
func (s *Service) begin(ctx context.Context, req *mcp.Request) (*Row, error) {
	if !req.Revision.HasTasks() {
		return nil, errNoTasks()
	}
	id, perr := taskParam(req)
	if perr != nil {
		return nil, perr
	}
	r, perr := s.load(ctx, req.Credential, id)
	if perr != nil {
		return nil, perr
	}
	if r.Dialect2026() {
		return nil, errNoTask() // the extension's task (ext2026.go)
	}
	req.Audit.TaskID, req.Audit.Tool, req.Audit.Matter = r.ID, r.Tool, r.Matter
	return r, nil
}

// get serves tasks/get: the task as its row says now.
func (s *Service) get(ctx context.Context, req *mcp.Request) (any, error) {
	r, err := s.begin(ctx, req)
	if err != nil {
		return nil, err
	}
	return r.Wire(), nil
}

// ListTasksResult answers tasks/list.
type ListTasksResult struct {
	Tasks      []Task `json:"tasks"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// list serves tasks/list: the caller's own tasks in creation order, read
// with one consistent query of its partition per page, paged with sealed
// position cursors (mcp.CursorSealer.SealAfter): tasks come and go while a
// client pages, and each is listed once. Tasks past their ttl are left
// out, as tasks/get answers them.
func (s *Service) list(ctx context.Context, req *mcp.Request) (any, error) {
	if !req.Revision.HasTasks() {
		return nil, errNoTasks()
	}
	cred := req.Credential
	scope := mcp.CursorScope{Method: req.Method, CredentialID: cred.ID, Era: req.CursorEra()}
	q := store.Query{PK: Key(cred.Tenant, cred.ID, "").PK, SK: store.SortKeyCondition{Prefix: taskPrefix}, Limit: s.opts.PageSize + 1}
	after := ""
	if raw := req.Params.Get("cursor"); raw != nil && string(raw) != "null" {
		c, ok := req.Params.String("cursor")
		var err error
		if ok {
			after, err = s.opts.Cursors.OpenAfter(c, scope, req.Started)
		}
		if !ok || err != nil || !validID(after) {
			return nil, mcp.InvalidParams("Invalid params: the cursor is not one this server issued for this list, or it has expired.")
		}
		q.SK = store.SortKeyCondition{From: taskPrefix + after, To: taskPrefix + "~"}
	}
	now := s.opts.Now()
	out := ListTasksResult{Tasks: []Task{}}
	for {
		page, err := s.opts.Store.Query(ctx, q)
		if err != nil {
			s.log.WarnContext(ctx, "list tasks", "err", err)
			return nil, errUnavailable()
		}
		for _, it := range page.Items {
			r, err := decodeRow(it)
			if err != nil {
				s.log.ErrorContext(ctx, "decode task", "key", it.Key().String(), "err", err)
				return nil, errUnavailable()
			}
			if r.ID == after || !now.Before(r.Expires()) {
				continue
			}
			if len(out.Tasks) == s.opts.PageSize {
				out.NextCursor = s.opts.Cursors.SealAfter(scope, out.Tasks[len(out.Tasks)-1].TaskID, req.Started)
				return out, nil
			}
			out.Tasks = append(out.Tasks, r.Wire())
		}
		if page.NextToken == "" {
			return out, nil
		}
		q.PageToken = page.NextToken
	}
}

// cancel serves tasks/cancel: one conditional update from an open state
// to cancelled, committed in the request's one transaction before the
// reply (MCP basic/utilities/tasks §Task Cancellation). A terminal task is
// -32602; so is one that reached a terminal state while the cancellation
// was being decided (the update's condition failed). The worker notices at
// its next lease renewal and stops the tool; its late outcome then meets
// the cancelled row and writes nothing.
func (s *Service) cancel(ctx context.Context, req *mcp.Request) (any, error) {
	r, err := s.begin(ctx, req)
	if err != nil {
		return nil, err
	}
	if !r.Open() {
		return nil, errTerminal(r)
	}
	now := s.opts.Now()
	req.Write(mcp.Writes{
		Ops: []store.Op{cancelOp(r, now)},
		OnConflict: func(ctx context.Context, _ int) (any, error) {
			now, perr := s.load(ctx, req.Credential, r.ID)
			switch {
			case perr != nil:
				return nil, perr
			case !now.Open():
				return nil, errTerminal(now)
			}
			return nil, errUnavailable()
		},
	})
	r.Status, r.Updated, r.Message = StatusCancelled, now, msgCancelled
	return r.Wire(), nil
}

// msgCancelled is a cancelled task's status message.
const msgCancelled = "The task was cancelled by request."

// cancelOp is the write that cancels r at now: from any open state to
// cancelled, the lease and the questions dropped, the row due for purging
// at its ttl.
func cancelOp(r *Row, now time.Time) store.Op {
	u := store.Update{
		Set:    map[string]any{aStatus: StatusCancelled, aOpen: false, aUpdated: ms(now), aMessage: msgCancelled},
		Remove: leaseAttrs(aInputRequests),
	}
	index(&u, indexExpires, r.ID, r.Expires())
	return store.UpdateOp(r.Key(), u, store.AttrEquals(aOpen, true))
}

// errTerminal refuses to cancel a terminal task.
func errTerminal(r *Row) *mcp.Error {
	return mcp.InvalidParams(fmt.Sprintf("Invalid params: the task is already %s; a terminal task cannot be cancelled.", r.WireStatus()))
}
