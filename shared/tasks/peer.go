package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/custodymcp/custody/shared/mcp"
)

// errTooManyQuestions is a run that asked more than one round may hold.
var errTooManyQuestions = errors.New("tasks: a task asks at most 20 questions at once")

// workerPeer is the client end of a task's run (mcp.Peer): there is no
// stream while a worker runs, so progress is kept for the lease renewals
// to write on the row (the tasks/result stream sends it on), log messages
// are dropped, and a question is answered from the task's stored answers
// or recorded — the run then ends with mcp.ErrInputRequired, as a 2026-era
// call does with multi-round-trip requests, and the worker stores the
// questions (package doc, "Input during a task"). A tool written against
// mcp.Peer needs nothing else to run as a task.
type workerPeer struct {
	caps    json.RawMessage
	answers map[string]Answer

	mu       sync.Mutex
	asked    map[string]Question
	progress *Progress // the latest, nil once written
	last     float64   // the highest progress reported
	reported bool
}

var _ mcp.Peer = (*workerPeer)(nil)

// Log implements mcp.Peer: a worker has no stream to log on.
func (p *workerPeer) Log(string, string, any) {}

// Progress implements mcp.Peer: only increasing progress is kept (MCP
// basic/utilities/progress), for the next renewal to write.
func (p *workerPeer) Progress(progress, total float64, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reported && progress <= p.last {
		return
	}
	p.reported, p.last = true, progress
	p.progress = &Progress{Progress: progress, Total: total, Message: message}
}

// takeProgress returns the progress not yet written, if any.
func (p *workerPeer) takeProgress() *Progress {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.progress
	p.progress = nil
	return pr
}

// restoreProgress puts back progress whose write failed, unless newer came.
func (p *workerPeer) restoreProgress(pr *Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.progress == nil {
		p.progress = pr
	}
}

// Ask implements mcp.Peer.
func (p *workerPeer) Ask(_ context.Context, key, method string, params any) (json.RawMessage, error) {
	if !mcp.Declared(p.caps, method, params) {
		return nil, mcp.ErrNotDeclared
	}
	if a, ok := p.answers[key]; ok {
		if len(a.Error) > 0 {
			var ce mcp.ClientError
			_ = json.Unmarshal(a.Error, &ce.Err)
			return nil, &ce
		}
		return a.Result, nil
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.asked[key]; !ok && len(p.asked) >= maxQuestions {
		return nil, errTooManyQuestions
	}
	p.asked[key] = Question{Method: method, Params: raw}
	return nil, mcp.ErrInputRequired
}

// ClientCapabilities implements mcp.Peer: those the client declared when it
// created the task.
func (p *workerPeer) ClientCapabilities() json.RawMessage {
	if len(p.caps) == 0 {
		return json.RawMessage(`{}`)
	}
	return p.caps
}
