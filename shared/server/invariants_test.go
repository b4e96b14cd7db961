package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	validator "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/custodymcp/custody/shared/admin"
	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/prompts"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/resources"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/storetest"
	"github.com/custodymcp/custody/shared/tools"
)

// The architecture's invariants (docs/architecture.md "Invariants"), as table
// tests over the whole registry where they apply.

// readCall is one valid call of a read tool.
type readCall struct {
	tool string
	args map[string]any
}

// validCalls covers every read tool with arguments that succeed for the
// demo attorney, on the matter given.
func validCalls(matter string) []readCall {
	doc := map[string]string{seed.Alvarez: "d_alv_complaint", seed.Harbor: "d_hbr_complaint", seed.Meridian: "d_mer_complaint"}[matter]
	fact := map[string]string{seed.Alvarez: "f_alv_001", seed.Harbor: "f_hbr_001", seed.Meridian: "f_mer_001"}[matter]
	return []readCall{
		{"list_matters", map[string]any{}},
		{"get_matter", map[string]any{"case_id": matter}},
		{"list_documents", map[string]any{"case_id": matter, "limit": 100}},
		{"get_document", map[string]any{"case_id": matter, "document_id": doc}},
		{"search_documents", map[string]any{"query": "agreement notice damages", "case_id": matter}},
		{"search_documents", map[string]any{"query": "the plaintiff alleges"}},
		{"search_in_document", map[string]any{"case_id": matter, "document_id": doc, "query": "plaintiff"}},
		{"get_fact_record", map[string]any{"case_id": matter, "limit": 100}},
		{"get_fact_record", map[string]any{"case_id": matter, "posture": "disputed"}},
		{"get_fact_provenance", map[string]any{"case_id": matter, "fact_id": fact}},
		{"list_deadlines", map[string]any{"case_id": matter}},
		{"list_case_notes", map[string]any{"case_id": matter}},
		{"list_my_proposals", map[string]any{"case_id": matter}},
	}
}

// TestEveryReadToolIsCovered keeps validCalls honest as tools are added.
func TestEveryReadToolIsCovered(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	covered := map[string]bool{}
	for _, c := range validCalls(seed.Alvarez) {
		covered[c.tool] = true
	}
	for _, name := range env.Server.Registry.Names() {
		// The governed writes and list_actions (scope write) answer the
		// decision shape or the action registry, not an attested read:
		// servertest.WriteSuite covers them, on both engines.
		if spec, _ := env.Server.Registry.Spec(name); spec.Scope == auth.ScopeWrite {
			continue
		}
		if !covered[name] {
			t.Errorf("tool %s has no valid call in the invariant tables", name)
		}
	}
}

// statuses collects every verification_status below the root.
func statuses(v any, root bool, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		if s, ok := x["verification_status"].(string); ok && !root {
			*out = append(*out, s)
		}
		for k, e := range x {
			if k != "verification" {
				statuses(e, false, out)
			}
		}
	case []any:
		for _, e := range x {
			statuses(e, false, out)
		}
	}
}

var rank = map[string]int{"unknown": 0, "ungrounded": 1, "grounded": 2, "verified": 3}

func TestInvariantSuccessResultsValidateTheStrictEnvelopeAndRollUpToTheWeakestItem(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	for _, matter := range seed.DemoMatters {
		for _, c := range validCalls(matter) {
			t.Run(matter+"/"+c.tool, func(t *testing.T) {
				res := s.Tool(t, c.tool, c.args)
				if res["isError"] == true {
					t.Fatalf("refused: %v", res["content"])
				}
				if _, ok := res["_meta"].(map[string]any)["ms"].(float64); !ok {
					t.Error("_meta.ms missing")
				}
				sc := servertest.Structured(t, res)
				strict := compileSchema(t, env.Server.Registry.StrictSchema(c.tool))
				if err := strict.Validate(jsonValue(t, sc)); err != nil {
					t.Errorf("result violates the strict envelope schema: %v", err)
				}
				var items []string
				statuses(sc, true, &items)
				want := "verified"
				for _, st := range items {
					if rank[st] < rank[want] {
						want = st
					}
				}
				if len(items) == 0 {
					want = "unknown"
				}
				if got := sc["verification_status"]; got != want {
					t.Errorf("roll-up = %v, want the weakest item's %s (items %v)", got, want, items)
				}
				asOf, _ := time.Parse(time.RFC3339Nano, sc["as_of"].(string))
				gen, _ := time.Parse(time.RFC3339Nano, sc["generated_at"].(string))
				if !asOf.Before(gen) {
					t.Errorf("as_of %v is not before generated_at %v: the rows are older than the clock", asOf, gen)
				}
			})
		}
	}
}

func compileSchema(t *testing.T, raw json.RawMessage) *validator.Schema {
	t.Helper()
	doc, err := validator.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := validator.NewCompiler()
	if err := c.AddResource("urn:strict", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("urn:strict")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func TestInvariantAsOfIsTheNewestRowNotGeneratedAt(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	matter := servertest.Structured(t, s.Tool(t, "get_matter", map[string]any{"case_id": seed.Alvarez}))["matter"].(map[string]any)
	newest := matter["updated_at"].(string)
	docs := servertest.Structured(t, s.Tool(t, "list_documents", map[string]any{"case_id": seed.Alvarez, "limit": 100}))
	for _, d := range docs["results"].([]any) {
		if u := d.(map[string]any)["updated_at"].(string); u > newest {
			newest = u
		}
	}
	if docs["as_of"] != newest {
		t.Errorf("as_of = %v, want the newest updated_at of the rows behind the answer, %s", docs["as_of"], newest)
	}
	if docs["as_of"] == docs["generated_at"] {
		t.Error("as_of equals generated_at")
	}
}

// wireTime is the one layout of a timestamp on the wire: RFC 3339 in UTC
// with exactly three fractional digits (docs/contracts.md §1).
var wireTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// timestamps calls f on every string of a JSON value whose member name
// says it is a time (as_of, *_at).
func timestamps(v any, f func(name, value string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && (k == "as_of" || strings.HasSuffix(k, "_at")) {
				f(k, s)
			}
			timestamps(e, f)
		}
	case []any:
		for _, e := range x {
			timestamps(e, f)
		}
	}
}

// TestInvariantEveryTimestampHasOneFixedWidthLayout: generated_at, as_of
// and every row's *_at are written alike — milliseconds always, trailing
// zeros kept — so answers compare and sort as text.
func TestInvariantEveryTimestampHasOneFixedWidthLayout(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	seen := map[string]bool{}
	for _, matter := range seed.DemoMatters {
		for _, c := range validCalls(matter) {
			timestamps(servertest.Structured(t, s.Tool(t, c.tool, c.args)), func(name, value string) {
				seen[name] = true
				if !wireTime.MatchString(value) {
					t.Errorf("%s %s: %s = %q, want the layout 2006-01-02T15:04:05.000Z", matter, c.tool, name, value)
				}
			})
		}
	}
	for _, name := range []string{"generated_at", "as_of", "updated_at", "created_at", "checked_at", "proposed_at", "checksum_verified_at"} {
		if !seen[name] {
			t.Errorf("no answer carried %s: the test checked nothing of it", name)
		}
	}
}

// TestInvariantAScreenChangeIsNotRecordData: adding and removing an ethical
// wall changes who reaches a matter, not what its record says, so neither
// the matter's updated_at nor any read's as_of moves.
func TestInvariantAScreenChangeIsNotRecordData(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	read := func() (asOf, updated string) {
		sc := servertest.Structured(t, s.Tool(t, "get_matter", map[string]any{"case_id": seed.Meridian}))
		return sc["as_of"].(string), sc["matter"].(map[string]any)["updated_at"].(string)
	}
	asOf, updated := read()
	later := servertest.Epoch.Add(time.Hour + 123456789) // nanoseconds, as a clock gives them
	for _, screened := range []bool{true, false} {
		res, err := admin.Screen(context.Background(), env.Store, admin.ScreenRequest{Tenant: seed.DemoTenant,
			CaseID: seed.Meridian, Principal: seed.DemoParalegal, Screened: screened}, later)
		if err != nil || !res.Changed {
			t.Fatalf("Screen(%v) = %+v, %v", screened, res, err)
		}
		if a, u := read(); a != asOf || u != updated {
			t.Errorf("after screen %v: as_of %s, updated_at %s; want %s and %s, unmoved", screened, a, u, asOf, updated)
		}
	}
}

func TestInvariantAnEmptyResultIsUnknownWithANote(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	sc := servertest.Structured(t, s.Tool(t, "search_in_document", map[string]any{
		"case_id": seed.Alvarez, "document_id": "d_alv_complaint", "query": "zyzzyva quokka"}))
	if sc["results_read_state"] != "empty" || len(sc["results"].([]any)) != 0 {
		t.Fatalf("results %v (%v), want an empty read", sc["results"], sc["results_read_state"])
	}
	if sc["verification_status"] != "unknown" {
		t.Errorf("roll-up of an empty answer = %v, want unknown", sc["verification_status"])
	}
	notes := fmt.Sprint(sc["verification"].(map[string]any)["notes"])
	if !strings.Contains(notes, "not proof") {
		t.Errorf("notes %s do not say emptiness is not proof of absence", notes)
	}
}

func TestInvariantAnUnreadableCollectionIsNullNeverEmpty(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	// Every query of a matter partition fails; the matter rows themselves
	// (point reads) still answer, so each collection is a secondary read.
	env.Faulty.Add(storetest.Rule{Method: storetest.MethodQuery, Key: storetest.Prefix("T#demo#M#", ""), Err: store.ErrUnavailable})
	// …and so does every query of a credential's own partition (the
	// proposal pointers of list_my_proposals).
	env.Faulty.Add(storetest.Rule{Method: storetest.MethodQuery, Key: storetest.Prefix("T#demo#CRED#", ""), Err: store.ErrUnavailable})
	for _, c := range validCalls(seed.Meridian) {
		t.Run(c.tool+fmt.Sprint(c.args["query"]), func(t *testing.T) {
			res := s.Tool(t, c.tool, c.args)
			if c.tool == "list_matters" || c.tool == "get_matter" { // no secondary collection
				if res["isError"] == true {
					t.Fatalf("%s reads no matter-partition collection, yet refused: %v", c.tool, res)
				}
				return
			}
			if res["isError"] == true {
				t.Fatalf("refused instead of reporting the unreadable collection: %v", res["content"])
			}
			sc := servertest.Structured(t, res)
			unreadable := 0
			for k, v := range sc {
				field, ok := strings.CutSuffix(k, "_read_state")
				if !ok || v != "unreadable" {
					continue
				}
				unreadable++
				if sc[field] != nil {
					t.Errorf("%s is %v, want null (never [])", field, sc[field])
				}
				if n, has := sc[field+"_count"]; has && n != nil {
					t.Errorf("%s_count is %v, want null", field, n)
				}
				if field == "results" && sc["page"] != nil {
					t.Errorf("page is %v, want null", sc["page"])
				}
			}
			if unreadable == 0 {
				t.Fatalf("no collection reported unreadable: %v", sc)
			}
			if sc["verification_status"] != "unknown" {
				t.Errorf("roll-up = %v, want unknown", sc["verification_status"])
			}
		})
	}
	// The primary read failing is a refusal, never an empty success.
	env.Faulty.Reset()
	env.Faulty.Add(storetest.Rule{Method: storetest.MethodQuery, Key: storetest.Prefix("T#demo", ""), Err: store.ErrUnavailable})
	env.Faulty.Add(storetest.Rule{Method: storetest.MethodGet, Key: storetest.Prefix("T#demo", "MATTER#"), Err: store.ErrUnavailable})
	for _, c := range []readCall{{"list_matters", map[string]any{}}, {"get_matter", map[string]any{"case_id": seed.Alvarez}}} {
		res := s.Tool(t, c.tool, c.args)
		errObj, _ := res["structuredContent"].(map[string]any)["error"].(map[string]any)
		if res["isError"] != true || errObj["class"] != "UNAVAILABLE" {
			t.Errorf("%s with its primary read failing = %v, want an UNAVAILABLE refusal", c.tool, res)
		}
		text := fmt.Sprint(res["content"])
		if strings.Contains(text, "T#") || strings.Contains(text, "store:") {
			t.Errorf("%s refusal leaks internals: %s", c.tool, text)
		}
	}
}

func TestInvariantOtherTenantScreenedAndNonexistentMattersGetIdenticalRefusals(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	attorney := env.Initialize(t, servertest.Attorney, "2025-11-25")
	paralegal := env.Initialize(t, servertest.Paralegal, "2025-11-25")
	allowed := env.Initialize(t, servertest.AllowListed, "2025-11-25")
	safe := env.Initialize(t, servertest.ClientSafe, "2025-11-25")
	other := seed.Alvarez
	if other == env.AllowedMatter {
		other = seed.Meridian
	}
	for _, c := range validCalls(seed.Harbor) {
		if _, scoped := c.args["case_id"]; !scoped {
			continue
		}
		t.Run(c.tool, func(t *testing.T) {
			answers := map[string]string{}
			for name, probe := range map[string]struct {
				s      *servertest.Session
				matter string
			}{
				"another tenant's matter":                    {attorney, seed.Northwind},
				"a screened matter":                          {paralegal, seed.Harbor},
				"a nonexistent matter":                       {attorney, "m_does_not_exist"},
				"outside the allow-list":                     {allowed, other},
				"a client-safe key, another tenant's matter": {safe, seed.Northwind},
				"a client-safe key, a nonexistent matter":    {safe, "m_does_not_exist"},
				// Ids no matter can have: refused alike, and still audited
				// (a NUL once failed the audit commit, answering 503).
				"an id with a NUL":       {attorney, seed.Harbor + "\x00"},
				"an id with a separator": {attorney, seed.Harbor + "#AUDIT"},
			} {
				args := map[string]any{}
				for k, v := range c.args {
					args[k] = v
				}
				args["case_id"] = probe.matter
				res := probe.s.Tool(t, c.tool, args)
				delete(res, "_meta")
				b, _ := json.Marshal(res)
				answers[name] = string(b)
			}
			var first string
			for name, a := range answers {
				if !strings.Contains(a, `"NOT_FOUND"`) {
					t.Errorf("%s: %s, want NOT_FOUND", name, a)
				}
				if first == "" {
					first = a
				} else if a != first {
					t.Errorf("refusals differ:\n%s\n%s", first, a)
				}
			}
		})
	}
}

func TestInvariantARevokedKeyFailsOnItsNextCall(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	if res := s.Tool(t, "list_matters", map[string]any{}); res["isError"] == true {
		t.Fatalf("before revocation: %v", res)
	}
	cred := env.Creds[servertest.Attorney]
	if err := auth.Revoke(context.Background(), env.Store, cred.Tenant, cred.ID); err != nil {
		t.Fatal(err)
	}
	r := s.Post(t, []byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"list_matters","arguments":{}}}`))
	if r.Status != http.StatusUnauthorized {
		t.Errorf("after revocation: %d %s, want 401", r.Status, r.Body)
	}
	// The session belongs to the principal: another key of the same owner
	// keeps it.
	s.Key = env.Keys[servertest.Attorney2]
	if res := s.Tool(t, "list_matters", map[string]any{}); res["isError"] == true {
		t.Errorf("the owner's other key lost the session: %v", res)
	}
}

// TestInvariantAWallRaisedIsSeenOnTheNextCallThoughTheMatterWasDecoded:
// the decoded matter row a process keeps (store.RowCache; issue 19, item 2)
// is reused only for identical bytes, so a wall raised between two calls
// — a new version of the row — refuses the very next one, and taking the
// wall down lets the one after in.
func TestInvariantAWallRaisedIsSeenOnTheNextCallThoughTheMatterWasDecoded(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	args := map[string]any{"case_id": seed.Meridian}
	for i := range 2 { // the second call reuses the first's decoding
		if res := s.Tool(t, "get_matter", args); res["isError"] == true {
			t.Fatalf("call %d before the wall: %v", i, res)
		}
	}
	ctx := context.Background()
	if _, _, err := records.Screen(ctx, env.Store, seed.DemoTenant, seed.Meridian, seed.DemoAttorney, true, ""); err != nil {
		t.Fatal(err)
	}
	if class := servertest.RefusalClass(s.Tool(t, "get_matter", args)); class != tools.ClassNotFound {
		t.Errorf("the call after the wall was raised: class %q, want %s", class, tools.ClassNotFound)
	}
	if _, _, err := records.Screen(ctx, env.Store, seed.DemoTenant, seed.Meridian, seed.DemoAttorney, false, ""); err != nil {
		t.Fatal(err)
	}
	if res := s.Tool(t, "get_matter", args); res["isError"] == true {
		t.Errorf("the call after the wall came down: %v", res)
	}
}

// walkStrings calls f on every string in a JSON value.
func walkStrings(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case map[string]any:
		for k, e := range x {
			f(k)
			walkStrings(e, f)
		}
	case []any:
		for _, e := range x {
			walkStrings(e, f)
		}
	}
}

func TestInvariantAnAllowListedKeyNeverSeesOtherMatters(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.AllowListed, "2025-11-25")
	var others []string
	for _, m := range seed.DemoMatters {
		if m != env.AllowedMatter {
			others = append(others, m)
		}
	}
	for _, c := range validCalls(env.AllowedMatter) {
		res := s.Tool(t, c.tool, c.args)
		if res["isError"] == true {
			t.Errorf("%s on the allowed matter refused: %v", c.tool, res["content"])
		}
		walkStrings(res, func(v string) {
			for _, m := range others {
				if strings.Contains(v, m) {
					t.Errorf("%s answer names %s, outside the allow-list", c.tool, m)
				}
			}
		})
	}
	ms := servertest.Structured(t, s.Tool(t, "list_matters", map[string]any{}))["results"].([]any)
	if len(ms) != 1 || ms[0].(map[string]any)["case_id"] != env.AllowedMatter {
		t.Errorf("list_matters = %v, want only %s", ms, env.AllowedMatter)
	}
}

func TestInvariantAClientSafeKeyNeverSeesPrivilegedMaterial(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.ClientSafe, "2025-11-25")
	fx, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	var hidden []string // ids of privileged and work-product rows
	var privDocs []struct{ matter, id string }
	for _, d := range fx.Documents {
		if d.Privilege != "none" {
			hidden = append(hidden, d.ID)
			privDocs = append(privDocs, struct{ matter, id string }{d.Matter, d.ID})
		}
	}
	var privFacts []struct{ matter, id string }
	for _, f := range fx.Facts {
		if f.Privilege != "none" {
			hidden = append(hidden, f.ID)
			privFacts = append(privFacts, struct{ matter, id string }{f.Matter, f.ID})
		}
	}
	for _, n := range fx.Notes {
		if n.Privilege != "none" {
			hidden = append(hidden, n.ID)
		}
	}
	check := func(label string, res map[string]any) {
		walkStrings(res, func(v string) {
			if v == "privileged" || v == "work_product" {
				t.Errorf("%s shows a %s item", label, v)
			}
			for _, id := range hidden {
				if v == id || strings.HasSuffix(v, ":"+id) || strings.Contains(v, ":"+id+"/") {
					t.Errorf("%s names the withheld %s", label, id)
				}
			}
		})
	}
	for _, matter := range seed.DemoMatters {
		for _, c := range append(validCalls(matter), readCall{"search_documents", map[string]any{"query": "privileged confidential attorney strategy memo", "limit": 100}}) {
			check(matter+"/"+c.tool, s.Tool(t, c.tool, c.args))
		}
	}
	// A withheld item does not exist for the class (the answer is compared
	// with an absent id's in TestInvariantAClientSafeKeyGetsOneAnswerForAWithheldAndAnAbsentID).
	for _, d := range privDocs {
		for _, tool := range []string{"get_document", "search_in_document"} {
			args := map[string]any{"case_id": d.matter, "document_id": d.id}
			if tool == "search_in_document" {
				args["query"] = "agreement"
			}
			if got := servertest.RefusalClass(s.Tool(t, tool, args)); got != "NOT_FOUND" {
				t.Errorf("%s of privileged %s = %s, want NOT_FOUND", tool, d.id, got)
			}
		}
	}
	for _, f := range privFacts {
		res := s.Tool(t, "get_fact_provenance", map[string]any{"case_id": f.matter, "fact_id": f.id})
		if got := servertest.RefusalClass(res); got != "NOT_FOUND" {
			t.Errorf("get_fact_provenance of privileged %s = %s, want NOT_FOUND", f.id, got)
		}
	}
}

// idProbe is one read path that takes a caller-supplied id: the JSON-RPC
// method and its params for the id.
type idProbe struct {
	name   string
	method string
	params func(matter, id string) map[string]any
	// ok reports whether a standard key's answer shows the item (so the
	// probe is known to reach a real, withheld row).
	ok func(msg map[string]any) bool
}

// TestInvariantAClientSafeKeyGetsOneAnswerForAWithheldAndAnAbsentID: for a
// client-safe key a privileged or work-product item does not exist. On
// every read path that takes an item id — each id-taking tool, the
// document resource, document_id completion — the answer for a withheld id
// is byte for byte the answer for an absent one (class, message and shape;
// the id itself, which a resource's error quotes back as data.uri, and the
// JSON-RPC id replaced), while a standard key is shown the item. Prompts
// take no item id: their case_id is probed with a matter the key does not
// reach against one that does not exist.
func TestInvariantAClientSafeKeyGetsOneAnswerForAWithheldAndAnAbsentID(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	safe := env.Initialize(t, servertest.ClientSafe, "2025-11-25")
	standard := env.Initialize(t, servertest.Attorney, "2025-11-25")
	fx, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	withheldDocs, withheldFacts := map[string][]string{}, map[string][]string{}
	for _, d := range fx.Documents {
		if d.Privilege != records.PrivilegeNone {
			withheldDocs[d.Matter] = append(withheldDocs[d.Matter], d.ID)
		}
	}
	for _, f := range fx.Facts {
		if f.Privilege != records.PrivilegeNone {
			withheldFacts[f.Matter] = append(withheldFacts[f.Matter], f.ID)
		}
	}
	tool := func(name string, args func(matter, id string) map[string]any) func(matter, id string) map[string]any {
		return func(matter, id string) map[string]any {
			return map[string]any{"name": name, "arguments": args(matter, id)}
		}
	}
	toolOK := func(msg map[string]any) bool {
		res, _ := msg["result"].(map[string]any)
		return res != nil && res["isError"] != true
	}
	docProbes := []idProbe{
		{"get_document", "tools/call", tool("get_document", func(m, id string) map[string]any {
			return map[string]any{"case_id": m, "document_id": id}
		}), toolOK},
		{"search_in_document", "tools/call", tool("search_in_document", func(m, id string) map[string]any {
			return map[string]any{"case_id": m, "document_id": id, "query": "the"}
		}), func(msg map[string]any) bool {
			// "the" is a stop word: a real document is refused VALIDATION
			// for the query, as an absent or withheld one must be too.
			return true
		}},
		{"search_in_document (a query with words)", "tools/call", tool("search_in_document", func(m, id string) map[string]any {
			return map[string]any{"case_id": m, "document_id": id, "query": "agreement"}
		}), toolOK},
		{"get_document (a version it lacks)", "tools/call", tool("get_document", func(m, id string) map[string]any {
			return map[string]any{"case_id": m, "document_id": id, "version": 9999}
		}), func(msg map[string]any) bool { return true }},
		{"resources/read of the document", "resources/read", func(m, id string) map[string]any {
			return map[string]any{"uri": resources.Expand(resources.DocumentTemplate, map[string]string{"case_id": m, "document_id": id})}
		}, func(msg map[string]any) bool { return msg["result"] != nil }},
		{"document_id completion", "completion/complete", func(m, id string) map[string]any {
			return map[string]any{"ref": templateRef(resources.DocumentTemplate),
				"argument": map[string]any{"name": "document_id", "value": id},
				"context":  map[string]any{"arguments": map[string]any{"case_id": m}}}
		}, func(msg map[string]any) bool {
			res, _ := msg["result"].(map[string]any)
			c, _ := res["completion"].(map[string]any)
			values, _ := c["values"].([]any)
			return len(values) > 0
		}},
	}
	factProbes := []idProbe{
		{"get_fact_provenance", "tools/call", tool("get_fact_provenance", func(m, id string) map[string]any {
			return map[string]any{"case_id": m, "fact_id": id}
		}), toolOK},
	}
	answer := func(s *servertest.Session, p idProbe, matter, id string) (string, map[string]any) {
		msg := s.Call(t, p.method, p.params(matter, id))
		delete(msg, "id")
		if res, ok := msg["result"].(map[string]any); ok {
			delete(res, "_meta")
		}
		b, err := json.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		return strings.ReplaceAll(string(b), id, "<id>"), msg
	}
	run := func(probes []idProbe, withheld map[string][]string, absent func(matter string) string) {
		for _, p := range probes {
			for _, matter := range seed.DemoMatters {
				for _, id := range withheld[matter] {
					t.Run(p.name+"/"+id, func(t *testing.T) {
						if _, msg := answer(standard, p, matter, id); !p.ok(msg) {
							t.Fatalf("a standard key is not shown %s: %v", id, msg)
						}
						got, _ := answer(safe, p, matter, id)
						want, _ := answer(safe, p, matter, absent(matter))
						if got != want {
							t.Errorf("withheld %s answers\n%s\nbut an absent id answers\n%s", id, got, want)
						}
						if strings.Contains(got, "CLIENT_SAFE_REFUSED") || strings.Contains(got, "privilege") {
							t.Errorf("the answer tells the item is withheld: %s", got)
						}
					})
				}
			}
		}
	}
	run(docProbes, withheldDocs, func(matter string) string { return "d_" + matter[2:5] + "_absent_memo" })
	run(factProbes, withheldFacts, func(matter string) string { return "f_" + matter[2:5] + "_999" })

	// Every tool that takes an item id is probed: one added later must join
	// the tables above.
	probed := map[string]bool{}
	for _, p := range append(docProbes, factProbes...) {
		if p.method == "tools/call" {
			probed[p.params("", "")["name"].(string)] = true
		}
	}
	for _, name := range env.Server.Registry.Names() {
		if spec, _ := env.Server.Registry.Spec(name); spec.Write {
			continue // a client-safe credential never reaches a write tool's arguments (CLIENT_SAFE_REFUSED)
		}
		tl, _ := env.Server.Registry.Tool(name)
		var schema struct {
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(tl.InputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		for prop := range schema.Properties {
			if strings.HasSuffix(prop, "_id") && prop != "case_id" && !probed[name] {
				t.Errorf("tool %s takes %s but is not probed with a withheld and an absent id", name, prop)
			}
		}
	}

	// Prompts take a case_id only; the class withholds no matter, so the
	// funnel's one answer is what a client-safe key gets alike.
	promptProbe := idProbe{"prompts/get", "prompts/get", func(_, id string) map[string]any {
		return map[string]any{"name": prompts.PrivilegeCaution, "arguments": map[string]any{"case_id": id}}
	}, nil}
	got, _ := answer(safe, promptProbe, "", seed.Northwind)
	want, _ := answer(safe, promptProbe, "", "m_does_not_exist")
	if got != want {
		t.Errorf("prompts/get of another tenant's matter answers\n%s\nbut a nonexistent one\n%s", got, want)
	}
}

// StandardOnlyOutput is the standard-only fixture's answer.
type StandardOnlyOutput struct {
	Done bool `json:"done"`
}

// TestAStandardOnlyToolIsAbsentForAClientSafeKeyAndRefusedClientSafeRefused:
// a tool the client-safe class may never call (tools.Spec.StandardOnly) is
// not in its tools/list and is refused CLIENT_SAFE_REFUSED when called
// anyway — the one use of that class — while a standard key lists and
// calls it.
func TestAStandardOnlyToolIsAbsentForAClientSafeKeyAndRefusedClientSafeRefused(t *testing.T) {
	ran := 0
	env := servertest.New(t, servertest.Options{RegisterExtra: func(reg *tools.Registry) error {
		return tools.Register(reg, tools.Spec{
			Name: "fixture_standard_only", Title: "Standard only (test fixture)", Scope: auth.ScopeRead,
			Description: "A tool no client-safe credential may call.", StandardOnly: true,
		}, func(context.Context, *tools.Call, ProbeInput) (StandardOnlyOutput, error) {
			ran++
			return StandardOnlyOutput{Done: true}, nil
		})
	}})
	listed := func(s *servertest.Session) bool {
		for _, tl := range resultOf(t, s.Call(t, "tools/list", map[string]any{}))["tools"].([]any) {
			if tl.(map[string]any)["name"] == "fixture_standard_only" {
				return true
			}
		}
		return false
	}
	safe := env.Initialize(t, servertest.ClientSafe, "2025-11-25")
	standard := env.Initialize(t, servertest.Attorney, "2025-11-25")
	if listed(safe) {
		t.Error("tools/list of a client-safe key lists the standard-only tool")
	}
	if !listed(standard) {
		t.Error("tools/list of a standard key lacks the standard-only tool")
	}
	// Even with arguments the tool would refuse, the class is what is told.
	for _, args := range []map[string]any{{}, {"unexpected": 1}} {
		if got := servertest.RefusalClass(safe.Tool(t, "fixture_standard_only", args)); got != "CLIENT_SAFE_REFUSED" {
			t.Errorf("a client-safe call with %v = %q, want CLIENT_SAFE_REFUSED", args, got)
		}
	}
	if ran != 0 {
		t.Errorf("the tool ran %d times for a client-safe key", ran)
	}
	if got := servertest.RefusalClass(standard.Tool(t, "fixture_standard_only", map[string]any{})); got != "" || ran != 1 {
		t.Errorf("a standard call = %q after %d runs, want a success", got, ran)
	}
}

func TestInvariantAuditRowsEqualAuthenticatedCallsAndQueriesAreNeverStored(t *testing.T) {
	env := fixtureEnv(t, servertest.Options{})
	const secretQuery = "quokka zebra embezzlement"
	s := env.Initialize(t, servertest.Attorney, "2025-11-25") // 2 authenticated requests
	authenticated := 2
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_documents","arguments":{"query":"` + secretQuery + `"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fixture_echo","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"no/such/method"}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
	} {
		s.Post(t, []byte(body))
		authenticated++
	}
	// Refused before authentication: no audit row, no write.
	env.Do(t, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":7,"method":"ping"}`))
	env.Do(t, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":8,"method":"ping"}`), "Authorization: Bearer ck_0000000000000000000000000000000000000000")
	env.Do(t, http.MethodPost, []byte(`{"jsonrpc":`), "Authorization: Bearer "+s.Key)

	rows, err := audit.Day(context.Background(), env.Store, seed.DemoTenant, servertest.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != authenticated {
		t.Errorf("%d audit rows for %d authenticated calls", len(rows), authenticated)
	}
	var outcomes []string
	for _, r := range rows {
		outcomes = append(outcomes, r.Method+"="+r.Outcome)
		if r.Tool == "search_documents" && (r.QueryLen != len(secretQuery) || r.QuerySHA256 == "") {
			t.Errorf("search audit row lacks the query digest and length: %+v", r)
		}
	}
	for _, want := range []string{"tools/call=VALIDATION", "tools/call=rpc:-32602", "no/such/method=rpc:-32601", "notifications/cancelled=accepted"} {
		if !slices.Contains(outcomes, want) {
			t.Errorf("outcomes %v lack %s", outcomes, want)
		}
	}
	raw, err := os.ReadFile(env.DataPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, word := range strings.Fields(secretQuery) {
		if bytes.Contains(raw, []byte(word)) {
			t.Errorf("the data file contains the query word %q", word)
		}
	}
}

// TestInvariantAFailedAuditWriteWithholdsTheAnswer: nothing unaudited
// leaves the server, and the refusal leaks nothing — whether the audit row
// goes in a transaction (list_matters: its matters' index items join it)
// or alone as one put (get_matter, issue 19, item 6).
func TestInvariantAFailedAuditWriteWithholdsTheAnswer(t *testing.T) {
	for _, c := range []struct{ method, tool, args, secret string }{
		{storetest.MethodTransact, "list_matters", `{}`, "m_alvarez"},
		{storetest.MethodPut, "get_matter", `{"case_id":"m_meridian"}`, "Meridian"},
	} {
		env := servertest.New(t, servertest.Options{})
		s := env.Initialize(t, servertest.Attorney, "2025-11-25")
		env.Faulty.Add(storetest.Rule{Method: c.method, Err: errors.New("disk on fire")})
		r := s.Post(t, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+c.tool+`","arguments":`+c.args+`}}`))
		if r.Status != http.StatusServiceUnavailable || strings.Contains(string(r.Body), c.secret) || strings.Contains(string(r.Body), "fire") {
			t.Errorf("%s with its audit write (%s) failing: %d %s, want 503 without the answer or internals", c.tool, c.method, r.Status, r.Body)
		}
	}
}

// TestInvariantAClientSafeKeyNeverSeesAPrivilegedCitation: a matter and a
// deadline that cite a work-product document, and every fact's provenance,
// name no withheld document to a client-safe key, by id or provenance id,
// in tools and resources alike; a standard key still sees the citation.
func TestInvariantAClientSafeKeyNeverSeesAPrivilegedCitation(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	ctx := context.Background()
	repo := records.NewRepo(env.Store)
	fx, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	withheld := map[string]string{} // matter → one withheld document
	var hidden []string
	for _, d := range fx.Documents {
		if d.Privilege != "none" {
			hidden = append(hidden, d.ID)
			withheld[d.Matter] = d.ID
		}
	}
	if len(withheld) == 0 {
		t.Fatal("the demo seed has no privileged document to cite")
	}
	for matter, doc := range withheld {
		rewriteRow(t, env.Store, records.MatterKey(seed.DemoTenant, matter), "source_document_id", doc)
		deadlines, err := repo.Deadlines(ctx, seed.DemoTenant, matter)
		if err != nil || len(deadlines) == 0 {
			t.Fatalf("deadlines of %s: %d, %v", matter, len(deadlines), err)
		}
		d := deadlines[0]
		rewriteRow(t, env.Store, records.DeadlineKey(seed.DemoTenant, matter, d.Due, d.ID), "source_document_id", doc)
		notes, err := repo.Notes(ctx, seed.DemoTenant, matter)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range notes {
			if n.Privilege == "none" {
				rewriteRow(t, env.Store, records.NoteKey(seed.DemoTenant, matter, n.CreatedAt, n.ID), "document_id", doc)
				break
			}
		}
	}

	safe := env.Initialize(t, servertest.ClientSafe, "2025-11-25")
	standard := env.Initialize(t, servertest.Attorney, "2025-11-25")
	check := func(label string, v any) {
		walkStrings(v, func(s string) {
			for _, id := range hidden {
				if s == id || strings.HasSuffix(s, ":"+id) || strings.Contains(s, ":"+id+"/") {
					t.Errorf("%s names the withheld %s", label, id)
				}
			}
		})
	}
	check("list_matters", safe.Tool(t, "list_matters", map[string]any{"limit": 100}))
	for matter, doc := range withheld {
		for _, tool := range []string{"get_matter", "list_deadlines", "list_case_notes"} {
			check(matter+"/"+tool, safe.Tool(t, tool, map[string]any{"case_id": matter}))
			if got, _ := json.Marshal(standard.Tool(t, tool, map[string]any{"case_id": matter})); !bytes.Contains(got, []byte(doc)) {
				t.Errorf("%s of %s for a standard key does not cite %s: the rewrite did not take", tool, matter, doc)
			}
		}
		check(matter+" resource", safe.Call(t, "resources/read", map[string]any{"uri": "custody://matters/" + matter}))
	}
	provenance := func(label string) {
		for _, f := range fx.Facts {
			if f.Privilege == "none" {
				check(label+"get_fact_provenance "+f.ID, safe.Tool(t, "get_fact_provenance", map[string]any{"case_id": f.Matter, "fact_id": f.ID}))
			}
		}
	}
	provenance("")
	// With the cited pages unreadable, what a client-safe key may see is
	// unknown: nothing withheld may show through the failure.
	env.Faulty.Add(storetest.Rule{Method: storetest.MethodQuery, Key: storetest.Prefix("T#demo#M#", ""), Err: store.ErrUnavailable})
	// …and so does every query of a credential's own partition (the
	// proposal pointers of list_my_proposals).
	env.Faulty.Add(storetest.Rule{Method: storetest.MethodQuery, Key: storetest.Prefix("T#demo#CRED#", ""), Err: store.ErrUnavailable})
	provenance("sources unreadable: ")
	for matter := range withheld {
		check(matter+" facts unreadable", safe.Tool(t, "get_fact_record", map[string]any{"case_id": matter}))
	}
}

// rewriteRow sets one field of a record row's data in place.
func rewriteRow(t *testing.T, st store.Store, key store.Key, field string, value any) {
	t.Helper()
	ctx := context.Background()
	it, err := st.Get(ctx, key)
	if err != nil {
		t.Fatalf("get %v: %v", key, err)
	}
	var data map[string]any
	if err := json.Unmarshal(it.Bytes(records.AttrData), &data); err != nil {
		t.Fatal(err)
	}
	data[field] = value
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	it.Attrs[records.AttrData] = b
	if err := st.Put(ctx, it); err != nil {
		t.Fatalf("put %v: %v", key, err)
	}
}
