// Package review is privilege review of the documents intake made of
// uploads (issue 18 §3): the pending list, an attorney's review (privilege,
// title, kind) or withdrawal, and who may import files into a matter. It
// reads the unreviewed rows from the store itself — package records serves
// none of them — and links no PDF engine, so custodyctl's admin paths and
// the dev server's admin endpoint can use it.
//
// A reviewer is a licensed attorney on the matter's team and not screened
// from it, read from the store at the time of the review (never from a
// cache or a session). Review sets the privilege (required: there is no
// default), optionally the title and kind, moves reviewed_by, reviewed_at
// and updated_at (so as_of moves), and writes one audit row. The chunks
// take the privilege: they are rewritten first, in transactions of
// store.MaxTransactItems, and the document, its version and the audit row
// last in one transaction; until that commits the document is pending and
// served by nothing, and a failed review repeated finishes it. A withdrawn
// document keeps its rows and is never served.
package review

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
)

// AuditRetention is how long a review's audit row is kept (docs/decisions.md
// "Audit": seven years, as every request's).
const AuditRetention = 7 * 365 * 24 * time.Hour

// Audit methods of review.
const (
	MethodReview   = "documents/review"
	MethodWithdraw = "documents/withdraw"
	// AuditCredential is the credential id of a review's audit row: an
	// operator's act through custodyctl, not an API key's.
	AuditCredential = "custodyctl"
)

// Refused is a review or import refused for who asked or what it names:
// nothing was written. Its Error is a sentence for the operator.
type Refused struct{ Reason string }

func (r *Refused) Error() string { return r.Reason }

// ErrNoDocument: the matter has no document of that id made of an upload.
var ErrNoDocument = errors.New("review: no such document in that matter")

// Request is one review: Privilege is required unless Withdraw; Title and
// Kind, when set, replace the document's (Kind one of
// records.DocumentKinds).
type Request struct {
	Tenant    string            `json:"tenant"`
	Matter    string            `json:"case_id"`
	Document  string            `json:"document_id"`
	By        string            `json:"by"`
	Privilege records.Privilege `json:"privilege,omitempty"`
	Title     string            `json:"title,omitempty"`
	Kind      string            `json:"kind,omitempty"`
	Withdraw  bool              `json:"withdraw,omitempty"`
}

// Pending is a document waiting for review, as `documents pending` lists
// it.
type Pending struct {
	DocumentID string            `json:"document_id"`
	Matter     string            `json:"case_id"`
	Title      string            `json:"title"`
	Filename   string            `json:"filename"`
	MediaType  string            `json:"media_type"`
	SizeBytes  int64             `json:"size_bytes"`
	Pages      int               `json:"pages"`
	TextState  records.TextState `json:"text_state"`
	TextReason string            `json:"text_reason,omitempty"`
	Upload     string            `json:"upload"`
	Credential string            `json:"credential"`
	CreatedAt  time.Time         `json:"created_at"`
}

// ListPending returns the documents of a matter pending review, by id,
// from one query of the matter partition and one batch read of their
// versions per 100. An unknown matter is store.ErrNotFound.
func ListPending(ctx context.Context, st store.Store, tenant, matter string) ([]Pending, error) {
	if _, err := readMatter(ctx, st, tenant, matter); err != nil {
		return nil, err
	}
	var docs []records.Document
	q := store.Query{PK: records.MatterPK(tenant, matter), SK: store.SortKeyCondition{Prefix: records.DocumentRowsPrefix()}, Limit: store.MaxQueryLimit}
	for {
		p, err := st.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("list the documents of %s: %w", matter, err)
		}
		for _, it := range p.Items {
			var d records.Document
			if err := records.DecodeRow(it, &d); err != nil {
				return nil, err
			}
			if d.ReviewState == records.ReviewPending {
				docs = append(docs, d)
			}
		}
		if p.NextToken == "" {
			break
		}
		q.PageToken = p.NextToken
	}
	out := make([]Pending, 0, len(docs))
	for start := 0; start < len(docs); start += store.MaxBatchGetKeys {
		batch := docs[start:min(start+store.MaxBatchGetKeys, len(docs))]
		keys := make([]store.Key, len(batch))
		for i, d := range batch {
			keys[i] = records.VersionKey(tenant, matter, d.ID, d.CurrentVersion)
		}
		rows, err := st.BatchGet(ctx, keys)
		if err != nil {
			return nil, fmt.Errorf("read the versions of %s: %w", matter, err)
		}
		for i, d := range batch {
			p := Pending{DocumentID: d.ID, Matter: matter, Title: d.Title, Pages: d.PageCount, Upload: d.SourceUpload,
				Credential: d.SourceCredential, CreatedAt: d.CreatedAt}
			var v records.Version
			if rows[i] != nil && records.DecodeRow(*rows[i], &v) == nil {
				p.Filename, p.MediaType, p.SizeBytes, p.TextState, p.TextReason = v.Filename, v.MediaType, v.SizeBytes, v.TextState, v.TextReason
			}
			out = append(out, p)
		}
	}
	return out, nil
}

func readMatter(ctx context.Context, st store.Store, tenant, matter string) (records.Matter, error) {
	var m records.Matter
	if !records.ValidID(tenant) || !records.ValidID(matter) {
		return m, fmt.Errorf("tenant %s has no matter %s: %w", tenant, matter, store.ErrNotFound)
	}
	it, err := st.Get(ctx, records.MatterKey(tenant, matter))
	if errors.Is(err, store.ErrNotFound) {
		return m, fmt.Errorf("tenant %s has no matter %s: %w", tenant, matter, store.ErrNotFound)
	}
	if err != nil {
		return m, fmt.Errorf("read matter %s: %w", matter, err)
	}
	return m, records.DecodeRow(it, &m)
}

// Reviewer checks that principal by may review documents of matter now: a
// licensed attorney on its team and not screened from it, read from the
// store now. A *Refused says why not.
func Reviewer(ctx context.Context, st store.Store, tenant, matter, by string) (records.Matter, error) {
	m, p, err := readPeople(ctx, st, tenant, matter, by)
	if err != nil {
		return m, err
	}
	return m, attorneyOn(m, p)
}

// Importer checks that principal by may import files into matter now: a
// licensed attorney on its team and not screened, or a firm administrator
// (issue 18 §5), read from the store now. A *Refused says why not.
func Importer(ctx context.Context, st store.Store, tenant, matter, by string) (records.Matter, error) {
	m, p, err := readPeople(ctx, st, tenant, matter, by)
	if err != nil {
		return m, err
	}
	if p.Role == records.RoleAdmin {
		return m, nil
	}
	return m, attorneyOn(m, p)
}

func readPeople(ctx context.Context, st store.Store, tenant, matter, by string) (records.Matter, records.Principal, error) {
	var p records.Principal
	m, err := readMatter(ctx, st, tenant, matter)
	if err != nil {
		return m, p, err
	}
	if !records.ValidID(by) {
		return m, p, &Refused{Reason: fmt.Sprintf("tenant %s has no principal %q", tenant, by)}
	}
	it, err := st.Get(ctx, records.PrincipalKey(tenant, by))
	if errors.Is(err, store.ErrNotFound) {
		return m, p, &Refused{Reason: fmt.Sprintf("tenant %s has no principal %s", tenant, by)}
	}
	if err != nil {
		return m, p, fmt.Errorf("read principal %s: %w", by, err)
	}
	return m, p, records.DecodeRow(it, &p)
}

func attorneyOn(m records.Matter, p records.Principal) error {
	switch {
	case p.Role != records.RoleAttorney || !p.Licensed:
		return &Refused{Reason: fmt.Sprintf("%s is not a licensed attorney: only a licensed attorney on the matter reviews its documents", p.ID)}
	case slices.Contains(m.Screened, p.ID):
		return &Refused{Reason: fmt.Sprintf("%s is screened from %s", p.ID, m.ID)}
	case !slices.Contains(m.Team, p.ID):
		return &Refused{Reason: fmt.Sprintf("%s is not on the team of %s", p.ID, m.ID)}
	}
	return nil
}

// Result is a document after its review.
type Result struct {
	Document records.Document `json:"document"`
	// Chunks is how many chunk rows took the privilege.
	Chunks int `json:"chunks"`
}

// Review reviews (or withdraws) a document pending review (see the package
// doc). Refusals (*Refused: not a reviewer, no privilege, a kind outside
// the vocabulary, a document already reviewed or withdrawn) and
// ErrNoDocument write nothing; a store failure may leave chunks rewritten
// under a document still pending (served by nothing), which the repeated
// review finishes.
func Review(ctx context.Context, st store.Store, req Request, now time.Time) (Result, error) {
	now = now.UTC()
	switch {
	case req.Withdraw && (req.Privilege != "" || req.Title != "" || req.Kind != ""):
		return Result{}, &Refused{Reason: "--withdraw takes no --privilege, --title or --kind"}
	case !req.Withdraw && req.Privilege == "":
		return Result{}, &Refused{Reason: "a privilege is required: none, privileged or work_product"}
	case !req.Withdraw && !req.Privilege.Valid():
		return Result{}, &Refused{Reason: fmt.Sprintf("privilege %q is not none, privileged or work_product", req.Privilege)}
	case req.Kind != "" && !records.ValidDocumentKind(req.Kind):
		return Result{}, &Refused{Reason: fmt.Sprintf("kind %q is not one of the record's document kinds", req.Kind)}
	}
	if _, err := Reviewer(ctx, st, req.Tenant, req.Matter, req.By); err != nil {
		return Result{}, err
	}
	if !records.ValidID(req.Document) {
		return Result{}, ErrNoDocument
	}
	rows, err := st.BatchGet(ctx, []store.Key{records.DocumentKey(req.Tenant, req.Matter, req.Document)})
	if err != nil {
		return Result{}, fmt.Errorf("read document %s: %w", req.Document, err)
	}
	if rows[0] == nil {
		return Result{}, ErrNoDocument
	}
	docRow := *rows[0]
	var d records.Document
	if err := records.DecodeRow(docRow, &d); err != nil {
		return Result{}, err
	}
	if d.SourceUpload == "" {
		return Result{}, ErrNoDocument // of the record as imported: nothing to review
	}
	if d.ReviewState != records.ReviewPending {
		return Result{}, &Refused{Reason: fmt.Sprintf("document %s is %s, not pending review", d.ID, reviewWord(d.ReviewState))}
	}
	verKey := records.VersionKey(req.Tenant, req.Matter, d.ID, d.CurrentVersion)
	verRow, err := st.Get(ctx, verKey)
	if err != nil {
		return Result{}, fmt.Errorf("read document %s v%d: %w", d.ID, d.CurrentVersion, err)
	}
	var v records.Version
	if err := records.DecodeRow(verRow, &v); err != nil {
		return Result{}, err
	}

	state := records.ReviewReviewed
	method := MethodReview
	if req.Withdraw {
		state, method = records.ReviewWithdrawn, MethodWithdraw
	}
	n := 0
	if !req.Withdraw {
		// The chunks first: a withdrawn document's stay pending, served by
		// nothing, as they are.
		if n, err = reviewChunks(ctx, st, req.Tenant, d, req.Privilege, now); err != nil {
			return Result{}, err
		}
		d.Privilege = req.Privilege
		if req.Title != "" {
			d.Title = req.Title
		}
		if req.Kind != "" {
			d.Kind = req.Kind
		}
	}
	at := now
	d.ReviewState, d.ReviewedBy, d.ReviewedAt, d.UpdatedAt = state, req.By, &at, now
	v.ReviewState, v.UpdatedAt = state, now
	di, err := records.DocumentItem(req.Tenant, d)
	if err != nil {
		return Result{}, err
	}
	vi, err := records.VersionItem(req.Tenant, v)
	if err != nil {
		return Result{}, err
	}
	di.Version, vi.Version = docRow.Version+1, verRow.Version+1
	rec := audit.Record{RequestID: "rev_" + rand.Text(), At: now, Tenant: req.Tenant, Principal: req.By,
		CredentialID: AuditCredential, Method: method, Matter: req.Matter, Outcome: audit.OutcomeOK,
		ExpiresAt: now.Add(AuditRetention)}
	ops := []store.Op{
		store.PutOp(di, store.VersionEquals(docRow.Version)),
		store.PutOp(vi, store.VersionEquals(verRow.Version)),
		store.PutOp(rec.Item(), store.NotExists()),
	}
	for _, it := range rec.IndexItems() {
		ops = append(ops, store.PutOp(it))
	}
	var canceled *store.TxCanceledError
	switch err := st.Transact(ctx, ops); {
	case errors.As(err, &canceled):
		return Result{}, &Refused{Reason: fmt.Sprintf("document %s changed while it was reviewed; review it again", d.ID)}
	case err != nil:
		return Result{}, fmt.Errorf("review document %s: %w", d.ID, err)
	}
	return Result{Document: d, Chunks: n}, nil
}

func reviewWord(s records.ReviewState) string {
	if s == "" {
		return string(records.ReviewReviewed)
	}
	return string(s)
}

// reviewChunks rewrites the chunks of d's current version with privilege p
// and review_state reviewed, in transactions of store.MaxTransactItems,
// each row held to the version read; it returns how many it found.
func reviewChunks(ctx context.Context, st store.Store, tenant string, d records.Document, p records.Privilege, now time.Time) (int, error) {
	prefix := records.ChunkRowsPrefix(d.ID, d.CurrentVersion)
	q := store.Query{PK: records.MatterPK(tenant, d.Matter), SK: store.SortKeyCondition{Prefix: prefix}, Limit: store.MaxQueryLimit}
	n := 0
	for {
		page, err := st.Query(ctx, q)
		if err != nil {
			return n, fmt.Errorf("read the chunks of %s: %w", d.ID, err)
		}
		var ops []store.Op
		flush := func() error {
			if len(ops) == 0 {
				return nil
			}
			if err := st.Transact(ctx, ops); err != nil {
				return fmt.Errorf("review the chunks of %s: %w", d.ID, err)
			}
			ops = ops[:0]
			return nil
		}
		for _, it := range page.Items {
			var c records.Chunk
			if err := records.DecodeRow(it, &c); err != nil {
				return n, err
			}
			n++
			c.Privilege, c.ReviewState, c.UpdatedAt = p, records.ReviewReviewed, now
			ci, err := records.ChunkItem(tenant, c, d.PageCount)
			if err != nil {
				return n, err
			}
			ci.Version = it.Version + 1
			ops = append(ops, store.PutOp(ci, store.VersionEquals(it.Version)))
			if len(ops) == store.MaxTransactItems {
				if err := flush(); err != nil {
					return n, err
				}
			}
		}
		if err := flush(); err != nil {
			return n, err
		}
		if page.NextToken == "" {
			return n, nil
		}
		q.PageToken = page.NextToken
	}
}
