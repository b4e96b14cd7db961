package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/custodymcp/custody/shared/mcp"
)

// ErrUnknownTool is Invoke's answer for a tool that does not exist or that
// the credential's scopes do not allow: the two are indistinguishable, as
// on tools/call (DECISIONS.md "Answers on the wire").
var ErrUnknownTool = errors.New("tools: unknown tool")

// Invoke runs one tool for a protocol method other than tools/call —
// resources/read, which serves Custody's read tools addressed by URI —
// through the same governed pipeline as tools/call: kill switch, scope,
// argument validation against the advertised input schema, the rate-limit
// verdict the gate decided, the access funnel for a case_id, the handler
// (credential-class floor, attestation), and the audit fields of req's row
// (Tool, Matter, the query digest, and Outcome "ok" or the refusal class).
//
// args is the tool's arguments object. On success it returns the tool's
// structured result as compact JSON: exactly the structuredContent tools/call
// would answer (for a read tool, the attested envelope of CONTRACTS.md §1).
// Errors: ErrUnknownTool; a *Refusal (use errors.As) when the pipeline or
// the tool refused; mcp.ErrAskCancelled when the client withdrew the
// request, mcp.ErrInputRequired when a 2026-era tool asked the client for
// input, or a *mcp.Error the pipeline answers as a protocol error — each for
// the method handler to return as is; any other error is a programming
// error (args that cannot be encoded, or a tool that answers with content
// blocks instead of JSON).
func (r *Registry) Invoke(ctx context.Context, req *mcp.Request, name string, args map[string]any) (json.RawMessage, error) {
	t, ok := r.tools[name]
	if !ok || !req.Credential.Has(t.spec.Scope) {
		return nil, ErrUnknownTool
	}
	if args == nil {
		args = map[string]any{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("invoke %s: encode arguments: %w", name, err)
	}
	// The validator reads the same generic form as on tools/call.
	doc, err := decodeDoc(raw)
	if err != nil {
		return nil, fmt.Errorf("invoke %s: %w", name, err)
	}
	req.Audit.Tool = name
	structured, refusal := r.govern(ctx, req, t, raw, doc)
	if err := refusal.passThrough(); err != nil {
		return nil, err // cancelled, input required (2026 era), or a protocol error
	}
	if refusal != nil {
		req.Audit.Outcome = refusal.Class
		return nil, refusal
	}
	if _, isRaw := structured.(Raw); isRaw {
		return nil, fmt.Errorf("invoke %s: the tool answers with content blocks, not a structured result", name)
	}
	out, err := mcp.Marshal(structured)
	if err != nil {
		return nil, fmt.Errorf("invoke %s: encode result: %w", name, err)
	}
	req.Audit.Outcome = "ok"
	return out, nil
}
