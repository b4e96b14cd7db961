package oauth_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/custodymcp/custody/shared/auth/oauth"
	"github.com/custodymcp/custody/shared/auth/oauth/oauthtest"
)

// The fuzz target's fixed world: an issuer identifier, a resource and a
// clock, and two keys kept in testdata (test-only keys, their PEM type
// renamed "TESTING KEY" so no scanner takes them for secrets) so that the
// seed corpus holds tokens that really verify and the fuzzer mutates from
// there.
const (
	fuzzIssuer = "https://issuer.fuzz.example"
	fuzzBase   = "https://custody.fuzz.example"
)

var (
	fuzzNow     = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	updateSeeds = flag.Bool("update-seeds", false, "rewrite testdata/fuzz/FuzzVerifyToken from the fixed keys")
)

type fuzzKeys struct {
	EC  *ecdsa.PrivateKey
	RSA *rsa.PrivateKey
}

func loadFuzzKeys(t testing.TB) fuzzKeys {
	t.Helper()
	load := func(name string) any {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode([]byte(strings.ReplaceAll(string(raw), "TESTING KEY", "PRIVATE KEY")))
		if block == nil {
			t.Fatalf("%s holds no PEM block", name)
		}
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return k
	}
	return fuzzKeys{EC: load("fuzz-es256.pem").(*ecdsa.PrivateKey), RSA: load("fuzz-rs256.pem").(*rsa.PrivateKey)}
}

// fuzzVerifier serves the fixed keys' JWKS on loopback and verifies for
// the fixed issuer and resource.
func fuzzVerifier(t testing.TB, keys fuzzKeys) *oauth.Verifier {
	t.Helper()
	set, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &keys.EC.PublicKey, KeyID: oauthtest.ECKeyID, Algorithm: "ES256", Use: "sig"},
		{Key: &keys.RSA.PublicKey, KeyID: oauthtest.RSAKeyID, Algorithm: "RS256", Use: "sig"},
	}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(set) }))
	t.Cleanup(srv.Close)
	v, err := oauth.New(oauth.Config{Issuer: fuzzIssuer, JWKSURL: srv.URL, PublicBaseURL: fuzzBase, AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// FuzzVerifyToken feeds arbitrary strings to Verify: it never panics, it
// refuses with ErrInvalidToken or ErrInsufficientScope only (the JWKS is
// up), and whenever it gets as far as a verified signature (a credential,
// or insufficient_scope) the token carries a valid ES256 or RS256 signature
// of one of the fixed keys over its header and payload, checked here with
// crypto/ecdsa and crypto/rsa directly, not through go-jose. The seeds are
// in testdata/fuzz/FuzzVerifyToken (-update-seeds rewrites them).
func FuzzVerifyToken(f *testing.F) {
	keys := loadFuzzKeys(f)
	v := fuzzVerifier(f, keys)
	f.Fuzz(func(t *testing.T, token string) {
		cred, err := v.Verify(context.Background(), token, fuzzNow)
		switch {
		case err == nil && cred == nil:
			t.Fatal("Verify() = nil, nil")
		case err != nil && cred != nil:
			t.Fatalf("Verify() = %v, %v: a credential with an error", cred, err)
		case err != nil && !errors.Is(err, oauth.ErrInvalidToken) && !errors.Is(err, oauth.ErrInsufficientScope):
			t.Fatalf("Verify() error = %v, want ErrInvalidToken or ErrInsufficientScope", err)
		}
		if (err == nil || errors.Is(err, oauth.ErrInsufficientScope)) && !validSignature(token, keys) {
			t.Fatalf("Verify(%q) = %v, %v without a valid signature", token, cred, err)
		}
	})
}

// validSignature checks a compact JWS's signature independently: the
// signing input is the canonical base64url of the decoded header and
// payload (RFC 7515 §5.2; go-jose, like most libraries, re-encodes what it
// decoded, so non-canonical trailing bits do not matter).
func validSignature(token string, keys fuzzKeys) bool {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return false
	}
	enc := base64.RawURLEncoding
	header, err1 := enc.DecodeString(parts[0])
	payload, err2 := enc.DecodeString(parts[1])
	sig, err3 := enc.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return false
	}
	var h struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(header, &h) != nil {
		return false
	}
	sum := sha256.Sum256([]byte(enc.EncodeToString(header) + "." + enc.EncodeToString(payload)))
	switch h.Alg {
	case "ES256":
		if len(sig) != 64 {
			return false
		}
		r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
		return ecdsa.Verify(&keys.EC.PublicKey, sum[:], r, s)
	case "RS256":
		return rsa.VerifyPKCS1v15(&keys.RSA.PublicKey, crypto.SHA256, sum[:], sig) == nil
	}
	return false
}

// TestFuzzSeedsVerifyAsLabelled runs the seed corpus's labelled cases: the
// valid seeds verify (so the fuzzer starts from tokens that pass), the
// others are refused. With -update-seeds it first rewrites the corpus.
func TestFuzzSeedsVerifyAsLabelled(t *testing.T) {
	keys := loadFuzzKeys(t)
	dir := filepath.Join("testdata", "fuzz", "FuzzVerifyToken")
	if *updateSeeds {
		writeSeeds(t, dir, keys)
	}
	v := fuzzVerifier(t, keys)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 10 {
		t.Fatalf("%d seeds in %s, want at least 10", len(entries), dir)
	}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		token := seedValue(t, string(raw))
		_, err = v.Verify(context.Background(), token, fuzzNow)
		switch {
		case strings.HasPrefix(e.Name(), "valid-") && err != nil:
			t.Errorf("seed %s: Verify() error = %v, want a credential", e.Name(), err)
		case strings.HasPrefix(e.Name(), "scope-") && !errors.Is(err, oauth.ErrInsufficientScope):
			t.Errorf("seed %s: Verify() error = %v, want ErrInsufficientScope", e.Name(), err)
		case strings.HasPrefix(e.Name(), "invalid-") && !errors.Is(err, oauth.ErrInvalidToken):
			t.Errorf("seed %s: Verify() error = %v, want ErrInvalidToken", e.Name(), err)
		}
	}
}

// seedValue decodes a corpus file ("go test fuzz v1" + one string(...)).
func seedValue(t *testing.T, file string) string {
	t.Helper()
	_, arg, ok := strings.Cut(strings.TrimSpace(file), "\nstring(")
	if !ok || !strings.HasSuffix(arg, ")") {
		t.Fatalf("not a one-string corpus file: %q", file)
	}
	var s string
	if _, err := fmt.Sscanf(strings.TrimSuffix(arg, ")"), "%q", &s); err != nil {
		t.Fatalf("corpus value %q: %v", arg, err)
	}
	return s
}

func writeSeeds(t *testing.T, dir string, keys fuzzKeys) {
	t.Helper()
	good := oauthtest.Claims{
		"iss": fuzzIssuer, "sub": "u_attorney", "aud": fuzzBase + "/mcp", "client_id": "fuzz-client",
		"iat": fuzzNow.Unix(), "nbf": fuzzNow.Unix(), "exp": fuzzNow.Add(time.Hour).Unix(), "jti": "seed",
		"scope": "custody:mcp custody:read custody:docs", "custody_tenant": "firm",
	}
	es := func(c oauthtest.Claims) string {
		return oauthtest.SignWith(t, jose.ES256, keys.EC, oauthtest.ECKeyID, c)
	}
	rs := func(c oauthtest.Claims) string {
		return oauthtest.SignWith(t, jose.RS256, keys.RSA, oauthtest.RSAKeyID, c)
	}
	hs := func(c oauthtest.Claims) string {
		der, _ := x509.MarshalPKIXPublicKey(&keys.RSA.PublicKey)
		return oauthtest.SignWith(t, jose.HS256, der, oauthtest.RSAKeyID, c)
	}
	valid := es(good)
	swapped := strings.Split(valid, ".")
	swapped[1] = strings.Split(es(good.With("custody_tenant", "other-firm")), ".")[1]
	seeds := map[string]string{
		"valid-es256":                valid,
		"valid-rs256":                rs(good),
		"valid-scp-list":             es(good.With("scope", nil).With("scp", []string{"custody:mcp", "custody:tasks"})),
		"valid-client-safe":          rs(good.With("custody_class", "client_safe").With("aud", []string{"x", fuzzBase + "/mcp"})),
		"scope-missing-required":     es(good.With("scope", "custody:read")),
		"invalid-none":               oauthtest.Unsigned(good),
		"invalid-hs256-public-key":   hs(good),
		"invalid-expired":            es(good.With("exp", fuzzNow.Add(-time.Hour).Unix())),
		"invalid-audience":           rs(good.With("aud", "https://elsewhere.example/mcp")),
		"invalid-issuer":             es(good.With("iss", "https://issuer.evil.example")),
		"invalid-no-tenant":          es(good.With("custody_tenant", nil)),
		"invalid-payload-swapped":    strings.Join(swapped, "."),
		"invalid-truncated":          valid[:len(valid)/2],
		"invalid-json-serialization": `{"payload":"e30","protected":"eyJhbGciOiJFUzI1NiJ9","signature":""}`,
		"invalid-empty":              "",
		"invalid-dots":               "..",
		"invalid-api-key-shape":      "ck_0123456789abcdefghijABCDEFGHIJ0123456789",
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, tok := range seeds {
		body := fmt.Sprintf("go test fuzz v1\nstring(%q)\n", tok)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
