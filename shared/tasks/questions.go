package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/store"
)

// A task's questions (2025-11-25: MCP basic/utilities/tasks §Input Required
// Status). The worker stores a round of questions on the row; tasks/result
// parks each as a row bound to the task — TASKREQ#<task>#<round>#<n>, in the
// partition of the task's credential, of the shape of every parked question
// (mcp.QuestionRow) — and sends it on its stream as a server-to-client
// request with the JSON-RPC id "t-<task>-<round>-<n>" and the related-task
// _meta. The client's answer, a POST of the same credential in any of its
// sessions, reaches the row through mcp.Options.BoundQuestions (Answers);
// after it commits, the task is resumed if every question of the round is
// answered: one transaction moves it back to queued with the answers and
// spends the question rows (they expire at once), and the worker is sent
// the task again. A session that ends orphans nothing: the questions wait
// under the task, and the next tasks/result sends the pending ones again
// with their ids.

// maxQuestions bounds one round of a task's questions, so that resuming it
// (the task row and every question row) is one transaction.
const maxQuestions = 20

// questionID is the JSON-RPC id of question n of round of task id.
func questionID(id string, round, n int) string {
	return "t-" + id + "-" + strconv.Itoa(round) + "-" + strconv.Itoa(n)
}

// parseQuestionID reverses questionID.
func parseQuestionID(qid string) (id string, round, n int, ok bool) {
	rest, found := strings.CutPrefix(qid, "t-")
	if !found {
		return "", 0, 0, false
	}
	parts := strings.Split(rest, "-")
	if len(parts) != 3 || !validID(parts[0]) {
		return "", 0, 0, false
	}
	round, err1 := strconv.Atoi(parts[1])
	n, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || round < 1 || round > 9999 || n < 0 || n >= maxQuestions ||
		strconv.Itoa(round) != parts[1] || strconv.Itoa(n) != parts[2] {
		return "", 0, 0, false
	}
	return parts[0], round, n, true
}

// questionKeys are the keys of the row's current round, in question order
// (its keys sorted).
func questionKeys(r *Row) []string {
	keys := make([]string, 0, len(r.InputRequests))
	for k := range r.InputRequests {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Answers is the mcp.Options.BoundQuestions of the service: a question id
// of its shape names the question row under the answering credential (so
// only the credential that created the task can answer it), and the effect
// after the answer's commit resumes the task when the round is complete.
func (s *Service) Answers(cred *auth.Credential, qid string) (store.Key, []mcp.Effect, bool) {
	id, round, n, ok := parseQuestionID(qid)
	if !ok || !keyspace.ValidID(cred.Tenant) {
		return store.Key{}, nil, false
	}
	key := questionKey(cred.Tenant, cred.ID, id, round, n)
	resume := mcp.Effect{
		Name:     "resume task " + id,
		Recovery: "the next tasks/result of the task resumes it",
		Run: func(ctx context.Context) error {
			it, err := s.opts.Store.Get(ctx, Key(cred.Tenant, cred.ID, id))
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			r, err := decodeRow(it)
			if err != nil {
				return err
			}
			return s.resume(ctx, r)
		},
	}
	return key, []mcp.Effect{resume}, true
}

// ask parks the questions of r's round that this stream has not sent and
// sends each that is still pending (a question answered meanwhile is not
// sent again), then resumes the task if the round is complete.
func (s *Service) ask(ctx context.Context, req *mcp.Request, r *Row, sent map[string]bool) error {
	expires := r.Expires().Add(PurgeGrace).Unix()
	for n, key := range questionKeys(r) {
		qid := questionID(r.ID, r.InputRound, n)
		if sent[qid] {
			continue
		}
		q := r.InputRequests[key]
		k := questionKey(r.Tenant, r.CredentialID, r.ID, r.InputRound, n)
		row := mcp.QuestionRow(k, r.CredentialID, q.Method, expires)
		row.Attrs["key"] = key
		err := s.opts.Store.Put(ctx, row, store.NotExists())
		if errors.Is(err, store.ErrExists) {
			it, gerr := s.opts.Store.Get(ctx, k)
			if gerr != nil {
				return fmt.Errorf("read question %s: %w", qid, gerr)
			}
			if answered, _, _ := mcp.QuestionAnswer(it); answered {
				sent[qid] = true
				continue
			}
		} else if err != nil {
			return fmt.Errorf("park question %s: %w", qid, err)
		}
		params, err := withMeta(q.Params, r.ID)
		if err != nil {
			return err
		}
		if err := req.SendRequest(qid, q.Method, params); err != nil {
			return fmt.Errorf("send question %s: %w", qid, err)
		}
		sent[qid] = true
	}
	return s.resume(ctx, r)
}

// withMeta adds the related-task _meta to a question's params.
func withMeta(params json.RawMessage, id string) (map[string]any, error) {
	var p map[string]any
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("a task's question params: %w", err)
		}
	}
	if p == nil {
		p = map[string]any{}
	}
	meta, _ := p["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[metaRelatedTask] = relatedTask(id)
	p["_meta"] = meta
	return p, nil
}

// resume moves r from input_required back to queued once every question
// of its round is answered: one transaction, conditional on r still
// waiting in that round, sets the answers (with those of earlier rounds)
// and spends the question rows; then the worker is sent the task. Nothing
// happens while a question is pending, or when another instance resumed
// (or a client cancelled) it first.
func (s *Service) resume(ctx context.Context, r *Row) error {
	if r.Status != StatusInputRequired {
		return nil
	}
	keys := questionKeys(r)
	page, err := s.opts.Store.Query(ctx, store.Query{PK: r.Key().PK,
		SK: store.SortKeyCondition{Prefix: questionPrefix(r.ID) + fmt.Sprintf("%04d#", r.InputRound)}, Limit: maxQuestions + 1})
	if err != nil {
		return fmt.Errorf("read the questions of task %s: %w", r.ID, err)
	}
	if len(page.Items) < len(keys) {
		return nil
	}
	answers := map[string]Answer{}
	for k, v := range r.InputAnswers {
		answers[k] = v
	}
	now := s.opts.Now()
	spent := now.Unix()
	ops := []store.Op{{}}
	for _, it := range page.Items {
		answered, result, aerr := mcp.QuestionAnswer(it)
		if !answered {
			return nil
		}
		var a Answer
		var ce *mcp.ClientError
		switch {
		case errors.As(aerr, &ce):
			a.Error, _ = json.Marshal(ce.Err)
		case aerr != nil: // withdrawn: nothing to resume with
			return nil
		default:
			a.Result = result
		}
		answers[it.String("key")] = a
		ops = append(ops, store.UpdateOp(it.Key(), store.Update{ExpiresAt: &spent}))
	}
	enc, err := json.Marshal(answers)
	if err != nil {
		return err
	}
	u := store.Update{
		Set: map[string]any{aStatus: StatusQueued, aInputAnswers: enc, aQueued: ms(now), aUpdated: ms(now),
			aMessage: "The client answered; the task is queued to go on."},
		Remove: []string{aInputRequests},
	}
	index(&u, indexQueued, r.ID, now.Add(s.opts.UnclaimedAfter))
	ops[0] = store.UpdateOp(r.Key(), u,
		store.AttrEquals(aStatus, StatusInputRequired), store.AttrEquals(aInputRound, int64(r.InputRound)))
	if err := s.opts.Store.Transact(ctx, ops); err != nil {
		var tx *store.TxCanceledError
		if errors.As(err, &tx) {
			return nil // resumed or cancelled by another
		}
		return fmt.Errorf("resume task %s: %w", r.ID, err)
	}
	return s.send(ctx, r)
}
