package mcp

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/store"
)

// Session is a 2025-era session: a store row minted at initialize, holding
// the negotiated revision and the client's declared capabilities, bound to
// the principal (not to a credential string, so any key or refreshed token
// of the same principal keeps it), with an absolute TTL. A session never
// authenticates: credentials come with every request (MCP basic/transports
// §Session Management; docs/decisions.md "Identity and binding").
type Session struct {
	ID        string `json:"-"`
	Tenant    string `json:"tenant"`
	Principal string `json:"principal"`
	// CredentialID is the credential that created the session (audit only;
	// the session is bound to the principal).
	CredentialID       string          `json:"credential_id"`
	Revision           Revision        `json:"revision"`
	ClientCapabilities json.RawMessage `json:"client_capabilities,omitempty"`
	ClientInfo         *Implementation `json:"client_info,omitempty"`
	CreatedAt          time.Time       `json:"created_at"`
	ExpiresAt          time.Time       `json:"-"`
	// LogLevel is the level logging/setLevel stored ("" until set); it is a
	// separate attribute so setting it is one small update.
	LogLevel string `json:"-"`
}

// NewSessionID returns 32 cryptographically random bytes as unpadded
// base64url: 43 visible ASCII characters (MCP basic/transports: "globally
// unique and cryptographically secure", visible ASCII 0x21–0x7E).
func NewSessionID() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ValidSessionID reports whether s could be a session id: 1–128 visible
// ASCII characters and no '#' (which would reach into the key space).
func ValidSessionID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e || s[i] == '#' {
			return false
		}
	}
	return true
}

// SessionPK is the partition of a session: its row, its parked questions
// (REQ#), its outbox (OUT#) and its subscriptions (SUB#).
func SessionPK(id string) string { return keyspace.SessionPK(id) }

// SessionKey is the row key of a session.
func SessionKey(id string) store.Key { return store.Key{PK: SessionPK(id), SK: "SESS"} }

// Item encodes the session row; the store expires it at ExpiresAt.
func (s *Session) Item() store.Item {
	data, _ := json.Marshal(s) // plain fields: cannot fail
	k := SessionKey(s.ID)
	return store.Item{PK: k.PK, SK: k.SK, Version: 1, ExpiresAt: s.ExpiresAt.Unix(),
		Attrs: map[string]any{"data": data}}
}

// DecodeSession decodes a session row.
func DecodeSession(it store.Item) (*Session, error) { return DecodeSessionWith(nil, it) }

// DecodeSessionWith is DecodeSession reusing the decoding of a row read
// before with identical bytes from c (nil: none; store.RowCache — the row
// itself is read on every request). The returned Session is the caller's;
// its ClientCapabilities and ClientInfo are shared with other copies and
// read-only.
func DecodeSessionWith(c *store.RowCache[Session], it store.Item) (*Session, error) {
	s, err := c.Decode(it, "data", func(b []byte) (Session, error) {
		var s Session
		err := json.Unmarshal(b, &s)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("decode session row %s: %w", it.Key(), err)
	}
	id, ok := strings.CutPrefix(it.PK, keyspace.SessionPK(""))
	if !ok {
		return nil, fmt.Errorf("decode session row %s: not a session partition", it.Key())
	}
	s.ID = id
	s.ExpiresAt = time.Unix(it.ExpiresAt, 0).UTC()
	s.LogLevel = it.String("log_level")
	return &s, nil
}
