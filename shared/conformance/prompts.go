package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/completion"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/prompts"
)

// The prompts of the suite's prompts-* and completion-complete scenarios
// (src/scenarios/server/prompts.ts, utils.ts) and of its 2026-07-28
// input-required-result-non-tool-request scenario (mrtr.go), behind the
// conformance scope.

// RegisterPrompts adds the fixture prompts to reg.
func RegisterPrompts(reg *prompts.Registry) error {
	return errors.Join(
		reg.Add(prompts.Prompt{
			Name: "test_simple_prompt", Title: "Simple prompt", Scope: auth.ScopeConformance,
			Description: "A prompt without arguments: one user message of text.",
			Render: func(context.Context, *prompts.Call, map[string]string) ([]mcp.PromptMessage, error) {
				return []mcp.PromptMessage{prompts.User(mcp.TextContent("This is a simple prompt for testing."))}, nil
			},
		}),
		reg.Add(prompts.Prompt{
			Name: "test_prompt_with_arguments", Title: "Prompt with arguments", Scope: auth.ScopeConformance,
			Description: "A prompt with two required arguments, both quoted in its message; arg1 completes.",
			Arguments: []prompts.Argument{
				{Name: "arg1", Description: "First test argument", Required: true, Complete: suggest("paris", "park", "party", "test", "testing")},
				{Name: "arg2", Description: "Second test argument", Required: true},
			},
			Render: func(_ context.Context, _ *prompts.Call, args map[string]string) ([]mcp.PromptMessage, error) {
				text := fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"])
				return []mcp.PromptMessage{prompts.User(mcp.TextContent(text))}, nil
			},
		}),
		reg.Add(prompts.Prompt{
			Name: "test_prompt_with_embedded_resource", Title: "Prompt with an embedded resource", Scope: auth.ScopeConformance,
			Description: "A prompt whose first message embeds the resource the argument names.",
			Arguments: []prompts.Argument{
				{Name: "resourceUri", Description: "URI of the resource to embed", Required: true},
			},
			Render: func(_ context.Context, _ *prompts.Call, args map[string]string) ([]mcp.PromptMessage, error) {
				return []mcp.PromptMessage{
					prompts.User(mcp.Content{Type: "resource", Resource: &mcp.ResourceContents{
						URI: args["resourceUri"], MimeType: "text/plain", Text: "Embedded resource content for testing."}}),
					prompts.User(mcp.TextContent("Please process the embedded resource above.")),
				}, nil
			},
		}),
		reg.Add(inputRequiredPrompt()),
		reg.Add(prompts.Prompt{
			Name: "test_prompt_with_image", Title: "Prompt with an image", Scope: auth.ScopeConformance,
			Description: "A prompt whose first message is an image (a 1x1 PNG).",
			Render: func(context.Context, *prompts.Call, map[string]string) ([]mcp.PromptMessage, error) {
				return []mcp.PromptMessage{
					prompts.User(mcp.Content{Type: "image", Data: PNG1x1, MimeType: "image/png"}),
					prompts.User(mcp.TextContent("Please analyze the image above.")),
				}, nil
			},
		}),
	)
}

// suggest completes from a fixed list: the values that start with what was
// typed so far, in order.
func suggest(values ...string) completion.Completer {
	return func(_ context.Context, _ *completion.Call, typed string) ([]string, error) {
		var out []string
		for _, v := range values {
			if strings.HasPrefix(v, typed) {
				out = append(out, v)
			}
		}
		return out, nil
	}
}
