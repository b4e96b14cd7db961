package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/writetools"
)

// The governed writes (issue 13) on the file engine: servertest.WriteSuite,
// which shared/server/ondynamo runs on DynamoDB too.
func TestGovernedWrites(t *testing.T) {
	servertest.WriteSuite(t, servertest.New)
}

// Fifty concurrent notes with one key leave one row and fifty receipts of
// one note (the condition holds it; ondynamo and scripts/dev run it on
// DynamoDB and across processes).
func TestFiftyConcurrentNotesWithOneKeyLeaveOneNote(t *testing.T) {
	env := servertest.New(t, servertest.Options{Limits: ratelimit.Limits{ratelimit.LaneRead: 1000, ratelimit.LaneWrite: 1000}})
	RaceNotes(t, env, 50)
}

// RaceNotes is the n-way race of one add_case_note key.
func RaceNotes(t *testing.T, env *servertest.Env, n int) {
	t.Helper()
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	args := map[string]any{"case_id": seed.Meridian, "body": "Raced note.", "idempotency_key": "raced"}
	ids := make([]string, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	params, _ := json.Marshal(map[string]any{"name": writetools.ToolAddCaseNote, "arguments": args})
	for i := range n {
		wg.Go(func() {
			// Session.Tool numbers requests and is not for concurrent use.
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, 1000+i, params)
			<-start
			var msg struct {
				Result struct {
					StructuredContent struct {
						Data struct {
							NoteID string `json:"note_id"`
						} `json:"data"`
					} `json:"structuredContent"`
				} `json:"result"`
			}
			if r := s.Post(t, []byte(body)); r.Status == http.StatusOK && json.Unmarshal(r.Body, &msg) == nil {
				ids[i] = msg.Result.StructuredContent.Data.NoteID
			}
		})
	}
	close(start)
	wg.Wait()
	for _, id := range ids {
		if id == "" || id != ids[0] {
			t.Fatalf("receipts name %v, want one note", ids)
		}
	}
	notes, err := records.NewRepo(env.Store).Notes(t.Context(), seed.DemoTenant, seed.Meridian)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, nt := range notes {
		if nt.Body == "Raced note." {
			got++
		}
	}
	if got != 1 {
		t.Errorf("%d note rows, want 1", got)
	}
}
