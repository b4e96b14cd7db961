package mcp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// ErrBadCursor is every cursor refusal: unissued, edited, foreign, issued
// for another method or list, or expired. Callers answer -32602 (MCP
// server/utilities/pagination §Error Handling; docs/contracts.md §2).
var ErrBadCursor = errors.New("mcp: invalid cursor")

// CursorSealer issues and opens the opaque nextCursor of protocol-level
// lists. A cursor is base64url(JSON claims) "." base64url(HMAC-SHA-256 over
// the claims text) under a secret key. It is bound to the method, the
// calling credential id, the digest of the list's exact sorted key set and
// an expiry, so a cursor from another method, key, list or era — or an old
// one after the list changed — is refused rather than silently restarting.
type CursorSealer struct {
	key []byte
	ttl time.Duration
}

// NewCursorSealer returns a sealer. key must be at least 32 bytes; ttl is the
// cursor lifetime (docs/decisions.md: 1 h).
func NewCursorSealer(key []byte, ttl time.Duration) (*CursorSealer, error) {
	if len(key) < 32 {
		return nil, errors.New("cursor key must be at least 32 bytes")
	}
	return &CursorSealer{key: append([]byte(nil), key...), ttl: ttl}, nil
}

// CursorScope is what a cursor is bound to.
type CursorScope struct {
	Method       string
	CredentialID string
	// Keys is the list's exact set of item keys (e.g. tool names), sorted.
	Keys []string
	// Era is "legacy" or "2026" (a cursor issued in one era is refused in
	// the other).
	Era string
}

type cursorClaims struct {
	Method string `json:"m"`
	Cred   string `json:"c"`
	Keyset string `json:"k"`
	Era    string `json:"r"`
	Offset int    `json:"o"`
	// After is the last key of the page a position cursor ends (SealAfter).
	After string `json:"a,omitempty"`
	Exp   int64  `json:"e"`
}

func keysetDigest(keys []string) string {
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16])
}

// Seal returns a cursor that continues the list at offset.
func (s *CursorSealer) Seal(scope CursorScope, offset int, now time.Time) string {
	return s.seal(cursorClaims{
		Method: scope.Method, Cred: scope.CredentialID, Keyset: keysetDigest(scope.Keys),
		Era: scope.Era, Offset: offset, Exp: now.Add(s.ttl).Unix(),
	})
}

func (s *CursorSealer) seal(c cursorClaims) string {
	claims, _ := json.Marshal(c)
	payload := base64.RawURLEncoding.EncodeToString(claims)
	return payload + "." + base64.RawURLEncoding.EncodeToString(s.mac(payload))
}

// SealAfter returns a position cursor: one that continues a list after the
// key after. It is for lists read from the store in key order whose
// membership changes while they are paged (tasks/list: tasks are created
// and purged meanwhile), where an offset into an exact key set would
// refuse every cursor after a change; each item is still listed once,
// since the next page starts past after. scope.Keys is not bound.
func (s *CursorSealer) SealAfter(scope CursorScope, after string, now time.Time) string {
	return s.seal(cursorClaims{
		Method: scope.Method, Cred: scope.CredentialID, Keyset: keysetDigest(nil),
		Era: scope.Era, After: after, Exp: now.Add(s.ttl).Unix(),
	})
}

// OpenAfter verifies a position cursor against the scope (method,
// credential id, era, expiry) and returns the key it continues after, or
// ErrBadCursor. An offset cursor is refused here, as a position cursor is
// by Open.
func (s *CursorSealer) OpenAfter(cursor string, scope CursorScope, now time.Time) (string, error) {
	c, ok := s.claims(cursor)
	if !ok || c.After == "" || c.Offset != 0 || c.Method != scope.Method || c.Cred != scope.CredentialID ||
		c.Era != scope.Era || c.Keyset != keysetDigest(nil) || now.Unix() >= c.Exp {
		return "", ErrBadCursor
	}
	return c.After, nil
}

func (s *CursorSealer) mac(payload string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("custody-cursor-v1\x00"))
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// Open verifies a cursor against the scope and returns its offset, or
// ErrBadCursor.
func (s *CursorSealer) Open(cursor string, scope CursorScope, now time.Time) (int, error) {
	c, ok := s.claims(cursor)
	if !ok || c.After != "" {
		return 0, ErrBadCursor
	}
	if c.Method != scope.Method || c.Cred != scope.CredentialID || c.Era != scope.Era ||
		c.Keyset != keysetDigest(scope.Keys) || now.Unix() >= c.Exp || c.Offset <= 0 || c.Offset >= len(scope.Keys) {
		return 0, ErrBadCursor
	}
	return c.Offset, nil
}

// claims verifies a cursor's MAC and decodes its claims.
func (s *CursorSealer) claims(cursor string) (cursorClaims, bool) {
	var c cursorClaims
	payload, sig, ok := strings.Cut(cursor, ".")
	if !ok || len(cursor) > 1024 {
		return c, false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(payload)) {
		return c, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil || json.Unmarshal(raw, &c) != nil {
		return c, false
	}
	return c, true
}

// PageOf returns the page of keys that starts at cursor (nil: the first page)
// with at most size entries, and the cursor of the next page ("" on the last
// page: never an empty-string cursor on the wire). A cursor that does not
// open is ErrBadCursor.
func (s *CursorSealer) PageOf(cursor *string, scope CursorScope, size int, now time.Time) (start, end int, next string, err error) {
	if cursor != nil {
		if start, err = s.Open(*cursor, scope, now); err != nil {
			return 0, 0, "", err
		}
	}
	end = min(start+size, len(scope.Keys))
	if end < len(scope.Keys) {
		next = s.Seal(scope, end, now)
	}
	return start, end, next, nil
}
