package oauth

import (
	"encoding/json"
	"net/http"
)

// WellKnownPath is the RFC 9728 §3 well-known path of protected resource
// metadata; WellKnownMCPPath is its path-inserted form for the resource
// <base>/mcp (§3.1), which MCP clients try first.
const (
	WellKnownPath    = "/.well-known/oauth-protected-resource"
	WellKnownMCPPath = WellKnownPath + "/mcp"
)

// ProtectedResourceMetadata is the RFC 9728 §2 document Custody publishes
// once an issuer is configured.
type ProtectedResourceMetadata struct {
	// Resource is the canonical resource URL, identical to the audience a
	// token must carry (§3.3; MCP basic/authorization requires it).
	Resource string `json:"resource"`
	// AuthorizationServers lists the one configured issuer (the MCP
	// specification requires at least one).
	AuthorizationServers []string `json:"authorization_servers"`
	// ScopesSupported are the token scopes Custody understands.
	ScopesSupported []string `json:"scopes_supported"`
	// BearerMethodsSupported is ["header"]: tokens come in Authorization
	// only, never in a query or form body (RFC 6750 §2.1).
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
}

// Metadata returns the metadata document.
func (v *Verifier) Metadata() ProtectedResourceMetadata {
	return ProtectedResourceMetadata{
		Resource:               v.resource,
		AuthorizationServers:   []string{v.cfg.Issuer},
		ScopesSupported:        v.ScopesSupported(),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Custody",
	}
}

// MetadataURL is the URL the challenge points at (RFC 9728 §5.1):
// PublicBaseURL + WellKnownMCPPath. Behind a custom domain mapped at the
// root this is exactly the path-inserted well-known URL of the resource
// (§3.1); behind a base path (an API Gateway stage URL) it is the URL the
// deployment routes to the function, and clients find it through this
// header only, since the host's root well-known URL is not Custody's.
func (v *Verifier) MetadataURL() string { return v.cfg.PublicBaseURL + WellKnownMCPPath }

// Challenge is the WWW-Authenticate value of a 401 once an issuer is
// configured: `Bearer resource_metadata="<MetadataURL>", scope="<RequiredScope>"`
// (RFC 9728 §5.1; RFC 6750 §3; MCP basic/authorization §Protected Resource
// Metadata Discovery Requirements). Neither value can hold a quote or a
// backslash (New refuses them), so no escaping is needed.
func (v *Verifier) Challenge() string {
	return `Bearer resource_metadata="` + v.MetadataURL() + `", scope="` + v.cfg.RequiredScope + `"`
}

// MetadataHandler serves the metadata document (GET and HEAD) as JSON,
// cacheable for an hour, readable from any origin: it is public, carries
// no credential and varies by nothing (RFC 9728 §3.2). OPTIONS answers a
// CORS preflight (browser clients send MCP-Protocol-Version with it).
func (v *Verifier) MetadataHandler() http.Handler {
	body, _ := json.Marshal(v.Metadata()) // strings only: cannot fail
	body = append(body, '\n')
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			h.Set("Content-Type", "application/json")
			h.Set("Cache-Control", "public, max-age=3600")
			w.WriteHeader(http.StatusOK)
			if r.Method == http.MethodGet {
				_, _ = w.Write(body)
			}
		case http.MethodOptions:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "accept, mcp-protocol-version")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			h.Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusMethodNotAllowed)
			_, _ = w.Write([]byte(`{"error":"method not allowed: GET the metadata"}` + "\n"))
		}
	})
}
