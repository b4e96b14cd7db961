package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// TestInteropOfficialGoSDKClientAt20260728 connects the official MCP Go SDK
// client pinned to 2026-07-28: it discovers (no initialize, no session),
// pages every list, calls a read tool, and completes a multi-round-trip
// elicitation from its own handler.
func TestInteropOfficialGoSDKClientAt20260728(t *testing.T) {
	env := servertest.New(t, servertest.Options{RegisterExtra: register2026Fixtures, ToolPageSize: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	asked := 0
	client := mcp.NewClient(&mcp.Implementation{Name: "custody-interop-2026", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			field := "name"
			if strings.Contains(req.Params.Message, "colour") {
				field = "colour"
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{field: fmt.Sprint("answer-", field)}}, nil
		},
	})
	transport := &mcp.StreamableClientTransport{
		Endpoint:   env.URL,
		HTTPClient: &http.Client{Transport: bearer{key: env.Keys[servertest.Attorney], next: http.DefaultTransport}},
		MaxRetries: -1,
	}
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	if cs.ID() != "" {
		t.Errorf("the client holds session %q: it fell back to the 2025 handshake", cs.ID())
	}

	tools := 0
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("Tools: %v", err)
		}
		_ = tool
		tools++
	}
	if tools != len(env.Server.Registry.Names()) {
		t.Errorf("paged %d tools, want %d", tools, len(env.Server.Registry.Names()))
	}
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatalf("Prompts: %v", err)
		}
		_ = p
	}
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatalf("Resources: %v", err)
		}
		_ = r
	}
	for r, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatalf("ResourceTemplates: %v", err)
		}
		_ = r
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_matter", Arguments: map[string]any{"case_id": seed.Meridian}})
	if err != nil || res.IsError {
		t.Fatalf("get_matter: %v %v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fixture_greet_once", Arguments: map[string]any{"salutation": "Dear"}})
	if err != nil || res.IsError {
		t.Fatalf("fixture_greet_once: %v %+v", err, res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if asked != 2 || !strings.Contains(text, "answer-name") || !strings.Contains(text, "answer-colour") {
		t.Errorf("after %d elicitations the result is %q, want both answers", asked, text)
	}

	rows, err := audit.Day(ctx, env.Store, seed.DemoTenant, servertest.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, r := range rows {
		if r.Method == "initialize" || r.Revision != "2026-07-28" {
			t.Errorf("audit row %s at revision %q: the client did not stay in the 2026 era", r.Method, r.Revision)
		}
		methods = append(methods, r.Method)
	}
	if !strings.Contains(strings.Join(methods, " "), "server/discover") {
		t.Errorf("no server/discover among %v", methods)
	}
}
