package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/prompts"
	"github.com/custodymcp/custody/shared/tools"
)

// The fixtures of the suite's 2026-07-28 scenarios: server-stateless's
// diagnostic tools (test_missing_capability, test_streaming_elicitation,
// test_logging_tool) and the input-required-result-* family (SEP-2322,
// multi-round-trip requests), with the keys, messages and schemas of the
// scenarios' descriptions (src/scenarios/server/stateless.ts,
// input-required-result.ts).
//
// Each is one implementation for both eras: it asks through mcp.Peer. In a
// 2025 session every question is a server-to-client request on the call's
// stream, parked until the client's answer arrives (askAll asks them in
// turn). In the 2026-07-28 era Peer.Ask answers from the request's
// inputResponses and its sealed requestState, or records the question and
// returns mcp.ErrInputRequired; askAll asks every question of a round
// before it gives up, so one input_required result carries them all, and
// the transport seals a new requestState for each round (it binds the
// credential, method, name, arguments digest, expiry, round and a nonce, and
// carries the answers of earlier rounds, so a tampered state is refused
// -32602 before the tool runs). A retry that brings every answer in
// inputResponses completes with or without the state; one that brings none
// of the answers the tool needs (only unknown keys) is asked again.
//
// Questions go only to a client that declared the capability (mcp.Declared):
// the single-purpose fixtures say what they cannot work without
// (tools.Spec.Requires: -32021 before they run in the 2026 era, a VALIDATION
// refusal in a 2025 session), and test_input_required_result_capabilities
// and the prompt ask only what the client declared.

// question is one server-to-client request a fixture asks: key names it in
// inputRequests and inputResponses (2026 era) and is stable across rounds.
type question struct {
	key, method string
	params      map[string]any
}

// formQuestion asks for one field of the given JSON type by form
// elicitation (MCP client/elicitation; the harness answers every form
// question with accept and the content the scenario chose).
func formQuestion(key, message, field, typ string) question {
	return question{key: key, method: "elicitation/create", params: map[string]any{
		"message": message,
		"requestedSchema": map[string]any{
			"type":       "object",
			"properties": map[string]any{field: map[string]any{"type": typ}},
			"required":   []string{field},
		},
	}}
}

// samplingQuestion asks the client's model to answer text (MCP client/sampling).
func samplingQuestion(key, text string, maxTokens int) question {
	return question{key: key, method: "sampling/createMessage", params: map[string]any{
		"messages": []any{map[string]any{
			"role": "user", "content": map[string]any{"type": "text", "text": text},
		}},
		"maxTokens": maxTokens,
	}}
}

// rootsQuestion asks for the client's roots (MCP client/roots).
func rootsQuestion(key string) question {
	return question{key: key, method: "roots/list", params: map[string]any{}}
}

// declaredTo reports whether the client declared the capability q needs.
func (q question) declaredTo(p mcp.Peer) bool {
	return mcp.Declared(p.ClientCapabilities(), q.method, q.params)
}

// askAll asks every question and returns the answers by key. In a 2025
// session each question waits for its answer in turn; in the 2026 era the
// answered ones come from the request and every unanswered one is recorded
// before mcp.ErrInputRequired is returned, so one round asks them all.
func askAll(ctx context.Context, p mcp.Peer, qs ...question) (map[string]json.RawMessage, error) {
	answers := make(map[string]json.RawMessage, len(qs))
	pending := false
	for _, q := range qs {
		raw, err := p.Ask(ctx, q.key, q.method, q.params)
		switch {
		case errors.Is(err, mcp.ErrInputRequired):
			pending = true
		case err != nil:
			return nil, err
		default:
			answers[q.key] = raw
		}
	}
	if pending {
		return nil, mcp.ErrInputRequired
	}
	return answers, nil
}

// errAnswer is a client answer that is not the result the question asked for.
type errAnswer struct{ key, want string }

func (e *errAnswer) Error() string {
	return fmt.Sprintf("The client's answer to %q was not %s.", e.key, e.want)
}

// formField returns the field of an accepted form answer (an ElicitResult
// whose content holds the field with a value of type T). accepted is false
// when the user declined or cancelled.
func formField[T any](key string, raw json.RawMessage, field string) (v T, accepted bool, err error) {
	var res struct {
		Action  string                     `json:"action"`
		Content map[string]json.RawMessage `json:"content"`
	}
	bad := &errAnswer{key: key, want: fmt.Sprintf("an elicitation result with %q", field)}
	if json.Unmarshal(raw, &res) != nil {
		return v, false, bad
	}
	switch res.Action {
	case "decline", "cancel":
		return v, false, nil
	case "accept":
	default:
		return v, false, bad
	}
	f, ok := res.Content[field]
	if !ok || json.Unmarshal(f, &v) != nil {
		return v, false, bad
	}
	return v, true, nil
}

// sampled returns the text of a sampling answer.
func sampled(key string, raw json.RawMessage) (string, error) {
	s, ok := sampledText(raw)
	if !ok {
		return "", &errAnswer{key: key, want: "a sampling result with text content"}
	}
	return s, nil
}

// rootCount returns the number of roots of a roots/list answer.
func rootCount(key string, raw json.RawMessage) (int, error) {
	var res struct {
		Roots []struct {
			URI string `json:"uri"`
		} `json:"roots"`
	}
	if json.Unmarshal(raw, &res) != nil || res.Roots == nil {
		return 0, &errAnswer{key: key, want: "a roots/list result"}
	}
	for _, r := range res.Roots {
		if r.URI == "" {
			return 0, &errAnswer{key: key, want: "a roots/list result"}
		}
	}
	return len(res.Roots), nil
}

// mrtrHandler adapts a fixture body to a tool handler: a malformed answer
// is a VALIDATION refusal the model can read, everything else (input
// required, cancelled, a question the client cannot take) goes to the
// pipeline as is.
func mrtrHandler(body func(ctx context.Context, p mcp.Peer) (string, error)) tools.Handler[NoInput, tools.Raw] {
	return mrtrInput(func(ctx context.Context, p mcp.Peer, _ NoInput) (string, error) { return body(ctx, p) })
}

// mrtrInput is mrtrHandler for a fixture that takes arguments.
func mrtrInput[In any](body func(ctx context.Context, p mcp.Peer, in In) (string, error)) tools.Handler[In, tools.Raw] {
	return func(ctx context.Context, c *tools.Call, in In) (tools.Raw, error) {
		s, err := body(ctx, c.Peer, in)
		var bad *errAnswer
		if errors.As(err, &bad) {
			return tools.Raw{}, tools.Refuse(tools.ClassValidation, bad.Error())
		}
		if err != nil {
			return tools.Raw{}, err
		}
		return text(s), nil
	}
}

// register2026 adds the 2026-07-28 scenarios' tools.
func register2026(reg *tools.Registry) error {
	return errors.Join(
		tools.Register(reg, requires(spec("test_missing_capability", "Missing capability",
			"Needs the client's sampling capability: a request that does not declare it is refused before the tool runs (2026-07-28: -32021 with requiredCapabilities). With sampling it asks the client's model for one word."),
			"sampling"),
			mrtrHandler(func(ctx context.Context, p mcp.Peer) (string, error) {
				q := samplingQuestion("success_word", "Reply with the single word: Success", 10)
				a, err := askAll(ctx, p, q)
				if err != nil {
					return "", err
				}
				s, err := sampled(q.key, a[q.key])
				return "Success: " + s, err
			})),
		tools.Register(reg, requires(spec("test_streaming_elicitation", "Streaming elicitation",
			"Asks the user to confirm by form elicitation: in a 2025 session as a request on the call's stream, in the 2026-07-28 era as an input_required result, never as a request on the response stream."),
			"elicitation"),
			mrtrHandler(func(ctx context.Context, p mcp.Peer) (string, error) {
				q := formQuestion("stream_confirm", "Continue the streaming test?", "confirm", "boolean")
				a, err := askAll(ctx, p, q)
				if err != nil {
					return "", err
				}
				ok, accepted, err := formField[bool](q.key, a[q.key], "confirm")
				return fmt.Sprintf("Streaming complete: accepted=%t, confirm=%t", accepted, ok), err
			})),
		tools.Register(reg, spec("test_logging_tool", "Logging evaluation",
			"Logs three info messages and answers at once: in the 2026-07-28 era only a request naming io.modelcontextprotocol/logLevel in _meta receives them, in a 2025 session the level set with logging/setLevel applies."),
			func(_ context.Context, c *tools.Call, _ NoInput) (tools.Raw, error) {
				for _, msg := range []string{"Logging tool started", "Logging tool evaluating", "Logging tool finished"} {
					c.Peer.Log("info", "conformance", msg)
				}
				return text("Logging evaluated"), nil
			}),
		tools.Register(reg, requires(spec("test_input_required_result_elicitation", "Input required: elicitation",
			"Asks the user's name (elicitation key user_name) and greets them."), "elicitation"),
			mrtrHandler(func(ctx context.Context, p mcp.Peer) (string, error) {
				q := formQuestion("user_name", "What is your name?", "name", "string")
				a, err := askAll(ctx, p, q)
				if err != nil {
					return "", err
				}
				name, accepted, err := formField[string](q.key, a[q.key], "name")
				if err != nil || !accepted {
					return "Hello! (no name was given)", err
				}
				return "Hello, " + name + "!", nil
			})),
		tools.Register(reg, requires(spec("test_input_required_result_sampling", "Input required: sampling",
			"Asks the client's model for the capital of France (sampling key capital_question) and returns its answer."), "sampling"),
			mrtrHandler(func(ctx context.Context, p mcp.Peer) (string, error) {
				q := samplingQuestion("capital_question", "What is the capital of France?", 100)
				a, err := askAll(ctx, p, q)
				if err != nil {
					return "", err
				}
				s, err := sampled(q.key, a[q.key])
				return "Sampling result: " + s, err
			})),
		tools.Register(reg, requires(spec("test_input_required_result_list_roots", "Input required: roots",
			"Asks for the client's roots (roots/list key client_roots) and counts them."), "roots"),
			mrtrHandler(func(ctx context.Context, p mcp.Peer) (string, error) {
				q := rootsQuestion("client_roots")
				a, err := askAll(ctx, p, q)
				if err != nil {
					return "", err
				}
				n, err := rootCount(q.key, a[q.key])
				return fmt.Sprintf("Found %d root(s)", n), err
			})),
		tools.Register(reg, requires(spec("test_input_required_result_request_state", "Input required: request state",
			"Asks the user to confirm (elicitation key confirm); the input_required result carries a sealed requestState that the transport verifies on the retry."), "elicitation"),
			mrtrHandler(confirmed("state-ok: the confirmation arrived and every requestState presented passed verification"))),
		tools.Register(reg, requires(spec("test_input_required_result_multiple_inputs", "Input required: multiple inputs",
			"Asks three questions in one round: the user's name (elicitation user_name), a greeting from the client's model (sampling greeting) and the client's roots (roots/list client_roots)."),
			"elicitation", "sampling", "roots"),
			mrtrHandler(func(ctx context.Context, p mcp.Peer) (string, error) {
				name, greeting, roots := formQuestion("user_name", "What is your name?", "name", "string"),
					samplingQuestion("greeting", "Generate a greeting", 50), rootsQuestion("client_roots")
				a, err := askAll(ctx, p, name, greeting, roots)
				if err != nil {
					return "", err
				}
				who, accepted, err := formField[string](name.key, a[name.key], "name")
				if err != nil {
					return "", err
				}
				if !accepted {
					who = "(declined)"
				}
				hello, err := sampled(greeting.key, a[greeting.key])
				if err != nil {
					return "", err
				}
				n, err := rootCount(roots.key, a[roots.key])
				return fmt.Sprintf("Name: %s; Greeting: %s; Roots: %d", who, hello, n), err
			})),
		tools.Register(reg, requires(spec("test_input_required_result_multi_round", "Input required: multiple rounds",
			"Asks the user's name (step1), then in a second round their favourite colour (step2), each round with a new requestState."), "elicitation"),
			mrtrHandler(func(ctx context.Context, p mcp.Peer) (string, error) {
				step1 := formQuestion("step1", "Step 1: What is your name?", "name", "string")
				a, err := askAll(ctx, p, step1)
				if err != nil {
					return "", err
				}
				name, accepted, err := formField[string](step1.key, a[step1.key], "name")
				if err != nil || !accepted {
					return "Multi-round ended: the user gave no name.", err
				}
				step2 := formQuestion("step2", "Step 2: What is your favorite color?", "color", "string")
				if a, err = askAll(ctx, p, step2); err != nil {
					return "", err
				}
				color, accepted, err := formField[string](step2.key, a[step2.key], "color")
				if err != nil || !accepted {
					return "Multi-round ended: " + name + " gave no colour.", err
				}
				return fmt.Sprintf("Multi-round complete for %s who likes %s", name, color), err
			})),
		tools.Register(reg, requires(spec("test_input_required_result_tampered_state", "Input required: tampered state",
			"Asks the user to confirm (elicitation key confirm) with an integrity-protected requestState: a retry whose state was altered is refused -32602."), "elicitation"),
			mrtrHandler(confirmed("integrity-ok: the confirmation arrived and every requestState presented passed verification"))),
		tools.Register(reg, spec("test_input_required_result_capabilities", "Input required: client capabilities",
			"Asks only what the client declared: a form question (elicit_input) with elicitation, a sampling request (sample_input) with sampling; nothing without either."),
			mrtrHandler(func(ctx context.Context, p mcp.Peer) (string, error) {
				var qs []question
				for _, q := range []question{
					formQuestion("elicit_input", "Elicitation input", "value", "string"),
					samplingQuestion("sample_input", "Sample request", 50),
				} {
					if q.declaredTo(p) {
						qs = append(qs, q)
					}
				}
				if len(qs) == 0 {
					return "No supported capabilities declared: nothing was asked.", nil
				}
				a, err := askAll(ctx, p, qs...)
				if err != nil {
					return "", err
				}
				keys := make([]string, 0, len(a))
				for k := range a {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				return "capabilities-ok: received " + strings.Join(keys, ","), nil
			})),
	)
}

// confirmed asks the user to confirm (elicitation key confirm, a required
// boolean ok) and answers ok with a report of the answer.
func confirmed(ok string) func(ctx context.Context, p mcp.Peer) (string, error) {
	return func(ctx context.Context, p mcp.Peer) (string, error) {
		q := formQuestion("confirm", "Please confirm", "ok", "boolean")
		a, err := askAll(ctx, p, q)
		if err != nil {
			return "", err
		}
		yes, accepted, err := formField[bool](q.key, a[q.key], "ok")
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s (accepted=%t, ok=%t)", ok, accepted, yes), nil
	}
}

// inputRequiredPrompt is test_input_required_result_prompt: prompts/get
// asks for the context to use (elicitation key user_context), so the 2026
// era answers input_required on a method other than tools/call. A client
// that takes no form question gets the prompt without a context.
func inputRequiredPrompt() prompts.Prompt {
	return prompts.Prompt{
		Name: "test_input_required_result_prompt", Title: "Prompt that asks for input", Scope: auth.ScopeConformance,
		Description: "A prompt without arguments that asks the user which context to use (elicitation key user_context) before it renders.",
		Render: func(ctx context.Context, c *prompts.Call, _ map[string]string) ([]mcp.PromptMessage, error) {
			q := formQuestion("user_context", "What context should the prompt use?", "context", "string")
			use := "(none: this client cannot be asked)"
			if q.declaredTo(c.Peer) {
				a, err := askAll(ctx, c.Peer, q)
				switch {
				case errors.Is(err, mcp.ErrNoStream):
					// a 2025 request that does not take a stream: render without
				case err != nil:
					return nil, err
				default:
					v, accepted, err := formField[string](q.key, a[q.key], "context")
					if err != nil {
						return nil, mcp.InvalidParams("Invalid params: " + err.Error())
					}
					use = "(none: the user declined)"
					if accepted {
						use = v
					}
				}
			}
			return []mcp.PromptMessage{prompts.User(mcp.TextContent("Prompt with context: " + use))}, nil
		},
	}
}
