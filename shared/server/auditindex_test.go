package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/resources"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/storetest"
)

// The per-matter audit index (package audit): "who read this matter" must
// list every request whose answer contains the matter's rows, answers across
// matters included.

// mattersIn returns the demo matters a JSON answer names: by case_id, by a
// matter provenance id (urn:custody:demo:matter:<id>) or in a resource URI
// (custody://matters/<id>…).
func mattersIn(t *testing.T, answer any) []string {
	t.Helper()
	var out []string
	walkStrings(answer, func(v string) {
		for _, m := range append(append([]string{}, seed.DemoMatters...), seed.Northwind) {
			if (v == m || v == "urn:custody:demo:matter:"+m || v == resources.MatterURI(m) || strings.HasPrefix(v, resources.MatterURI(m)+"/")) &&
				!slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	})
	slices.Sort(out)
	return out
}

// indexedUnder returns the matters whose audit index holds the request.
func indexedUnder(t *testing.T, st store.Store, requestID string) []string {
	t.Helper()
	var out []string
	for _, m := range append(append([]string{}, seed.DemoMatters...), "m_does_not_exist") {
		recs, err := audit.ForMatter(context.Background(), st, seed.DemoTenant, m)
		if err != nil {
			t.Fatalf("ForMatter(%s): %v", m, err)
		}
		for _, r := range recs {
			if r.RequestID == requestID {
				out = append(out, m)
			}
		}
	}
	slices.Sort(out)
	return out
}

// lastAudit returns the newest audit row of the demo tenant whose method
// (and tool, when given) match.
func lastAudit(t *testing.T, st store.Store, method, tool string) audit.Record {
	t.Helper()
	rows, err := audit.Day(context.Background(), st, seed.DemoTenant, servertest.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].Method == method && rows[i].Tool == tool {
			return rows[i]
		}
	}
	t.Fatalf("no audit row of %s %s", method, tool)
	return audit.Record{}
}

// TestTheAuditIndexOfAMatterListsEveryAnswerContainingItsRows: a
// search_documents without case_id, list_matters, resources/list and a
// case_id completion answer from several matters; each call's audit row is
// found by audit.ForMatter under every matter its answer names, and under
// no other.
func TestTheAuditIndexOfAMatterListsEveryAnswerContainingItsRows(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	for _, tc := range []struct {
		name, method, tool string
		params             map[string]any
	}{
		{"search_documents across matters", "tools/call", "search_documents",
			map[string]any{"name": "search_documents", "arguments": map[string]any{"query": "the plaintiff alleges", "limit": 100}}},
		{"list_matters", "tools/call", "list_matters",
			map[string]any{"name": "list_matters", "arguments": map[string]any{}}},
		{"list_matters, one page", "tools/call", "list_matters",
			map[string]any{"name": "list_matters", "arguments": map[string]any{"limit": 1, "offset": 1}}},
		{"resources/list", "resources/list", "", map[string]any{}},
		{"case_id completion", "completion/complete", "", map[string]any{
			"ref": templateRef(resources.MatterTemplate), "argument": map[string]any{"name": "case_id", "value": "m_"}}},
		{"get_matter of one matter", "tools/call", "get_matter",
			map[string]any{"name": "get_matter", "arguments": map[string]any{"case_id": seed.Harbor}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The clock stands still otherwise: rows of one instant sort by
			// their random request ids, and lastAudit needs the newest.
			env.Clock.Advance(time.Second)
			msg := s.Call(t, tc.method, tc.params)
			res, ok := msg["result"].(map[string]any)
			if !ok || res["isError"] == true {
				t.Fatalf("%s: %v", tc.method, msg)
			}
			want := mattersIn(t, res)
			if len(want) == 0 {
				t.Fatalf("the answer names no matter: %v", res)
			}
			row := lastAudit(t, env.Store, tc.method, tc.tool)
			if got := indexedUnder(t, env.Store, row.RequestID); !slices.Equal(got, want) {
				t.Errorf("the audit row is indexed under %v, want every matter the answer contains, %v", got, want)
			}
		})
	}
}

// TestABatchIndexesEveryMatterEvenBeyondOneTransaction: 20 list_matters in
// one 2025-03-26 batch make 21 own items (the count and 20 audit rows) and
// 40 index items, more than one transaction holds; every row is still
// indexed under every matter, the overflow written before the transaction.
// When an index put fails the answer is withheld (503): no answer leaves
// without its index entries; the entries already written point at no row
// and ForMatter skips them.
func TestABatchIndexesEveryMatterEvenBeyondOneTransaction(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-03-26")
	batch := func(first int) []byte {
		var msgs []string
		for i := range 20 {
			msgs = append(msgs, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"list_matters","arguments":{}}}`, first+i))
		}
		return []byte("[" + strings.Join(msgs, ",") + "]")
	}
	r := s.Post(t, batch(100))
	var answers []map[string]any
	if err := json.Unmarshal(r.Body, &answers); r.Status != http.StatusOK || err != nil || len(answers) != 20 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	rows, err := audit.Day(context.Background(), env.Store, seed.DemoTenant, servertest.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	var batched []string
	for _, row := range rows {
		if row.Tool == "list_matters" {
			batched = append(batched, row.RequestID)
		}
	}
	if len(batched) != 20 {
		t.Fatalf("%d list_matters audit rows, want 20", len(batched))
	}
	for _, m := range seed.DemoMatters {
		recs, err := audit.ForMatter(context.Background(), env.Store, seed.DemoTenant, m)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, rec := range recs {
			got = append(got, rec.RequestID)
		}
		for _, id := range batched {
			if !slices.Contains(got, id) {
				t.Errorf("the audit index of %s lacks batched request %s", m, id)
			}
		}
	}

	// An index put fails: the whole answer is withheld.
	env.Faulty.Add(storetest.Rule{Method: storetest.MethodPut, Key: storetest.Prefix("T#demo#M#"+seed.Meridian+"#AUDIT", ""), Err: store.ErrUnavailable})
	r = s.Post(t, batch(200))
	if r.Status != http.StatusServiceUnavailable || strings.Contains(string(r.Body), seed.Alvarez) {
		t.Errorf("with an index put failing: %d %s, want 503 without the answer", r.Status, r.Body)
	}
	env.Faulty.Reset()
	rows, err = audit.Day(context.Background(), env.Store, seed.DemoTenant, servertest.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	if n := countTool(rows, "list_matters"); n != 20 {
		t.Errorf("%d list_matters rows after the failed batch, want the first batch's 20 only", n)
	}
	for _, m := range seed.DemoMatters {
		recs, err := audit.ForMatter(context.Background(), env.Store, seed.DemoTenant, m)
		if err != nil {
			t.Fatal(err)
		}
		if n := countTool(recs, "list_matters"); n != 20 {
			t.Errorf("ForMatter(%s) has %d list_matters records, want 20 (dangling entries skipped)", m, n)
		}
	}
}

func countTool(rows []audit.Record, tool string) int {
	n := 0
	for _, r := range rows {
		if r.Tool == tool {
			n++
		}
	}
	return n
}
