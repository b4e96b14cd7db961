// Package filestore is the embedded engine of the storage port (package
// store): one bbolt file holding the table and its index, with a
// write-ahead log in front of it, used by the local all-in-one server,
// custodyctl against a stopped server, and tests. It passes the
// conformance suite in storetest, as the DynamoDB engine does.
//
// # Layout
//
// Two buckets (keys.go), and a third, meta, for the log's applied mark:
//
//	items  PK 0x00 SK                       → item encoding (encoding.go)
//	gsi1   GSI1PK 0x00 GSI1SK 0x00 PK 0x00 SK → empty
//
// Keys hold no NUL, so the joined keys sort part by part in byte order, which
// is DynamoDB's order for string keys. A query is one merged walk over a key
// range of one space, in either direction; an index entry leads to its item
// in the items space. Page tokens carry the last returned key.
//
// # Durability and group commit
//
// One writer goroutine applies every write (writer.go): it takes every
// write queued when it starts, applies them one after another against one
// view of the store, appends the batch's resulting keys as one record to
// the write-ahead log and fdatasyncs it once (wal.go); that sync is the
// commit, and only then are the batch's writes published and acknowledged.
// So an acknowledged write survives kill -9 and power loss, concurrent
// requests share one sync, and batches form while the previous one syncs,
// with no added delay. bbolt itself is written only by checkpoints
// (checkpoint.go), which copy thousands of logged writes into its B+tree
// in one transaction; until then they live in the overlay, sorted
// in-memory layers that every read consults over bbolt (overlay.go,
// view.go). Open replays the log beyond the last checkpoint. Reads never
// wait for the writer or a checkpoint. docs/decisions.md "Storage" gives
// the measurements behind this design (against bbolt syncing every commit
// and against pebble).
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
package filestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/custodymcp/custody/shared/store"
)

var (
	_ store.Store         = (*Store)(nil)
	_ store.CommitCounter = (*Store)(nil)
)

// lockTimeout bounds how long Open waits for another process's lock on the
// file (bbolt locks it; the file engine is one process's, docs/decisions.md
// "Storage").
const lockTimeout = time.Second

// Options configures a Store. The zero value is ready to use.
type Options struct {
	// Now is the engine clock that decides expiry; nil means time.Now.
	Now func() time.Time
	// CheckpointEntries is how many overlay entries (keys written since the
	// last checkpoint, index entries included) start a checkpoint; 0 means
	// 4096.
	CheckpointEntries int
	// CheckpointLogBytes is how far the current log file may grow before a
	// checkpoint starts; 0 means 8 MiB.
	CheckpointLogBytes int64

	// openLog opens a log file (tests: a file that forgets unsynced
	// writes); nil means the file on disk.
	openLog func(path string) (walFile, int64, error)
}

// Store is the bbolt engine with its write-ahead log. It is safe for
// concurrent use; the file may be open in one Store of one process at a
// time.
type Store struct {
	db          *bolt.DB
	log         *wal
	now         func() time.Time
	opts        Options
	commits     atomic.Uint64
	checkpoints atomic.Uint64

	// state is what reads see over bbolt; stateMu orders its changes
	// (the writer's publish, a freeze, a checkpoint's end).
	state   atomic.Pointer[state]
	stateMu sync.Mutex

	mu      sync.Mutex
	wake    *sync.Cond // signalled when queue grows or closing is set
	queue   []*request // writes waiting for the writer
	spare   []*request // the writer's previous batch, reused as the next queue
	closing bool       // no new writes; the writer drains the queue and exits

	ckptMu      sync.Mutex
	ckptDone    *sync.Cond // broadcast when a checkpoint ends
	ckptRunning bool
	ckptErr     error         // the first failed checkpoint
	ckptWake    chan struct{} // one send per frozen layer; closed by Close
	ckptExited  chan struct{}

	writerDone chan struct{}
	closeOnce  sync.Once
	closeErr   error
}

// Open opens or creates the store file at path (mode 0600: it holds
// credentials and sessions) and its log files (path-wal.0, path-wal.1),
// and replays what the log holds beyond the last checkpoint, copying it
// into bbolt before it returns. It fails with store.ErrUnavailable when
// another process holds the file for more than a second.
func Open(path string, opts Options) (*Store, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.CheckpointEntries <= 0 {
		opts.CheckpointEntries = defaultCheckpointEntries
	}
	if opts.CheckpointLogBytes <= 0 {
		opts.CheckpointLogBytes = defaultCheckpointLogBytes
	}
	if opts.openLog == nil {
		opts.openLog = openOSFile
	}
	// The freelist is synced with every commit, so Open reads it instead of
	// rebuilding it by walking the whole file (bbolt's NoFreelistSync):
	// BenchmarkOpen, 10,000 items, 4.7–5.2 ms with the walk, 0.15–0.19 ms
	// without. Commits are checkpoints now, thousands of writes apart, so
	// the freelist's page costs nothing per request.
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return nil, fmt.Errorf("filestore: open %s: %w: %w", path, store.ErrUnavailable, err)
	}
	s := &Store{db: db, now: opts.Now, opts: opts, writerDone: make(chan struct{}),
		ckptWake: make(chan struct{}, 1), ckptExited: make(chan struct{})}
	if err := s.recover(path); err != nil {
		if s.log != nil {
			_ = s.log.close()
		}
		_ = db.Close()
		return nil, fmt.Errorf("filestore: open %s: %w: %w", path, store.ErrUnavailable, err)
	}
	s.wake = sync.NewCond(&s.mu)
	s.ckptDone = sync.NewCond(&s.ckptMu)
	go s.writer()
	go s.checkpointer()
	return s, nil
}

// recover creates the buckets where missing, opens the log and replays it:
// what it holds beyond the applied mark is copied into bbolt in one
// checkpoint, so the store starts with an empty overlay and the log at the
// start of its first file.
func (s *Store) recover(path string) error {
	// A file that already has its buckets is opened without a write: an
	// empty bbolt commit still costs two fdatasyncs at every start.
	present := false
	var done uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		present = tx.Bucket(bucketItems) != nil && tx.Bucket(bucketGSI1) != nil && tx.Bucket([]byte(bucketMetaName)) != nil
		if present {
			done = applied(tx)
		}
		return nil
	})
	if err == nil && !present {
		err = s.db.Update(createBuckets)
	}
	if err != nil {
		return fmt.Errorf("create buckets: %w", err)
	}
	if s.log, err = openWAL(path, s.opts.openLog); err != nil {
		return err
	}
	replayed, err := s.log.replay(done)
	if err != nil {
		return err
	}
	if err := s.checkpoint(replayed); err != nil {
		return err
	}
	s.log.cur, s.log.off = 0, 0
	s.state.Store(&state{})
	return nil
}

// createBuckets creates the items, GSI1 and meta buckets where missing.
func createBuckets(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketItems, bucketGSI1, []byte(bucketMetaName)} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	return nil
}

// Close refuses new writes, waits for the writes already queued to be
// committed and acknowledged, checkpoints the overlay into bbolt (so the
// next Open replays nothing), then closes the files (waiting for running
// reads). Later calls return the first call's result; every method of a
// closed store fails with store.ErrUnavailable.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		s.mu.Unlock()
		s.wake.Signal()
		<-s.writerDone
		err := s.waitCheckpoint()
		if err == nil {
			s.ckptMu.Lock()
			s.freezeLocked()
			s.ckptMu.Unlock()
			err = s.waitCheckpoint()
		}
		close(s.ckptWake)
		<-s.ckptExited
		if lerr := s.log.close(); err == nil && lerr != nil {
			err = lerr
		}
		if derr := s.db.Close(); err == nil && derr != nil {
			err = derr
		}
		if err != nil {
			s.closeErr = fmt.Errorf("filestore: close: %w", err)
		}
	})
	return s.closeErr
}

// Commits returns how many group commits (one log record and one
// fdatasync each) the writer has made since Open (store.CommitCounter). A
// batch whose requests wrote nothing (all conditions failed) writes no
// record and is not counted.
func (s *Store) Commits() uint64 { return s.commits.Load() }

// Checkpoints returns how many checkpoints (bbolt read-write transactions
// copying the overlay in) have committed since Open, the one of Open's
// replay included.
func (s *Store) Checkpoints() uint64 { return s.checkpoints.Load() }

// Get returns the live item at key, store.ErrNotFound when there is none.
func (s *Store) Get(ctx context.Context, key store.Key) (store.Item, error) {
	if err := store.ValidateKey(key); err != nil {
		return store.Item{}, fmt.Errorf("filestore: get: %w", err)
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
		return store.Item{}, fmt.Errorf("filestore: get %s: %w", key, store.ErrNotFound)
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
		return nil, fmt.Errorf("filestore: %w", err)
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
		return store.Page{}, fmt.Errorf("filestore: query %s: %w", q.PK, err)
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
	return fmt.Errorf("filestore: %s: %w: %w", op, store.ErrUnavailable, err)
}

// errClosed is the error of every method of a closed store.
var errClosed = fmt.Errorf("filestore: store is closed: %w", store.ErrUnavailable)

// engineError translates a failure inside a bbolt transaction into the
// port's vocabulary: port sentinels pass through, anything else (bbolt
// errors, corrupt items) is store.ErrUnavailable.
func engineError(op string, err error) error {
	for _, sentinel := range []error{store.ErrNotFound, store.ErrExists, store.ErrConflict, store.ErrUnavailable, store.ErrTooLarge, store.ErrInvalid} {
		if errors.Is(err, sentinel) {
			return fmt.Errorf("filestore: %s: %w", op, err)
		}
	}
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return errClosed
	}
	return fmt.Errorf("filestore: %s: %w: %w", op, store.ErrUnavailable, err)
}
