package tools_test

import (
	"context"
	"encoding/json"
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
