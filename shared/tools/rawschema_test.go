package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/tools"
)

func TestAVerbatimInputSchemaIsAdvertisedCompactedOrRefusedAtRegistration(t *testing.T) {
	for _, tc := range []struct {
		name, schema, want string // want "" means Register fails
	}{
		{"kept as given", "{\n  \"type\": \"object\",\n  \"$defs\": {\"a\": {\"$anchor\": \"x\", \"type\": \"string\"}},\n  \"properties\": {\"a\": {\"$ref\": \"#/$defs/a\"}},\n  \"additionalProperties\": false\n}",
			`{"type":"object","$defs":{"a":{"$anchor":"x","type":"string"}},"properties":{"a":{"$ref":"#/$defs/a"}},"additionalProperties":false}`},
		{"not an object", `[1]`, ""},
		{"not JSON", `{"type":`, ""},
		{"no type object", `{"type":"string"}`, ""},
		{"a boolean property schema", `{"type":"object","properties":{"a":true}}`, ""},
		{"required not strings", `{"type":"object","required":[1]}`, ""},
		{"uncompilable", `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := tools.NewRegistry(tools.Options{})
			err := tools.Register(reg, tools.Spec{
				Name: "raw", Title: "Raw", Description: "A tool with a verbatim schema.", Scope: auth.ScopeRead,
				InputSchema: json.RawMessage(tc.schema),
			}, func(context.Context, *tools.Call, map[string]any) (tools.Raw, error) { return tools.Raw{}, nil })
			if tc.want == "" {
				if err == nil {
					t.Fatalf("Register accepted %s", tc.schema)
				}
				return
			}
			if err != nil {
				t.Fatalf("Register: %v", err)
			}
			tool, _ := reg.Tool("raw")
			if string(tool.InputSchema) != tc.want {
				t.Errorf("inputSchema = %s, want %s", tool.InputSchema, tc.want)
			}
		})
	}
}

// An inferred schema is built on first use; Check builds every tool's, so a
// type no input schema comes from fails a server's tests, never quietly.
func TestCheckFindsAnInputTypeThatIsNotAStruct(t *testing.T) {
	reg := tools.NewRegistry(tools.Options{})
	type out struct {
		N int `json:"n"`
	}
	if err := tools.Register(reg, tools.Spec{Name: "good", Title: "Good", Description: "Takes an object.", Scope: auth.ScopeRead},
		func(context.Context, *tools.Call, struct{}) (out, error) { return out{}, nil }); err != nil {
		t.Fatalf("Register good: %v", err)
	}
	if err := reg.Check(); err != nil {
		t.Fatalf("Check with only good tools: %v", err)
	}
	if err := tools.Register(reg, tools.Spec{Name: "bad", Title: "Bad", Description: "Takes a string.", Scope: auth.ScopeRead},
		func(context.Context, *tools.Call, string) (out, error) { return out{}, nil }); err != nil {
		t.Fatalf("Register bad: %v (inference waits for first use)", err)
	}
	err := reg.Check()
	if err == nil || !strings.Contains(err.Error(), `"bad"`) {
		t.Fatalf("Check = %v, want an error naming the tool \"bad\"", err)
	}
	if _, ok := reg.Tool("bad"); ok {
		t.Error("a tool whose schema failed is still advertised")
	}
}
