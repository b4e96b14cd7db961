package uploads

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/sweep"
)

// UploadIDPrefix starts every upload id; the object's blob.ID follows, so
// the id names the object of every prefix (incoming/, verified/,
// quarantine/) and an S3 event for one of them finds its row, while S3's
// own upload ID never leaves Custody.
const UploadIDPrefix = "upl_"

// UploadID is the id of the upload of object id.
func UploadID(id blob.ID) string { return UploadIDPrefix + string(id) }

// ParseUploadID returns the object id of an upload id, or false when s is
// not one.
func ParseUploadID(s string) (blob.ID, bool) {
	rest, ok := strings.CutPrefix(s, UploadIDPrefix)
	if !ok {
		return "", false
	}
	id, err := blob.ParseID(rest)
	return id, err == nil
}

// UploadKey is the key of an upload row.
func UploadKey(uploadID string) store.Key { return store.Key{PK: "UPLOAD#" + uploadID, SK: "UPLOAD"} }

// Upload is an upload as its row holds it.
type Upload struct {
	ID     string
	Object blob.ID
	Tenant string
	Matter string
	// CredentialID binds the upload: no other credential sees or completes
	// it. Requester is the stored reference to that credential (intake
	// records who deposited the document).
	CredentialID string
	Requester    auth.Reference
	// GrantHash and GrantID name the grant it was begun with.
	GrantHash string
	GrantID   string
	Filename  string
	// MediaType is what the agent declared ("" for none): data only;
	// intake sniffs the bytes (issue 18).
	MediaType string
	Size      int64
	// SHA256 is the declared digest of the whole object, lowercase hex;
	// PartSHA256 the declared digest of each part, standard base64.
	SHA256     string
	PartSHA256 []string
	// Multipart is S3's upload ID.
	Multipart string
	State     State
	// Reason says why an upload was rejected or abandoned.
	Reason    string
	CreatedAt time.Time
	UpdatedAt time.Time
	// ExpiresAt is when an open upload lapses (UploadLife after it began).
	ExpiresAt time.Time
	SpentAt   time.Time
	// CopiedAt is when the copy duty found the object copied to verified/
	// (zero until then).
	CopiedAt time.Time
	// DocumentID is the document intake made of it (issue 18).
	DocumentID string
	// Origin is OriginLane or OriginImport; ImportedBy the principal who
	// imported it (StageImport).
	Origin     string
	ImportedBy string
	// The verdict (Decide): the engine, its threats or the reason, when,
	// and the ETag and size of the object scanned.
	ScanEngine  string
	Threats     []string
	ScanReason  string
	ScannedAt   time.Time
	ScannedETag string
	ScannedSize int64
	// IntakeClaimedAt is when intake of a clean upload was last claimed.
	IntakeClaimedAt time.Time
	// RescanRequestedAt and RescanBy record a firm administrator's rescan
	// (Rescan) until the object is back in verified/.
	RescanRequestedAt time.Time
	RescanBy          string
	// Version is the row's version as read.
	Version int64
}

// Attributes of the upload row. The scan gate (issue 17) adds its verdict
// with Decide (verdict.go).
const (
	attrUploadID   = "upload_id"
	attrObject     = "object"
	attrRequester  = "requested_by"
	attrGrantRef   = "grant_id"
	attrFilename   = "filename"
	attrMediaType  = "media_type"
	attrSize       = "size_bytes"
	attrSHA256     = "sha256"
	attrPartSHA256 = "part_sha256"
	attrMultipart  = "multipart_id"
	attrReason     = "reason"
	attrUpdatedAt  = "updated_at"
	attrUploadExp  = "open_until"
	attrCopiedAt   = "copied_at"
	attrDocumentID = "document_id"
)

// item is a new upload's row: open, in the sweeper index under KindOpen
// until its life ends.
func (u Upload) item() (store.Item, error) {
	ref, err := json.Marshal(u.Requester)
	if err != nil {
		return store.Item{}, fmt.Errorf("encode the upload's requester: %w", err)
	}
	k := UploadKey(u.ID)
	pk, sk := sweep.IndexKeys(KindOpen, u.ID, u.ExpiresAt)
	return store.Item{PK: k.PK, SK: k.SK, GSI1PK: pk, GSI1SK: sk, Version: 1, Attrs: map[string]any{
		attrUploadID: u.ID, attrObject: string(u.Object), attrTenant: u.Tenant, attrMatter: u.Matter,
		attrCredential: u.CredentialID, attrRequester: string(ref), attrGrantHash: u.GrantHash, attrGrantRef: u.GrantID,
		attrFilename: u.Filename, attrMediaType: u.MediaType, attrSize: u.Size, attrSHA256: u.SHA256,
		attrPartSHA256: strings.Join(u.PartSHA256, " "), attrMultipart: u.Multipart, attrState: string(StateOpen),
		attrCreatedAt: formatTime(u.CreatedAt), attrUpdatedAt: formatTime(u.UpdatedAt), attrUploadExp: formatTime(u.ExpiresAt),
	}}, nil
}

// DecodeUpload reads an upload row.
func DecodeUpload(it store.Item) (Upload, error) {
	u := Upload{
		ID: it.String(attrUploadID), Object: blob.ID(it.String(attrObject)), Tenant: it.String(attrTenant),
		Matter: it.String(attrMatter), CredentialID: it.String(attrCredential), GrantHash: it.String(attrGrantHash),
		GrantID: it.String(attrGrantRef), Filename: it.String(attrFilename), MediaType: it.String(attrMediaType),
		Size: it.Int(attrSize), SHA256: it.String(attrSHA256), PartSHA256: strings.Fields(it.String(attrPartSHA256)),
		Multipart: it.String(attrMultipart), State: State(it.String(attrState)), Reason: it.String(attrReason),
		CreatedAt: parseTime(it.String(attrCreatedAt)), UpdatedAt: parseTime(it.String(attrUpdatedAt)),
		ExpiresAt: parseTime(it.String(attrUploadExp)), SpentAt: parseTime(it.String(attrSpentAt)),
		CopiedAt: parseTime(it.String(attrCopiedAt)), DocumentID: it.String(attrDocumentID), Version: it.Version,
		Origin: it.String(attrOrigin), ImportedBy: it.String(attrImportedBy),
	}
	u.ScanEngine, u.ScanReason, u.ScannedETag = it.String(attrScanEngine), it.String(attrScanReason), it.String(attrScannedETag)
	u.ScannedAt, u.ScannedSize = parseTime(it.String(attrScannedAt)), it.Int(attrScannedSize)
	u.IntakeClaimedAt, u.RescanRequestedAt, u.RescanBy = parseTime(it.String(attrIntakeClaim)), parseTime(it.String(attrRescan)), it.String(attrRescanBy)
	if s := it.String(attrScanThreats); s != "" {
		if err := json.Unmarshal([]byte(s), &u.Threats); err != nil {
			return Upload{}, fmt.Errorf("upload row %s: threats: %w", it.Key(), err)
		}
		if len(u.Threats) == 0 {
			u.Threats = nil
		}
	}
	if s := it.String(attrRequester); s != "" {
		if err := json.Unmarshal([]byte(s), &u.Requester); err != nil {
			return Upload{}, fmt.Errorf("upload row %s: requester: %w", it.Key(), err)
		}
	}
	if _, ok := ParseUploadID(u.ID); !ok || u.Object == "" || u.State == "" || u.Tenant == "" || u.CredentialID == "" {
		return Upload{}, fmt.Errorf("upload row %s lacks its id, object, state, tenant or credential", it.Key())
	}
	return u, nil
}

// Transition is the one conditional write that moves an upload from one
// state to another (intake's clean → in_review; the scan gate's verdicts
// use Decide, which also places a held upload in its listing): set holds
// the attributes the new state brings (the document id), and the upload
// leaves the sweeper index. Its condition fails
// (store.ErrConflict, or a cancelled transaction) unless the row is in
// state from, so a duplicate or late event changes nothing.
func Transition(uploadID string, from, to State, set map[string]any, now time.Time) store.Op {
	s := map[string]any{attrState: string(to), attrUpdatedAt: formatTime(now)}
	for k, v := range set {
		s[k] = v
	}
	empty := ""
	return store.UpdateOp(UploadKey(uploadID), store.Update{Set: s, GSI1PK: &empty, GSI1SK: &empty},
		store.AttrEquals(attrState, string(from)))
}

// layout is the fixed part layout of an upload of size bytes: the size of
// each part (PartSize, the last the rest).
func layout(size int64) []int64 {
	n := (size + PartSize - 1) / PartSize
	parts := make([]int64, n)
	for i := range parts {
		parts[i] = PartSize
	}
	if n > 0 {
		parts[n-1] = size - (n-1)*PartSize
	}
	return parts
}
