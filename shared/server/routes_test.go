package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/custodymcp/custody/shared/approvals"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// Every path but /mcp (and, with an issuer, the metadata paths; with a
// public base URL, the approval page) is a JSON 404: never a redirect with
// an HTML body from path cleaning.
func TestOtherPathsAreAJSON404(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	base := strings.TrimSuffix(env.URL, "/mcp")
	for _, path := range []string{"//mcp", "/x/../mcp", "/mcp/", "/MCP", "/", "/admin", "/.well-known/oauth-protected-resource", "/approvals", "/approvals/signin"} {
		r := servertest.DoURL(t, base+path, http.MethodGet, nil)
		var body map[string]any
		if r.Status != http.StatusNotFound || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || json.Unmarshal(r.Body, &body) != nil {
			t.Errorf("GET %s: %d %q %s, want a JSON 404", path, r.Status, r.Header.Get("Content-Type"), r.Body)
		}
	}
}

// With a public base URL the approval page answers /approvals and below
// (HTML, its security headers, links from the base), beside /mcp; other
// paths stay JSON 404s.
func TestTheApprovalPageIsMountedUnderApprovals(t *testing.T) {
	env := servertest.New(t, servertest.Options{Approvals: true})
	base := strings.TrimSuffix(env.URL, "/mcp")
	req, _ := http.NewRequest(http.MethodGet, base+"/approvals", nil)
	req.Header.Set("Authorization", "Bearer "+env.Keys[servertest.Attorney])
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if got, want := r.StatusCode, http.StatusSeeOther; got != want {
		t.Fatalf("GET /approvals with an API key = %d, want %d (keys never sign in)", got, want)
	}
	if got, want := r.Header.Get("Location"), base+"/approvals/signin"; got != want {
		t.Errorf("Location = %q, want %q", got, want)
	}
	for k, want := range approvals.SecurityHeaders {
		if got := r.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	page := servertest.DoURL(t, base+"/approvals/signin", http.MethodGet, nil)
	if page.Status != http.StatusOK || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") {
		t.Errorf("GET /approvals/signin = %d %q, want an HTML page", page.Status, page.Header.Get("Content-Type"))
	}
	for _, path := range []string{"/approval", "/approvalsx", "/"} {
		if r := servertest.DoURL(t, base+path, http.MethodGet, nil); r.Status != http.StatusNotFound ||
			!strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Errorf("GET %s = %d %q, want the JSON 404", path, r.Status, r.Header.Get("Content-Type"))
		}
	}
}
