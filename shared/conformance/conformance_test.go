package conformance_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/conformance"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/tools"
)

// fixtureRole is the key of the fixture profile's principal in an Env.
const fixtureRole = "conformance"

// fixtureNames are the fixture tools, in tools/list order (by name).
var fixtureNames = []string{
	"confirm_delete", "failing_job", "greet",
	"json_schema_2020_12_tool", "multi_input", "protocol_error_job", "slow_compute",
	"test_audio_content", "test_elicitation", "test_elicitation_sep1034_defaults",
	"test_elicitation_sep1330_enums", "test_embedded_resource", "test_error_handling", "test_header_routing",
	"test_image_content",
	"test_input_required_result_capabilities", "test_input_required_result_elicitation",
	"test_input_required_result_list_roots", "test_input_required_result_multi_round",
	"test_input_required_result_multiple_inputs", "test_input_required_result_request_state",
	"test_input_required_result_sampling", "test_input_required_result_tampered_state",
	"test_logging_tool", "test_missing_capability",
	"test_multiple_content_types", "test_sampling", "test_simple_text", "test_slow_task", "test_streaming_elicitation",
	"test_tool_with_logging", "test_tool_with_progress", "test_tool_with_task",
}

// newEnv starts Custody as the dev server's fixture profile composes it:
// the fixtures registered (1 ms between notifications), tasks served by an
// in-process worker, and a fixture key as the dev server mints it.
func newEnv(t *testing.T) *servertest.Env {
	t.Helper()
	q := servertest.TaskQueue(t)
	env := servertest.New(t, servertest.Options{
		TaskQueue: q, TaskOptions: servertest.FastTasks(),
		RegisterExtra: func(reg *tools.Registry) error {
			return conformance.Register(reg, conformance.Options{Interval: time.Millisecond})
		},
		RegisterExtraPrompts:   conformance.RegisterPrompts,
		RegisterExtraResources: conformance.RegisterResources,
		GETStream:              true, // resources/subscribe is served with the stream
	})
	// The fixture principal is a row of its own tenant, as the dev server
	// imports it: a task re-admits its creator by re-reading the owner.
	if _, err := records.Import(context.Background(), env.Store, records.Fixture{
		Tenant:     records.Tenant{ID: "conformance", Name: "Conformance fixture profile"},
		Principals: []records.Principal{{ID: "p_conformance", Name: "The conformance suite", Role: records.RoleParalegal}},
	}, servertest.Epoch.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	key, cred, err := auth.Mint(context.Background(), env.Store, auth.MintRequest{
		Tenant: "conformance", Owner: "p_conformance", Scopes: []auth.Scope{auth.ScopeConformance},
		RateLimits: map[string]int{"read": 1_000_000, "expensive": 1_000_000},
	}, servertest.Epoch.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	env.Keys[fixtureRole], env.Creds[fixtureRole] = key, cred
	env.StartWorker(t, q, 4)
	return env
}

// messages decodes the JSON-RPC messages of an answer: one JSON body, or
// every data event of an SSE body, in order.
func messages(t *testing.T, r *servertest.Response) []map[string]any {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("HTTP %d %s", r.Status, r.Body)
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
		return []map[string]any{r.JSON(t)}
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(r.Body))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok || strings.TrimSpace(data) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("event data %q: %v", data, err)
		}
		out = append(out, m)
	}
	return out
}

// callBody is a tools/call request; args "" sends no arguments at all.
func callBody(id any, name, args string, meta string) []byte {
	idJSON, _ := json.Marshal(id)
	params := fmt.Sprintf(`"name":%q`, name)
	if args != "" {
		params += `,"arguments":` + args
	}
	if meta != "" {
		params += `,"_meta":` + meta
	}
	return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{%s}}`, idJSON, params))
}

func resultOf(t *testing.T, msg map[string]any) map[string]any {
	t.Helper()
	res, ok := msg["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result in %v", msg)
	}
	return res
}

func jsonValue(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

func listTools(t *testing.T, s *servertest.Session) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, tl := range resultOf(t, s.Call(t, "tools/list", map[string]any{}))["tools"].([]any) {
		out = append(out, tl.(map[string]any))
	}
	return out
}

func names(ts []map[string]any) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t["name"].(string))
	}
	return out
}

func TestOnlyTheFixtureKeySeesTheFixturesAndItSeesNothingElse(t *testing.T) {
	env := newEnv(t)
	fixture := env.Initialize(t, fixtureRole, "2025-11-25")
	listed := listTools(t, fixture)
	if diff := cmp.Diff(fixtureNames, names(listed)); diff != "" {
		t.Errorf("the fixture key's tools/list (-want +got):\n%s", diff)
	}
	for _, tl := range listed {
		if tl["description"] == "" || tl["description"] == nil {
			t.Errorf("%s has no description", tl["name"])
		}
		in := tl["inputSchema"].(map[string]any)
		if _, ok := in["properties"].(map[string]any); in["type"] != "object" || !ok {
			t.Errorf("%s inputSchema %v: want type object with object properties", tl["name"], in)
		}
		if out, ok := tl["outputSchema"]; ok {
			t.Errorf("%s declares an outputSchema %v; the fixtures answer with their own content", tl["name"], out)
		}
	}
	if msg := fixture.Call(t, "tools/call", map[string]any{"name": "list_matters", "arguments": map[string]any{}}); msg["error"] == nil {
		t.Errorf("the fixture key called list_matters: %v", msg)
	}

	for _, role := range []string{servertest.Attorney, servertest.OtherFirm} {
		s := env.Initialize(t, role, "2025-11-25")
		for _, n := range names(listTools(t, s)) {
			if slices.Contains(fixtureNames, n) {
				t.Errorf("the %s key sees the fixture %s", role, n)
			}
		}
		msg := s.Call(t, "tools/call", map[string]any{"name": "test_simple_text"})
		if e, _ := msg["error"].(map[string]any); e == nil || e["code"] != -32602.0 {
			t.Errorf("the %s key calling test_simple_text: %v, want -32602 unknown tool", role, msg)
		}
	}
}

func TestContentFixturesAnswerWhatTheSuiteChecks(t *testing.T) {
	env := newEnv(t)
	s := env.Initialize(t, fixtureRole, "2025-11-25")
	png := conformance.PNG1x1
	for _, tc := range []struct {
		name, args, want string
	}{
		// The suite calls test_simple_text with no arguments member at all.
		{"test_simple_text", "", `[{"type":"text","text":"This is a simple text response for testing."}]`},
		{"test_image_content", "{}", `[{"type":"image","data":"` + png + `","mimeType":"image/png"}]`},
		{"test_audio_content", "{}", `[{"type":"audio","data":"` + conformance.WAVMini + `","mimeType":"audio/wav"}]`},
		{"test_embedded_resource", "{}", `[{"type":"resource","resource":{"uri":"test://embedded-resource","mimeType":"text/plain","text":"This is an embedded resource content."}}]`},
		{"test_multiple_content_types", "{}", `[{"type":"text","text":"Multiple content types test:"},{"type":"image","data":"` + png + `","mimeType":"image/png"},{"type":"resource","resource":{"uri":"test://mixed-content-resource","mimeType":"application/json","text":"{\"test\":\"data\",\"value\":123}"}}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs := messages(t, s.Post(t, callBody(2, tc.name, tc.args, "")))
			res := resultOf(t, msgs[len(msgs)-1])
			if res["isError"] == true {
				t.Fatalf("isError: %v", res)
			}
			if diff := cmp.Diff(jsonValue(t, tc.want), res["content"]); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorHandlingIsAToolResultNotAProtocolError(t *testing.T) {
	env := newEnv(t)
	s := env.Initialize(t, fixtureRole, "2025-11-25")
	res := s.Tool(t, "test_error_handling", map[string]any{})
	content := res["content"].([]any)
	if res["isError"] != true || content[0].(map[string]any)["text"] != "This tool intentionally returns an error for testing" {
		t.Errorf("result %v, want isError with the suite's sentence", res)
	}
}

func TestLoggingSendsThreeInfoMessagesBeforeTheResult(t *testing.T) {
	env := newEnv(t)
	s := env.Initialize(t, fixtureRole, "2025-11-25")
	if r := resultOf(t, s.Call(t, "logging/setLevel", map[string]any{"level": "debug"})); len(r) != 0 {
		t.Fatalf("logging/setLevel = %v, want {}", r)
	}
	msgs := messages(t, s.Post(t, callBody(3, "test_tool_with_logging", "{}", "")))
	var logged []any
	for _, m := range msgs[:len(msgs)-1] {
		p := m["params"].(map[string]any)
		if m["method"] != "notifications/message" || p["level"] != "info" {
			t.Errorf("before the result: %v, want info notifications/message", m)
		}
		logged = append(logged, p["data"])
	}
	want := []any{"Tool execution started", "Tool processing data", "Tool execution completed"}
	if diff := cmp.Diff(want, logged); diff != "" {
		t.Errorf("logged (-want +got):\n%s", diff)
	}
	if last := msgs[len(msgs)-1]; last["id"] != 3.0 || resultOf(t, last)["isError"] == true {
		t.Errorf("last message %v, want the result of id 3", last)
	}
}

func TestProgressEchoesTheTokenVerbatimBeforeTheResult(t *testing.T) {
	env := newEnv(t)
	s := env.Initialize(t, fixtureRole, "2025-11-25")
	// The TypeScript SDK (run A) sends the request id as an integer token;
	// run B sends the string "progress-test-1".
	for _, token := range []string{`7`, `"progress-test-1"`} {
		t.Run(token, func(t *testing.T) {
			msgs := messages(t, s.Post(t, callBody(7, "test_tool_with_progress", "{}", `{"progressToken":`+token+`}`)))
			var got []any
			for _, m := range msgs[:len(msgs)-1] {
				p := m["params"].(map[string]any)
				if m["method"] != "notifications/progress" || p["total"] != 100.0 {
					t.Errorf("before the result: %v, want notifications/progress of 100", m)
				}
				if diff := cmp.Diff(jsonValue(t, token), p["progressToken"]); diff != "" {
					t.Errorf("progressToken (-want +got):\n%s", diff)
				}
				got = append(got, p["progress"])
			}
			if diff := cmp.Diff([]any{0.0, 50.0, 100.0}, got); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
			resultOf(t, msgs[len(msgs)-1])
		})
	}
}

// ask calls a fixture on a stream, returns the server's question and the
// stream, where the result follows once the question is answered.
func ask(t *testing.T, env *servertest.Env, s *servertest.Session, id int, name, args, method string) (*servertest.EventStream, map[string]any) {
	t.Helper()
	es := servertest.OpenStream(t, http.MethodPost, env.URL, callBody(id, name, args, ""), s.Headers()...)
	q := es.NextMessage(t)
	if q["method"] != method {
		t.Fatalf("first message %v, want %s", q, method)
	}
	return es, q
}

// answer posts the client's answer to question q and returns the call's result.
func answer(t *testing.T, s *servertest.Session, es *servertest.EventStream, q map[string]any, result string) map[string]any {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"result":%s}`, q["id"], result)
	if r := s.Post(t, []byte(body)); r.Status != http.StatusAccepted {
		t.Fatalf("answer: %d %s, want 202", r.Status, r.Body)
	}
	return resultOf(t, es.NextMessage(t))
}

func textOf(t *testing.T, res map[string]any) string {
	t.Helper()
	if res["isError"] == true {
		t.Fatalf("isError: %v", res)
	}
	return res["content"].([]any)[0].(map[string]any)["text"].(string)
}

func TestSamplingAsksTheClientOnlyWhenItDeclaredSampling(t *testing.T) {
	env := newEnv(t)
	s := env.InitializeWith(t, fixtureRole, "2025-11-25", `{"sampling":{},"elicitation":{}}`)
	es, q := ask(t, env, s, 4, "test_sampling", `{"prompt":"Test prompt for sampling"}`, "sampling/createMessage")
	want := `{"messages":[{"role":"user","content":{"type":"text","text":"Test prompt for sampling"}}],"maxTokens":100}`
	if diff := cmp.Diff(jsonValue(t, want), q["params"]); diff != "" {
		t.Errorf("sampling/createMessage params (-want +got):\n%s", diff)
	}
	res := answer(t, s, es, q, `{"role":"assistant","content":{"type":"text","text":"This is a test response from the client"},"model":"test-model","stopReason":"endTurn"}`)
	if got := textOf(t, res); got != "LLM response: This is a test response from the client" {
		t.Errorf("result text %q", got)
	}

	plain := env.InitializeWith(t, fixtureRole, "2025-11-25", `{"elicitation":{}}`)
	msgs := messages(t, plain.Post(t, callBody(5, "test_sampling", `{"prompt":"x"}`, "")))
	if len(msgs) != 1 || resultOf(t, msgs[0])["isError"] != true {
		t.Errorf("test_sampling without the sampling capability: %v, want one isError result and no question", msgs)
	}
}

func TestElicitationsCarryTheSchemasTheSuiteChecks(t *testing.T) {
	env := newEnv(t)
	s := env.InitializeWith(t, fixtureRole, "2025-11-25", `{"sampling":{},"elicitation":{}}`)
	for _, tc := range []struct {
		name, args, schema, answer, text string
	}{
		{
			"test_elicitation", `{"message":"Please provide your information"}`,
			`{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`,
			`{"action":"accept","content":{"username":"testuser","email":"test@example.com"}}`,
			`User response: action=accept, content={"username":"testuser","email":"test@example.com"}`,
		},
		{
			"test_elicitation_sep1034_defaults", `{}`,
			`{"type":"object","required":[],"properties":{
				"name":{"type":"string","description":"User name","default":"John Doe"},
				"age":{"type":"integer","description":"User age","default":30},
				"score":{"type":"number","description":"User score","default":95.5},
				"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
				"verified":{"type":"boolean","description":"Verification status","default":true}}}`,
			`{"action":"accept","content":{"name":"Jane Smith","age":25,"score":88.0,"status":"inactive","verified":false}}`,
			`Elicitation completed: action=accept, content={"name":"Jane Smith","age":25,"score":88.0,"status":"inactive","verified":false}`,
		},
		{
			"test_elicitation_sep1330_enums", `{}`,
			`{"type":"object","required":[],"properties":{
				"untitledSingle":{"type":"string","description":"Choose an option","enum":["option1","option2","option3"]},
				"titledSingle":{"type":"string","description":"Choose a titled option","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
				"legacyEnum":{"type":"string","description":"Choose a legacy option","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
				"untitledMulti":{"type":"array","description":"Choose multiple options","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},
				"titledMulti":{"type":"array","description":"Choose multiple titled options","minItems":1,"maxItems":3,"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`,
			`{"action":"accept","content":{"untitledSingle":"option1","titledSingle":"value1","legacyEnum":"opt1","untitledMulti":["option1","option2"],"titledMulti":["value1","value2"]}}`,
			`Elicitation completed: action=accept, content={"untitledSingle":"option1","titledSingle":"value1","legacyEnum":"opt1","untitledMulti":["option1","option2"],"titledMulti":["value1","value2"]}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es, q := ask(t, env, s, 6, tc.name, tc.args, "elicitation/create")
			p := q["params"].(map[string]any)
			if m, _ := p["message"].(string); m == "" {
				t.Errorf("no message in %v", p)
			}
			if mode, ok := p["mode"]; ok && mode != "form" {
				t.Errorf("mode %v, want form (or none)", mode)
			}
			if diff := cmp.Diff(jsonValue(t, tc.schema), p["requestedSchema"]); diff != "" {
				t.Errorf("requestedSchema (-want +got):\n%s", diff)
			}
			if got := textOf(t, answer(t, s, es, q, tc.answer)); got != tc.text {
				t.Errorf("result text %q, want %q", got, tc.text)
			}
		})
	}

	urlOnly := env.InitializeWith(t, fixtureRole, "2025-11-25", `{"elicitation":{"url":{}}}`)
	msgs := messages(t, urlOnly.Post(t, callBody(8, "test_elicitation", `{"message":"x"}`, "")))
	if len(msgs) != 1 || resultOf(t, msgs[0])["isError"] != true {
		t.Errorf("a form question to a URL-only client: %v, want one isError result and no question", msgs)
	}
}

func TestTheJSONSchema2020FixtureIsListedVerbatimAndValidates(t *testing.T) {
	env := newEnv(t)
	s := env.Initialize(t, fixtureRole, "2025-11-25")
	var schema any
	for _, tl := range listTools(t, s) {
		if tl["name"] == "json_schema_2020_12_tool" {
			schema = tl["inputSchema"]
		}
	}
	want := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
	 "$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
	 "properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},
	 "allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],
	 "if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},
	 "additionalProperties":false}`
	if diff := cmp.Diff(jsonValue(t, want), schema); diff != "" {
		t.Errorf("inputSchema (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		args  string
		valid bool
	}{
		{`{"email":"a@example.com"}`, true},
		{`{"name":"A","contactMethod":"phone","phone":"555","address":{"city":"Oakland"}}`, true},
		{`{}`, false}, // neither phone nor email
		{`{"contactMethod":"phone","email":"a@example.com"}`, false}, // if/then: phone required
		{`{"email":"a@example.com","fax":"1"}`, false},               // additionalProperties
		{`{"email":"a@example.com","address":{"city":7}}`, false},    // $ref to $defs
	} {
		res := resultOf(t, messages(t, s.Post(t, callBody(9, "json_schema_2020_12_tool", tc.args, "")))[0])
		if valid := res["isError"] != true; valid != tc.valid {
			t.Errorf("arguments %s: %v, want valid=%v", tc.args, res, tc.valid)
		}
	}
}

func TestFixtureCallsAreAuditedUnderTheFixturePrincipal(t *testing.T) {
	env := newEnv(t)
	s := env.Initialize(t, fixtureRole, "2025-11-25")
	s.Tool(t, "test_simple_text", map[string]any{})
	recs, err := audit.Day(context.Background(), env.Store, "conformance", servertest.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range recs {
		if r.Principal != "p_conformance" || r.CredentialID != env.Creds[fixtureRole].ID {
			t.Errorf("audit row %+v of another principal in the fixture tenant", r)
		}
		found = found || (r.Method == "tools/call" && r.Tool == "test_simple_text" && r.Outcome == "ok")
	}
	if !found {
		t.Errorf("no audit row of the test_simple_text call among %+v", recs)
	}
}

func TestPromptsAnswerWhatTheSuiteChecks(t *testing.T) {
	env := newEnv(t)
	s := env.Initialize(t, fixtureRole, "2025-11-25")
	listed := resultOf(t, s.Call(t, "prompts/list", map[string]any{}))["prompts"].([]any)
	var got []string
	for _, p := range listed {
		p := p.(map[string]any)
		got = append(got, p["name"].(string))
		if d, _ := p["description"].(string); d == "" {
			t.Errorf("prompt %s has no description", p["name"])
		}
	}
	want := []string{"test_input_required_result_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource", "test_prompt_with_image", "test_simple_prompt"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("prompts/list (-want +got):\n%s", diff)
	}
	png := conformance.PNG1x1
	for _, tc := range []struct {
		name, args, messages string
	}{
		// The suite gets the prompts without arguments with no arguments member.
		{"test_simple_prompt", "", `[{"role":"user","content":{"type":"text","text":"This is a simple prompt for testing."}}]`},
		{"test_prompt_with_arguments", `{"arg1":"testValue1","arg2":"testValue2"}`,
			`[{"role":"user","content":{"type":"text","text":"Prompt with arguments: arg1='testValue1', arg2='testValue2'"}}]`},
		{"test_prompt_with_embedded_resource", `{"resourceUri":"test://example-resource"}`,
			`[{"role":"user","content":{"type":"resource","resource":{"uri":"test://example-resource","mimeType":"text/plain","text":"Embedded resource content for testing."}}},
			  {"role":"user","content":{"type":"text","text":"Please process the embedded resource above."}}]`},
		{"test_prompt_with_image", "",
			`[{"role":"user","content":{"type":"image","data":"` + png + `","mimeType":"image/png"}},
			  {"role":"user","content":{"type":"text","text":"Please analyze the image above."}}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := fmt.Sprintf(`{"name":%q}`, tc.name)
			if tc.args != "" {
				params = fmt.Sprintf(`{"name":%q,"arguments":%s}`, tc.name, tc.args)
			}
			res := resultOf(t, s.Call(t, "prompts/get", json.RawMessage(params)))
			if diff := cmp.Diff(jsonValue(t, tc.messages), res["messages"]); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}

	res := resultOf(t, s.Call(t, "completion/complete", map[string]any{
		"ref":      map[string]any{"type": "ref/prompt", "name": "test_prompt_with_arguments"},
		"argument": map[string]any{"name": "arg1", "value": "test"},
	}))
	if values := res["completion"].(map[string]any)["values"]; !cmp.Equal(values, []any{"test", "testing"}) {
		t.Errorf("completion values %v, want [test testing]", values)
	}
}

func TestResourcesAnswerWhatTheSuiteChecks(t *testing.T) {
	env := newEnv(t)
	s := env.Initialize(t, fixtureRole, "2025-11-25")
	listed := resultOf(t, s.Call(t, "resources/list", map[string]any{}))["resources"].([]any)
	var uris []string
	for _, r := range listed {
		r := r.(map[string]any)
		uris = append(uris, r["uri"].(string))
		if r["name"] == "" || r["name"] == nil {
			t.Errorf("resource %s has no name", r["uri"])
		}
	}
	if diff := cmp.Diff([]string{"test://static-binary", "test://static-text", "test://watched-resource"}, uris); diff != "" {
		t.Errorf("resources/list (-want +got):\n%s", diff)
	}
	templates := resultOf(t, s.Call(t, "resources/templates/list", map[string]any{}))["resourceTemplates"].([]any)
	if len(templates) != 1 || templates[0].(map[string]any)["uriTemplate"] != "test://template/{id}/data" {
		t.Errorf("resources/templates/list %v, want the one test template", templates)
	}
	for _, tc := range []struct{ uri, contents string }{
		{"test://static-text", `[{"uri":"test://static-text","mimeType":"text/plain","text":"This is the content of the static text resource."}]`},
		{"test://static-binary", `[{"uri":"test://static-binary","mimeType":"image/png","blob":"` + conformance.PNG1x1 + `"}]`},
		{"test://watched-resource", `[{"uri":"test://watched-resource","mimeType":"text/plain","text":"Watched resource content"}]`},
		{"test://template/123/data", `[{"uri":"test://template/123/data","mimeType":"application/json","text":"{\"data\":\"Data for ID: 123\",\"id\":\"123\",\"templateTest\":true}"}]`},
	} {
		res := resultOf(t, s.Call(t, "resources/read", map[string]any{"uri": tc.uri}))
		if diff := cmp.Diff(jsonValue(t, tc.contents), res["contents"]); diff != "" {
			t.Errorf("resources/read %s (-want +got):\n%s", tc.uri, diff)
		}
	}
	missing := s.Call(t, "resources/read", map[string]any{"uri": "test://nonexistent-resource-for-conformance-testing"})
	if e, _ := missing["error"].(map[string]any); e == nil || e["data"].(map[string]any)["uri"] != "test://nonexistent-resource-for-conformance-testing" {
		t.Errorf("reading the missing resource: %v, want an error naming the uri", missing)
	}
	for _, method := range []string{"resources/subscribe", "resources/unsubscribe"} {
		if res := resultOf(t, s.Call(t, method, map[string]any{"uri": "test://watched-resource"})); len(res) != 0 {
			t.Errorf("%s = %v, want exactly {}", method, res)
		}
	}

	attorney := env.Initialize(t, servertest.Attorney, "2025-11-25")
	for _, r := range resultOf(t, attorney.Call(t, "resources/list", map[string]any{}))["resources"].([]any) {
		if u := r.(map[string]any)["uri"].(string); strings.HasPrefix(u, "test://") {
			t.Errorf("the attorney's key lists the fixture %s", u)
		}
	}
	if msg := attorney.Call(t, "resources/read", map[string]any{"uri": "test://static-text"}); msg["error"] == nil {
		t.Errorf("the attorney's key read a fixture: %v", msg)
	}
	if msg := attorney.Call(t, "prompts/get", map[string]any{"name": "test_simple_prompt"}); msg["error"] == nil {
		t.Errorf("the attorney's key got a fixture prompt: %v", msg)
	}
}
