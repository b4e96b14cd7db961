package mcp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/store"
)

// Peer is the client end of one request, as a tool or prompt sees it: it
// can be told things (log messages, progress) and asked things (sampling,
// elicitation, roots). In the 2025 era a Request is the Peer: messages travel
// on the POST's SSE stream and every question is parked as a store row that
// the client's answer — a separate POST, on any instance — resolves. The
// 2026-07-28 era answers the same calls with multi-round-trip requests, so
// one tool implementation serves both.
type Peer interface {
	// Log sends notifications/message when level is at or above the
	// session's level (MCP server/utilities/logging).
	Log(level, logger string, data any)
	// Progress sends notifications/progress for the request's progressToken,
	// if it has one; progress must increase (MCP basic/utilities/progress).
	Progress(progress, total float64, message string)
	// Ask sends a server-to-client request (method with params) and waits
	// for the client's answer. key names the question within its tool
	// (stable across retries; the 2026 era keys inputRequests by it). The
	// answer is the client's result; a client error is a *ClientError.
	Ask(ctx context.Context, key, method string, params any) (json.RawMessage, error)
	// ClientCapabilities are the capabilities the client declared.
	ClientCapabilities() json.RawMessage
}

// NoPeer is the client end of a call that has none to ask: work that runs
// outside a request (a task worker between rounds). It sends nothing, and
// every question is ErrNoStream.
type NoPeer struct{}

// Log implements Peer: nothing is sent.
func (NoPeer) Log(string, string, any) {}

// Progress implements Peer: nothing is sent.
func (NoPeer) Progress(float64, float64, string) {}

// Ask implements Peer: there is nobody to ask.
func (NoPeer) Ask(context.Context, string, string, any) (json.RawMessage, error) {
	return nil, ErrNoStream
}

// ClientCapabilities implements Peer: none declared.
func (NoPeer) ClientCapabilities() json.RawMessage { return json.RawMessage(`{}`) }

// ClientError is a JSON-RPC error the client answered a question with.
type ClientError struct{ Err Error }

func (e *ClientError) Error() string { return "client answered: " + e.Err.Message }

// Errors of Ask.
var (
	// ErrAskCancelled: the client cancelled the request, the session ended,
	// or the stream is gone.
	ErrAskCancelled = errors.New("mcp: the question was withdrawn")
	// ErrAskExpired: nobody answered before the parked request expired.
	ErrAskExpired = errors.New("mcp: the question expired unanswered")
	// ErrNotDeclared: the client did not declare the capability the question needs.
	ErrNotDeclared = errors.New("mcp: the client did not declare that capability")
)

// Parked-request statuses.
const (
	parkedPending   = "pending"
	parkedAnswered  = "answered"
	parkedRejected  = "rejected"
	parkedCancelled = "cancelled"
)

// ParkedKey is the row of a server-to-client request waiting in a session.
func ParkedKey(sessionID, id string) store.Key {
	return store.Key{PK: SessionPK(sessionID), SK: "REQ#" + id}
}

// newParkedID returns a JSON-RPC id for a server-to-client request.
func newParkedID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "s-" + base64.RawURLEncoding.EncodeToString(b[:])
}

// logLevels orders the syslog levels of MCP logging (RFC 5424 §6.2.1).
var logLevels = map[string]int{
	"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4,
	"critical": 5, "alert": 6, "emergency": 7,
}

// ValidLogLevel reports whether s is an MCP logging level.
func ValidLogLevel(s string) bool { _, ok := logLevels[s]; return ok }

// Log implements Peer. In the 2025 era the session's level (from
// logging/setLevel) applies, everything when none was set; in the 2026 era
// only a request that names a level in _meta gets log messages.
func (r *Request) Log(level, logger string, data any) {
	threshold := "debug"
	switch {
	case r.meta != nil:
		if r.meta.LogLevel == "" {
			return
		}
		threshold = r.meta.LogLevel
	case r.Session != nil && r.Session.LogLevel != "":
		threshold = r.Session.LogLevel
	}
	if logLevels[level] < logLevels[threshold] {
		return
	}
	params := map[string]any{"level": level, "data": data}
	if logger != "" {
		params["logger"] = logger
	}
	_ = r.notify("notifications/message", params)
}

// Progress implements Peer.
func (r *Request) Progress(progress, total float64, message string) {
	token := r.Params.ProgressToken()
	if token == nil {
		return
	}
	if r.progressSent && progress <= r.lastProgress {
		return // progress must increase with each notification
	}
	r.progressSent, r.lastProgress = true, progress
	params := map[string]any{"progressToken": token, "progress": progress}
	if total > 0 {
		params["total"] = total
	}
	if message != "" {
		params["message"] = message
	}
	_ = r.notify("notifications/progress", params)
}

// ClientCapabilities implements Peer: the session's in the 2025 era, the
// request's own in the 2026 era.
func (r *Request) ClientCapabilities() json.RawMessage {
	switch {
	case r.meta != nil:
		return r.meta.ClientCapabilities
	case r.Session != nil:
		return r.Session.ClientCapabilities
	}
	return json.RawMessage(`{}`)
}

// Declared reports whether client capabilities caps allow a server-to-client
// request: sampling/createMessage needs "sampling", roots/list "roots",
// elicitation/create "elicitation" with the mode asked for ("url" only when
// declared; form when "form" is declared or elicitation is {}; MCP
// client/elicitation §Capabilities).
func Declared(caps json.RawMessage, method string, params any) bool {
	var c map[string]json.RawMessage
	if json.Unmarshal(caps, &c) != nil {
		return false
	}
	switch method {
	case "sampling/createMessage":
		return c["sampling"] != nil
	case "roots/list":
		return c["roots"] != nil
	case "elicitation/create":
		raw, ok := c["elicitation"]
		if !ok {
			return false
		}
		var modes map[string]json.RawMessage
		_ = json.Unmarshal(raw, &modes)
		if elicitationMode(params) == "url" {
			return modes["url"] != nil
		}
		return len(modes) == 0 || modes["form"] != nil
	}
	return true
}

// elicitationMode is an elicitation request's mode ("form" when absent).
func elicitationMode(params any) string {
	b, _ := json.Marshal(params)
	var p struct {
		Mode string `json:"mode"`
	}
	_ = json.Unmarshal(b, &p)
	if p.Mode == "" {
		return "form"
	}
	return p.Mode
}

// notify sends a notification on the request's stream.
func (r *Request) notify(method string, params any) error {
	if r.out == nil {
		return ErrNoStream
	}
	msg, err := Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if err != nil {
		return err
	}
	return r.out.send(msg)
}

// Ask implements Peer. A question the client did not declare the capability
// for is ErrNotDeclared. In the 2026 era it is answered from the request's
// inputResponses and state, or recorded and ErrInputRequired returned (see
// mrtr.go). In the 2025 era it is parked as a store row bound to (session,
// credential id, JSON-RPC id) with a TTL, sent on the POST's stream, and the
// row is polled with bounded backoff until the client's answer — which may
// reach any instance — resolves it.
func (r *Request) Ask(ctx context.Context, key string, method string, params any) (json.RawMessage, error) {
	if !Declared(r.ClientCapabilities(), method, params) {
		return nil, ErrNotDeclared
	}
	if r.mrtr != nil {
		return r.mrtr.ask(key, method, params)
	}
	if r.Session == nil || r.out == nil || r.srv == nil {
		return nil, ErrNoStream
	}
	if !r.out.allowed {
		if method == "elicitation/create" && elicitationMode(params) == "url" {
			// MCP 2025-11-25 client/elicitation: without a stream the client
			// is asked to open the URL and retry.
			return nil, &Error{Code: CodeURLElicitationRequired, Message: "URL elicitation required.",
				Data: map[string]any{"elicitations": []any{params}}}
		}
		return nil, ErrNoStream
	}
	id := newParkedID()
	pk := ParkedKey(r.Session.ID, id)
	now := r.srv.opts.Now()
	row := QuestionRow(pk, r.Credential.ID, method, now.Add(r.srv.opts.ParkedTTL).Unix())
	row.Attrs["origin"] = string(r.ID.raw)
	if err := r.srv.opts.Store.Put(ctx, row, store.NotExists()); err != nil {
		return nil, fmt.Errorf("park %s: %w", method, err)
	}
	msg, err := Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if err := r.out.send(msg); err != nil {
		r.withdraw(pk)
		return nil, ErrAskCancelled
	}
	backoff := r.srv.opts.PollMin
	for {
		select {
		case <-ctx.Done():
			r.withdraw(pk)
			return nil, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, r.srv.opts.PollMax)
		it, err := r.srv.opts.Store.Get(ctx, pk)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, ErrAskExpired
		case err != nil:
			if ctx.Err() != nil {
				r.withdraw(pk)
				return nil, ctx.Err()
			}
			continue // a transient read failure: keep waiting until the TTL
		}
		switch it.String("status") {
		case parkedPending:
			continue
		case parkedAnswered:
			if e := it.Bytes("error"); len(e) > 0 {
				var ce ClientError
				_ = json.Unmarshal(e, &ce.Err)
				return nil, &ce
			}
			return json.RawMessage(it.Bytes("result")), nil
		default:
			return nil, ErrAskCancelled
		}
	}
}

// withdraw marks a parked request cancelled (best effort: it expires anyway).
func (r *Request) withdraw(key store.Key) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, _ = r.srv.opts.Store.Update(ctx, key, store.Update{Set: map[string]any{"status": parkedCancelled}},
		store.AttrEquals("status", parkedPending))
}

// answerOp is the write that resolves a parked request with the client's
// answer, guarded so that only the credential that was asked, and only a
// pending question, can be answered.
func answerOp(key store.Key, credentialID string, m *Message) store.Op {
	set := map[string]any{"status": parkedAnswered}
	if m.Error != nil {
		set["error"] = []byte(m.Error)
	} else {
		set["result"] = []byte(m.Result)
	}
	return store.UpdateOp(key, store.Update{Set: set},
		store.AttrEquals("status", parkedPending), store.AttrEquals("credential_id", credentialID))
}

// stringID returns the id as a Go string when it is a JSON string.
func (id ID) stringID() (string, bool) {
	var s string
	if len(id.raw) == 0 || id.raw[0] != '"' || json.Unmarshal(id.raw, &s) != nil {
		return "", false
	}
	return s, true
}
