package uploads

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/sweep"
)

// Blob is what the lane needs of the object store: multipart uploads and
// whole objects (package blob's engine, or a decorator over it in tests).
type Blob interface {
	blob.Multipart
	blob.Objects
}

// Autonomy is the hook of the firm's autonomy setting (issue 13;
// docs/decisions.md "Autonomy": uploads are internal and already gated by a
// grant a person minted, so they obey L0 only — L0 refuses the lane, L1 to
// L4 run it). Its rows join the lane's one batch read, so the setting
// costs no round trip. nil: no setting is consulted (L2, the default).
//
// TODO(issue 13): the governed-writes work provides the setting's rows and
// its reading; until it lands, the lane is composed with a nil Autonomy.
type Autonomy interface {
	// Keys are the rows tool's setting in tenant is read from (the tool's
	// own and the tenant default).
	Keys(tenant, tool string) []store.Key
	// DeniesAll reports whether those rows (aligned with Keys, nil where
	// absent) set the tool to L0.
	DeniesAll(rows []*store.Item) bool
}

// The lane's tools, as the autonomy setting names them.
const (
	ToolBegin    = "begin_upload_session"
	ToolComplete = "complete_upload"
)

// Options configure a Lane.
type Options struct {
	Store store.Store
	Blob  Blob
	// Scanner is the malware scanner whose posture the lane reports and
	// whose MaxBytes caps an upload; nil is OFF: the lane refuses.
	Scanner  scan.Scanner
	Autonomy Autonomy
	Logger   *slog.Logger
}

// Lane runs the upload lane's steps. Safe for concurrent use.
type Lane struct {
	store    store.Store
	blob     Blob
	scanner  scan.Scanner
	autonomy Autonomy
	log      *slog.Logger
}

// New returns the lane.
func New(opts Options) *Lane {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Lane{store: opts.Store, blob: opts.Blob, scanner: opts.Scanner, autonomy: opts.Autonomy, log: opts.Logger}
}

// Caller is who runs a step: the admitted credential, as the access funnel
// sees it, at the call's time.
type Caller struct {
	Credential *auth.Credential
	Who        access.Who
	Now        time.Time
	// Pre, when set, are the rows the invocation core's write step already
	// read in the call's one batch read (tools.Call.Prefetched, the keys
	// of PrefetchKeys), with the matter and the autonomy setting already
	// decided there: the lane reads nothing more. Nil: the lane reads them
	// itself (its own callers and tests).
	Pre []*store.Item
}

// PrefetchKeys are the rows a step of the lane reads, for the invocation
// core's write step to read them in its one batch: begin, the grant; complete,
// the upload then the grant. A malformed token or id names none (the step
// refuses it before it reads).
func PrefetchKeys(tool, grantToken, uploadID string) []store.Key {
	if !WellFormedToken(grantToken) {
		return nil
	}
	switch tool {
	case ToolBegin:
		return []store.Key{GrantKey(HashToken(grantToken))}
	case ToolComplete:
		if _, ok := ParseUploadID(uploadID); ok {
			return []store.Key{UploadKey(uploadID), GrantKey(HashToken(grantToken))}
		}
	}
	return nil
}

// Effect is work that must follow a step's commit, naming who finishes it
// if the process dies in between (mcp.Effect).
type Effect struct {
	Name, Recovery string
	Run            func(ctx context.Context) error
}

// Step is a step's outcome: its answer — Result, or Refused, a refusal
// that still writes (an upload rejected frees its slot) — which stands
// only once Ops are committed with the call's audit row; Conflict answers
// instead when a condition of Ops failed (failed indexes Ops) and nothing
// was written (its error is a *Refusal); After follows the commit. Replay
// marks a Result read back from its row (an earlier call's receipt).
type Step[T any] struct {
	Result   T
	Refused  *Refusal
	Ops      []store.Op
	Conflict func(ctx context.Context, failed int) (T, bool, error)
	After    []Effect
	Replay   bool
}

// Posture is the scanner's posture (OFF without one).
func (l *Lane) Posture(ctx context.Context) scan.Posture { return scan.PostureOf(ctx, l.scanner) }

// MaxBytes is the largest upload the lane takes now: min(MaxUploadBytes,
// the scanner's MaxBytes); 0 when the scanner is OFF.
func (l *Lane) MaxBytes() int64 {
	if l.scanner == nil {
		return 0
	}
	return min(MaxUploadBytes, l.scanner.MaxBytes())
}

// unavailable logs a dependency failure once, here, and answers
// UNAVAILABLE with the grant's state.
func (l *Lane) unavailable(ctx context.Context, step string, spent bool, err error) *Refusal {
	l.log.WarnContext(ctx, "upload lane dependency failed", "step", step, "err", err)
	r := refuse(ClassUnavailable, msgUnavailable)
	if spent {
		r.Message = "The upload service could not complete this step just now. Retry shortly."
	}
	r.Spent = spent
	return r
}

// BeginRequest is begin_upload_session's input.
type BeginRequest struct {
	GrantToken string
	CaseID     string
	Filename   string
	Size       int64
	// SHA256 is the whole file's digest, 64 lowercase hex digits.
	SHA256 string
	// PartSHA256 holds each part's SHA-256 in standard base64, exactly
	// ⌈Size / PartSize⌉ of them, in part order.
	PartSHA256        []string
	MediaType         string
	ChecksumAlgorithm string
}

// PartURL is one part's presigned request.
type PartURL struct {
	PartNumber int32
	URL        string
	Method     string
	// Headers are the signed headers other than Host, each to be sent
	// exactly as given (Content-Length and x-amz-checksum-sha256).
	Headers map[string]string
	Size    int64
}

// Session is a begun upload: its row and the parts to PUT, valid until
// ExpiresAt. The URLs are never stored.
type Session struct {
	Upload    Upload
	Parts     []PartURL
	ExpiresAt time.Time
}

// checkBegin validates what the schema cannot: the layout, the digests, the
// filename and media type. Every message names the field, never its value.
func checkBegin(req BeginRequest) *Refusal {
	if req.ChecksumAlgorithm != "" && req.ChecksumAlgorithm != ChecksumAlgorithm {
		return invalid("checksum_algorithm", "The field 'checksum_algorithm' must be SHA256 or left out: parts are checked with SHA-256 only.")
	}
	if req.Size < 1 || req.Size > MaxUploadBytes {
		return invalid("size_bytes", fmt.Sprintf("The field 'size_bytes' must be from 1 to %d (1 GiB).", MaxUploadBytes))
	}
	if n := len(layout(req.Size)); len(req.PartSHA256) != n {
		return invalid("part_sha256", fmt.Sprintf("The field 'part_sha256' must hold exactly %d digests for this size: one per %d-byte part, the last part the remainder.", n, PartSize))
	}
	for i, d := range req.PartSHA256 {
		if sum, err := base64.StdEncoding.Strict().DecodeString(d); err != nil || len(sum) != sha256.Size {
			return invalid(fmt.Sprintf("part_sha256.%d", i), fmt.Sprintf("The field 'part_sha256.%d' must be a SHA-256 digest in standard base64 (44 characters).", i))
		}
	}
	if !validHexDigest(req.SHA256) {
		return invalid("sha256", "The field 'sha256' must be the file's SHA-256 as 64 lowercase hex digits.")
	}
	if msg := checkFilename(req.Filename); msg != "" {
		return invalid("filename", msg)
	}
	if req.MediaType != "" {
		if _, _, err := mime.ParseMediaType(req.MediaType); err != nil || len(req.MediaType) > MaxMediaTypeBytes || !utf8.ValidString(req.MediaType) {
			return invalid("media_type", "The field 'media_type' must be a media type such as application/pdf.")
		}
	}
	return nil
}

func validHexDigest(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// checkFilename returns why a filename is refused, or "" (issue 16: 1–255
// bytes of UTF-8, no control characters, no slashes; nor a name of dots
// alone, nor Unicode format characters such as U+202E, which would show
// the reviewer another name). A filename is data:
// it never becomes a key or a path.
func checkFilename(s string) string {
	switch {
	case s == "" || len(s) > MaxFilenameBytes:
		return fmt.Sprintf("The field 'filename' must be 1 to %d bytes long.", MaxFilenameBytes)
	case !utf8.ValidString(s):
		return "The field 'filename' must be valid UTF-8."
	case strings.ContainsAny(s, `/\`):
		return "The field 'filename' must be a name without slashes, not a path."
	case strings.Trim(s, ".") == "":
		return "The field 'filename' must name a file, not '.' or '..'."
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return "The field 'filename' must not contain control characters."
		}
		// Format characters (a right-to-left override, zero-width joiners)
		// make a name read as another on the reviewer's screen.
		if unicode.Is(unicode.Cf, r) {
			return "The field 'filename' must not contain invisible formatting characters (such as a direction override)."
		}
	}
	return ""
}

// autonomyKeys are the autonomy setting's rows for tool in the caller's
// tenant (none without the hook).
func (l *Lane) autonomyKeys(c Caller, tool string) []store.Key {
	if l.autonomy == nil {
		return nil
	}
	return l.autonomy.Keys(c.Credential.Tenant, tool)
}

// Begin opens an upload session (docs/contracts.md §5): it spends nothing.
// Its reads are one batch (the grant, the matter, the autonomy setting);
// its one S3 call creates the multipart upload; its write, committed with
// the call, takes one of the grant's open-upload slots (open_uploads + 1
// while below max_open and the grant unspent) and stores the upload row.
// Refusals (the error, always a *Refusal with Spent set): VALIDATION,
// SCANNER_UNAVAILABLE, AUTONOMY_DENIED, NOT_FOUND (the matter),
// GRANT_INVALID, BACKPRESSURE, UNAVAILABLE.
func (l *Lane) Begin(ctx context.Context, c Caller, req BeginRequest) (Step[Session], error) {
	var none Step[Session]
	if r := checkBegin(req); r != nil {
		return none, r
	}
	if l.Posture(ctx) == scan.Off {
		return none, refuse(ClassScanner, msgScannerOff)
	}
	if limit := l.MaxBytes(); req.Size > limit {
		return none, invalid("size_bytes", fmt.Sprintf("The field 'size_bytes' must be at most %d: the largest file this firm's scanner accepts.", limit))
	}
	if !WellFormedToken(req.GrantToken) {
		return none, refuse(ClassGrant, msgGrantInvalid)
	}
	matterKey, ok := access.MatterRow(c.Who, req.CaseID)
	if !ok {
		return none, refuse(ClassNotFound, msgNoMatter)
	}
	hash := HashToken(req.GrantToken)
	var rows []*store.Item
	if c.Pre != nil {
		rows = c.Pre // the grant; the write step decided the matter and autonomy
	} else {
		keys := append([]store.Key{GrantKey(hash), matterKey}, l.autonomyKeys(c, ToolBegin)...)
		got, err := l.store.BatchGet(ctx, keys)
		if err != nil {
			return none, l.unavailable(ctx, "begin: read the grant", false, err)
		}
		if l.autonomy != nil && l.autonomy.DeniesAll(got[2:]) {
			return none, refuse(ClassAutonomy, msgAutonomyDenied)
		}
		if _, err := access.MatterFrom(c.Who, req.CaseID, got[1]); errors.Is(err, access.ErrNoMatter) {
			return none, refuse(ClassNotFound, msgNoMatter)
		} else if err != nil {
			return none, l.unavailable(ctx, "begin: read the matter", false, err)
		}
		rows = got
	}
	if len(rows) == 0 {
		return none, refuse(ClassGrant, msgGrantInvalid)
	}
	if rows[0] == nil {
		return none, refuse(ClassGrant, msgGrantInvalid)
	}
	g := decodeGrant(*rows[0])
	if r := usable(g, c, req.CaseID); r != nil {
		return none, r
	}
	if g.OpenUploads >= g.MaxOpen {
		return none, refuse(ClassBackpress, msgBackpressure)
	}
	// A part URL lives at most PartURLLife and never past the grant
	// (the signing credentials may cut it shorter; see blob).
	life := min(PartURLLife, g.ExpiresAt.Sub(c.Now))
	if life < time.Second {
		return none, refuse(ClassGrant, msgGrantInvalid)
	}

	id := blob.NewID()
	up, err := l.blob.CreateMultipartUpload(ctx, blob.Incoming(id), blob.CreateOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return none, l.unavailable(ctx, "begin: create the multipart upload", false, err)
	}
	sizes := layout(req.Size)
	parts := make([]PartURL, len(sizes))
	expires := c.Now.Add(UploadLife)
	for i, size := range sizes {
		pr, err := l.blob.PresignUploadPart(ctx, up, blob.PartRequest{
			PartNumber: int32(i + 1), Size: size, ChecksumSHA256: req.PartSHA256[i], Expires: life,
		})
		if err != nil {
			l.abort(ctx, up)
			return none, l.unavailable(ctx, "begin: presign the parts", false, err)
		}
		if pr.Expires.Before(expires) {
			expires = pr.Expires
		}
		parts[i] = PartURL{PartNumber: int32(i + 1), URL: pr.URL, Method: pr.Method, Headers: flatten(pr.Header), Size: size}
	}
	u := Upload{
		ID: UploadID(id), Object: id, Tenant: c.Credential.Tenant, Matter: req.CaseID,
		CredentialID: c.Credential.ID, Requester: c.Credential.Reference(), GrantHash: hash, GrantID: g.ID,
		Filename: req.Filename, MediaType: req.MediaType, Size: req.Size, SHA256: req.SHA256,
		PartSHA256: req.PartSHA256, Multipart: up.UploadID, State: StateOpen,
		CreatedAt: c.Now, UpdatedAt: c.Now, ExpiresAt: c.Now.Add(UploadLife),
	}
	item, err := u.item()
	if err != nil {
		l.abort(ctx, up)
		return none, l.unavailable(ctx, "begin: encode the upload row", false, err)
	}
	return Step[Session]{
		Result: Session{Upload: u, Parts: parts, ExpiresAt: expires},
		Ops: []store.Op{
			store.UpdateOp(GrantKey(hash), store.Update{Add: map[string]int64{attrOpenUploads: 1}},
				store.AttrEquals(attrState, string(GrantUnspent)), store.AttrBelow(attrOpenUploads, g.MaxOpen)),
			store.PutOp(item, store.NotExists()),
		},
		// The slot was taken meanwhile (or the grant changed): nothing was
		// written, and the S3 upload is withdrawn.
		Conflict: func(ctx context.Context, failed int) (Session, bool, error) {
			l.abort(ctx, up)
			if failed != 0 {
				return Session{}, false, refuse(ClassConflict, "This upload session collided with another; begin again.")
			}
			it, err := l.store.Get(ctx, GrantKey(hash))
			switch {
			case errors.Is(err, store.ErrNotFound):
				return Session{}, false, refuse(ClassGrant, msgGrantInvalid)
			case err != nil:
				return Session{}, false, l.unavailable(ctx, "begin: re-read the grant", false, err)
			}
			if r := usable(decodeGrant(it), c, req.CaseID); r != nil {
				return Session{}, false, r
			}
			return Session{}, false, refuse(ClassBackpress, msgBackpressure)
		},
	}, nil
}

// usable refuses a grant the caller cannot use for matter: bound to
// another tenant, key or matter (spent false: the state of another's grant
// is not told), or not unspent (spent true only when it is spent).
func usable(g Grant, c Caller, matter string) *Refusal {
	if !g.boundTo(c.Credential, matter) {
		return refuse(ClassGrant, msgGrantInvalid)
	}
	if g.State != GrantUnspent || !c.Now.Before(g.ExpiresAt) {
		r := refuse(ClassGrant, msgGrantInvalid)
		r.Spent = g.State == GrantSpent
		return r
	}
	return nil
}

// flatten keeps the one value of each signed header.
func flatten(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, vs := range h {
		if len(vs) > 0 {
			out[k] = vs[0]
		}
	}
	return out
}

// abort withdraws a multipart upload, best effort: S3's lifecycle rule
// aborts what is left after 2 days.
func (l *Lane) abort(ctx context.Context, up blob.Upload) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := l.blob.AbortMultipartUpload(ctx, up); err != nil && !errors.Is(err, blob.ErrNotFound) {
		l.log.WarnContext(ctx, "abort a multipart upload", "object", up.Ref.String(), "err", err)
	}
}

// Completed is a completed upload: its row after the spend (or as read, for
// a replay) and the scanner's posture.
type Completed struct {
	Upload  Upload
	Posture scan.Posture
}

// Complete completes an upload and spends its grant (docs/contracts.md §5),
// in this order: the grant and the upload are read in one batch; the parts
// S3 holds are listed (never the client's ETags) and must be the layout
// with the declared checksums; S3 assembles them; the object is streamed
// back through SHA-256 (blob.Verify) and must be exactly the declared size
// and digest. A mismatch deletes the object, marks the upload rejected and
// frees its slot: VALIDATION, spent false, the grant still usable. Only
// then is the grant spent, by the step's one conditional write (the upload
// open → scan_pending, the grant unspent → spent): if another upload spent
// it first, the write is cancelled, this object is deleted and the answer
// is GRANT_INVALID, spent true. After the commit the object is copied to
// verified/ and its incoming/ source deleted; a copy that fails still
// answers scan_pending (CopyDuty finishes it). A repeat call answers the
// original receipt from the row.
//
// A multipart upload S3 no longer knows (completed by an earlier call
// whose answer was lost, or lost when s3local restarted) resumes from the
// assembled object when it exists; otherwise the upload is abandoned:
// VALIDATION, spent false, begin again.
func (l *Lane) Complete(ctx context.Context, c Caller, token, uploadID string) (Step[Completed], error) {
	var none Step[Completed]
	id, ok := ParseUploadID(uploadID)
	if !ok {
		return none, refuse(ClassNotFound, msgNoUpload)
	}
	if !WellFormedToken(token) {
		return none, refuse(ClassGrant, msgGrantInvalid)
	}
	hash := HashToken(token)
	rows := c.Pre // the upload and the grant; the write step decided autonomy
	if rows == nil {
		keys := append([]store.Key{UploadKey(uploadID), GrantKey(hash)}, l.autonomyKeys(c, ToolComplete)...)
		got, err := l.store.BatchGet(ctx, keys)
		if err != nil {
			return none, l.unavailable(ctx, "complete: read the upload and the grant", false, err)
		}
		rows = got
	}
	if len(rows) < 2 || rows[0] == nil {
		return none, refuse(ClassNotFound, msgNoUpload)
	}
	u, err := DecodeUpload(*rows[0])
	if err != nil {
		return none, l.unavailable(ctx, "complete: decode the upload", false, err)
	}
	if u.Tenant != c.Credential.Tenant || u.CredentialID != c.Credential.ID || u.Object != id {
		return none, refuse(ClassNotFound, msgNoUpload)
	}
	if u.GrantHash != hash {
		return none, refuse(ClassGrant, msgGrantInvalid) // the grant of another upload
	}
	var g *Grant
	if rows[1] != nil {
		gg := decodeGrant(*rows[1])
		g = &gg
	}
	if u.State != StateOpen {
		return l.settled(ctx, u, g)
	}
	if c.Pre == nil && l.autonomy != nil && l.autonomy.DeniesAll(rows[2:]) {
		return none, refuse(ClassAutonomy, msgAutonomyDenied)
	}
	if g == nil {
		return none, refuse(ClassGrant, msgGrantInvalid) // expired: its row is gone
	}
	if r := usable(*g, c, u.Matter); r != nil {
		return none, r
	}
	if l.Posture(ctx) == scan.Off {
		return none, refuse(ClassScanner, msgScannerOff)
	}
	ref := blob.Incoming(id)
	up := blob.Upload{Ref: ref, UploadID: u.Multipart}
	if !c.Now.Before(u.ExpiresAt) {
		// An open upload lives UploadLife; past it, it is abandoned here
		// as the sweeper would abandon it.
		l.abort(ctx, up)
		step := l.end(c, u, *g, StateAbandoned, "it lapsed 24 hours after it began")
		step.Refused = refuse(ClassValidation, "This upload lapsed 24 hours after it began; the grant was not spent. Begin a new upload session.")
		return step, nil
	}

	parts, err := l.blob.ListParts(ctx, up)
	switch {
	case errors.Is(err, blob.ErrNotFound):
		return l.resume(ctx, c, u, *g)
	case err != nil:
		return none, l.unavailable(ctx, "complete: list the parts", false, err)
	}
	missing, bad := compareParts(u, parts)
	if bad != "" {
		l.abort(ctx, up)
		return l.reject(c, u, *g, bad), nil
	}
	if len(missing) > 0 {
		return none, &Refusal{Class: ClassValidation, Message: fmt.Sprintf(
			"Parts %s of %d have not been uploaded yet; PUT them with their URLs and call complete_upload again (if their URLs have expired, begin a new upload session). The grant was not spent.",
			joinInts(missing), len(u.PartSHA256))}
	}
	switch err := l.blob.CompleteMultipartUpload(ctx, up, parts); {
	case errors.Is(err, blob.ErrNotFound):
		return l.resume(ctx, c, u, *g)
	case errors.Is(err, blob.ErrInvalid):
		l.abort(ctx, up)
		return l.reject(c, u, *g, "S3 refused to assemble its parts"), nil
	case err != nil:
		return none, l.unavailable(ctx, "complete: assemble the parts", false, err)
	}
	return l.verifyAndSpend(ctx, c, u, *g)
}

// resume continues an upload whose multipart upload S3 no longer knows:
// from the assembled object when it is there, else the upload is
// abandoned (its parts are gone) — unless another call ended it meanwhile,
// whose outcome is answered.
func (l *Lane) resume(ctx context.Context, c Caller, u Upload, g Grant) (Step[Completed], error) {
	_, err := l.blob.HeadObject(ctx, blob.Incoming(u.Object))
	switch {
	case err == nil:
		return l.verifyAndSpend(ctx, c, u, g)
	case !errors.Is(err, blob.ErrNotFound):
		return Step[Completed]{}, l.unavailable(ctx, "complete: find the assembled object", false, err)
	}
	if step, ended, err := l.reread(ctx, u); ended {
		return step, err
	}
	step := l.end(c, u, g, StateAbandoned, "its parts were lost before it was completed (e.g. a server restart)")
	step.Refused = refuse(ClassValidation, msgBeginAgain)
	return step, nil
}

// reread reads the upload and its grant again after S3 said another call
// may have moved it; ended reports that it is no longer open, and the
// answer for that.
func (l *Lane) reread(ctx context.Context, u Upload) (step Step[Completed], ended bool, err error) {
	rows, err := l.store.BatchGet(ctx, []store.Key{UploadKey(u.ID), GrantKey(u.GrantHash)})
	if err != nil {
		return step, true, l.unavailable(ctx, "complete: re-read the upload", false, err)
	}
	if rows[0] == nil {
		return step, true, refuse(ClassNotFound, msgNoUpload)
	}
	now, err := DecodeUpload(*rows[0])
	if err != nil {
		return step, true, l.unavailable(ctx, "complete: decode the upload", false, err)
	}
	if now.State == StateOpen {
		return step, false, nil
	}
	var g *Grant
	if rows[1] != nil {
		gg := decodeGrant(*rows[1])
		g = &gg
	}
	step, err = l.settled(ctx, now, g)
	return step, true, err
}

// settled answers for an upload that is no longer open: the original
// receipt when it spent its grant (a replay), else why it ended.
func (l *Lane) settled(ctx context.Context, u Upload, g *Grant) (Step[Completed], error) {
	if u.State.Spent() {
		return Step[Completed]{Result: Completed{Upload: u, Posture: l.Posture(ctx)}, Replay: true}, nil
	}
	spent := g != nil && g.State == GrantSpent
	if u.State == StateRejected {
		return Step[Completed]{}, &Refusal{Class: ClassValidation, Spent: spent,
			Message: "This upload was rejected because " + u.Reason + "; begin a new upload session."}
	}
	r := refuse(ClassValidation, "This upload can no longer be completed because "+u.Reason+"; begin a new upload session.")
	r.Spent = spent
	return Step[Completed]{}, r
}

// compareParts holds the parts S3 lists to the upload's layout and
// declared checksums: the part numbers missing, or why the parts cannot
// make the file ("" when they can).
func compareParts(u Upload, parts []blob.Part) (missing []int, bad string) {
	sizes := layout(u.Size)
	have := make(map[int32]blob.Part, len(parts))
	for _, p := range parts {
		if p.PartNumber < 1 || int(p.PartNumber) > len(sizes) {
			return nil, "S3 holds a part outside the upload's layout"
		}
		have[p.PartNumber] = p
	}
	for i, size := range sizes {
		p, ok := have[int32(i+1)]
		switch {
		case !ok:
			missing = append(missing, i+1)
		case p.Size != size:
			return nil, fmt.Sprintf("part %d is not the %d bytes of the layout", i+1, size)
		case p.ChecksumSHA256 != u.PartSHA256[i]:
			return nil, fmt.Sprintf("part %d does not have its declared SHA-256", i+1)
		}
	}
	return missing, ""
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// reject ends an upload whose bytes are not the declared ones: rejected,
// its slot freed, VALIDATION with the grant unspent.
func (l *Lane) reject(c Caller, u Upload, g Grant, reason string) Step[Completed] {
	step := l.end(c, u, g, StateRejected, reason)
	step.Refused = refuse(ClassValidation, "The uploaded file was rejected because "+reason+"; the grant was not spent and can be used again. Begin a new upload session.")
	return step
}

// end is the step that ends an open upload as rejected or abandoned (one
// write: the upload, and the grant's slot back while it is unspent); its
// row is kept EndedRetention. Its conflict (another call moved the upload,
// or the grant changed) answers from the rows as they are then.
func (l *Lane) end(c Caller, u Upload, g Grant, to State, reason string) Step[Completed] {
	exp := c.Now.Add(EndedRetention).Unix()
	empty := ""
	ops := []store.Op{store.UpdateOp(UploadKey(u.ID), store.Update{
		Set:       map[string]any{attrState: string(to), attrReason: reason, attrUpdatedAt: formatTime(c.Now)},
		ExpiresAt: &exp, GSI1PK: &empty, GSI1SK: &empty,
	}, store.AttrEquals(attrState, string(StateOpen)))}
	if g.State == GrantUnspent {
		ops = append(ops, store.UpdateOp(GrantKey(g.Hash), store.Update{Add: map[string]int64{attrOpenUploads: -1}},
			store.AttrEquals(attrState, string(GrantUnspent))))
	}
	return Step[Completed]{Ops: ops, Conflict: func(ctx context.Context, _ int) (Completed, bool, error) {
		step, ended, err := l.reread(ctx, u)
		if !ended {
			// The upload is open but its grant changed meanwhile (spent or
			// revoked): the upload lapses with its life.
			rows, gerr := l.store.BatchGet(ctx, []store.Key{GrantKey(u.GrantHash)})
			spent := gerr == nil && rows[0] != nil && decodeGrant(*rows[0]).State == GrantSpent
			return Completed{}, false, &Refusal{Class: ClassValidation, Spent: spent,
				Message: "This upload cannot be completed because " + reason + "; begin a new upload session."}
		}
		if err != nil {
			return Completed{}, false, err
		}
		return step.Result, step.Replay, nil
	}}
}

// verifyAndSpend streams the assembled object through SHA-256 and, when it
// is exactly the declared file, returns the spend.
func (l *Lane) verifyAndSpend(ctx context.Context, c Caller, u Upload, g Grant) (Step[Completed], error) {
	ref := blob.Incoming(u.Object)
	want, _ := hex.DecodeString(u.SHA256)
	err := blob.Verify(ctx, l.blob, ref, u.Size, [sha256.Size]byte(want))
	switch {
	case errors.Is(err, blob.ErrMismatch):
		l.deleteObject(ctx, ref)
		return l.reject(c, u, g, "the assembled file does not have the declared size and SHA-256"), nil
	case errors.Is(err, blob.ErrNotFound):
		// Another call moved it on (copied to verified/) or it was lost.
		if step, ended, err := l.reread(ctx, u); ended {
			return step, err
		}
		return Step[Completed]{}, l.unavailable(ctx, "complete: read the assembled object", false, err)
	case err != nil:
		return Step[Completed]{}, l.unavailable(ctx, "complete: verify the assembled object", false, err)
	}
	return l.spend(c, u, g), nil
}

// spend is the one conditional write that spends the grant: the upload
// open → scan_pending (into the sweeper index under KindPending), the
// grant unspent → spent, and its listing row. Its matched rows are the
// verdict (ARCHITECTURE invariant: "a grant is spent by a conditional
// write whose matched-row count is the verdict").
func (l *Lane) spend(c Caller, u Upload, g Grant) Step[Completed] {
	now := c.Now
	pk, sk := sweep.IndexKeys(KindPending, u.ID, now.Add(CopyGrace))
	listingExp := g.ExpiresAt.Add(ListingRetention).Unix()
	spent := map[string]any{attrState: string(GrantSpent), attrSpentBy: u.ID, attrSpentAt: formatTime(now)}
	unlisted := ""
	ops := []store.Op{
		store.UpdateOp(UploadKey(u.ID), store.Update{
			Set:    map[string]any{attrState: string(StateScanPending), attrSpentAt: formatTime(now), attrUpdatedAt: formatTime(now)},
			GSI1PK: &pk, GSI1SK: &sk,
		}, store.AttrEquals(attrState, string(StateOpen))),
		store.UpdateOp(GrantKey(g.Hash), store.Update{Set: spent, Add: map[string]int64{attrOpenUploads: -1}},
			store.AttrEquals(attrState, string(GrantUnspent))),
		// Spent, the listing row is no longer due to expire (KindGrant).
		store.UpdateOp(GrantListingKey(g.Tenant, g.ID), store.Update{Set: spent, ExpiresAt: &listingExp, GSI1PK: &unlisted, GSI1SK: &unlisted}),
	}
	done := u
	done.State, done.SpentAt, done.UpdatedAt = StateScanPending, now, now
	id := u.Object
	return Step[Completed]{
		Result: Completed{Upload: done},
		Ops:    ops,
		Conflict: func(ctx context.Context, failed int) (Completed, bool, error) {
			if failed == 1 {
				// The grant was spent by another upload first: this one lost,
				// and its verified bytes go (no read: docs/decisions.md pins
				// the lost spend at two reads and two writes).
				l.deleteObject(ctx, blob.Incoming(id))
				r := refuse(ClassGrant, msgGrantInvalid)
				r.Spent = true
				return Completed{}, false, r
			}
			// The upload itself moved: another call completed it (or ended it).
			step, ended, err := l.reread(ctx, u)
			if err != nil {
				return Completed{}, false, err
			}
			if !ended {
				return Completed{}, false, refuse(ClassConflict, "This upload changed while it was being completed; call complete_upload again.")
			}
			return step.Result, step.Replay, nil
		},
		After: []Effect{{
			Name:     "copy the upload to verified/",
			Recovery: "the sweeper's upload copy duty (uploads.CopyDuty) copies a scan_pending upload whose incoming/ object remains",
			Run:      func(ctx context.Context) error { return copyToVerified(ctx, l.blob, id) },
		}},
	}
}

// deleteObject removes an object, best effort (the lifecycle rule expires
// incoming/ after 2 days).
func (l *Lane) deleteObject(ctx context.Context, ref blob.Ref) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := l.blob.DeleteObject(ctx, ref); err != nil {
		l.log.WarnContext(ctx, "delete an upload's object", "object", ref.String(), "err", err)
	}
}

// copyToVerified copies a spent upload's object to verified/, where alone
// the scanner looks, and deletes its incoming/ source. Both S3 calls are
// idempotent, so a sweep racing the effect does no harm.
func copyToVerified(ctx context.Context, objects blob.Objects, id blob.ID) error {
	if err := objects.CopyObject(ctx, blob.Incoming(id), blob.Verified(id)); err != nil {
		return fmt.Errorf("copy upload %s to verified/: %w", UploadID(id), err)
	}
	if err := objects.DeleteObject(ctx, blob.Incoming(id)); err != nil {
		return fmt.Errorf("delete the incoming/ source of upload %s: %w", UploadID(id), err)
	}
	return nil
}

// Status reads an upload of the caller's credential (one read): NOT_FOUND
// for another credential's, as for none.
func (l *Lane) Status(ctx context.Context, c Caller, uploadID string) (Upload, error) {
	if _, ok := ParseUploadID(uploadID); !ok {
		return Upload{}, refuse(ClassNotFound, msgNoUpload)
	}
	it, err := l.store.Get(ctx, UploadKey(uploadID))
	if errors.Is(err, store.ErrNotFound) {
		return Upload{}, refuse(ClassNotFound, msgNoUpload)
	}
	if err != nil {
		return Upload{}, l.unavailable(ctx, "status: read the upload", false, err)
	}
	u, err := DecodeUpload(it)
	if err != nil {
		return Upload{}, l.unavailable(ctx, "status: decode the upload", false, err)
	}
	if u.Tenant != c.Credential.Tenant || u.CredentialID != c.Credential.ID {
		return Upload{}, refuse(ClassNotFound, msgNoUpload)
	}
	return u, nil
}
