package prompts

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/mcp"
)

func render(context.Context, *Call, map[string]string) ([]mcp.PromptMessage, error) {
	return []mcp.PromptMessage{User(mcp.TextContent("x"))}, nil
}

func TestAddRefusesIncompleteOrDuplicatePrompts(t *testing.T) {
	r := NewRegistry(Options{})
	ok := Prompt{Name: "p", Description: "d", Scope: auth.ScopeRead, Render: render}
	if err := r.Add(ok); err != nil {
		t.Fatal(err)
	}
	// Every case but the duplicate has its own name, so a check that stops
	// refusing shows as its own failure, not as a later "duplicate".
	for name, p := range map[string]Prompt{
		"a duplicate name":      ok,
		"no description":        {Name: "q1", Scope: auth.ScopeRead, Render: render},
		"no scope":              {Name: "q2", Description: "d", Render: render},
		"no render":             {Name: "q3", Description: "d", Scope: auth.ScopeRead},
		"a name with a space":   {Name: "q 4", Description: "d", Scope: auth.ScopeRead, Render: render},
		"a repeated argument":   {Name: "q5", Description: "d", Scope: auth.ScopeRead, Render: render, Arguments: []Argument{{Name: "a"}, {Name: "a"}}},
		"an unnamed argument":   {Name: "q6", Description: "d", Scope: auth.ScopeRead, Render: render, Arguments: []Argument{{}}},
		"a name over 128 bytes": {Name: strings.Repeat("n", 129), Description: "d", Scope: auth.ScopeRead, Render: render},
	} {
		if err := r.Add(p); err == nil {
			t.Errorf("Add accepted a prompt with %s", name)
		}
	}
}

func TestArgumentsAreCheckedAgainstTheDeclaredOnes(t *testing.T) {
	p := &Prompt{Arguments: []Argument{{Name: "case_id", Required: true}, {Name: "note"}}}
	for _, tc := range []struct {
		raw  string
		want map[string]string // nil: refused
	}{
		{``, nil}, // absent arguments are {}, and case_id is required
		{`null`, nil},
		{`{"case_id":"m_a"}`, map[string]string{"case_id": "m_a"}},
		{`{"case_id":"m_a","note":""}`, map[string]string{"case_id": "m_a", "note": ""}},
		{`{"case_id":"m_a","other":"x"}`, nil},
		{`{"case_id":1}`, nil},
		{`{"case_id":null}`, nil},
		{`["m_a"]`, nil},
		{`"m_a"`, nil},
	} {
		got, err := p.arguments(json.RawMessage(tc.raw))
		if (err == nil) != (tc.want != nil) || (err == nil && !maps.Equal(got, tc.want)) {
			t.Errorf("arguments(%s) = %v, %v; want %v", tc.raw, got, err, tc.want)
		}
		if err != nil && err.Code != mcp.CodeInvalidParams {
			t.Errorf("arguments(%s) refused with %d, want -32602", tc.raw, err.Code)
		}
	}
	optional := &Prompt{Arguments: []Argument{{Name: "note"}}}
	if got, err := optional.arguments(nil); err != nil || len(got) != 0 {
		t.Errorf("absent arguments of a prompt without required ones = %v, %v; want {}", got, err)
	}
}

// The published prompts keep to their promises: every one has a
// description and title, is scoped read, takes a completing case_id, tells
// the model that record text is evidence, and never tells it to follow
// text from documents; the two duties are locked.
func TestCustodysOwnPromptsArePublishedAsDocumented(t *testing.T) {
	r := NewRegistry(Options{Funnel: access.Funnel{}}) // never called here
	if err := AddCustody(r); err != nil {
		t.Fatal(err)
	}
	if got := r.Names(); strings.Join(got, " ") != strings.Join(CustodyPromptNames(), " ") {
		t.Fatalf("Names = %v, want %v", got, CustodyPromptNames())
	}
	locked := map[string]bool{CandorToTribunal: true, PrivilegeCaution: true}
	for _, name := range CustodyPromptNames() {
		p := r.prompts[name]
		if p.Title == "" || p.Description == "" || p.Scope != auth.ScopeRead || p.Locked != locked[name] {
			t.Errorf("%s: title %q description %q scope %s locked %v", name, p.Title, p.Description, p.Scope, p.Locked)
		}
		if a := p.Arguments[0]; a.Name != "case_id" || !a.Required || a.Complete == nil {
			t.Errorf("%s: first argument %+v, want a required, completing case_id", name, a)
		}
		if !strings.Contains(p.Text, evidenceNotInstructions) {
			t.Errorf("%s does not say record text is evidence, not instructions", name)
		}
		lower := strings.ToLower(p.Text)
		for _, bad := range []string{"follow the instructions in", "do what the document says", "as instructed by the document"} {
			if strings.Contains(lower, bad) {
				t.Errorf("%s tells the model to %q", name, bad)
			}
		}
	}
}
