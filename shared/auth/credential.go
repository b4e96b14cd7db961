// Package auth holds Custody's credentials: API keys, their stored form, the
// scopes and classes they carry, and how a request presents one.
//
// An API key is "ck_" followed by 40 random base62 characters. Only its
// SHA-256 is stored (as lowercase hex, the row key `CRED#<sha256>` / `CRED`),
// so the table never holds a usable secret. Each key has a stable credential
// id (what tasks, cursors and parked requests bind to, docs/decisions.md "Identity
// and binding"), a tenant, an owner principal, scopes, an optional matter
// allow-list, a credential class and a revoked flag. A key is re-resolved
// from the store on every request: nothing about authorization is cached.
//
// A second row per credential, `T#<tenant>` / `CRED#<credential-id>`, lists
// the tenant's credentials with strongly consistent reads (for custodyctl);
// both rows are written and revoked in one transaction.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/store"
)

// Scope is one permission a credential carries.
type Scope string

// The scopes of the issue "Authentication and access".
const (
	ScopeRead         Scope = "read"
	ScopeWrite        Scope = "write"
	ScopeDocsRead     Scope = "docs:read"
	ScopeTasksRead    Scope = "tasks:read"
	ScopeAnalysisRead Scope = "analysis:read"
	ScopeAdmin        Scope = "admin"
	// ScopeConformance sees only the conformance fixtures (tools, prompts,
	// resources the official suite expects), which exist only in the dev
	// server's loopback fixture profile.
	ScopeConformance Scope = "conformance"
)

// AllScopes lists every scope in a stable order.
var AllScopes = []Scope{ScopeRead, ScopeWrite, ScopeDocsRead, ScopeTasksRead, ScopeAnalysisRead, ScopeAdmin, ScopeConformance}

// ParseScopes parses a space- or comma-separated scope list, refusing
// unknown scopes. The result is sorted and free of duplicates.
func ParseScopes(s string) ([]Scope, error) {
	var out []Scope
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' }) {
		sc := Scope(f)
		if !slices.Contains(AllScopes, sc) {
			return nil, fmt.Errorf("unknown scope %q (known: %s)", f, joinScopes(AllScopes))
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	slices.Sort(out)
	return out, nil
}

func joinScopes(scopes []Scope) string {
	parts := make([]string, len(scopes))
	for i, s := range scopes {
		parts[i] = string(s)
	}
	return strings.Join(parts, " ")
}

// Class is a credential's class: what material it may ever see.
type Class string

// Credential classes. A client-safe credential never sees privileged or
// work-product material (docs/architecture.md request path, step 8).
const (
	ClassStandard   Class = "standard"
	ClassClientSafe Class = "client_safe"
)

// Credential is what a request presented, as resolved from the store.
type Credential struct {
	// ID is the stable credential id (never the secret or its hash).
	ID string
	// Tenant is the firm the credential belongs to.
	Tenant string
	// Owner is the principal who acts through the credential.
	Owner string
	// Scopes are sorted and distinct.
	Scopes []Scope
	// AllowList restricts the credential to these matter ids; nil means no
	// restriction, an empty non-nil list means no matter at all.
	AllowList []string
	Class     Class
	Revoked   bool
	// RateLimits overrides the configured per-minute limit of a lane
	// ("read", "expensive"); absent lanes use the defaults.
	RateLimits map[string]int
	Label      string
	CreatedAt  time.Time
	// KeyHash is the lowercase hex SHA-256 of the key (the row's key).
	KeyHash string
	// OAuth is set for a credential verified from an OAuth access token:
	// what the token said of itself (Reference records it).
	OAuth *OAuthClaims
}

// ClassScopes are the scopes a credential of class may hold, from those
// it was granted: a client-safe credential never holds write, whatever
// its token or row says (the class floor, docs/architecture.md "The
// request path", step 8). The result is a new slice.
func ClassScopes(class Class, scopes []Scope) []Scope {
	out := make([]Scope, 0, len(scopes))
	for _, s := range scopes {
		if class == ClassClientSafe && s == ScopeWrite {
			continue
		}
		out = append(out, s)
	}
	return out
}

// Has reports whether the credential carries the scope.
func (c *Credential) Has(s Scope) bool { return slices.Contains(c.Scopes, s) }

// ClientSafe reports whether the credential is of the client-safe class.
func (c *Credential) ClientSafe() bool { return c.Class == ClassClientSafe }

// LogValue prints the credential redacted: its id, tenant and class only.
func (c *Credential) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("credentialId", c.ID),
		slog.String("tenant", c.Tenant),
		slog.String("class", string(c.Class)),
	)
}

// KeyPrefix starts every API key.
const KeyPrefix = "ck_"

// keyLen is the number of random characters after the prefix.
const keyLen = 40

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewKey returns a fresh API key: "ck_" + 40 characters drawn uniformly from
// base62 with crypto/rand (about 238 bits).
func NewKey() string { return KeyPrefix + randomBase62(keyLen) }

// NewCredentialID returns a fresh credential id, "cred_" + 16 base62
// characters.
func NewCredentialID() string { return "cred_" + randomBase62(16) }

func randomBase62(n int) string {
	out := make([]byte, 0, n)
	var buf [64]byte
	for len(out) < n {
		if _, err := rand.Read(buf[:]); err != nil {
			panic("crypto/rand failed: " + err.Error()) // never on Linux (getrandom)
		}
		for _, b := range buf {
			// Rejection sampling keeps the distribution uniform: 248 = 4*62.
			if b < 248 && len(out) < n {
				out = append(out, base62[b%62])
			}
		}
	}
	return string(out)
}

// WellFormedKey reports whether s has the shape of an API key.
func WellFormedKey(s string) bool {
	if len(s) != len(KeyPrefix)+keyLen || !strings.HasPrefix(s, KeyPrefix) {
		return false
	}
	for i := len(KeyPrefix); i < len(s); i++ {
		if strings.IndexByte(base62, s[i]) < 0 {
			return false
		}
	}
	return true
}

// HashKey is the lowercase hex SHA-256 of a key: the only form stored.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// ErrTwoCredentials is Presented's refusal of a request that carries more
// than one credential: two Authorization header lines, two X-API-Key
// lines, or an Authorization and an X-API-Key that do not name the same
// bearer credential. A proxy or log reading the first line, or only one of
// the two headers, would see another caller than the one served, so the
// request is refused before either is resolved (RFC 6750 §3.1
// invalid_request: "uses more than one method for including an access
// token"; RFC 9110 §11.6.2: Authorization is one credential, not a list).
var ErrTwoCredentials = errors.New("auth: the request presents more than one credential")

// Presented returns the credential a request presents: the value of
// `Authorization: Bearer <credential>` (the scheme case-insensitive, RFC
// 9110 §11.1) or of `X-API-Key: <key>`, white space trimmed. present is
// false when neither header has a value. An Authorization of another
// scheme is present with an empty token (a credential of a scheme Custody
// does not take, answered with the bare challenge, RFC 6750 §3.1). A bearer
// value that is not an API key is returned as is (an OAuth token is told
// apart by its shape). The same key sent both as Authorization and as
// X-API-Key is one credential; any other second credential is
// ErrTwoCredentials.
func Presented(h http.Header) (token string, present bool, err error) {
	auths, keys := h.Values("Authorization"), h.Values("X-API-Key")
	if len(auths) > 1 || len(keys) > 1 {
		return "", false, ErrTwoCredentials
	}
	var bearer, key string
	var hasBearer, hasKey bool
	if len(auths) == 1 && auths[0] != "" {
		hasBearer = true
		scheme, rest, found := strings.Cut(auths[0], " ")
		if found && strings.EqualFold(scheme, "Bearer") {
			bearer = strings.TrimSpace(rest)
		}
	}
	if len(keys) == 1 && keys[0] != "" {
		hasKey, key = true, strings.TrimSpace(keys[0])
	}
	switch {
	case hasBearer && hasKey:
		if bearer == "" || bearer != key {
			return "", false, ErrTwoCredentials
		}
		return bearer, true, nil
	case hasBearer:
		return bearer, true, nil
	case hasKey:
		return key, true, nil
	}
	return "", false, nil
}

// CredentialKey is the row key of the credential whose key hashes to hash.
func CredentialKey(hash string) store.Key {
	return store.Key{PK: keyspace.CredentialPK(hash), SK: "CRED"}
}

// DirectoryKey is the tenant-listing row of a credential.
func DirectoryKey(tenant, credentialID string) store.Key {
	return store.Key{PK: keyspace.TenantPK(tenant), SK: "CRED#" + credentialID}
}

// Item encodes the credential's primary row.
func (c *Credential) Item() store.Item {
	attrs := map[string]any{
		"credential_id": c.ID,
		"tenant":        c.Tenant,
		"owner":         c.Owner,
		"scopes":        joinScopes(c.Scopes),
		"class":         string(c.Class),
		"revoked":       c.Revoked,
		"label":         c.Label,
		"created_at":    c.CreatedAt.UTC().Format(time.RFC3339Nano),
	}
	if c.AllowList != nil {
		attrs["allow_list"] = strings.Join(c.AllowList, " ")
		attrs["allow_list_set"] = true
	}
	for lane, n := range c.RateLimits {
		attrs["rate_"+lane] = int64(n)
	}
	k := CredentialKey(c.KeyHash)
	return store.Item{PK: k.PK, SK: k.SK, Version: 1, Attrs: attrs}
}

// DirectoryItem encodes the tenant-listing row of the credential.
func (c *Credential) DirectoryItem() store.Item {
	k := DirectoryKey(c.Tenant, c.ID)
	return store.Item{PK: k.PK, SK: k.SK, Version: 1, Attrs: map[string]any{
		"key_hash": c.KeyHash,
		"owner":    c.Owner,
		"label":    c.Label,
	}}
}

// DecodeCredential decodes a credential row.
func DecodeCredential(it store.Item) (*Credential, error) {
	scopes, err := ParseScopes(it.String("scopes"))
	if err != nil {
		return nil, fmt.Errorf("credential row %s: %w", it.Key(), err)
	}
	c := &Credential{
		ID:      it.String("credential_id"),
		Tenant:  it.String("tenant"),
		Owner:   it.String("owner"),
		Scopes:  scopes,
		Class:   Class(it.String("class")),
		Revoked: it.Bool("revoked"),
		Label:   it.String("label"),
		KeyHash: strings.TrimPrefix(it.PK, "CRED#"),
	}
	if c.ID == "" || c.Tenant == "" || c.Owner == "" {
		return nil, fmt.Errorf("credential row %s lacks id, tenant or owner", it.Key())
	}
	switch c.Class {
	case ClassStandard, ClassClientSafe:
	default:
		return nil, fmt.Errorf("credential row %s has unknown class %q", it.Key(), c.Class)
	}
	if it.Bool("allow_list_set") {
		c.AllowList = strings.Fields(it.String("allow_list"))
		if c.AllowList == nil {
			c.AllowList = []string{}
		}
	}
	for name, v := range it.Attrs {
		if lane, ok := strings.CutPrefix(name, "rate_"); ok {
			if n, ok := v.(int64); ok {
				if c.RateLimits == nil {
					c.RateLimits = map[string]int{}
				}
				c.RateLimits[lane] = int(n)
			}
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, it.String("created_at")); err == nil {
		c.CreatedAt = t
	}
	return c, nil
}
