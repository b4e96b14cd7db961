package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/custodymcp/custody/shared/approvals"
	"github.com/custodymcp/custody/shared/store"
)

// SignInRequest is the body of POST /admin/signin-links: a one-time sign-in
// link to the approval page for a principal (approvals.MintLink).
type SignInRequest struct {
	Tenant    string `json:"tenant"`
	Principal string `json:"principal"`
	// TTLSeconds is the link's life; 0 means approvals.DefaultLinkTTL.
	TTLSeconds int64 `json:"ttl_seconds,omitempty"`
}

// SignInLink is a minted link's secret, shown once: the page's URL is the
// server's public base + /approvals/signin?t=<token> (approvals.LinkURL).
type SignInLink struct {
	Token     string    `json:"token"`
	Tenant    string    `json:"tenant"`
	Principal string    `json:"principal"`
	ExpiresAt time.Time `json:"expires_at"`
}

// MintSignIn mints a sign-in link (approvals.MintLink): approvals.ErrLinkTTL
// for a life outside [1 min, 24 h], approvals.ErrUnknownPrincipal when the
// tenant has no such principal.
func MintSignIn(ctx context.Context, st store.Store, req SignInRequest, now time.Time) (SignInLink, error) {
	l, err := approvals.MintLink(ctx, st, approvals.LinkRequest{Tenant: req.Tenant, Principal: req.Principal,
		TTL: time.Duration(req.TTLSeconds) * time.Second}, now)
	if err != nil {
		return SignInLink{}, err
	}
	return SignInLink{Token: l.Token, Tenant: l.Tenant, Principal: l.Principal, ExpiresAt: l.ExpiresAt}, nil
}

func signInRoutes(mux *http.ServeMux, st store.Store, now func() time.Time) {
	mux.HandleFunc("POST /admin/signin-links", func(w http.ResponseWriter, r *http.Request) {
		var req SignInRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
			writeErr(w, http.StatusBadRequest, "the body must be a JSON sign-in link request")
			return
		}
		l, err := MintSignIn(r.Context(), st, req, now())
		switch {
		case errors.Is(err, approvals.ErrLinkTTL), errors.Is(err, approvals.ErrUnknownPrincipal):
			writeErr(w, http.StatusBadRequest, err.Error())
		case err != nil:
			writeErr(w, http.StatusServiceUnavailable, "the store could not complete the request; retry")
		default:
			writeJSON(w, http.StatusCreated, l)
		}
	})
}
