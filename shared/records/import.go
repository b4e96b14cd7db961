package records

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/store"
)

// ImportStats says what Import did.
type ImportStats struct {
	// Digest identifies the fixture (SHA-256 of its JSON, 16 hex digits);
	// the seed marker row is keyed by it.
	Digest string
	// Rows is the number of record rows in the fixture.
	Rows int
	// Written rows were created; Skipped rows already existed and were left
	// as they are (a re-run never overwrites a row someone may have edited).
	Written, Skipped int
	// AlreadyImported is true when the marker of this fixture was found:
	// nothing was read or written beyond that one Get.
	AlreadyImported bool
}

// seedMarker is the payload of the import marker row.
type seedMarker struct {
	Digest     string    `json:"digest"`
	Rows       int       `json:"rows"`
	ImportedAt time.Time `json:"imported_at"`
}

// Import writes a fixture into s, idempotently. It normalizes f with now
// (Fixture.Normalize), validates it (Fixture.Validate; an invalid fixture
// writes nothing), and then:
//
//   - if the marker row T#<tenant> / SEED#<digest> exists, returns at once;
//   - otherwise creates every row under a NotExists condition, in
//     transactions of up to store.MaxTransactItems; a transaction cancelled
//     because some of its rows exist (a re-run after a partial import, or a
//     concurrent import) is redone row by row, skipping the rows that exist;
//   - matter contents first, then the principals, the matters and the
//     tenant, so a matter becomes visible only once its contents are there;
//     the marker last.
//
// Existing rows are never overwritten. Store errors are returned wrapped
// (store.ErrUnavailable, store.ErrTooLarge); a re-run finishes the job.
func Import(ctx context.Context, s store.Store, f Fixture, now time.Time) (ImportStats, error) {
	raw, err := json.Marshal(f)
	if err != nil {
		return ImportStats{}, fmt.Errorf("import: encode fixture: %w", err)
	}
	return importDigested(ctx, s, f, digestOf(raw), now)
}

// ImportJSON is Import of a fixture in the seed format, keyed by the digest
// of the bytes themselves: once they were imported, a marker row
// `SEED#<digest>` / `SEED` makes a re-run one read that parses nothing (how
// the dev server starts quickly).
func ImportJSON(ctx context.Context, s store.Store, data []byte, now time.Time) (ImportStats, error) {
	digest := digestOf(data)
	key := store.Key{PK: "SEED#" + digest, SK: "SEED"}
	switch _, err := s.Get(ctx, key); {
	case err == nil:
		return ImportStats{Digest: digest, AlreadyImported: true}, nil
	case !errors.Is(err, store.ErrNotFound):
		return ImportStats{Digest: digest}, fmt.Errorf("import: read marker: %w", err)
	}
	f, err := ParseFixture(data)
	if err != nil {
		return ImportStats{Digest: digest}, err
	}
	st, err := importDigested(ctx, s, f, digest, now)
	if err != nil {
		return st, err
	}
	m, err := newItem(key, seedMarker{Digest: digest, Rows: st.Rows, ImportedAt: now.UTC()})
	if err == nil {
		err = s.Put(ctx, m)
	}
	if err != nil {
		return st, fmt.Errorf("import: write marker: %w", err)
	}
	return st, nil
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func importDigested(ctx context.Context, s store.Store, f Fixture, digest string, now time.Time) (ImportStats, error) {
	st := ImportStats{Digest: digest}
	f = f.Normalize(now.UTC())
	if err := f.Validate(); err != nil {
		return st, fmt.Errorf("import tenant %s: %w", f.Tenant.ID, err)
	}
	items, err := fixtureItems(f)
	if err != nil {
		return st, fmt.Errorf("import tenant %s: %w", f.Tenant.ID, err)
	}
	st.Rows = len(items)

	marker := seedKey(f.Tenant.ID, st.Digest)
	switch _, err := s.Get(ctx, marker); {
	case err == nil:
		st.AlreadyImported = true
		return st, nil
	case !errors.Is(err, store.ErrNotFound):
		return st, fmt.Errorf("import tenant %s: read marker: %w", f.Tenant.ID, err)
	}

	for start := 0; start < len(items); start += store.MaxTransactItems {
		batch := items[start:min(start+store.MaxTransactItems, len(items))]
		w, sk, err := putBatch(ctx, s, batch)
		st.Written += w
		st.Skipped += sk
		if err != nil {
			return st, fmt.Errorf("import tenant %s: %w", f.Tenant.ID, err)
		}
	}

	m, err := newItem(marker, seedMarker{Digest: st.Digest, Rows: st.Rows, ImportedAt: now.UTC()})
	if err == nil {
		err = s.Put(ctx, m)
	}
	if err != nil {
		return st, fmt.Errorf("import tenant %s: write marker: %w", f.Tenant.ID, err)
	}
	return st, nil
}

// putBatch creates the items in one transaction, or row by row when some
// already exist. It returns how many it wrote and skipped.
func putBatch(ctx context.Context, s store.Store, batch []store.Item) (written, skipped int, err error) {
	ops := make([]store.Op, len(batch))
	for i, it := range batch {
		ops[i] = store.PutOp(it, store.NotExists())
	}
	err = s.Transact(ctx, ops)
	if err == nil {
		return len(batch), 0, nil
	}
	if !errors.Is(err, store.ErrExists) {
		return 0, 0, err
	}
	for _, it := range batch {
		switch err := s.Put(ctx, it, store.NotExists()); {
		case err == nil:
			written++
		case errors.Is(err, store.ErrExists):
			skipped++
		default:
			return written, skipped, fmt.Errorf("write %s: %w", it.Key(), err)
		}
	}
	return written, skipped, nil
}

// fixtureItems returns the fixture's rows in write order (see Import).
func fixtureItems(f Fixture) ([]store.Item, error) {
	t := f.Tenant.ID
	var items []store.Item
	add := func(it store.Item, err error) error {
		if err != nil {
			return err
		}
		items = append(items, it)
		return nil
	}
	for _, fd := range f.Documents {
		if err := add(DocumentItem(t, fd.Document)); err != nil {
			return nil, err
		}
		for _, fv := range fd.Versions {
			if err := add(VersionItem(t, fv.Version)); err != nil {
				return nil, err
			}
			for _, c := range fv.Chunks {
				if err := add(ChunkItem(t, c, fv.PageCount)); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, x := range f.Facts {
		if err := add(FactItem(t, x)); err != nil {
			return nil, err
		}
	}
	for _, d := range f.Deadlines {
		if err := add(DeadlineItem(t, d)); err != nil {
			return nil, err
		}
	}
	for _, n := range f.Notes {
		if err := add(NoteItem(t, n)); err != nil {
			return nil, err
		}
	}
	for _, p := range f.Principals {
		if err := add(PrincipalItem(t, p)); err != nil {
			return nil, err
		}
	}
	for _, m := range f.Matters {
		if err := add(MatterItem(t, m)); err != nil {
			return nil, err
		}
	}
	if err := add(TenantItem(f.Tenant)); err != nil {
		return nil, err
	}
	return items, nil
}
