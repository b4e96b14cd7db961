// Package filestore is the embedded engine of the storage port (package
// store): one bbolt file holding the table and its index, used by the local
// all-in-one server, custodyctl against a stopped server, and tests. It
// passes the conformance suite in storetest, as the DynamoDB engine does.
//
// # Layout
//
// Two buckets (keys.go):
//
//	items  PK 0x00 SK                       → item encoding (encoding.go)
//	gsi1   GSI1PK 0x00 GSI1SK 0x00 PK 0x00 SK → empty
//
// Keys hold no NUL, so the joined keys sort part by part in byte order, which
// is DynamoDB's order for string keys. A query is one cursor walk over a key
// range of one bucket, in either direction; an index entry leads to its item
// in the items bucket. Page tokens carry the last returned bucket key.
//
// # Durability and group commit
//
// Every write is acknowledged only after the bbolt commit holding it has been
// fsynced (bbolt's default; NoSync is never set), so an acknowledged write
// survives kill -9. One writer goroutine owns every read-write transaction
// (writer.go): it takes every write queued when it starts, applies them one
// after another in one transaction and commits once, so concurrent requests
// share an fsync; batches form while the previous commit syncs, with no added
// delay. Reads are bbolt read transactions and run concurrently with it.
//
// # Expiry
//
// Options.Now is the engine clock. An item is absent once its ExpiresAt is
// non-zero and at or before Now in whole seconds (store.Live). Reads skip it,
// conditions treat it as absent, writes to its key replace it, and
// PurgeExpired deletes such items for good.
//
// # Retries
//
// The engine applies every write exactly once and answers that one
// application; nothing is ever resent, so every answer already is what the
// port's "Retries" contract asks for, and the engine stores no write token
// (store.WriteTokenAttr). store.ItemSize still counts one on every item, so
// the file engine refuses exactly the items DynamoDB would.
//
// # Limits beyond the port
//
// Besides the port's rules (store.ValidateItem and friends, key lengths
// included), the engine refuses with store.ErrInvalid one thing DynamoDB
// refuses that only the live item shows: an Add to an attribute that holds
// something other than an int64 (DynamoDB: operand type mismatch).
//
// # Errors
//
// Every error wraps a port sentinel (errors.Is). A closed store, a bbolt
// failure, an undecodable item and a done context are store.ErrUnavailable;
// a done context also wraps ctx.Err().
package pebblestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/custodymcp/custody/shared/store"
)

var (
	_ store.Store         = (*Store)(nil)
	_ store.CommitCounter = (*Store)(nil)
)

// Options configures a Store. The zero value is ready to use.
type Options struct {
	// Now is the engine clock that decides expiry; nil means time.Now.
	Now func() time.Time
	// CheckpointEntries is accepted for the shared tests and ignored.
	CheckpointEntries int
}

// Store is the pebble engine (a prototype measured against filestore).
type Store struct {
	db      *pebble.DB
	now     func() time.Time
	commits atomic.Uint64
	closed  atomic.Bool

	mu      sync.Mutex
	wake    *sync.Cond
	queue   []*request
	spare   []*request
	closing bool

	writerDone chan struct{}
	closeOnce  sync.Once
	closeErr   error
}

// Open opens or creates the pebble store in the folder path.
func Open(path string, opts Options) (*Store, error) {
	db, err := pebble.Open(path, &pebble.Options{Logger: quietLogger{}})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: open %s: %w: %w", path, store.ErrUnavailable, err)
	}
	s := &Store{db: db, now: opts.Now, writerDone: make(chan struct{})}
	if s.now == nil {
		s.now = time.Now
	}
	s.wake = sync.NewCond(&s.mu)
	go s.writer()
	return s, nil
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

// Close drains the writer and closes the database.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		s.mu.Unlock()
		s.wake.Signal()
		<-s.writerDone
		s.closed.Store(true)
		if err := s.db.Close(); err != nil {
			s.closeErr = fmt.Errorf("pebblestore: close: %w", err)
		}
	})
	return s.closeErr
}

// Commits returns how many batches were committed (one WAL sync each).
func (s *Store) Commits() uint64 { return s.commits.Load() }

// Checkpoints: pebble flushes on its own.
func (s *Store) Checkpoints() uint64 { return 0 }

// Get returns the live item at key, store.ErrNotFound when there is none.
func (s *Store) Get(ctx context.Context, key store.Key) (store.Item, error) {
	if err := store.ValidateKey(key); err != nil {
		return store.Item{}, fmt.Errorf("pebblestore: get: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return store.Item{}, ctxError("get "+key.String(), err)
	}
	now := s.now().Unix()
	var (
		it    store.Item
		found bool
	)
	err := s.read(func(v *view) error {
		var err error
		it, found, err = getLive(v, key, itemKey(key), now)
		return err
	})
	if err != nil {
		return store.Item{}, engineError("get "+key.String(), err)
	}
	if !found {
		return store.Item{}, fmt.Errorf("pebblestore: get %s: %w", key, store.ErrNotFound)
	}
	return it, nil
}

// read runs fn on a consistent view (Store.view) and closes it.
func (s *Store) read(fn func(v *view) error) error {
	v, err := s.view()
	if err != nil {
		return err
	}
	defer v.close()
	return fn(v)
}

// getLive reads and decodes the item at ik when it is live at now.
func getLive(vw *view, key store.Key, ik []byte, now int64) (store.Item, bool, error) {
	v := vw.get(spaceItems, ik)
	if v == nil {
		return store.Item{}, false, nil
	}
	h, err := decodeHeader(v)
	if err != nil {
		return store.Item{}, false, fmt.Errorf("%s: %w", key, err)
	}
	if !store.Live(h.ExpiresAt, now) {
		return store.Item{}, false, nil
	}
	it, err := decodeItem(key, v)
	if err != nil {
		return store.Item{}, false, fmt.Errorf("%s: %w", key, err)
	}
	return it, true, nil
}

// BatchGet reads up to store.MaxBatchGetKeys distinct keys in one read
// transaction. The result is aligned with keys, nil where no live item
// exists. Duplicate keys, too many keys or an invalid key: store.ErrInvalid
// (DynamoDB's BatchGetItem refuses duplicates too).
func (s *Store) BatchGet(ctx context.Context, keys []store.Key) ([]*store.Item, error) {
	if err := store.ValidateBatchGet(keys); err != nil {
		return nil, fmt.Errorf("pebblestore: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, ctxError("batch get", err)
	}
	now := s.now().Unix()
	out := make([]*store.Item, len(keys))
	err := s.read(func(v *view) error {
		for i, k := range keys {
			it, found, err := getLive(v, k, itemKey(k), now)
			if err != nil {
				return err
			}
			if found {
				out[i] = &it
			}
		}
		return nil
	})
	if err != nil {
		return nil, engineError("batch get", err)
	}
	return out, nil
}

// Query returns one page of a partition of the table or of GSI1, in sort-key
// order (descending when asked), expired items skipped before the limit
// counts. NextToken is set exactly when another live item follows: after a
// full page the walk goes on to the next live item before answering.
// Invalid query or page token: store.ErrInvalid.
func (s *Store) Query(ctx context.Context, q store.Query) (store.Page, error) {
	sc, err := planQuery(q)
	if err != nil {
		return store.Page{}, fmt.Errorf("pebblestore: query %s: %w", q.PK, err)
	}
	if err := ctx.Err(); err != nil {
		return store.Page{}, ctxError("query "+q.PK, err)
	}
	now := s.now().Unix()
	var page store.Page
	err = s.read(func(v *view) error {
		var err error
		page, err = sc.run(v, now)
		return err
	})
	if err != nil {
		return store.Page{}, engineError("query "+q.PK, err)
	}
	return page, nil
}

// run walks the scan's range in one view.
func (sc scan) run(vw *view, now int64) (store.Page, error) {
	sp := spaceItems
	if sc.index {
		sp = spaceGSI1
	}
	c := vw.cursor(sp, sc.desc)
	if c.err != nil {
		return store.Page{}, c.err
	}
	defer c.it.Close()
	var k, v []byte
	if sc.desc {
		k, v = c.seek(sc.hi)
	} else {
		k, v = c.seek(sc.lo)
	}
	var (
		page store.Page
		last []byte
	)
	for ; k != nil; k, v = c.next() {
		if sc.desc && bytes.Compare(k, sc.lo) < 0 || !sc.desc && bytes.Compare(k, sc.hi) >= 0 {
			break
		}
		ik := k
		if sc.index {
			var err error
			if ik, err = tableKeyOf(k); err != nil {
				return store.Page{}, err
			}
			if v = vw.get(spaceItems, ik); v == nil {
				return store.Page{}, fmt.Errorf("index entry %q without item: %w", k, errCorrupt)
			}
		}
		h, err := decodeHeader(v)
		if err != nil {
			return store.Page{}, fmt.Errorf("item %q: %w", ik, err)
		}
		if !store.Live(h.ExpiresAt, now) {
			continue
		}
		if len(page.Items) == sc.limit {
			page.NextToken = sc.encodeToken(last)
			break
		}
		key, err := splitItemKey(ik)
		if err != nil {
			return store.Page{}, err
		}
		it, err := decodeItem(key, v)
		if err != nil {
			return store.Page{}, fmt.Errorf("item %s: %w", key, err)
		}
		page.Items = append(page.Items, it)
		last = k
	}
	return page, nil
}

// ctxError reports a request abandoned because its context is done.
func ctxError(op string, err error) error {
	return fmt.Errorf("pebblestore: %s: %w: %w", op, store.ErrUnavailable, err)
}

// errClosed is the error of every method of a closed store.
var errClosed = fmt.Errorf("pebblestore: store is closed: %w", store.ErrUnavailable)

// engineError translates a failure inside a bbolt transaction into the
// port's vocabulary: port sentinels pass through, anything else (bbolt
// errors, corrupt items) is store.ErrUnavailable.
func engineError(op string, err error) error {
	for _, sentinel := range []error{store.ErrNotFound, store.ErrExists, store.ErrConflict, store.ErrUnavailable, store.ErrTooLarge, store.ErrInvalid} {
		if errors.Is(err, sentinel) {
			return fmt.Errorf("pebblestore: %s: %w", op, err)
		}
	}
	if errors.Is(err, pebble.ErrClosed) {
		return errClosed
	}
	return fmt.Errorf("pebblestore: %s: %w: %w", op, store.ErrUnavailable, err)
}
