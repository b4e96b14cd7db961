package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Limits of a fetched JWK Set.
const (
	maxJWKSBytes = 1 << 20
	maxJWKSKeys  = 100
	minRSABits   = 2048
)

// keySet is the issuer's JWK Set (RFC 7517 §5), cached. Readers take mu's
// read lock only, so verifying with a cached key never waits for a fetch;
// fetchMu makes concurrent fetches one.
type keySet struct {
	url         string
	client      *http.Client
	timeout     time.Duration
	maxAge      time.Duration
	minInterval time.Duration
	logger      *slog.Logger

	fetchMu sync.Mutex

	mu        sync.RWMutex
	keys      []jose.JSONWebKey // public signing keys of the last good fetch
	fetchedAt time.Time         // of the last good fetch; zero before one
	attemptAt time.Time         // of the last attempt, good or not
	lastErr   error             // of the last attempt; nil when it was good
}

func newKeySet(cfg Config) *keySet {
	return &keySet{
		url: cfg.JWKSURL, client: cfg.HTTPClient, timeout: cfg.FetchTimeout,
		maxAge: cfg.RefreshInterval, minInterval: cfg.MinRefreshInterval, logger: cfg.Logger,
	}
}

// errUnknownKey is a lookup's "no key under that kid" (before a refresh).
var errUnknownKey = errors.New("no key with that kid")

// lookup returns the verification key for a token's kid and alg at now:
//
//   - a cached, fresh key is returned at once;
//   - a cached key of a set older than maxAge is returned after one
//     attempt to refresh the set (skipped when another request is already
//     fetching, or one attempt was made in the last minInterval); if the
//     refresh fails, the cached key still verifies (stale-if-error), if it
//     succeeds without the kid, the key was rotated out and the token is
//     invalid;
//   - an unknown kid triggers a fetch unless one was attempted in the last
//     minInterval; still unknown after a good fetch, the token is invalid;
//     unknown while the last attempt failed, the set is unavailable.
//
// A key that exists but does not fit alg is invalid, with no fetch.
func (ks *keySet) lookup(ctx context.Context, kid string, alg jose.SignatureAlgorithm, now time.Time) (any, error) {
	ks.mu.RLock()
	key, err := ks.find(kid, alg)
	fresh := !ks.fetchedAt.IsZero() && now.Sub(ks.fetchedAt) < ks.maxAge
	ks.mu.RUnlock()
	switch {
	case err == nil && fresh:
		return key, nil
	case err == nil:
		// Stale: refresh if no one else is, then look again.
		if ks.fetchMu.TryLock() {
			ks.refreshLocked(ctx, now)
			ks.fetchMu.Unlock()
		}
		ks.mu.RLock()
		defer ks.mu.RUnlock()
		if ks.lastErr != nil {
			return key, nil // stale-if-error: the cached key still verifies
		}
		return ks.findOrInvalid(kid, alg)
	case !errors.Is(err, errUnknownKey):
		return nil, err
	}
	ks.fetchMu.Lock()
	ks.refreshLocked(ctx, now)
	ks.fetchMu.Unlock()
	ks.mu.RLock()
	defer ks.mu.RUnlock()
	key, err = ks.find(kid, alg)
	switch {
	case err == nil:
		return key, nil
	case errors.Is(err, errUnknownKey) && ks.lastErr != nil:
		return nil, fmt.Errorf("verify token: %w: %v", ErrUnavailable, ks.lastErr)
	case errors.Is(err, errUnknownKey):
		return nil, invalid("the issuer's key set has no key %q", kid)
	}
	return nil, err
}

// findOrInvalid is find with an unknown kid reported as an invalid token.
// The caller holds mu.
func (ks *keySet) findOrInvalid(kid string, alg jose.SignatureAlgorithm) (any, error) {
	key, err := ks.find(kid, alg)
	if errors.Is(err, errUnknownKey) {
		return nil, invalid("the issuer's key set no longer has key %q", kid)
	}
	return key, err
}

// find returns the public key for kid that fits alg. A token without kid
// is verified only against a set of exactly one key (RFC 7515 §4.1.4 makes
// kid optional; with several keys, guessing would let a token pick). The
// caller holds mu.
func (ks *keySet) find(kid string, alg jose.SignatureAlgorithm) (any, error) {
	var candidates []jose.JSONWebKey
	switch {
	case kid != "":
		for _, k := range ks.keys {
			if k.KeyID == kid {
				candidates = append(candidates, k)
			}
		}
	case len(ks.keys) == 1:
		candidates = ks.keys
	case len(ks.keys) > 1:
		return nil, invalid("no kid, and the issuer has several keys")
	}
	if len(candidates) == 0 {
		return nil, errUnknownKey
	}
	for _, k := range candidates {
		if fits(k, alg) {
			return k.Key, nil
		}
	}
	return nil, invalid("key %q does not fit algorithm %s", kid, alg)
}

// fits reports whether a key may verify alg: the JWK's own "alg", when
// present, must be alg (RFC 7517 §4.4), and the key's type and curve must
// be the algorithm's (RFC 7518 §3.1, §3.4; RFC 8037 §3.1).
func fits(k jose.JSONWebKey, alg jose.SignatureAlgorithm) bool {
	if k.Algorithm != "" && k.Algorithm != string(alg) {
		return false
	}
	switch pub := k.Key.(type) {
	case *rsa.PublicKey:
		switch alg {
		case jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512:
			return true
		}
	case *ecdsa.PublicKey:
		switch alg {
		case jose.ES256:
			return pub.Curve == elliptic.P256()
		case jose.ES384:
			return pub.Curve == elliptic.P384()
		case jose.ES512:
			return pub.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == jose.EdDSA
	}
	return false
}

// refreshLocked fetches the set unless an attempt was made in the last
// minInterval (by this request's wait or another's), and records the
// outcome. A failed fetch keeps the cached keys. The caller holds fetchMu.
func (ks *keySet) refreshLocked(ctx context.Context, now time.Time) {
	ks.mu.RLock()
	recent := !ks.attemptAt.IsZero() && now.Sub(ks.attemptAt) < ks.minInterval
	ks.mu.RUnlock()
	if recent {
		return
	}
	// The fetch outlives a client that went away: others may be waiting on it.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ks.timeout)
	defer cancel()
	keys, err := ks.fetch(fctx)
	ks.mu.Lock()
	defer ks.mu.Unlock()
	ks.attemptAt, ks.lastErr = now, err
	if err != nil {
		ks.logger.Warn("oauth: fetch the issuer's JWKS", "url", ks.url, "err", err, "cachedKeys", len(ks.keys))
		return
	}
	ks.keys, ks.fetchedAt = keys, now
}

// fetch GETs the JWK Set and keeps its public signing keys: "use" absent or
// "sig", RSA of at least 2048 bits, EC on P-256/384/521, Ed25519. A key
// that does not parse, or of another kind, is skipped (an issuer may list
// encryption keys or newer key types beside its signing keys); a set with
// no usable key is an error. A private key's public half is kept.
func (ks *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ks.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := ks.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("JWKS answered HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read JWKS: %w", err)
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("JWKS is larger than %d bytes", maxJWKSBytes)
	}
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("JWKS is not a JWK Set: %w", err)
	}
	var keys []jose.JSONWebKey
	for _, raw := range doc.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil || !k.Valid() {
			continue
		}
		if !k.IsPublic() {
			k = k.Public()
		}
		if (k.Use != "" && k.Use != "sig") || !usable(k.Key) {
			continue
		}
		keys = append(keys, k)
		if len(keys) == maxJWKSKeys {
			break
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("JWKS has no usable signing key")
	}
	return keys, nil
}

// usable reports whether a public key is of a kind and size Custody
// verifies with.
func usable(key any) bool {
	switch pub := key.(type) {
	case *rsa.PublicKey:
		return pub.N.BitLen() >= minRSABits
	case *ecdsa.PublicKey:
		return pub.Curve == elliptic.P256() || pub.Curve == elliptic.P384() || pub.Curve == elliptic.P521()
	case ed25519.PublicKey:
		return len(pub) == ed25519.PublicKeySize
	}
	return false
}
