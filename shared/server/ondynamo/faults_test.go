package ondynamo_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/tools"
)

// Faults DynamoDB really sends: a throttled partition (HTTP 400
// ProvisionedThroughputExceededException, which the SDK retries and then
// gives up on) and an ailing service (HTTP 500 InternalServerError).
var (
	throttled   = wireFault{Status: http.StatusBadRequest, Type: "ProvisionedThroughputExceededException"}
	unavailable = wireFault{Status: http.StatusInternalServerError, Type: "InternalServerError"}
)

func fault(base wireFault, op, bodyContains string) *wireFault {
	base.Op, base.BodyContains = op, bodyContains
	return &base
}

// leaks lists what must never reach a client: engine, table, key and error
// names.
func leaks(env *dynEnv, body []byte) []string {
	var found []string
	for _, s := range []string{env.table, "T#", "SESS#", "CRED#", "dynamo", "Dynamo", "ProvisionedThroughput",
		"InternalServerError", "store:", "minidyn", "goroutine"} {
		if strings.Contains(string(body), s) {
			found = append(found, s)
		}
	}
	return found
}

// TestAThrottledOrUnavailableTableIsNeverAnEmptySuccess runs read tools on
// the DynamoDB engine while DynamoDB refuses chosen requests: a primary row
// that cannot be read is an UNAVAILABLE refusal; a secondary collection that
// cannot be read is null with read_state "unreadable", count and page null,
// and the roll-up unknown (docs/decisions.md "Pipeline choices"). Neither is ever
// an empty success, a 500, or a message naming the engine, the table or a
// key. The call is still audited in its one write.
func TestAThrottledOrUnavailableTableIsNeverAnEmptySuccess(t *testing.T) {
	env := newDynEnv(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, rev)
	const m = seed.Meridian

	refusals := []struct {
		name  string
		fault *wireFault
		tool  string
		args  map[string]any
	}{
		{"get_matter, matter row throttled", fault(throttled, "GetItem", "MATTER#"), "get_matter", map[string]any{"case_id": m}},
		{"list_matters, matter rows throttled", fault(throttled, "Query", "MATTER#"), "list_matters", nil},
		{"get_document, document row unavailable", fault(unavailable, "GetItem", "DOC#"), "get_document",
			map[string]any{"case_id": m, "document_id": "d_mer_complaint"}},
		{"get_fact_provenance, fact row throttled", fault(throttled, "GetItem", "FACT#"), "get_fact_provenance",
			map[string]any{"case_id": m, "fact_id": "f_mer_001"}},
	}
	for _, c := range refusals {
		t.Run("UNAVAILABLE: "+c.name, func(t *testing.T) {
			env.faults.set(c.fault)
			defer env.faults.set(nil)
			env.ops.take()
			r := s.Post(t, []byte(toolCall(2, c.tool, c.args)))
			if env.faults.hit() == 0 {
				t.Fatal("the fault was never hit: the case tests nothing")
			}
			if r.Status != http.StatusOK {
				t.Fatalf("status = %d, want 200 with a tool refusal; body %s", r.Status, r.Body)
			}
			if class, code := refusalClass(t, r); class != tools.ClassUnavailable || code != 0 {
				t.Errorf("answer = class %q code %d, want an %s refusal: %s", class, code, tools.ClassUnavailable, r.Body)
			}
			if l := leaks(env, r.Body); l != nil {
				t.Errorf("the refusal names internals %v: %s", l, r.Body)
			}
			if got := env.ops.take(); got["PutItem"] != 1 || sum(got, writeOps) != 1 {
				t.Errorf("writes = %v, want the one audited write", got)
			}
		})
	}

	unreadable := []struct {
		name  string
		fault *wireFault
		tool  string
		args  map[string]any
		field string            // the collection that must be unreadable
		read  map[string]string // collections that must still be read
	}{
		{"list_deadlines, deadlines throttled", fault(throttled, "Query", "DL#"), "list_deadlines", map[string]any{"case_id": m},
			"results", nil},
		{"list_case_notes, notes unavailable", fault(unavailable, "Query", "NOTE#"), "list_case_notes", map[string]any{"case_id": m},
			"results", nil},
		{"list_case_notes, notes throttled", fault(throttled, "Query", "NOTE#"), "list_case_notes", map[string]any{"case_id": m},
			"results", nil},
		{"get_document, chunks unavailable", fault(unavailable, "Query", "CHUNK#"), "get_document",
			map[string]any{"case_id": m, "document_id": "d_mer_complaint"}, "chunks", map[string]string{"versions": "read"}},
		{"get_fact_record, facts throttled", fault(throttled, "Query", "FACT#"), "get_fact_record", map[string]any{"case_id": m},
			"results", nil},
	}
	for _, c := range unreadable {
		t.Run("unreadable: "+c.name, func(t *testing.T) {
			env.faults.set(c.fault)
			defer env.faults.set(nil)
			r := s.Post(t, []byte(toolCall(3, c.tool, c.args)))
			if env.faults.hit() == 0 {
				t.Fatal("the fault was never hit: the case tests nothing")
			}
			if r.Status != http.StatusOK {
				t.Fatalf("status = %d, want 200; body %s", r.Status, r.Body)
			}
			if class, code := refusalClass(t, r); class != "" || code != 0 {
				t.Fatalf("refused (%q, %d) instead of reporting the unreadable collection: %s", class, code, r.Body)
			}
			var msg struct {
				Result struct {
					StructuredContent map[string]json.RawMessage `json:"structuredContent"`
				} `json:"result"`
			}
			if err := json.Unmarshal(r.Body, &msg); err != nil {
				t.Fatal(err)
			}
			sc := msg.Result.StructuredContent
			str := func(k string) string { var v string; _ = json.Unmarshal(sc[k], &v); return v }
			if got := string(sc[c.field]); got != "null" {
				t.Errorf("%s = %s, want null (never [])", c.field, got)
			}
			if got := str(c.field + "_read_state"); got != "unreadable" {
				t.Errorf("%s_read_state = %q, want unreadable", c.field, got)
			}
			if n, ok := sc[c.field+"_count"]; ok && string(n) != "null" {
				t.Errorf("%s_count = %s, want null", c.field, n)
			}
			if p, ok := sc["page"]; ok && (c.field == "results" || c.field == "chunks") && string(p) != "null" {
				t.Errorf("page = %s, want null", p)
			}
			for field, state := range c.read {
				if got := str(field + "_read_state"); got != state {
					t.Errorf("%s_read_state = %q, want %q (only the failed read is unreadable)", field, got, state)
				}
			}
			if got := str("verification_status"); got != "unknown" {
				t.Errorf("verification_status = %q, want unknown", got)
			}
			if l := leaks(env, r.Body); l != nil {
				t.Errorf("the answer names internals %v", l)
			}
		})
	}

	// Before any tool runs: the gate's batch read or the request's one write
	// failing is a 503 with Retry-After and a bare JSON-RPC error, and the
	// answer is withheld (nothing unaudited leaves the server).
	for _, c := range []struct {
		name  string
		fault *wireFault
	}{
		{"batch read throttled", fault(throttled, "BatchGetItem", "")},
		{"the one write unavailable", fault(unavailable, "TransactWriteItems", "")},
	} {
		t.Run("503: "+c.name, func(t *testing.T) {
			env.faults.set(c.fault)
			defer env.faults.set(nil)
			r := s.Post(t, []byte(toolCall(4, "list_matters", nil)))
			if env.faults.hit() == 0 {
				t.Fatal("the fault was never hit: the case tests nothing")
			}
			if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
				t.Errorf("status = %d, Retry-After %q; want 503 with Retry-After", r.Status, r.Header.Get("Retry-After"))
			}
			if _, code := refusalClass(t, r); code != -32603 {
				t.Errorf("body %s, want a JSON-RPC -32603 error", r.Body)
			}
			if strings.Contains(string(r.Body), "results") || strings.Contains(string(r.Body), seed.Meridian) {
				t.Errorf("the withheld answer leaked: %s", r.Body)
			}
			if l := leaks(env, r.Body); l != nil {
				t.Errorf("the answer names internals %v: %s", l, r.Body)
			}
		})
	}
}
