package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/tools"
)

// The tools of the suite's 2025-era scenarios (tools-call-*,
// elicitation-sep1034-defaults, elicitation-sep1330-enums) and of its
// pending json-schema-2020-12 scenario, each answering as the scenario's
// checks read it. Names, texts and schemas are the suite's
// (src/scenarios/server/tools.ts, elicitation-*.ts, json-schema-2020-12.ts).
// The 2026-07-28 scenarios' tools are in mrtr.go.

// NoInput is the input of the fixtures that take no arguments (the suite
// calls test_simple_text with no arguments at all; absent arguments are {}).
type NoInput struct{}

// SamplingInput is test_sampling's input.
type SamplingInput struct {
	Prompt string `json:"prompt" jsonschema:"The prompt to send to the client's model."`
}

// ElicitationInput is test_elicitation's input.
type ElicitationInput struct {
	Message string `json:"message" jsonschema:"The message to show the user."`
}

// RoutedInput is test_header_routing's input: its region is also sent as
// the Mcp-Param-Region header by a 2026-07-28 client (x-mcp-header,
// SEP-2243), which the server holds to the body.
type RoutedInput struct {
	Region string `json:"region" jsonschema:"The region a gateway routes the call by." schema:"header=Region"`
}

// Register adds the fixture tools to reg, every one behind
// auth.ScopeConformance.
func Register(reg *tools.Registry, opts Options) error {
	every := opts.interval()
	return errors.Join(
		tools.Register(reg, spec("test_simple_text", "Simple text",
			"Returns a single text content block."),
			static(mcp.TextContent("This is a simple text response for testing."))),
		tools.Register(reg, spec("test_image_content", "Image content",
			"Returns a single image content block (a 1x1 PNG)."),
			static(mcp.Content{Type: "image", Data: PNG1x1, MimeType: "image/png"})),
		tools.Register(reg, spec("test_audio_content", "Audio content",
			"Returns a single audio content block (a minimal WAV)."),
			static(mcp.Content{Type: "audio", Data: WAVMini, MimeType: "audio/wav"})),
		tools.Register(reg, spec("test_embedded_resource", "Embedded resource",
			"Returns a single embedded text resource."),
			static(mcp.Content{Type: "resource", Resource: &mcp.ResourceContents{
				URI: "test://embedded-resource", MimeType: "text/plain", Text: "This is an embedded resource content."}})),
		tools.Register(reg, spec("test_multiple_content_types", "Multiple content types",
			"Returns a text, an image and an embedded resource block together."),
			static(
				mcp.TextContent("Multiple content types test:"),
				mcp.Content{Type: "image", Data: PNG1x1, MimeType: "image/png"},
				mcp.Content{Type: "resource", Resource: &mcp.ResourceContents{
					URI: "test://mixed-content-resource", MimeType: "application/json", Text: `{"test":"data","value":123}`}})),
		tools.Register(reg, spec("test_header_routing", "Header routing",
			"Echoes its region, which a 2026-07-28 request also carries as the Mcp-Param-Region header."),
			func(_ context.Context, _ *tools.Call, in RoutedInput) (tools.Raw, error) {
				return tools.Raw{Content: []mcp.Content{mcp.TextContent("region " + in.Region)}}, nil
			}),
		tools.Register(reg, spec("test_error_handling", "Error handling",
			"Always fails: returns a tool execution error (isError), not a protocol error."),
			func(context.Context, *tools.Call, NoInput) (tools.Raw, error) {
				return tools.Raw{IsError: true, Content: []mcp.Content{
					mcp.TextContent("This tool intentionally returns an error for testing")}}, nil
			}),
		tools.Register(reg, spec("test_tool_with_logging", "Logging",
			"Sends three info log messages about 50 ms apart before its result."),
			func(ctx context.Context, c *tools.Call, _ NoInput) (tools.Raw, error) {
				for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
					if i > 0 {
						if err := pause(ctx, every); err != nil {
							return tools.Raw{}, err
						}
					}
					c.Peer.Log("info", "conformance", msg)
				}
				return text("Tool with logging executed successfully"), nil
			}),
		tools.Register(reg, spec("test_tool_with_progress", "Progress",
			"Reports progress 0, 50 and 100 of 100 about 50 ms apart before its result, when the request carries a progress token."),
			func(ctx context.Context, c *tools.Call, _ NoInput) (tools.Raw, error) {
				for i, p := range []float64{0, 50, 100} {
					if i > 0 {
						if err := pause(ctx, every); err != nil {
							return tools.Raw{}, err
						}
					}
					c.Peer.Progress(p, 100, fmt.Sprintf("Completed step %d of 3", i+1))
				}
				return text("Progress test completed"), nil
			}),
		tools.Register(reg, requires(spec("test_sampling", "Sampling",
			"Asks the client's model to complete the prompt (sampling/createMessage) and returns its answer; needs the client's sampling capability."),
			"sampling"),
			sampling),
		tools.Register(reg, requires(spec("test_elicitation", "Elicitation",
			"Asks the user for a username and an email address (form elicitation) and returns the answer."), "elicitation"),
			func(ctx context.Context, c *tools.Call, in ElicitationInput) (tools.Raw, error) {
				return elicit(ctx, c, "User response", in.Message, userSchema())
			}),
		tools.Register(reg, requires(spec("test_elicitation_sep1034_defaults", "Elicitation defaults (SEP-1034)",
			"Asks a form question whose string, integer, number, enum and boolean fields carry default values."), "elicitation"),
			func(ctx context.Context, c *tools.Call, _ NoInput) (tools.Raw, error) {
				return elicit(ctx, c, "Elicitation completed", "Please review and update the form fields with defaults", defaultsSchema())
			}),
		tools.Register(reg, requires(spec("test_elicitation_sep1330_enums", "Elicitation enums (SEP-1330)",
			"Asks a form question with every enum variant: untitled and titled single select, legacy enumNames, untitled and titled multi select."), "elicitation"),
			func(ctx context.Context, c *tools.Call, _ NoInput) (tools.Raw, error) {
				return elicit(ctx, c, "Elicitation completed", "Please select options from the enum fields", enumsSchema())
			}),
		registerSchemaTool(reg),
		register2026(reg),
		registerTasks(reg),
	)
}

// spec is a fixture's spec: read-only, behind the conformance scope.
func spec(name, title, description string) tools.Spec {
	return tools.Spec{
		Name: name, Title: title, Description: description, Scope: auth.ScopeConformance,
		Annotations: mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}
}

// requires marks a fixture that cannot work without the client's
// capabilities: the pipeline refuses the call before it runs (Spec.Requires).
func requires(s tools.Spec, capabilities ...string) tools.Spec {
	s.Requires = capabilities
	return s
}

// static is a handler that answers with fixed content blocks.
func static(blocks ...mcp.Content) tools.Handler[NoInput, tools.Raw] {
	return func(context.Context, *tools.Call, NoInput) (tools.Raw, error) {
		return tools.Raw{Content: blocks}, nil
	}
}

func text(s string) tools.Raw { return tools.Raw{Content: []mcp.Content{mcp.TextContent(s)}} }

// sampling serves test_sampling: one sampling/createMessage on the call's
// stream (MCP client/sampling); the pipeline has already refused a client
// that did not declare sampling (Spec.Requires).
func sampling(ctx context.Context, c *tools.Call, in SamplingInput) (tools.Raw, error) {
	raw, err := c.Peer.Ask(ctx, "sample", "sampling/createMessage", map[string]any{
		"messages": []any{map[string]any{
			"role": "user", "content": map[string]any{"type": "text", "text": in.Prompt},
		}},
		"maxTokens": 100,
	})
	if err != nil {
		return tools.Raw{}, err
	}
	answer, ok := sampledText(raw)
	if !ok {
		return tools.Raw{}, tools.Refuse(tools.ClassValidation, "The client's answer was not a sampling result with text content.")
	}
	return text("LLM response: " + answer), nil
}

// sampledText returns the text of a CreateMessageResult, whose content is
// one block or (2025-11-25) a list of blocks.
func sampledText(raw json.RawMessage) (string, bool) {
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	var res struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &res) != nil {
		return "", false
	}
	var blocks []block
	var one block
	if json.Unmarshal(res.Content, &one) == nil && one.Type != "" {
		blocks = []block{one}
	} else if json.Unmarshal(res.Content, &blocks) != nil {
		return "", false
	}
	for _, b := range blocks {
		if b.Type == "text" {
			return b.Text, true
		}
	}
	return "", false
}

// elicit asks one form question (elicitation/create, MCP
// client/elicitation) on the call's stream and reports the answer as
// "<label>: action=…, content=…". It asks only a client that takes form
// elicitations: the pipeline has checked that elicitation is declared
// (Spec.Requires), and {"elicitation":{"url":{}}} alone is not form.
func elicit(ctx context.Context, c *tools.Call, label, message string, schema map[string]any) (tools.Raw, error) {
	if !formElicitation(c.Peer.ClientCapabilities()) {
		return tools.Raw{}, mcp.ErrNotDeclared
	}
	raw, err := c.Peer.Ask(ctx, "form", "elicitation/create", map[string]any{
		"message": message, "requestedSchema": schema,
	})
	if err != nil {
		return tools.Raw{}, err
	}
	var res struct {
		Action  string          `json:"action"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &res) != nil || res.Action == "" {
		return tools.Raw{}, tools.Refuse(tools.ClassValidation, "The client's answer was not an elicitation result.")
	}
	content := "{}"
	if len(res.Content) > 0 && string(res.Content) != "null" {
		content = string(res.Content)
	}
	return text(fmt.Sprintf("%s: action=%s, content=%s", label, res.Action, content)), nil
}

// declared returns the value of a capability the client declared.
func declared(caps json.RawMessage, name string) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(caps, &m) != nil {
		return nil, false
	}
	v, ok := m[name]
	return v, ok && string(v) != "null"
}

// formElicitation reports whether the client takes form elicitations:
// {"elicitation":{}} (form only, the 2025-06-18 shape) or one naming "form".
func formElicitation(caps json.RawMessage) bool {
	v, ok := declared(caps, "elicitation")
	if !ok {
		return false
	}
	var modes map[string]json.RawMessage
	if json.Unmarshal(v, &modes) != nil {
		return false
	}
	_, form := modes["form"]
	_, url := modes["url"]
	return form || !url
}

// The requested schemas, exactly as the scenarios check them (built per
// call: nothing here is shared mutable state).

func userSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"username": map[string]any{"type": "string", "description": "User's response"},
			"email":    map[string]any{"type": "string", "description": "User's email address"},
		},
		"required": []string{"username", "email"},
	}
}

func defaultsSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name":  map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
			"age":   map[string]any{"type": "integer", "description": "User age", "default": 30},
			"score": map[string]any{"type": "number", "description": "User score", "default": 95.5},
			"status": map[string]any{"type": "string", "description": "User status",
				"enum": []string{"active", "inactive", "pending"}, "default": "active"},
			"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
		},
		"required": []string{},
	}
}

func enumsSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"untitledSingle": map[string]any{"type": "string", "description": "Choose an option",
				"enum": []string{"option1", "option2", "option3"}},
			"titledSingle": map[string]any{"type": "string", "description": "Choose a titled option",
				"oneOf": []any{
					map[string]any{"const": "value1", "title": "First Option"},
					map[string]any{"const": "value2", "title": "Second Option"},
					map[string]any{"const": "value3", "title": "Third Option"},
				}},
			"legacyEnum": map[string]any{"type": "string", "description": "Choose a legacy option",
				"enum":      []string{"opt1", "opt2", "opt3"},
				"enumNames": []string{"Option One", "Option Two", "Option Three"}},
			"untitledMulti": map[string]any{"type": "array", "description": "Choose multiple options",
				"minItems": 1, "maxItems": 3,
				"items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
			"titledMulti": map[string]any{"type": "array", "description": "Choose multiple titled options",
				"minItems": 1, "maxItems": 3,
				"items": map[string]any{"anyOf": []any{
					map[string]any{"const": "value1", "title": "First Choice"},
					map[string]any{"const": "value2", "title": "Second Choice"},
					map[string]any{"const": "value3", "title": "Third Choice"},
				}}},
		},
		"required": []string{},
	}
}

// schema202012 is the json-schema-2020-12 scenario's input schema, which
// tools/list must carry verbatim ($schema, $defs, $anchor, $ref,
// allOf/anyOf, if/then/else, additionalProperties:false; SEP-2106).
const schema202012 = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "$anchor": "addressDef",
      "type": "object",
      "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
    }
  },
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"},
    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
    "phone": {"type": "string"},
    "email": {"type": "string"}
  },
  "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
  "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
  "then": {"required": ["phone"]},
  "else": {"required": ["email"]},
  "additionalProperties": false
}`

// registerSchemaTool adds json_schema_2020_12_tool: its schema is given
// verbatim (tools.Spec.InputSchema) and validates its arguments too.
func registerSchemaTool(reg *tools.Registry) error {
	s := spec("json_schema_2020_12_tool", "JSON Schema 2020-12",
		"Tool with JSON Schema 2020-12 features: $defs, $anchor, $ref, composition and conditional keywords.")
	s.InputSchema = json.RawMessage(schema202012)
	return tools.Register(reg, s, func(_ context.Context, _ *tools.Call, in map[string]any) (tools.Raw, error) {
		b, err := json.Marshal(in)
		if err != nil {
			return tools.Raw{}, err
		}
		return text("Received: " + string(b)), nil
	})
}
