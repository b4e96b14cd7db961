package uploads

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/sweep"
)

// CopyDuty is the sweeper's recovery of the copy that follows a spend
// (sweep.Duty): the commit that spent a grant is followed by the copy of
// the object from incoming/ to verified/, and a process that dies in
// between, or an S3 call that fails, leaves a scan_pending upload whose
// object never reached the scanner. The duty reads the uploads due under
// KindPending, and for each one still scan_pending and not yet known
// copied: while its incoming/ object remains, it copies it again and
// deletes the source; once none remains, it records the copy on the row
// and moves the row's index entry to the no-verdict deadline
// (NoVerdictTimeout after the copy), where the scan gate's duties take it
// (issue 17). An upload a firm administrator sent back to scan_pending
// (Rescan) has its verified/ object created anew, by way of incoming/, so
// the scanner sees it again. Every row is re-read before it is acted on, and the one
// write is conditioned on the version read, so overlapping sweeps each act
// once; the S3 calls are idempotent.
type CopyDuty struct {
	Store  store.Store
	Blob   blob.Objects
	Logger *slog.Logger
	// Limit is the most uploads read per index shard and pass (0: 100).
	Limit int
}

var _ sweep.Duty = (*CopyDuty)(nil)

// Report actions of the duty.
const (
	ActionCopied   = "copied"   // the object was copied to verified/ by this pass
	ActionRecorded = "recorded" // the copy was found done and recorded on the row
	ActionMissing  = "missing"  // neither incoming/ nor verified/ holds the object
	// ActionRescanned: a rescanned upload's object was created in
	// verified/ anew (Rescan).
	ActionRescanned = "rescanned"
)

// Name implements sweep.Duty.
func (d *CopyDuty) Name() string { return "upload copy to verified/" }

// Sweep implements sweep.Duty.
func (d *CopyDuty) Sweep(ctx context.Context, now time.Time) (sweep.Report, error) {
	var rep sweep.Report
	err := sweep.EachDue(ctx, d.Store, KindPending, now, d.Limit, func(it store.Item) error { return d.one(ctx, it, now, &rep) })
	return rep, err
}

// one finishes the copy of one upload whose index entry is due.
func (d *CopyDuty) one(ctx context.Context, it store.Item, now time.Time, rep *sweep.Report) error {
	key := it.Key()
	u, err := DecodeUpload(it)
	if err != nil {
		return err
	}
	if u.State != StateScanPending || !u.CopiedAt.IsZero() {
		return nil // the verdict's or intake's now, or the no-verdict duty's
	}
	_, err = d.Blob.HeadObject(ctx, blob.Incoming(u.Object))
	switch {
	case err == nil:
		switch err := copyToVerified(ctx, d.Blob, u.Object); {
		case err == nil:
			rep.Add(ActionCopied)
		case errors.Is(err, blob.ErrNotFound):
			// Another sweep, or the effect, copied and deleted it meanwhile.
		default:
			return err
		}
	case !errors.Is(err, blob.ErrNotFound):
		return fmt.Errorf("find the incoming/ object of %s: %w", u.ID, err)
	case !u.RescanRequestedAt.IsZero():
		// A firm administrator asked for a rescan (Rescan): the object is
		// created in verified/ anew, by way of incoming/ (S3 copies an
		// object onto itself only with changed metadata), so the scanner
		// that watches verified/ sees it again.
		switch err := d.Blob.CopyObject(ctx, blob.Verified(u.Object), blob.Incoming(u.Object)); {
		case errors.Is(err, blob.ErrNotFound):
			if d.Logger != nil {
				d.Logger.ErrorContext(ctx, "an upload to rescan has no object in verified/", "upload", u.ID)
			}
			rep.Add(ActionMissing)
		case err != nil:
			return fmt.Errorf("copy %s back to incoming/ to rescan it: %w", u.ID, err)
		default:
			if err := copyToVerified(ctx, d.Blob, u.Object); err != nil && !errors.Is(err, blob.ErrNotFound) {
				return err
			}
			rep.Add(ActionRescanned)
		}
	default:
		if _, err := d.Blob.HeadObject(ctx, blob.Verified(u.Object)); errors.Is(err, blob.ErrNotFound) {
			// Lost: the no-verdict duty fails it at its deadline, honestly.
			if d.Logger != nil {
				d.Logger.ErrorContext(ctx, "a spent upload's object is in neither incoming/ nor verified/", "upload", u.ID)
			}
			rep.Add(ActionMissing)
		} else if err != nil {
			return fmt.Errorf("find the verified/ object of %s: %w", u.ID, err)
		}
	}
	pk, sk := sweep.IndexKeys(KindPending, u.ID, now.Add(NoVerdictTimeout))
	_, err = d.Store.Update(ctx, key, store.Update{
		Set:    map[string]any{attrCopiedAt: formatTime(now), attrUpdatedAt: formatTime(now)},
		Remove: []string{attrRescan},
		GSI1PK: &pk, GSI1SK: &sk,
	}, store.VersionEquals(u.Version), store.AttrEquals(attrState, string(StateScanPending)))
	switch {
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound):
		return nil // moved on meanwhile (a verdict, or another sweep)
	case err != nil:
		return fmt.Errorf("record the copy of %s: %w", u.ID, err)
	}
	rep.Add(ActionRecorded)
	return nil
}
