package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/custodymcp/custody/shared/auth/oauth/oauthtest"
	"github.com/custodymcp/custody/shared/records/seed"
)

// -oauth-issuer makes the dev server an OAuth resource server for
// http://<bound address>/mcp: the banner says so, a 401 names the metadata,
// the metadata resolves to that resource, and the issuer's token gets in.
func TestTheOAuthIssuerFlag(t *testing.T) {
	iss := oauthtest.New(t)
	data := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	args := []string{"-addr", "127.0.0.1:0", "-data", data, "-oauth-issuer", iss.URL, "-oauth-jwks-url", iss.JWKSURL}
	go func() { done <- run(ctx, args, func(string) string { return "" }, &out, io.Discard) }()
	banner := regexp.MustCompile(`OAuth: access tokens of \S+ for (http://\S+/mcp) \(scope custody:mcp\) are accepted; metadata at (\S+)`)
	var m []string
	for deadline := time.Now().Add(time.Minute); m == nil; m = banner.FindStringSubmatch(out.String()) {
		select {
		case err := <-done:
			t.Fatalf("the server stopped: %v\n%s", err, out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no OAuth line in the banner after a minute:\n%s", out.String())
		}
	}
	resource, prm := m[1], m[2]

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	post := func(token string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, resource, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := post(""); r.StatusCode != http.StatusUnauthorized || !strings.Contains(r.Header.Get("WWW-Authenticate"), `resource_metadata="`+prm+`"`) {
		t.Errorf("no credential: %d, WWW-Authenticate %q; want 401 naming %s", r.StatusCode, r.Header.Get("WWW-Authenticate"), prm)
	}
	resp, err := http.Get(prm)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resource string `json:"resource"`
	}
	err = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if err != nil || doc.Resource != resource {
		t.Errorf("GET %s: resource %q (%v), want %s", prm, doc.Resource, err, resource)
	}
	tok := iss.Sign(t, jose.ES256, oauthtest.ECKeyID, iss.AccessToken(time.Now(), resource, seed.DemoTenant, seed.DemoAttorney, "custody:mcp", "custody:read"))
	if r := post(tok); r.StatusCode != http.StatusOK {
		t.Errorf("initialize with the issuer's token: %d, want 200", r.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run() = %v at shutdown", err)
	}
}

func TestAJWKSURLWithoutAnIssuerStopsTheStart(t *testing.T) {
	err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-data", t.TempDir(), "-oauth-jwks-url", "http://127.0.0.1:1/jwks"},
		func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil {
		t.Error("run(-oauth-jwks-url alone) = nil, want an error: a JWKS without an issuer is a half-made configuration")
	}
}
