package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/tools"
)

// The field cases need an echo tool and a tool with an output schema that
// can fail. They are registered only in tests, through the same registry
// and pipeline as the read tools (scope, validation, rate limit, audit).

// EchoInput is the echo fixture's input: a required string.
type EchoInput struct {
	Text string `json:"text" jsonschema:"Text to echo back."`
}

// EchoOutput echoes the text.
type EchoOutput struct {
	Text string `json:"text"`
}

// ProbeInput chooses success or refusal.
type ProbeInput struct {
	Fail bool `json:"fail,omitempty"`
}

// ProbeOutput is a small structured result.
type ProbeOutput struct {
	Answer int    `json:"answer"`
	Label  string `json:"label"`
}

// ElicitInput asks the client a question.
type ElicitInput struct {
	Question string `json:"question,omitempty"`
}

// ElicitOutput reports the client's answer.
type ElicitOutput struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

func registerFixtures(reg *tools.Registry) error {
	if err := tools.Register(reg, tools.Spec{
		Name: "fixture_elicit", Title: "Elicit (test fixture)", Scope: auth.ScopeRead,
		Description: "Asks the client a form question and reports the answer.",
	}, func(ctx context.Context, c *tools.Call, in ElicitInput) (ElicitOutput, error) {
		c.Peer.Log("info", "fixture", "asking the client")
		raw, err := c.Peer.Ask(ctx, "confirm", "elicitation/create", map[string]any{
			"mode": "form", "message": "Confirm the matter: " + in.Question,
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{
				"confirmed": map[string]any{"type": "boolean"}}, "required": []string{"confirmed"}},
		})
		if err != nil {
			return ElicitOutput{}, err
		}
		var out ElicitOutput
		if err := json.Unmarshal(raw, &out); err != nil {
			return ElicitOutput{}, tools.Refuse(tools.ClassValidation, "The client's answer was not an elicitation result.")
		}
		return out, nil
	}); err != nil {
		return err
	}
	if err := tools.Register(reg, tools.Spec{
		Name: "fixture_echo", Title: "Echo (test fixture)", Description: "Echoes its text argument.",
		Scope: auth.ScopeRead,
	}, func(_ context.Context, _ *tools.Call, in EchoInput) (EchoOutput, error) {
		return EchoOutput{Text: in.Text}, nil
	}); err != nil {
		return err
	}
	return tools.Register(reg, tools.Spec{
		Name: "fixture_structured", Title: "Structured probe (test fixture)",
		Description: "Returns a structured answer, or a refusal when fail is true.", Scope: auth.ScopeRead,
	}, func(_ context.Context, _ *tools.Call, in ProbeInput) (ProbeOutput, error) {
		if in.Fail {
			return ProbeOutput{}, tools.Refuse(tools.ClassConflict, "The probe was asked to fail.")
		}
		return ProbeOutput{Answer: 42, Label: "forty-two"}, nil
	})
}

// fixtureEnv is an Env with the fixture tools.
func fixtureEnv(t *testing.T, opts servertest.Options) *servertest.Env {
	opts.RegisterExtra = registerFixtures
	return servertest.New(t, opts)
}

type mcpContent = mcp.Content

func textBlock(s string) mcp.Content { return mcp.TextContent(s) }
