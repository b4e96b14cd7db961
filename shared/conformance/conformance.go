// Package conformance is the fixture profile the official MCP conformance
// suite (@modelcontextprotocol/conformance, docs/protocol.md "Conformance")
// expects of a server under test: the tools, prompts, resources and resource
// template its server scenarios call by name (test_simple_text,
// test_sampling, test://static-text, test_prompt_with_arguments, …), with the
// exact shapes its checks read.
//
// The fixtures are Custody's own registrations, not a side door: they go
// through the same registries and governed pipeline as the read tools
// (scope, argument validation, rate limit, one audit row per call), and
// server-to-client requests go through mcp.Peer (parked store rows, so the
// answer may reach any instance). Every fixture requires the scope
// auth.ScopeConformance, which only the fixture profile's own key carries:
// a Custody key never sees one, and the fixture key sees nothing else.
//
// Register adds the tools, RegisterPrompts the prompts (with a completer
// for completion/complete), RegisterResources the resources and the
// template; server.Config's RegisterExtra, RegisterExtraPrompts and
// RegisterExtraResources take them. Only the local dev server registers
// them, and only with -conformance on a loopback bind (scripts/dev); the
// Lambda (functions/mcp) does not link this package (a test there says so).
//
// The suite calls tools/list once without following nextCursor and expects
// test_simple_text as tools[0] only in one unscored 2026 scenario; the list
// stays sorted by name like every list, so json_schema_2020_12_tool comes
// first.
//
// The 2026-07-28 scenarios' fixtures (mrtr.go: test_missing_capability,
// test_streaming_elicitation, test_logging_tool, the eight
// test_input_required_result_* tools and the test_input_required_result_prompt
// prompt) are listed in both eras and ask through mcp.Peer like the 2025
// ones, so one implementation serves a 2025 session (questions on the call's
// stream, parked) and a 2026-07-28 request (multi-round-trip requests:
// input_required results and sealed request states).
package conformance

import (
	"context"
	"time"
)

// Options adjust the fixtures. The zero value is what the suite expects.
type Options struct {
	// Interval separates the notifications of the logging and progress
	// fixtures (the reference server's ~50 ms); 0 means 50 ms.
	Interval time.Duration
}

func (o Options) interval() time.Duration {
	if o.Interval <= 0 {
		return 50 * time.Millisecond
	}
	return o.Interval
}

// Fixture payloads, as the suite's reference server sends them
// (examples/servers/typescript/everything-server.ts): a 1×1 PNG and a
// minimal WAV, base64.
const (
	PNG1x1  = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	WAVMini = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
