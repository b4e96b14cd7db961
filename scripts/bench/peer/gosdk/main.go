// Command gosdk is a bench peer on the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk v1.8.0): one tool, get_matter,
// answering from an in-memory map of three matters, served over streamable
// HTTP at /mcp with the SDK's default stateful sessions. No authentication,
// rate limiting or audit.
//
// The SDK's own defaults are kept (typed AddTool, so input and output are
// validated against the inferred schemas, as Custody does), except
// JSONResponse: with -json (the default) a tools/call is answered with one
// application/json body instead of a one-event text/event-stream; that is
// the faster of the two on this SDK (see scripts/bench/doc.go for the
// numbers) and the same framing Custody and mcp-go use.
//
// With -stateless the handler keeps no sessions: the SDK serves the
// 2026-07-28 revision only in that mode (a stateful handler answers -32022).
//
//	gosdk -addr 127.0.0.1:9001 [-json=false] [-stateless]
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custodymcp/custody/scripts/bench/internal/matters"
	"github.com/custodymcp/custody/scripts/bench/internal/peerhttp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9001", "listen address (loopback)")
	jsonResponse := flag.Bool("json", true, "answer POSTs with application/json rather than text/event-stream")
	stateless := flag.Bool("stateless", false, "keep no sessions (needed for the 2026-07-28 revision)")
	flag.Parse()

	srv := mcp.NewServer(&mcp.Implementation{Name: "bench-gosdk", Version: "v1.8.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "get_matter",
		Description: "Returns one matter by case_id.",
	}, func(_ context.Context, _ *mcp.CallToolRequest, in matters.Input) (*mcp.CallToolResult, matters.Matter, error) {
		m, err := matters.Get(in.CaseID)
		return nil, m, err // an error becomes an isError result
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{JSONResponse: *jsonResponse, Stateless: *stateless})

	if err := peerhttp.Serve(*addr, h); err != nil {
		fmt.Fprintln(os.Stderr, "gosdk peer:", err)
		os.Exit(1)
	}
}
