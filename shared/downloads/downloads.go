// Package downloads serves a document's stored file through a short-lived
// link (docs/contracts.md §5): get_document_download mints
// `<public base>/downloads/dlt_<48 hex>`, and a GET of it — which needs no
// key, so a browser or curl can follow it — re-checks everything and
// answers 303 to a 60-second presigned GET of the record bucket.
//
// The link is bound, by its hashed token row (`DLT#<sha256>` / `DLT`), to
// the credential that minted it and to one matter, document and version.
// Nothing about authority is taken from the row: each fetch re-admits the
// minting credential (gate.ReadmitWith: a revoked key, a removed owner or
// a frozen firm is refused), and re-runs the access funnel, the class floor
// and the review state on the rows as they are now, then audits the fetch
// in one write before it redirects. Every failure — unknown, expired or
// malformed token, refused credential, a matter no longer reached, a
// document withheld or gone, a store or S3 failure — is the same 404, so
// the answer tells a holder of a guessed or leaked link nothing.
//
// The redirect's Location names the record bucket and an opaque object key:
// docs/architecture.md's one stated exception to "nothing internal reaches a
// client", since a streamed Lambda response is too bandwidth-capped to
// proxy a large file, and the key (random hex) names nothing of the record.
//
// The token itself is returned once, in the tool's answer; only its SHA-256
// is stored, and neither reaches an audit row or a log line.
package downloads

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/store"
)

// Lives and shapes (docs/decisions.md "Time and size constants").
const (
	// LinkLife is how long a download link works.
	LinkLife = 5 * time.Minute
	// RedirectLife is the life of the presigned GET a fetch redirects to.
	RedirectLife = 60 * time.Second
	// TokenPrefix starts every download token; 48 lowercase hex digits
	// follow.
	TokenPrefix = "dlt_"
	tokenHexLen = 48
	// PathPrefix is where links are served on the /mcp function's router.
	PathPrefix = "/downloads/"
)

// NewToken returns a fresh download token from crypto/rand.
func NewToken() string {
	var b [tokenHexLen / 2]byte
	_, _ = rand.Read(b[:])
	return TokenPrefix + hex.EncodeToString(b[:])
}

// WellFormedToken reports whether s has a download token's shape.
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

// TokenKey is the key of the row of the token hashing to hash.
func TokenKey(hash string) store.Key { return store.Key{PK: "DLT#" + hash, SK: "DLT"} }

// Link is what a download token's row binds: the minting credential (by
// reference, and its key hash so the fetch reads its row in the batch it
// reads the record with), the document version, and what the redirect
// offers the browser.
type Link struct {
	Requester auth.Reference
	KeyHash   string
	Tenant    string
	Matter    string
	Document  string
	Version   int
	// ObjectKey is the version's stored file in the record bucket
	// ("obj/<hex>").
	ObjectKey string
	Filename  string
	MediaType string
	SHA256    string
	Size      int64
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Attributes of the token row.
const (
	attrRequester = "requested_by"
	attrKeyHash   = "key_hash"
	attrTenant    = "tenant"
	attrMatter    = "matter"
	attrDocument  = "document_id"
	attrVersion   = "document_version"
	attrObjectKey = "object_key"
	attrFilename  = "filename"
	attrMediaType = "media_type"
	attrSHA256    = "sha256"
	attrSize      = "size_bytes"
	attrCreatedAt = "created_at"
)

// Item is the token row of the token hashing to hash; it expires with the
// link.
func (l Link) Item(hash string) (store.Item, error) {
	ref, err := json.Marshal(l.Requester)
	if err != nil {
		return store.Item{}, fmt.Errorf("encode the link's requester: %w", err)
	}
	k := TokenKey(hash)
	return store.Item{PK: k.PK, SK: k.SK, Version: 1, ExpiresAt: l.ExpiresAt.Unix(), Attrs: map[string]any{
		attrRequester: string(ref), attrKeyHash: l.KeyHash, attrTenant: l.Tenant, attrMatter: l.Matter,
		attrDocument: l.Document, attrVersion: int64(l.Version), attrObjectKey: l.ObjectKey,
		attrFilename: l.Filename, attrMediaType: l.MediaType, attrSHA256: l.SHA256, attrSize: l.Size,
		attrCreatedAt: l.CreatedAt.UTC().Format(time.RFC3339Nano),
	}}, nil
}

// decodeLink reads a token row.
func decodeLink(it store.Item) (Link, error) {
	l := Link{
		KeyHash: it.String(attrKeyHash), Tenant: it.String(attrTenant), Matter: it.String(attrMatter),
		Document: it.String(attrDocument), Version: int(it.Int(attrVersion)), ObjectKey: it.String(attrObjectKey),
		Filename: it.String(attrFilename), MediaType: it.String(attrMediaType), SHA256: it.String(attrSHA256),
		Size: it.Int(attrSize), ExpiresAt: time.Unix(it.ExpiresAt, 0).UTC(),
	}
	if err := json.Unmarshal([]byte(it.String(attrRequester)), &l.Requester); err != nil {
		return Link{}, fmt.Errorf("token row: requester: %w", err)
	}
	if l.Tenant == "" || l.Matter == "" || l.Document == "" || l.Version < 1 || l.ObjectKey == "" {
		return Link{}, fmt.Errorf("token row lacks what it binds")
	}
	return l, nil
}
