package approvals

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/custodymcp/custody/shared/store"
)

// The page's rows (shared/keyspace: "sign-in link", "approval session",
// "OIDC sign-in state"), each keyed by the SHA-256 of a secret the browser
// or the link holds, so the table never holds one that works.

func signInKey(token string) store.Key { return store.Key{PK: "SIGNIN#" + digest(token), SK: "SIGNIN"} }
func sessionKey(value string) store.Key {
	return store.Key{PK: "APPSESS#" + digest(value), SK: "APPSESS"}
}
func oidcKey(state string) store.Key { return store.Key{PK: "OIDC#" + digest(state), SK: "OIDC"} }

// digest is the lowercase hex SHA-256 of a secret.
func digest(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// The secrets' shapes: a prefix naming what it is, then random hex.
const (
	// LinkPrefix starts a sign-in link's token: csl_ + 48 hex (24 bytes).
	LinkPrefix = "csl_"
	linkBytes  = 24
	// SessionPrefix starts a session cookie's value: cas_ + 64 hex.
	SessionPrefix = "cas_"
	sessionBytes  = 32
	// statePrefix starts an OIDC state; bindingPrefix the cookie that
	// binds the flow to its browser.
	statePrefix   = "cos_"
	bindingPrefix = "cob_"
	oidcBytes     = 32
)

// newSecret returns prefix + n random bytes in lowercase hex.
func newSecret(prefix string, n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return prefix + hex.EncodeToString(b)
}

// wellFormed reports whether s is prefix + n bytes of lowercase hex, so a
// malformed value costs no store read.
func wellFormed(s, prefix string, n int) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || len(rest) != 2*n {
		return false
	}
	for _, c := range rest {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
