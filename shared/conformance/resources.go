package conformance

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/resources"
)

// The resources and the template of the suite's resources-* scenarios
// (src/scenarios/server/resources.ts), behind the conformance scope. The
// scenario's missing resource, test://nonexistent-resource-for-conformance-testing,
// is deliberately not registered: reading it is "resource not found".

// RegisterResources adds the fixture resources and template to reg.
func RegisterResources(reg *resources.Registry) error {
	return errors.Join(
		reg.AddResource(resources.Resource{
			URI: "test://static-text", Name: "static-text", Title: "Static text", MIMEType: "text/plain",
			Description: "A text resource whose content never changes.", Scope: auth.ScopeConformance,
			Read: fixed(mcp.ResourceContents{MimeType: "text/plain", Text: "This is the content of the static text resource."}),
		}),
		reg.AddResource(resources.Resource{
			URI: "test://static-binary", Name: "static-binary", Title: "Static binary", MIMEType: "image/png",
			Description: "A binary resource (a 1x1 PNG), read as a base64 blob.", Scope: auth.ScopeConformance,
			Read: fixed(mcp.ResourceContents{MimeType: "image/png", Blob: PNG1x1}),
		}),
		reg.AddResource(resources.Resource{
			URI: "test://watched-resource", Name: "watched-resource", Title: "Watched resource", MIMEType: "text/plain",
			Description: "A text resource clients may subscribe to.", Scope: auth.ScopeConformance,
			Read: fixed(mcp.ResourceContents{MimeType: "text/plain", Text: "Watched resource content"}),
		}),
		reg.AddTemplate(resources.Template{
			URITemplate: "test://template/{id}/data", Name: "template", Title: "Template data", MIMEType: "application/json",
			Description: "JSON data for any id, naming the id.", Scope: auth.ScopeConformance,
			Read: func(_ context.Context, _ *resources.Call, vars map[string]string) ([]mcp.ResourceContents, error) {
				body, err := json.Marshal(map[string]any{"id": vars["id"], "templateTest": true, "data": "Data for ID: " + vars["id"]})
				if err != nil {
					return nil, err
				}
				return []mcp.ResourceContents{{MimeType: "application/json", Text: string(body)}}, nil
			},
		}),
	)
}

// fixed is a read function answering one fixed content (its URI is the one read).
func fixed(c mcp.ResourceContents) resources.ReadFunc {
	return func(context.Context, *resources.Call) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{c}, nil
	}
}
