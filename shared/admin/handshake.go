package admin

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The admin endpoint's authentication, in both directions, without the
// admin token ever crossing the wire. The token is a secret file in the
// data folder that custodyctl and the dev server both read; the address
// custodyctl dials is another file there (admin-addr), which a crashed
// server leaves behind, so whatever process holds that port next must learn
// nothing from custodyctl and must not be believed. Every exchange is
// therefore:
//
//  1. custodyctl sends POST /admin/challenge {"client_nonce": Nc}, Nc 32
//     random bytes, base64url without padding; no credential.
//  2. The server answers {"server_nonce": Ns, "proof": P}, Ns 32 fresh
//     random bytes it remembers for NonceTTL, and
//     P = HMAC-SHA-256(token, "custody-admin-server-v1", port, Nc, Ns),
//     port being the TCP port the request reached it on.
//  3. custodyctl computes P itself, with the port it dialed; an answer
//     without the right P is ErrUnauthenticatedServer and nothing more is
//     sent. A relay to a real server on another port fails here too.
//  4. custodyctl sends its request with
//     Authorization: Custody-Admin nonce="Ns", mac="M",
//     M = HMAC-SHA-256(token, "custody-admin-request-v1", Ns, method,
//     request-target, hex SHA-256 of the body). The server takes Ns out of
//     its pending set (so each Ns serves one attempt) and runs the request
//     only when M matches.
//  5. The server's answer carries Custody-Admin-Proof: R,
//     R = HMAC-SHA-256(token, "custody-admin-response-v1", Ns, status,
//     hex SHA-256 of the body); custodyctl believes no answer without it, so
//     a process that took the port in between cannot report work as done.
//
// Each HMAC input is its fields joined by a NUL byte (no field holds one),
// each label naming its step, so no message can stand in for another. All
// values are base64url without padding.

// ChallengePath is the one admin route that needs no credential.
const ChallengePath = "/admin/challenge"

// NonceTTL is how long a server nonce may be used after its challenge.
const NonceTTL = time.Minute

// maxPendingNonces bounds the challenges answered and not yet used; a
// flood of challenges from a local process cannot grow the set further.
const maxPendingNonces = 1024

// nonceBytes is the length of every nonce.
const nonceBytes = 32

// Scheme is the Authorization scheme of an admin request.
const Scheme = "Custody-Admin"

// ProofHeader carries the server's proof of an answer.
const ProofHeader = "Custody-Admin-Proof"

// ChallengeRequest is the body of POST /admin/challenge.
type ChallengeRequest struct {
	ClientNonce string `json:"client_nonce"`
}

// ChallengeAnswer is the server's answer to a challenge.
type ChallengeAnswer struct {
	ServerNonce string `json:"server_nonce"`
	Proof       string `json:"proof"`
}

// Labels of the three MACs.
const (
	labelServer   = "custody-admin-server-v1"
	labelRequest  = "custody-admin-request-v1"
	labelResponse = "custody-admin-response-v1"
)

// mac is the base64url HMAC-SHA-256 under token of fields joined by NUL.
func mac(token string, fields ...string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(strings.Join(fields, "\x00")))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func bodyDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func serverProof(token, port, clientNonce, serverNonce string) string {
	return mac(token, labelServer, port, clientNonce, serverNonce)
}

func requestMAC(token, serverNonce, method, target string, body []byte) string {
	return mac(token, labelRequest, serverNonce, method, target, bodyDigest(body))
}

func responseMAC(token, serverNonce string, status int, body []byte) string {
	return mac(token, labelResponse, serverNonce, strconv.Itoa(status), bodyDigest(body))
}

// newNonce returns nonceBytes random bytes, base64url.
func newNonce() string {
	b := make([]byte, nonceBytes)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// validNonce reports whether s is nonceBytes bytes in base64url.
func validNonce(s string) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == nonceBytes
}

// authenticator is the server side: the token and the nonces issued and
// not yet used, each with its expiry (the dev server is one process, so the
// set lives in its memory).
type authenticator struct {
	token string
	now   func() time.Time

	mu      sync.Mutex
	pending map[string]time.Time
}

// issue records a fresh server nonce; false when too many are pending.
func (a *authenticator) issue() (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	if len(a.pending) >= maxPendingNonces {
		for n, exp := range a.pending {
			if !now.Before(exp) {
				delete(a.pending, n)
			}
		}
		if len(a.pending) >= maxPendingNonces {
			return "", false
		}
	}
	n := newNonce()
	a.pending[n] = now.Add(NonceTTL)
	return n, true
}

// take removes a pending nonce and reports whether it was live.
func (a *authenticator) take(n string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.pending[n]
	delete(a.pending, n)
	return ok && a.now().Before(exp)
}

// challenge answers POST /admin/challenge.
func (a *authenticator) challenge(w http.ResponseWriter, r *http.Request) {
	var req ChallengeRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<10)).Decode(&req); err != nil || !validNonce(req.ClientNonce) {
		writeErr(w, http.StatusBadRequest, "the body must be {\"client_nonce\": 32 random bytes in unpadded base64url}")
		return
	}
	n, ok := a.issue()
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(NonceTTL/time.Second)))
		writeErr(w, http.StatusServiceUnavailable, "too many admin challenges are pending; retry shortly")
		return
	}
	writeJSON(w, http.StatusOK, ChallengeAnswer{ServerNonce: n, Proof: serverProof(a.token, localPort(r), req.ClientNonce, n)})
}

// localPort is the TCP port the request reached this server on ("" when
// the handler is called without a connection).
func localPort(r *http.Request) string {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return ""
	}
	_, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return ""
	}
	return port
}

// parseAuthorization reads `Custody-Admin nonce="…", mac="…"` (RFC 9110
// §11.4 auth-params, in either order).
func parseAuthorization(v string) (nonce, m string, ok bool) {
	scheme, rest, found := strings.Cut(v, " ")
	if !found || !strings.EqualFold(scheme, Scheme) {
		return "", "", false
	}
	for _, p := range strings.Split(rest, ",") {
		name, value, found := strings.Cut(strings.TrimSpace(p), "=")
		if !found {
			return "", "", false
		}
		value = strings.TrimSuffix(strings.TrimPrefix(value, `"`), `"`)
		switch strings.ToLower(name) {
		case "nonce":
			nonce = value
		case "mac":
			m = value
		default:
			return "", "", false
		}
	}
	return nonce, m, nonce != "" && m != ""
}

// errUnauthorized answers a request whose authentication failed.
func errUnauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", Scheme+` realm="custody-admin"`)
	writeErr(w, http.StatusUnauthorized, "the request is not authenticated: custodyctl signs each request after a challenge (POST "+ChallengePath+")")
}

// authenticate runs next for a request whose MAC matches a live nonce, and
// signs its answer.
func (a *authenticator) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nonce, got, ok := parseAuthorization(r.Header.Get("Authorization"))
		if !ok || len(r.Header.Values("Authorization")) != 1 || !a.take(nonce) {
			errUnauthorized(w)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxImportBytes))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				writeErr(w, http.StatusRequestEntityTooLarge, "the body is larger than the admin endpoint takes")
				return
			}
			writeErr(w, http.StatusBadRequest, "the body could not be read")
			return
		}
		want := requestMAC(a.token, nonce, r.Method, r.RequestURI, body)
		if !hmac.Equal([]byte(got), []byte(want)) {
			errUnauthorized(w)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &recorder{header: http.Header{}}
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.Header().Set(ProofHeader, responseMAC(a.token, nonce, rec.status, rec.body.Bytes()))
		w.WriteHeader(rec.status)
		_, _ = w.Write(rec.body.Bytes())
	})
}

// recorder holds an answer until its proof is computed.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
