package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/resources"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/subscriptions"
)

// The record's administration beside the keys': a new tenant, an import in
// the seed format, an ethical-wall screen. custodyctl runs these functions
// directly on a store it can open (the DynamoDB table, a stopped dev
// server's file), and through the routes below against a running dev server
// that holds the file engine's lock.

// TenantRequest is the body of POST /admin/tenants.
type TenantRequest struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// TenantInfo describes a tenant.
type TenantInfo struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// CreateTenant creates a tenant (records.CreateTenant): store.ErrExists when
// it exists, records.ErrInvalid for a bad id or an empty name.
func CreateTenant(ctx context.Context, st store.Store, req TenantRequest, now time.Time) (TenantInfo, error) {
	if req.Name == "" {
		return TenantInfo{}, fmt.Errorf("create tenant: a name is required: %w", records.ErrInvalid)
	}
	t, err := records.CreateTenant(ctx, st, req.ID, req.Name, now)
	if errors.Is(err, store.ErrExists) {
		return TenantInfo{}, fmt.Errorf("tenant %s already exists: %w", req.ID, store.ErrExists)
	}
	if err != nil {
		return TenantInfo{}, err
	}
	return TenantInfo{ID: t.ID, Name: t.Name, CreatedAt: t.CreatedAt}, nil
}

// ImportResult is what an import did (records.ImportStats).
type ImportResult struct {
	Tenant          string `json:"tenant"`
	Digest          string `json:"digest"`
	Rows            int    `json:"rows"`
	Written         int    `json:"written"`
	Skipped         int    `json:"skipped"`
	AlreadyImported bool   `json:"already_imported"`
}

// MaxImportBytes bounds an import's fixture (the demo firm is under 2 MB).
const MaxImportBytes = 64 << 20

// Import imports a fixture in the seed format idempotently
// (records.ImportJSON, as the dev server seeds the demo): once the same bytes
// were imported, a second import is one read that writes nothing. A fixture
// that does not parse or breaks a rule is records.ErrInvalid and writes
// nothing.
func Import(ctx context.Context, st store.Store, fixture []byte, now time.Time) (ImportResult, error) {
	var head struct {
		Tenant struct {
			ID string `json:"id"`
		} `json:"tenant"`
	}
	if err := json.Unmarshal(fixture, &head); err != nil {
		return ImportResult{}, fmt.Errorf("import: the fixture is not JSON: %w", records.ErrInvalid)
	}
	s, err := records.ImportJSON(ctx, st, fixture, now)
	res := ImportResult{Tenant: head.Tenant.ID, Digest: s.Digest, Rows: s.Rows, Written: s.Written,
		Skipped: s.Skipped, AlreadyImported: s.AlreadyImported}
	return res, err
}

// ScreenRequest is the body of POST /admin/screens: put Principal behind
// (Screened true) or take it out of (false) the ethical wall of a matter.
type ScreenRequest struct {
	Tenant    string `json:"tenant"`
	CaseID    string `json:"case_id"`
	Principal string `json:"principal"`
	Screened  bool   `json:"screened"`
	// Reason, on a screen, replaces the matter's screen_reason (it says why
	// the wall exists, without naming the principal).
	Reason string `json:"reason,omitempty"`
}

// ScreenResult is the matter's screens after the change.
type ScreenResult struct {
	CaseID   string   `json:"case_id"`
	Screened []string `json:"screened"`
	// Changed is false when the matter already said so (nothing written).
	Changed bool `json:"changed"`
	// Notified counts the notifications/resources/updated queued for
	// sessions subscribed to the matter's resources.
	Notified int `json:"notified"`
	// NotifyError, when set, says the screen changed but some subscribers
	// were not notified (the store failed after the change was written).
	NotifyError string `json:"notify_error,omitempty"`
}

// Screen changes a matter's screens (records.Screen): the access funnel
// refuses a screened principal on its next call. When the screen changed,
// the sessions subscribed to the matter's resources
// (resources.MatterResourceURIs) are sent notifications/resources/updated
// on their GET streams (subscriptions.Notify); a notification failure does
// not undo the change and is reported in NotifyError.
func Screen(ctx context.Context, st store.Store, req ScreenRequest, now time.Time) (ScreenResult, error) {
	m, changed, err := records.Screen(ctx, st, req.Tenant, req.CaseID, req.Principal, req.Screened, req.Reason)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return ScreenResult{}, fmt.Errorf("tenant %s has no matter %s: %w", req.Tenant, req.CaseID, store.ErrNotFound)
	case errors.Is(err, records.ErrUnknownPrincipal):
		return ScreenResult{}, fmt.Errorf("tenant %s has no principal %s: %w", req.Tenant, req.Principal, records.ErrUnknownPrincipal)
	case err != nil:
		return ScreenResult{}, err
	}
	screened := m.Screened
	if screened == nil {
		screened = []string{}
	}
	res := ScreenResult{CaseID: m.ID, Screened: screened, Changed: changed}
	if changed {
		for _, uri := range resources.MatterResourceURIs(m.ID) {
			n, err := subscriptions.Notify(ctx, st, now, req.Tenant, uri)
			res.Notified += n
			if err != nil {
				res.NotifyError = "the screen changed, but some subscribers of the matter were not notified: the store failed"
				break
			}
		}
	}
	return res, nil
}

// recordRoutes adds POST /admin/tenants, /admin/import and /admin/screens.
func recordRoutes(mux *http.ServeMux, st store.Store, now func() time.Time) {
	mux.HandleFunc("POST /admin/tenants", func(w http.ResponseWriter, r *http.Request) {
		var req TenantRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
			writeErr(w, http.StatusBadRequest, "the body must be a JSON tenant request")
			return
		}
		t, err := CreateTenant(r.Context(), st, req, now())
		if err != nil {
			writeRecordErr(w, err, "tenant")
			return
		}
		writeJSON(w, http.StatusCreated, t)
	})
	mux.HandleFunc("POST /admin/import", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxImportBytes))
		if err != nil {
			writeErr(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a fixture may be at most %d bytes", MaxImportBytes))
			return
		}
		res, err := Import(r.Context(), st, body, now())
		if err != nil {
			writeRecordErr(w, err, "fixture")
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
	mux.HandleFunc("POST /admin/screens", func(w http.ResponseWriter, r *http.Request) {
		var req ScreenRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
			writeErr(w, http.StatusBadRequest, "the body must be a JSON screen request")
			return
		}
		res, err := Screen(r.Context(), st, req, now())
		if err != nil {
			writeRecordErr(w, err, "matter")
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
}

// writeRecordErr maps an error of the functions above to a status. The
// operator on loopback sees the error's sentence (ids it sent, rules it
// broke), never a store's internals beyond that.
func writeRecordErr(w http.ResponseWriter, err error, what string) {
	switch {
	case errors.Is(err, records.ErrInvalid), errors.Is(err, records.ErrUnknownPrincipal):
		writeErr(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, store.ErrExists):
		writeErr(w, http.StatusConflict, "that "+what+" already exists")
	case errors.Is(err, store.ErrNotFound):
		writeErr(w, http.StatusNotFound, "no such "+what)
	case errors.Is(err, store.ErrTooLarge):
		writeErr(w, http.StatusBadRequest, "a row of the "+what+" is over the 400 KB item limit")
	default:
		writeErr(w, http.StatusServiceUnavailable, "the store could not complete the request; retry")
	}
}
