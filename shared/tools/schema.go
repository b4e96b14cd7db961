package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/custodymcp/custody/shared/attest"
)

// Schemas are inferred from one Go type per tool with google/jsonschema-go:
// field names from json tags, descriptions from `jsonschema:"…"` tags, and
// required properties from fields without omitempty. Structs refuse
// additional properties. Constraints JSON Schema needs beyond that come from
// a `schema:"…"` tag of semicolon-separated settings on the same field:
//
//	format=date | date-time | uri
//	minimum=N   maximum=N   minLength=N   maxLength=N
//	enum=a|b|c  pattern=REGEXP
//	minItems=N  maxItems=N  (arrays; items:SETTING applies one to the items)
//	header=NAME (the x-mcp-header annotation: a 2026-07-28 request carries
//	             the argument also as the Mcp-Param-NAME header, SEP-2243)
//
// Every top-level case_id gets header=Case-Id without a tag: the matter is
// what a gateway may route or throttle on.
// The inferred schema is what tools/list advertises and what arguments are
// validated against (santhosh-tekuri/jsonschema, draft 2020-12, formats
// asserted): one source for both (docs/decisions.md "Answers on the wire").

// typeSchemas returns the schemas of types that encode themselves: a wire
// timestamp is a string, as a time.Time is (the library's own mapping).
func typeSchemas() map[reflect.Type]*jsonschema.Schema {
	return map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[attest.Time](): {Type: "string"}}
}

// inferSchema infers the schema of T and applies its schema tags.
func inferSchema(t reflect.Type) (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: typeSchemas()})
	if err != nil {
		return nil, err
	}
	if err := applyTags(t, s); err != nil {
		return nil, err
	}
	return s, nil
}

// applyTags walks a struct type beside its schema and applies schema tags.
func applyTags(t reflect.Type, s *jsonschema.Schema) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			return applyTags(t.Elem(), s.Items)
		}
		return nil
	case reflect.Struct:
	default:
		return nil
	}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		ps := s.Properties[name]
		if ps == nil {
			continue
		}
		if tag, ok := f.Tag.Lookup("schema"); ok {
			if err := applyTag(ps, tag); err != nil {
				return fmt.Errorf("field %s.%s: %w", t.Name(), f.Name, err)
			}
		}
		if err := applyTags(f.Type, ps); err != nil {
			return err
		}
	}
	return nil
}

func applyTag(s *jsonschema.Schema, tag string) error {
	for _, setting := range strings.Split(tag, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(setting), "=")
		if !ok {
			return fmt.Errorf("schema tag setting %q lacks '='", setting)
		}
		if item, isItem := strings.CutPrefix(k, "items:"); isItem {
			// A setting of an array's items ("items:maxLength=128").
			if s.Items == nil {
				return fmt.Errorf("schema tag %q: the field is not an array", setting)
			}
			if err := applyTag(s.Items, item+"="+v); err != nil {
				return err
			}
			continue
		}
		switch k {
		case "minItems", "maxItems":
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("schema tag %s=%q: %w", k, v, err)
			}
			if k == "minItems" {
				s.MinItems = &n
			} else {
				s.MaxItems = &n
			}
		case "format":
			s.Format = v
		case "pattern":
			s.Pattern = v
		case "enum":
			for _, e := range strings.Split(v, "|") {
				s.Enum = append(s.Enum, e)
			}
		case "minimum", "maximum":
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("schema tag %s=%q: %w", k, v, err)
			}
			if k == "minimum" {
				s.Minimum = &n
			} else {
				s.Maximum = &n
			}
		case "header":
			if !validHeaderName(v) {
				return fmt.Errorf("schema tag header=%q is not an HTTP header name suffix", v)
			}
			if s.Extra == nil {
				s.Extra = map[string]any{}
			}
			s.Extra[headerKeyword] = v
		case "minLength", "maxLength":
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("schema tag %s=%q: %w", k, v, err)
			}
			if k == "minLength" {
				s.MinLength = &n
			} else {
				s.MaxLength = &n
			}
		default:
			return fmt.Errorf("unknown schema tag setting %q", k)
		}
	}
	return nil
}

// headerKeyword is the input-schema annotation naming a parameter's
// Mcp-Param-* header (MCP 2026-07-28, SEP-2243).
const headerKeyword = "x-mcp-header"

// matterHeader is the header suffix of every tool's top-level case_id.
const matterHeader = "Case-Id"

// validHeaderName reports whether s can follow "Mcp-Param-" in a header
// name: an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// annotateMatter gives a top-level string case_id its x-mcp-header.
func annotateMatter(s *jsonschema.Schema) {
	p := s.Properties["case_id"]
	if p == nil || p.Type != "string" || p.Extra[headerKeyword] != nil {
		return
	}
	if p.Extra == nil {
		p.Extra = map[string]any{}
	}
	p.Extra[headerKeyword] = matterHeader
}

// headerParams reads a compiled input schema's x-mcp-header annotations:
// top-level property name → header suffix.
func headerParams(schema json.RawMessage) (map[string]string, error) {
	var top struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, err
	}
	var out map[string]string
	for name, p := range top.Properties {
		v, ok := p[headerKeyword]
		if !ok {
			continue
		}
		h, isString := v.(string)
		if !isString || !validHeaderName(h) {
			return nil, fmt.Errorf("property %s: %s must be a header name suffix", name, headerKeyword)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[name] = h
	}
	return out, nil
}

// newCompiler returns the validator compiler of a registry: draft 2020-12
// with formats asserted. One compiler serves every tool, so the draft's
// meta-schema is compiled once.
func newCompiler() *validator.Compiler {
	c := validator.NewCompiler()
	c.DefaultDraft(validator.Draft2020)
	c.AssertFormat()
	return c
}

// compile compiles a tool's input schema document for validation.
func compile(c *validator.Compiler, name string, doc json.RawMessage) (*validator.Schema, error) {
	v, err := validator.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, err
	}
	url := "urn:custody:schema:" + name
	if err := c.AddResource(url, v); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// refusalSchema is the schema of the refusal object (docs/contracts.md §3).
func refusalSchema() *jsonschema.Schema {
	str := func() *jsonschema.Schema { return &jsonschema.Schema{Type: "string"} }
	num := func() *jsonschema.Schema { return &jsonschema.Schema{Type: "integer"} }
	return &jsonschema.Schema{
		Type:     "object",
		Required: []string{"class", "message"},
		Properties: map[string]*jsonschema.Schema{
			"class": str(), "message": str(), "field": str(),
			"limit": num(), "retry_after_s": num(), "spent": {Type: "boolean"},
		},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
}

// outputSchema relaxes a success schema so that a refusal validates too:
// every top-level property optional, plus "error" (docs/decisions.md: "an object
// whose top-level properties are optional, with error among them").
func outputSchema(success *jsonschema.Schema) *jsonschema.Schema {
	out := success.CloneSchemas()
	out.Required = nil
	if out.Properties == nil {
		out.Properties = map[string]*jsonschema.Schema{}
	}
	out.Properties["error"] = refusalSchema()
	return out
}

// validationRefusal turns a schema violation into a VALIDATION refusal that
// names the field by its path and never quotes the value. It reads only the
// error's instance location and typed kind, never its message text (which
// can quote the value).
func validationRefusal(err error) *Refusal { return validationRefusalAt(err, "") }

// validationRefusalAt is validationRefusal for a value validated on its
// own that sits at the argument path prefix ("args"): the field is named
// from the arguments' root.
func validationRefusalAt(err error, prefix string) *Refusal {
	var ve *validator.ValidationError
	if !errors.As(err, &ve) {
		return &Refusal{Class: ClassValidation, Message: "The arguments are not valid for this tool.", Field: prefix}
	}
	leaf := firstLeaf(ve)
	field := strings.Join(leaf.InstanceLocation, ".")
	if prefix != "" {
		field = strings.TrimSuffix(joinPath(prefix, field), ".")
	}
	var msg string
	switch k := leaf.ErrorKind.(type) {
	case *kind.Required:
		field = joinPath(field, k.Missing[0])
		msg = fmt.Sprintf("The field '%s' is required.", field)
	case *kind.AdditionalProperties:
		field = joinPath(field, k.Properties[0])
		msg = fmt.Sprintf("The field '%s' is not accepted by this tool.", field)
	case *kind.Type:
		msg = fmt.Sprintf("The field '%s' must be %s.", displayField(field), typeWords(k.Want))
	case *kind.Format:
		msg = fmt.Sprintf("The field '%s' must be %s.", displayField(field), formatWords(k.Want))
	case *kind.Minimum:
		msg = fmt.Sprintf("The field '%s' must be at least %s.", displayField(field), k.Want.FloatString(0))
	case *kind.Maximum:
		msg = fmt.Sprintf("The field '%s' must be at most %s.", displayField(field), k.Want.FloatString(0))
	case *kind.MinLength:
		msg = fmt.Sprintf("The field '%s' must be at least %d characters long.", displayField(field), k.Want)
	case *kind.MaxLength:
		msg = fmt.Sprintf("The field '%s' must be at most %d characters long.", displayField(field), k.Want)
	case *kind.MinItems:
		msg = fmt.Sprintf("The field '%s' must hold at least %d items.", displayField(field), k.Want)
	case *kind.MaxItems:
		msg = fmt.Sprintf("The field '%s' must hold at most %d items.", displayField(field), k.Want)
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprint(w)
		}
		msg = fmt.Sprintf("The field '%s' must be one of: %s.", displayField(field), strings.Join(want, ", "))
	case *kind.Pattern:
		msg = fmt.Sprintf("The field '%s' does not have the expected form.", displayField(field))
	default:
		msg = fmt.Sprintf("The field '%s' is not valid.", displayField(field))
	}
	if field == "" {
		msg = "The arguments must be an object."
	}
	return &Refusal{Class: ClassValidation, Message: msg, Field: field}
}

// firstLeaf descends to the first most specific cause.
func firstLeaf(ve *validator.ValidationError) *validator.ValidationError {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	return ve
}

func joinPath(base, name string) string {
	if base == "" {
		return name
	}
	return base + "." + name
}

func displayField(f string) string {
	if f == "" {
		return "arguments"
	}
	return f
}

func typeWords(want []string) string {
	words := make([]string, len(want))
	for i, w := range want {
		switch w {
		case "integer":
			words[i] = "an integer"
		case "object", "array":
			words[i] = "an " + w
		case "null":
			words[i] = "null"
		default:
			words[i] = "a " + w
		}
	}
	return strings.Join(words, " or ")
}

func formatWords(format string) string {
	switch format {
	case "date":
		return "a date (YYYY-MM-DD)"
	case "date-time":
		return "a date-time (RFC 3339)"
	case "uri":
		return "a URI"
	}
	return "in the format " + format
}
