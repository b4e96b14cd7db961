package server_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/completion"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/prompts"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/resources"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// completion/complete (package completion) through the real handler.

func complete(t *testing.T, s *servertest.Session, ref map[string]any, arg, value string) map[string]any {
	t.Helper()
	return s.Call(t, "completion/complete", map[string]any{"ref": ref, "argument": map[string]any{"name": arg, "value": value}})
}

func promptRef(name string) map[string]any { return map[string]any{"type": "ref/prompt", "name": name} }

func templateRef(uri string) map[string]any {
	return map[string]any{"type": "ref/resource", "uri": uri}
}

// completionOf returns the values of an answer, checking its shape: at
// most 100 values, total and hasMore always present and consistent.
func completionOf(t *testing.T, msg map[string]any) []string {
	t.Helper()
	c := resultOf(t, msg)["completion"].(map[string]any)
	raw, ok := c["values"].([]any)
	if !ok {
		t.Fatalf("completion %v has no values array", c)
	}
	total, hasTotal := c["total"].(float64)
	hasMore, hasFlag := c["hasMore"].(bool)
	if len(raw) > 100 || !hasTotal || !hasFlag || int(total) < len(raw) || hasMore != (int(total) > len(raw)) {
		t.Errorf("completion %v: want ≤100 values with a consistent total and hasMore", c)
	}
	values := make([]string, len(raw))
	for i, v := range raw {
		values[i] = v.(string)
	}
	return values
}

func TestFB22_CompletionIsDeclaredAndAnswersValuesAndUnknownReferencesAreMinus32602(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	r := env.Do(t, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`),
		"Authorization: Bearer "+env.Keys[servertest.Attorney])
	caps := r.JSON(t)["result"].(map[string]any)["capabilities"].(map[string]any)
	if _, ok := caps["completions"]; !ok {
		t.Fatalf("capabilities %v do not declare completions", caps)
	}
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	for _, tc := range []struct {
		name       string
		ref        map[string]any
		arg, value string
		want       []string
	}{
		{"every reachable matter for an empty value", promptRef(prompts.DraftingDiscipline), "case_id", "", seed.DemoMatters},
		{"a part of an id, any case", promptRef(prompts.CandorToTribunal), "case_id", "ALV", []string{seed.Alvarez}},
		{"a part of a name suggests the id", promptRef(prompts.CitationCheck), "case_id", "caldwell", []string{seed.Meridian}},
		{"nothing matches", promptRef(prompts.PrivilegeCaution), "case_id", "zzz", []string{}},
		{"an argument without a completer", promptRef(prompts.DraftingDiscipline), "document_type", "mo", []string{}},
		{"an argument the prompt does not have", promptRef(prompts.DraftingDiscipline), "nope", "", []string{}},
		{"a template's case_id", templateRef(resources.FactsTemplate), "case_id", "har", []string{seed.Harbor}},
		{"a document_id without a case_id in the context", templateRef(resources.DocumentTemplate), "document_id", "d_", []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := completionOf(t, complete(t, s, tc.ref, tc.arg, tc.value)); !slices.Equal(got, tc.want) {
				t.Errorf("values = %v, want %v", got, tc.want)
			}
		})
	}
	for name, params := range map[string]map[string]any{
		"unknown prompt":      {"ref": promptRef("no_such_prompt"), "argument": map[string]any{"name": "case_id", "value": ""}},
		"unknown template":    {"ref": templateRef("custody://nowhere/{x}"), "argument": map[string]any{"name": "x", "value": ""}},
		"unknown ref type":    {"ref": map[string]any{"type": "ref/tool", "name": "get_matter"}, "argument": map[string]any{"name": "case_id", "value": ""}},
		"no argument name":    {"ref": promptRef(prompts.DraftingDiscipline), "argument": map[string]any{"value": ""}},
		"a template as a URI": {"ref": templateRef(resources.MatterURI(seed.Alvarez)), "argument": map[string]any{"name": "case_id", "value": ""}},
	} {
		t.Run(name+" is -32602", func(t *testing.T) {
			msg := s.Call(t, "completion/complete", params)
			if e := rpcErrorOf(msg); e == nil || e["code"] != -32602.0 {
				t.Errorf("completion/complete = %v, want -32602", msg)
			}
		})
	}
}

func TestCompletionNeverNamesAScreenedOrAnotherTenantsMatter(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	for _, tc := range []struct {
		role  string
		value string
		want  []string
	}{
		{servertest.Paralegal, "", []string{seed.Alvarez, seed.Meridian}},
		{servertest.Paralegal, "harbor", []string{}},
		{servertest.Paralegal, "castellan", []string{}},
		{servertest.Attorney, "north", []string{}},
		{servertest.AllowListed, "", []string{env.AllowedMatter}},
		{servertest.OtherFirm, "", []string{seed.Northwind}},
		{servertest.OtherFirm, "alvarez", []string{}},
	} {
		t.Run(tc.role+" typing "+tc.value, func(t *testing.T) {
			s := env.Initialize(t, tc.role, "2025-11-25")
			for _, ref := range []map[string]any{promptRef(prompts.DraftingDiscipline), templateRef(resources.MatterTemplate)} {
				if got := completionOf(t, complete(t, s, ref, "case_id", tc.value)); !slices.Equal(got, tc.want) {
					t.Errorf("%v: values = %v, want %v", ref, got, tc.want)
				}
			}
		})
	}
}

func TestCompletionSendsAtMost100ValuesWithTheTotalAndHasMore(t *testing.T) {
	many := make([]string, 150)
	for i := range many {
		many[i] = fmt.Sprintf("v%03d", i)
	}
	env := servertest.New(t, servertest.Options{RegisterExtraPrompts: func(reg *prompts.Registry) error {
		return reg.Add(prompts.Prompt{
			Name: "many_values", Description: "A prompt whose argument has 150 suggestions.", Scope: auth.ScopeRead,
			Arguments: []prompts.Argument{{Name: "pick", Required: true,
				Complete: func(context.Context, *completion.Call, string) ([]string, error) { return many, nil }}},
			Render: func(_ context.Context, _ *prompts.Call, args map[string]string) ([]mcp.PromptMessage, error) {
				return []mcp.PromptMessage{prompts.User(mcp.TextContent(args["pick"]))}, nil
			},
		})
	}})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	msg := complete(t, s, promptRef("many_values"), "pick", "")
	values := completionOf(t, msg)
	c := resultOf(t, msg)["completion"].(map[string]any)
	if !slices.Equal(values, many[:100]) || c["total"] != 150.0 || c["hasMore"] != true {
		t.Errorf("completion = %d values, total %v, hasMore %v; want the first 100, 150, true", len(values), c["total"], c["hasMore"])
	}
}

// TestCompletionOfADocumentIDSuggestsTheDocumentsOfTheMatterInTheContext:
// document_id completes through the access funnel from the case_id of
// params.context.arguments — ids of the matter's documents the key may see,
// matched on id or title — and suggests nothing for a matter the key does
// not reach, and no withheld document to a client-safe key.
func TestCompletionOfADocumentIDSuggestsTheDocumentsOfTheMatterInTheContext(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	fx, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	var all, visible []string // of Alvarez, sorted by id as the fixture lists them
	for _, d := range fx.Documents {
		if d.Matter == seed.Alvarez {
			all = append(all, d.ID)
			if d.Privilege == "none" {
				visible = append(visible, d.ID)
			}
		}
	}
	slices.Sort(all)
	slices.Sort(visible)
	if len(visible) == len(all) {
		t.Fatal("the demo matter has no withheld document to test with")
	}
	for _, tc := range []struct {
		name   string
		role   string
		caseID string
		value  string
		want   []string
	}{
		{"every document of the matter for an empty value", servertest.Attorney, seed.Alvarez, "", all},
		{"a part of an id, any case", servertest.Attorney, seed.Alvarez, "INTAKE", []string{"d_alv_intake_memo"}},
		{"a part of a title suggests the id", servertest.Attorney, seed.Alvarez, "offer letter", []string{"d_alv_offer"}},
		{"a client-safe key is offered no withheld document", servertest.ClientSafe, seed.Alvarez, "", visible},
		{"a client-safe key typing a withheld id gets nothing", servertest.ClientSafe, seed.Alvarez, "intake", []string{}},
		{"a screened matter suggests nothing", servertest.Paralegal, seed.Harbor, "", []string{}},
		{"another tenant's matter suggests nothing", servertest.Attorney, seed.Northwind, "", []string{}},
		{"a matter that does not exist suggests nothing", servertest.Attorney, "m_does_not_exist", "", []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := env.Initialize(t, tc.role, "2025-11-25")
			msg := s.Call(t, "completion/complete", map[string]any{
				"ref":      templateRef(resources.DocumentTemplate),
				"argument": map[string]any{"name": "document_id", "value": tc.value},
				"context":  map[string]any{"arguments": map[string]any{"case_id": tc.caseID}},
			})
			if got := completionOf(t, msg); !slices.Equal(got, tc.want) {
				t.Errorf("values = %v, want %v", got, tc.want)
			}
		})
	}
}
