package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/mcp"
)

func TestTaskSupportIsCheckedAtRegistration(t *testing.T) {
	type in struct{}
	for _, c := range []struct {
		name string
		spec Spec
		ok   bool
	}{
		{"an optional read tool registers", Spec{TaskSupport: TaskOptional}, true},
		{"a required read tool registers", Spec{TaskSupport: TaskRequired}, true},
		{"a write tool may be forbidden", Spec{Write: true, TaskSupport: TaskForbidden}, true},
		{"a write tool never runs as a task", Spec{Write: true, TaskSupport: TaskOptional}, false},
		{"an unknown taskSupport is refused", Spec{TaskSupport: "sometimes"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := c.spec
			s.Name, s.Title, s.Description, s.Scope = "t", "T", "A tool.", auth.ScopeRead
			reg := NewRegistry(Options{})
			var err error
			if s.Write {
				err = Register(reg, s, func(context.Context, *Call, in) (Decision, error) { return Decision{}, nil })
			} else {
				err = Register(reg, s, func(context.Context, *Call, in) (Raw, error) { return Raw{}, nil })
			}
			if (err == nil) != c.ok {
				t.Errorf("Register = %v, want ok %v", err, c.ok)
			}
		})
	}
}

func TestATaskToolAdvertisesItsTaskSupportOnlyIn20251125(t *testing.T) {
	type in struct{}
	reg := NewRegistry(Options{})
	MustRegister(reg, Spec{Name: "t", Title: "T", Description: "A tool.", Scope: auth.ScopeRead, TaskSupport: TaskRequired},
		func(context.Context, *Call, in) (Raw, error) { return Raw{}, nil })
	tl, _ := reg.Tool("t")
	for rev, want := range map[mcp.Revision]string{mcp.Rev20251125: `{"taskSupport":"required"}`, mcp.Rev20250618: `null`, mcp.Rev20260728: `null`} {
		got, _ := json.Marshal(tl.ForRevision(rev).Execution)
		if string(got) != want {
			t.Errorf("%s: execution = %s, want %s", rev, got, want)
		}
	}
}

// MCP's schema declares a tool's outputSchema properties objects (schema.ts
// Tool.outputSchema); the TypeScript SDK refuses a tools/list with a
// boolean schema among them. A decision's data, of any shape, is one.
func TestEveryPropertyOfADecisionsOutputSchemaIsAnObject(t *testing.T) {
	type in struct{}
	reg := NewRegistry(Options{})
	MustRegister(reg, Spec{Name: "w", Title: "W", Description: "A write.", Scope: auth.ScopeWrite, Write: true},
		func(context.Context, *Call, in) (Decision, error) { return Decision{}, nil })
	tl, ok := reg.Tool("w")
	if !ok {
		t.Fatal("not prepared")
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(tl.OutputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	for name, p := range schema.Properties {
		if len(p) == 0 || p[0] != '{' {
			t.Errorf("outputSchema.properties.%s = %s, want an object", name, p)
		}
	}
}
