package oauth

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/custodymcp/custody/shared/auth"
)

// DefaultScopeMap is the token scopes Custody understands unless configured
// otherwise, each granting one Custody scope:
//
//	custody:read      read
//	custody:docs      docs:read
//	custody:tasks     tasks:read
//	custody:analysis  analysis:read
//	custody:write     write
//
// admin and conformance are granted by no default token scope: a deployment
// that wants them maps them explicitly.
func DefaultScopeMap() map[string][]auth.Scope {
	return map[string][]auth.Scope{
		"custody:read":     {auth.ScopeRead},
		"custody:docs":     {auth.ScopeDocsRead},
		"custody:tasks":    {auth.ScopeTasksRead},
		"custody:analysis": {auth.ScopeAnalysisRead},
		"custody:write":    {auth.ScopeWrite},
	}
}

// ParseScopeMap parses a scope map written as white-space-separated entries
// `token-scope=custody-scope[,custody-scope…]`, e.g.
// "custody:read=read custody:docs=docs:read,read". A token scope may itself
// contain '=' (RFC 6749 §3.3 allows it): the last '=' of an entry separates.
// "" is nil (the default map).
func ParseScopeMap(s string) (map[string][]auth.Scope, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, nil
	}
	m := map[string][]auth.Scope{}
	for _, f := range fields {
		i := strings.LastIndexByte(f, '=')
		if i <= 0 || i == len(f)-1 {
			return nil, fmt.Errorf("scope map entry %q is not token-scope=custody-scope[,…]", f)
		}
		tok := f[:i]
		if !ValidScopeToken(tok) {
			return nil, fmt.Errorf("scope map entry %q: %q is not a scope token", f, tok)
		}
		if _, dup := m[tok]; dup {
			return nil, fmt.Errorf("scope map names %q twice", tok)
		}
		scopes, err := auth.ParseScopes(f[i+1:])
		if err != nil {
			return nil, fmt.Errorf("scope map entry for %q: %w", tok, err)
		}
		if len(scopes) == 0 {
			return nil, fmt.Errorf("scope map entry for %q grants nothing", tok)
		}
		m[tok] = scopes
	}
	return m, nil
}

// ValidScopeToken reports whether s is an RFC 6749 §3.3 scope-token:
// one or more of %x21 / %x23-5B / %x5D-7E (visible ASCII but '"' and '\').
func ValidScopeToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// ScopesSupported lists, sorted, the token scopes a client may ask for: the
// required scope and every scope of the map (RFC 9728 §2 scopes_supported).
func (v *Verifier) ScopesSupported() []string {
	out := slices.Collect(maps.Keys(v.cfg.ScopeMap))
	if !slices.Contains(out, v.cfg.RequiredScope) {
		out = append(out, v.cfg.RequiredScope)
	}
	slices.Sort(out)
	return out
}

// tokenScopes returns the scopes a token was granted: "scope" (RFC 9068
// §2.2.3, RFC 8693 §4.2: a space-separated string) and "scp" (a list of
// strings or a space-separated string, as some issuers send). ok is false
// when either is present but of another type.
func tokenScopes(extra map[string]any) (scopes []string, ok bool) {
	for _, name := range []string{"scope", "scp"} {
		raw, present := extra[name]
		if !present || raw == nil {
			continue
		}
		switch v := raw.(type) {
		case string:
			scopes = append(scopes, strings.Fields(v)...)
		case []any:
			for _, e := range v {
				s, isString := e.(string)
				if !isString {
					return nil, false
				}
				scopes = append(scopes, strings.Fields(s)...)
			}
		default:
			return nil, false
		}
	}
	slices.Sort(scopes)
	return slices.Compact(scopes), true
}

// mapScopes maps granted token scopes to Custody scopes, sorted and
// distinct (auth.Credential.Scopes' form).
func mapScopes(m map[string][]auth.Scope, granted []string) []auth.Scope {
	var out []auth.Scope
	for _, g := range granted {
		out = append(out, m[g]...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
