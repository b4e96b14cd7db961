package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/store"
)

// ErrClientSafeWrite: a client-safe credential never holds the write scope
// (docs/architecture.md "The request path", step 8: the class floor).
var ErrClientSafeWrite = errors.New("a client_safe key cannot hold the write scope")

// ErrUnknownCredential: no credential with that id in the tenant.
var ErrUnknownCredential = errors.New("auth: unknown credential")

// MintRequest describes a key to mint.
type MintRequest struct {
	Tenant     string
	Owner      string
	Scopes     []Scope
	AllowList  []string // nil: unrestricted
	Class      Class    // "" means standard
	Label      string
	RateLimits map[string]int
}

// Mint creates a key and stores its two rows in one transaction. The key is
// returned once and never stored; only its SHA-256 is.
func Mint(ctx context.Context, st store.Store, req MintRequest, now time.Time) (key string, cred *Credential, err error) {
	if req.Tenant == "" || req.Owner == "" {
		return "", nil, errors.New("mint key: tenant and owner are required")
	}
	if len(req.Scopes) == 0 {
		return "", nil, errors.New("mint key: at least one scope is required")
	}
	class := req.Class
	if class == "" {
		class = ClassStandard
	}
	if class != ClassStandard && class != ClassClientSafe {
		return "", nil, fmt.Errorf("mint key: unknown class %q", class)
	}
	if class == ClassClientSafe && slices.Contains(req.Scopes, ScopeWrite) {
		return "", nil, fmt.Errorf("mint key: %w", ErrClientSafeWrite)
	}
	scopes := slices.Clone(req.Scopes)
	slices.Sort(scopes)
	scopes = slices.Compact(scopes)
	key = NewKey()
	cred = &Credential{
		ID: NewCredentialID(), Tenant: req.Tenant, Owner: req.Owner,
		Scopes: scopes, AllowList: req.AllowList, Class: class,
		RateLimits: req.RateLimits, Label: req.Label,
		CreatedAt: now.UTC(), KeyHash: HashKey(key),
	}
	err = st.Transact(ctx, []store.Op{
		store.PutOp(cred.Item(), store.NotExists()),
		store.PutOp(cred.DirectoryItem(), store.NotExists()),
	})
	if err != nil {
		return "", nil, fmt.Errorf("mint key for %s: %w", req.Owner, err)
	}
	return key, cred, nil
}

// Revoke marks the credential revoked on both rows in one transaction. The
// next request with the key fails authentication. Revoking twice succeeds.
func Revoke(ctx context.Context, st store.Store, tenant, credentialID string) error {
	dir, err := st.Get(ctx, DirectoryKey(tenant, credentialID))
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("revoke %s: %w", credentialID, ErrUnknownCredential)
	}
	if err != nil {
		return fmt.Errorf("revoke %s: %w", credentialID, err)
	}
	revoked := store.Update{Set: map[string]any{"revoked": true}}
	err = st.Transact(ctx, []store.Op{
		store.UpdateOp(CredentialKey(dir.String("key_hash")), revoked, store.Exists()),
		store.UpdateOp(dir.Key(), revoked, store.Exists()),
	})
	if err != nil {
		return fmt.Errorf("revoke %s: %w", credentialID, err)
	}
	return nil
}

// List returns the tenant's credentials (revoked ones included), by id.
func List(ctx context.Context, st store.Store, tenant string) ([]*Credential, error) {
	var out []*Credential
	q := store.Query{PK: keyspace.TenantPK(tenant), SK: store.SortKeyCondition{Prefix: "CRED#"}}
	for {
		page, err := st.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("list credentials of %s: %w", tenant, err)
		}
		keys := make([]store.Key, len(page.Items))
		for i, it := range page.Items {
			keys[i] = CredentialKey(it.String("key_hash"))
		}
		for start := 0; start < len(keys); start += store.MaxBatchGetKeys {
			batch := keys[start:min(start+store.MaxBatchGetKeys, len(keys))]
			rows, err := st.BatchGet(ctx, batch)
			if err != nil {
				return nil, fmt.Errorf("list credentials of %s: %w", tenant, err)
			}
			for _, row := range rows {
				if row == nil {
					continue
				}
				c, err := DecodeCredential(*row)
				if err != nil {
					return nil, err
				}
				out = append(out, c)
			}
		}
		if page.NextToken == "" {
			break
		}
		q.PageToken = page.NextToken
	}
	return out, nil
}
