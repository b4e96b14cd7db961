// Command mcpgo is a bench peer on github.com/mark3labs/mcp-go v1.2.1: one
// tool, get_matter, answering from an in-memory map of three matters, served
// over streamable HTTP at /mcp. No authentication, rate limiting or audit.
//
// Sessions are stateful (server.WithStateful: the session id minted at
// initialize is tracked and checked on every request, as the Go SDK and
// Custody do; the library's default only checks the id's format). The
// result is structured (NewStructuredToolHandler: structuredContent plus its
// JSON as text, the Go SDK's shape). Schema validation is left at the
// library's default (off); mcp-go answers POSTs with application/json unless
// the handler sends notifications, which get_matter does not.
//
//	mcpgo -addr 127.0.0.1:9002 [-stateful=false]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/custodymcp/custody/scripts/bench/internal/matters"
	"github.com/custodymcp/custody/scripts/bench/internal/peerhttp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9002", "listen address (loopback)")
	stateful := flag.Bool("stateful", true, "track session ids (false: the library default, format check only)")
	flag.Parse()

	srv := server.NewMCPServer("bench-mcpgo", "v1.2.1", server.WithToolCapabilities(false))
	srv.AddTool(mcp.NewTool("get_matter",
		mcp.WithDescription("Returns one matter by case_id."),
		mcp.WithString("case_id", mcp.Required(), mcp.Description("the matter's case_id")),
		mcp.WithOutputSchema[matters.Matter](),
	), mcp.NewStructuredToolHandler(func(_ context.Context, _ mcp.CallToolRequest, in matters.Input) (matters.Matter, error) {
		return matters.Get(in.CaseID) // an error becomes an isError result
	}))
	opts := []server.StreamableHTTPOption{
		// The same level Custody's dev server logs at: warnings only.
		server.WithStreamableHTTPLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
		server.WithStateful(*stateful),
	}
	h := server.NewStreamableHTTPServer(srv, opts...)

	if err := peerhttp.Serve(*addr, h); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgo peer:", err)
		os.Exit(1)
	}
}
