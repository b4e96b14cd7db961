package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/uploads"
)

// Held uploads (issue 17): a firm administrator lists the uploads the scan
// gate held — infected (quarantined) or scan_failed (kept in verified/,
// never served) — and sends a scan_failed one back to be scanned again,
// the only way back to scan_pending (package uploads).

// RescanRequest is the body of POST /admin/uploads/{id}/rescan.
type RescanRequest struct {
	Tenant string `json:"tenant"`
	// By is the firm administrator asking (custodyctl --by).
	By string `json:"by"`
}

// RescanResult is the answer to a rescan.
type RescanResult struct {
	UploadID string        `json:"upload_id"`
	State    uploads.State `json:"state"`
}

// Rescan sends a scan_failed upload back to scan_pending (uploads.Rescan):
// the sweeper's copy duty then re-creates its object in verified/, where
// the scanner sees it again.
func Rescan(ctx context.Context, st store.Store, uploadID string, req RescanRequest, now time.Time) (RescanResult, error) {
	u, err := uploads.Rescan(ctx, st, req.Tenant, uploadID, req.By, now)
	if err != nil {
		return RescanResult{}, err
	}
	return RescanResult{UploadID: u.ID, State: u.State}, nil
}

// uploadRoutes adds GET /admin/uploads?tenant=…&state=… and POST
// /admin/uploads/{id}/rescan.
func uploadRoutes(mux *http.ServeMux, st store.Store, now func() time.Time) {
	mux.HandleFunc("GET /admin/uploads", func(w http.ResponseWriter, r *http.Request) {
		held, err := uploads.ListHeld(r.Context(), st, r.URL.Query().Get("tenant"), uploads.State(r.URL.Query().Get("state")))
		switch {
		case errors.Is(err, uploads.ErrNotHeld):
			writeErr(w, http.StatusBadRequest, "--state must be infected or scan_failed")
			return
		case err != nil:
			writeErr(w, http.StatusServiceUnavailable, "could not list uploads")
			return
		}
		if held == nil {
			held = []uploads.HeldUpload{}
		}
		writeJSON(w, http.StatusOK, held)
	})
	mux.HandleFunc("POST /admin/uploads/{id}/rescan", func(w http.ResponseWriter, r *http.Request) {
		var req RescanRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
			writeErr(w, http.StatusBadRequest, "the body must be a JSON rescan request")
			return
		}
		res, err := Rescan(r.Context(), st, r.PathValue("id"), req, now())
		switch {
		case errors.Is(err, uploads.ErrUnknownUpload):
			writeErr(w, http.StatusNotFound, "no such upload in that tenant")
		case errors.Is(err, uploads.ErrNotAdmin):
			writeErr(w, http.StatusBadRequest, err.Error())
		case errors.Is(err, uploads.ErrNotRescanable):
			writeErr(w, http.StatusConflict, err.Error())
		case err != nil:
			writeErr(w, http.StatusServiceUnavailable, "could not ask for the rescan")
		default:
			writeJSON(w, http.StatusOK, res)
		}
	})
}
