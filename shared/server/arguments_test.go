package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// Integers written as JSON Schema allows them (2.0, 1e3) and integers past
// Go's int range are taken, clamped as the schema's descriptions say; an
// offset at the very end of the range is past every row, never wrapped
// round to the first.
func TestIntegerArgumentsInEveryJSONSpelling(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	call := func(tool, args string) map[string]any {
		t.Helper()
		var a map[string]any
		d := json.NewDecoder(strings.NewReader(args))
		d.UseNumber() // keep 2.0 and 1e3 as written
		if err := d.Decode(&a); err != nil {
			t.Fatal(err)
		}
		res := s.Tool(t, tool, a)
		if res["isError"] == true {
			t.Fatalf("%s %s: %v", tool, args, res["structuredContent"])
		}
		return servertest.Structured(t, res)
	}
	for args, want := range map[string]float64{
		`{"limit":2.0}`:   2,
		`{"limit":1e1}`:   10,
		`{"limit":1e23}`:  100, // clamped to the largest page
		`{"limit":1e400}`: 100, // past float64, still a JSON integer
	} {
		page := call("list_matters", args)["page"].(map[string]any)
		if page["limit"] != want {
			t.Errorf("list_matters %s: page.limit %v, want %v", args, page["limit"], want)
		}
	}
	for _, offset := range []string{"9223372036854775807", "9223372036854775808", "1e40", "1e400"} {
		out := call("get_document", fmt.Sprintf(`{"case_id":%q,"document_id":"d_hbr_complaint","offset":%s}`, seed.Harbor, offset))
		if chunks := out["chunks"].([]any); len(chunks) != 0 {
			t.Errorf("get_document offset %s: %d chunks, want none (past the end)", offset, len(chunks))
		}
	}
	res := s.Tool(t, "list_matters", map[string]any{"limit": 2.5})
	if got := servertest.Structured(t, res)["error"].(map[string]any); got["field"] != "limit" {
		t.Errorf("limit 2.5: %v, want a VALIDATION refusal naming limit", got)
	}
}

// TestEveryEnumArgumentRefusesAValueOutsideIt: a filter whose schema
// advertises an enum refuses any other value with VALIDATION naming the
// field (an empty success would read as "no such documents"), and a value
// of the enum is served.
func TestEveryEnumArgumentRefusesAValueOutsideIt(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	for _, tc := range []struct {
		tool, field, good string
	}{
		{"list_documents", "kind", "complaint"},
		{"get_fact_record", "posture", "disputed"},
		{"list_deadlines", "status", "open"},
	} {
		t.Run(tc.tool+" "+tc.field, func(t *testing.T) {
			res := s.Tool(t, tc.tool, map[string]any{"case_id": seed.Alvarez, tc.field: "bogus"})
			sc := servertest.Structured(t, res)
			errObj, _ := sc["error"].(map[string]any)
			if servertest.RefusalClass(res) != "VALIDATION" || errObj["field"] != tc.field {
				t.Errorf("%s %s:\"bogus\" = %v, want a VALIDATION refusal naming %s", tc.tool, tc.field, sc, tc.field)
			}
			if strings.Contains(fmt.Sprint(res["content"]), "bogus") {
				t.Errorf("the refusal quotes the value: %v", res["content"])
			}
			if got := servertest.RefusalClass(s.Tool(t, tc.tool, map[string]any{"case_id": seed.Alvarez, tc.field: tc.good})); got != "" {
				t.Errorf("%s %s:%q refused %s", tc.tool, tc.field, tc.good, got)
			}
		})
	}
}
