package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// protocolVersion is the revision the bench asks for in initialize: the
// newest of the 2025 era, served by Custody and both SDKs. Whatever the
// server answers is then sent as MCP-Protocol-Version.
const protocolVersion = "2025-11-25"

// session is one MCP client session over streamable HTTP: what a worker
// holds after initialize. It is not safe for concurrent use; each worker
// has its own (they share the http.Client and so its connection pool).
type session struct {
	http    *http.Client
	url     string
	key     string // bearer key; empty for the peers
	id      string // Mcp-Session-Id from initialize
	version string // negotiated protocol revision
	nextID  int64
	buf     bytes.Buffer // response body, reused
	// era2026 speaks 2026-07-28: no handshake, _meta on every request.
	era2026 bool
	tool    string // the tool of the request being sent (Mcp-Name)
	caseID  string // its case_id argument (Mcp-Param-Case-Id), 2026-07-28 only
}

// rev2026 and meta2026 are the 2026-07-28 revision and the request _meta
// the bench sends with it (no client capabilities).
const (
	rev2026  = "2026-07-28"
	meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"custody-bench","version":"1"}}`
)

// callError is a failed call, classified for the error counts.
type callError struct {
	Kind   string // "transport", "http 404", "jsonrpc -32602", "isError RATE_LIMITED", "bad response"
	Detail string
}

func (e *callError) Error() string { return e.Kind + ": " + e.Detail }

func newSession(hc *http.Client, url, key string, era2026 bool) *session {
	return &session{http: hc, url: url, key: key, era2026: era2026}
}

// initialize runs the handshake: initialize, then notifications/initialized.
// The 2026-07-28 revision has none: the session only remembers its revision.
func (s *session) initialize(ctx context.Context) error {
	s.id, s.version = "", ""
	if s.era2026 {
		s.version = rev2026
		return nil
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"custody-bench","version":"1"}}}`, protocolVersion)
	resp, raw, err := s.post(ctx, []byte(body))
	if err != nil {
		return err
	}
	var r struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.Result.ProtocolVersion == "" {
		return &callError{Kind: "bad response", Detail: "initialize: " + truncate(string(raw), 200)}
	}
	s.id = resp.Header.Get("Mcp-Session-Id")
	s.version = r.Result.ProtocolVersion
	_, _, err = s.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return err
}

// callTool calls name with arguments given as a JSON object literal. It
// returns the whole JSON-RPC response (valid until the session's next
// request), or a *callError for a transport failure, a status other than
// 200, a JSON-RPC error or an isError result.
func (s *session) callTool(ctx context.Context, name, argsJSON string) (json.RawMessage, error) {
	s.nextID++
	// A fresh body each time: the transport may still be writing the last
	// one when its response has arrived.
	b := make([]byte, 0, 128+len(name)+len(argsJSON))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, s.nextID, 10)
	b = append(b, `,"method":"tools/call","params":{"name":"`...)
	b = append(b, name...)
	b = append(b, `","arguments":`...)
	b = append(b, argsJSON...)
	if s.era2026 {
		b = append(b, ',')
		b = append(b, meta2026...)
	}
	b = append(b, `}}`...)
	s.tool = name
	s.caseID = ""
	if s.era2026 {
		// Custody annotates a matter tool's case_id with x-mcp-header
		// (SEP-2243): a 2026-07-28 request repeats it as Mcp-Param-Case-Id.
		var args struct {
			CaseID string `json:"case_id"`
		}
		if json.Unmarshal([]byte(argsJSON), &args) == nil {
			s.caseID = args.CaseID
		}
	}
	_, raw, err := s.post(ctx, b)
	if err != nil {
		return nil, err
	}
	var r struct {
		Result struct {
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, &callError{Kind: "bad response", Detail: truncate(string(raw), 200)}
	}
	if r.Error != nil {
		return nil, &callError{Kind: "jsonrpc " + strconv.Itoa(r.Error.Code), Detail: r.Error.Message}
	}
	if r.Result.IsError {
		return nil, refusal(raw)
	}
	return raw, nil
}

// refusal names an isError result by Custody's refusal class when there is
// one (structuredContent.error.class, docs/decisions.md), else by its text.
func refusal(raw []byte) *callError {
	var r struct {
		Result struct {
			StructuredContent struct {
				Error struct {
					Class   string `json:"class"`
					Message string `json:"message"`
				} `json:"error"`
			} `json:"structuredContent"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	_ = json.Unmarshal(raw, &r)
	e := &callError{Kind: "isError", Detail: r.Result.StructuredContent.Error.Message}
	if c := r.Result.StructuredContent.Error.Class; c != "" {
		e.Kind += " " + c
	}
	if e.Detail == "" && len(r.Result.Content) > 0 {
		e.Detail = r.Result.Content[0].Text
	}
	e.Detail = truncate(e.Detail, 200)
	return e
}

// close ends the session with DELETE (best effort: servers may refuse it).
func (s *session) close(ctx context.Context) {
	if s.id == "" {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.url, nil)
	if err != nil {
		return
	}
	s.headers(req)
	if resp, err := s.http.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func (s *session) headers(req *http.Request) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.key != "" {
		req.Header.Set("Authorization", "Bearer "+s.key)
	}
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
	if s.version != "" {
		req.Header.Set("MCP-Protocol-Version", s.version)
	}
	if s.era2026 && s.tool != "" {
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", s.tool)
		if s.caseID != "" {
			req.Header.Set("Mcp-Param-Case-Id", s.caseID)
		}
	}
}

// post sends one JSON-RPC message and reads the whole answer. A response
// comes back as application/json or as a text/event-stream whose data
// lines carry it; either way the JSON-RPC message is returned. A
// notification's 202 returns no message.
func (s *session) post(ctx context.Context, body []byte) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	s.headers(req)
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, nil, &callError{Kind: "transport", Detail: err.Error()}
	}
	s.buf.Reset()
	_, err = s.buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil {
		return resp, nil, &callError{Kind: "transport", Detail: err.Error()}
	}
	raw := s.buf.Bytes()
	if resp.StatusCode == http.StatusAccepted {
		return resp, nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return resp, nil, &callError{Kind: "http " + strconv.Itoa(resp.StatusCode), Detail: truncate(string(raw), 200)}
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		msg, err := sseMessage(raw)
		if err != nil {
			return resp, nil, &callError{Kind: "bad response", Detail: err.Error()}
		}
		raw = msg
	}
	return resp, raw, nil
}

// sseMessage returns the JSON-RPC response in an SSE body: the data of the
// first event whose data carries a result or an error (a server may send
// notifications before it).
func sseMessage(body []byte) ([]byte, error) {
	for _, event := range bytes.Split(bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n")), []byte("\n\n")) {
		var data []byte
		for _, line := range bytes.Split(event, []byte("\n")) {
			if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				if len(data) > 0 {
					data = append(data, '\n')
				}
				data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
			}
		}
		if bytes.Contains(data, []byte(`"result"`)) || bytes.Contains(data, []byte(`"error"`)) {
			return data, nil
		}
	}
	return nil, errors.New("no JSON-RPC response in the event stream: " + truncate(string(body), 200))
}

func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
