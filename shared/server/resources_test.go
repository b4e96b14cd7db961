package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	validator "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/custodymcp/custody/shared/admin"
	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/prompts"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/resources"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/tools"
)

// Resources are Custody's read tools addressed by URI (package resources).

func readResource(t *testing.T, s *servertest.Session, params any) map[string]any {
	t.Helper()
	return s.Call(t, "resources/read", params)
}

func TestFB21_ReadingAnUnknownResourceIsMinus32002WithTheURIAndANonURIIsMinus32602(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	attorney := env.Initialize(t, servertest.Attorney, "2025-11-25")
	paralegal := env.Initialize(t, servertest.Paralegal, "2025-11-25")
	readOnly := env.Initialize(t, servertest.ReadOnly, "2025-11-25")
	clientSafe := env.Initialize(t, servertest.ClientSafe, "2025-11-25")
	notFound := []struct {
		name string
		s    *servertest.Session
		uri  string
	}{
		{"unknown scheme", attorney, "test://nonexistent-resource-for-conformance-testing"},
		{"unknown Custody path", attorney, "custody://nowhere"},
		{"a template with an empty variable", attorney, "custody://matters/"},
		{"a template with a trailing segment", attorney, "custody://matters/m_alvarez/facts/extra"},
		{"a matter that does not exist", attorney, resources.MatterURI("m_nonexistent")},
		{"another tenant's matter", attorney, resources.MatterURI(seed.Northwind)},
		{"a matter behind an ethical wall", paralegal, resources.MatterURI(seed.Harbor)},
		{"a document the scopes hide", readOnly, "custody://matters/m_alvarez/documents/d_alv_complaint"},
		{"a privileged document for a client-safe key", clientSafe, "custody://matters/m_alvarez/documents/d_alv_intake_memo"},
		{"a document that does not exist", attorney, "custody://matters/m_alvarez/documents/d_nope"},
		{"a value the tool's schema refuses", attorney, resources.MatterURI(strings.Repeat("m", 200))},
	}
	for _, tc := range notFound {
		t.Run(tc.name, func(t *testing.T) {
			msg := readResource(t, tc.s, map[string]any{"uri": tc.uri})
			e := rpcErrorOf(msg)
			if e == nil || e["code"] != -32002.0 {
				t.Fatalf("resources/read %s = %v, want -32002", tc.uri, msg)
			}
			if data, _ := e["data"].(map[string]any); data["uri"] != tc.uri {
				t.Errorf("error data = %v, want {uri: %q}", e["data"], tc.uri)
			}
		})
	}
	// The refusals are one answer: nothing says which rule refused.
	a := rpcErrorOf(readResource(t, paralegal, map[string]any{"uri": resources.MatterURI(seed.Harbor)}))
	b := rpcErrorOf(readResource(t, paralegal, map[string]any{"uri": resources.MatterURI("m_nonexistent")}))
	if a["message"] != b["message"] {
		t.Errorf("a screened matter answers %q, a nonexistent one %q: they must not differ", a["message"], b["message"])
	}
	for name, params := range map[string]any{
		"not a uri":   map[string]any{"uri": "not a uri"},
		"no scheme":   map[string]any{"uri": "/matters/m_alvarez"},
		"missing uri": map[string]any{},
		"empty uri":   map[string]any{"uri": ""},
		"uri number":  map[string]any{"uri": 42},
		"no params":   nil,
	} {
		t.Run(name+" is -32602", func(t *testing.T) {
			msg := readResource(t, attorney, params)
			if e := rpcErrorOf(msg); e == nil || e["code"] != -32602.0 {
				t.Errorf("resources/read %v = %v, want -32602", params, msg)
			}
		})
	}
}

func TestReadingACustodyResourceReturnsTheToolsAttestedEnvelopeAndAuditsToolAndMatter(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	c := validator.NewCompiler()
	for _, tc := range []struct {
		uri, tool string
	}{
		{resources.MatterURI(seed.Alvarez), "get_matter"},
		{"custody://matters/m_alvarez/documents/d_alv_complaint", "get_document"},
		{"custody://matters/m_alvarez/facts", "get_fact_record"},
		{"custody://matters/m_alvarez/deadlines", "list_deadlines"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			res := resultOf(t, readResource(t, s, map[string]any{"uri": tc.uri}))
			contents := res["contents"].([]any)
			if len(contents) != 1 {
				t.Fatalf("contents = %v, want one block", contents)
			}
			block := contents[0].(map[string]any)
			if block["uri"] != tc.uri || block["mimeType"] != "application/json" {
				t.Errorf("block uri %v mimeType %v, want %s application/json", block["uri"], block["mimeType"], tc.uri)
			}
			text, _ := block["text"].(string)
			var envelope map[string]any
			if err := json.Unmarshal([]byte(text), &envelope); err != nil {
				t.Fatalf("text is not JSON: %q", text)
			}
			// The same envelope tools/call answers, and it validates the
			// tool's strict success schema (every envelope field present).
			schemaURL := "mem://" + tc.tool + ".json"
			if err := c.AddResource(schemaURL, jsonValue(t, json.RawMessage(env.Server.Registry.StrictSchema(tc.tool)))); err != nil {
				t.Fatal(err)
			}
			sch, err := c.Compile(schemaURL)
			if err != nil {
				t.Fatal(err)
			}
			if err := sch.Validate(jsonValue(t, envelope)); err != nil {
				t.Errorf("the resource's text does not validate %s's strict envelope schema: %v", tc.tool, err)
			}
			if envelope["case_id"] != seed.Alvarez || envelope["verification_status"] == nil || envelope["as_of"] == nil {
				t.Errorf("envelope lacks the attestation: %v", envelope)
			}
			called := servertest.Structured(t, s.Tool(t, tc.tool, toolArgs(tc.uri)))
			delete(called, "generated_at")
			delete(envelope, "generated_at")
			if fmt.Sprint(called) != fmt.Sprint(envelope) {
				t.Errorf("the resource differs from %s's answer:\n%v\n%v", tc.tool, envelope, called)
			}
		})
	}
	rows, err := audit.Day(context.Background(), env.Store, seed.DemoTenant, servertest.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	var reads []audit.Record
	for _, r := range rows {
		if r.Method == "resources/read" {
			reads = append(reads, r)
		}
	}
	if len(reads) != 4 {
		t.Fatalf("%d audit rows of resources/read, want 4", len(reads))
	}
	for _, r := range reads {
		if r.Tool == "" || r.Matter != seed.Alvarez || r.Resource == "" || r.Outcome != audit.OutcomeOK {
			t.Errorf("audit row %+v, want the tool, matter %s, the URI and outcome ok", r, seed.Alvarez)
		}
	}
}

// toolArgs are the arguments a Custody resource URI stands for.
func toolArgs(uri string) map[string]any {
	parts := strings.Split(strings.TrimPrefix(uri, "custody://matters/"), "/")
	args := map[string]any{"case_id": parts[0]}
	switch {
	case len(parts) == 3:
		args["document_id"] = parts[2]
	case len(parts) == 2:
		args["limit"] = 100
	}
	return args
}

func TestResourcesListExpandsOnlyTheMattersAKeyReaches(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	for _, tc := range []struct {
		role    string
		matters []string
	}{
		{servertest.Attorney, seed.DemoMatters},
		{servertest.AllowListed, []string{env.AllowedMatter}},
		{servertest.Paralegal, []string{seed.Alvarez, seed.Meridian}},
		{servertest.OtherFirm, []string{seed.Northwind}},
	} {
		t.Run(tc.role, func(t *testing.T) {
			s := env.Initialize(t, tc.role, "2025-11-25")
			uris, _ := listAll(t, s, listMethod{"resources/list", "resources", "uri"})
			if want := demoResourceURIs(tc.matters...); !slices.Equal(uris, want) {
				t.Errorf("resources/list = %v, want %v", uris, want)
			}
		})
	}
}

func TestAReadOnlyKeySeesNoDocumentResourcesOrTemplates(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.ReadOnly, "2025-11-25")
	templates, _ := listAll(t, s, listMethod{"resources/templates/list", "resourceTemplates", "uriTemplate"})
	if slices.Contains(templates, resources.DocumentTemplate) || len(templates) != 3 {
		t.Errorf("templates for a read-only key = %v, want the three without documents", templates)
	}
	uris, _ := listAll(t, s, listMethod{"resources/list", "resources", "uri"})
	for _, u := range uris {
		if strings.Contains(u, "/documents/") {
			t.Errorf("resources/list for a read-only key lists %s", u)
		}
	}
	msg := s.Call(t, "completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/resource", "uri": resources.DocumentTemplate}, "argument": map[string]any{"name": "case_id", "value": ""}})
	if e := rpcErrorOf(msg); e == nil || e["code"] != -32602.0 {
		t.Errorf("completing the hidden document template = %v, want -32602 like an unknown one", msg)
	}
}

func TestResourcesListAndTemplatesCarryTitlesFrom20250618Only(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	for rev, want := range map[string]bool{"2024-11-05": false, "2025-03-26": false, "2025-06-18": true, "2025-11-25": true} {
		s := env.Initialize(t, servertest.Attorney, rev)
		for _, lm := range []listMethod{listMethods[1], listMethods[2], listMethods[3]} {
			res := resultOf(t, s.Call(t, lm.method, map[string]any{}))
			for _, it := range res[lm.items].([]any) {
				if _, has := it.(map[string]any)["title"]; has != want {
					t.Errorf("%s %s: title present %v, want %v", rev, lm.method, has, want)
				}
			}
		}
	}
}

func TestSubscriptionsAreServedOnlyWithTheGETStream(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	r := env.Do(t, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`),
		"Authorization: Bearer "+s.Key)
	caps := r.JSON(t)["result"].(map[string]any)["capabilities"].(map[string]any)
	if caps["resources"].(map[string]any)["subscribe"] != false {
		t.Errorf("capabilities.resources = %v without the GET stream, want subscribe false", caps["resources"])
	}
	for _, m := range []string{"resources/subscribe", "resources/unsubscribe"} {
		msg := s.Call(t, m, map[string]any{"uri": resources.MatterURI(seed.Alvarez)})
		if e := rpcErrorOf(msg); e == nil || e["code"] != -32601.0 {
			t.Errorf("%s without the GET stream = %v, want -32601", m, msg)
		}
	}
}

func TestAScreenChangeNotifiesSubscribersOnTheirGETStream(t *testing.T) {
	env := servertest.New(t, servertest.Options{GETStream: true})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	uri := resources.MatterURI(seed.Alvarez)
	r := s.Post(t, []byte(`{"jsonrpc":"2.0","id":"sub","method":"resources/subscribe","params":{"uri":"`+uri+`"}}`))
	if body := string(r.Body); r.Status != http.StatusOK || body != `{"jsonrpc":"2.0","id":"sub","result":{}}` {
		t.Fatalf("subscribe = %d %s, want exactly {} as the result", r.Status, body)
	}
	es := servertest.OpenStream(t, http.MethodGet, env.URL, nil, append(s.Headers(), "Accept: text/event-stream")...)
	if ev, ok := es.Next(); !ok || ev.Data != "" {
		t.Fatalf("first event %+v, want the priming event", ev)
	}
	screen := admin.ScreenRequest{Tenant: seed.DemoTenant, CaseID: seed.Alvarez, Principal: seed.DemoParalegal, Screened: true}
	res, err := admin.Screen(context.Background(), env.Store, screen, servertest.Epoch)
	if err != nil || !res.Changed || res.Notified != 1 || res.NotifyError != "" {
		t.Fatalf("Screen = %+v, %v; want a change notifying one session", res, err)
	}
	msg := es.NextMessage(t)
	if msg["method"] != "notifications/resources/updated" || msg["params"].(map[string]any)["uri"] != uri {
		t.Errorf("the stream delivered %v, want notifications/resources/updated for %s", msg, uri)
	}

	r = s.Post(t, []byte(`{"jsonrpc":"2.0","id":"unsub","method":"resources/unsubscribe","params":{"uri":"`+uri+`"}}`))
	if body := string(r.Body); r.Status != http.StatusOK || body != `{"jsonrpc":"2.0","id":"unsub","result":{}}` {
		t.Fatalf("unsubscribe = %d %s, want exactly {} as the result", r.Status, body)
	}
	screen.Screened = false
	if res, err := admin.Screen(context.Background(), env.Store, screen, servertest.Epoch); err != nil || !res.Changed || res.Notified != 0 {
		t.Errorf("Screen after unsubscribing = %+v, %v; want a change notifying nobody", res, err)
	}
}

func TestSubscribingRefusesWhatReadingRefuses(t *testing.T) {
	env := servertest.New(t, servertest.Options{GETStream: true})
	s := env.Initialize(t, servertest.Paralegal, "2025-11-25")
	for _, uri := range []string{resources.MatterURI(seed.Harbor), "custody://nowhere"} {
		msg := s.Call(t, "resources/subscribe", map[string]any{"uri": uri})
		if e := rpcErrorOf(msg); e == nil || e["code"] != -32002.0 || e["data"].(map[string]any)["uri"] != uri {
			t.Errorf("subscribe %s = %v, want -32002 with data.uri", uri, msg)
		}
	}
	if msg := s.Call(t, "resources/subscribe", map[string]any{"uri": "not a uri"}); rpcErrorOf(msg)["code"] != -32602.0 {
		t.Errorf("subscribe to a non-URI = %v, want -32602", msg)
	}
	// Nothing was subscribed: a change to the screened matter notifies no one.
	res, err := admin.Screen(context.Background(), env.Store, admin.ScreenRequest{Tenant: seed.DemoTenant,
		CaseID: seed.Harbor, Principal: seed.DemoAdmin, Screened: true}, servertest.Epoch)
	if err != nil || res.Notified != 0 {
		t.Errorf("Screen = %+v, %v; want nobody notified", res, err)
	}
}

func TestResourcesReadIsRateLimitedAs429AndAudited(t *testing.T) {
	env := servertest.New(t, servertest.Options{Limits: ratelimit.Limits{ratelimit.LaneRead: 3, ratelimit.LaneExpensive: 1}})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25") // two reads counted
	uri := resources.MatterURI(seed.Alvarez)
	if msg := readResource(t, s, map[string]any{"uri": uri}); msg["result"] == nil {
		t.Fatalf("read within the limit = %v", msg)
	}
	r := s.Post(t, []byte(`{"jsonrpc":"2.0","id":"over","method":"resources/read","params":{"uri":"`+uri+`"}}`))
	if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Fatalf("resources/read over the limit: %d %s, want 429 with Retry-After", r.Status, r.Body)
	}
	if e := rpcErrorOf(r.JSON(t)); e == nil || e["code"] != -32000.0 || e["data"].(map[string]any)["retry_after_s"] == nil {
		t.Errorf("429 body = %s, want -32000 with data.retry_after_s", r.Body)
	}
	rows, err := audit.Day(context.Background(), env.Store, seed.DemoTenant, servertest.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, row := range rows {
		if row.Method == "resources/read" {
			outcomes = append(outcomes, row.Outcome)
		}
	}
	slices.Sort(outcomes) // the test clock stands still: rows of one instant come in request-id order
	if !slices.Equal(outcomes, []string{"http:429", "ok"}) {
		t.Errorf("resources/read audit outcomes = %v, want one ok and one http:429", outcomes)
	}
}

func TestAFrozenTenantsPromptsResourcesAndCompletionProduceNothing(t *testing.T) {
	env := servertest.New(t, servertest.Options{KillSwitch: tools.KillSwitch{FrozenTenants: map[string]bool{seed.DemoTenant: true}}})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	if uris, _ := listAll(t, s, listMethods[2]); len(uris) != 0 {
		t.Errorf("resources/list of a frozen tenant = %v, want none", uris)
	}
	if values := completionOf(t, complete(t, s, promptRef(prompts.DraftingDiscipline), "case_id", "")); len(values) != 0 {
		t.Errorf("completion of a frozen tenant = %v, want none", values)
	}
	if e := rpcErrorOf(getPrompt(t, s, prompts.PrivilegeCaution, map[string]any{"case_id": seed.Alvarez})); e == nil || e["code"] != -32602.0 {
		t.Errorf("prompts/get of a frozen tenant = %v, want -32602", e)
	}
	if e := rpcErrorOf(readResource(t, s, map[string]any{"uri": resources.MatterURI(seed.Alvarez)})); e == nil || e["code"] != -32603.0 ||
		!strings.Contains(e["message"].(string), "switched off") {
		t.Errorf("resources/read of a frozen tenant = %v, want -32603 saying it is switched off", e)
	}
	// Another firm is not frozen with it.
	other := env.Initialize(t, servertest.OtherFirm, "2025-11-25")
	if uris, _ := listAll(t, other, listMethods[2]); len(uris) != 3 {
		t.Errorf("resources/list of another firm = %v, want its matter's three", uris)
	}
}

func TestIn2026AnUnknownResourceIsMinus32602WithTheURI(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	key := env.Keys[servertest.Paralegal]
	for i, uri := range []string{"test://nonexistent-resource-for-conformance-testing", resources.MatterURI(seed.Harbor)} {
		r := call2026(t, env.URL, key, i+1, "resources/read", map[string]any{"uri": uri})
		e := rpcErrorOf(r.JSON(t))
		if e == nil || e["code"] != -32602.0 || e["data"].(map[string]any)["uri"] != uri {
			t.Errorf("2026 resources/read %s = %s, want -32602 with data.uri", uri, r.Body)
		}
	}
	r := call2026(t, env.URL, key, 9, "resources/read", map[string]any{"uri": resources.MatterURI(seed.Alvarez)})
	res := resultOf(t, r.JSON(t))
	if res["resultType"] != "complete" || res["cacheScope"] != "private" || len(res["contents"].([]any)) != 1 {
		t.Errorf("2026 resources/read = %v, want one content with resultType and caching hints", res)
	}
}

// TestEveryCustodyTemplateDescribesWhatItsReadReturns: a template's
// description promises only what a read of it holds — each kind of data it
// names (before its parenthesis) is a field of the answer.
func TestEveryCustodyTemplateDescribesWhatItsReadReturns(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	// A phrase a description may use, and a field an answer holding that
	// data has.
	promises := map[string]string{
		"caption": "caption", "court": "court", "docket number": "docket_number", "client": "client",
		"practice area": "practice_area", "status": "status", "team": "team",
		"deadline": "due_date", "note": "body", "fact": "statement", "posture": "posture",
		"version": "versions", "text": "text", "source": "assertions", "rule or order": "rule",
		"attestation": "verification_status", "verification status": "verification_status",
	}
	phrases := slices.Collect(maps.Keys(promises))
	// The longest first, each taken out once matched ("verification status"
	// is not the matter's "status").
	slices.SortFunc(phrases, func(a, b string) int { return len(b) - len(a) })
	res := resultOf(t, s.Call(t, "resources/templates/list", map[string]any{}))
	for _, it := range res["resourceTemplates"].([]any) {
		tmpl := it.(map[string]any)
		uriTemplate, description := tmpl["uriTemplate"].(string), tmpl["description"].(string)
		t.Run(uriTemplate, func(t *testing.T) {
			uri := resources.Expand(uriTemplate, map[string]string{"case_id": seed.Alvarez, "document_id": "d_alv_complaint"})
			contents := resultOf(t, readResource(t, s, map[string]any{"uri": uri}))["contents"].([]any)
			var answer any
			if err := json.Unmarshal([]byte(contents[0].(map[string]any)["text"].(string)), &answer); err != nil {
				t.Fatal(err)
			}
			keys := map[string]bool{}
			collectKeys(answer, keys)
			promised, _, _ := strings.Cut(strings.ToLower(description), "(")
			for _, phrase := range phrases {
				if !strings.Contains(promised, phrase) {
					continue
				}
				promised = strings.ReplaceAll(promised, phrase, "")
				if field := promises[phrase]; !keys[field] {
					t.Errorf("the description %q names %s, but the read holds no %s", description, phrase, field)
				}
			}
		})
	}
}

// collectKeys adds every object key of a JSON value to keys.
func collectKeys(v any, keys map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			keys[k] = true
			collectKeys(e, keys)
		}
	case []any:
		for _, e := range x {
			collectKeys(e, keys)
		}
	}
}
