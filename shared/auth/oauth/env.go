package oauth

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/custodymcp/custody/shared/keyspace"
)

// ConfigFromEnv reads the OAUTH_* variables through getenv — the one
// parser of the Lambda's configuration (functions/mcp) and the dev server
// (scripts/dev), so both accept exactly the same settings:
//
//	OAUTH_ISSUER          the authorization server's issuer, the exact "iss" of its tokens
//	OAUTH_JWKS_URL        required with OAUTH_ISSUER, refused without it: its JWK Set
//	OAUTH_REQUIRED_SCOPE  the token scope /mcp itself requires (default custody:mcp)
//	OAUTH_SCOPE_MAP       token scopes to Custody scopes (default DefaultScopeMap)
//	OAUTH_TENANT_CLAIM    the claim naming the tenant (default custody_tenant)
//	OAUTH_TENANT          the one tenant of every token, for a single-firm deployment
//	OAUTH_USER_CLAIM      the claim naming the user, Custody's principal id (default sub)
//	OAUTH_CLASS_CLAIM     the claim that may say client_safe (default custody_class)
//
// It returns nil when OAUTH_ISSUER is empty (API keys only). base is the
// public base URL the resource is derived from; allowHTTP admits http
// issuer and JWKS URLs (emulator and loopback runs only). Each problem is
// reported to bad once, with the variable it concerns.
func ConfigFromEnv(getenv func(string) string, base string, allowHTTP bool, bad func(name, problem string)) *Config {
	issuer, jwks := getenv("OAUTH_ISSUER"), getenv("OAUTH_JWKS_URL")
	if issuer == "" {
		if jwks != "" {
			bad("OAUTH_JWKS_URL", "is refused without OAUTH_ISSUER")
		}
		return nil
	}
	c := &Config{Issuer: issuer, JWKSURL: jwks, PublicBaseURL: base, AllowHTTP: allowHTTP,
		RequiredScope: getenv("OAUTH_REQUIRED_SCOPE"), TenantClaim: getenv("OAUTH_TENANT_CLAIM"),
		Tenant: getenv("OAUTH_TENANT"), UserClaim: getenv("OAUTH_USER_CLAIM"), ClassClaim: getenv("OAUTH_CLASS_CLAIM")}
	for _, v := range []struct{ name, value string }{{"OAUTH_ISSUER", issuer}, {"OAUTH_JWKS_URL", jwks}} {
		if err := endpointURL(v.value, allowHTTP); err != nil {
			bad(v.name, err.Error())
		}
	}
	if c.RequiredScope != "" && !ValidScopeToken(c.RequiredScope) {
		bad("OAUTH_REQUIRED_SCOPE", "is not one scope token (visible ASCII but '\"' and '\\')")
	}
	if m, err := ParseScopeMap(getenv("OAUTH_SCOPE_MAP")); err != nil {
		bad("OAUTH_SCOPE_MAP", err.Error())
	} else {
		c.ScopeMap = m
	}
	for _, v := range []struct{ name, value string }{
		{"OAUTH_TENANT_CLAIM", c.TenantClaim}, {"OAUTH_USER_CLAIM", c.UserClaim}, {"OAUTH_CLASS_CLAIM", c.ClassClaim},
	} {
		if strings.ContainsAny(v.value, " \t\r\n") {
			bad(v.name, "is not a claim name (no white space)")
		}
	}
	if c.Tenant != "" && !keyspace.ValidID(c.Tenant) {
		bad("OAUTH_TENANT", "is not a tenant id (1-128 bytes; no '#', white space or control characters)")
	}
	return c
}

// endpointURL validates OAUTH_ISSUER and OAUTH_JWKS_URL: absolute https
// URLs (http only when allowed) without user info, query or fragment.
func endpointURL(s string, allowHTTP bool) error {
	if s == "" {
		return fmt.Errorf("is required with OAUTH_ISSUER")
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" ||
		strings.ContainsAny(s, "\"\\ ") {
		return fmt.Errorf("must be an absolute URL without user info, query or fragment")
	}
	if u.Scheme != "https" && !(allowHTTP && u.Scheme == "http") {
		return fmt.Errorf("must be https (http only in emulator and loopback runs)")
	}
	return nil
}
