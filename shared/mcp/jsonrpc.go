package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSON-RPC 2.0 error codes used by MCP (JSON-RPC 2.0 §5.1; MCP basic §Messages).
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeRateLimited answers a rate-limited protocol method (docs/decisions.md
	// "Answers on the wire"), with data.retry_after_s.
	CodeRateLimited = -32000
	// CodeUnauthorized answers a request without a valid credential (HTTP 401).
	CodeUnauthorized = -32001
	// CodeResourceNotFound is the 2025-era resource-not-found code.
	CodeResourceNotFound = -32002
	// CodeURLElicitationRequired asks the client to open URLs and retry.
	CodeURLElicitationRequired = -32042
)

// ID is a JSON-RPC request id: a string or an integer, kept as its exact
// JSON text so it is echoed with the same type and spelling (MCP basic
// §Requests: ids are strings or integers, never null).
type ID struct{ raw json.RawMessage }

// IsZero reports whether the id is absent (a notification).
func (id ID) IsZero() bool { return len(id.raw) == 0 }

// String returns the id's JSON text.
func (id ID) String() string { return string(id.raw) }

// MarshalJSON writes the id's original JSON text (null when absent).
func (id ID) MarshalJSON() ([]byte, error) {
	if id.IsZero() {
		return []byte("null"), nil
	}
	return id.raw, nil
}

// StringID returns an id holding the JSON string s.
func StringID(s string) ID {
	b, _ := json.Marshal(s)
	return ID{raw: b}
}

// IntID returns an id holding the integer n.
func IntID(n int64) ID { return ID{raw: json.RawMessage(fmt.Sprint(n))} }

// Size bounds of the JSON-RPC members Custody stores (issue 8, item 4): a
// method name and an id reach audit rows and parked-request rows, so an
// over-size one is refused -32600 before anything is read or written.
const (
	// MaxMethodBytes bounds a method name (the longest MCP method is 36 bytes).
	MaxMethodBytes = 128
	// MaxIDBytes bounds a request id's JSON text.
	MaxIDBytes = 128
)

// validID reports whether raw is a JSON string or an integer literal of at
// most MaxIDBytes. An integer of any length is an integer (kept as its
// text, so it is echoed exactly); 1.5 and 1e3 are not.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 || len(raw) > MaxIDBytes {
		return false
	}
	switch c := raw[0]; {
	case c == '"':
		_, ok := unquote(raw)
		return ok
	case c == '-' || (c >= '0' && c <= '9'):
		digits := raw
		if c == '-' {
			digits = raw[1:]
		}
		if len(digits) == 0 {
			return false
		}
		for _, d := range digits {
			if d < '0' || d > '9' {
				return false
			}
		}
		return true
	}
	return false
}

// Error is a JSON-RPC error object. As a Go error it is what method handlers
// return to answer with a protocol error.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`

	// httpStatus, when set, is the HTTP status the error is answered with
	// instead of 200 (a params member over its size bound is a 400).
	httpStatus int
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// InvalidParams is the -32602 error with msg.
func InvalidParams(msg string) *Error { return &Error{Code: CodeInvalidParams, Message: msg} }

// Message is one decoded JSON-RPC message: a request (ID and Method), a
// notification (Method only) or a response (ID and Result or Error).
type Message struct {
	ID     ID
	Method string
	// Params are the request's params, decoded once (never nil for a
	// request or notification; Params.Raw is nil when absent).
	Params *Params
	Result json.RawMessage
	Error  json.RawMessage
}

// IsRequest reports whether the message is a request.
func (m *Message) IsRequest() bool { return m.Method != "" && !m.ID.IsZero() }

// IsNotification reports whether the message is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID.IsZero() }

// IsResponse reports whether the message is a client's response.
func (m *Message) IsResponse() bool { return m.Method == "" }

// envelopeMembers are the members of a JSON-RPC 2.0 message (JSON-RPC 2.0
// §4, §5). They are matched exactly: encoding/json would match "Method" and
// let a repeated member's last value win, so a proxy that reads the first
// "method" would see another call than Custody serves (issue 8, item 9).
var envelopeMembers = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// DecodeError is a body that is not acceptable JSON-RPC, with the JSON-RPC
// code to answer (-32700 or -32600) and, when one could be read, the id.
type DecodeError struct {
	Code    int
	Message string
	ID      ID
}

func (e *DecodeError) Error() string { return e.Message }

// Body is a decoded POST body: one message or, for a batch, several.
type Body struct {
	Messages []*Message
	Batch    bool
}

// parseError says why a body that json.Valid refused is not JSON: nesting
// past encoding/json's limit of 10000 levels (valid JSON, but not
// decodable here) or plain invalid JSON.
func parseError(body []byte) *DecodeError {
	var se *json.SyntaxError
	if err := json.Unmarshal(body, new(json.RawMessage)); errors.As(err, &se) && strings.Contains(se.Error(), "exceeded max depth") {
		return &DecodeError{Code: CodeParseError, Message: "Parse error: the body nests arrays or objects more than 10000 levels deep."}
	}
	return &DecodeError{Code: CodeParseError, Message: "Parse error: the body is not valid JSON."}
}

// DecodeBody parses a POST body. Invalid UTF-8 or JSON is -32700; anything
// that is not a JSON-RPC 2.0 message (or array of them) is -32600, including
// null or non-integer ids and the empty array. Whether a batch is allowed is
// decided later, once the session's revision is known.
func DecodeBody(body []byte) (*Body, *DecodeError) {
	if !utf8.Valid(body) {
		return nil, &DecodeError{Code: CodeParseError, Message: "Parse error: the body is not valid UTF-8."}
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || !json.Valid(trimmed) {
		return nil, parseError(trimmed)
	}
	if trimmed[0] != '[' {
		m, err := decodeMessage(trimmed)
		if err != nil {
			return nil, err
		}
		return &Body{Messages: []*Message{m}}, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(trimmed, &elems); err != nil {
		return nil, &DecodeError{Code: CodeParseError, Message: "Parse error: the body is not valid JSON."}
	}
	if len(elems) == 0 {
		return nil, &DecodeError{Code: CodeInvalidRequest, Message: "Invalid request: an empty batch."}
	}
	b := &Body{Batch: true, Messages: make([]*Message, len(elems))}
	for i, e := range elems {
		m, err := decodeMessage(e)
		if err != nil {
			return nil, &DecodeError{Code: CodeInvalidRequest, Message: err.Message}
		}
		b.Messages[i] = m
	}
	return b, nil
}

func decodeMessage(raw json.RawMessage) (*Message, *DecodeError) {
	raw = bytes.TrimSpace(raw)
	notObject := &DecodeError{Code: CodeInvalidRequest, Message: "Invalid request: a JSON-RPC message must be an object."}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, notObject
	}
	members, ok := objectMembers(raw)
	if !ok {
		return nil, notObject
	}
	var w [len(envelopeMembers)]json.RawMessage
	for _, mb := range members {
		known := -1
		for i, name := range envelopeMembers {
			if mb.key == name {
				known = i
				break
			}
			if strings.EqualFold(mb.key, name) {
				return nil, &DecodeError{Code: CodeInvalidRequest,
					Message: "Invalid request: JSON-RPC member names are case-sensitive; \"" + name + "\" is spelled in lower case."}
			}
		}
		if known < 0 {
			continue // JSON-RPC 2.0 names no other members; they carry nothing
		}
		if w[known] != nil {
			return nil, &DecodeError{Code: CodeInvalidRequest,
				Message: "Invalid request: the member \"" + envelopeMembers[known] + "\" appears more than once."}
		}
		w[known] = mb.value
	}
	jsonrpc, id, method, params, result, rpcErr := w[0], w[1], w[2], w[3], w[4], w[5]
	if string(jsonrpc) != `"2.0"` {
		return nil, &DecodeError{Code: CodeInvalidRequest, Message: `Invalid request: "jsonrpc" must be "2.0".`}
	}
	m := &Message{}
	if id != nil {
		if !validID(id) {
			if len(id) > MaxIDBytes {
				return nil, &DecodeError{Code: CodeInvalidRequest, Message: "Invalid request: the id is longer than " + strconv.Itoa(MaxIDBytes) + " bytes."}
			}
			return nil, &DecodeError{Code: CodeInvalidRequest, Message: "Invalid request: the id must be a string or an integer."}
		}
		m.ID = ID{raw: id}
	}
	if method != nil {
		name, ok := stringOf(method)
		if !ok || name == "" {
			return nil, &DecodeError{Code: CodeInvalidRequest, Message: `Invalid request: "method" must be a non-empty string.`, ID: m.ID}
		}
		if len(name) > MaxMethodBytes {
			return nil, &DecodeError{Code: CodeInvalidRequest, Message: "Invalid request: the method name is longer than " + strconv.Itoa(MaxMethodBytes) + " bytes.", ID: m.ID}
		}
		m.Method = name
		if result != nil || rpcErr != nil {
			return nil, &DecodeError{Code: CodeInvalidRequest, Message: "Invalid request: a request cannot carry a result or an error.", ID: m.ID}
		}
		m.Params = parseParams(nullToNil(params))
		return m, nil
	}
	// A response from the client: an id and exactly one of result and error.
	if m.ID.IsZero() || (result == nil) == (rpcErr == nil) {
		return nil, &DecodeError{Code: CodeInvalidRequest, Message: "Invalid request: not a JSON-RPC request, notification or response."}
	}
	m.Result, m.Error = result, rpcErr
	return m, nil
}

func nullToNil(raw json.RawMessage) json.RawMessage {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return nil
	}
	return raw
}

// response is a JSON-RPC response as written.
type response struct {
	JSONRPC string `json:"jsonrpc"`
	ID      *ID    `json:"id,omitempty"`
	Result  any    `json:"result,omitempty"`
	Error   *Error `json:"error,omitempty"`
}

// encodeResponse marshals a result or an error for id. An absent id is
// omitted (an id-less error, as the 2025-11-25 schema allows).
func encodeResponse(id ID, result any, rpcErr *Error) []byte {
	if enc, ok := result.(Encoded); ok && rpcErr == nil {
		b := make([]byte, 0, len(enc)+48)
		b = append(b, `{"jsonrpc":"2.0",`...)
		if !id.IsZero() {
			b = append(b, `"id":`...)
			b = append(b, id.raw...)
			b = append(b, ',')
		}
		b = append(b, `"result":`...)
		b = append(b, enc...)
		return append(b, '}')
	}
	r := response{JSONRPC: "2.0", Result: result, Error: rpcErr}
	if !id.IsZero() {
		r.ID = &id
	}
	if rpcErr == nil && result == nil {
		r.Result = struct{}{}
	}
	b, err := Marshal(r)
	if err != nil {
		b, _ = Marshal(response{JSONRPC: "2.0", ID: r.ID, Error: &Error{Code: CodeInternalError, Message: "Internal error."}})
	}
	return b
}

// Marshal encodes JSON without HTML escaping: answers are JSON-RPC, not HTML,
// and "<" in a quote stays "<".
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
