package conformance_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/server/servertest"
)

// The 2026-07-28 fixtures, round by round, as the suite's
// --requirements 2026-07-28 run drives them (server-stateless and the
// input-required-result-* scenarios), and the same fixtures in a 2025
// session, where every question is a request on the call's stream.

const rev2026 = "2026-07-28"

// harnessCaps are the client capabilities the suite's stateless client
// declares on every request unless a scenario narrows them.
const harnessCaps = `{"sampling":{},"elicitation":{},"roots":{"listChanged":true}}`

// rpc2026 is one stateless request of the fixture key, with the headers and
// _meta the suite sends (caps "" means harnessCaps; meta adds _meta keys).
type rpc2026 struct {
	method string
	params map[string]any
	caps   string
	meta   map[string]any
}

// send posts the request with JSON-RPC id id.
func (q rpc2026) send(t *testing.T, env *servertest.Env, id int) *servertest.Response {
	t.Helper()
	caps := q.caps
	if caps == "" {
		caps = harnessCaps
	}
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    rev2026,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "conformance-test-client", "version": "1.0.0"},
		"io.modelcontextprotocol/clientCapabilities": jsonValue(t, caps),
	}
	for k, v := range q.meta {
		meta[k] = v
	}
	params := map[string]any{"_meta": meta}
	for k, v := range q.params {
		params[k] = v
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": q.method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	h := []string{"Authorization: Bearer " + env.Keys[fixtureRole], "MCP-Protocol-Version: " + rev2026, "Mcp-Method: " + q.method}
	if name, ok := q.params["name"].(string); ok {
		h = append(h, "Mcp-Name: "+name)
	}
	return env.Do(t, http.MethodPost, body, h...)
}

// call builds a tools/call of name with arguments {} and, when given, the
// retry's inputResponses and requestState.
func call(name string, responses map[string]any, state any) rpc2026 {
	p := map[string]any{"name": name, "arguments": map[string]any{}}
	if responses != nil {
		p["inputResponses"] = responses
	}
	if state != nil {
		p["requestState"] = state
	}
	return rpc2026{method: "tools/call", params: p}
}

var ids = 100

// round sends q and returns its one JSON-RPC response, checking what every
// 2026 answer must be: the request's id, compact single-line JSON, and a
// resultType on every result.
func round(t *testing.T, env *servertest.Env, q rpc2026) map[string]any {
	t.Helper()
	ids++
	r := q.send(t, env, ids)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q, want one JSON answer: %s", ct, r.Body)
	}
	if body := bytes.TrimRight(r.Body, "\n"); bytes.Contains(body, []byte("\n")) {
		t.Errorf("the answer spans several lines: %s", r.Body)
	}
	msg := r.JSON(t)
	if msg["id"] != float64(ids) {
		t.Errorf("id %v, want %d", msg["id"], ids)
	}
	if res, ok := msg["result"].(map[string]any); ok && res["resultType"] == nil {
		t.Errorf("a result without resultType: %v", res)
	}
	return msg
}

// inputRequired returns an input_required result's inputRequests and
// requestState.
func inputRequired(t *testing.T, msg map[string]any) (map[string]any, string) {
	t.Helper()
	res := resultOf(t, msg)
	if res["resultType"] != "input_required" {
		t.Fatalf("result %v, want input_required", res)
	}
	state, _ := res["requestState"].(string)
	if state == "" {
		t.Errorf("input_required without a requestState: %v", res)
	}
	return res["inputRequests"].(map[string]any), state
}

// complete returns a complete tool result's text.
func complete(t *testing.T, msg map[string]any) string {
	t.Helper()
	res := resultOf(t, msg)
	if res["resultType"] != "complete" {
		t.Fatalf("result %v, want complete", res)
	}
	return textOf(t, res)
}

// rpcCode returns a JSON-RPC error's code (0 when there is none).
func rpcCode(msg map[string]any) float64 {
	e, _ := msg["error"].(map[string]any)
	code, _ := e["code"].(float64)
	return code
}

// The client's answers the suite sends (input-required-result-helpers.ts).
func accepted(content string) json.RawMessage {
	return json.RawMessage(`{"action":"accept","content":` + content + `}`)
}

func sampledAnswer(text string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"role":"assistant","content":{"type":"text","text":%q},"model":"test-model","stopReason":"endTurn"}`, text))
}

var rootsAnswer = json.RawMessage(`{"roots":[{"uri":"file:///test/root","name":"Test Root"}]}`)

// Questions exactly as the scenarios' descriptions give them.
const (
	nameQ = `{"method":"elicitation/create","params":{"message":"What is your name?",
		"requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`
	confirmQ = `{"method":"elicitation/create","params":{"message":"Please confirm",
		"requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}}`
	capitalQ = `{"method":"sampling/createMessage","params":{"maxTokens":100,
		"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}]}}`
	greetingQ = `{"method":"sampling/createMessage","params":{"maxTokens":50,
		"messages":[{"role":"user","content":{"type":"text","text":"Generate a greeting"}}]}}`
	rootsQ = `{"method":"roots/list","params":{}}`
)

func TestTheSingleRoundFixturesAskOnceAndCompleteWithOrWithoutTheState(t *testing.T) {
	env := newEnv(t)
	for _, tc := range []struct {
		tool, asked string
		answers     map[string]any
		text        string
	}{
		{"test_input_required_result_elicitation", `{"user_name":` + nameQ + `}`,
			map[string]any{"user_name": accepted(`{"name":"Alice"}`)}, "Hello, Alice!"},
		{"test_input_required_result_sampling", `{"capital_question":` + capitalQ + `}`,
			map[string]any{"capital_question": sampledAnswer("The capital of France is Paris.")}, "Sampling result: The capital of France is Paris."},
		{"test_input_required_result_list_roots", `{"client_roots":` + rootsQ + `}`,
			map[string]any{"client_roots": rootsAnswer}, "Found 1 root(s)"},
		{"test_input_required_result_request_state", `{"confirm":` + confirmQ + `}`,
			map[string]any{"confirm": accepted(`{"ok":true}`)}, "state-ok"},
		{"test_input_required_result_tampered_state", `{"confirm":` + confirmQ + `}`,
			map[string]any{"confirm": accepted(`{"ok":true}`)}, "integrity-ok"},
		{"test_input_required_result_multiple_inputs", `{"user_name":` + nameQ + `,"greeting":` + greetingQ + `,"client_roots":` + rootsQ + `}`,
			map[string]any{"user_name": accepted(`{"name":"Alice"}`), "greeting": sampledAnswer("Hello there!"), "client_roots": rootsAnswer},
			"Name: Alice; Greeting: Hello there!; Roots: 1"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			asked, state := inputRequired(t, round(t, env, call(tc.tool, nil, nil)))
			if diff := cmp.Diff(jsonValue(t, tc.asked), any(asked)); diff != "" {
				t.Errorf("inputRequests (-want +got):\n%s", diff)
			}
			if got := complete(t, round(t, env, call(tc.tool, tc.answers, state))); !strings.HasPrefix(got, tc.text) {
				t.Errorf("with the state: %q, want %q", got, tc.text)
			}
			// Every answer of a single round is in inputResponses: the state
			// adds nothing, so a retry without it completes too.
			if got := complete(t, round(t, env, call(tc.tool, tc.answers, nil))); !strings.HasPrefix(got, tc.text) {
				t.Errorf("without the state: %q, want %q", got, tc.text)
			}
			// Only some of the answers, or only unknown keys: asked again.
			partial := map[string]any{"wrong_key": accepted(`{"data":"wrong"}`)}
			for k, v := range tc.answers {
				if len(tc.answers) > 1 {
					partial[k] = v
					break
				}
			}
			again, _ := inputRequired(t, round(t, env, call(tc.tool, partial, nil)))
			for k := range again {
				if _, answered := partial[k]; answered || asked[k] == nil {
					t.Errorf("re-asked %q of %v after %v", k, again, partial)
				}
			}
		})
	}
}

func TestMultiRoundAsksInTwoRoundsEachWithItsOwnState(t *testing.T) {
	env := newEnv(t)
	const tool = "test_input_required_result_multi_round"
	asked, s1 := inputRequired(t, round(t, env, call(tool, nil, nil)))
	want := `{"step1":{"method":"elicitation/create","params":{"message":"Step 1: What is your name?",
		"requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}}`
	if diff := cmp.Diff(jsonValue(t, want), any(asked)); diff != "" {
		t.Errorf("round 1 (-want +got):\n%s", diff)
	}
	asked, s2 := inputRequired(t, round(t, env, call(tool, map[string]any{"step1": accepted(`{"name":"Alice"}`)}, s1)))
	want = `{"step2":{"method":"elicitation/create","params":{"message":"Step 2: What is your favorite color?",
		"requestedSchema":{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}}}}`
	if diff := cmp.Diff(jsonValue(t, want), any(asked)); diff != "" {
		t.Errorf("round 2 (-want +got):\n%s", diff)
	}
	if s2 == s1 {
		t.Error("round 2 carries round 1's requestState")
	}
	// Round 3 brings only step2: step1's answer travels in the state.
	got := complete(t, round(t, env, call(tool, map[string]any{"step2": accepted(`{"color":"blue"}`)}, s2)))
	if got != "Multi-round complete for Alice who likes blue" {
		t.Errorf("round 3: %q", got)
	}
	// Without round 2's state, step1 is unknown again: it is asked again.
	asked, _ = inputRequired(t, round(t, env, call(tool, map[string]any{"step2": accepted(`{"color":"blue"}`)}, nil)))
	if _, ok := asked["step1"]; !ok || len(asked) != 1 {
		t.Errorf("round 3 without its state asked %v, want step1 again", asked)
	}
}

func TestAStateThatFailsVerificationIsAJSONRPCError(t *testing.T) {
	env := newEnv(t)
	const tool = "test_input_required_result_tampered_state"
	_, state := inputRequired(t, round(t, env, call(tool, nil, nil)))
	answer := map[string]any{"confirm": accepted(`{"ok":true}`)}
	for name, bad := range map[string]string{
		"tampered (the suite appends -TAMPERED)": state + "-TAMPERED",
		"truncated":                              state[:len(state)-4],
		"not base64":                             "{}",
	} {
		if msg := round(t, env, call(tool, answer, bad)); rpcCode(msg) != -32602 {
			t.Errorf("%s: %v, want -32602", name, msg)
		}
	}
	// Another fixture's state does not open this one.
	_, other := inputRequired(t, round(t, env, call("test_input_required_result_request_state", nil, nil)))
	if msg := round(t, env, call(tool, answer, other)); rpcCode(msg) != -32602 {
		t.Errorf("another tool's state: %v, want -32602", msg)
	}
	if got := complete(t, round(t, env, call(tool, answer, state))); !strings.HasPrefix(got, "integrity-ok") {
		t.Errorf("the intact state: %q", got)
	}
}

func TestInputResponsesAreValidatedAndExtraKeysIgnored(t *testing.T) {
	env := newEnv(t)
	const tool = "test_input_required_result_elicitation"
	// input-required-result-validate-input: not an object, then null.
	if msg := round(t, env, call(tool, map[string]any{"user_name": 12345}, nil)); rpcCode(msg) != -32602 {
		t.Errorf("an answer that is not an object: %v, want -32602", msg)
	}
	p := call(tool, nil, nil)
	p.params["inputResponses"] = nil
	if asked, _ := inputRequired(t, round(t, env, p)); asked["user_name"] == nil {
		t.Errorf("inputResponses null: asked %v, want user_name", asked)
	}
	// input-required-result-ignore-extra-params.
	extra := map[string]any{
		"user_name":          accepted(`{"name":"Alice"}`),
		"unknown_extra_key":  accepted(`{"foo":"bar"}`),
		"another_unexpected": accepted(`{"baz":123}`),
	}
	if got := complete(t, round(t, env, call(tool, extra, nil))); got != "Hello, Alice!" {
		t.Errorf("with extra keys: %q", got)
	}
	// An accepted answer without the field asked for is the tool's refusal.
	res := resultOf(t, round(t, env, call(tool, map[string]any{"user_name": accepted(`{"nom":"Alice"}`)}, nil)))
	if res["isError"] != true || res["resultType"] != "complete" {
		t.Errorf("an answer without name: %v, want an isError result", res)
	}
	// A declined question is an answer too.
	if got := complete(t, round(t, env, call(tool, map[string]any{"user_name": json.RawMessage(`{"action":"decline"}`)}, nil))); !strings.Contains(got, "no name") {
		t.Errorf("declined: %q", got)
	}
}

func TestQuestionsGoOnlyToClientsThatDeclaredTheirCapability(t *testing.T) {
	env := newEnv(t)
	const tool = "test_input_required_result_capabilities"
	for _, tc := range []struct{ caps, asked string }{
		{`{"sampling":{}}`, `{"sample_input":{"method":"sampling/createMessage","params":{"maxTokens":50,"messages":[{"role":"user","content":{"type":"text","text":"Sample request"}}]}}}`},
		{`{"elicitation":{}}`, `{"elicit_input":{"method":"elicitation/create","params":{"message":"Elicitation input","requestedSchema":{"type":"object","properties":{"value":{"type":"string"}},"required":["value"]}}}}`},
		{`{"elicitation":{"url":{}},"roots":{}}`, ``},
		{`{}`, ``},
	} {
		q := call(tool, nil, nil)
		q.caps = tc.caps
		msg := round(t, env, q)
		if tc.asked == "" {
			if got := complete(t, msg); !strings.HasPrefix(got, "No supported capabilities declared") {
				t.Errorf("caps %s: %q, want nothing asked", tc.caps, got)
			}
			continue
		}
		asked, state := inputRequired(t, msg)
		if diff := cmp.Diff(jsonValue(t, tc.asked), any(asked)); diff != "" {
			t.Errorf("caps %s (-want +got):\n%s", tc.caps, diff)
		}
		answers := map[string]any{}
		for k := range asked {
			answers[k] = accepted(`{"value":"x"}`)
			if k == "sample_input" {
				answers[k] = sampledAnswer("x")
			}
		}
		q = call(tool, answers, state)
		q.caps = tc.caps
		if got := complete(t, round(t, env, q)); !strings.HasPrefix(got, "capabilities-ok: received ") {
			t.Errorf("caps %s, answered: %q", tc.caps, got)
		}
	}
	// Both declared (the harness's default): both asked in one round.
	asked, _ := inputRequired(t, round(t, env, call(tool, nil, nil)))
	if len(asked) != 2 {
		t.Errorf("with both capabilities: asked %v, want both", asked)
	}
}

func TestTheDiagnosticToolsOfServerStateless(t *testing.T) {
	env := newEnv(t)
	t.Run("test_missing_capability is 400 -32021 before it runs", func(t *testing.T) {
		q := call("test_missing_capability", nil, nil)
		q.caps = `{}`
		r := q.send(t, env, 401)
		code, msg := rpcCode(r.JSON(t)), r.JSON(t)
		e := msg["error"].(map[string]any)
		if r.Status != http.StatusBadRequest || code != -32021 || msg["id"] != 401.0 ||
			!cmp.Equal(e["data"], map[string]any{"requiredCapabilities": map[string]any{"sampling": map[string]any{}}}) {
			t.Errorf("%d %s, want 400 -32021 requiredCapabilities {sampling:{}} with id 401", r.Status, r.Body)
		}
		asked, state := inputRequired(t, round(t, env, call("test_missing_capability", nil, nil)))
		if asked["success_word"] == nil {
			t.Fatalf("with sampling: asked %v", asked)
		}
		got := complete(t, round(t, env, call("test_missing_capability", map[string]any{"success_word": sampledAnswer("Success")}, state)))
		if got != "Success: Success" {
			t.Errorf("with sampling, answered: %q", got)
		}
	})
	t.Run("test_streaming_elicitation answers input_required, never a request on the stream", func(t *testing.T) {
		q := call("test_streaming_elicitation", nil, nil)
		q.caps = `{"elicitation":{}}`
		msg := round(t, env, q)
		if msg["method"] != nil {
			t.Errorf("a request on the response: %v", msg)
		}
		asked, state := inputRequired(t, msg)
		q = call("test_streaming_elicitation", map[string]any{"stream_confirm": accepted(`{"confirm":true}`)}, state)
		q.caps = `{"elicitation":{}}`
		if asked["stream_confirm"] == nil || !strings.HasPrefix(complete(t, round(t, env, q)), "Streaming complete") {
			t.Errorf("asked %v, then no completion", asked)
		}
	})
	t.Run("test_logging_tool logs only at a requested level", func(t *testing.T) {
		q := call("test_logging_tool", nil, nil)
		q.caps = `{}`
		if got := complete(t, round(t, env, q)); got != "Logging evaluated" {
			t.Errorf("without logLevel: %q", got)
		}
		q.meta = map[string]any{"io.modelcontextprotocol/logLevel": "info"}
		msgs := messages(t, q.send(t, env, 2))
		var logged []any
		for _, m := range msgs[:len(msgs)-1] {
			if m["method"] != "notifications/message" {
				t.Errorf("before the result: %v", m)
			}
			logged = append(logged, m["params"].(map[string]any)["data"])
		}
		if len(logged) != 3 || complete(t, msgs[len(msgs)-1]) != "Logging evaluated" {
			t.Errorf("with logLevel info: logged %v then %v", logged, msgs[len(msgs)-1])
		}
		q.meta = map[string]any{"io.modelcontextprotocol/logLevel": "warning"}
		if msgs := messages(t, q.send(t, env, 3)); len(msgs) != 1 {
			t.Errorf("with logLevel warning: %v, want only the result", msgs)
		}
	})
}

func TestThePromptAsksForItsContextInTheSameRounds(t *testing.T) {
	env := newEnv(t)
	get := func(caps string, responses map[string]any, state any) rpc2026 {
		p := map[string]any{"name": "test_input_required_result_prompt"}
		if responses != nil {
			p["inputResponses"] = responses
		}
		if state != nil {
			p["requestState"] = state
		}
		return rpc2026{method: "prompts/get", params: p, caps: caps}
	}
	asked, state := inputRequired(t, round(t, env, get("", nil, nil)))
	want := `{"user_context":{"method":"elicitation/create","params":{"message":"What context should the prompt use?",
		"requestedSchema":{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}}}}`
	if diff := cmp.Diff(jsonValue(t, want), any(asked)); diff != "" {
		t.Errorf("round 1 (-want +got):\n%s", diff)
	}
	res := resultOf(t, round(t, env, get("", map[string]any{"user_context": accepted(`{"context":"test context"}`)}, state)))
	wantMsgs := `[{"role":"user","content":{"type":"text","text":"Prompt with context: test context"}}]`
	if diff := cmp.Diff(jsonValue(t, wantMsgs), res["messages"]); res["resultType"] != "complete" || diff != "" {
		t.Errorf("round 2 %v (-want +got):\n%s", res, diff)
	}
	// A client that takes no form question gets the prompt without asking.
	res = resultOf(t, round(t, env, get(`{}`, nil, nil)))
	if res["resultType"] != "complete" || !strings.Contains(fmt.Sprint(res["messages"]), "cannot be asked") {
		t.Errorf("without elicitation: %v", res)
	}
	// prompts/list and tools/list never answer input_required.
	for _, m := range []string{"prompts/list", "tools/list"} {
		if res := resultOf(t, round(t, env, rpc2026{method: m})); res["resultType"] != "complete" || res["ttlMs"] == nil || res["cacheScope"] == nil {
			t.Errorf("%s = %v, want complete with caching hints", m, res)
		}
	}
}

func TestEveryFixtureIsListedInTheStatelessEraWithADescriptionAndAnObjectSchema(t *testing.T) {
	env := newEnv(t)
	res := resultOf(t, round(t, env, rpc2026{method: "tools/list", caps: `{}`}))
	var got []string
	for _, tl := range res["tools"].([]any) {
		tl := tl.(map[string]any)
		got = append(got, tl["name"].(string))
		in := tl["inputSchema"].(map[string]any)
		if _, ok := in["properties"].(map[string]any); tl["description"] == "" || in["type"] != "object" || !ok {
			t.Errorf("%s: description %q, inputSchema %v", tl["name"], tl["description"], in)
		}
	}
	if diff := cmp.Diff(fixtureNames, got); diff != "" {
		t.Errorf("tools/list (-want +got):\n%s", diff)
	}
	prompts := resultOf(t, round(t, env, rpc2026{method: "prompts/list", caps: `{}`}))["prompts"].([]any)
	if !slices.ContainsFunc(prompts, func(p any) bool {
		return p.(map[string]any)["name"] == "test_input_required_result_prompt" && p.(map[string]any)["description"] != ""
	}) {
		t.Errorf("prompts/list %v lacks the input-required prompt", prompts)
	}
}

// In a 2025 session the same fixtures ask on the call's stream, one
// question after the other, and the client answers each by a POST.
func TestTheSameFixturesAskOnTheStreamInA2025Session(t *testing.T) {
	env := newEnv(t)
	s := env.InitializeWith(t, fixtureRole, "2025-11-25", harnessCaps)
	t.Run("multiple inputs", func(t *testing.T) {
		es, q := ask(t, env, s, 20, "test_input_required_result_multiple_inputs", "{}", "elicitation/create")
		if diff := cmp.Diff(jsonValue(t, nameQ).(map[string]any)["params"], q["params"]); diff != "" {
			t.Errorf("first question (-want +got):\n%s", diff)
		}
		q = answerThen(t, s, es, q, `{"action":"accept","content":{"name":"Alice"}}`, "sampling/createMessage")
		if diff := cmp.Diff(jsonValue(t, greetingQ).(map[string]any)["params"], q["params"]); diff != "" {
			t.Errorf("second question (-want +got):\n%s", diff)
		}
		q = answerThen(t, s, es, q, string(sampledAnswer("Hello there!")), "roots/list")
		if got := textOf(t, answer(t, s, es, q, string(rootsAnswer))); got != "Name: Alice; Greeting: Hello there!; Roots: 1" {
			t.Errorf("result %q", got)
		}
	})
	t.Run("multi round", func(t *testing.T) {
		es, q := ask(t, env, s, 21, "test_input_required_result_multi_round", "{}", "elicitation/create")
		q = answerThen(t, s, es, q, `{"action":"accept","content":{"name":"Alice"}}`, "elicitation/create")
		if q["params"].(map[string]any)["message"] != "Step 2: What is your favorite color?" {
			t.Errorf("second question %v", q)
		}
		if got := textOf(t, answer(t, s, es, q, `{"action":"accept","content":{"color":"blue"}}`)); got != "Multi-round complete for Alice who likes blue" {
			t.Errorf("result %q", got)
		}
	})
	t.Run("the prompt", func(t *testing.T) {
		body := []byte(`{"jsonrpc":"2.0","id":22,"method":"prompts/get","params":{"name":"test_input_required_result_prompt"}}`)
		es := servertest.OpenStream(t, http.MethodPost, env.URL, body, s.Headers()...)
		q := es.NextMessage(t)
		if q["method"] != "elicitation/create" {
			t.Fatalf("first message %v, want the question", q)
		}
		res := answer(t, s, es, q, `{"action":"accept","content":{"context":"test context"}}`)
		if !strings.Contains(fmt.Sprint(res["messages"]), "Prompt with context: test context") {
			t.Errorf("messages %v", res["messages"])
		}
	})
	t.Run("a capability the session did not declare", func(t *testing.T) {
		plain := env.InitializeWith(t, fixtureRole, "2025-11-25", `{"sampling":{},"elicitation":{}}`)
		msgs := messages(t, plain.Post(t, callBody(23, "test_input_required_result_list_roots", "{}", "")))
		if len(msgs) != 1 || resultOf(t, msgs[0])["isError"] != true {
			t.Errorf("roots without the roots capability: %v, want one isError result and no question", msgs)
		}
		// The capabilities fixture asks what the session declared, in turn.
		es, q := ask(t, env, plain, 24, "test_input_required_result_capabilities", "{}", "elicitation/create")
		q = answerThen(t, plain, es, q, `{"action":"accept","content":{"value":"x"}}`, "sampling/createMessage")
		if got := textOf(t, answer(t, plain, es, q, string(sampledAnswer("x")))); got != "capabilities-ok: received elicit_input,sample_input" {
			t.Errorf("result %q", got)
		}
	})
}

// answerThen answers question q and returns the next question on the
// stream, which must be of method.
func answerThen(t *testing.T, s *servertest.Session, es *servertest.EventStream, q map[string]any, result, method string) map[string]any {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"result":%s}`, q["id"], result)
	if r := s.Post(t, []byte(body)); r.Status != http.StatusAccepted {
		t.Fatalf("answer: %d %s, want 202", r.Status, r.Body)
	}
	next := es.NextMessage(t)
	if next["method"] != method {
		t.Fatalf("after the answer: %v, want %s", next, method)
	}
	return next
}
