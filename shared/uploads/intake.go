package uploads

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/sweep"
)

// Intake and import on the upload row (issue 18).

// KindIntake is the sweeper index kind of a clean upload waiting for its
// intake: due when the intake claim Decide (or ClaimIntake) took lapses
// (IntakeClaimTTL), so the scan gate's intake duty resumes an intake whose
// delivery died after Lambda's retries were spent. Intake's move to
// in_review (Transition) takes the row out of the index.
const KindIntake = "upload_intake"

// Origins of an upload row: what deposited it.
const (
	// OriginLane: an agent through the upload lane with a grant (the
	// default; the row holds no origin attribute).
	OriginLane = ""
	// OriginImport: custodyctl import, by a licensed attorney on the
	// matter or a firm administrator, without a grant (StageImport).
	OriginImport = "import"
)

const (
	attrOrigin     = "origin"
	attrImportedBy = "imported_by"
)

// ImportCredentialPrefix starts the CredentialID of an imported upload:
// the principal who imported it follows ("import:p_dana_whitfield"). No
// credential has such an id, so none sees or completes the upload.
const ImportCredentialPrefix = "import:"

// InReviewSet is the set of intake's Transition clean → in_review: the
// document made of the upload.
func InReviewSet(documentID string) map[string]any {
	return map[string]any{attrDocumentID: documentID}
}

// ImportRequest is one file custodyctl import stages: its object (already
// put at verified/<Object> in the staging bucket), its declared name, its
// size and SHA-256 (lowercase hex), the matter and the principal
// importing it.
type ImportRequest struct {
	Object   blob.ID
	Tenant   string
	Matter   string
	By       string
	Filename string
	Size     int64
	SHA256   string
}

// ErrImportExists: an upload row for the object is there already.
var ErrImportExists = errors.New("uploads: the import's upload row exists")

// ErrInvalidImport: the imported file's name, size or digest is refused
// (the lane's filename rules); its message says which.
var ErrInvalidImport = errors.New("the file cannot be imported")

// StageImport writes the upload row of an imported file: origin import,
// no grant, scan_pending with its copy to verified/ already known (the
// importer put the object there), in the sweeper index at the no-verdict
// deadline (uploads.NoVerdictTimeout), so the scan gate judges it as any
// other upload — its event, or the no-verdict duty, never a pass. The
// caller checks who may import (package intake/review). NotExists: a
// second row for the same object is ErrImportExists.
func StageImport(ctx context.Context, st store.Store, req ImportRequest, now time.Time) (Upload, error) {
	if _, err := blob.ParseID(string(req.Object)); err != nil {
		return Upload{}, fmt.Errorf("stage import: %w", err)
	}
	if msg := checkFilename(req.Filename); msg != "" {
		return Upload{}, fmt.Errorf("%w: %s", ErrInvalidImport, msg)
	}
	if !validHexDigest(req.SHA256) || req.Size < 0 {
		return Upload{}, fmt.Errorf("%w: the size or SHA-256 is not valid", ErrInvalidImport)
	}
	now = now.UTC()
	u := Upload{ID: UploadID(req.Object), Object: req.Object, Tenant: req.Tenant, Matter: req.Matter,
		CredentialID: ImportCredentialPrefix + req.By, Filename: req.Filename, Size: req.Size, SHA256: req.SHA256,
		State: StateScanPending, Origin: OriginImport, ImportedBy: req.By, CreatedAt: now, UpdatedAt: now,
		SpentAt: now, CopiedAt: now, ExpiresAt: now}
	it, err := u.item()
	if err != nil {
		return Upload{}, err
	}
	pk, sk := sweep.IndexKeys(KindPending, u.ID, now.Add(NoVerdictTimeout))
	it.GSI1PK, it.GSI1SK = pk, sk
	it.Attrs[attrState] = string(StateScanPending)
	it.Attrs[attrSpentAt] = formatTime(now)
	it.Attrs[attrCopiedAt] = formatTime(now)
	it.Attrs[attrOrigin] = OriginImport
	it.Attrs[attrImportedBy] = req.By
	switch err := st.Put(ctx, it, store.NotExists()); {
	case errors.Is(err, store.ErrExists):
		return Upload{}, ErrImportExists
	case err != nil:
		return Upload{}, fmt.Errorf("stage import: %w", err)
	}
	u.Version = 1
	return u, nil
}
