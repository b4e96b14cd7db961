package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/custodymcp/custody/shared/server"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store/filestore"
)

// Behind a buffered front door (an HTTP API, a REST integration in BUFFERED
// mode) nothing reaches the client before the handler returns, so a call
// that would stream a question must not wait for an answer the client never
// sees: the same elicitation that streams on a streaming front is answered
// at once as application/json with the tool's "cannot ask" refusal, and GET
// /mcp is 405 (docs/decisions.md "Front doors").
func TestABufferedFrontAnswersJSONAndRefusesQuestionsAtOnce(t *testing.T) {
	for _, buffered := range []bool{false, true} {
		name := map[bool]string{false: "streaming front", true: "buffered front"}[buffered]
		t.Run(name, func(t *testing.T) {
			env := fixtureEnv(t, servertest.Options{Buffered: buffered})
			s := env.InitializeWith(t, servertest.Attorney, "2025-11-25", `{"elicitation":{"form":{}}}`)
			if !buffered {
				// The control: the question streams, as it does on a streaming front.
				es, ask := startElicit(t, s, env.URL, 2)
				es.Close()
				if ask["method"] != "elicitation/create" {
					t.Fatalf("streaming front: %v, want the question on the stream", ask)
				}
				return
			}
			r := s.Post(t, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fixture_elicit","arguments":{"question":"Harbor?"}}}`))
			if ct := r.Header.Get("Content-Type"); r.Status != http.StatusOK || !strings.HasPrefix(ct, "application/json") {
				t.Fatalf("tools/call = %d %q %s, want 200 application/json although the client accepts text/event-stream", r.Status, ct, r.Body)
			}
			res, _ := r.JSON(t)["result"].(map[string]any)
			if got, want := servertest.RefusalClass(res), "VALIDATION"; got != want {
				t.Errorf("refusal class = %q, want %q (the tool cannot ask on this request): %s", got, want, r.Body)
			}
			g := env.Do(t, http.MethodGet, nil, s.Headers()...)
			if g.Status != http.StatusMethodNotAllowed {
				t.Errorf("GET /mcp = %d %s, want 405", g.Status, g.Body)
			}
		})
	}
}

// The two settings contradict each other: composing both is an error.
func TestBufferedExcludesTheGETStream(t *testing.T) {
	st, err := filestore.Open(t.TempDir()+"/custody.db", filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := server.New(server.Config{Store: st, CursorKey: make([]byte, 32), Buffered: true, GETStream: true}); err == nil {
		t.Error("server.New(Buffered and GETStream) = nil error, want a refusal")
	}
}
