// Package prompts is Custody's prompt registry: prompts/list and prompts/get
// (MCP server/prompts), Custody's own legal-practice prompts, and the
// tenant overrides that may replace an ordinary prompt's wording.
//
// A Prompt has a name, a title, a non-empty description, the scope a
// credential needs to see and get it, its arguments (each optionally with a
// completer for completion/complete), a Locked flag, a default message text
// and a render function that builds the messages from the arguments.
//
// Rules, decided here:
//
//   - prompts/list shows the prompts the credential's scopes allow, sorted
//     by name, paged with the same sealed cursors as tools/list (bound to
//     the method, the credential id and the exact list; docs/contracts.md §2).
//   - prompts/get answers -32602 for an unknown prompt and for one the
//     scopes hide (the same sentence), for an argument the prompt does not
//     declare, a value that is not a string and a missing required argument
//     — naming the argument, never quoting a value. Absent arguments are {}.
//   - A case_id resolves through the access funnel (Call.Matter); a matter
//     the credential cannot reach, for whatever reason, is -32602 "no such
//     matter". Prompts render only facts of a matter the funnel returned.
//   - Tenant overrides (OverrideKey: `T#<tenant>` / `PROMPT#<name>`) replace
//     an ordinary prompt's description and message text (Call.Text); reading
//     one is the prompt's own store read. A Locked prompt never reads one: it
//     always renders the code's default and says so with _meta.locked true,
//     so a stored row cannot weaken it.
//   - The audit row names the prompt (and the matter when a case_id is
//     given); its outcome is "ok" or "rpc:<code>".
//
// A prompt from another package (the conformance fixtures) is added with
// Registry.Add:
//
//	err := reg.Add(prompts.Prompt{
//		Name:        "test_prompt_with_arguments",
//		Description: "A prompt with two required arguments.",
//		Scope:       auth.ScopeConformance,
//		Arguments: []prompts.Argument{
//			{Name: "arg1", Description: "First test argument", Required: true},
//			{Name: "arg2", Description: "Second test argument", Required: true},
//		},
//		Render: func(_ context.Context, _ *prompts.Call, args map[string]string) ([]mcp.PromptMessage, error) {
//			text := fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"])
//			return []mcp.PromptMessage{prompts.User(mcp.TextContent(text))}, nil
//		},
//	})
//
// Messages carry any content block: mcp.TextContent, an image
// (mcp.Content{Type: "image", Data: base64, MimeType: "image/png"}) or an
// embedded resource (mcp.Content{Type: "resource", Resource:
// &mcp.ResourceContents{URI: …, MimeType: …, Text: …}}).
package prompts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/completion"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
)

// Argument is one argument a prompt accepts.
type Argument struct {
	Name        string
	Title       string
	Description string
	Required    bool
	// Complete suggests values for completion/complete; nil suggests none.
	Complete completion.Completer
}

// RenderFunc builds a prompt's messages from its arguments: every declared
// argument the client gave, as a string (required ones are always present).
// An error is answered by Registry as described in its package doc.
type RenderFunc func(ctx context.Context, c *Call, args map[string]string) ([]mcp.PromptMessage, error)

// Prompt describes a prompt.
type Prompt struct {
	// Name is the prompt's identifier: 1–128 characters of [A-Za-z0-9_.-].
	Name  string
	Title string
	// Description says what the prompt is for; required (clients and the
	// conformance suite expect one on every prompt).
	Description string
	// Scope is the scope a credential needs to see and get the prompt.
	Scope     auth.Scope
	Arguments []Argument
	// Locked prompts ignore tenant overrides and answer _meta.locked true.
	Locked bool
	// Text is the default message text the render function receives as
	// Call.Text (a tenant's override of an ordinary prompt replaces it).
	Text   string
	Render RenderFunc
}

// Call is what a render function knows about the request it serves.
type Call struct {
	Credential *auth.Credential
	// Who is the caller as the access funnel sees it.
	Who access.Who
	// Peer is the client end of the request (log, progress, ask).
	Peer     mcp.Peer
	Now      time.Time
	Revision mcp.Revision
	// Text is the message text in effect: the tenant's override of an
	// ordinary prompt when one is stored, else Prompt.Text.
	Text   string
	funnel MatterResolver
}

// Matter resolves a caller-supplied case id through the access funnel. It
// returns access.ErrNoMatter for a matter the caller cannot reach (answered
// -32602 "no such matter") or a wrapped store error.
func (c *Call) Matter(ctx context.Context, caseID string) (records.Matter, error) {
	if c.funnel == nil {
		return records.Matter{}, access.ErrNoMatter
	}
	return c.funnel.Matter(ctx, c.Who, caseID)
}

// MatterResolver resolves and lists the matters a caller reaches: the
// access funnel (access.Funnel satisfies it).
type MatterResolver interface {
	Matter(ctx context.Context, who access.Who, caseID string) (records.Matter, error)
	Matters(ctx context.Context, who access.Who) ([]records.Matter, error)
}

// User returns a message of role "user" carrying content.
func User(content mcp.Content) mcp.PromptMessage {
	return mcp.PromptMessage{Role: "user", Content: content}
}

// Assistant returns a message of role "assistant" carrying content.
func Assistant(content mcp.Content) mcp.PromptMessage {
	return mcp.PromptMessage{Role: "assistant", Content: content}
}

// Options configure a Registry.
type Options struct {
	// Store holds tenant overrides; nil reads none.
	Store store.Store
	// Funnel resolves case ids (Call.Matter) and completes them; nil
	// reaches no matter.
	Funnel  MatterResolver
	Cursors *mcp.CursorSealer
	// PageSize is the prompts/list page size; 0 means 50.
	PageSize int
	// Logger receives render failures; nil discards.
	Logger *slog.Logger
}

// Registry holds the prompts and serves prompts/list and prompts/get.
type Registry struct {
	opts    Options
	prompts map[string]*Prompt
}

// NewRegistry returns an empty registry.
func NewRegistry(opts Options) *Registry {
	if opts.PageSize <= 0 {
		opts.PageSize = 50
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Registry{opts: opts, prompts: map[string]*Prompt{}}
}

// Add registers a prompt. It fails when the name is malformed or taken, the
// description, scope or render function is missing, or an argument is
// unnamed or named twice: programming errors, found at start.
func (r *Registry) Add(p Prompt) error {
	if !identifier(p.Name, 128) {
		return fmt.Errorf("add prompt %q: the name must be 1-128 characters of [A-Za-z0-9_.-]", p.Name)
	}
	if p.Description == "" || p.Scope == "" || p.Render == nil {
		return fmt.Errorf("add prompt %q: description, scope and render are required", p.Name)
	}
	if _, dup := r.prompts[p.Name]; dup {
		return fmt.Errorf("add prompt %q: already added", p.Name)
	}
	seen := map[string]bool{}
	for _, a := range p.Arguments {
		if !identifier(a.Name, 64) || seen[a.Name] {
			return fmt.Errorf("add prompt %q: argument %q is unnamed, malformed or repeated", p.Name, a.Name)
		}
		seen[a.Name] = true
	}
	p.Arguments = slices.Clone(p.Arguments)
	r.prompts[p.Name] = &p
	return nil
}

// identifier reports whether s is 1–max characters of [A-Za-z0-9_.-].
func identifier(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// Install registers prompts/list and prompts/get on s. The composition
// declares the prompts capability beside it.
func (r *Registry) Install(s *mcp.Server) {
	s.Register("prompts/list", mcp.Method{Handler: r.list, Cacheable: true})
	s.Register("prompts/get", mcp.Method{Handler: r.get, NameParam: "name", MayAsk: true})
}

// Names returns every registered prompt name, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.prompts))
	for n := range r.prompts {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// lookup returns the prompt named name when the credential may see it.
func (r *Registry) lookup(cred *auth.Credential, name string) (*Prompt, bool) {
	p, ok := r.prompts[name]
	if !ok || !cred.Has(p.Scope) {
		return nil, false
	}
	return p, true
}

// ArgumentCompleter implements completion.PromptLookup.
func (r *Registry) ArgumentCompleter(cred *auth.Credential, prompt, argument string) (completion.Completer, bool) {
	p, ok := r.lookup(cred, prompt)
	if !ok {
		return nil, false
	}
	for _, a := range p.Arguments {
		if a.Name == argument {
			return a.Complete, true
		}
	}
	return nil, true
}

// visible returns the names of the prompts the credential's scopes allow, sorted.
func (r *Registry) visible(cred *auth.Credential) []string {
	var names []string
	for n, p := range r.prompts {
		if cred.Has(p.Scope) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// wire is the prompt as prompts/list shows it, with description in effect.
func (p *Prompt) wire(description string) mcp.Prompt {
	w := mcp.Prompt{Name: p.Name, Title: p.Title, Description: description}
	for _, a := range p.Arguments {
		w.Arguments = append(w.Arguments, mcp.PromptArgument{
			Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required,
		})
	}
	if p.Locked {
		w.Meta = lockedMeta()
	}
	return w
}

func lockedMeta() map[string]any { return map[string]any{"locked": true} }

// msgUnavailable answers a request whose store read failed.
const msgUnavailable = "The prompt could not be read just now; retry shortly."

func unavailable() *mcp.Error {
	return &mcp.Error{Code: mcp.CodeInternalError, Message: msgUnavailable}
}

// list serves prompts/list: the prompts the credential's scopes allow,
// sorted by name, paged with sealed cursors; descriptions as the tenant's
// overrides of ordinary prompts say (one batch read per page).
func (r *Registry) list(ctx context.Context, req *mcp.Request) (any, error) {
	names := r.visible(req.Credential)
	start, end, next, err := r.opts.Cursors.PageRequest(req, names, r.opts.PageSize)
	if err != nil {
		return nil, err
	}
	page := names[start:end]
	overrides, err := r.overrides(ctx, req.Credential.Tenant, page)
	if err != nil {
		r.opts.Logger.WarnContext(ctx, "prompt overrides unreadable", "err", err)
		return nil, unavailable()
	}
	res := mcp.ListPromptsResult{Prompts: make([]mcp.Prompt, 0, len(page)), NextCursor: next}
	for _, n := range page {
		p := r.prompts[n]
		desc := p.Description
		if o, ok := overrides[n]; ok && o.Description != "" {
			desc = o.Description
		}
		res.Prompts = append(res.Prompts, p.wire(desc).ForRevision(req.Revision))
	}
	return res, nil
}

// get serves prompts/get.
func (r *Registry) get(ctx context.Context, req *mcp.Request) (any, error) {
	var params mcp.GetPromptParams
	if err := req.Params.Decode(&params); err != nil {
		return nil, err
	}
	if params.Name == "" {
		return nil, mcp.InvalidParams("Invalid params: the prompt name is required.")
	}
	p, ok := r.lookup(req.Credential, params.Name)
	if !ok {
		// A prompt the scopes hide is indistinguishable from none.
		return nil, mcp.InvalidParams("Unknown prompt.")
	}
	req.Audit.Prompt = p.Name
	args, perr := p.arguments(params.Arguments)
	if perr != nil {
		return nil, perr
	}
	if id, ok := args["case_id"]; ok && records.ValidID(id) {
		req.Audit.Matter = id
	}
	cred := req.Credential
	c := &Call{
		Credential: cred,
		Who:        access.WhoOf(cred),
		Peer:       req, Now: req.Started, Revision: req.Revision, Text: p.Text, funnel: r.opts.Funnel,
	}
	res := mcp.GetPromptResult{Description: p.Description}
	if p.Locked {
		res.Meta = lockedMeta()
	} else {
		o, found, err := r.override(ctx, cred.Tenant, p.Name)
		if err != nil {
			r.opts.Logger.WarnContext(ctx, "prompt override unreadable", "prompt", p.Name, "err", err)
			return nil, unavailable()
		}
		if found && o.Description != "" {
			res.Description = o.Description
		}
		if found && o.Text != "" {
			c.Text = o.Text
		}
	}
	msgs, err := p.Render(ctx, c, args)
	if err != nil {
		return nil, r.renderError(ctx, p.Name, err)
	}
	if len(msgs) == 0 {
		r.opts.Logger.ErrorContext(ctx, "prompt rendered no messages", "prompt", p.Name)
		return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: "Internal error."}
	}
	res.Messages = msgs
	return res, nil
}

// arguments checks the client's arguments against the declared ones:
// absent or null is {}; otherwise an object whose members are declared
// arguments with string values, every required one present.
func (p *Prompt) arguments(raw json.RawMessage) (map[string]string, *mcp.Error) {
	var given map[string]json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &given); err != nil || given == nil {
			return nil, mcp.InvalidParams("Invalid params: arguments must be an object of strings.")
		}
	}
	names := make([]string, 0, len(given))
	for n := range given {
		names = append(names, n)
	}
	slices.Sort(names)
	args := make(map[string]string, len(given))
	for _, n := range names {
		if !slices.ContainsFunc(p.Arguments, func(a Argument) bool { return a.Name == n }) {
			return nil, mcp.InvalidParams("Invalid params: this prompt has no argument " + argName(n) + ".")
		}
		var v string
		raw := bytes.TrimSpace(given[n])
		if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &v) != nil {
			return nil, mcp.InvalidParams("Invalid params: the argument " + argName(n) + " must be a string.")
		}
		args[n] = v
	}
	for _, a := range p.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			return nil, mcp.InvalidParams("Invalid params: the argument " + argName(a.Name) + " is required.")
		}
	}
	return args, nil
}

// argName names an argument in a message: quoted when it looks like an
// argument name, else generically (a client-chosen name is not echoed when
// it could be anything).
func argName(n string) string {
	if identifier(n, 64) {
		return "'" + n + "'"
	}
	return "with that name"
}

// renderError maps a render failure to the protocol error answered: one
// the render function chose passes through; a question the client cannot
// take is -32602 and one left unanswered -32603 (as tools refuse them); the
// funnel's one answer is -32602 "no such matter"; a store failure -32603
// with a plain sentence;
// anything else -32603 "Internal error." (logged here, never shown).
func (r *Registry) renderError(ctx context.Context, name string, err error) error {
	var rpcErr *mcp.Error
	switch {
	case errors.As(err, &rpcErr):
		return rpcErr
	case errors.Is(err, mcp.ErrAskCancelled), errors.Is(err, context.Canceled), errors.Is(err, mcp.ErrInputRequired):
		return err // the transport answers these itself (no answer; input_required in 2026)
	case errors.Is(err, mcp.ErrNoStream), errors.Is(err, mcp.ErrNotDeclared):
		return mcp.InvalidParams("Invalid params: this prompt needs to ask the client a question, but this client cannot take one on this request: declare the capability at initialize and accept text/event-stream.")
	case errors.Is(err, mcp.ErrAskExpired):
		return &mcp.Error{Code: mcp.CodeInternalError, Message: "The question this prompt asked was not answered in time."}
	case errors.Is(err, access.ErrNoMatter):
		return mcp.InvalidParams("Invalid params: no such matter.")
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		r.opts.Logger.WarnContext(ctx, "prompt read failed", "prompt", name, "err", err)
		return &mcp.Error{Code: mcp.CodeInternalError, Message: "The matter record could not be read just now; retry shortly."}
	default:
		r.opts.Logger.ErrorContext(ctx, "prompt failed", "prompt", name, "err", err)
		return &mcp.Error{Code: mcp.CodeInternalError, Message: "Internal error."}
	}
}
