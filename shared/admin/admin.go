// Package admin is the local all-in-one server's administration endpoint:
// mint, list and revoke API keys and upload grants, create a tenant, import
// a fixture, change a matter's ethical-wall screens and mint approval-page
// sign-in links while the server holds the embedded
// store's file lock (docs/decisions.md "Storage": custodyctl against a running
// dev server goes through it). The same operations are exported as
// functions for custodyctl to run directly on a store it can open.
//
// It is loopback-only by construction and never mounted in a Lambda
// handler: every request must come to a loopback Host and carry no Origin
// (so no browser page can reach it), and be signed with the admin token (a
// 0600 file in the data folder) after the server proved it holds the same
// token (handshake.go): the token itself never crosses the wire, so a
// process that took over the port of a crashed server, whose address file
// remains, learns nothing from custodyctl and is not believed (Client).
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
)

// MintRequest is the body of POST /admin/keys.
type MintRequest struct {
	Tenant     string         `json:"tenant"`
	Owner      string         `json:"owner"`
	Scopes     string         `json:"scopes"`
	AllowList  []string       `json:"allow_list,omitempty"`
	Class      string         `json:"class,omitempty"`
	Label      string         `json:"label,omitempty"`
	RateLimits map[string]int `json:"rate_limits,omitempty"`
}

// KeyInfo describes a credential without its secret.
type KeyInfo struct {
	CredentialID string    `json:"credential_id"`
	Tenant       string    `json:"tenant"`
	Owner        string    `json:"owner"`
	Scopes       []string  `json:"scopes"`
	AllowList    []string  `json:"allow_list,omitempty"`
	Class        string    `json:"class"`
	Revoked      bool      `json:"revoked"`
	Label        string    `json:"label,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
}

// Minted is the answer to a mint: the key, shown once.
type Minted struct {
	Key string `json:"key"`
	KeyInfo
}

// Info describes a credential.
func Info(c *auth.Credential) KeyInfo {
	scopes := make([]string, len(c.Scopes))
	for i, s := range c.Scopes {
		scopes[i] = string(s)
	}
	return KeyInfo{CredentialID: c.ID, Tenant: c.Tenant, Owner: c.Owner, Scopes: scopes,
		AllowList: c.AllowList, Class: string(c.Class), Revoked: c.Revoked, Label: c.Label, CreatedAt: c.CreatedAt}
}

// Route is a route the server adds to the admin endpoint (the dev server's
// POST /admin/sweep), served under the same guard and signature as the
// endpoint's own.
type Route struct {
	Pattern string // an http.ServeMux pattern, "POST /admin/…"
	Handler http.HandlerFunc
}

// Handler serves /admin/keys (GET ?tenant=…, POST),
// /admin/keys/{id}/revoke (POST ?tenant=…), the record's administration
// (records.go): /admin/tenants, /admin/import and /admin/screens (POST),
// the approval page's sign-in links (signin.go): /admin/signin-links (POST),
// the upload grants (grants.go): /admin/grants (GET ?tenant=…, POST) and
// /admin/grants/{id}/revoke (POST ?tenant=…), the uploads the scan gate
// held (uploads.go): /admin/uploads (GET ?tenant=…&state=…) and
// /admin/uploads/{id}/rescan (POST),
// the autonomy settings (autonomy.go: GET and POST /admin/autonomy), the
// firm's outbox and the decision ledger's check (approvals.go: GET
// /admin/outbox, POST /admin/outbox/{id}/ack, GET /admin/ledger/verify),
// and the extra routes, each only when signed after a challenge, and POST
// /admin/challenge, the one route that takes no credential (handshake.go).
// token is the data folder's admin token; now dates nonces and records.
func Handler(st store.Store, token string, now func() time.Time, extra ...Route) http.Handler {
	mux := http.NewServeMux()
	for _, r := range extra {
		mux.HandleFunc(r.Pattern, r.Handler)
	}
	mux.HandleFunc("GET /admin/keys", func(w http.ResponseWriter, r *http.Request) {
		creds, err := auth.List(r.Context(), st, r.URL.Query().Get("tenant"))
		if err != nil {
			writeErr(w, http.StatusServiceUnavailable, "could not list keys")
			return
		}
		out := make([]KeyInfo, len(creds))
		for i, c := range creds {
			out[i] = Info(c)
		}
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("POST /admin/keys", func(w http.ResponseWriter, r *http.Request) {
		var req MintRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
			writeErr(w, http.StatusBadRequest, "the body must be a JSON mint request")
			return
		}
		key, cred, err := Mint(r.Context(), st, req, now())
		switch {
		case errors.Is(err, store.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
			writeErr(w, http.StatusServiceUnavailable, "the store could not complete the request; retry")
			return
		case err != nil: // the request names something wrong: say what
			writeErr(w, http.StatusBadRequest, err.Error())
			return
		}
		writeJSON(w, http.StatusCreated, Minted{Key: key, KeyInfo: Info(cred)})
	})
	mux.HandleFunc("POST /admin/keys/{id}/revoke", func(w http.ResponseWriter, r *http.Request) {
		err := auth.Revoke(r.Context(), st, r.URL.Query().Get("tenant"), r.PathValue("id"))
		switch {
		case errors.Is(err, auth.ErrUnknownCredential):
			writeErr(w, http.StatusNotFound, "no such credential in that tenant")
		case err != nil:
			writeErr(w, http.StatusServiceUnavailable, "could not revoke the key")
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	recordRoutes(mux, st, now)
	signInRoutes(mux, st, now)
	grantRoutes(mux, st, now)
	uploadRoutes(mux, st, now)
	documentRoutes(mux, st, now)
	autonomyRoutes(mux, st, now)
	approvalRoutes(mux, st, now)
	return guard(&authenticator{token: token, now: now, pending: map[string]time.Time{}}, mux)
}

// Mint validates a mint request and mints the key. Besides auth.Mint's own
// checks, what the key names must exist in the record: the tenant, the
// owner as one of its principals, and every matter of the allow-list — a
// key for a misspelled name would work and reach nothing.
func Mint(ctx context.Context, st store.Store, req MintRequest, now time.Time) (string, *auth.Credential, error) {
	scopes, err := auth.ParseScopes(req.Scopes)
	if err != nil {
		return "", nil, err
	}
	if err := mintable(ctx, records.NewRepo(st), req); err != nil {
		return "", nil, err
	}
	return auth.Mint(ctx, st, auth.MintRequest{
		Tenant: req.Tenant, Owner: req.Owner, Scopes: scopes, AllowList: req.AllowList,
		Class: auth.Class(req.Class), Label: req.Label, RateLimits: req.RateLimits,
	}, now)
}

// mintable checks that the tenant, the owner and the allow-listed matters
// of a mint request exist.
func mintable(ctx context.Context, repo *records.Repo, req MintRequest) error {
	missing := func(err error) bool { return errors.Is(err, store.ErrNotFound) }
	if _, err := repo.Tenant(ctx, req.Tenant); missing(err) {
		return fmt.Errorf("tenant %q does not exist (create it with custodyctl tenant create, or import its record)", req.Tenant)
	} else if err != nil {
		return err
	}
	if _, err := repo.Principal(ctx, req.Tenant, req.Owner); missing(err) {
		return fmt.Errorf("tenant %q has no principal %q", req.Tenant, req.Owner)
	} else if err != nil {
		return err
	}
	for _, id := range req.AllowList {
		if _, err := repo.Matter(ctx, req.Tenant, id); missing(err) {
			return fmt.Errorf("tenant %q has no matter %q (allow-list)", req.Tenant, id)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// guard admits only Origin-less requests to a loopback Host, and of those
// only challenges and requests signed after one (handshake.go).
func guard(a *authenticator, next http.Handler) http.Handler {
	signed := a.authenticate(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" || !loopbackHost(r.Host) {
			writeErr(w, http.StatusForbidden, "the admin endpoint is loopback-only")
			return
		}
		if r.URL.Path == ChallengePath {
			if r.Method != http.MethodPost {
				w.Header().Set("Allow", http.MethodPost)
				writeErr(w, http.StatusMethodNotAllowed, "a challenge is a POST")
				return
			}
			a.challenge(w, r)
			return
		}
		signed.ServeHTTP(w, r)
	})
}

func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
