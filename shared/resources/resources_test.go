package resources

import (
	"context"
	"go/build"
	"maps"
	"strings"
	"testing"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/completion"
	"github.com/custodymcp/custody/shared/mcp"
)

// The package reads no store: its own code imports nothing of shared/store
// (nor its engines); matters come through MatterSource and subscription
// rows through a Subscriber.
func TestThePackageImportsNoStore(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if imp == "github.com/custodymcp/custody/shared/store" || strings.HasPrefix(imp, "github.com/custodymcp/custody/shared/store/") ||
			strings.Contains(imp, "bbolt") || strings.Contains(imp, "aws-sdk-go") {
			t.Errorf("package resources imports %s", imp)
		}
	}
}

func TestLevel1TemplatesMatchTheirExpansionsOnly(t *testing.T) {
	for _, tc := range []struct {
		template, uri string
		want          map[string]string // nil: no match
	}{
		{"custody://matters/{case_id}", "custody://matters/m_alvarez", map[string]string{"case_id": "m_alvarez"}},
		{"custody://matters/{case_id}", "custody://matters/m%5Falvarez", map[string]string{"case_id": "m_alvarez"}},
		{"custody://matters/{case_id}", "custody://matters/", nil},
		{"custody://matters/{case_id}", "custody://matters/a/b", nil},
		{"custody://matters/{case_id}", "custody://matters/a?x=1", nil},
		{"custody://matters/{case_id}", "custody://matters/%zz", nil},
		{"custody://matters/{case_id}", "CUSTODY://matters/m_alvarez", nil},
		{"custody://matters/{case_id}/documents/{document_id}", "custody://matters/m_a/documents/d_1",
			map[string]string{"case_id": "m_a", "document_id": "d_1"}},
		{"test://template/{id}/data", "test://template/123/data", map[string]string{"id": "123"}},
		{"test://template/{id}/data", "test://template/123/data.json", nil},
		{"test://a.b/{x}", "test://aXb/1", nil}, // literal text is literal
	} {
		tmpl, err := compileTemplate(tc.template)
		if err != nil {
			t.Fatalf("compile %s: %v", tc.template, err)
		}
		got, ok := tmpl.match(tc.uri)
		if ok != (tc.want != nil) || !maps.Equal(got, tc.want) {
			t.Errorf("match(%s, %s) = %v, %v; want %v", tc.template, tc.uri, got, ok, tc.want)
		}
	}
}

func TestTemplatesBeyondLevel1AreRefused(t *testing.T) {
	for _, bad := range []string{
		"test://{+path}", "test://x{#frag}", "test://x{?q}", "test://{a,b}", "test://{a*}", "test://{a:3}",
		"test://{}", "test://{a", "test://a}", "test://{a}/{a}",
	} {
		if _, err := compileTemplate(bad); err == nil {
			t.Errorf("compileTemplate(%q) accepted a template beyond level 1", bad)
		}
	}
}

func TestExpandPercentEncodesAllButUnreserved(t *testing.T) {
	got := Expand("custody://matters/{case_id}/documents/{document_id}",
		map[string]string{"case_id": "m_a", "document_id": "d 1/é"})
	if want := "custody://matters/m_a/documents/d%201%2F%C3%A9"; got != want {
		t.Errorf("Expand = %s, want %s", got, want)
	}
	tmpl, _ := compileTemplate(DocumentTemplate)
	if vars, ok := tmpl.match(got); !ok || vars["document_id"] != "d 1/é" {
		t.Errorf("match(Expand(v)) = %v, %v; want the values back", vars, ok)
	}
}

func TestIsURIWantsAnAbsoluteURI(t *testing.T) {
	for uri, want := range map[string]bool{
		"custody://matters/m_a": true, "test://static-text": true, "urn:isbn:0451450523": true, "a+b.c-d:x": true,
		"not a uri": false, "/matters/m_a": false, "m_a": false, "": false, ":x": false, "1abc:x": false,
		"custody://matters/m a": false, "custody://x\ny": false,
	} {
		if got := isURI(uri); got != want {
			t.Errorf("isURI(%q) = %v, want %v", uri, got, want)
		}
	}
}

func TestAddRefusesIncompleteOrDuplicateRegistrations(t *testing.T) {
	read := func(context.Context, *Call) ([]mcp.ResourceContents, error) { return nil, nil }
	tread := func(context.Context, *Call, map[string]string) ([]mcp.ResourceContents, error) { return nil, nil }
	r := NewRegistry(Options{})
	ok := Resource{URI: "test://a", Name: "a", Scope: auth.ScopeRead, Read: read}
	if err := r.AddResource(ok); err != nil {
		t.Fatal(err)
	}
	for name, res := range map[string]Resource{
		"duplicate": ok,
		"not a URI": {URI: "not a uri", Name: "a", Scope: auth.ScopeRead, Read: read},
		"no name":   {URI: "test://b", Scope: auth.ScopeRead, Read: read},
		"no scope":  {URI: "test://c", Name: "c", Read: read},
		"no read":   {URI: "test://d", Name: "d", Scope: auth.ScopeRead},
	} {
		if err := r.AddResource(res); err == nil {
			t.Errorf("AddResource accepted a resource with %s", name)
		}
	}
	okT := Template{URITemplate: "test://t/{id}", Name: "t", Scope: auth.ScopeRead, Read: tread}
	if err := r.AddTemplate(okT); err != nil {
		t.Fatal(err)
	}
	for name, tmpl := range map[string]Template{
		"duplicate":         okT,
		"a level-2 form":    {URITemplate: "test://u/{+id}", Name: "u", Scope: auth.ScopeRead, Read: tread},
		"a stray completer": {URITemplate: "test://v/{id}", Name: "v", Scope: auth.ScopeRead, Read: tread, Complete: map[string]completion.Completer{"other": nil}},
	} {
		if err := r.AddTemplate(tmpl); err == nil {
			t.Errorf("AddTemplate accepted a template with %s", name)
		}
	}
}

// The one place the era decides the code of "resource not found": -32002
// in every 2025-era revision, -32602 in 2026-07-28, data.uri in both.
func TestNotFoundIsMinus32002InThe2025EraAndMinus32602In2026(t *testing.T) {
	for rev, want := range map[mcp.Revision]int{
		mcp.Rev20241105: -32002, mcp.Rev20250326: -32002, mcp.Rev20250618: -32002, mcp.Rev20251125: -32002,
		mcp.Rev20260728: -32602,
	} {
		e := NotFound(rev, "test://x")
		if e.Code != want || e.Data.(map[string]any)["uri"] != "test://x" {
			t.Errorf("NotFound(%s) = %d %v, want %d with data.uri", rev, e.Code, e.Data, want)
		}
	}
}
