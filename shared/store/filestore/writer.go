package filestore

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/custodymcp/custody/shared/store"
)

// A request is one write waiting for the writer goroutine. apply runs inside
// the batch and either returns an error having written nothing, or writes
// through the writeTx; its result reaches the caller on done after the
// commit.
type request struct {
	apply func(w *writeTx) error
	state atomic.Int32 // pending → taken (by the writer) or abandoned (by the caller)
	done  chan error   // buffered: the writer never blocks on a caller
}

const (
	pending int32 = iota
	taken
	abandoned
)

// write queues apply for the writer and waits for its result. A context that
// is done before the writer takes the request abandons it (never applied);
// once taken, the request completes and its result is returned even if the
// context ends meanwhile, so a caller never misses an acknowledged write.
func (s *Store) write(ctx context.Context, op string, apply func(w *writeTx) error) error {
	if err := ctx.Err(); err != nil {
		return ctxError(op, err)
	}
	r := &request{apply: apply, done: make(chan error, 1)}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return errClosed
	}
	s.queue = append(s.queue, r)
	s.mu.Unlock()
	s.wake.Signal()

	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		if r.state.CompareAndSwap(pending, abandoned) {
			return ctxError(op, ctx.Err())
		}
		return <-r.done
	}
}

// writer is the one goroutine that writes. Each turn it takes the whole
// queue as a batch, applies it against one view of the store and commits
// it with one write-ahead log record and one fdatasync; requests that
// arrive meanwhile form the next batch. After Close it drains the queue
// and exits.
func (s *Store) writer() {
	defer close(s.writerDone)
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.closing {
			s.wake.Wait()
		}
		if len(s.queue) == 0 { // closing, drained
			s.mu.Unlock()
			return
		}
		batch := s.queue
		s.queue, s.spare = s.spare[:0], nil
		s.mu.Unlock()

		s.commit(batch)

		clear(batch) // drop the requests for the collector
		s.mu.Lock()
		s.spare = batch[:0]
		s.mu.Unlock()
	}
}

// commit applies one batch and makes it durable with one log record. A
// request's own failure (a condition, an invalid result) is its answer
// alone; a failure of the batch (the log write or its sync) fails every
// request of the batch with store.ErrUnavailable. A batch that wrote
// nothing writes no record: nothing to make durable. Acknowledgements go
// out after the batch is in the published overlay, so a read after an
// acknowledged write sees it.
func (s *Store) commit(batch []*request) {
	run := batch[:0:0]
	for _, r := range batch {
		if r.state.CompareAndSwap(pending, taken) {
			run = append(run, r)
		}
	}
	if len(run) == 0 {
		return
	}
	results := make([]error, len(run))
	err := func() error {
		if err := s.broken(); err != nil {
			return err
		}
		v, err := s.view()
		if err != nil {
			return err
		}
		w := &writeTx{v: v, now: s.now().Unix()}
		for i := range w.pending {
			w.pending[i] = map[string]entry{}
		}
		for i, r := range run {
			results[i] = r.apply(w)
			if w.failed != nil {
				v.close()
				return w.failed
			}
		}
		// The batch's entries are its own encodings, not bbolt memory: the
		// view closes before the sync, so that a checkpoint growing the file
		// (which waits for every read transaction) never waits for it.
		v.close()
		if !w.dirty {
			return nil
		}
		var sorted [numSpaces][]entry
		for sp := range numSpaces {
			sorted[sp] = sortedEntries(w.pending[sp])
		}
		seq, err := s.log.commit(sorted)
		if err != nil {
			return err
		}
		s.publish(sorted, seq)
		s.commits.Add(1)
		return nil
	}()
	if err != nil {
		err = fmt.Errorf("filestore: commit: %w: %w", store.ErrUnavailable, err)
	}
	for i, r := range run {
		if err != nil {
			r.done <- err
		} else {
			r.done <- results[i]
		}
	}
	if err == nil {
		s.maybeCheckpoint()
	}
}

// sortedEntries returns the entries of m in key order.
func sortedEntries(m map[string]entry) []entry {
	es := make([]entry, 0, len(m))
	for _, e := range m {
		es = append(es, e)
	}
	slices.SortFunc(es, func(a, b entry) int { return bytes.Compare(a.key, b.key) })
	return es
}

// writeTx is the writer's view of one batch: the writes of the batch so far
// (pending, per key space) over the store's view at the batch's start. now
// is the engine clock in epoch seconds, read once per batch.
type writeTx struct {
	v       *view
	pending [numSpaces]map[string]entry
	now     int64
	dirty   bool  // something was written
	failed  error // the batch cannot be committed
}

// get reads key of space sp as the batch sees it.
func (w *writeTx) get(sp int, key []byte) []byte {
	if e, ok := w.pending[sp][string(key)]; ok {
		if e.del {
			return nil
		}
		return e.val
	}
	return w.v.get(sp, key)
}

func (w *writeTx) set(sp int, key, val []byte) {
	w.pending[sp][string(key)] = entry{key: key, val: val}
	w.dirty = true
}

func (w *writeTx) remove(sp int, key []byte) {
	w.pending[sp][string(key)] = entry{key: key, del: true}
	w.dirty = true
}

// current is the stored state of one key: the physical item (live or
// expired, whose index entry a write must remove) and the live item that
// conditions and updates see.
type current struct {
	ik   []byte
	old  header // valid when exists
	have bool   // a physical item is stored
	live *store.Item
}

// load reads the item at key. With full unset only the header is decoded
// (enough for every condition but AttrEquals and for a replacement); the
// live item then carries the Version alone.
func (w *writeTx) load(key store.Key, full bool) (current, error) {
	c := current{ik: itemKey(key)}
	v := w.get(spaceItems, c.ik)
	if v == nil {
		return c, nil
	}
	h, err := decodeHeader(v)
	if err != nil {
		return c, fmt.Errorf("%s: %w: %w", key, store.ErrUnavailable, err)
	}
	// Copy the index keys out of bbolt memory: a transaction loads every
	// operation's item before it writes any.
	h.GSI1PK, h.GSI1SK = bytes.Clone(h.GSI1PK), bytes.Clone(h.GSI1SK)
	c.old, c.have = h, true
	if !store.Live(h.ExpiresAt, w.now) {
		return c, nil
	}
	if !full {
		c.live = &store.Item{PK: key.PK, SK: key.SK, Version: h.Version, ExpiresAt: h.ExpiresAt}
		return c, nil
	}
	it, err := decodeItem(key, v)
	if err != nil {
		return c, fmt.Errorf("%s: %w: %w", key, store.ErrUnavailable, err)
	}
	c.live = &it
	return c, nil
}

// put stores val (the encoding of an item with index keys gsi1pk, gsi1sk)
// at c's key and moves its index entry.
func (w *writeTx) put(c current, val []byte, gsi1pk, gsi1sk string) {
	var oldX, newX []byte
	if c.have && c.old.indexed() {
		oldX = indexKey(c.old.GSI1PK, c.old.GSI1SK, c.ik)
	}
	if gsi1pk != "" && gsi1sk != "" {
		newX = indexKey([]byte(gsi1pk), []byte(gsi1sk), c.ik)
	}
	if oldX != nil && string(oldX) != string(newX) {
		w.remove(spaceGSI1, oldX)
	}
	if newX != nil && string(oldX) != string(newX) {
		w.set(spaceGSI1, newX, []byte{})
	}
	w.set(spaceItems, c.ik, val)
}

// del removes the physical item at c's key, if any, and its index entry.
func (w *writeTx) del(c current) {
	if !c.have {
		return
	}
	if c.old.indexed() {
		w.remove(spaceGSI1, indexKey(c.old.GSI1PK, c.old.GSI1SK, c.ik))
	}
	w.remove(spaceItems, c.ik)
}

// check fails the batch with err (nil: no failure).
func (w *writeTx) check(err error) {
	if err != nil && w.failed == nil {
		w.failed = err
	}
}

// needsFull reports whether conds need the whole live item (AttrEquals).
func needsFull(conds []store.Condition) bool {
	for _, c := range conds {
		if c.Kind == store.CondAttrEquals || c.Kind == store.CondAttrBelow {
			return true
		}
	}
	return false
}

// Put writes the whole item when every condition holds (store.Store.Put).
// The encoding happens on the caller's goroutine, outside the writer.
func (s *Store) Put(ctx context.Context, item store.Item, conds ...store.Condition) error {
	op := "put " + item.Key().String()
	if err := store.ValidateItem(item); err != nil {
		return fmt.Errorf("filestore: %s: %w", op, err)
	}
	if err := store.ValidateConditions(conds); err != nil {
		return fmt.Errorf("filestore: %s: %w", op, err)
	}
	val := encodeItem(item)
	full := needsFull(conds)
	return s.write(ctx, op, func(w *writeTx) error {
		c, err := w.load(item.Key(), full)
		if err != nil {
			return fmt.Errorf("filestore: %s: %w", op, err)
		}
		if err := store.CheckConditions(conds, c.live); err != nil {
			return fmt.Errorf("filestore: %s: %w", op, err)
		}
		w.put(c, val, item.GSI1PK, item.GSI1SK)
		return nil
	})
}

// Update applies u to the item at key when every condition holds and
// returns the item as written (store.Store.Update). An absent or expired item
// starts empty, at Version 1.
func (s *Store) Update(ctx context.Context, key store.Key, u store.Update, conds ...store.Condition) (store.Item, error) {
	op := "update " + key.String()
	if err := validateUpdate(key, u, conds); err != nil {
		return store.Item{}, fmt.Errorf("filestore: %s: %w", op, err)
	}
	var out store.Item
	err := s.write(ctx, op, func(w *writeTx) error {
		c, err := w.load(key, true)
		if err != nil {
			return fmt.Errorf("filestore: %s: %w", op, err)
		}
		if err := store.CheckConditions(conds, c.live); err != nil {
			return fmt.Errorf("filestore: %s: %w", op, err)
		}
		next, err := applyUpdate(key, c.live, u)
		if err != nil {
			return fmt.Errorf("filestore: %s: %w", op, err)
		}
		w.put(c, encodeItem(next), next.GSI1PK, next.GSI1SK)
		out = next
		return nil
	})
	if err != nil {
		return store.Item{}, err
	}
	return out, nil
}

// Delete removes the item at key when every condition holds; deleting an
// absent item without conditions succeeds (store.Store.Delete).
func (s *Store) Delete(ctx context.Context, key store.Key, conds ...store.Condition) error {
	op := "delete " + key.String()
	if err := store.ValidateKey(key); err != nil {
		return fmt.Errorf("filestore: %s: %w", op, err)
	}
	if err := store.ValidateConditions(conds); err != nil {
		return fmt.Errorf("filestore: %s: %w", op, err)
	}
	full := needsFull(conds)
	return s.write(ctx, op, func(w *writeTx) error {
		c, err := w.load(key, full)
		if err != nil {
			return fmt.Errorf("filestore: %s: %w", op, err)
		}
		if err := store.CheckConditions(conds, c.live); err != nil {
			return fmt.Errorf("filestore: %s: %w", op, err)
		}
		w.del(c)
		return nil
	})
}

// Transact applies ops atomically (store.Store.Transact): it checks every
// operation's conditions first, in order, and cancels on the first failure
// with a *store.TxCanceledError; then it computes every new item (an invalid
// or oversized Update result refuses the whole transaction); only then does
// it write.
func (s *Store) Transact(ctx context.Context, ops []store.Op) error {
	const op = "transact"
	if err := store.ValidateTransact(ops); err != nil {
		return fmt.Errorf("filestore: %s: %w", op, err)
	}
	vals := make([][]byte, len(ops)) // encodings of the Puts, made outside the writer
	for i, o := range ops {
		if o.Kind == store.OpPut {
			vals[i] = encodeItem(o.Item)
		}
	}
	return s.write(ctx, op, func(w *writeTx) error {
		cur := make([]current, len(ops))
		for i, o := range ops {
			var err error
			if cur[i], err = w.load(o.OpKey(), o.Kind == store.OpUpdate || needsFull(o.Conditions)); err != nil {
				return fmt.Errorf("filestore: %s: %w", op, err)
			}
			if err := store.CheckConditions(o.Conditions, cur[i].live); err != nil {
				return fmt.Errorf("filestore: %s: %w", op, &store.TxCanceledError{Index: i, Key: o.OpKey(), Err: err})
			}
		}
		updated := make([]store.Item, len(ops))
		for i, o := range ops {
			if o.Kind != store.OpUpdate {
				continue
			}
			next, err := applyUpdate(o.Key, cur[i].live, o.Update)
			if err != nil {
				return fmt.Errorf("filestore: %s: operation %d: %w", op, i, err)
			}
			updated[i], vals[i] = next, encodeItem(next)
		}
		for i, o := range ops {
			switch o.Kind {
			case store.OpPut:
				w.put(cur[i], vals[i], o.Item.GSI1PK, o.Item.GSI1SK)
			case store.OpUpdate:
				w.put(cur[i], vals[i], updated[i].GSI1PK, updated[i].GSI1SK)
			case store.OpDelete:
				w.del(cur[i])
			}
		}
		return nil
	})
}

// validateUpdate checks an Update before it is queued: the port's rules
// (store.ValidateKey, ValidateUpdate — an attribute named once —,
// ValidateConditions).
func validateUpdate(key store.Key, u store.Update, conds []store.Condition) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	if err := store.ValidateUpdate(u); err != nil {
		return err
	}
	return store.ValidateConditions(conds)
}

// applyUpdate is store.ApplyUpdate with the checks only the live item
// allows: an Add to an attribute that is not an int64 is ErrInvalid (where
// DynamoDB refuses the operand type), and the result must be a valid item
// (index keys set together, sizes: ErrInvalid or ErrTooLarge).
func applyUpdate(key store.Key, live *store.Item, u store.Update) (store.Item, error) {
	if live != nil {
		for name := range u.Add {
			if v, ok := live.Attrs[name]; ok {
				if _, isInt := v.(int64); !isInt {
					return store.Item{}, fmt.Errorf("add to attribute %q of type %T: %w", name, v, store.ErrInvalid)
				}
			}
		}
	}
	next := store.ApplyUpdate(key, live, u)
	if err := store.ValidateItem(next); err != nil {
		return store.Item{}, err
	}
	return next, nil
}
