package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// inputSchemaOf returns the input schema a tool advertises and validates
// against: Spec.InputSchema when given, else the one inferred from the
// input type t.
func inputSchemaOf(spec Spec, t reflect.Type) (json.RawMessage, error) {
	if spec.InputSchema != nil {
		return rawInputSchema(spec.InputSchema)
	}
	in, err := inferSchema(t)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	if in.Type != "object" {
		return nil, errors.New("the input type must be a struct")
	}
	if in.Properties == nil {
		in.Properties = map[string]*jsonschema.Schema{} // {"properties":{}}, as clients expect
	}
	annotateMatter(in)
	return json.Marshal(in)
}

// rawInputSchema checks a verbatim input schema for what every client
// expects of a tool's inputSchema (MCP schema Tool.inputSchema): a JSON
// object with "type":"object" whose "properties", if any, is an object of
// object-valued schemas and whose "required", if any, is a list of strings.
// It returns the schema compacted (one line on an SSE stream), keys and
// values untouched.
func rawInputSchema(raw json.RawMessage) (json.RawMessage, error) {
	var top struct {
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if !isObject(raw) {
		return nil, errors.New("input schema: Spec.InputSchema must be a JSON object")
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("input schema: properties must be an object and required a list of strings: %w", err)
	}
	if top.Type != "object" {
		return nil, errors.New(`input schema: Spec.InputSchema needs "type":"object"`)
	}
	for name, p := range top.Properties {
		if !isObject(p) {
			return nil, fmt.Errorf("input schema: property %q must be a schema object", name)
		}
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	return b.Bytes(), nil
}

// isObject reports whether raw is a JSON object (leading space allowed).
func isObject(raw json.RawMessage) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(raw)
}
