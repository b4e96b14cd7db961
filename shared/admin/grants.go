package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/uploads"
)

// Upload grants (issue 16): a firm administrator mints a single-use grant
// bound to one API key and one matter, lists the tenant's grants and
// revokes one (package uploads). The token is in the mint's answer once and
// nowhere else: no log line, no audit row, no listing.

// GrantRequest is the body of POST /admin/grants.
type GrantRequest struct {
	Tenant string `json:"tenant"`
	// CredentialID is the API key the grant binds (custodyctl --key).
	CredentialID string `json:"credential_id"`
	// CaseID is the one matter it deposits into (--case).
	CaseID string `json:"case_id"`
	// By is the minting firm administrator (--by).
	By string `json:"by"`
	// TTL is a Go duration ("24h", "90m"); "" means the default 24 h.
	TTL string `json:"ttl,omitempty"`
	// MaxOpen is the most uploads open at once; 0 means 3.
	MaxOpen int `json:"max_open,omitempty"`
}

// MintedGrant is the answer to a mint: the token, shown once.
type MintedGrant struct {
	Token string `json:"token"`
	uploads.GrantInfo
}

// MintGrant mints a grant (uploads.MintGrant). A request naming something
// that cannot be granted is an error wrapping uploads.ErrMint that says
// what; a TTL that is no duration is one too.
func MintGrant(ctx context.Context, st store.Store, req GrantRequest, now time.Time) (MintedGrant, error) {
	var ttl time.Duration
	if req.TTL != "" {
		d, err := time.ParseDuration(req.TTL)
		if err != nil {
			return MintedGrant{}, fmt.Errorf("%w: --ttl %q is not a duration such as 24h or 90m", uploads.ErrMint, req.TTL)
		}
		ttl = d
	}
	token, g, err := uploads.MintGrant(ctx, st, uploads.MintRequest{Tenant: req.Tenant, CredentialID: req.CredentialID,
		Matter: req.CaseID, By: req.By, TTL: ttl, MaxOpen: req.MaxOpen}, now)
	if err != nil {
		return MintedGrant{}, err
	}
	open := g.OpenUploads
	return MintedGrant{Token: token, GrantInfo: uploads.GrantInfo{
		ID: g.ID, CredentialID: g.CredentialID, Matter: g.Matter, MintedBy: g.MintedBy, CreatedAt: g.CreatedAt,
		ExpiresAt: g.ExpiresAt, State: g.State, MaxOpen: g.MaxOpen, OpenUploads: &open,
	}}, nil
}

// grantRoutes adds POST /admin/grants, GET /admin/grants?tenant=… and
// POST /admin/grants/{id}/revoke?tenant=….
func grantRoutes(mux *http.ServeMux, st store.Store, now func() time.Time) {
	mux.HandleFunc("POST /admin/grants", func(w http.ResponseWriter, r *http.Request) {
		var req GrantRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
			writeErr(w, http.StatusBadRequest, "the body must be a JSON grant request")
			return
		}
		m, err := MintGrant(r.Context(), st, req, now())
		switch {
		case errors.Is(err, uploads.ErrMint):
			writeErr(w, http.StatusBadRequest, err.Error())
		case err != nil:
			writeErr(w, http.StatusServiceUnavailable, "the store could not complete the request; retry")
		default:
			writeJSON(w, http.StatusCreated, m)
		}
	})
	mux.HandleFunc("GET /admin/grants", func(w http.ResponseWriter, r *http.Request) {
		grants, err := uploads.ListGrants(r.Context(), st, r.URL.Query().Get("tenant"))
		if err != nil {
			writeErr(w, http.StatusServiceUnavailable, "could not list grants")
			return
		}
		if grants == nil {
			grants = []uploads.GrantInfo{}
		}
		writeJSON(w, http.StatusOK, grants)
	})
	mux.HandleFunc("POST /admin/grants/{id}/revoke", func(w http.ResponseWriter, r *http.Request) {
		err := uploads.RevokeGrant(r.Context(), st, r.URL.Query().Get("tenant"), r.PathValue("id"), now())
		switch {
		case errors.Is(err, uploads.ErrUnknownGrant):
			writeErr(w, http.StatusNotFound, "no such grant in that tenant")
		case errors.Is(err, uploads.ErrGrantSpent):
			writeErr(w, http.StatusConflict, "that grant was already spent by an upload")
		case errors.Is(err, uploads.ErrGrantExpired):
			writeErr(w, http.StatusConflict, "that grant has already expired")
		case err != nil:
			writeErr(w, http.StatusServiceUnavailable, "could not revoke the grant")
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
}
