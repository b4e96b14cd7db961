package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/mcp"
)

// metaRelatedTask is the _meta key that ties a message to its task (MCP
// basic/utilities/tasks §Related Task Metadata).
const metaRelatedTask = "io.modelcontextprotocol/related-task"

// relatedTask is the value of metaRelatedTask for task id.
func relatedTask(id string) map[string]string { return map[string]string{"taskId": id} }

// result serves tasks/result (MCP basic/utilities/tasks §Result
// Retrieval): for a terminal task, exactly what tools/call would have
// answered — the stored CallToolResult with the related-task _meta, or the
// stored JSON-RPC error — at once. For an open task it blocks: the answer
// becomes an SSE stream at once (its priming event first, then a heartbeat
// comment every Heartbeat, so that proxies and API Gateway keep it), and
// the row is polled with bounded backoff. Meanwhile the stream carries the
// task's progress notifications (for the progressToken of the original
// call, increasing, never after the terminal state) and, while the task
// waits for input, its questions (questions.go). Near the request's
// deadline (ResultMargin before it, or after ResultWait without one) it
// answers -32603 with data {taskId, status, retry: true}: the task goes on,
// and the client calls again. A client that goes away gets nothing; the
// task is not affected (a disconnect is not a cancellation).
func (s *Service) result(ctx context.Context, req *mcp.Request) (any, error) {
	r, err := s.begin(ctx, req)
	if err != nil {
		return nil, err
	}
	if !r.Open() {
		return s.final(ctx, req, r)
	}
	streamed := req.OpenStream() == nil
	deadline := time.Now().Add(s.opts.ResultWait)
	if d, ok := ctx.Deadline(); ok && d.Add(-ResultMargin).Before(deadline) {
		deadline = d.Add(-ResultMargin)
	}
	sent := map[string]bool{} // the questions sent on this stream, by id
	lastProgress := math.Inf(-1)
	backoff := s.opts.ResultPollMin
	beat := time.Now().Add(s.opts.Heartbeat)
	for {
		if !r.Open() {
			return s.final(ctx, req, r)
		}
		if streamed {
			if r.Status == StatusInputRequired {
				if err := s.ask(ctx, req, r, sent); err != nil {
					s.log.WarnContext(ctx, "send a task's questions", "taskId", r.ID, "err", err)
				}
			}
			if p := r.Progress; p != nil && r.ProgressToken != nil && p.Progress > lastProgress {
				lastProgress = p.Progress
				params := map[string]any{"progressToken": r.ProgressToken, "progress": p.Progress,
					"_meta": map[string]any{metaRelatedTask: relatedTask(r.ID)}}
				if p.Total > 0 {
					params["total"] = p.Total
				}
				if p.Message != "" {
					params["message"] = p.Message
				}
				_ = req.Notify("notifications/progress", params)
			}
		}
		wait := min(backoff, time.Until(deadline))
		if streamed {
			wait = min(wait, time.Until(beat))
		}
		timer := time.NewTimer(max(wait, 0))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
		if !time.Now().Before(deadline) {
			return nil, &mcp.Error{Code: mcp.CodeInternalError,
				Message: "The task is still running; call tasks/result again to keep waiting.",
				Data:    map[string]any{"taskId": r.ID, "status": r.WireStatus(), "retry": true}}
		}
		if streamed && !time.Now().Before(beat) {
			if err := req.Heartbeat(); err != nil {
				return nil, context.Canceled // the client is gone
			}
			beat = time.Now().Add(s.opts.Heartbeat)
		}
		next, perr := s.load(ctx, req.Credential, r.ID)
		switch {
		case perr != nil && perr.Code == mcp.CodeInvalidParams:
			return nil, perr // purged while waiting (its ttl ended)
		case perr != nil:
			backoff = min(backoff*2, s.opts.ResultPollMax) // a transient read failure: keep waiting
			continue
		}
		if next.Status != r.Status || next.InputRound != r.InputRound {
			backoff = s.opts.ResultPollMin // something moved: look again soon
		} else {
			backoff = min(backoff*2, s.opts.ResultPollMax)
		}
		r = next
	}
}

// final is the answer of tasks/result for a terminal task. A stored result
// holds rows of the task's matter as they were when it ran; it is returned
// only while the caller still reaches that matter (the access funnel, read
// again now: an ethical wall raised since withholds it, and the task is
// then answered as one that does not exist, like every withheld item).
func (s *Service) final(ctx context.Context, req *mcp.Request, r *Row) (any, error) {
	if r.Matter != "" && s.opts.Funnel != nil {
		_, err := s.opts.Funnel.Matter(ctx, access.WhoOf(req.Credential), r.Matter)
		switch {
		case errors.Is(err, access.ErrNoMatter):
			return nil, errNoTask()
		case err != nil:
			s.log.WarnContext(ctx, "re-check a task's matter", "taskId", r.ID, "err", err)
			return nil, errUnavailable()
		}
	}
	if r.Status == StatusCancelled {
		return nil, &mcp.Error{Code: mcp.CodeInternalError,
			Message: "The task was cancelled before it finished; it has no result.",
			Data:    map[string]any{"taskId": r.ID, "status": StatusCancelled}}
	}
	body, err := s.outcome(ctx, r)
	if err != nil {
		s.log.WarnContext(ctx, "read a task's outcome", "taskId", r.ID, "err", err)
		return nil, errUnavailable()
	}
	if r.OutcomeKind == KindRPCError {
		var e mcp.Error
		if err := json.Unmarshal(body, &e); err != nil {
			return nil, fmt.Errorf("decode the error of task %s: %w", r.ID, err)
		}
		return nil, &e
	}
	return withRelatedTask(body, r.ID)
}

// withRelatedTask adds the related-task _meta to a stored CallToolResult,
// keeping its other members (and the _meta it already has) as they are.
func withRelatedTask(body []byte, id string) (mcp.Encoded, error) {
	var res map[string]json.RawMessage
	if err := json.Unmarshal(body, &res); err != nil || res == nil {
		return nil, errors.Join(errors.New("tasks: a stored result is not a JSON object"), err)
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := res["_meta"]; ok {
		if err := json.Unmarshal(raw, &meta); err != nil || meta == nil {
			meta = map[string]json.RawMessage{}
		}
	}
	rel, _ := mcp.Marshal(relatedTask(id))
	meta[metaRelatedTask] = rel
	m, err := mcp.Marshal(meta)
	if err != nil {
		return nil, err
	}
	res["_meta"] = m
	out, err := mcp.Marshal(res)
	return mcp.Encoded(bytes.TrimSpace(out)), err
}
