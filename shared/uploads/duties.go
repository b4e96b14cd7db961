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

// KindGrant is the sweeper index kind of a grant's listing row, due when
// the grant expires (GrantExpiryDuty).
const KindGrant = "grant_expiry"

// Report actions of the lane's duties.
const (
	// ActionAbandoned: an open upload past its 24 hours was abandoned.
	ActionAbandoned = "abandoned"
	// ActionExpired: an unspent grant past its expiry was marked expired.
	ActionExpired = "expired"
)

// OpenDuty abandons the open uploads whose 24 hours have ended (issue 17;
// docs/contracts.md §5): the loser of a spend race, an upload whose agent
// went away. For each upload due under KindOpen, re-read and still open
// past its life, it aborts the multipart upload (S3 then frees its parts;
// one already gone is fine) and, in one transaction conditioned on the
// row's version, marks it abandoned — kept EndedRetention for
// get_upload_status — and gives its grant its slot back while the grant
// is unspent. Overlapping sweeps each abandon an upload once: the second
// transaction is cancelled by the first's version.
type OpenDuty struct {
	Store  store.Store
	Blob   blob.Multipart
	Logger *slog.Logger
	// Limit is the most uploads read per index shard and pass (0: 100).
	Limit int
}

var _ sweep.Duty = (*OpenDuty)(nil)

// Name implements sweep.Duty.
func (d *OpenDuty) Name() string { return "open upload lapse" }

// Sweep implements sweep.Duty.
func (d *OpenDuty) Sweep(ctx context.Context, now time.Time) (sweep.Report, error) {
	var rep sweep.Report
	err := sweep.EachDue(ctx, d.Store, KindOpen, now, d.Limit, func(it store.Item) error { return d.one(ctx, it, now, &rep) })
	return rep, err
}

func (d *OpenDuty) one(ctx context.Context, it store.Item, now time.Time, rep *sweep.Report) error {
	key := it.Key()
	u, err := DecodeUpload(it)
	if err != nil {
		return err
	}
	if u.State != StateOpen || now.Before(u.ExpiresAt) {
		return nil // moved on, or the index ran ahead of the row
	}
	up := blob.Upload{Ref: blob.Incoming(u.Object), UploadID: u.Multipart}
	if err := d.Blob.AbortMultipartUpload(ctx, up); err != nil && !errors.Is(err, blob.ErrNotFound) {
		return fmt.Errorf("abort the multipart upload of %s: %w", u.ID, err)
	}
	var g *Grant
	switch git, err := d.Store.Get(ctx, GrantKey(u.GrantHash)); {
	case err == nil:
		gg := decodeGrant(git)
		g = &gg
	case !errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("read the grant of %s: %w", u.ID, err)
	}
	exp := now.Add(EndedRetention).Unix()
	empty := ""
	ops := []store.Op{store.UpdateOp(key, store.Update{
		Set: map[string]any{attrState: string(StateAbandoned), attrReason: "it lapsed 24 hours after it began",
			attrUpdatedAt: formatTime(now)},
		ExpiresAt: &exp, GSI1PK: &empty, GSI1SK: &empty,
	}, store.VersionEquals(u.Version), store.AttrEquals(attrState, string(StateOpen)))}
	if g != nil && g.State == GrantUnspent {
		ops = append(ops, store.UpdateOp(GrantKey(g.Hash), store.Update{Add: map[string]int64{attrOpenUploads: -1}},
			store.AttrEquals(attrState, string(GrantUnspent))))
	}
	err = d.Store.Transact(ctx, ops)
	var tx *store.TxCanceledError
	switch {
	case errors.As(err, &tx):
		// The upload moved on (another sweep, a late complete_upload), or
		// its grant changed between the read and the write: the next pass
		// decides from the rows as they are then.
		return nil
	case err != nil:
		return fmt.Errorf("abandon %s: %w", u.ID, err)
	}
	rep.Add(ActionAbandoned)
	return nil
}

// GrantExpiryDuty marks unspent grants past their expiry expired in their
// tenant's listing (issue 17). The grant's own row has gone with its life
// (its TTL), so no upload can use it; the duty makes the listing say so
// rather than "unspent", and takes the row out of the sweeper index. Each
// listing row due under KindGrant is re-read and updated with one write
// conditioned on its version and its state unspent, so overlapping sweeps
// mark it once; a grant spent or revoked meanwhile keeps its state.
type GrantExpiryDuty struct {
	Store store.Store
	// Limit is the most listing rows read per index shard and pass (0: 100).
	Limit int
}

var _ sweep.Duty = (*GrantExpiryDuty)(nil)

// Name implements sweep.Duty.
func (d *GrantExpiryDuty) Name() string { return "grant expiry" }

// Sweep implements sweep.Duty.
func (d *GrantExpiryDuty) Sweep(ctx context.Context, now time.Time) (sweep.Report, error) {
	var rep sweep.Report
	err := sweep.EachDue(ctx, d.Store, KindGrant, now, d.Limit, func(it store.Item) error { return d.one(ctx, it, now, &rep) })
	return rep, err
}

func (d *GrantExpiryDuty) one(ctx context.Context, it store.Item, now time.Time, rep *sweep.Report) error {
	key := it.Key()
	if now.Before(parseTime(it.String(attrExpires))) {
		return nil // the index ran ahead of the row
	}
	empty := ""
	upd := store.Update{GSI1PK: &empty, GSI1SK: &empty}
	cond := []store.Condition{store.VersionEquals(it.Version)}
	unspent := GrantState(it.String(attrState)) == GrantUnspent
	if unspent {
		upd.Set = map[string]any{attrState: string(GrantExpired), "expired_at": formatTime(now)}
		cond = append(cond, store.AttrEquals(attrState, string(GrantUnspent)))
	}
	_, err := d.Store.Update(ctx, key, upd, cond...)
	switch {
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound):
		return nil // another sweep, a spend or a revocation came first
	case err != nil:
		return fmt.Errorf("mark grant %s expired: %w", key.SK, err)
	}
	if unspent {
		rep.Add(ActionExpired)
	}
	return nil
}
