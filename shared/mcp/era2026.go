package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// The 2026-07-28 era (PROTOCOL.md "2026-07-28 specifics"): no handshake and
// no session; every request carries its protocol revision and the client's
// capabilities in params._meta, and is decided on its own. One /mcp serves
// it beside the 2025 era, chosen per request, body first.

// Keys of the 2026-07-28 _meta objects this code names outside a struct tag
// (MCP 2026-07-28 schema RequestMetaObject, server/discover result).
const (
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	metaServerInfo      = "io.modelcontextprotocol/serverInfo"
)

// JSON-RPC codes of the 2026 era.
const (
	CodeHeaderMismatch             = -32020
	CodeMissingRequiredCapability  = -32021
	CodeUnsupportedProtocolVersion = -32022
)

// SupportedRevisions are every revision Custody serves, newest first: what
// server/discover lists and what -32022 answers with (one source for both).
var SupportedRevisions = append([]Revision{Rev20260728}, LegacyRevisions...)

// removed2026 are the methods the 2026-07-28 revision removed or that
// Custody does not serve in it: answered 404 + -32601 like unknown ones.
var removed2026 = map[string]bool{
	"initialize": true, "ping": true, "logging/setLevel": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"subscriptions/listen": true, "notifications/initialized": true, "initialized": true,
}

// only2026 are methods that exist only in the 2026 era (unknown to 2025 clients).
var only2026 = map[string]bool{"server/discover": true}

// requestMeta is the 2026 request _meta.
type requestMeta struct {
	ProtocolVersion    *string         `json:"io.modelcontextprotocol/protocolVersion"`
	ClientCapabilities json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
	LogLevel           string          `json:"io.modelcontextprotocol/logLevel"`
}

// metaOf reads params._meta; ok is false when there is none.
func metaOf(params json.RawMessage) (raw map[string]json.RawMessage, ok bool) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || p.Meta == nil {
		return nil, false
	}
	return p.Meta, true
}

// isEra2026 decides a POST's era, body first (PROTOCOL.md): a request whose
// _meta carries io.modelcontextprotocol/protocolVersion is of the 2026-07-28
// era, and so is one without a session whose MCP-Protocol-Version header
// names a revision that is not of the 2025 era (it is then refused for its
// missing _meta with the 2026 codes).
//
// A 2026 request's Mcp-Session-Id header is ignored (the revision has no
// sessions); without _meta, a session header keeps the request legacy.
func isEra2026(r *http.Request, b *Body) bool {
	params := b.Messages[0].Params
	if bytes.Contains(params, []byte(metaProtocolVersion)) { // parse only when it may be there
		if meta, ok := metaOf(params); ok && meta[metaProtocolVersion] != nil {
			return true
		}
	}
	rev, ok := protocolHeader(r)
	return ok && !rev.IsLegacy() && r.Header.Get(headerSessionID) == ""
}

// decodeHeaderValue decodes an Mcp-Name or Mcp-Method value, which may be
// "=?base64?<standard base64>?=" for values that are not plain visible ASCII.
func decodeHeaderValue(v string) (string, bool) {
	if enc, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if enc, ok = strings.CutSuffix(enc, "?="); ok {
			b, err := base64.StdEncoding.DecodeString(enc)
			if err != nil {
				return "", false
			}
			return string(b), true
		}
	}
	return v, true
}

// nameOf returns the name a method's Mcp-Name header must carry.
func nameOf(method string, params json.RawMessage) (string, bool) {
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	_ = json.Unmarshal(params, &p)
	switch method {
	case "tools/call", "prompts/get":
		return p.Name, true
	case "resources/read":
		return p.URI, true
	}
	return "", false
}

// check2026 validates a 2026 request's transport fields in the order the
// revision prescribes (PROTOCOL.md "body first"): the revision header, the
// _meta fields, their agreement, the revision itself, then the Mcp-Method
// and Mcp-Name headers. It returns the parsed _meta or the refusal, which
// is answered with HTTP 400.
func check2026(r *http.Request, m *Message) (*requestMeta, *Error) {
	bad := func(code int, msg string, data any) *Error {
		return &Error{Code: code, Message: msg, Data: data}
	}
	hdr, present := protocolHeader(r)
	if !present || hdr == "" {
		return nil, bad(CodeHeaderMismatch, "Bad request: the MCP-Protocol-Version header is required.", nil)
	}
	var meta requestMeta
	var p struct {
		Meta *requestMeta `json:"_meta"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil || p.Meta == nil || p.Meta.ProtocolVersion == nil ||
		len(p.Meta.ClientCapabilities) == 0 || !isJSONObject(p.Meta.ClientCapabilities) {
		return nil, bad(CodeInvalidParams,
			"Invalid params: params._meta must carry io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities.", nil)
	}
	meta = *p.Meta
	if Revision(*meta.ProtocolVersion) != hdr {
		return nil, bad(CodeHeaderMismatch, "Bad request: MCP-Protocol-Version differs from params._meta's protocol version.", nil)
	}
	if hdr != Rev20260728 {
		return nil, bad(CodeUnsupportedProtocolVersion, "Unsupported protocol version.",
			map[string]any{"supported": SupportedRevisions, "requested": *meta.ProtocolVersion})
	}
	if meta.LogLevel != "" && !ValidLogLevel(meta.LogLevel) {
		return nil, bad(CodeInvalidParams, "Invalid params: io.modelcontextprotocol/logLevel is not a logging level.", nil)
	}
	if hm := r.Header.Get("Mcp-Method"); hm != "" || m.IsRequest() {
		v, ok := decodeHeaderValue(hm)
		if !ok || v != m.Method {
			return nil, bad(CodeHeaderMismatch, "Bad request: the Mcp-Method header must equal the body's method.", nil)
		}
	}
	if want, needs := nameOf(m.Method, m.Params); needs {
		v, ok := decodeHeaderValue(r.Header.Get("Mcp-Name"))
		if !ok || v != want || v == "" {
			return nil, bad(CodeHeaderMismatch, "Bad request: the Mcp-Name header must equal the body's name.", nil)
		}
	}
	return &meta, nil
}

// post2026 serves one 2026-07-28 request.
func (s *Server) post2026(w http.ResponseWriter, r *http.Request, b *Body) {
	m := b.Messages[0]
	if b.Batch {
		writeError(w, http.StatusBadRequest, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Invalid request: JSON-RPC batches are not part of revision 2026-07-28."})
		return
	}
	if m.IsResponse() {
		writeError(w, http.StatusBadRequest, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Bad request: revision 2026-07-28 asks no questions on streams; answer them with inputResponses."})
		return
	}
	meta, serr := check2026(r, m)
	if serr != nil {
		writeError(w, http.StatusBadRequest, m.ID, serr)
		return
	}
	x, ok := s.admit(w, r, "", s.laneOf(b), m.ID)
	if !ok {
		return
	}
	x.revision = Rev20260728
	md, known := s.methods[m.Method]
	if !known || removed2026[m.Method] {
		if m.IsNotification() && m.Method == "notifications/cancelled" {
			known = true // closing the stream is the 2026 cancellation; nothing to do
		} else {
			s.httpRefusal(x, m.Method, http.StatusNotFound, m.ID, &Error{Code: CodeMethodNotFound, Message: "Method not found."})
			return
		}
	}
	if m.IsNotification() {
		rec := s.notificationAudit(x, m)
		x.audits = append(x.audits, rec)
		x.count = s.countIfAllowed(x, 1)
		s.finish(x, http.StatusAccepted, nil, ID{})
		return
	}
	if !md.RatesItself && !x.adm.Rate.Allowed {
		s.rateLimited(x, m)
		return
	}
	out := newStream(x.w, acceptsSSE(x.r.Header.Values("Accept")))
	req := s.newRequest(x, m, out)
	req.meta = meta
	result, rpcErr, rec := s.dispatch(x, md, req)
	x.audits = append(x.audits, rec)
	x.count = s.countIfAllowed(x, 1)
	status := http.StatusOK
	var body []byte
	switch {
	case rpcErr != nil:
		// A missing client capability (the tool's Spec.Requires, checked by
		// the tools pipeline before the handler runs) is answered as a plain
		// 400 (PROTOCOL.md "body first", step 4).
		if rpcErr.Code == CodeMissingRequiredCapability {
			status = http.StatusBadRequest
		}
		body = encodeResponse(m.ID, nil, rpcErr)
	default:
		body = encodeResponse(m.ID, stamp2026(result, md.Cacheable), nil)
	}
	if !out.isStarted() || status != http.StatusOK {
		s.finish(x, status, body, m.ID)
		return
	}
	if err := s.commit(x); err != nil {
		s.opts.Logger.ErrorContext(x.r.Context(), "commit failed", "requestId", x.reqID, "err", err)
		body = encodeResponse(m.ID, nil, &Error{Code: CodeInternalError,
			Message: "The request could not be recorded, so it was not completed; retry shortly."})
	}
	s.logOutcome(x, http.StatusOK)
	_ = out.send(body)
}

// typedResult is an encoded 2026 result that carries its own resultType
// (input_required): stamp2026 passes it through untouched, cache fields
// included, since an answer that asks for input must not be reused.
type typedResult Encoded

// stamp2026 adds the fields every 2026 result carries: resultType
// "complete" and, on cacheable results (discover, lists, reads), ttlMs and
// cacheScope — "private", since every answer here depends on the
// credential (PROTOCOL.md). A typedResult is returned as it is.
func stamp2026(result any, cacheable bool) Encoded {
	if typed, ok := result.(typedResult); ok {
		return Encoded(typed)
	}
	raw, ok := result.(Encoded)
	if !ok {
		b, err := Marshal(result)
		if err != nil || len(b) == 0 || b[0] != '{' {
			return Encoded(`{"resultType":"complete"}`)
		}
		raw = b
	}
	var head []byte
	head = append(head, `{"resultType":"complete"`...)
	if cacheable {
		head = append(head, `,"ttlMs":`+strconv.Itoa(cacheTTLMs)+`,"cacheScope":"private"`...)
	}
	rest := bytes.TrimPrefix(bytes.TrimSpace(raw), []byte("{"))
	if len(bytes.TrimSpace(rest)) > 1 {
		head = append(head, ',')
	}
	return append(head, rest...)
}

// cacheTTLMs is how long a client may reuse a list, read or discover answer
// (the record changes rarely; a minute bounds staleness).
const cacheTTLMs = 60000

// discover answers server/discover (2026-07-28): the revisions served, the
// capabilities, server info and instructions, cacheable per credential.
func (s *Server) discover(ctx context.Context, req *Request) (any, error) {
	info := s.opts.ServerInfo
	return map[string]any{
		"supportedVersions": SupportedRevisions,
		"capabilities":      s.capabilities2026(),
		"instructions":      s.instructionsFor(ctx, req),
		"_meta":             map[string]any{metaServerInfo: map[string]string{"name": info.Name, "version": info.Version}},
	}, nil
}

// capabilities2026 are the capabilities the 2026 era serves: no resource
// subscriptions and no list_changed (those need subscriptions/listen,
// which Custody does not serve yet).
func (s *Server) capabilities2026() ServerCapabilities {
	c := s.opts.Capabilities
	if c.Resources != nil {
		c.Resources = &ResourcesCapability{}
	}
	if c.Tools != nil {
		c.Tools = &ListChangedCapability{}
	}
	if c.Prompts != nil {
		c.Prompts = &ListChangedCapability{}
	}
	return c
}
