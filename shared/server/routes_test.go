package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/custodymcp/custody/shared/server/servertest"
)

// Every path but /mcp (and, with an issuer, the metadata paths) is a JSON
// 404: never a redirect with an HTML body from path cleaning.
func TestOtherPathsAreAJSON404(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	base := strings.TrimSuffix(env.URL, "/mcp")
	for _, path := range []string{"//mcp", "/x/../mcp", "/mcp/", "/MCP", "/", "/admin", "/.well-known/oauth-protected-resource"} {
		r := servertest.DoURL(t, base+path, http.MethodGet, nil)
		var body map[string]any
		if r.Status != http.StatusNotFound || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || json.Unmarshal(r.Body, &body) != nil {
			t.Errorf("GET %s: %d %q %s, want a JSON 404", path, r.Status, r.Header.Get("Content-Type"), r.Body)
		}
	}
}
