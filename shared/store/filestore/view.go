package filestore

import (
	bolt "go.etcd.io/bbolt"
)

// state is what a read sees on top of bbolt, newest first: the recent
// layer (the last few batches), the active layer (the acknowledged writes
// since the last freeze before those) and the frozen one (being
// checkpointed into bbolt; nil when none). Each batch is merged into the
// small recent layer, which is merged into the active one when it holds
// recentEntries, so a batch copies a few kilobytes, not the whole overlay.
// gen counts the checkpoints published: a reader's bbolt snapshot matches
// its layers only when gen did not move while it opened the snapshot (see
// Store.view).
type state struct {
	gen    uint64
	recent *layer
	active *layer
	frozen *layer
}

// recentEntries is the size at which the recent layer is merged into the
// active one.
const recentEntries = 128

// layers returns the state's layers, newest first.
func (st *state) layers() [3]*layer { return [3]*layer{st.recent, st.active, st.frozen} }

// unfrozen is the number of entries a freeze would hand the checkpointer
// (an upper bound: a key in both layers counts twice).
func (st *state) unfrozen() int { return st.recent.size() + st.active.size() }

// view is one consistent read: the layers of one state over one bbolt read
// transaction. Values it returns alias bbolt or layer memory and are valid
// until close.
type view struct {
	st *state
	tx *bolt.Tx
	b  [numSpaces]*bolt.Bucket
}

// view opens a consistent read. A checkpoint that lands between loading the
// state and opening the bbolt transaction would let the transaction see
// writes the state's layers predate (the frozen layer and later), so the
// state is loaded again after the transaction opened and the read starts
// over if a checkpoint was published meanwhile.
func (s *Store) view() (*view, error) {
	for {
		st := s.state.Load()
		tx, err := s.db.Begin(false)
		if err != nil {
			return nil, err
		}
		if s.state.Load().gen == st.gen {
			v := &view{st: st, tx: tx}
			v.b[spaceItems], v.b[spaceGSI1] = tx.Bucket(bucketItems), tx.Bucket(bucketGSI1)
			return v, nil
		}
		_ = tx.Rollback()
	}
}

func (v *view) close() { _ = v.tx.Rollback() }

// get returns the value at key in space sp, nil when there is none.
func (v *view) get(sp int, key []byte) []byte {
	return stateGet(v.st, v.b[sp], sp, key)
}

// stateGet reads key from the layers of st, newest first, then from bbolt.
func stateGet(st *state, b *bolt.Bucket, sp int, key []byte) []byte {
	for _, l := range st.layers() {
		if e, ok := l.find(sp, key); ok {
			if e.del {
				return nil
			}
			return e.val
		}
	}
	return b.Get(key)
}

// cursor returns a merged walk over space sp: the layers, then bbolt.
func (v *view) cursor(sp int, desc bool) *merger {
	srcs := make([]source, 0, 4)
	for _, l := range v.st.layers() {
		if l != nil && len(l.spaces[sp]) > 0 {
			srcs = append(srcs, &layerSource{es: l.spaces[sp]})
		}
	}
	srcs = append(srcs, &boltSource{c: v.b[sp].Cursor()})
	return newMerger(desc, srcs...)
}

// boltSource is a bbolt cursor as a merge source; bbolt holds no deletions.
type boltSource struct{ c *bolt.Cursor }

func (s *boltSource) seek(k []byte, desc bool) ([]byte, []byte, bool) {
	if !desc {
		kk, vv := s.c.Seek(k)
		return kk, vv, false
	}
	// The last key below k: step back from the first key at or above it,
	// or start from the end when there is none.
	if k == nil {
		kk, vv := s.c.Last()
		return kk, vv, false
	}
	if kk, _ := s.c.Seek(k); kk == nil {
		kk, vv := s.c.Last()
		return kk, vv, false
	}
	kk, vv := s.c.Prev()
	return kk, vv, false
}

func (s *boltSource) step(desc bool) ([]byte, []byte, bool) {
	if desc {
		kk, vv := s.c.Prev()
		return kk, vv, false
	}
	kk, vv := s.c.Next()
	return kk, vv, false
}
