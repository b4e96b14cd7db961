package server_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/custodymcp/custody/shared/server/servertest"
)

// startElicit calls fixture_elicit on instance url and returns the stream
// and the elicitation/create request that arrives on it.
func startElicit(t *testing.T, s *servertest.Session, url string, id int) (*servertest.EventStream, map[string]any) {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fixture_elicit","arguments":{"question":"Harbor?"}}}`, id)
	es := servertest.OpenStream(t, http.MethodPost, url, []byte(body), s.Headers()...)
	first, ok := es.Next()
	if !ok || first.ID == "" || first.Data != "" {
		t.Fatalf("first event %+v, want a priming event (an id, empty data)", first)
	}
	for {
		msg := es.NextMessage(t)
		if msg["method"] == "elicitation/create" {
			return es, msg
		}
		if msg["method"] != "notifications/message" {
			t.Fatalf("unexpected message before the question: %v", msg)
		}
	}
}

func TestFB26_AnElicitationAnsweredOnAnotherInstanceCompletesTheCall(t *testing.T) {
	env := fixtureEnv(t, servertest.Options{})
	_, instanceB := env.Instance(t)
	s := env.InitializeWith(t, servertest.Attorney, "2025-11-25", `{"elicitation":{"form":{}}}`)
	es, ask := startElicit(t, s, env.URL, 2)
	askID := ask["id"].(string)
	answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"result":{"action":"accept","content":{"confirmed":true}}}`, askID)

	// A replay by another principal does not reach the session at all.
	other := env.Initialize(t, servertest.OtherFirm, "2025-11-25")
	r := servertest.DoURL(t, instanceB, http.MethodPost, []byte(answer),
		"Authorization: Bearer "+other.Key, "Mcp-Session-Id: "+s.ID, "MCP-Protocol-Version: 2025-11-25")
	if r.Status != http.StatusNotFound {
		t.Errorf("foreign replay: %d %s, want 404", r.Status, r.Body)
	}
	// The owner's answer on instance B is accepted with 202.
	r = s.PostTo(t, instanceB, []byte(answer))
	if r.Status != http.StatusAccepted || len(r.Body) != 0 {
		t.Fatalf("answer on B: %d %q, want 202 empty", r.Status, r.Body)
	}
	// A second answer to the same question is refused: it is no longer pending.
	if r := s.PostTo(t, instanceB, []byte(answer)); r.Status != http.StatusBadRequest {
		t.Errorf("second answer: %d, want 400", r.Status)
	}
	final := es.NextMessage(t)
	res, ok := final["result"].(map[string]any)
	if final["id"] != 2.0 || !ok || res["isError"] == true {
		t.Fatalf("final message %v, want the tools/call result for id 2", final)
	}
	sc := servertest.Structured(t, res)
	if sc["action"] != "accept" || sc["content"].(map[string]any)["confirmed"] != true {
		t.Errorf("the result %v does not reflect the accepted answer", sc)
	}
}

func TestAnswersToUnknownExpiredOrForeignQuestionsAre400IdLess(t *testing.T) {
	env := fixtureEnv(t, servertest.Options{})
	s := env.InitializeWith(t, servertest.Attorney, "2025-11-25", `{"elicitation":{}}`)
	es, ask := startElicit(t, s, env.URL, 2)
	askID := ask["id"].(string)
	// Another key of the same principal shares the session but was not asked.
	s2 := *s
	s2.Key = env.Keys[servertest.Attorney2]
	for name, tc := range map[string]struct {
		s    *servertest.Session
		body string
	}{
		"unknown id":         {s, `{"jsonrpc":"2.0","id":"s-neverissued","result":{"action":"accept"}}`},
		"integer id":         {s, `{"jsonrpc":"2.0","id":7,"result":{}}`},
		"another credential": {&s2, fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"result":{"action":"accept"}}`, askID)},
	} {
		t.Run(name, func(t *testing.T) {
			r := tc.s.Post(t, []byte(tc.body))
			if r.Status != http.StatusBadRequest {
				t.Fatalf("%d %s, want 400", r.Status, r.Body)
			}
			if _, hasID := r.JSON(t)["id"]; hasID {
				t.Errorf("error carries an id: %s", r.Body)
			}
		})
	}
	// The question is untouched: the right answer still completes the call.
	if r := s.Post(t, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"result":{"action":"decline"}}`, askID))); r.Status != http.StatusAccepted {
		t.Fatalf("the real answer after the refusals: %d %s", r.Status, r.Body)
	}
	if sc := servertest.Structured(t, es.NextMessage(t)["result"].(map[string]any)); sc["action"] != "decline" {
		t.Errorf("result %v, want the declined answer", sc)
	}
}

func TestDeleteRejectsUnansweredQuestionsAndCancelEndsTheWait(t *testing.T) {
	env := fixtureEnv(t, servertest.Options{})
	t.Run("DELETE /mcp", func(t *testing.T) {
		s := env.InitializeWith(t, servertest.Attorney, "2025-11-25", `{"elicitation":{}}`)
		es, _ := startElicit(t, s, env.URL, 2)
		if r := env.Do(t, http.MethodDelete, nil, s.Headers()...); r.Status != http.StatusNoContent {
			t.Fatalf("DELETE: %d", r.Status)
		}
		if ev, ok := es.Next(); ok {
			t.Errorf("after DELETE the stream went on with %+v, want it closed without a response", ev)
		}
	})
	t.Run("notifications/cancelled", func(t *testing.T) {
		s := env.InitializeWith(t, servertest.Attorney, "2025-11-25", `{"elicitation":{}}`)
		es, _ := startElicit(t, s, env.URL, 5)
		if r := s.Post(t, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"user"}}`)); r.Status != http.StatusAccepted {
			t.Fatalf("cancel: %d", r.Status)
		}
		if ev, ok := es.Next(); ok {
			t.Errorf("after cancellation the stream went on with %+v, want no response", ev)
		}
	})
}
