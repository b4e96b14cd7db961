// Package uploads is the upload lane (docs/contracts.md §5): how an agent
// deposits bytes into a matter without being trusted with anything. A firm
// administrator mints a single-use grant bound to one API key and one
// matter (grant.go); the agent begins an upload session with it, PUTs the
// parts straight to S3 with presigned URLs whose checksums are signed
// headers, and completes it (lane.go). Three rules shape the package:
//
//   - Nothing is spent until the bytes are proven. Beginning an upload
//     spends nothing (it takes one of the grant's open-upload slots);
//     completing it lists the parts S3 holds (never the client's ETags),
//     assembles them and streams the object back through SHA-256
//     (blob.Verify). Only an exact match spends the grant, with one
//     conditional write whose outcome is the verdict: of any number of
//     uploads racing one grant, one is spent and every other is refused
//     with its object deleted.
//   - Nothing unverified or unspent reaches a scanner. Only after the spend
//     is the object copied from incoming/ to verified/, the one prefix the
//     scan gate watches; a copy that fails is finished by the sweeper
//     (CopyDuty), so the answer stands.
//   - Nothing the agent names becomes a key. Object keys are random hex
//     (package blob); the filename and media type are data on the upload
//     row, never a path.
//
// The package depends only downward — store, blob, scan, access, records,
// auth — and knows nothing of tools or HTTP: a step returns its answer and
// the writes to commit with the call's audit row (Step), and the tool layer
// (shared/lanetools) hands them to the invocation core.
//
// # Rows
//
// A grant is two rows, written in one transaction: `CGT#<sha256 of the
// token>` / `GRANT` (the authority: state, open-upload count, bindings;
// it expires with the grant, so an expired grant is simply absent, to
// every read and every condition) and the tenant's listing row
// `T#<tenant>` / `GRANT#<grant id>` (what `custodyctl grant list` shows;
// kept ListingRetention past the grant's expiry). The token itself is
// printed once and never stored, logged or audited.
//
// An upload is one row, `UPLOAD#<upload id>` / `UPLOAD`, whose id is
// "upl_" and the object's random hex: its S3 upload ID, the declared size,
// SHA-256 and part digests, the filename, and its State. The scan gate
// (shared/scan/gate) moves it from scan_pending to clean, infected or
// scan_failed with one conditional write (Decide, verdict.go), which
// records what was scanned; an infected or scan_failed upload is then held
// in its tenant's listing (ListHeld), and a firm administrator's Rescan is
// the only way back to scan_pending. An upload that waits for the sweeper
// is in its index (sweep.IndexKeys): open uploads under KindOpen, due when
// their 24 hours end (OpenDuty abandons them); scan_pending ones under
// KindPending, due CopyGrace after the spend (CopyDuty) and, once the copy
// is known done, at the no-verdict deadline (the gate's NoVerdictDuty). An
// unspent grant's listing row is in the index under KindGrant until it is
// spent or revoked (GrantExpiryDuty marks it expired).
package uploads

import (
	"fmt"
	"time"
)

// Layout and limits of the lane (docs/decisions.md "Time and size
// constants"). The layout is fixed so an agent can hash its parts before
// it asks for URLs.
const (
	// PartSize is every part's size but the last's, which is the rest.
	PartSize = 16 << 20
	// MaxParts is the most parts an upload has.
	MaxParts = 64
	// MaxUploadBytes is the lane's own cap on an upload (the scanner's
	// MaxBytes may lower it).
	MaxUploadBytes = PartSize * MaxParts
	// UploadLife is how long an upload may stay open.
	UploadLife = 24 * time.Hour
	// PartURLLife bounds a part URL's life (the signing credentials' and
	// the grant's expiry may bound it further).
	PartURLLife = 30 * time.Minute
	// MaxFilenameBytes bounds a filename.
	MaxFilenameBytes = 255
	// MaxMediaTypeBytes bounds a declared media type.
	MaxMediaTypeBytes = 255
	// ChecksumAlgorithm is the one checksum algorithm of every upload.
	ChecksumAlgorithm = "SHA256"
	// CopyGrace is how long after the spend the sweeper first looks at a
	// scan_pending upload: the copy to verified/ normally follows the
	// commit within it.
	CopyGrace = time.Minute
	// NoVerdictTimeout is how long after the copy a scan_pending upload
	// waits for its verdict before the scan gate's sweeper duty decides it
	// (issue 17); the copy duty moves the index entry there.
	NoVerdictTimeout = 30 * time.Minute
	// EndedRetention is how long a rejected or abandoned upload's row is
	// kept for get_upload_status before it expires.
	EndedRetention = 30 * 24 * time.Hour
)

// The sweeper index kinds of upload rows (sweep.IndexKeys).
const (
	// KindOpen: an open upload, due at the end of its UploadLife.
	KindOpen = "upload_open"
	// KindPending: a spent upload waiting for its copy and its verdict.
	KindPending = "upload_pending"
)

// State is an upload's state (docs/contracts.md §5).
type State string

// The states. Open → rejected | abandoned | scan_pending; scan_pending →
// clean | infected | scan_failed (the scan gate); clean → in_review
// (intake).
const (
	StateOpen        State = "open"
	StateRejected    State = "rejected"
	StateScanPending State = "scan_pending"
	StateClean       State = "clean"
	StateInfected    State = "infected"
	StateScanFailed  State = "scan_failed"
	StateInReview    State = "in_review"
	StateAbandoned   State = "abandoned"
)

// Spent reports whether an upload in state s spent its grant: every state
// from scan_pending on.
func (s State) Spent() bool {
	switch s {
	case StateScanPending, StateClean, StateInfected, StateScanFailed, StateInReview:
		return true
	}
	return false
}

// Refusal classes the lane answers (docs/contracts.md §3).
const (
	ClassValidation  = "VALIDATION"
	ClassNotFound    = "NOT_FOUND"
	ClassBackpress   = "BACKPRESSURE"
	ClassScanner     = "SCANNER_UNAVAILABLE"
	ClassGrant       = "GRANT_INVALID"
	ClassUnavailable = "UNAVAILABLE"
	ClassAutonomy    = "AUTONOMY_DENIED"
	ClassConflict    = "CONFLICT"
)

// Refusal is a refusal of the lane: its class, one plain sentence an agent
// can act on (never quoting an argument, a key or a bucket), the field it
// is about (VALIDATION), and whether the grant is spent after the call
// (docs/contracts.md §3: on every refusal of the two spending tools).
type Refusal struct {
	Class   string
	Message string
	Field   string
	Spent   bool
}

func (r *Refusal) Error() string { return fmt.Sprintf("uploads: %s: %s", r.Class, r.Message) }

func refuse(class, msg string) *Refusal { return &Refusal{Class: class, Message: msg} }

func invalid(field, msg string) *Refusal {
	return &Refusal{Class: ClassValidation, Field: field, Message: msg}
}

// The lane's fixed sentences. GRANT_INVALID is one sentence whatever
// failed — shape, tenant, key, matter, state, expiry — so it tells a
// holder of a stolen or guessed token nothing (issue 16).
const (
	msgGrantInvalid   = "This grant token cannot be used for this upload; ask a firm administrator for a new grant."
	msgScannerOff     = "Uploads are switched off because no malware scanner is running for this firm; the grant was not spent. Try again later."
	msgUnavailable    = "The upload service could not complete this step just now; the grant was not spent. Retry shortly."
	msgNoUpload       = "No upload with that upload_id exists for this credential."
	msgNoMatter       = "No matter with that case_id is available to this credential."
	msgBackpressure   = "This grant already has as many uploads open as it allows; complete one, or let it lapse, before beginning another."
	msgBeginAgain     = "This upload session can no longer be completed (its parts are gone, e.g. after a server restart); the grant was not spent. Begin a new upload session."
	msgAutonomyDenied = "Uploads are switched off for this firm by its autonomy setting (L0); nothing was done."
)
