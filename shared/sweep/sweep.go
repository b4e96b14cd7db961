// Package sweep is the frame of scheduled recovery (docs/architecture.md,
// the sweeper): duties that each find the work a dead process or the clock
// left behind — a task whose lease lapsed, a proposal past its expiry, an
// upload without a verdict — and finish it honestly, with conditional
// writes only, so that overlapping sweeps (two schedules, or a sweep and a
// live worker) each act at most once on a row.
//
// A row waiting for a duty carries a sweeper index entry (GSI1):
// `SWEEP#<kind>#<shard 00–15>` / `<due, fixed-width UTC>#<id>`, written by
// its owner with the row (IndexKeys) and removed when the row no longer
// waits. Due reads every shard's entries due by now, oldest first. The
// index is eventually consistent on DynamoDB: a duty re-reads each row it
// acts on (strongly) and decides from the row, never from the entry.
//
// Time is injected: a sweep takes now, so tests advance it.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/store"
)

// Duty is one kind of recovery.
type Duty interface {
	// Name names the duty in logs and reports ("task lease").
	Name() string
	// Sweep does one pass at now: it finds the due work and finishes it,
	// each action a conditional write. It returns what it did by action.
	Sweep(ctx context.Context, now time.Time) (Report, error)
}

// Report is what one duty's pass did: a count per action ("re-enqueued",
// "failed", "expired").
type Report struct {
	Duty    string
	Actions map[string]int
}

// Add counts one action.
func (r *Report) Add(action string) {
	if r.Actions == nil {
		r.Actions = map[string]int{}
	}
	r.Actions[action]++
}

// Run runs every duty once at now, each after the other; a duty that fails
// does not stop the rest. The error joins the failures.
func Run(ctx context.Context, duties []Duty, now time.Time) ([]Report, error) {
	var reports []Report
	var errs []error
	for _, d := range duties {
		rep, err := d.Sweep(ctx, now)
		rep.Duty = d.Name()
		reports = append(reports, rep)
		if err != nil {
			errs = append(errs, fmt.Errorf("sweep %s: %w", d.Name(), err))
		}
	}
	return reports, errors.Join(errs...)
}

// Shards is the number of sweeper index partitions per kind: enough that no
// one index partition is hot on DynamoDB.
const Shards = 16

// IndexKeys are the index keys that place a row of kind (an id of
// keyspace.ValidID's shape) in the sweeper index, due at due: GSI1PK
// SWEEP#<kind>#<shard> (the shard from the id's hash), GSI1SK
// <due, keyspace.SortableTimeLayout>#<id>.
func IndexKeys(kind, id string, due time.Time) (gsi1pk, gsi1sk string) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return shardPK(kind, int(h.Sum32()%Shards)), due.UTC().Format(keyspace.SortableTimeLayout) + "#" + id
}

func shardPK(kind string, shard int) string { return fmt.Sprintf("SWEEP#%s#%02d", kind, shard) }

// Due lists the rows of kind whose index entry is due at or before now,
// oldest first in each shard, at most limit from each shard (0: 100). The
// index may lag the table: re-read a row before acting on it.
func Due(ctx context.Context, st store.Store, kind string, now time.Time, limit int) ([]store.Item, error) {
	if limit <= 0 {
		limit = 100
	}
	to := now.UTC().Format(keyspace.SortableTimeLayout) + "#" + string(utf8.MaxRune) // every id of that instant
	var out []store.Item
	for shard := range Shards {
		page, err := st.Query(ctx, store.Query{Index: store.IndexGSI1, PK: shardPK(kind, shard),
			SK: store.SortKeyCondition{From: "0", To: to}, Limit: limit})
		if err != nil {
			return out, fmt.Errorf("read the %s sweeper index: %w", kind, err)
		}
		out = append(out, page.Items...)
	}
	return out, nil
}

// EachDue calls fn with each row of kind that is due at now (Due, limit
// per shard), re-read from the table first, since the index may lag: a row
// gone meanwhile is skipped. fn's errors are joined and the pass goes on;
// an index that cannot be read fails the pass at once.
func EachDue(ctx context.Context, st store.Store, kind string, now time.Time, limit int, fn func(store.Item) error) error {
	due, err := Due(ctx, st, kind, now, limit)
	if err != nil {
		return err
	}
	var errs []error
	for _, entry := range due {
		it, err := st.Get(ctx, entry.Key())
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			errs = append(errs, fmt.Errorf("read %s: %w", entry.Key(), err))
		default:
			if err := fn(it); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Purger is an engine that deletes its expired rows when asked (the file
// engine, filestore.Store.PurgeExpired); DynamoDB's TTL deletes them by
// itself.
type Purger interface {
	PurgeExpired(ctx context.Context, limit int) (int, error)
}

// Expired is the duty of an engine without a TTL of its own: it deletes
// the rows past their expiry — ended sessions, the spent questions of
// sessions and tasks, rate windows, MRTR nonces — at most once every
// Every (0: 10 min), as DynamoDB's TTL reclaims them on AWS. Reads skip
// such rows already; this reclaims their space and keeps queries from
// walking past them.
type Expired struct {
	Engine Purger
	Every  time.Duration

	mu   sync.Mutex
	last time.Time
}

// Name implements Duty.
func (e *Expired) Name() string { return "expired rows" }

// Sweep implements Duty: it reports the rows deleted as "deleted".
func (e *Expired) Sweep(ctx context.Context, now time.Time) (Report, error) {
	every := e.Every
	if every <= 0 {
		every = 10 * time.Minute
	}
	e.mu.Lock()
	if !e.last.IsZero() && now.Sub(e.last) < every {
		e.mu.Unlock()
		return Report{}, nil
	}
	e.last = now
	e.mu.Unlock()
	n, err := e.Engine.PurgeExpired(ctx, 0)
	rep := Report{}
	if n > 0 {
		rep.Actions = map[string]int{"deleted": n}
	}
	if err != nil {
		return rep, fmt.Errorf("purge expired rows: %w", err)
	}
	return rep, nil
}
