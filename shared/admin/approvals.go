package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/custodymcp/custody/shared/approvals/ledger"
	"github.com/custodymcp/custody/shared/approvals/outbox"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
)

// AckRequest is the body of POST /admin/outbox/{id}/ack: who took the
// message, and their system's reference.
type AckRequest struct {
	By   string `json:"by"`
	Note string `json:"note,omitempty"`
}

// VerifyLedger checks a matter's decision ledger (ledger.Verify); a matter
// the tenant does not have is store.ErrNotFound (wrapped).
func VerifyLedger(ctx context.Context, st store.Store, tenant, matter string) (ledger.Report, error) {
	if _, err := records.NewRepo(st).Matter(ctx, tenant, matter); err != nil {
		return ledger.Report{}, err
	}
	return ledger.Verify(ctx, st, tenant, matter)
}

// approvalRoutes adds the approval page's operator routes: the firm's
// outbox (GET /admin/outbox?tenant=…[&all=1], POST
// /admin/outbox/{id}/ack?tenant=…) and the decision ledger's check (GET
// /admin/ledger/verify?tenant=…&case=…).
func approvalRoutes(mux *http.ServeMux, st store.Store, now func() time.Time) {
	mux.HandleFunc("GET /admin/outbox", func(w http.ResponseWriter, r *http.Request) {
		msgs, err := outbox.List(r.Context(), st, r.URL.Query().Get("tenant"), r.URL.Query().Get("all") == "1")
		if err != nil {
			writeErr(w, http.StatusServiceUnavailable, "could not read the outbox")
			return
		}
		if msgs == nil {
			msgs = []outbox.Message{}
		}
		writeJSON(w, http.StatusOK, msgs)
	})
	mux.HandleFunc("POST /admin/outbox/{id}/ack", func(w http.ResponseWriter, r *http.Request) {
		var req AckRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
			writeErr(w, http.StatusBadRequest, "the body must be a JSON acknowledgement")
			return
		}
		m, err := outbox.Acknowledge(r.Context(), st, r.URL.Query().Get("tenant"), r.PathValue("id"), req.By, req.Note, now())
		switch {
		case errors.Is(err, outbox.ErrUnknown):
			writeErr(w, http.StatusNotFound, "no such message in that tenant's outbox")
		case errors.Is(err, outbox.ErrAcknowledged):
			writeErr(w, http.StatusConflict, "that message was already acknowledged")
		case errors.Is(err, store.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
			writeErr(w, http.StatusServiceUnavailable, "the store could not complete the request; retry")
		case err != nil:
			writeErr(w, http.StatusBadRequest, err.Error())
		default:
			writeJSON(w, http.StatusOK, m)
		}
	})
	mux.HandleFunc("GET /admin/ledger/verify", func(w http.ResponseWriter, r *http.Request) {
		rep, err := VerifyLedger(r.Context(), st, r.URL.Query().Get("tenant"), r.URL.Query().Get("case"))
		switch {
		case errors.Is(err, store.ErrNotFound):
			writeErr(w, http.StatusNotFound, "no such matter in that tenant")
		case err != nil:
			writeErr(w, http.StatusServiceUnavailable, "could not read the ledger")
		default:
			writeJSON(w, http.StatusOK, rep)
		}
	})
}
