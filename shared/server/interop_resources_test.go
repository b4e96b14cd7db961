package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custodymcp/custody/shared/prompts"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/resources"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// TestInteropOfficialGoSDKClientPromptsResourcesAndCompletion drives the
// prompt, resource and completion methods with the official MCP Go SDK
// client (which nobody here wrote), pages of 2, revision 2025-11-25: every
// answer must decode into the SDK's own types.
func TestInteropOfficialGoSDKClientPromptsResourcesAndCompletion(t *testing.T) {
	env := servertest.New(t, servertest.Options{ToolPageSize: 2, GETStream: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "custody-interop", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   env.URL,
		HTTPClient: &http.Client{Transport: bearer{key: env.Keys[servertest.Attorney], next: http.DefaultTransport}},
		MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	caps := cs.InitializeResult().Capabilities
	if caps.Prompts == nil || caps.Resources == nil || !caps.Resources.Subscribe || caps.Completions == nil {
		t.Errorf("capabilities %+v: want prompts, resources with subscribe, completions", caps)
	}

	var promptNames []string
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatalf("Prompts: %v", err)
		}
		promptNames = append(promptNames, p.Name)
	}
	if !slices.Equal(promptNames, prompts.CustodyPromptNames()) {
		t.Errorf("prompts = %v, want %v", promptNames, prompts.CustodyPromptNames())
	}
	got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompts.CandorToTribunal, Arguments: map[string]string{"case_id": seed.Meridian}})
	if err != nil || len(got.Messages) == 0 || got.Meta["locked"] != true {
		t.Errorf("GetPrompt = %+v, %v; want messages and _meta.locked", got, err)
	}

	var uris []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatalf("Resources: %v", err)
		}
		uris = append(uris, r.URI)
	}
	if want := demoResourceURIs(seed.DemoMatters...); !slices.Equal(uris, want) {
		t.Errorf("resources = %v, want %v", uris, want)
	}
	var templates int
	for _, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatalf("ResourceTemplates: %v", err)
		}
		templates++
	}
	if templates != 4 {
		t.Errorf("%d templates, want 4", templates)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: resources.MatterURI(seed.Meridian)})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].MIMEType != "application/json" {
		t.Fatalf("ReadResource = %+v, %v", read, err)
	}
	var envelope struct {
		CaseID        string   `json:"case_id"`
		ProvenanceIDs []string `json:"provenance_ids"`
	}
	if err := json.Unmarshal([]byte(read.Contents[0].Text), &envelope); err != nil || envelope.CaseID != seed.Meridian || len(envelope.ProvenanceIDs) == 0 {
		t.Errorf("resource text %q is not the attested envelope", read.Contents[0].Text)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: resources.MatterURI(seed.Meridian)}); err != nil {
		t.Errorf("Subscribe: %v", err)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: resources.MatterURI(seed.Meridian)}); err != nil {
		t.Errorf("Unsubscribe: %v", err)
	}

	done, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: prompts.DraftingDiscipline},
		Argument: mcp.CompleteParamsArgument{Name: "case_id", Value: "mer"},
	})
	if err != nil || !slices.Equal(done.Completion.Values, []string{seed.Meridian}) || done.Completion.Total != 1 {
		t.Errorf("Complete = %+v, %v; want [%s] of 1", done, err, seed.Meridian)
	}
}
