package resources

import (
	"context"
	"fmt"

	"github.com/custodymcp/custody/shared/completion"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/tools"
)

// Custody's own URI templates.
const (
	MatterTemplate    = "custody://matters/{case_id}"
	DocumentTemplate  = "custody://matters/{case_id}/documents/{document_id}"
	FactsTemplate     = "custody://matters/{case_id}/facts"
	DeadlinesTemplate = "custody://matters/{case_id}/deadlines"
	// ExportTemplate is a fact-record export (export_fact_record), read
	// through get_fact_export; added where tasks are served (AddExports).
	ExportTemplate = "custody://matters/{case_id}/exports/{export_id}"
)

// MatterURI is the URI of a matter's resource (get_matter).
func MatterURI(caseID string) string {
	return Expand(MatterTemplate, map[string]string{"case_id": caseID})
}

// MatterResourceURIs are the URIs whose answers a change to the matter row
// itself can change — its team or ethical-wall screens, its caption — and
// whose subscribers are notified of it: the matter, its fact record and its
// deadlines. (Document URIs are not enumerable by matter; a document
// change notifies its own URI.)
func MatterResourceURIs(caseID string) []string {
	vars := map[string]string{"case_id": caseID}
	return []string{Expand(MatterTemplate, vars), Expand(FactsTemplate, vars), Expand(DeadlinesTemplate, vars)}
}

// listedPageLimit is the limit a resource read passes to a list-shaped
// tool: its cap (docs/contracts.md §2), so a resource holds as much as one tool
// page can; the envelope's page block says when there is more, which the
// tool itself continues with offset.
const listedPageLimit = tools.MaxLimit

// AddCustody adds Custody's resource templates: each read runs its read
// tool through Options.Tools (so its scope is the tool's), and the matter,
// facts and deadlines templates enumerate the matters Options.Matters lets
// the caller reach. It fails without a tool registry and a matter source,
// or when a tool is not registered. The document template's document_id
// completes through Options.Funnel when it is set.
func AddCustody(r *Registry) error {
	if r.opts.Tools == nil || r.opts.Matters == nil {
		return fmt.Errorf("add custody resources: a tool registry and a matter source are required")
	}
	caseID := completion.MatterIDs(r.opts.Matters)
	for _, spec := range []struct {
		tmpl, name, title, description, tool string
		args                                 func(vars map[string]string) map[string]any
		list                                 func(m records.Matter) mcp.Resource
	}{
		{
			tmpl: MatterTemplate, name: "matter", title: "Matter", tool: "get_matter",
			description: "One matter: caption, court, docket number, client, practice area, status and team, with attestation (get_matter's answer; its deadlines are the deadlines resource's, its case notes list_case_notes').",
			args:        func(v map[string]string) map[string]any { return map[string]any{"case_id": v["case_id"]} },
			list: func(m records.Matter) mcp.Resource {
				return mcp.Resource{URI: MatterURI(m.ID), Name: m.ID, Title: m.Name,
					Description: "Matter " + m.Caption + ", with attestation.", MimeType: "application/json"}
			},
		},
		{
			tmpl: DocumentTemplate, name: "document", title: "Document", tool: "get_document",
			description: "One document of a matter with its versions and the first page of its page-numbered text, quoted verbatim, with attestation (get_document's answer).",
			args: func(v map[string]string) map[string]any {
				return map[string]any{"case_id": v["case_id"], "document_id": v["document_id"]}
			},
		},
		{
			tmpl: FactsTemplate, name: "fact_record", title: "Fact record", tool: "get_fact_record",
			description: "A matter's facts with their recorded postures, sources and verification status, up to 100 per read, with attestation (get_fact_record's answer).",
			args: func(v map[string]string) map[string]any {
				return map[string]any{"case_id": v["case_id"], "limit": listedPageLimit}
			},
			list: func(m records.Matter) mcp.Resource {
				return mcp.Resource{URI: Expand(FactsTemplate, map[string]string{"case_id": m.ID}), Name: m.ID + "/facts",
					Title: m.Name + ": fact record", Description: "The fact record of " + m.Caption + ", with attestation.",
					MimeType: "application/json"}
			},
		},
		{
			tmpl: DeadlinesTemplate, name: "deadlines", title: "Deadlines", tool: "list_deadlines",
			description: "A matter's deadlines by due date with the rule or order behind each, up to 100 per read, with attestation (list_deadlines' answer).",
			args: func(v map[string]string) map[string]any {
				return map[string]any{"case_id": v["case_id"], "limit": listedPageLimit}
			},
			list: func(m records.Matter) mcp.Resource {
				return mcp.Resource{URI: Expand(DeadlinesTemplate, map[string]string{"case_id": m.ID}), Name: m.ID + "/deadlines",
					Title: m.Name + ": deadlines", Description: "The deadlines of " + m.Caption + ", with attestation.",
					MimeType: "application/json"}
			},
		},
	} {
		ts, ok := r.opts.Tools.Spec(spec.tool)
		if !ok {
			return fmt.Errorf("add template %s: tool %s is not registered", spec.tmpl, spec.tool)
		}
		t := Template{
			URITemplate: spec.tmpl, Name: spec.name, Title: spec.title, Description: spec.description,
			MIMEType: "application/json", Scope: ts.Scope,
			Read:     toolRead(spec.tool, spec.args),
			Complete: map[string]completion.Completer{"case_id": caseID},
		}
		if spec.list != nil {
			t.List = listMatters(spec.list)
		}
		if spec.tmpl == DocumentTemplate && r.opts.Funnel != nil {
			t.Complete["document_id"] = completion.DocumentIDs(r.opts.Funnel)
		}
		if err := r.AddTemplate(t); err != nil {
			return err
		}
	}
	return nil
}

// toolRead reads a resource by running tool with the arguments args builds
// from the URI's variables: one application/json text block holding the
// tool's structured result (the attested envelope).
func toolRead(tool string, args func(map[string]string) map[string]any) TemplateReadFunc {
	return func(ctx context.Context, c *Call, vars map[string]string) ([]mcp.ResourceContents, error) {
		raw, err := c.Tool(ctx, tool, args(vars))
		if err != nil {
			return nil, err
		}
		return []mcp.ResourceContents{{URI: c.URI, MimeType: "application/json", Text: string(raw)}}, nil
	}
}

// listMatters enumerates one resource per matter the caller reaches.
func listMatters(resource func(records.Matter) mcp.Resource) ListFunc {
	return func(ctx context.Context, c *Call) ([]mcp.Resource, error) {
		matters, err := c.Matters(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]mcp.Resource, 0, len(matters))
		for _, m := range matters {
			out = append(out, resource(m))
		}
		return out, nil
	}
}

// AddExports adds the template of fact-record exports: reading one runs
// get_fact_export through Options.Tools, so the access funnel judges the
// matter again at every read and only the credential that made the export
// finds it. It fails when get_fact_export is not registered.
func AddExports(r *Registry) error {
	const tool = "get_fact_export"
	ts, ok := r.opts.Tools.Spec(tool)
	if !ok {
		return fmt.Errorf("add template %s: tool %s is not registered", ExportTemplate, tool)
	}
	return r.AddTemplate(Template{
		URITemplate: ExportTemplate, Name: "fact_record_export", Title: "Fact-record export",
		Description: "A matter's fact record with full provenance as export_fact_record made it for this credential, kept 24 hours (get_fact_export's answer).",
		MIMEType:    "application/json", Scope: ts.Scope,
		Read: toolRead(tool, func(v map[string]string) map[string]any {
			return map[string]any{"case_id": v["case_id"], "export_id": v["export_id"]}
		}),
		Complete: map[string]completion.Completer{"case_id": completion.MatterIDs(r.opts.Matters)},
	})
}
