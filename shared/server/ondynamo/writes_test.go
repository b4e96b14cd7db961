package ondynamo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/autonomy"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/tools"
	"github.com/custodymcp/custody/shared/writetools"
)

// held is a decorator over the DynamoDB engine that holds the first
// transaction it is armed for until released: two calls can be made to
// read the same state before either writes (a lost race, on demand).
type held struct {
	store.Store

	mu      sync.Mutex
	armed   func([]store.Op) bool
	entered chan struct{}
	release chan struct{}
}

// arm holds the next transaction match accepts; entered is closed when it
// arrives, and it proceeds once release is closed.
func (h *held) arm(match func([]store.Op) bool) (entered, release chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed, h.entered, h.release = match, make(chan struct{}), make(chan struct{})
	return h.entered, h.release
}

func (h *held) Transact(ctx context.Context, ops []store.Op) error {
	h.mu.Lock()
	match, entered, release := h.armed, h.entered, h.release
	hold := match != nil && match(ops)
	if hold {
		h.armed = nil
	}
	h.mu.Unlock()
	if hold {
		close(entered)
		<-release
	}
	return h.Store.Transact(ctx, ops)
}

func touches(sk string) func([]store.Op) bool {
	return func(ops []store.Op) bool {
		for _, op := range ops {
			if strings.HasPrefix(op.OpKey().SK, sk) {
				return true
			}
		}
		return false
	}
}

func writeEnv(t *testing.T) (*dynEnv, *held) {
	t.Helper()
	h := &held{}
	env := newDynEnvWrapped(t, servertest.Options{
		Limits: ratelimit.Limits{ratelimit.LaneRead: 10000, ratelimit.LaneExpensive: 1000, ratelimit.LaneWrite: 10000},
		// The approval page, so a session that declares URL elicitation
		// gets the hand-off (issue 15).
		Approvals: true,
	}, func(st store.Store) store.Store { h.Store = st; return h })
	return env, h
}

type decision struct {
	Status     string `json:"status"`
	ApprovalID string `json:"approval_id"`
	Data       struct {
		NoteID   string `json:"note_id"`
		Replayed bool   `json:"replayed"`
	} `json:"data"`
	Error struct {
		Class string `json:"class"`
	} `json:"error"`
}

// decisionIn is the decision a tools/call answered; an answer that is not
// one fails the test (with Errorf: races call it off the test goroutine).
func decisionIn(t *testing.T, r *servertest.Response) decision {
	t.Helper()
	var msg struct {
		Result struct {
			StructuredContent decision `json:"structuredContent"`
		} `json:"result"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &msg) != nil {
		t.Errorf("answer %d %s, want a decision", r.Status, r.Body)
	}
	return msg.Result.StructuredContent
}

func propose(matter, key string, args map[string]any) map[string]any {
	return map[string]any{"case_id": matter, "action": proposals.ActionCreateDeadline, "args": args,
		"reason": "The order sets it.", "idempotency_key": key}
}

func deadline(due string) map[string]any {
	return map[string]any{"title": "Expert disclosures", "due_date": due, "kind": "expert"}
}

// TestTheWritePathsRoundTripsOnDynamoDB pins the round trips of the
// governed writes (docs/decisions.md "Pipeline choices", issue 13): the
// gate's batch read, the write step's one batch read of the matter, the
// autonomy settings and the tool's own rows, and one transaction of the
// tool's writes with the bucket and audit row; propose_action then reads
// its row back. A lost race costs the failed transaction and one more
// write of the bucket and audit row (and, for a note, the read of the
// original receipt). The two races are measured together with their
// winner, which costs what a first call costs.
func TestTheWritePathsRoundTripsOnDynamoDB(t *testing.T) {
	env, h := writeEnv(t)
	s := env.Initialize(t, servertest.Attorney, rev)
	// A session whose client declared URL elicitation: its filing carries
	// the hand-off's binding and parked answer row in the same transaction
	// (issue 15), so it costs what any filing costs.
	hs := env.InitializeWith(t, servertest.Attorney, rev, `{"elicitation":{"url":{}}}`)
	ctx := context.Background()
	const m = seed.Alvarez
	note := func(key, body string) []byte {
		return []byte(toolCall(50, writetools.ToolAddCaseNote, map[string]any{"case_id": m, "body": body, "idempotency_key": key}))
	}
	call := func(body []byte) func(t *testing.T) []decision {
		return func(t *testing.T) []decision { return []decision{decisionIn(t, s.Post(t, body))} }
	}
	// race sends first, held at its transaction, then second, then lets
	// first write.
	race := func(sk string, first, second []byte) func(t *testing.T) []decision {
		return func(t *testing.T) []decision {
			entered, release := h.arm(touches(sk))
			out := make(chan decision, 1)
			go func() { out <- decisionIn(t, s.Post(t, first)) }()
			<-entered
			won := decisionIn(t, s.Post(t, second))
			close(release)
			return []decision{<-out, won}
		}
	}
	setCounter := func(n int64) {
		k := proposals.CounterKey(seed.DemoTenant, m)
		if err := env.Store.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: 1, Attrs: map[string]any{proposals.CounterAttr: n}}); err != nil {
			t.Fatal(err)
		}
	}
	// gets: batch reads, point reads, transactions (a write's domain
	// conditions with its audit row) and plain puts (an audit row alone:
	// a replay, a refusal, a race's loser; issue 19, item 6).
	gets := func(batch, get int, tx, puts int) cost {
		c := cost{"BatchGetItem": batch}
		if tx > 0 {
			c["TransactWriteItems"] = tx
		}
		if puts > 0 {
			c["PutItem"] = puts
		}
		if get > 0 {
			c["GetItem"] = get
		}
		return c
	}
	cases := []struct {
		name   string
		before func()
		call   func(t *testing.T) []decision
		want   []string // status or class of each answer
		cost   cost
	}{
		{name: "add_case_note first (2+1)", call: call(note("n1", "First.")), want: []string{"executed"}, cost: gets(2, 0, 1, 0)},
		{name: "add_case_note replay (2+1)", call: call(note("n1", "First.")), want: []string{"executed"}, cost: gets(2, 0, 0, 1)},
		{name: "add_case_note CONFLICT (2+1)", call: call(note("n1", "Other.")), want: []string{tools.ClassConflict}, cost: gets(2, 0, 0, 1)},
		{name: "add_case_note lost race (3+2) with its winner (2+1)", call: race("IDEM#NOTE#", note("n2", "Raced."), note("n2", "Raced.")),
			want: []string{"executed", "executed"}, cost: gets(4, 1, 2, 1)},
		{name: "propose_action filed (3+1)", call: call([]byte(toolCall(51, writetools.ToolProposeAction, propose(m, "p1", deadline("2026-12-14"))))),
			want: []string{"pending_approval"}, cost: gets(2, 1, 1, 0)},
		{name: "propose_action filed with a hand-off (3+1)", call: func(t *testing.T) []decision {
			r := hs.Post(t, []byte(toolCall(59, writetools.ToolProposeAction, propose(m, "p-handoff", deadline("2026-12-14")))),
				"Accept: application/json, text/event-stream")
			if !strings.Contains(string(r.Body), `"method":"elicitation/create"`) {
				t.Fatalf("no hand-off in %s", r.Body)
			}
			last := string(r.Body)[strings.LastIndex(string(r.Body), "data: ")+len("data: "):]
			return []decision{decisionIn(t, &servertest.Response{Status: r.Status, Body: []byte(strings.TrimSpace(last))})}
		}, want: []string{"pending_approval"}, cost: gets(2, 1, 1, 0)},
		{name: "propose_action replay (3+1)", call: call([]byte(toolCall(51, writetools.ToolProposeAction, propose(m, "p1", deadline("2026-12-14"))))),
			want: []string{"pending_approval"}, cost: gets(2, 1, 0, 1)},
		{name: "propose_action CONFLICT (2+1)", call: call([]byte(toolCall(51, writetools.ToolProposeAction, propose(m, "p1", deadline("2026-12-15"))))),
			want: []string{tools.ClassConflict}, cost: gets(2, 0, 0, 1)},
		{name: "propose_action BACKPRESSURE seen (2+1)", before: func() { setCounter(proposals.MaxPending) },
			call: call([]byte(toolCall(52, writetools.ToolProposeAction, propose(m, "p2", deadline("2026-12-14"))))),
			want: []string{tools.ClassBackpressure}, cost: gets(2, 0, 0, 1)},
		{name: "propose_action BACKPRESSURE by race (2+2) with its winner (3+1)", before: func() { setCounter(proposals.MaxPending - 1) },
			call: race("PROPCOUNT",
				[]byte(toolCall(53, writetools.ToolProposeAction, propose(m, "p3", deadline("2026-12-14")))),
				[]byte(toolCall(54, writetools.ToolProposeAction, propose(m, "p4", deadline("2026-12-14"))))),
			want: []string{tools.ClassBackpressure, "pending_approval"}, cost: gets(4, 1, 2, 1)},
		{name: "propose_action AUTONOMY_DENIED (2+1)",
			before: func() {
				if err := autonomy.Set(ctx, env.Store, seed.DemoTenant, writetools.ToolProposeAction, autonomy.L0, env.Clock.Now()); err != nil {
					t.Fatal(err)
				}
			},
			call: call([]byte(toolCall(55, writetools.ToolProposeAction, propose(m, "p5", deadline("2026-12-14"))))),
			want: []string{tools.ClassAutonomyDenied}, cost: gets(2, 0, 0, 1)},
		{name: "list_my_proposals (3+1)", call: func(t *testing.T) []decision {
			r := s.Post(t, []byte(toolCall(56, writetools.ToolListMyProposals, nil)))
			if class, code := refusalClass(t, r); class != "" || code != 0 {
				t.Fatalf("list_my_proposals: %s", r.Body)
			}
			return nil
		}, cost: cost{"BatchGetItem": 1, "Query": 2, "PutItem": 1}},
		{name: "list_my_proposals of one matter (3+1)", call: func(t *testing.T) []decision {
			r := s.Post(t, []byte(toolCall(57, writetools.ToolListMyProposals, map[string]any{"case_id": m})))
			if class, code := refusalClass(t, r); class != "" || code != 0 {
				t.Fatalf("list_my_proposals: %s", r.Body)
			}
			return nil
		}, cost: cost{"BatchGetItem": 1, "GetItem": 1, "Query": 1, "PutItem": 1}},
		{name: "list_actions (2+1)", call: func(t *testing.T) []decision {
			r := s.Post(t, []byte(toolCall(58, writetools.ToolListActions, nil)))
			if class, code := refusalClass(t, r); class != "" || code != 0 {
				t.Fatalf("list_actions: %s", r.Body)
			}
			return nil
		}, cost: gets(2, 0, 0, 1)},
	}
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "call\treads\twrites")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.before != nil {
				c.before()
			}
			env.ops.take()
			answers := c.call(t)
			got := env.ops.take()
			fmt.Fprintf(tw, "%s\t%d (%s)\t%d (%s)\n", c.name, sum(got, readOps), describe(got, readOps), sum(got, writeOps), describe(got, writeOps))
			var outcomes []string
			for _, a := range answers {
				if a.Error.Class != "" {
					outcomes = append(outcomes, a.Error.Class)
				} else {
					outcomes = append(outcomes, a.Status)
				}
			}
			if diff := cmp.Diff(c.want, outcomes); diff != "" {
				t.Errorf("answers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]int(c.cost), got); diff != "" {
				t.Errorf("DynamoDB requests by operation (-want +got):\n%s", diff)
			}
		})
	}
	tw.Flush()
	t.Logf("DynamoDB round trips of the write paths (minidyn):\n%s", table.String())
}

// Each TransactionConflict retry adds one write: a filing whose first
// transaction DynamoDB cancels for a conflicting transaction is sent
// again and filed (3+2); past three retries it is UNAVAILABLE (503 for
// the request's one write) and nothing is filed.
func TestATransactionConflictIsRetriedAndEachRetryIsOneWrite(t *testing.T) {
	env, _ := writeEnv(t)
	s := env.Initialize(t, servertest.Attorney, rev)
	conflict := `{"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException","message":"Transaction cancelled",` +
		`"CancellationReasons":[{"Code":"None"},{"Code":"None"},{"Code":"None"},{"Code":"TransactionConflict","Message":"Transaction is ongoing for the item"},{"Code":"None"},{"Code":"None"}]}`
	env.faults.set(&wireFault{Op: "TransactWriteItems", BodyContains: "PROPCOUNT", Status: 400, Body: conflict, Times: 1})
	env.ops.take()
	d := decisionIn(t, s.Post(t, []byte(toolCall(60, writetools.ToolProposeAction, propose(seed.Meridian, "tc", deadline("2026-12-14"))))))
	if d.Status != "pending_approval" {
		t.Fatalf("after one conflict: %+v, want filed", d)
	}
	if diff := cmp.Diff(map[string]int{"BatchGetItem": 2, "GetItem": 1, "TransactWriteItems": 2}, env.ops.take()); diff != "" {
		t.Errorf("one retry (-want +got):\n%s", diff)
	}
	env.faults.set(&wireFault{Op: "TransactWriteItems", BodyContains: "PROPCOUNT", Status: 400, Body: conflict})
	r := s.Post(t, []byte(toolCall(61, writetools.ToolProposeAction, propose(seed.Meridian, "tc2", deadline("2026-12-14")))))
	got := env.ops.take()
	env.faults.set(nil)
	if r.Status != http.StatusServiceUnavailable {
		t.Errorf("conflicts past the retries: %d %s, want 503", r.Status, r.Body)
	}
	if got["TransactWriteItems"] != 4 {
		t.Errorf("TransactWriteItems = %d, want 4 (the first and three retries)", got["TransactWriteItems"])
	}
	page, err := env.Store.Query(context.Background(), store.Query{PK: "T#demo#M#" + seed.Meridian, SK: store.SortKeyCondition{Prefix: "PROP#"}})
	if err != nil || len(page.Items) != 1 {
		t.Errorf("%d proposals (%v), want only the first", len(page.Items), err)
	}
}

// On DynamoDB too: forty proposals racing on one matter file exactly 25,
// and fifty concurrent notes with one key leave one note (the counter's
// condition, evaluated by the engine; scripts/dev runs both across two
// processes).
func TestRacesOfTheWritePathsOnDynamoDB(t *testing.T) {
	env, _ := writeEnv(t)
	s := env.Initialize(t, servertest.Attorney, rev)
	const n = 40
	results := make([]decision, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			results[i] = decisionIn(t, s.Post(t, []byte(toolCall(100+i, writetools.ToolProposeAction, propose(seed.Harbor, fmt.Sprint("race-", i), deadline("2026-12-14"))))))
		})
	}
	close(start)
	wg.Wait()
	got := map[string]int{}
	for _, d := range results {
		if d.Error.Class != "" {
			got[d.Error.Class]++
		} else {
			got[d.Status]++
		}
	}
	if diff := cmp.Diff(map[string]int{"pending_approval": proposals.MaxPending, tools.ClassBackpressure: n - proposals.MaxPending}, got); diff != "" {
		t.Errorf("40 racing proposals (-want +got):\n%s", diff)
	}
	it, err := env.Store.Get(context.Background(), proposals.CounterKey(seed.DemoTenant, seed.Harbor))
	if err != nil || proposals.Pending(&it) != proposals.MaxPending {
		t.Errorf("counter = %d (%v), want %d", proposals.Pending(&it), err, proposals.MaxPending)
	}

	const notes = 50
	ids := make([]string, notes)
	start = make(chan struct{})
	for i := range notes {
		wg.Go(func() {
			<-start
			d := decisionIn(t, s.Post(t, []byte(toolCall(200+i, writetools.ToolAddCaseNote,
				map[string]any{"case_id": seed.Meridian, "body": "Raced note.", "idempotency_key": "raced"}))))
			ids[i] = d.Data.NoteID
		})
	}
	close(start)
	wg.Wait()
	for _, id := range ids {
		if id == "" || id != ids[0] {
			t.Fatalf("receipts name %v, want one note", ids)
		}
	}
	page, err := env.Store.Query(context.Background(), store.Query{PK: "T#demo#M#" + seed.Meridian, SK: store.SortKeyCondition{Prefix: "NOTE#"}})
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, it := range page.Items {
		if strings.Contains(string(it.Bytes("data")), "Raced note.") {
			rows++
		}
	}
	if rows != 1 {
		t.Errorf("%d note rows, want 1", rows)
	}
}

// The governed writes' behaviour on DynamoDB: servertest.WriteSuite, case
// by case on a fresh table.
func TestGovernedWritesOnDynamoDB(t *testing.T) {
	servertest.WriteSuite(t, func(t testing.TB, opts servertest.Options) *servertest.Env {
		return newDynEnv(t, opts).Env
	})
}
