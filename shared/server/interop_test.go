package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// bearer adds an API key to every request of an http.Client.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// TestInteropOfficialGoSDKClient connects the official MCP Go SDK client
// (modelcontextprotocol/go-sdk, which nobody here wrote) over real HTTP with
// its revision pinned to 2025-11-25, pages through every tool with the page
// size forced to 3, and calls every read tool.
func TestInteropOfficialGoSDKClient(t *testing.T) {
	env := servertest.New(t, servertest.Options{ToolPageSize: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "custody-interop", Version: "1"}, nil)
	transport := &mcp.StreamableClientTransport{
		Endpoint:   env.URL,
		HTTPClient: &http.Client{Transport: bearer{key: env.Keys[servertest.Attorney], next: http.DefaultTransport}},
		MaxRetries: -1,
	}
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
		t.Fatalf("negotiated %q, want 2025-11-25", got)
	}

	// Page by hand to count pages, then with the SDK's own iterator.
	pages, listed := 0, map[string]*mcp.Tool{}
	params := &mcp.ListToolsParams{}
	for {
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			t.Fatalf("ListTools: %v", err)
		}
		pages++
		if len(res.Tools) > 3 {
			t.Errorf("page of %d tools, want at most 3", len(res.Tools))
		}
		for _, tool := range res.Tools {
			listed[tool.Name] = tool
		}
		if res.NextCursor == "" {
			break
		}
		params.Cursor = res.NextCursor
	}
	var iterated int
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("Tools iterator: %v", err)
		}
		if tool.OutputSchema == nil || tool.Title == "" {
			t.Errorf("tool %s lacks title or outputSchema in a 2025-11-25 session", tool.Name)
		}
		iterated++
	}
	names := env.Server.Registry.Names()
	if len(listed) != len(names) || iterated != len(names) || pages != (len(names)+2)/3 {
		t.Errorf("listed %d tools in %d pages (iterator %d), want %d tools in %d pages", len(listed), pages, iterated, len(names), (len(names)+2)/3)
	}

	for _, c := range validCalls(seed.Meridian) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Errorf("CallTool %s: %v", c.tool, err)
			continue
		}
		if res.IsError {
			t.Errorf("CallTool %s refused: %v", c.tool, res.Content)
			continue
		}
		var env struct {
			VerificationStatus string   `json:"verification_status"`
			ProvenanceIDs      []string `json:"provenance_ids"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &env); err != nil || env.VerificationStatus == "" || len(env.ProvenanceIDs) == 0 {
			t.Errorf("CallTool %s: structuredContent %s lacks the attestation", c.tool, b)
		}
	}
}
