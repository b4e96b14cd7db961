package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/custodymcp/custody/shared/intake/importer"
	"github.com/custodymcp/custody/shared/intake/review"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/uploads"
)

// documentRoutes adds GET /admin/documents/pending?tenant=…&case=… and
// POST /admin/documents/review (privilege review, issue 18 §3).
func documentRoutes(mux *http.ServeMux, st store.Store, now func() time.Time) {
	mux.HandleFunc("GET /admin/documents/pending", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		out, err := review.ListPending(r.Context(), st, q.Get("tenant"), q.Get("case"))
		if err != nil {
			writeReviewErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("POST /admin/documents/review", func(w http.ResponseWriter, r *http.Request) {
		var req review.Request
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
			writeErr(w, http.StatusBadRequest, "the body must be a JSON review request")
			return
		}
		res, err := review.Review(r.Context(), st, req, now())
		if err != nil {
			writeReviewErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
}

// writeReviewErr maps review's and import's errors to a status with the
// refusal's sentence.
func writeReviewErr(w http.ResponseWriter, err error) {
	var refused *review.Refused
	switch {
	case errors.As(err, &refused):
		writeErr(w, http.StatusForbidden, refused.Reason)
	case errors.Is(err, review.ErrNoDocument):
		writeErr(w, http.StatusNotFound, "no document of that id waits for review in that matter")
	case errors.Is(err, store.ErrNotFound):
		writeErr(w, http.StatusNotFound, "no such matter in that tenant")
	case errors.Is(err, uploads.ErrInvalidImport):
		writeErr(w, http.StatusBadRequest, err.Error())
	default:
		writeErr(w, http.StatusServiceUnavailable, "the store could not complete the request; retry")
	}
}

// ImportRoute is the dev server's POST /admin/import/file?tenant=…&case=…&by=…&filename=…&sha256=…:
// the body is one file's bytes, imported through im (custodyctl import DIR
// against a running dev server, which holds the store and the blob
// folder). The answer is the file's importer.Line; a refusal (who, the
// scanner OFF) is 403 with its sentence, before anything is written.
func ImportRoute(im *importer.Importer) Route {
	return Route{Pattern: "POST /admin/import/file", Handler: func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		tenant, matter, by := q.Get("tenant"), q.Get("case"), q.Get("by")
		if err := im.Check(r.Context(), tenant, matter, by); err != nil {
			writeReviewErr(w, err)
			return
		}
		f, err := os.CreateTemp("", "custody-import-*")
		if err != nil {
			writeErr(w, http.StatusServiceUnavailable, "could not hold the file")
			return
		}
		defer os.Remove(f.Name())
		defer f.Close()
		n, err := io.Copy(f, http.MaxBytesReader(w, r.Body, uploads.MaxUploadBytes))
		if err != nil {
			writeErr(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a file may be at most %d bytes", uploads.MaxUploadBytes))
			return
		}
		line, err := im.Import(r.Context(), tenant, matter, by, importer.File{Name: q.Get("filename"), Size: n, SHA256: q.Get("sha256"), Body: f})
		if err != nil {
			writeReviewErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, line)
	}}
}
