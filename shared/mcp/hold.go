package mcp

import (
	"encoding/json"
	"errors"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/store"
)

// A method that holds its request open while durable work goes on
// elsewhere (tasks/result blocks until its task is terminal, docs/protocol.md
// "Tasks") answers on the POST's text/event-stream: it opens the stream at
// once with its priming event, so that a proxy sees bytes and the client an
// event id; keeps it alive with heartbeat comments; sends the notifications
// and server-to-client requests related to the work; and returns its result
// as the stream's last event, after the request's one commit like any
// answer.

// OpenStream starts the request's answer as text/event-stream now: status
// 200, the SSE headers and the priming event (MCP basic/transports §Sending
// Messages). It returns ErrNoStream when the request has no stream (inside
// a batch) or the client does not accept text/event-stream.
func (r *Request) OpenStream() error {
	if r.out == nil {
		return ErrNoStream
	}
	return r.out.start()
}

// Heartbeat writes an SSE comment on the request's started stream, so that
// idle proxies keep it (docs/decisions.md constants: every 15 s). An error
// means the client is gone.
func (r *Request) Heartbeat() error {
	if r.out == nil {
		return ErrNoStream
	}
	return r.out.comment("heartbeat")
}

// Notify sends a notification related to the request on its stream.
func (r *Request) Notify(method string, params any) error { return r.notify(method, params) }

// SendRequest sends a server-to-client request with the JSON-RPC id id on
// the request's stream. The question must already be parked where the
// client's answer will find it (QuestionRow, Options.BoundQuestions).
func (r *Request) SendRequest(id, method string, params any) error {
	if r.out == nil {
		return ErrNoStream
	}
	msg, err := Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return err
	}
	return r.out.send(msg)
}

// BoundQuestions resolves the client's answer to a question that belongs
// to durable work instead of to a session (Options.BoundQuestions).
type BoundQuestions func(cred *auth.Credential, id string) (key store.Key, after []Effect, ok bool)

// QuestionRow is the row of a question waiting for the client's answer:
// pending, asked of the credential credentialID, expiring at expiresAt
// (epoch seconds). A session's questions (Peer.Ask) and questions bound to
// durable work (a task's, Options.BoundQuestions) have this one shape, so
// the client's answer is judged and written alike wherever it is parked.
func QuestionRow(key store.Key, credentialID, method string, expiresAt int64) store.Item {
	return store.Item{PK: key.PK, SK: key.SK, Version: 1, ExpiresAt: expiresAt,
		Attrs: map[string]any{"credential_id": credentialID, "method": method, "status": parkedPending}}
}

// ErrQuestionWithdrawn is QuestionAnswer's error for a question that was
// cancelled or rejected instead of answered.
var ErrQuestionWithdrawn = errors.New("mcp: the question was withdrawn")

// QuestionAnswer reads a question row: answered is false while it is
// pending; an answered question gives the client's result, or its error as
// a *ClientError; a withdrawn one ErrQuestionWithdrawn.
func QuestionAnswer(it store.Item) (answered bool, result json.RawMessage, err error) {
	switch it.String("status") {
	case parkedPending:
		return false, nil, nil
	case parkedAnswered:
		if e := it.Bytes("error"); len(e) > 0 {
			var ce ClientError
			_ = json.Unmarshal(e, &ce.Err)
			return true, nil, &ce
		}
		return true, json.RawMessage(it.Bytes("result")), nil
	}
	return true, nil, ErrQuestionWithdrawn
}
