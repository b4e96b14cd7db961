// Package completion serves completion/complete (MCP server/utilities/
// completion): suggestions for one argument of a prompt ("ref/prompt", by
// name) or one variable of a resource template ("ref/resource", by URI
// template), produced by the Completer the prompt or template registered
// for it.
//
// Rules, decided here:
//
//   - A reference the credential cannot see — unknown, or hidden by its
//     scopes — is -32602, the same answer for both. A known reference whose
//     argument has no completer (or that has no such argument) answers an
//     empty values array: suggestions are optional, the reference is not.
//   - At most MaxValues values are sent, with total (every match) and
//     hasMore (total > the values sent), always both.
//   - A case_id completes through the access funnel only (MatterIDs): ids
//     of the matters the credential reaches — team, minus ethical-wall
//     screens, within its allow-list, in its tenant — whose id or name
//     contains the typed value, ignoring case. Values are ids; a name match
//     suggests the id. A screened or foreign matter never appears.
//   - A document_id completes through the access funnel only
//     (DocumentIDs): ids of the documents of the matter named by case_id in
//     params.context.arguments, when the credential reaches it, whose id or
//     title contains the typed value, ignoring case. A document withheld
//     from a client-safe credential never appears, as if it did not exist;
//     without a case_id in the context, or with one the funnel refuses,
//     there is nothing to suggest (an empty answer, not an error: the same
//     for a matter that does not exist and one not reached).
//   - The audit row is indexed under every matter an answer names
//     (Call.ReportMatter, audit.Record.Matters): the case_ids suggested,
//     the matter whose document_ids are suggested.
//   - A completer that fails (the store is down) is -32603 with a plain
//     sentence, never an empty list that would read as "no matters".
//
// The package is the leaf the registries share: prompts and resources
// import it for Completer, and it reaches them only through the lookups in
// Options.
package completion

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/records"
)

// MaxValues is the most values one answer carries (MCP schema
// CompleteResult: "must not exceed 100 items").
const MaxValues = 100

// Call is what a completer knows about the request it serves.
type Call struct {
	Credential *auth.Credential
	// Who is the caller as the access funnel sees it.
	Who access.Who
	// Arguments are the values the client already gave for the reference's
	// other arguments (params.context.arguments; empty when none).
	Arguments map[string]string
	Now       time.Time
	Revision  mcp.Revision

	matters []string // reported by ReportMatter
}

// ReportMatter records that the answer names the matter id (its id, or
// values drawn from its rows), so the request's audit row is indexed under
// it (audit.Record.Matters).
func (c *Call) ReportMatter(id string) { c.matters = append(c.matters, id) }

// Completer suggests values for one argument given the partial value typed
// so far. It returns every match in the order to show; the caller caps the
// answer at MaxValues. An error is a dependency failure (answered -32603).
type Completer func(ctx context.Context, c *Call, value string) ([]string, error)

// PromptLookup finds the completer of a prompt's argument (implemented by
// prompts.Registry). known is false when the credential sees no prompt of
// that name; comp is nil when the prompt has no such argument or the
// argument no completer.
type PromptLookup interface {
	ArgumentCompleter(cred *auth.Credential, prompt, argument string) (comp Completer, known bool)
}

// TemplateLookup finds the completer of a resource template's variable
// (implemented by resources.Registry); uri is the template as listed (a
// fixed resource's URI is known too, with no variables).
type TemplateLookup interface {
	VariableCompleter(cred *auth.Credential, uri, variable string) (comp Completer, known bool)
}

// MatterSource lists the matters a caller reaches: the access funnel
// (access.Funnel satisfies it), sorted by id.
type MatterSource interface {
	Matters(ctx context.Context, who access.Who) ([]records.Matter, error)
}

// MatterIDs completes a case_id through src: the ids of the reachable
// matters whose id or name contains value case-insensitively, sorted by id.
func MatterIDs(src MatterSource) Completer {
	return func(ctx context.Context, c *Call, value string) ([]string, error) {
		matters, err := src.Matters(ctx, c.Who)
		if err != nil {
			return nil, err
		}
		want := strings.ToLower(value)
		var out []string
		for _, m := range matters {
			if strings.Contains(strings.ToLower(m.ID), want) || strings.Contains(strings.ToLower(m.Name), want) {
				out = append(out, m.ID)
			}
		}
		slices.Sort(out)
		// The answer names the matters of the values it sends (the first
		// MaxValues, as the handler caps them).
		for _, id := range out[:min(len(out), MaxValues)] {
			c.ReportMatter(id)
		}
		return out, nil
	}
}

// DocumentSource resolves a case id and lists the documents of a reached
// matter the caller may see: the access funnel (access.Funnel satisfies
// it). Matter returns access.ErrNoMatter for a matter the caller cannot
// reach.
type DocumentSource interface {
	Matter(ctx context.Context, who access.Who, caseID string) (records.Matter, error)
	Documents(ctx context.Context, who access.Who, m records.Matter) ([]records.Document, error)
}

// DocumentIDs completes a document_id through src: the ids of the documents
// the caller may see of the matter named by the case_id argument of the
// completion's context, whose id or title contains value
// case-insensitively, sorted by id. No case_id, or one the funnel refuses,
// suggests nothing; a store failure is an error.
func DocumentIDs(src DocumentSource) Completer {
	return func(ctx context.Context, c *Call, value string) ([]string, error) {
		caseID := c.Arguments["case_id"]
		if caseID == "" {
			return nil, nil
		}
		m, err := src.Matter(ctx, c.Who, caseID)
		if errors.Is(err, access.ErrNoMatter) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		docs, err := src.Documents(ctx, c.Who, m)
		if err != nil {
			return nil, err
		}
		want := strings.ToLower(value)
		var out []string
		for _, d := range docs {
			if strings.Contains(strings.ToLower(d.ID), want) || strings.Contains(strings.ToLower(d.Title), want) {
				out = append(out, d.ID)
			}
		}
		slices.Sort(out)
		c.ReportMatter(m.ID) // even none found says something of its documents
		return out, nil
	}
}

// Options configure completion/complete.
type Options struct {
	Prompts   PromptLookup
	Resources TemplateLookup
	// Logger receives completer failures; nil discards.
	Logger *slog.Logger
}

// Install registers completion/complete on s. The composition declares the
// completions capability beside it.
func Install(s *mcp.Server, opts Options) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h := &handler{opts: opts}
	s.Register("completion/complete", mcp.Method{Handler: h.complete})
}

type handler struct{ opts Options }

// complete serves completion/complete.
func (h *handler) complete(ctx context.Context, req *mcp.Request) (any, error) {
	var p mcp.CompleteParams
	if err := req.Params.Decode(&p); err != nil {
		return nil, err
	}
	if p.Argument.Name == "" {
		return nil, mcp.InvalidParams("Invalid params: argument.name is required.")
	}
	cred := req.Credential
	var (
		comp  Completer
		known bool
	)
	switch p.Ref.Type {
	case "ref/prompt":
		if p.Ref.Name == "" {
			return nil, mcp.InvalidParams("Invalid params: ref.name is required for ref/prompt.")
		}
		if h.opts.Prompts != nil {
			comp, known = h.opts.Prompts.ArgumentCompleter(cred, p.Ref.Name, p.Argument.Name)
		}
		if !known {
			return nil, mcp.InvalidParams("Invalid params: unknown prompt.")
		}
		req.Audit.Prompt = p.Ref.Name
	case "ref/resource":
		if p.Ref.URI == "" {
			return nil, mcp.InvalidParams("Invalid params: ref.uri is required for ref/resource.")
		}
		if h.opts.Resources != nil {
			comp, known = h.opts.Resources.VariableCompleter(cred, p.Ref.URI, p.Argument.Name)
		}
		if !known {
			return nil, mcp.InvalidParams("Invalid params: unknown resource template.")
		}
		req.Audit.Resource = p.Ref.URI
	default:
		return nil, mcp.InvalidParams(`Invalid params: ref.type must be "ref/prompt" or "ref/resource".`)
	}
	res := mcp.CompleteResult{Completion: mcp.Completion{Values: []string{}}}
	if comp == nil {
		return res, nil
	}
	c := &Call{
		Credential: cred,
		Who:        access.WhoOf(cred),
		Arguments:  map[string]string{},
		Now:        req.Started, Revision: req.Revision,
	}
	if p.Context != nil && p.Context.Arguments != nil {
		c.Arguments = p.Context.Arguments
	}
	values, err := comp(ctx, c, p.Argument.Value)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		h.opts.Logger.WarnContext(ctx, "completion failed", "argument", p.Argument.Name, "err", err)
		return nil, &mcp.Error{Code: mcp.CodeInternalError,
			Message: "Suggestions could not be read just now; retry shortly."}
	}
	res.Completion.Total = len(values)
	res.Completion.HasMore = len(values) > MaxValues
	res.Completion.Values = append(res.Completion.Values, values[:min(len(values), MaxValues)]...)
	req.Audit.AddMatter(c.matters...)
	return res, nil
}
