package downloads

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/gate"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
)

// Errors of Resolve, each one answer of the tool.
var (
	// ErrNotProvisioned: the version has no stored file (a document of the
	// record without its bytes): NOT_PROVISIONED.
	ErrNotProvisioned = errors.New("downloads: the version has no stored file")
)

// Rows are the record rows a download is decided on.
type Rows struct {
	Matter   records.Matter
	Document records.Document
	Version  records.Version
}

// keys are the rows Resolve reads for version n (> 0) of doc: the matter,
// the document, the version.
func keys(who access.Who, matter, doc string, n int) ([]store.Key, bool) {
	mk, ok := access.MatterRow(who, matter)
	if !ok {
		return nil, false
	}
	return []store.Key{mk, records.DocumentKey(who.Tenant, matter, doc), records.VersionKey(who.Tenant, matter, doc, n)}, true
}

// decide applies the funnel, the class floor, the review state and the
// stored file to the rows read at keys (aligned, nil where absent).
func decide(who access.Who, matter, doc string, n int, rows []*store.Item) (Rows, error) {
	m, err := access.MatterFrom(who, matter, rows[0])
	if err != nil {
		return Rows{}, err
	}
	d, err := documentFrom(who, doc, rows[1])
	if err != nil {
		return Rows{}, err
	}
	if len(rows) < 3 || rows[2] == nil {
		return Rows{}, access.ErrNoDocument // no such version
	}
	var v records.Version
	if err := records.DecodeRow(*rows[2], &v); err != nil {
		return Rows{}, fmt.Errorf("resolve version: %w", err)
	}
	if v.Number != n || v.DocumentID != doc {
		return Rows{}, access.ErrNoDocument
	}
	if storedRef(v).Validate() != nil {
		return Rows{}, ErrNotProvisioned
	}
	return Rows{Matter: m, Document: d, Version: v}, nil
}

// documentFrom decides on a document row of a reached matter: withheld
// from the class, not yet reviewed, withdrawn or absent are one answer,
// ErrNoDocument.
func documentFrom(who access.Who, doc string, row *store.Item) (records.Document, error) {
	if row == nil || !records.ValidID(doc) {
		return records.Document{}, access.ErrNoDocument
	}
	var d records.Document
	if err := records.DecodeRow(*row, &d); err != nil {
		return records.Document{}, fmt.Errorf("resolve document: %w", err)
	}
	if d.ID != doc || !who.Sees(d.Privilege) || !d.Reviewed() {
		return records.Document{}, access.ErrNoDocument
	}
	return d, nil
}

// storedRef is the record-bucket object of a version's file.
func storedRef(v records.Version) blob.Ref { return blob.Ref{Bucket: blob.Record, Key: v.ObjectKey} }

// Resolve reads and decides a download of version (0: the current one) of
// document doc of matter for who: the funnel (ErrNoMatter), the class
// floor, the review state and the version (ErrNoDocument for any of them:
// withheld, pending and absent are one answer), and a stored file
// (ErrNotProvisioned). A named version costs one batch read; the current
// version one read more (the document row names it). A store failure is
// returned wrapped.
func Resolve(ctx context.Context, st store.Store, who access.Who, matter, doc string, version int) (Rows, error) {
	if version < 0 || version > 9999 {
		return Rows{}, access.ErrNoDocument
	}
	n := max(version, 1)
	ks, ok := keys(who, matter, doc, n)
	if !ok {
		return Rows{}, access.ErrNoMatter
	}
	if version == 0 {
		ks = ks[:2]
	}
	rows, err := st.BatchGet(ctx, ks)
	if err != nil {
		return Rows{}, fmt.Errorf("resolve download: %w", err)
	}
	if version == 0 {
		if _, err := access.MatterFrom(who, matter, rows[0]); err != nil {
			return Rows{}, err
		}
		d, err := documentFrom(who, doc, rows[1])
		if err != nil {
			return Rows{}, err
		}
		n = d.CurrentVersion
		v, err := st.Get(ctx, records.VersionKey(who.Tenant, matter, doc, n))
		switch {
		case errors.Is(err, store.ErrNotFound):
			rows = append(rows, nil)
		case err != nil:
			return Rows{}, fmt.Errorf("resolve download: %w", err)
		default:
			rows = append(rows, &v)
		}
	}
	return decide(who, matter, doc, n, rows)
}

// Handler serves GET /downloads/<token> (docs/decisions.md "Answers on
// the wire": valid → 303, anything else → 404). It needs no key: the token
// is the capability, and everything it binds is re-checked at each fetch.
type Handler struct {
	Store     store.Store
	Gate      *gate.Gate
	Presigner blob.Presigner
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// notFound is the one answer for every failure.
func notFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"error":"not found: this download link is invalid, has expired or is no longer allowed"}` + "\n"))
}

// Method is the audit row's method of a fetch.
const Method = "GET /downloads"

func (h *Handler) now() time.Time {
	if h.Now == nil {
		return time.Now()
	}
	return h.Now()
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Logger
}

// ServeHTTP implements http.Handler. Its round trips: the token row, one
// batch read (the credential, its owner, the tenant, the matter, the
// document, the version), and the audit row's one write.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, ok := strings.CutPrefix(r.URL.Path, PathPrefix)
	if (r.Method != http.MethodGet && r.Method != http.MethodHead) || !ok || !WellFormedToken(token) {
		notFound(w)
		return
	}
	ctx, now, arrived := r.Context(), h.now(), time.Now()
	it, err := h.Store.Get(ctx, TokenKey(HashToken(token)))
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			h.logger().WarnContext(ctx, "download link: read the token row", "err", err)
		}
		notFound(w)
		return
	}
	link, err := decodeLink(it)
	if err != nil {
		h.logger().ErrorContext(ctx, "download link: decode the token row", "err", err)
		notFound(w)
		return
	}
	if link.Requester.Tenant != link.Tenant {
		notFound(w)
		return
	}
	who := access.Who{Tenant: link.Tenant, Principal: link.Requester.Owner}
	ks, ok := keys(who, link.Matter, link.Document, link.Version)
	if !ok {
		notFound(w)
		return
	}
	adm, rows, err := h.Gate.ReadmitWith(ctx, link.Requester, now, gate.ReadmitOptions{KeyHash: link.KeyHash, Also: ks})
	var refused *gate.RefusedError
	switch {
	case errors.As(err, &refused):
		h.logger().InfoContext(ctx, "download link refused", "reason", refused.Reason, "tenant", link.Tenant)
		notFound(w)
		return
	case err != nil:
		h.logger().WarnContext(ctx, "download link: re-admit the credential", "err", err)
		notFound(w)
		return
	}
	rec := audit.Record{RequestID: requestID(), At: now, Tenant: link.Tenant, Principal: adm.Credential.Owner,
		CredentialID: adm.Credential.ID, Method: Method, Tool: "get_document_download", Matter: link.Matter, Outcome: audit.OutcomeOK}
	var location string
	got, err := decide(access.WhoOf(adm.Credential), link.Matter, link.Document, link.Version, rows)
	switch {
	case err != nil:
		rec.Outcome = "NOT_FOUND"
		if !errors.Is(err, access.ErrNoMatter) && !errors.Is(err, access.ErrNoDocument) && !errors.Is(err, ErrNotProvisioned) {
			h.logger().WarnContext(ctx, "download link: decide", "err", err)
			rec.Outcome = "UNAVAILABLE"
		}
	case got.Version.ObjectKey != link.ObjectKey:
		rec.Outcome = "NOT_FOUND" // the version's file changed since the link was made
	default:
		req, perr := h.Presigner.PresignGetObject(ctx, storedRef(got.Version), blob.GetURLOptions{
			Filename: got.Version.Filename, ContentType: got.Version.MediaType, Expires: RedirectLife,
		})
		if perr != nil {
			h.logger().WarnContext(ctx, "download link: presign", "err", perr)
			rec.Outcome = "UNAVAILABLE"
		} else {
			location = req.URL
			rec.AddMatter(link.Matter)
		}
	}
	rec.DurationMs = time.Since(arrived).Milliseconds()
	// Audited before anything is served: a fetch that cannot be recorded
	// is not served.
	if err := h.Gate.Commit(context.WithoutCancel(ctx), adm, mcp.Commitment{Audit: []audit.Record{rec}}); err != nil {
		h.logger().WarnContext(ctx, "download link: write the audit row", "err", err)
		notFound(w)
		return
	}
	if location == "" {
		notFound(w)
		return
	}
	w.Header().Set("Location", location)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusSeeOther)
}

func requestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "dl_" + hex.EncodeToString(b[:])
}
