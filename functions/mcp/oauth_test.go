package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/auth/oauth"
	"github.com/custodymcp/custody/shared/auth/oauth/oauthtest"
	"github.com/custodymcp/custody/shared/lambdaio"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/store/dynamostore"
)

// oauthEnv is awsEnv with an issuer configured as the template's defaults
// leave it.
func oauthEnv() map[string]string {
	env := awsEnv()
	for k, v := range map[string]string{
		"OAUTH_ISSUER": "https://login.firm.example/", "OAUTH_JWKS_URL": "https://login.firm.example/.well-known/jwks.json",
		"OAUTH_REQUIRED_SCOPE": "custody:mcp", "OAUTH_SCOPE_MAP": "", "OAUTH_TENANT_CLAIM": "custody_tenant",
		"OAUTH_TENANT": "", "OAUTH_USER_CLAIM": "sub", "OAUTH_CLASS_CLAIM": "custody_class",
	} {
		env[k] = v
	}
	return env
}

func TestLoadConfigOAuth(t *testing.T) {
	got, err := LoadConfig(with(oauthEnv(), "OAUTH_SCOPE_MAP", "api://custody/read=read,docs:read", "OAUTH_TENANT", "firm"))
	if err != nil {
		t.Fatalf("LoadConfig() error = %v", err)
	}
	want := &oauth.Config{
		Issuer: "https://login.firm.example/", JWKSURL: "https://login.firm.example/.well-known/jwks.json",
		PublicBaseURL: "https://mcp.firm.example", RequiredScope: "custody:mcp",
		ScopeMap:    map[string][]auth.Scope{"api://custody/read": {auth.ScopeDocsRead, auth.ScopeRead}},
		TenantClaim: "custody_tenant", Tenant: "firm", UserClaim: "sub", ClassClaim: "custody_class",
	}
	if diff := cmp.Diff(want, got.OAuth); diff != "" {
		t.Errorf("LoadConfig().OAuth (-want +got):\n%s", diff)
	}
	if _, err := oauth.New(*got.OAuth); err != nil {
		t.Errorf("oauth.New(LoadConfig().OAuth) error = %v", err)
	}

	// The template's defaults without an issuer: API keys only.
	keysOnly, err := LoadConfig(with(oauthEnv(), "OAUTH_ISSUER", "", "OAUTH_JWKS_URL", ""))
	if err != nil || keysOnly.OAuth != nil {
		t.Errorf("LoadConfig(no issuer) = %+v, %v; want OAuth nil", keysOnly.OAuth, err)
	}
}

func TestLoadConfigNamesEachBadOAuthVariable(t *testing.T) {
	tests := []struct {
		name string
		kv   []string
		want []string
	}{
		{"JWKS URL without an issuer", []string{"OAUTH_ISSUER", ""}, []string{"OAUTH_JWKS_URL"}},
		{"issuer without a JWKS URL", []string{"OAUTH_JWKS_URL", ""}, []string{"OAUTH_JWKS_URL"}},
		{"http issuer on AWS", []string{"OAUTH_ISSUER", "http://login.firm.example"}, []string{"OAUTH_ISSUER"}},
		{"JWKS URL with a query", []string{"OAUTH_JWKS_URL", "https://login.firm.example/jwks?v=2"}, []string{"OAUTH_JWKS_URL"}},
		{"two scopes required", []string{"OAUTH_REQUIRED_SCOPE", "custody:mcp custody:read"}, []string{"OAUTH_REQUIRED_SCOPE"}},
		{"scope map to an unknown scope", []string{"OAUTH_SCOPE_MAP", "custody:all=everything"}, []string{"OAUTH_SCOPE_MAP"}},
		{"scope map without '='", []string{"OAUTH_SCOPE_MAP", "custody:read"}, []string{"OAUTH_SCOPE_MAP"}},
		{"claim name with a space", []string{"OAUTH_USER_CLAIM", "user id"}, []string{"OAUTH_USER_CLAIM"}},
		{"tenant with '#'", []string{"OAUTH_TENANT", "firm#1"}, []string{"OAUTH_TENANT"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadConfig(with(oauthEnv(), tt.kv...))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("LoadConfig() error = %v, want a *ConfigError", err)
			}
			if diff := cmp.Diff(tt.want, ce.Names()); diff != "" {
				t.Errorf("ConfigError.Names() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// The function's own handler (config from its environment, newServer, the
// adapter), with an issuer configured against a local authorization server
// and the DynamoDB emulator: the 401 names the metadata under
// PUBLIC_BASE_URL, the metadata event is answered, a token is accepted.
func TestOAuthThroughTheHandler(t *testing.T) {
	emu := startEmulator(t)
	iss := oauthtest.New(t)
	env := emu.env(false)
	env["PUBLIC_BASE_URL"] = "http://127.0.0.1:3000/prod"
	env["OAUTH_ISSUER"], env["OAUTH_JWKS_URL"] = iss.URL, iss.JWKSURL
	cfg, err := LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("LoadConfig() error = %v", err)
	}
	st := dynamostore.New(newDynamoDB(testAWSConfig(), cfg), cfg.TableName, dynamostore.Options{})
	key, err := cfg.CursorKey(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := newServer(cfg, st, key, slog.New(lambdaio.NewLogHandler(io.Discard, cfg.ServerLogLevel())), nil)
	if err != nil {
		t.Fatalf("newServer() error = %v", err)
	}
	adapter := lambdaio.New(srv.Handler(), lambdaio.Options{Logger: slog.New(slog.DiscardHandler)})
	invoke := func(method, path, body string, headers map[string]string) response {
		ev := events.APIGatewayProxyRequest{HTTPMethod: method, Path: path, Body: body,
			Headers: map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}}
		for k, v := range headers {
			ev.Headers[k] = v
		}
		ev.RequestContext.DomainName, ev.RequestContext.Stage, ev.RequestContext.RequestID = "127.0.0.1:3000", "prod", "req-oauth"
		return invokeBuffer(t, adapter, lambdaContext(t, "req-oauth"), ev)
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`

	r := invoke(http.MethodPost, "/mcp", initialize, nil)
	wantChallenge := `Bearer resource_metadata="http://127.0.0.1:3000/prod/.well-known/oauth-protected-resource/mcp", scope="custody:mcp"`
	if r.Status != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") != wantChallenge {
		t.Errorf("POST /mcp without a credential = %d, WWW-Authenticate %q; want 401, %q", r.Status, r.Header.Get("WWW-Authenticate"), wantChallenge)
	}
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		r := invoke(http.MethodGet, p, "", nil)
		var doc oauth.ProtectedResourceMetadata
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &doc) != nil ||
			doc.Resource != "http://127.0.0.1:3000/prod/mcp" || !slices.Equal(doc.AuthorizationServers, []string{iss.URL}) {
			t.Errorf("GET %s = %d %s", p, r.Status, r.Body)
		}
	}
	tok := iss.Sign(t, jose.RS256, oauthtest.RSAKeyID, iss.AccessToken(time.Now(), cfg.ResourceURL, seed.DemoTenant, seed.DemoAttorney,
		"custody:mcp", "custody:read"))
	r = invoke(http.MethodPost, "/mcp", initialize, map[string]string{"Authorization": "Bearer " + tok})
	if r.Status != http.StatusOK || r.Header.Get("Mcp-Session-Id") == "" {
		t.Errorf("initialize with a token = %d %s, want 200 and a session", r.Status, r.Body)
	}
}

// The metadata paths are routed to the function: GET on
// /.well-known/oauth-protected-resource and on its {proxy+} child, with the
// integration /mcp uses, in the deployment, and invocable by API Gateway.
func TestTemplateRoutesTheProtectedResourceMetadataToTheFunction(t *testing.T) {
	tpl := loadTemplate(t)
	byPath := map[string]string{} // path → resource id
	parentOf := map[string]any{}
	for _, id := range tpl.ofType("AWS::ApiGateway::Resource") {
		p := asMap(tpl.Resources[id]["Properties"])
		parentOf[id] = p["ParentId"]
		byPath[fmt.Sprint(p["PathPart"])] = id
	}
	wk, prm, proxy := byPath[".well-known"], byPath["oauth-protected-resource"], byPath["{proxy+}"]
	if wk == "" || prm == "" || proxy == "" ||
		!cmp.Equal(parentOf[prm], map[string]any{"Ref": wk}) || !cmp.Equal(parentOf[proxy], map[string]any{"Ref": prm}) {
		t.Fatalf("resources %v: want /.well-known/oauth-protected-resource/{proxy+}", byPath)
	}
	var methodIDs []string
	for _, id := range tpl.ofType("AWS::ApiGateway::Method") {
		p := asMap(tpl.Resources[id]["Properties"])
		res := p["ResourceId"]
		if !cmp.Equal(res, map[string]any{"Ref": prm}) && !cmp.Equal(res, map[string]any{"Ref": proxy}) {
			continue
		}
		methodIDs = append(methodIDs, id)
		in := asMap(p["Integration"])
		uri, _ := path(in, "Uri", "Fn::Sub").(string)
		if p["HttpMethod"] != "GET" || in["Type"] != "AWS_PROXY" || in["ResponseTransferMode"] != "STREAM" ||
			!strings.HasSuffix(uri, "/functions/${McpFunction.Arn}/response-streaming-invocations") {
			t.Errorf("%s = %v %v: want GET, streamed to McpFunction like /mcp (the function answers in one mode)", id, p["HttpMethod"], in)
		}
	}
	sort.Strings(methodIDs)
	if len(methodIDs) != 2 {
		t.Fatalf("metadata methods %v, want GET on both resources", methodIDs)
	}
	for _, id := range tpl.ofType("AWS::ApiGateway::Deployment") {
		deps := oneOrMany(tpl.Resources[id]["DependsOn"])
		for _, m := range methodIDs {
			if !slices.Contains(deps, any(m)) {
				t.Errorf("deployment %s does not depend on %s", id, m)
			}
		}
	}
	perm := false
	for _, id := range tpl.ofType("AWS::Lambda::Permission") {
		arn, _ := path(tpl.Resources[id]["Properties"], "SourceArn", "Fn::Sub").(string)
		if strings.HasSuffix(arn, "/GET/.well-known/oauth-protected-resource*") {
			perm = true
		}
	}
	if !perm {
		t.Error("no Lambda permission lets API Gateway invoke McpFunction for GET /.well-known/oauth-protected-resource*")
	}
}

// oauthSamples are the samples TestOAuthBehindAFunctionURLNamesItsOwnDomain
// plays besides the session's.
var oauthSamples = []string{"url-protected-resource-metadata.json"}

// Behind a function URL without PUBLIC_BASE_URL the public base is the URL's
// own https://<domainName>, learnt from the first event (the template cannot
// name a function's URL in its own environment): the 401 names the
// metadata there, the metadata's resource is <domain>/mcp, and the base is
// learnt once.
func TestOAuthBehindAFunctionURLNamesItsOwnDomain(t *testing.T) {
	emu := startEmulator(t)
	iss := oauthtest.New(t)
	cfg := loadDoor(t, emu, functionURL, "PUBLIC_BASE_URL", "", "OAUTH_ISSUER", iss.URL, "OAUTH_JWKS_URL", iss.JWKSURL)
	if cfg.PublicBaseURL != "" {
		t.Fatalf("PublicBaseURL = %q before the first event, want none", cfg.PublicBaseURL)
	}
	var logs bytes.Buffer
	h := functionHandler(t, cfg, emu.Store, &logs)
	s := emu.session(t)
	const base = "https://k3mqx7vz2cfh5dw4ntq6yrb8jp0sgl9e.lambda-url.us-east-1.on.aws"

	r := invokeEvent(t, h, functionURL, lambdaContext(t, "url-1"), readSample(t, "url-unauthenticated.json", s))
	wantChallenge := `Bearer resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp", scope="custody:mcp"`
	if r.Status != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") != wantChallenge {
		t.Errorf("unauthenticated = %d, WWW-Authenticate %q; want 401, %q", r.Status, r.Header.Get("WWW-Authenticate"), wantChallenge)
	}
	r = invokeEvent(t, h, functionURL, lambdaContext(t, "url-2"), readSample(t, oauthSamples[0], s))
	var doc oauth.ProtectedResourceMetadata
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &doc) != nil || doc.Resource != base+"/mcp" ||
		!slices.Equal(doc.AuthorizationServers, []string{iss.URL}) {
		t.Errorf("metadata = %d %s, want resource %s/mcp and the issuer", r.Status, r.Body, base)
	}
	if n := strings.Count(logs.String(), `"message":"public base URL from the function URL"`); n != 1 {
		t.Errorf("the base was learnt %d times, want once:\n%s", n, logs.String())
	}
}
