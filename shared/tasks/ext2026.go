package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/store"
)

// The 2026-07-28 dialect: the tasks extension io.modelcontextprotocol/tasks
// (modelcontextprotocol/ext-tasks, specification "Tasks"; docs/protocol.md
// "Tasks"), served on the same rows and outcome kinds as 2025-11-25.
//
//   - The server decides: a tools/call of a tool that may run as a task
//     becomes one whenever the request declares the extension (package
//     tools, callTask2026), and is answered with the flat task,
//     resultType "task", ttlMs and pollIntervalMs, once the row committed.
//   - tasks/get is the whole task: its status (completed for every result,
//     isError included; failed only for a JSON-RPC error), and the stored
//     result, the stored error or the questions still unanswered
//     (inputRequests). Progress is its statusMessage while it runs: the
//     extension sends no progress notifications.
//   - tasks/update {taskId, inputResponses} answers questions: keys that
//     are not asked now, or already answered, are ignored; a partial set
//     leaves the task input_required with the rest; the last answer queues
//     it again, and the tool runs from the start with every answer (the
//     same Peer as in 2025-11-25: the worker's answers them from the row).
//   - tasks/cancel is a conditional update to cancelled, as in 2025-11-25;
//     a terminal task is acknowledged all the same. Both answer the empty
//     acknowledgement {resultType: "complete"}.
//   - tasks/get, tasks/update and tasks/cancel carry Mcp-Name: <taskId>
//     (the method table's NameParam; 400 -32020 otherwise), and a request
//     that does not declare the extension is -32021 naming it. tasks/list
//     and tasks/result are not of this era (404 -32601).
//
// A task is served in the dialect of the request that created it: the
// other era's methods answer it as an unknown task (-32602). The two
// dialects ask and answer questions on different channels (a tasks/result
// stream, inputRequests), and a client speaks one of them.

// Task2026 is a task of the extension: the flat result of a tools/call that
// became a task (CreateTaskResult, without result, error or
// inputRequests), and tasks/get's DetailedTask (with the one that its
// status carries).
type Task2026 struct {
	ResultType     string `json:"resultType,omitempty"`
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	StatusMessage  string `json:"statusMessage,omitempty"`
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	TTLMs          int64  `json:"ttlMs"`
	PollIntervalMs int64  `json:"pollIntervalMs,omitempty"`
	// Result is the stored CallToolResult of a completed task, exactly as
	// the tools/call of the era would have answered it: with resultType
	// "complete", and without the related-task _meta of 2025-11-25 (the
	// taskId is beside it).
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the stored JSON-RPC error of a failed task.
	Error json.RawMessage `json:"error,omitempty"`
	// InputRequests are the questions of an input_required task not yet
	// answered, by key.
	InputRequests map[string]Question `json:"inputRequests,omitempty"`
}

// wire2026 is the row as a task of the extension, without its payloads.
func (r *Row) wire2026() Task2026 {
	return Task2026{TaskID: r.ID, Status: r.WireStatus2026(), StatusMessage: r.statusMessage2026(),
		CreatedAt: r.Created.UTC().Format(timeLayout), LastUpdatedAt: r.Updated.UTC().Format(timeLayout),
		TTLMs: r.TTL.Milliseconds(), PollIntervalMs: r.Poll.Milliseconds()}
}

// statusMessage2026 is the task's statusMessage: while it runs, its last
// reported progress (the tool's message, else "n of total"), else the row's
// message.
func (r *Row) statusMessage2026() string {
	p := r.Progress
	if r.Status != StatusRunning || p == nil {
		return r.Message
	}
	if p.Message != "" {
		return p.Message
	}
	n := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total > 0 {
		return "Progress: " + n + " of " + strconv.FormatFloat(p.Total, 'f', -1, 64) + "."
	}
	return "Progress: " + n + "."
}

// createResult2026 is the answer of a tools/call that became a task: the
// flat task with resultType "task", which stamp2026 leaves as it is.
func createResult2026(r *Row) (any, error) {
	t := r.wire2026()
	t.ResultType = "task"
	b, err := mcp.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("encode task %s: %w", r.ID, err)
	}
	return mcp.TypedResult(b), nil
}

// ack is the extension's empty acknowledgement ({"resultType":"complete"}
// once the 2026 fields are stamped).
type ack struct{}

// errNoExtension refuses a task method to a request that did not declare
// the extension (ext-tasks "Error Handling": -32021 for tasks/get,
// tasks/update and tasks/cancel of a non-declaring client).
func errNoExtension() *mcp.Error {
	return mcp.MissingExtension(mcp.ExtensionTasks,
		"The task methods need the io.modelcontextprotocol/tasks extension: declare it in the request's client capabilities.")
}

// begin2026 is the start of every 2026 task method: the request declares
// the extension, its taskId names a task of the caller's created in this
// era; the audit row names it.
func (s *Service) begin2026(ctx context.Context, req *mcp.Request) (*Row, error) {
	if !mcp.DeclaresExtension(req.ClientCapabilities(), mcp.ExtensionTasks) {
		return nil, errNoExtension()
	}
	id, perr := taskParam(req)
	if perr != nil {
		return nil, perr
	}
	r, perr := s.load(ctx, req.Credential, id)
	if perr != nil {
		return nil, perr
	}
	if !r.Dialect2026() {
		return nil, errNoTask()
	}
	req.Audit.TaskID, req.Audit.Tool, req.Audit.Matter = r.ID, r.Tool, r.Matter
	return r, nil
}

// get2026 serves tasks/get: the task with what its status carries. A
// stored result or error is returned only while the caller still reaches
// the task's matter (as tasks/result does in 2025-11-25: final).
func (s *Service) get2026(ctx context.Context, req *mcp.Request) (any, error) {
	r, err := s.begin2026(ctx, req)
	if err != nil {
		return nil, err
	}
	t := r.wire2026()
	switch r.Status {
	case StatusInputRequired:
		t.InputRequests = pending(r)
	case StatusCompleted, StatusFailed:
		if perr := s.reachesMatter(ctx, req, r); perr != nil {
			return nil, perr
		}
		body, err := s.outcome(ctx, r)
		if err != nil {
			s.log.WarnContext(ctx, "read a task's outcome", "taskId", r.ID, "err", err)
			return nil, errUnavailable()
		}
		if r.OutcomeKind == KindRPCError {
			t.Error = body
		} else {
			t.Result = json.RawMessage(mcp.Result2026(body))
		}
	}
	return t, nil
}

// pending are the questions of r's round that are not answered yet.
func pending(r *Row) map[string]Question {
	out := make(map[string]Question, len(r.InputRequests))
	for k, q := range r.InputRequests {
		if _, answered := r.InputAnswers[k]; !answered {
			out[k] = q
		}
	}
	return out
}

// reachesMatter re-checks through the access funnel that the caller still
// reaches the task's matter; an ethical wall raised since answers the task
// as one that does not exist.
func (s *Service) reachesMatter(ctx context.Context, req *mcp.Request, r *Row) *mcp.Error {
	if r.Matter == "" || s.opts.Funnel == nil {
		return nil
	}
	_, err := s.opts.Funnel.Matter(ctx, access.WhoOf(req.Credential), r.Matter)
	switch {
	case errors.Is(err, access.ErrNoMatter):
		return errNoTask()
	case err != nil:
		s.log.WarnContext(ctx, "re-check a task's matter", "taskId", r.ID, "err", err)
		return errUnavailable()
	}
	return nil
}

// maxUpdateAttempts bounds the re-reads of a tasks/update whose write met
// a concurrent one. Each conflict is another writer's success: an answer to
// another question of the round (at most maxQuestions of them; an answer
// to the same question makes this one's moot), the worker or a
// cancellation (after which there is nothing to answer). So a round's
// answers racing all land within maxQuestions+2 attempts.
const maxUpdateAttempts = maxQuestions + 2

// update2026 serves tasks/update: the answers to questions the task asks
// now and has no answer for yet are added to the row, with one write
// conditional on the version read (two partial updates racing both land:
// the second reads again); the rest are ignored. When the round is
// complete the same write queues the task again, and its message follows
// the commit. A task that asks nothing now is acknowledged as it is.
func (s *Service) update2026(ctx context.Context, req *mcp.Request) (any, error) {
	r, err := s.begin2026(ctx, req)
	if err != nil {
		return nil, err
	}
	responses, perr := inputResponses(req)
	if perr != nil {
		return nil, perr
	}
	op, complete, ok := s.answerOp(r, responses)
	if !ok {
		return ack{}, nil
	}
	w := mcp.Writes{Ops: []store.Op{op},
		OnConflict: func(ctx context.Context, _ int) (any, error) {
			return s.updateAgain(ctx, req, r.ID, responses)
		}}
	if complete {
		w.After = []mcp.Effect{s.sendEffect(r)}
	}
	req.Write(w)
	return ack{}, nil
}

// updateAgain applies a tasks/update whose first write met a concurrent
// change: read, decide and write again, each write conditional on the
// version just read.
func (s *Service) updateAgain(ctx context.Context, req *mcp.Request, id string, responses map[string]json.RawMessage) (any, error) {
	for range maxUpdateAttempts {
		r, perr := s.load(ctx, req.Credential, id)
		if perr != nil {
			return nil, perr
		}
		op, complete, ok := s.answerOp(r, responses)
		if !ok {
			return ack{}, nil
		}
		_, err := s.opts.Store.Update(ctx, op.Key, op.Update, op.Conditions...)
		switch {
		case errors.Is(err, store.ErrConflict):
			continue
		case err != nil:
			s.log.WarnContext(ctx, "answer a task's questions", "taskId", id, "err", err)
			return nil, errUnavailable()
		}
		if complete {
			if err := s.send(ctx, r); err != nil {
				s.log.ErrorContext(ctx, "queue a resumed task", "taskId", id, "err", err,
					"recovery", "the sweeper's queued-unclaimed rule sends it again after "+s.opts.UnclaimedAfter.String())
			}
		}
		return ack{}, nil
	}
	return nil, errUnavailable()
}

// inputResponses reads params.inputResponses: an object of answers, each
// an object (the result of the question it answers, as in multi-round-trip
// requests).
func inputResponses(req *mcp.Request) (map[string]json.RawMessage, *mcp.Error) {
	bad := mcp.InvalidParams("Invalid params: inputResponses must be an object of answers, each an object.")
	var responses map[string]json.RawMessage
	if err := json.Unmarshal(req.Params.Get("inputResponses"), &responses); err != nil || responses == nil {
		return nil, bad
	}
	for _, v := range responses {
		var obj map[string]json.RawMessage
		if json.Unmarshal(v, &obj) != nil || obj == nil {
			return nil, bad
		}
	}
	return responses, nil
}

// answerOp is the write that adds the answers to the questions r asks now
// and has no answer for, conditional on r as read: still waiting in the
// same round, of the same version. complete reports that no question of
// the round is left unanswered: the write then queues the task. ok is
// false when no answer is for such a question: nothing is written.
func (s *Service) answerOp(r *Row, responses map[string]json.RawMessage) (op store.Op, complete, ok bool) {
	if r.Status != StatusInputRequired {
		return store.Op{}, false, false
	}
	open := pending(r)
	answers := maps.Clone(r.InputAnswers)
	if answers == nil {
		answers = map[string]Answer{}
	}
	for _, k := range slices.Sorted(maps.Keys(responses)) {
		if _, asked := open[k]; asked {
			answers[k] = Answer{Result: responses[k]}
			delete(open, k)
			ok = true
		}
	}
	if !ok {
		return store.Op{}, false, false
	}
	enc, err := json.Marshal(answers)
	if err != nil {
		return store.Op{}, false, false // raw JSON objects always encode
	}
	now := s.opts.Now()
	u := store.Update{Set: map[string]any{aInputAnswers: enc, aUpdated: ms(now),
		aMessage: fmt.Sprintf("The task waits for %d more answer(s); answer its inputRequests with tasks/update.", len(open))}}
	if len(open) == 0 {
		complete = true
		u.Set[aStatus], u.Set[aQueued] = StatusQueued, ms(now)
		u.Set[aMessage] = "The client answered; the task is queued to go on."
		u.Remove = []string{aInputRequests}
		index(&u, indexQueued, r.ID, now.Add(s.opts.UnclaimedAfter))
	}
	return store.UpdateOp(r.Key(), u, store.AttrEquals(aStatus, StatusInputRequired),
		store.AttrEquals(aInputRound, int64(r.InputRound)), store.VersionEquals(r.Version)), complete, true
}

// cancel2026 serves tasks/cancel: an open task moves to cancelled with one
// conditional write committed before the reply, as in 2025-11-25; a
// terminal task, or one that became terminal while the cancellation was
// decided, is acknowledged the same (the extension reserves -32602 for an
// unknown task; cancellation is cooperative, and the task's status says
// what came of it).
func (s *Service) cancel2026(ctx context.Context, req *mcp.Request) (any, error) {
	r, err := s.begin2026(ctx, req)
	if err != nil {
		return nil, err
	}
	if !r.Open() {
		return ack{}, nil
	}
	req.Write(mcp.Writes{
		Ops: []store.Op{cancelOp(r, s.opts.Now())},
		OnConflict: func(ctx context.Context, _ int) (any, error) {
			now, perr := s.load(ctx, req.Credential, r.ID)
			switch {
			case perr != nil:
				return nil, perr
			case !now.Open():
				return ack{}, nil
			}
			return nil, errUnavailable()
		},
	})
	return ack{}, nil
}
