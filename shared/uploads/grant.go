package uploads

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/sweep"
)

// Grant tokens and their life (docs/contracts.md §5; docs/decisions.md
// "Time and size constants").
const (
	// TokenPrefix starts every grant token; 48 lowercase hex digits (192
	// random bits) follow.
	TokenPrefix = "cgt_"
	tokenHexLen = 48
	// DefaultGrantTTL, MinGrantTTL and MaxGrantTTL bound a grant's life.
	DefaultGrantTTL = 24 * time.Hour
	MinGrantTTL     = 60 * time.Second
	MaxGrantTTL     = 7 * 24 * time.Hour
	// DefaultMaxOpen is how many uploads a grant may have open at once;
	// MaxMaxOpen bounds what a mint may ask for.
	DefaultMaxOpen = 3
	MaxMaxOpen     = 16
	// ListingRetention is how long a grant's listing row outlives the
	// grant, so `grant list` shows recently spent, revoked and expired ones.
	ListingRetention = 30 * 24 * time.Hour
)

// GrantState is a grant's state.
type GrantState string

// The grant states. Unspent is the only usable one; expired is what the
// listing reports for an unspent grant past its expiry (its row is gone).
const (
	GrantUnspent GrantState = "unspent"
	GrantSpent   GrantState = "spent"
	GrantRevoked GrantState = "revoked"
	GrantExpired GrantState = "expired"
)

// NewToken returns a fresh grant token: TokenPrefix and 48 hex digits from
// crypto/rand.
func NewToken() string {
	var b [tokenHexLen / 2]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	return TokenPrefix + hex.EncodeToString(b[:])
}

// WellFormedToken reports whether s has a grant token's shape.
func WellFormedToken(s string) bool {
	if len(s) != len(TokenPrefix)+tokenHexLen || s[:len(TokenPrefix)] != TokenPrefix {
		return false
	}
	for i := len(TokenPrefix); i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// HashToken is the lowercase hex SHA-256 of a token: the only form stored.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// GrantKey is the key of the grant row of the token hashing to hash.
func GrantKey(hash string) store.Key { return store.Key{PK: "CGT#" + hash, SK: "GRANT"} }

// GrantListingKey is the key of a grant's row in its tenant's listing.
func GrantListingKey(tenant, grantID string) store.Key {
	return store.Key{PK: keyspace.TenantPK(tenant), SK: "GRANT#" + grantID}
}

// Grant is a grant as its rows hold it.
type Grant struct {
	// ID names the grant in listings and revocations ("gnt_" + 16 hex).
	ID string
	// Hash is the SHA-256 of the token (the row's key).
	Hash         string
	Tenant       string
	CredentialID string
	Matter       string
	// MintedBy is the firm administrator who minted it.
	MintedBy  string
	CreatedAt time.Time
	ExpiresAt time.Time
	State     GrantState
	// MaxOpen and OpenUploads bound and count the uploads begun with it
	// and not yet ended (rejected, abandoned or spent).
	MaxOpen     int64
	OpenUploads int64
	// SpentBy is the upload that spent it.
	SpentBy string
	SpentAt time.Time
}

// Attributes of the grant rows.
const (
	attrGrantID     = "grant_id"
	attrTenant      = "tenant"
	attrCredential  = "credential_id"
	attrMatter      = "matter"
	attrMintedBy    = "minted_by"
	attrCreatedAt   = "created_at"
	attrExpires     = "expires"
	attrState       = "state"
	attrMaxOpen     = "max_open"
	attrOpenUploads = "open_uploads"
	attrSpentBy     = "spent_by"
	attrSpentAt     = "spent_at"
	attrGrantHash   = "grant_hash"
)

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// item is the grant's authoritative row; it expires with the grant.
func (g Grant) item() store.Item {
	k := GrantKey(g.Hash)
	return store.Item{PK: k.PK, SK: k.SK, Version: 1, ExpiresAt: g.ExpiresAt.Unix(), Attrs: map[string]any{
		attrGrantID: g.ID, attrTenant: g.Tenant, attrCredential: g.CredentialID, attrMatter: g.Matter,
		attrMintedBy: g.MintedBy, attrCreatedAt: formatTime(g.CreatedAt), attrExpires: formatTime(g.ExpiresAt),
		attrState: string(GrantUnspent), attrMaxOpen: g.MaxOpen, attrOpenUploads: int64(0),
	}}
}

// listingItem is the grant's row in its tenant's listing, in the sweeper
// index until the grant is spent or revoked, due when it expires
// (GrantExpiryDuty).
func (g Grant) listingItem() store.Item {
	k := GrantListingKey(g.Tenant, g.ID)
	pk, sk := sweep.IndexKeys(KindGrant, g.ID, g.ExpiresAt)
	return store.Item{PK: k.PK, SK: k.SK, GSI1PK: pk, GSI1SK: sk, Version: 1, ExpiresAt: g.ExpiresAt.Add(ListingRetention).Unix(), Attrs: map[string]any{
		attrGrantHash: g.Hash, attrCredential: g.CredentialID, attrMatter: g.Matter, attrMintedBy: g.MintedBy,
		attrCreatedAt: formatTime(g.CreatedAt), attrExpires: formatTime(g.ExpiresAt), attrState: string(GrantUnspent),
		attrMaxOpen: g.MaxOpen,
	}}
}

// decodeGrant reads a grant row (hash is its key's).
func decodeGrant(it store.Item) Grant {
	return Grant{
		ID: it.String(attrGrantID), Hash: it.PK[len("CGT#"):], Tenant: it.String(attrTenant),
		CredentialID: it.String(attrCredential), Matter: it.String(attrMatter), MintedBy: it.String(attrMintedBy),
		CreatedAt: parseTime(it.String(attrCreatedAt)), ExpiresAt: parseTime(it.String(attrExpires)),
		State: GrantState(it.String(attrState)), MaxOpen: it.Int(attrMaxOpen), OpenUploads: it.Int(attrOpenUploads),
		SpentBy: it.String(attrSpentBy), SpentAt: parseTime(it.String(attrSpentAt)),
	}
}

// boundTo reports whether the grant is bound to the credential and matter.
func (g Grant) boundTo(cred *auth.Credential, matter string) bool {
	return g.Tenant == cred.Tenant && g.CredentialID == cred.ID && g.Matter == matter
}

// MintRequest is what a firm administrator asks for.
type MintRequest struct {
	Tenant string
	// CredentialID is the API key the grant is bound to.
	CredentialID string
	// Matter is the one matter it deposits into.
	Matter string
	// By is the minting firm administrator (a principal of role admin).
	By string
	// TTL is the grant's life, within [MinGrantTTL, MaxGrantTTL]; 0 means
	// DefaultGrantTTL.
	TTL time.Duration
	// MaxOpen is how many uploads may be open at once, 1 to MaxMaxOpen; 0
	// means DefaultMaxOpen.
	MaxOpen int
}

// ErrMint is wrapped by every refusal of MintGrant that names what is
// wrong with the request (for custodyctl to show as is).
var ErrMint = errors.New("uploads: the grant cannot be minted")

// MintGrant checks a mint request and stores the grant's two rows in one
// transaction. It returns the token, shown once and never stored (only its
// SHA-256 is), and the grant. The checks (issue 16): By is a firm
// administrator of the tenant; the key is a live API key of the tenant,
// of the standard class, holding the write scope; its owner reaches the
// matter (access.Funnel: on its team, not screened, within the key's
// allow-list). A failed check is an error wrapping ErrMint that says
// which; a store failure is returned wrapped.
func MintGrant(ctx context.Context, st store.Store, req MintRequest, now time.Time) (string, Grant, error) {
	ttl := req.TTL
	if ttl == 0 {
		ttl = DefaultGrantTTL
	}
	if ttl < MinGrantTTL || ttl > MaxGrantTTL {
		return "", Grant{}, fmt.Errorf("%w: a grant lives from %v to %v, not %v", ErrMint, MinGrantTTL, MaxGrantTTL, ttl)
	}
	maxOpen := req.MaxOpen
	if maxOpen == 0 {
		maxOpen = DefaultMaxOpen
	}
	if maxOpen < 1 || maxOpen > MaxMaxOpen {
		return "", Grant{}, fmt.Errorf("%w: a grant allows 1 to %d open uploads, not %d", ErrMint, MaxMaxOpen, maxOpen)
	}
	if !records.ValidID(req.Tenant) || !records.ValidID(req.By) || !records.ValidID(req.CredentialID) || !records.ValidID(req.Matter) {
		return "", Grant{}, fmt.Errorf("%w: the tenant, --by, --key and --case must all be ids", ErrMint)
	}
	repo := records.NewRepo(st)
	by, err := repo.Principal(ctx, req.Tenant, req.By)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", Grant{}, fmt.Errorf("%w: tenant %q has no principal %q", ErrMint, req.Tenant, req.By)
	case err != nil:
		return "", Grant{}, fmt.Errorf("mint grant: %w", err)
	case by.Role != records.RoleAdmin:
		return "", Grant{}, fmt.Errorf("%w: %s is not a firm administrator (role %s); only a firm administrator mints grants", ErrMint, req.By, by.Role)
	}
	cred, err := apiKey(ctx, st, req.Tenant, req.CredentialID)
	if err != nil {
		return "", Grant{}, err
	}
	switch {
	case cred.Revoked:
		return "", Grant{}, fmt.Errorf("%w: the key %s is revoked", ErrMint, req.CredentialID)
	case !slices.Contains(cred.Scopes, auth.ScopeWrite):
		return "", Grant{}, fmt.Errorf("%w: the key %s lacks the write scope the upload tools need", ErrMint, req.CredentialID)
	case cred.ClientSafe():
		return "", Grant{}, fmt.Errorf("%w: the key %s is client-safe, and a client-safe key never writes", ErrMint, req.CredentialID)
	}
	if _, err := access.New(repo).Matter(ctx, access.WhoOf(cred), req.Matter); errors.Is(err, access.ErrNoMatter) {
		return "", Grant{}, fmt.Errorf("%w: the key's owner %s does not reach matter %q (no such matter, not on its team, screened, or outside the key's allow-list)",
			ErrMint, cred.Owner, req.Matter)
	} else if err != nil {
		return "", Grant{}, fmt.Errorf("mint grant: %w", err)
	}
	token := NewToken()
	var id [8]byte
	_, _ = rand.Read(id[:])
	g := Grant{
		ID: "gnt_" + hex.EncodeToString(id[:]), Hash: HashToken(token), Tenant: req.Tenant,
		CredentialID: cred.ID, Matter: req.Matter, MintedBy: req.By,
		CreatedAt: now.UTC(), ExpiresAt: now.UTC().Add(ttl).Truncate(time.Second),
		State: GrantUnspent, MaxOpen: int64(maxOpen),
	}
	if err := st.Transact(ctx, []store.Op{
		store.PutOp(g.item(), store.NotExists()),
		store.PutOp(g.listingItem(), store.NotExists()),
	}); err != nil {
		return "", Grant{}, fmt.Errorf("mint grant: %w", err)
	}
	return token, g, nil
}

// apiKey reads an API key of the tenant by its credential id.
func apiKey(ctx context.Context, st store.Store, tenant, id string) (*auth.Credential, error) {
	dir, err := st.Get(ctx, auth.DirectoryKey(tenant, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: tenant %q has no API key %s (custodyctl keys list)", ErrMint, tenant, id)
	}
	if err != nil {
		return nil, fmt.Errorf("mint grant: %w", err)
	}
	it, err := st.Get(ctx, auth.CredentialKey(dir.String("key_hash")))
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: tenant %q has no API key %s", ErrMint, tenant, id)
	}
	if err != nil {
		return nil, fmt.Errorf("mint grant: %w", err)
	}
	cred, err := auth.DecodeCredential(it)
	if err != nil {
		return nil, fmt.Errorf("mint grant: %w", err)
	}
	return cred, nil
}

// GrantInfo is a grant as `custodyctl grant list` shows it (no token, no
// hash).
type GrantInfo struct {
	ID           string     `json:"grant_id"`
	CredentialID string     `json:"credential_id"`
	Matter       string     `json:"case_id"`
	MintedBy     string     `json:"minted_by"`
	CreatedAt    time.Time  `json:"created_at"`
	ExpiresAt    time.Time  `json:"expires_at"`
	State        GrantState `json:"state"`
	MaxOpen      int64      `json:"max_open"`
	// OpenUploads is known while the grant lives (nil once its row is
	// gone).
	OpenUploads *int64 `json:"open_uploads"`
	SpentBy     string `json:"spent_by,omitempty"`
}

// ListGrants returns the tenant's grants by id, ended ones included for
// ListingRetention. A live grant's state and open uploads are its row's;
// once the row is gone with the grant's life, the listing's state (spent,
// revoked) or expired.
func ListGrants(ctx context.Context, st store.Store, tenant string) ([]GrantInfo, error) {
	var out []GrantInfo
	q := store.Query{PK: keyspace.TenantPK(tenant), SK: store.SortKeyCondition{Prefix: "GRANT#"}}
	for {
		page, err := st.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("list grants of %s: %w", tenant, err)
		}
		for start := 0; start < len(page.Items); start += store.MaxBatchGetKeys {
			batch := page.Items[start:min(start+store.MaxBatchGetKeys, len(page.Items))]
			keys := make([]store.Key, len(batch))
			for i, it := range batch {
				keys[i] = GrantKey(it.String(attrGrantHash))
			}
			rows, err := st.BatchGet(ctx, keys)
			if err != nil {
				return nil, fmt.Errorf("list grants of %s: %w", tenant, err)
			}
			for i, it := range batch {
				info := GrantInfo{
					ID: it.SK[len("GRANT#"):], CredentialID: it.String(attrCredential), Matter: it.String(attrMatter),
					MintedBy: it.String(attrMintedBy), CreatedAt: parseTime(it.String(attrCreatedAt)),
					ExpiresAt: parseTime(it.String(attrExpires)), State: GrantState(it.String(attrState)),
					MaxOpen: it.Int(attrMaxOpen), SpentBy: it.String(attrSpentBy),
				}
				if rows[i] != nil {
					g := decodeGrant(*rows[i])
					info.State, info.SpentBy, info.OpenUploads = g.State, g.SpentBy, &g.OpenUploads
				} else if info.State != GrantSpent && info.State != GrantRevoked {
					info.State = GrantExpired // the row is gone with its life
				}
				out = append(out, info)
			}
		}
		if page.NextToken == "" {
			return out, nil
		}
		q.PageToken = page.NextToken
	}
}

// Errors of RevokeGrant.
var (
	ErrUnknownGrant = errors.New("uploads: no such grant in that tenant")
	ErrGrantSpent   = errors.New("uploads: the grant was already spent")
	ErrGrantExpired = errors.New("uploads: the grant has expired")
)

// RevokeGrant marks an unspent grant revoked on both its rows in one
// transaction: every later begin_upload_session or complete_upload with it
// is refused GRANT_INVALID (spent false), and its open uploads can no
// longer spend it. Revoking a revoked grant succeeds; a spent one is
// ErrGrantSpent, an expired one ErrGrantExpired, an unknown id
// ErrUnknownGrant.
func RevokeGrant(ctx context.Context, st store.Store, tenant, grantID string, now time.Time) error {
	if !records.ValidID(tenant) || !records.ValidID(grantID) {
		return fmt.Errorf("revoke grant %s: %w", grantID, ErrUnknownGrant)
	}
	listing, err := st.Get(ctx, GrantListingKey(tenant, grantID))
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("revoke grant %s: %w", grantID, ErrUnknownGrant)
	}
	if err != nil {
		return fmt.Errorf("revoke grant %s: %w", grantID, err)
	}
	if GrantState(listing.String(attrState)) == GrantSpent {
		return fmt.Errorf("revoke grant %s: %w", grantID, ErrGrantSpent)
	}
	key := GrantKey(listing.String(attrGrantHash))
	revoked := store.Update{Set: map[string]any{attrState: string(GrantRevoked), "revoked_at": formatTime(now)}}
	unlisted := revoked
	empty := ""
	unlisted.GSI1PK, unlisted.GSI1SK = &empty, &empty // no longer due to expire
	err = st.Transact(ctx, []store.Op{
		store.UpdateOp(key, revoked, store.AttrEquals(attrState, string(GrantUnspent))),
		store.UpdateOp(listing.Key(), unlisted, store.Exists()),
	})
	if err == nil {
		return nil
	}
	var tx *store.TxCanceledError
	if !errors.As(err, &tx) || tx.Index != 0 {
		return fmt.Errorf("revoke grant %s: %w", grantID, err)
	}
	it, gerr := st.Get(ctx, key)
	switch {
	case errors.Is(gerr, store.ErrNotFound):
		return fmt.Errorf("revoke grant %s: %w", grantID, ErrGrantExpired)
	case gerr != nil:
		return fmt.Errorf("revoke grant %s: %w", grantID, gerr)
	}
	switch GrantState(it.String(attrState)) {
	case GrantRevoked:
		return nil
	case GrantSpent:
		return fmt.Errorf("revoke grant %s: %w", grantID, ErrGrantSpent)
	}
	return fmt.Errorf("revoke grant %s: %w", grantID, err)
}
