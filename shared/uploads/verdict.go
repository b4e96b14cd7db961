package uploads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/sweep"
)

// A verdict on the upload row (the scan gate's, issue 17; docs/contracts.md
// §5): the state it moved to and what was scanned — the engine, the
// threats or the reason, when, and the ETag and size of the object the
// engine saw — so an operator can tell what a verdict was about.
const (
	attrScanEngine  = "scan_engine"
	attrScanThreats = "scan_threats" // a JSON array of the engine's names
	attrScanReason  = "scan_reason"
	attrScannedAt   = "scanned_at"
	attrScannedETag = "scanned_etag"
	attrScannedSize = "scanned_size"
	// attrIntakeClaim is when intake of a clean upload was last claimed
	// (ClaimIntake): the delivery holding a live claim is the one running
	// intake.
	attrIntakeClaim = "intake_claimed_at"
	// attrRescan is when a firm administrator asked for a rescan (Rescan),
	// and attrRescanBy who; the copy duty re-creates the object in
	// verified/ while attrRescan is set and the copy not yet recorded.
	attrRescan   = "rescan_requested_at"
	attrRescanBy = "rescan_by"
)

// IntakeClaimTTL is how long a claim on a clean upload's intake lasts: a
// delivery that finds a younger claim leaves intake to its holder. It
// outlasts the scan gate's 5-minute Lambda timeout, so a live holder is
// never overtaken.
const IntakeClaimTTL = 6 * time.Minute

// Verdict is what the scan gate found, as the upload row records it.
type Verdict struct {
	// State is StateClean, StateInfected or StateScanFailed.
	State State
	// Engine names the engine ("clamd", "guardduty", "signature").
	Engine string
	// Threats are the engine's names for what it found (infected).
	Threats []string
	// Reason says why there is no verdict (scan_failed).
	Reason string
	// At is when the verdict was reached.
	At time.Time
	// ETag and Size are the scanned object's (ETag with its quotes, as S3
	// answers it); "" and 0 when nothing was read.
	ETag string
	Size int64
}

// The held listings: infected and scan_failed uploads stay in their
// tenant's listing (GSI1: `T#<tenant>#UPLOADS#<state>` / `<time>#<upload
// id>`) for `custodyctl uploads list --state`. The index may lag; the
// listing is for operators, never a decision.
func heldIndexKeys(tenant string, s State, at time.Time, uploadID string) (pk, sk string) {
	return keyspace.TenantPK(tenant) + "#UPLOADS#" + string(s), at.UTC().Format(keyspace.SortableTimeLayout) + "#" + uploadID
}

// Held reports whether uploads in state s are held for an operator (listed
// by ListHeld): infected and scan_failed.
func (s State) Held() bool { return s == StateInfected || s == StateScanFailed }

// Decide is the one conditional write of a verdict (docs/contracts.md §5):
// the upload scan_pending → v.State with v's engine, threats or reason,
// time, ETag and size. A clean upload carries the claim on its
// intake (the deciding delivery runs it) and waits in the sweeper index
// under KindIntake until the claim lapses (the gate's IntakeDuty); an infected or
// failed one moves into its tenant's held listing. The condition fails
// (store.ErrConflict, or a cancelled transaction) unless the row is still
// scan_pending, so of any number of deliveries one decides and a
// duplicate or late one changes nothing.
func Decide(u Upload, v Verdict, now time.Time) (store.Op, error) {
	switch v.State {
	case StateClean, StateInfected, StateScanFailed:
	default:
		return store.Op{}, fmt.Errorf("decide upload %s: %q is not a verdict", u.ID, v.State)
	}
	threats, err := json.Marshal(v.Threats)
	if err != nil {
		return store.Op{}, fmt.Errorf("decide upload %s: %w", u.ID, err)
	}
	if v.Threats == nil {
		threats = []byte("[]")
	}
	set := map[string]any{
		attrState: string(v.State), attrUpdatedAt: formatTime(now),
		attrScanEngine: v.Engine, attrScanThreats: string(threats), attrScanReason: v.Reason,
		attrScannedAt: formatTime(v.At), attrScannedETag: v.ETag, attrScannedSize: v.Size,
	}
	pk, sk := "", ""
	if v.State == StateClean {
		set[attrIntakeClaim] = formatTime(now)
		pk, sk = sweep.IndexKeys(KindIntake, u.ID, now.Add(IntakeClaimTTL))
	} else {
		pk, sk = heldIndexKeys(u.Tenant, v.State, now, u.ID)
	}
	return store.UpdateOp(UploadKey(u.ID), store.Update{Set: set, Remove: []string{attrRescan}, GSI1PK: &pk, GSI1SK: &sk},
		store.AttrEquals(attrState, string(StateScanPending))), nil
}

// ClaimIntake is the conditional write that claims the intake of a clean
// upload found by a later delivery (a redelivered event after the deciding
// one failed): it holds while the row is the one read — clean, at its
// version — and its claim is absent or older than IntakeClaimTTL (the
// caller checks that on the row it read).
func ClaimIntake(u Upload, now time.Time) store.Op {
	pk, sk := sweep.IndexKeys(KindIntake, u.ID, now.Add(IntakeClaimTTL))
	return store.UpdateOp(UploadKey(u.ID), store.Update{Set: map[string]any{attrIntakeClaim: formatTime(now)}, GSI1PK: &pk, GSI1SK: &sk},
		store.VersionEquals(u.Version), store.AttrEquals(attrState, string(StateClean)))
}

// IntakeClaimLive reports whether u's intake is claimed by a delivery
// that may still be running it at now.
func (u Upload) IntakeClaimLive(now time.Time) bool {
	return !u.IntakeClaimedAt.IsZero() && now.Sub(u.IntakeClaimedAt) < IntakeClaimTTL
}

// ReleaseIntake gives up the claim taken at claimedAt after intake failed,
// so the redelivery Lambda makes of the failed invocation can claim it at
// once; it changes nothing once the row moved on (intake finished, or
// another claim).
func ReleaseIntake(uploadID string, claimedAt time.Time) store.Op {
	return store.UpdateOp(UploadKey(uploadID), store.Update{Remove: []string{attrIntakeClaim}},
		store.AttrEquals(attrState, string(StateClean)), store.AttrEquals(attrIntakeClaim, formatTime(claimedAt)))
}

// HeldUpload is an upload as `custodyctl uploads list` shows it.
type HeldUpload struct {
	UploadID  string    `json:"upload_id"`
	Matter    string    `json:"case_id"`
	Filename  string    `json:"filename"`
	State     State     `json:"state"`
	Engine    string    `json:"engine"`
	Threats   []string  `json:"threats,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	ScannedAt time.Time `json:"scanned_at"`
	Size      int64     `json:"size_bytes"`
}

// ErrNotHeld is returned by ListHeld for a state that is not held.
var ErrNotHeld = errors.New("uploads: only infected and scan_failed uploads are listed")

// ListHeld returns the tenant's uploads in a held state (infected or
// scan_failed), newest verdict first, re-reading each row so the state and
// verdict shown are the row's (the listing may lag). A state that is not
// held is ErrNotHeld.
func ListHeld(ctx context.Context, st store.Store, tenant string, s State) ([]HeldUpload, error) {
	if !s.Held() {
		return nil, fmt.Errorf("list uploads in state %q: %w", s, ErrNotHeld)
	}
	if !records.ValidID(tenant) {
		return nil, nil
	}
	pk, _ := heldIndexKeys(tenant, s, time.Time{}, "")
	q := store.Query{Index: store.IndexGSI1, PK: pk, Descending: true}
	var out []HeldUpload
	for {
		page, err := st.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("list %s uploads of %s: %w", s, tenant, err)
		}
		for start := 0; start < len(page.Items); start += store.MaxBatchGetKeys {
			batch := page.Items[start:min(start+store.MaxBatchGetKeys, len(page.Items))]
			keys := make([]store.Key, len(batch))
			for i, it := range batch {
				keys[i] = it.Key()
			}
			rows, err := st.BatchGet(ctx, keys)
			if err != nil {
				return nil, fmt.Errorf("list %s uploads of %s: %w", s, tenant, err)
			}
			for _, row := range rows {
				if row == nil {
					continue
				}
				u, err := DecodeUpload(*row)
				if err != nil {
					return nil, err
				}
				if u.State != s || u.Tenant != tenant {
					continue // moved on since the index was read
				}
				out = append(out, HeldUpload{UploadID: u.ID, Matter: u.Matter, Filename: u.Filename, State: u.State,
					Engine: u.ScanEngine, Threats: u.Threats, Reason: u.ScanReason, ScannedAt: u.ScannedAt, Size: u.ScannedSize})
			}
		}
		if page.NextToken == "" {
			return out, nil
		}
		q.PageToken = page.NextToken
	}
}

// Errors of Rescan.
var (
	ErrUnknownUpload = errors.New("uploads: no such upload in that tenant")
	ErrNotRescanable = errors.New("uploads: only a scan_failed upload can be rescanned")
	ErrNotAdmin      = errors.New("uploads: only a firm administrator can ask for a rescan")
)

// Rescan is the only way back to scan_pending (docs/contracts.md §5): a
// firm administrator of the upload's tenant (by) asks for a scan_failed
// upload to be scanned again. One conditional write (the row scan_failed
// at the version read → scan_pending, out of the held listing, into the
// sweeper index due at once, its copy no longer recorded); the copy duty
// then re-creates the object in verified/, which is what the scanner
// watches (GuardDuty scans each object created there; the dev server's
// local S3 sends the scan gate an event). An upload of another tenant, or
// none, is ErrUnknownUpload; one in another state ErrNotRescanable; a by
// who is not an administrator ErrNotAdmin. A store failure is returned
// wrapped.
func Rescan(ctx context.Context, st store.Store, tenant, uploadID, by string, now time.Time) (Upload, error) {
	if _, ok := ParseUploadID(uploadID); !ok || !records.ValidID(tenant) {
		return Upload{}, fmt.Errorf("rescan %s: %w", uploadID, ErrUnknownUpload)
	}
	p, err := records.NewRepo(st).Principal(ctx, tenant, by)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Upload{}, fmt.Errorf("rescan %s: %w: tenant %q has no principal %q", uploadID, ErrNotAdmin, tenant, by)
	case err != nil:
		return Upload{}, fmt.Errorf("rescan %s: %w", uploadID, err)
	case p.Role != records.RoleAdmin:
		return Upload{}, fmt.Errorf("rescan %s: %w: %s is not a firm administrator (role %s)", uploadID, ErrNotAdmin, by, p.Role)
	}
	it, err := st.Get(ctx, UploadKey(uploadID))
	if errors.Is(err, store.ErrNotFound) {
		return Upload{}, fmt.Errorf("rescan %s: %w", uploadID, ErrUnknownUpload)
	}
	if err != nil {
		return Upload{}, fmt.Errorf("rescan %s: %w", uploadID, err)
	}
	u, err := DecodeUpload(it)
	if err != nil {
		return Upload{}, err
	}
	if u.Tenant != tenant {
		return Upload{}, fmt.Errorf("rescan %s: %w", uploadID, ErrUnknownUpload)
	}
	if u.State != StateScanFailed {
		return Upload{}, fmt.Errorf("rescan %s (%s): %w", uploadID, u.State, ErrNotRescanable)
	}
	pk, sk := sweep.IndexKeys(KindPending, u.ID, now)
	_, err = st.Update(ctx, UploadKey(u.ID), store.Update{
		Set: map[string]any{attrState: string(StateScanPending), attrUpdatedAt: formatTime(now),
			attrRescan: formatTime(now), attrRescanBy: by},
		// The last verdict goes: the next one writes its own.
		Remove: []string{attrCopiedAt, attrScanEngine, attrScanThreats, attrScanReason, attrScannedAt, attrScannedETag, attrScannedSize},
		GSI1PK: &pk, GSI1SK: &sk,
	}, store.VersionEquals(u.Version), store.AttrEquals(attrState, string(StateScanFailed)))
	switch {
	case errors.Is(err, store.ErrConflict):
		return Upload{}, fmt.Errorf("rescan %s: %w (it changed meanwhile)", uploadID, ErrNotRescanable)
	case err != nil:
		return Upload{}, fmt.Errorf("rescan %s: %w", uploadID, err)
	}
	u.State, u.UpdatedAt, u.RescanRequestedAt, u.RescanBy, u.CopiedAt = StateScanPending, now, now, by, time.Time{}
	u.ScanEngine, u.Threats, u.ScanReason, u.ScannedAt, u.ScannedETag, u.ScannedSize = "", nil, "", time.Time{}, "", 0
	return u, nil
}
