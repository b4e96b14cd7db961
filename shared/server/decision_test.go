package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/tools"
)

// NoteInput is the write fixture's input.
type NoteInput struct {
	CaseID string `json:"case_id"`
	Body   string `json:"body" jsonschema:"The text."`
}

// MatterID implements tools.MatterScoped.
func (in NoteInput) MatterID() string { return in.CaseID }

func writeFixtureEnv(t *testing.T) *servertest.Env {
	return servertest.New(t, servertest.Options{RegisterExtra: func(reg *tools.Registry) error {
		return tools.Register(reg, tools.Spec{Name: "fixture_write", Title: "Write (test fixture)", Scope: auth.ScopeRead,
			Write: true, Description: "Answers the decision shape."},
			func(_ context.Context, c *tools.Call, in NoteInput) (tools.Decision, error) {
				if in.Body == "refuse" {
					return tools.Denied(tools.Refuse(tools.ClassBackpressure, "Too many pending.")), nil
				}
				return tools.Executed(map[string]any{"matter": c.Matter.ID}), nil
			})
	}})
}

// A write tool answers one decision shape (docs/contracts.md §4): executed
// with its receipt; and every refusal — its own, the pipeline's validation,
// the funnel's NOT_FOUND — is the denied decision with isError, its class
// in error.class. It is absent from a client-safe credential's tools/list
// and refused CLIENT_SAFE_REFUSED there, and refused inside a batch.
func TestAWriteToolAnswersTheDecisionShapeForEveryRefusal(t *testing.T) {
	env := writeFixtureEnv(t)
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	decision := func(res map[string]any) (status, class string) {
		sc, ok := res["structuredContent"].(map[string]any)
		if !ok { // 2025-03-26 has no structured output: the second text block
			blocks := res["content"].([]any)
			_ = json.Unmarshal([]byte(blocks[len(blocks)-1].(map[string]any)["text"].(string)), &sc)
		}
		status, _ = sc["status"].(string)
		if e, ok := sc["error"].(map[string]any); ok {
			class, _ = e["class"].(string)
		}
		if (status == tools.StatusDenied) != (res["isError"] == true) || sc["executed"] != (status == tools.StatusExecuted) {
			t.Errorf("decision %v: isError must equal status == denied and executed status == executed", res)
		}
		return status, class
	}
	for _, c := range []struct {
		name        string
		args        map[string]any
		status, cls string
	}{
		{"executed", map[string]any{"case_id": seed.Alvarez, "body": "x"}, tools.StatusExecuted, ""},
		{"the tool's own refusal", map[string]any{"case_id": seed.Alvarez, "body": "refuse"}, tools.StatusDenied, tools.ClassBackpressure},
		{"the pipeline's validation", map[string]any{"case_id": seed.Alvarez, "body": "x", "extra": 1}, tools.StatusDenied, tools.ClassValidation},
		{"the funnel's not found", map[string]any{"case_id": "m_nowhere", "body": "x"}, tools.StatusDenied, tools.ClassNotFound},
	} {
		if st, cls := decision(s.Tool(t, "fixture_write", c.args)); st != c.status || cls != c.cls {
			t.Errorf("%s: %s %s, want %s %s", c.name, st, cls, c.status, c.cls)
		}
	}
	safe := env.Initialize(t, servertest.ClientSafe, "2025-11-25")
	for _, tl := range listAllTools(t, safe) {
		if tl.(map[string]any)["name"] == "fixture_write" {
			t.Errorf("a client-safe key lists the write tool")
		}
	}
	if st, cls := decision(safe.Tool(t, "fixture_write", map[string]any{"case_id": seed.Alvarez, "body": "x"})); st != tools.StatusDenied || cls != tools.ClassClientSafeRefused {
		t.Errorf("client-safe call = %s %s, want denied CLIENT_SAFE_REFUSED", st, cls)
	}
	b := env.Initialize(t, servertest.Attorney, "2025-03-26")
	args, _ := json.Marshal(map[string]any{"name": "fixture_write", "arguments": map[string]any{"case_id": seed.Alvarez, "body": "x"}})
	r := b.Post(t, []byte(`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+string(args)+`}]`))
	var out []map[string]any
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &out) != nil || len(out) != 1 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	if st, cls := decision(out[0]["result"].(map[string]any)); st != tools.StatusDenied || cls != tools.ClassValidation {
		t.Errorf("a write tool in a batch = %s %s, want denied VALIDATION", st, cls)
	}
}

// The composition hands every front door that sweeps the recovery duties
// of what it composed: proposal expiry always (issue 13).
func TestTheCompositionsSweeperDutiesIncludeProposalExpiry(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	var names []string
	for _, d := range env.Server.Duties {
		names = append(names, d.Name())
	}
	if !slices.Contains(names, "proposal expiry") {
		t.Errorf("Server.Duties = %v, want proposal expiry among them", names)
	}
}
