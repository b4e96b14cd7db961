package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/autonomy"
	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
)

// The firm's autonomy settings (docs/decisions.md "Autonomy"; custodyctl
// autonomy set|list): a level per tool or action, and the tenant default
// "*". An absent setting is L2.

// AutonomyRequest is the body of POST /admin/autonomy: set Name (a write
// tool, an action, or "*" for the tenant default) to Level ("L0" … "L4"),
// or remove its setting with Level "clear".
type AutonomyRequest struct {
	Tenant string `json:"tenant"`
	Name   string `json:"name"`
	Level  string `json:"level"`
}

// ClearLevel removes a setting.
const ClearLevel = "clear"

// AutonomyNames are the names a setting may have: the tenant default, the
// governed write tool that is not itself an action (propose_action), and
// every action (add_case_note is both a tool and an action). A new write
// tool with an autonomy setting of its own adds its name here.
func AutonomyNames() []string {
	names := append([]string{autonomy.DefaultName, "propose_action"}, proposals.Default().Names()...)
	slices.Sort(names)
	return names
}

// SetAutonomy stores or clears one setting of an existing tenant.
func SetAutonomy(ctx context.Context, st store.Store, req AutonomyRequest, now time.Time) error {
	if !slices.Contains(AutonomyNames(), req.Name) {
		return fmt.Errorf("no autonomy setting is named %q (names: %s): %w", req.Name, strings.Join(AutonomyNames(), ", "), records.ErrInvalid)
	}
	if !keyspace.ValidID(req.Tenant) {
		return fmt.Errorf("tenant %q: %w", req.Tenant, records.ErrInvalid)
	}
	if _, err := records.NewRepo(st).Tenant(ctx, req.Tenant); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("tenant %q does not exist: %w", req.Tenant, store.ErrNotFound)
		}
		return err
	}
	if strings.EqualFold(req.Level, ClearLevel) {
		return autonomy.Clear(ctx, st, req.Tenant, req.Name)
	}
	level, err := autonomy.ParseLevel(req.Level)
	if err != nil {
		return fmt.Errorf("%w: %w", err, records.ErrInvalid)
	}
	return autonomy.Set(ctx, st, req.Tenant, req.Name, level, now)
}

// autonomyRoutes adds GET /admin/autonomy?tenant=… and POST /admin/autonomy.
func autonomyRoutes(mux *http.ServeMux, st store.Store, now func() time.Time) {
	mux.HandleFunc("GET /admin/autonomy", func(w http.ResponseWriter, r *http.Request) {
		settings, err := autonomy.List(r.Context(), st, r.URL.Query().Get("tenant"))
		switch {
		case errors.Is(err, autonomy.ErrInvalid):
			writeErr(w, http.StatusBadRequest, "name a tenant")
		case err != nil:
			writeErr(w, http.StatusServiceUnavailable, "could not list the autonomy settings")
		default:
			if settings == nil {
				settings = []autonomy.Setting{}
			}
			writeJSON(w, http.StatusOK, settings)
		}
	})
	mux.HandleFunc("POST /admin/autonomy", func(w http.ResponseWriter, r *http.Request) {
		var req AutonomyRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
			writeErr(w, http.StatusBadRequest, "the body must be a JSON autonomy request")
			return
		}
		if err := SetAutonomy(r.Context(), st, req, now()); err != nil {
			writeRecordErr(w, err, "tenant")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
