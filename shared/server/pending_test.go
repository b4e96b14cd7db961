package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/intake"
	"github.com/custodymcp/custody/shared/intake/extract"
	"github.com/custodymcp/custody/shared/intake/review"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/resources"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/uploads"
)

// pendingPhrase is the text of the pending documents' pages: words no
// seeded document holds.
const pendingPhrase = "periwinkle scaffolding buckled under the gantry"

// putPending writes a document of Alvarez as intake writes it (pending
// review, its chunks pending), of privilege p, and a fact citing its page
// 2, and returns the document's and the fact's ids.
func putPending(t *testing.T, env *servertest.Env, p records.Privilege, factID string) string {
	t.Helper()
	ctx := context.Background()
	obj := blob.NewID()
	u := uploads.Upload{ID: uploads.UploadID(obj), Object: obj, Tenant: seed.DemoTenant, Matter: seed.Alvarez,
		CredentialID: env.Creds[servertest.Attorney].ID, Filename: "inspection.pdf", Size: 10, SHA256: strings.Repeat("cd", 32)}
	res := &extract.Result{MediaType: "application/pdf", TextState: extract.Partial, Reason: "page limit: 2 of 9 pages", Pages: 2,
		Chunks: []extract.Chunk{{Page: 1, Text: "Inspection notes."}, {Page: 2, Text: "On the second visit the " + pendingPhrase + "."}}}
	d, v, chunks, err := intake.Rows(u, res, blob.Stored(obj).Key, env.Clock.Now().Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	d.Privilege = p
	var ops []store.Op
	for _, c := range chunks {
		c.Privilege = p
		it, err := records.ChunkItem(seed.DemoTenant, c, v.PageCount)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, store.PutOp(it))
	}
	di, _ := records.DocumentItem(seed.DemoTenant, d)
	vi, _ := records.VersionItem(seed.DemoTenant, v)
	at := env.Clock.Now().Add(-time.Minute)
	f := records.Fact{ID: factID, Matter: seed.Alvarez, Statement: "The scaffolding buckled.", Posture: records.PostureUnresolved,
		Privilege: records.PrivilegeNone, Assertions: []records.Assertion{{Quote: "the second visit", DocumentID: d.ID, Version: 1,
			PageStart: 2, PageEnd: 2, SourceClass: records.SourceDocument, Party: "plaintiff"}}, CreatedAt: at, UpdatedAt: at}
	fi, err := records.FactItem(seed.DemoTenant, f)
	if err != nil {
		t.Fatal(err)
	}
	ops = append(ops, store.PutOp(di), store.PutOp(vi), store.PutOp(fi))
	if err := env.Store.Transact(ctx, ops); err != nil {
		t.Fatal(err)
	}
	return d.ID
}

// readCallsWith are calls of every read tool naming doc (and fact) where a
// tool takes one, and the matter's collections otherwise.
func readCallsWith(doc, fact string) []readCall {
	return []readCall{
		{"list_matters", map[string]any{}},
		{"get_matter", map[string]any{"case_id": seed.Alvarez}},
		{"list_documents", map[string]any{"case_id": seed.Alvarez, "limit": 100}},
		{"get_document", map[string]any{"case_id": seed.Alvarez, "document_id": doc}},
		{"search_documents", map[string]any{"query": pendingPhrase, "case_id": seed.Alvarez}},
		{"search_documents", map[string]any{"query": pendingPhrase}},
		{"search_in_document", map[string]any{"case_id": seed.Alvarez, "document_id": doc, "query": "periwinkle"}},
		{"get_fact_record", map[string]any{"case_id": seed.Alvarez, "limit": 100}},
		{"get_fact_provenance", map[string]any{"case_id": seed.Alvarez, "fact_id": fact}},
		{"list_deadlines", map[string]any{"case_id": seed.Alvarez}},
		{"list_case_notes", map[string]any{"case_id": seed.Alvarez}},
		{"list_my_proposals", map[string]any{"case_id": seed.Alvarez}},
	}
}

// A document pending review, and its chunks, are absent through every
// registered read tool, resources/read and resources/list, completion and
// search — the same answer as a document that does not exist — for an
// attorney and a client_safe key alike (issue 18 §2; downloads:
// lanetools' TestDownloadsOfUnreviewedWithheldOrUnstoredDocumentsAreRefused).
// Reviewed as none, a client_safe key sees it and search finds its page 2;
// reviewed as work_product, a client_safe key does not.
func TestAPendingDocumentIsAbsentThroughEveryReadPathForEveryClass(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	sessions := map[string]*servertest.Session{
		servertest.Attorney:   env.Initialize(t, servertest.Attorney, "2025-11-25"),
		servertest.ClientSafe: env.Initialize(t, servertest.ClientSafe, "2025-11-25"),
	}
	doc := putPending(t, env, records.PrivilegeNone, "f_alv_pending_cite")
	const absentDoc, absentFact = "d_up_00000000000000000000000000000000", "f_alv_absent_cite"
	// The fact citing the absent document is the pending one's twin.
	twin := putPending(t, env, records.PrivilegeNone, absentFact)
	if err := env.Store.Delete(context.Background(), records.DocumentKey(seed.DemoTenant, seed.Alvarez, twin)); err != nil {
		t.Fatal(err)
	}

	normalize := func(msg map[string]any, ids ...string) string {
		delete(msg, "id")
		if res, ok := msg["result"].(map[string]any); ok {
			delete(res, "_meta")
		}
		b, err := json.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for _, id := range ids {
			s = strings.ReplaceAll(s, id, "<id>")
		}
		return s
	}
	// Every read tool of the registry has a call.
	covered := map[string]bool{}
	for _, c := range readCallsWith(doc, "") {
		covered[c.tool] = true
	}
	for _, name := range env.Server.Registry.Names() {
		// The governed writes and list_actions (scope write) read no
		// document: servertest.WriteSuite covers them.
		if spec, _ := env.Server.Registry.Spec(name); spec.Write || spec.Scope == auth.ScopeWrite {
			continue
		}
		if !covered[name] {
			t.Errorf("read tool %s is not probed with a pending document", name)
		}
	}
	for role, s := range sessions {
		pendingCalls, absentCalls := readCallsWith(doc, "f_alv_pending_cite"), readCallsWith(absentDoc, absentFact)
		for i, c := range pendingCalls {
			t.Run(role+"/"+c.tool, func(t *testing.T) {
				raw := normalize(s.Call(t, "tools/call", map[string]any{"name": c.tool, "arguments": c.args}))
				if names := c.args["document_id"] != nil || c.args["fact_id"] != nil; names {
					// A call naming the pending document (or a fact citing
					// it) answers as for an absent one.
					got := strings.NewReplacer(doc, "<id>", "f_alv_pending_cite", "<id>").Replace(raw)
					want := normalize(s.Call(t, "tools/call", map[string]any{"name": c.tool, "arguments": absentCalls[i].args}), absentDoc, absentFact)
					if got != want {
						t.Errorf("pending answers\n%s\nbut absent answers\n%s", got, want)
					}
				} else if c.tool == "get_fact_record" {
					// A fact's own citation names what it cites: the fact
					// citing the pending document reads as its twin citing
					// an absent one.
					items := map[string]string{}
					for _, it := range servertest.Structured(t, s.Tool(t, c.tool, c.args))["results"].([]any) {
						m := it.(map[string]any)
						b, _ := json.Marshal(m)
						items[m["id"].(string)] = strings.NewReplacer(doc, "<doc>", twin, "<doc>", "f_alv_pending_cite", "<fact>", absentFact, "<fact>").Replace(string(b))
					}
					if items["f_alv_pending_cite"] == "" || items["f_alv_pending_cite"] != items[absentFact] {
						t.Errorf("the fact citing the pending document\n%s\nthe fact citing an absent one\n%s", items["f_alv_pending_cite"], items[absentFact])
					}
				} else if strings.Contains(raw, doc) {
					t.Errorf("the answer names the pending document: %s", raw)
				}
				if strings.Contains(raw, "periwinkle") || strings.Contains(raw, "inspection.pdf") {
					t.Errorf("the answer carries the pending document's text or name: %s", raw)
				}
			})
		}
		t.Run(role+"/resources", func(t *testing.T) {
			uri := func(id string) string {
				return resources.Expand(resources.DocumentTemplate, map[string]string{"case_id": seed.Alvarez, "document_id": id})
			}
			got := normalize(s.Call(t, "resources/read", map[string]any{"uri": uri(doc)}), doc)
			want := normalize(s.Call(t, "resources/read", map[string]any{"uri": uri(absentDoc)}), absentDoc)
			if got != want {
				t.Errorf("resources/read of the pending document\n%s\nof an absent one\n%s", got, want)
			}
			list := normalize(s.Call(t, "resources/list", map[string]any{}))
			if strings.Contains(list, doc) {
				t.Error("resources/list names the pending document")
			}
			comp := normalize(s.Call(t, "completion/complete", map[string]any{"ref": templateRef(resources.DocumentTemplate),
				"argument": map[string]any{"name": "document_id", "value": "d_up"},
				"context":  map[string]any{"arguments": map[string]any{"case_id": seed.Alvarez}}}))
			if strings.Contains(comp, doc) {
				t.Errorf("completion offers the pending document: %s", comp)
			}
		})
	}

	// Reviewed as none: the client-safe key sees it, and search finds the
	// phrase on page 2 with the document, version and page cited, and the
	// text state in the notes.
	if _, err := review.Review(context.Background(), env.Store, review.Request{Tenant: seed.DemoTenant, Matter: seed.Alvarez,
		Document: doc, By: seed.DemoAttorney, Privilege: records.PrivilegeNone}, env.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	for role, s := range sessions {
		res := servertest.Structured(t, s.Tool(t, "search_documents", map[string]any{"query": "periwinkle scaffolding", "case_id": seed.Alvarez}))
		hits, _ := res["results"].([]any)
		if len(hits) != 1 {
			t.Fatalf("%s: search after review = %v, want one hit", role, res["results"])
		}
		p := hits[0].(map[string]any)
		if p["document_id"] != doc || p["version"] != float64(1) || p["page_start"] != float64(2) {
			t.Errorf("%s: hit = %v, want %s v1 page 2", role, p, doc)
		}
		notes, _ := json.Marshal(res["verification"])
		if !strings.Contains(string(notes), "partial (page limit: 2 of 9 pages)") {
			t.Errorf("%s: the notes do not carry the text state: %s", role, notes)
		}
		in := servertest.Structured(t, s.Tool(t, "search_in_document", map[string]any{"case_id": seed.Alvarez, "document_id": doc, "query": "periwinkle"}))
		if items, _ := in["results"].([]any); len(items) != 1 {
			t.Errorf("%s: search_in_document after review = %v, want one passage", role, in["results"])
		}
	}

	// Reviewed as work_product: not for the client-safe key.
	wp := putPending(t, env, records.PrivilegeNone, "f_alv_wp_cite")
	if _, err := review.Review(context.Background(), env.Store, review.Request{Tenant: seed.DemoTenant, Matter: seed.Alvarez,
		Document: wp, By: seed.DemoAttorney, Privilege: records.PrivilegeWorkProduct}, env.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	args := func(id string) map[string]any { return map[string]any{"case_id": seed.Alvarez, "document_id": id} }
	if res := sessions[servertest.Attorney].Tool(t, "get_document", args(wp)); res["isError"] == true {
		t.Errorf("the attorney is not shown the work-product document: %v", res["content"])
	}
	got := normalize(sessions[servertest.ClientSafe].Call(t, "tools/call", map[string]any{"name": "get_document", "arguments": args(wp)}), wp)
	want := normalize(sessions[servertest.ClientSafe].Call(t, "tools/call", map[string]any{"name": "get_document", "arguments": args(absentDoc)}), absentDoc)
	if got != want {
		t.Errorf("a client-safe key is shown a work-product review:\n%s\nvs absent\n%s", got, want)
	}
}
