// Package cfntemplate reads a CloudFormation template (template.yaml,
// infra/operations.yaml) for the tests that hold the templates to the
// code: YAML through gopkg.in/yaml.v3, with CloudFormation's short-form
// intrinsic tags (!Ref, !GetAtt, !Sub, !If, !ImportValue, …) rewritten
// into their long form ({"Ref": …}, {"Fn::GetAtt": [resource, attribute]},
// {"Fn::Sub": …}, …), so a test reads one generic tree in which every key
// the template writes is kept (typed CloudFormation libraries lag new
// properties and drop what they do not know).
package cfntemplate

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Template is a template in long form.
type Template struct {
	Parameters map[string]any
	Conditions map[string]any
	Resources  map[string]map[string]any
	Outputs    map[string]map[string]any
}

// Load reads and decodes the template at path.
func Load(path string) (*Template, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(raw)
}

// Parse decodes a template.
func Parse(raw []byte) (*Template, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parse the template: %w", err)
	}
	v, err := Decode(&doc)
	if err != nil {
		return nil, fmt.Errorf("decode the template: %w", err)
	}
	top := Map(v)
	tpl := &Template{Parameters: Map(top["Parameters"]), Conditions: Map(top["Conditions"]),
		Resources: map[string]map[string]any{}, Outputs: map[string]map[string]any{}}
	for id, r := range Map(top["Resources"]) {
		tpl.Resources[id] = Map(r)
	}
	for id, o := range Map(top["Outputs"]) {
		tpl.Outputs[id] = Map(o)
	}
	if len(tpl.Resources) == 0 {
		return nil, fmt.Errorf("the template has no Resources")
	}
	return tpl, nil
}

// Decode turns a YAML node into maps, slices and scalars, rewriting
// short-form intrinsic tags into their long form.
func Decode(n *yaml.Node) (any, error) {
	tag := ""
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		tag = strings.TrimPrefix(n.Tag, "!")
		plain := *n
		plain.Tag = ""
		n = &plain
	}
	var v any
	switch n.Kind {
	case yaml.DocumentNode:
		return Decode(n.Content[0])
	case yaml.AliasNode:
		return Decode(n.Alias)
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			val, err := Decode(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[n.Content[i].Value] = val
		}
		v = m
	case yaml.SequenceNode:
		s := []any{}
		for _, c := range n.Content {
			val, err := Decode(c)
			if err != nil {
				return nil, err
			}
			s = append(s, val)
		}
		v = s
	case yaml.ScalarNode:
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
	}
	switch tag {
	case "":
		return v, nil
	case "Ref", "Condition":
		return map[string]any{tag: v}, nil
	case "GetAtt":
		if s, ok := v.(string); ok {
			res, attr, _ := strings.Cut(s, ".")
			v = []any{res, attr}
		}
		return map[string]any{"Fn::GetAtt": v}, nil
	case "Sub", "If", "Join", "Select", "Split", "Equals", "Not", "And", "Or", "FindInMap",
		"Base64", "Cidr", "GetAZs", "ImportValue", "Length", "ToJsonString":
		return map[string]any{"Fn::" + tag: v}, nil
	}
	return nil, fmt.Errorf("line %d: unknown tag !%s", n.Line, tag)
}

// Map is v as a map (nil when it is not one).
func Map(v any) map[string]any { m, _ := v.(map[string]any); return m }

// Slice is v as a slice (nil when it is not one).
func Slice(v any) []any { s, _ := v.([]any); return s }

// Path walks nested maps by key.
func Path(v any, keys ...string) any {
	for _, k := range keys {
		v = Map(v)[k]
	}
	return v
}

// OneOrMany is a value CloudFormation takes as one or a list, as a list.
func OneOrMany(v any) []any {
	if s, ok := v.([]any); ok {
		return s
	}
	if v == nil {
		return nil
	}
	return []any{v}
}

// Ref is {"Ref": name}.
func Ref(name string) map[string]any { return map[string]any{"Ref": name} }

// GetAtt is {"Fn::GetAtt": [resource, attribute]}.
func GetAtt(resource, attribute string) map[string]any {
	return map[string]any{"Fn::GetAtt": []any{resource, attribute}}
}

// Sub is {"Fn::Sub": s}.
func Sub(s string) map[string]any { return map[string]any{"Fn::Sub": s} }

// OfType lists the ids of the resources of a type, sorted.
func (t *Template) OfType(typ string) []string {
	var ids []string
	for id, r := range t.Resources {
		if r["Type"] == typ {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// Props is a resource's Properties.
func (t *Template) Props(id string) map[string]any { return Map(t.Resources[id]["Properties"]) }

// GetenvLiterals returns the variables a function's configuration reads:
// the string literal of every call of a function named getenv in the Go
// files given, sorted. A getenv of anything but one string literal is an
// error, so the list cannot silently miss a variable. The template tests
// hold each function's Environment.Variables to it.
func GetenvLiterals(files ...string) ([]string, error) {
	var names []string
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			return nil, err
		}
		var bad error
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "getenv" {
				return true
			}
			var lit *ast.BasicLit
			if len(call.Args) == 1 {
				lit, _ = call.Args[0].(*ast.BasicLit)
			}
			if lit == nil || lit.Kind != token.STRING {
				bad = fmt.Errorf("%s: getenv must be called with one string literal", fset.Position(call.Pos()))
				return false
			}
			name, _ := strconv.Unquote(lit.Value)
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
			return true
		})
		if bad != nil {
			return nil, bad
		}
	}
	sort.Strings(names)
	return names, nil
}
