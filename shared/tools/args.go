package tools

import (
	"encoding/json"
	"fmt"
	"reflect"

	validator "github.com/santhosh-tekuri/jsonschema/v6"
)

// ArgsSchema is the schema of a Go type inferred exactly as a tool's input
// schema is (strict: structs refuse unknown properties; schema tags for
// formats, bounds, enums and patterns), with its compiled validator. It is
// for arguments a tool carries inside its own, such as propose_action's
// args, whose schema depends on another argument (the action): the one
// source for what list_actions advertises and what is enforced.
type ArgsSchema struct {
	doc json.RawMessage
	v   *validator.Schema
}

// NewArgsSchema infers and compiles the schema of t, which must be a
// struct type; name names it in the validator's resource URL.
func NewArgsSchema(name string, t reflect.Type) (*ArgsSchema, error) {
	s, err := inferSchema(t)
	if err != nil {
		return nil, fmt.Errorf("args schema %s: %w", name, err)
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("args schema %s: the type must be a struct", name)
	}
	doc, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("args schema %s: %w", name, err)
	}
	v, err := compile(newCompiler(), "args:"+name, doc)
	if err != nil {
		return nil, fmt.Errorf("args schema %s: %w", name, err)
	}
	return &ArgsSchema{doc: doc, v: v}, nil
}

// JSON is the schema document.
func (a *ArgsSchema) JSON() json.RawMessage { return a.doc }

// Validate checks doc, a value decoded with numbers as json.Number
// (DecodeJSON), and returns nil or the VALIDATION refusal naming the field
// by its path under prefix ("args.due_date"); the sentence is built from
// the validator's instance path and error kind, never its message, so no
// value is quoted (docs/decisions.md "Answers on the wire").
func (a *ArgsSchema) Validate(doc any, prefix string) *Refusal {
	if err := a.v.Validate(doc); err != nil {
		return validationRefusalAt(err, prefix)
	}
	return nil
}

// DecodeJSON decodes one JSON value with numbers as json.Number, as tool
// arguments are decoded for validation: a number stays exactly as written.
func DecodeJSON(raw []byte) (any, error) { return decodeDoc(raw) }
