package server_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// Rate limits (docs/decisions.md "Answers on the wire"): a protocol method over
// the limit is 429 with Retry-After and -32000 carrying data.retry_after_s;
// tools/call over the limit is a RATE_LIMITED tool refusal. Lanes are
// separate: exhausting the expensive lane leaves reads alone.
func TestRateLimitsAnswerPerDecisionsTable(t *testing.T) {
	env := servertest.New(t, servertest.Options{Limits: ratelimit.Limits{ratelimit.LaneRead: 4, ratelimit.LaneExpensive: 1}})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25") // 2 reads counted

	search := map[string]any{"query": "delivery"}
	if res := s.Tool(t, "search_documents", search); res["isError"] == true {
		t.Fatalf("first expensive call refused: %v", res)
	}
	res := s.Tool(t, "search_documents", search)
	errObj := servertest.Structured(t, res)["error"].(map[string]any)
	if res["isError"] != true || errObj["class"] != "RATE_LIMITED" || errObj["retry_after_s"].(float64) < 1 || errObj["limit"] != 1.0 {
		t.Errorf("second expensive call = %v, want RATE_LIMITED with limit and retry_after_s", res)
	}
	// The read lane still has room: two more reads pass.
	for i := 0; i < 2; i++ {
		if res := s.Tool(t, "get_matter", map[string]any{"case_id": seed.Alvarez}); res["isError"] == true {
			t.Fatalf("read %d refused although the read lane has room: %v", i, res)
		}
	}
	r := s.Post(t, []byte(`{"jsonrpc":"2.0","id":"over","method":"tools/list"}`))
	if r.Status != http.StatusTooManyRequests {
		t.Fatalf("tools/list over the limit: %d %s, want 429", r.Status, r.Body)
	}
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || secs < 1 {
		t.Errorf("Retry-After = %q", r.Header.Get("Retry-After"))
	}
	msg := r.JSON(t)
	e := msg["error"].(map[string]any)
	if msg["id"] != "over" || e["code"] != -32000.0 || e["data"].(map[string]any)["retry_after_s"] != float64(secs) {
		t.Errorf("429 body = %v, want the request id, -32000 and data.retry_after_s = Retry-After", msg)
	}
	res = s.Tool(t, "get_matter", map[string]any{"case_id": seed.Alvarez})
	if errObj := servertest.Structured(t, res)["error"].(map[string]any); errObj["class"] != "RATE_LIMITED" {
		t.Errorf("tools/call over the read limit = %v, want RATE_LIMITED", res)
	}
	// After the suggested wait the key is served again.
	env.Clock.Advance(ratelimit.Window * 2)
	if r := s.Post(t, []byte(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)); r.Status != http.StatusOK {
		t.Errorf("after waiting: %d", r.Status)
	}
}
