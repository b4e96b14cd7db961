package mcp

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The HTTP edge of /mcp: Host and Origin checks, CORS, content negotiation,
// the body limit and the plain JSON answers written before any request is
// admitted (docs/decisions.md "Answers on the wire").

const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
)

// allowedRequestHeaders may be sent by browser clients (CORS preflight).
var allowedRequestHeaders = []string{
	"accept", "authorization", "content-type", "last-event-id", "mcp-method",
	"mcp-name", "mcp-protocol-version", "mcp-session-id", "x-api-key",
}

func (s *Server) hostAllowed(host string) bool {
	if len(s.opts.AllowedHosts) == 0 {
		return true
	}
	for _, h := range s.opts.AllowedHosts {
		if strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}

// originAllowed admits an allow-listed Origin, and on a Host-checked
// (loopback) bind the server's own origin: a same-origin request is not a
// rebinding attack (the Host check already passed).
func (s *Server) originAllowed(origin, host string) bool {
	for _, o := range s.opts.AllowedOrigins {
		if o == origin {
			return true
		}
	}
	return len(s.opts.AllowedHosts) > 0 && strings.EqualFold(origin, "http://"+host)
}

// allow is the Allow header of /mcp (RFC 9110 §10.2.1): GET only where the
// GET stream is switched on.
func (s *Server) allow() string {
	if s.opts.GETStream {
		return "GET, POST, DELETE, OPTIONS"
	}
	return "POST, DELETE, OPTIONS"
}

// preflight answers a CORS preflight without authentication (FB-29).
func (s *Server) preflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Allow", s.allow())
	if r.Header.Get("Origin") != "" {
		// Every method a browser may send, GET included even without the
		// stream: so that a browser client reads the JSON 405, not a CORS
		// failure (FB-29).
		h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
		h.Set("Access-Control-Allow-Headers", strings.Join(allowedRequestHeaders, ", "))
		h.Set("Access-Control-Max-Age", "600")
	}
	w.WriteHeader(http.StatusNoContent)
}

// protocolHeader reads MCP-Protocol-Version: present reports whether the
// header was sent at all (an empty value is present and invalid).
func protocolHeader(r *http.Request) (rev Revision, present bool) {
	vals, ok := r.Header[headerProtocolVersion]
	if !ok || len(vals) == 0 {
		return "", false
	}
	return Revision(strings.TrimSpace(vals[0])), true
}

// lookupID is the session id worth reading: "" for an absent or malformed
// one (a malformed id names no session and is answered 404 like an unknown one).
func lookupID(sid string) string {
	if !ValidSessionID(sid) {
		return ""
	}
	return sid
}

func legacyList() string {
	parts := make([]string, len(LegacyRevisions))
	for i, r := range LegacyRevisions {
		parts[i] = string(r)
	}
	return strings.Join(parts, ", ")
}

// acceptsResponse reports whether the Accept header admits a JSON or SSE
// answer. An absent header accepts anything.
func acceptsResponse(vals []string) bool {
	return accepts(vals, "application/json", "text/event-stream", "*/*", "application/*", "text/*")
}

// acceptsJSON reports whether the Accept header admits application/json.
// An absent header accepts anything.
func acceptsJSON(vals []string) bool {
	return accepts(vals, "application/json", "*/*", "application/*")
}

// accepts reports whether an Accept header (RFC 9110 §12.5.1) lists one of
// the media ranges; an absent header accepts anything.
func accepts(vals []string, ranges ...string) bool {
	if len(vals) == 0 {
		return true
	}
	for _, v := range vals {
		for _, part := range strings.Split(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err == nil && slices.Contains(ranges, mt) {
				return true
			}
		}
	}
	return false
}

// mimeType parses the request's Content-Type.
func mimeType(r *http.Request) (string, map[string]string, error) {
	return mime.ParseMediaType(r.Header.Get("Content-Type"))
}

// errBodyIncomplete: the body stopped arriving (or the connection broke)
// before it was read in full.
var errBodyIncomplete = errors.New("mcp: the request body did not arrive in full")

// readBody reads at most limit bytes; tooLarge reports a longer body, and
// errBodyIncomplete one that stopped arriving within timeout.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, timeout time.Duration) (body []byte, tooLarge bool, err error) {
	if r.ContentLength > limit {
		return nil, true, nil
	}
	// A body that stops arriving must not hold the connection: a deadline
	// for reading it, lifted once it is read (a held SSE answer must not
	// hit it). After a failed or oversized read it stays, so that
	// net/http's discard of the unread rest cannot block. Where the
	// transport has no deadlines (Lambda, whose body is already in the
	// event), this does nothing.
	rc := http.NewResponseController(w)
	deadline := rc.SetReadDeadline(time.Now().Add(timeout)) == nil
	body, rerr := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if rerr != nil {
		return nil, false, errBodyIncomplete
	}
	if int64(len(body)) > limit {
		return nil, true, nil
	}
	if deadline {
		_ = rc.SetReadDeadline(time.Time{})
	}
	return body, false, nil
}

// encodedIdentity reports whether the body is sent without a content
// coding: Custody does not decompress request bodies (RFC 9110 §8.4).
func encodedIdentity(r *http.Request) bool {
	for _, v := range r.Header.Values("Content-Encoding") {
		for _, c := range strings.Split(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return false
			}
		}
	}
	return true
}

func (s *Server) methodNotAllowed(w http.ResponseWriter) {
	w.Header().Set("Allow", "POST, OPTIONS")
	writeError(w, http.StatusMethodNotAllowed, ID{}, &Error{Code: CodeInvalidRequest,
		Message: "Method not allowed: revision 2026-07-28 is served over POST only."})
}

// DecodeParams decodes request params (absent params decode as {}).
func DecodeParams(raw json.RawMessage, v any) *Error {
	if raw == nil {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return InvalidParams("Invalid params: " + describeJSONError(err))
	}
	return nil
}

func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return "the field '" + te.Field + "' has the wrong type."
	}
	return "the params do not match the method's schema."
}

func isJSONObject(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return true
		default:
			return false
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, status int, id ID, e *Error) {
	writeJSON(w, status, encodeResponse(id, nil, e))
}
