package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The 2026-07-28 era (docs/protocol.md "2026-07-28 specifics"): no handshake and
// no session; every request carries its protocol revision and the client's
// capabilities in params._meta, and is decided on its own. One /mcp serves
// it beside the 2025 era, chosen per request, body first.

// Keys of the 2026-07-28 _meta objects this code names outside a struct tag
// (MCP 2026-07-28 schema RequestMetaObject, server/discover result).
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaLogLevel           = "io.modelcontextprotocol/logLevel"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// ExtensionTasks is the identifier of the tasks extension of the 2026-07-28
// era (modelcontextprotocol/ext-tasks, specification "Extension
// Identifier"): a client declares it in its per-request capabilities'
// extensions, the server in server/discover's.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// DeclaresExtension reports whether client capabilities caps declare the
// extension id: capabilities.extensions[id] is an object (the extensions
// define their settings inside it; any object, {} included, declares it).
func DeclaresExtension(caps json.RawMessage, id string) bool {
	var c struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(caps, &c) != nil {
		return false
	}
	return isJSONObject(c.Extensions[id])
}

// MissingExtension is the -32021 refusal of a 2026 request that needs the
// extension id and did not declare it: data.requiredCapabilities names it
// in the shape of the client capabilities (modelcontextprotocol/ext-tasks,
// "Capability Negotiation").
func MissingExtension(id, message string) *Error {
	return &Error{Code: CodeMissingRequiredCapability, Message: message,
		Data: map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{id: struct{}{}}}}}
}

// JSON-RPC codes of the 2026 era.
const (
	CodeHeaderMismatch             = -32020
	CodeMissingRequiredCapability  = -32021
	CodeUnsupportedProtocolVersion = -32022
)

// SupportedRevisions are every revision Custody serves, newest first: what
// server/discover lists and what -32022 answers with (one source for both).
var SupportedRevisions = append([]Revision{Rev20260728}, LegacyRevisions...)

// requestMeta is the 2026 request _meta, read from the params' members.
type requestMeta struct {
	ProtocolVersion    string
	ClientCapabilities json.RawMessage
	LogLevel           string
}

// isEra2026 decides a POST's era, body first (docs/protocol.md): a request
// whose _meta carries io.modelcontextprotocol/protocolVersion is of the
// 2026-07-28 era, and so is one without a session whose
// MCP-Protocol-Version header names a revision that is not of the 2025 era
// (it is then refused for its missing _meta with the 2026 codes).
//
// A 2026 request's Mcp-Session-Id header is ignored (the revision has no
// sessions); without _meta, a session header keeps the request legacy.
func isEra2026(r *http.Request, b *Body) bool {
	if p := b.Messages[0].Params; p != nil && p.Meta(metaProtocolVersion) != nil {
		return true
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

// check2026 validates a 2026 request's transport fields in the order the
// revision prescribes (docs/protocol.md "body first"): the revision header,
// the _meta fields, their agreement, the revision itself, then the
// Mcp-Method header and, for a method whose table row names a NameParam,
// the Mcp-Name header. It returns the parsed _meta or the refusal, which
// is answered with HTTP 400.
func (s *Server) check2026(r *http.Request, m *Message) (*requestMeta, *Error) {
	bad := func(code int, msg string, data any) *Error {
		return &Error{Code: code, Message: msg, Data: data}
	}
	hdr, present := protocolHeader(r)
	if !present || hdr == "" {
		return nil, bad(CodeHeaderMismatch, "Bad request: the MCP-Protocol-Version header is required.", nil)
	}
	p := m.Params
	version, versionOK := stringOf(p.Meta(metaProtocolVersion))
	caps := p.Meta(metaClientCapabilities)
	if !p.IsObject() || !versionOK || len(caps) == 0 || !isJSONObject(caps) {
		return nil, bad(CodeInvalidParams,
			"Invalid params: params._meta must carry io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities.", nil)
	}
	meta := &requestMeta{ProtocolVersion: version, ClientCapabilities: caps}
	if Revision(version) != hdr {
		return nil, bad(CodeHeaderMismatch, "Bad request: MCP-Protocol-Version differs from params._meta's protocol version.", nil)
	}
	if hdr != Rev20260728 {
		return nil, bad(CodeUnsupportedProtocolVersion, "Unsupported protocol version.",
			map[string]any{"supported": SupportedRevisions, "requested": version})
	}
	if raw := p.Meta(metaLogLevel); raw != nil {
		level, ok := stringOf(raw)
		if !ok || (level != "" && !ValidLogLevel(level)) {
			return nil, bad(CodeInvalidParams, "Invalid params: io.modelcontextprotocol/logLevel is not a logging level.", nil)
		}
		meta.LogLevel = level
	}
	if hm := r.Header.Get("Mcp-Method"); hm != "" || m.IsRequest() {
		v, ok := decodeHeaderValue(hm)
		if !ok || v != m.Method {
			return nil, bad(CodeHeaderMismatch, "Bad request: the Mcp-Method header must equal the body's method.", nil)
		}
	}
	md, known := s.method(m.Method, true)
	if known && md.NameParam != "" {
		want, _ := p.String(md.NameParam)
		v, ok := decodeHeaderValue(strings.TrimSpace(r.Header.Get("Mcp-Name")))
		if !ok || v != want || v == "" {
			return nil, bad(CodeHeaderMismatch, "Bad request: the Mcp-Name header must equal the body's "+md.NameParam+".", nil)
		}
	}
	if known && md.ParamHeaders != nil {
		if e := checkParamHeaders(r, md.ParamHeaders(p)); e != nil {
			return nil, e
		}
	}
	return meta, nil
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
	meta, serr := s.check2026(r, m)
	if serr != nil {
		writeError(w, http.StatusBadRequest, m.ID, serr)
		return
	}
	x, ok := s.admit(w, r, admitSpec{lane: s.laneOf(b, true), cost: 1, id: m.ID})
	if !ok {
		return
	}
	defer x.done()
	x.revision = Rev20260728
	if m.IsNotification() {
		if n, known := s.notifications[m.Method]; !known || (n.Eras != 0 && n.Eras&Era2026 == 0) {
			s.httpRefusal(x, m.Method, http.StatusNotFound, m.ID, errMethodNotFound())
			return
		}
		s.serveNotification(x, m, true)
		return
	}
	md, known := s.method(m.Method, true)
	if !known {
		s.httpRefusal(x, m.Method, http.StatusNotFound, m.ID, errMethodNotFound())
		return
	}
	if !md.RatesItself && !x.adm.Rate.Allowed {
		s.rateLimited(x, m)
		return
	}
	out := newStream(x.w, s.streams(x.r))
	c := s.call(x, m, out, meta)
	x.count = s.countIfAllowed(x, 1)
	// A missing client capability (the tool's Spec.Requires, checked by the
	// tools pipeline before the handler runs) is answered as a plain 400
	// (docs/protocol.md "body first", step 4).
	if c.rpcErr != nil && c.rpcErr.Code == CodeMissingRequiredCapability {
		c.status = http.StatusBadRequest
	}
	s.answer(x, c, out)
}

// TypedResult is an encoded 2026 result that carries its own resultType
// (input_required, or the tasks extension's "task"): stamp2026 passes it
// through untouched, cache fields included, since an answer that asks for
// input or names a task must not be reused.
type TypedResult Encoded

// stamp2026 adds the fields every 2026 result carries: resultType
// "complete" and, on cacheable results (discover, lists, reads), ttlMs and
// cacheScope — "private", since every answer here depends on the
// credential (docs/protocol.md). A TypedResult is returned as it is.
func stamp2026(result any, cacheable bool) Encoded {
	if typed, ok := result.(TypedResult); ok {
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

// Result2026 is a result as the 2026-07-28 era answers it, resultType
// "complete" first: what a method of the era would have answered, for a
// result kept to be answered later (a task's stored CallToolResult, which
// the tasks extension's tasks/get inlines).
func Result2026(result Encoded) Encoded { return stamp2026(result, false) }

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
// which Custody does not serve yet), and no v1 tasks slot: where tasks are
// served, the era serves them as the io.modelcontextprotocol/tasks
// extension, whose entry is the empty object (the extension defines no
// settings; a client that reads {} as "supported" must find exactly that).
func (s *Server) capabilities2026() ServerCapabilities {
	c := s.opts.Capabilities
	if c.Tasks != nil {
		c.Extensions = map[string]struct{}{ExtensionTasks: {}}
	}
	c.Tasks = nil
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

// ParamHeader is one Mcp-Param-* header a 2026-era request must carry
// (MCP 2026-07-28 transports, SEP-2243): the header's name suffix and the
// value of the parameter it mirrors as the body holds it.
type ParamHeader struct {
	// Name follows "Mcp-Param-" in the header's name.
	Name string
	// Value is the body's value as header text: a string as it is, a
	// number or boolean as its JSON text.
	Value string
	// Present reports whether the body holds the parameter (and not null).
	Present bool
	// Invalid marks a body value that cannot be a header (an object or an
	// array): such a request is refused.
	Invalid bool
}

// ParamHeaderOf reads the member prop of params.arguments for the header
// suffix name.
func ParamHeaderOf(name string, p *Params, prop string) ParamHeader {
	h := ParamHeader{Name: name}
	args, ok := objectMembers(p.Get("arguments"))
	if !ok {
		return h
	}
	raw := lookup(args, prop)
	if isNull(raw) {
		return h
	}
	h.Present = true
	switch raw[0] {
	case '"':
		h.Value, _ = unquote(raw)
	case '{', '[':
		h.Invalid = true
	default:
		h.Value = string(raw)
	}
	return h
}

// checkParamHeaders holds a 2026 request's Mcp-Param-* headers to its body:
// each annotated parameter the body carries must come as its header, equal
// after decoding (a value "=?base64?<standard base64 with padding>?=" is
// Base64, anything else literal); a header for a parameter the body lacks,
// a missing, mismatched or undecodable one is 400 + -32020.
func checkParamHeaders(r *http.Request, want []ParamHeader) *Error {
	for _, h := range want {
		vals, sent := r.Header[http.CanonicalHeaderKey("Mcp-Param-"+h.Name)]
		switch {
		case h.Invalid:
			return &Error{Code: CodeHeaderMismatch, Message: "Bad request: the parameter behind Mcp-Param-" + h.Name + " cannot be carried in a header."}
		case !h.Present && sent:
			return &Error{Code: CodeHeaderMismatch, Message: "Bad request: the Mcp-Param-" + h.Name + " header names a parameter the body does not carry."}
		case !h.Present:
			continue
		case !sent || len(vals) != 1:
			return &Error{Code: CodeHeaderMismatch, Message: "Bad request: the Mcp-Param-" + h.Name + " header is required: it must repeat the body's parameter."}
		}
		v, ok := decodeParamValue(strings.TrimSpace(vals[0]))
		if !ok || v != h.Value {
			return &Error{Code: CodeHeaderMismatch, Message: "Bad request: the Mcp-Param-" + h.Name + " header must equal the body's parameter."}
		}
	}
	return nil
}

// decodeParamValue decodes an Mcp-Param-* value: "=?base64?…?=" is
// standard Base64 with its padding (a value without the exact prefix and
// suffix is literal); ok is false for Base64 that does not decode or
// decodes to something that is not UTF-8.
func decodeParamValue(v string) (string, bool) {
	enc, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	enc, ok = strings.CutSuffix(enc, "?=")
	if !ok {
		return v, true
	}
	b, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}
