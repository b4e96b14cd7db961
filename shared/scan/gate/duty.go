package gate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/scan/guardduty"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/sweep"
	"github.com/custodymcp/custody/shared/uploads"
)

// NoVerdictDuty decides the uploads no event decided (issue 17): a
// scan_pending upload whose copy to verified/ was recorded
// uploads.NoVerdictTimeout (30 min) ago, with no verdict since, is
// decided from its object's GuardDutyMalwareScanStatus tag when GuardDuty
// tagged it (the event was lost; the tag is GuardDuty's same result) and
// is otherwise scan_failed, "no verdict" — never clean. The verdict is
// committed through the gate (Gate.Commit: one conditional write, then
// quarantine or intake), so overlapping sweeps, and a late event, decide
// it once. The duty reads the uploads due under uploads.KindPending, the
// index the copy duty (uploads.CopyDuty) moves to the no-verdict deadline
// once the copy is recorded.
type NoVerdictDuty struct {
	Gate *Gate
	// Limit is the most uploads read per index shard and pass (0: 100).
	Limit int
}

var _ sweep.Duty = (*NoVerdictDuty)(nil)

// Report actions of the duty: the verdict it committed, by where it came
// from.
const (
	ActionTagVerdict = "decided from the GuardDuty tag"
	ActionNoVerdict  = "failed: no verdict"
)

// Name implements sweep.Duty.
func (d *NoVerdictDuty) Name() string { return "upload no-verdict timeout" }

// Sweep implements sweep.Duty.
func (d *NoVerdictDuty) Sweep(ctx context.Context, now time.Time) (sweep.Report, error) {
	var rep sweep.Report
	err := sweep.EachDue(ctx, d.Gate.store, uploads.KindPending, now, d.Limit, func(it store.Item) error { return d.one(ctx, it, now, &rep) })
	return rep, err
}

func (d *NoVerdictDuty) one(ctx context.Context, it store.Item, now time.Time, rep *sweep.Report) error {
	g := d.Gate
	u, err := uploads.DecodeUpload(it)
	if err != nil {
		return err
	}
	if u.State != uploads.StateScanPending || u.CopiedAt.IsZero() || now.Before(u.CopiedAt.Add(uploads.NoVerdictTimeout)) {
		return nil // decided, not yet copied (the copy duty's), or not yet due
	}
	ref := blob.Verified(u.Object)
	v := uploads.Verdict{State: uploads.StateScanFailed, Engine: engineName(g.scanner), Reason: ReasonNoVerdict, At: now}
	action := ActionNoVerdict
	head, err := g.blob.HeadObject(ctx, ref)
	switch {
	case errors.Is(err, blob.ErrNotFound):
	case err != nil:
		return fmt.Errorf("find the verified object of %s: %w", u.ID, err)
	default:
		v.ETag, v.Size = head.ETag, head.Size
		tags, err := g.blob.GetObjectTagging(ctx, ref)
		if err != nil && !errors.Is(err, blob.ErrNotFound) {
			return fmt.Errorf("read the tags of %s: %w", u.ID, err)
		}
		if status, ok := tags[guardduty.TagKey]; ok {
			tv, _ := guardduty.VerdictOfTag(status)
			v = verdictOf(tv, head, now)
			if head.Size != u.Size {
				v = failedVerdict(guardduty.Name, ReasonObjectChanged, head, now)
			}
			action = ActionTagVerdict
		}
	}
	out, err := g.Commit(ctx, u, v, now)
	if out.Action == Decided {
		rep.Add(action)
	}
	return err
}

// IntakeDuty resumes the intake of clean uploads whose claim lapsed (issue
// 18): a delivery that died while running intake, after Lambda's retries
// were spent, leaves its upload clean with a claim older than
// uploads.IntakeClaimTTL, in the sweeper index under uploads.KindIntake.
// The duty claims it (uploads.ClaimIntake, conditional on the row it read)
// and runs intake as a redelivered event would (Gate.resumeIntake); an
// upload whose claim is still live, or that moved on, is left alone.
type IntakeDuty struct {
	Gate *Gate
	// Limit is the most uploads read per index shard and pass (0: 100).
	Limit int
}

var _ sweep.Duty = (*IntakeDuty)(nil)

// ActionIntakeResumed is the duty's report action.
const ActionIntakeResumed = "intake resumed"

// Name implements sweep.Duty.
func (d *IntakeDuty) Name() string { return "upload intake resumption" }

// Sweep implements sweep.Duty.
func (d *IntakeDuty) Sweep(ctx context.Context, now time.Time) (sweep.Report, error) {
	var rep sweep.Report
	err := sweep.EachDue(ctx, d.Gate.store, uploads.KindIntake, now, d.Limit, func(it store.Item) error {
		u, err := uploads.DecodeUpload(it)
		if err != nil {
			return err
		}
		if u.State != uploads.StateClean || u.IntakeClaimLive(now) {
			return nil
		}
		out, err := d.Gate.resumeIntakeAt(ctx, u, now)
		if out.Action == Finished {
			rep.Add(ActionIntakeResumed)
		}
		return err
	})
	return rep, err
}
