package mcp

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/custodymcp/custody/shared/audit"
)

// maxBatch keeps a batch's audit rows within one store transaction.
const maxBatch = 20

// serveBatch answers a JSON-RPC batch, accepted only in 2025-03-26 sessions
// (2025-03-26 basic §Batching; removed in 2025-06-18). Whether a batch is
// allowed follows the session's negotiated revision, never a request's
// MCP-Protocol-Version header (issue 8, item 3). The batch is charged per
// message before any runs: the gate admitted its whole cost, or none of it.
func (s *Server) serveBatch(x *exchange, b *Body) {
	if !x.adm.Session.Revision.HasBatch() {
		s.httpRefusal(x, "batch", http.StatusBadRequest, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Invalid request: JSON-RPC batches are not accepted in this session's revision " + string(x.adm.Session.Revision) + "."})
		return
	}
	if len(b.Messages) > maxBatch {
		s.httpRefusal(x, "batch", http.StatusBadRequest, ID{}, &Error{Code: CodeInvalidRequest,
			Message: "Invalid request: a batch may hold at most " + strconv.Itoa(maxBatch) + " messages."})
		return
	}
	if !x.adm.Rate.Allowed {
		secs := x.adm.Rate.RetryAfterSeconds()
		x.w.Header().Set("Retry-After", strconv.Itoa(secs))
		s.httpRefusal(x, "batch", http.StatusTooManyRequests, ID{}, rateError(secs, x.adm.Rate.Limit))
		return
	}
	var answered []*call
	for _, m := range b.Messages {
		switch {
		case m.IsResponse():
			rec := s.newAudit(x, "response")
			rec.Outcome = "rpc:" + strconv.Itoa(CodeInvalidRequest)
		case m.IsNotification():
			rec := s.newAudit(x, m.Method)
			rec.Outcome = audit.OutcomeAccepted
		default:
			if md, ok := s.method(m.Method, false); ok && md.NoBatch {
				c := &call{m: m, rec: s.newAudit(x, m.Method)}
				c.fail(&Error{Code: CodeInvalidRequest, Message: "Invalid request: " + m.Method + " cannot be part of a batch."})
				answered = append(answered, c)
				continue
			}
			answered = append(answered, s.call(x, m, nil, nil))
		}
	}
	x.count = len(b.Messages)
	if err := s.commit(x); err != nil {
		s.commitFailed(x, ID{}, err)
		return
	}
	if x.count == 0 && len(b.Messages) > 0 {
		// The reservation failed at commit: the whole batch is refused, as
		// admission would have refused it.
		secs := max(1, x.adm.Rate.RetryAfterSeconds())
		s.logOutcome(x, http.StatusTooManyRequests)
		writeError(x.w, http.StatusTooManyRequests, ID{}, rateError(secs, x.adm.Rate.Limit))
		return
	}
	if len(answered) == 0 {
		s.logOutcome(x, http.StatusAccepted)
		x.w.WriteHeader(http.StatusAccepted)
		return
	}
	out := make([]json.RawMessage, len(answered))
	for i, c := range answered {
		out[i] = c.encode()
	}
	body, _ := json.Marshal(out)
	s.logOutcome(x, http.StatusOK)
	writeJSON(x.w, http.StatusOK, body)
}
