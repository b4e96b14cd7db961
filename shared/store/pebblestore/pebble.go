package pebblestore

import (
	"errors"

	"github.com/cockroachdb/pebble/v2"
)

// Key spaces.
const (
	spaceItems = 0
	spaceGSI1  = 1
)

// Key spaces are a one-byte prefix in pebble's one key space.
func spaceKey(sp int, key []byte) []byte {
	b := make([]byte, 0, 1+len(key))
	return append(append(b, 'i'+byte(sp)), key...)
}

// view is one consistent read: a pebble snapshot.
type view struct{ snap *pebble.Snapshot }

func (s *Store) view() (*view, error) {
	if s.closed.Load() {
		return nil, errClosed
	}
	return &view{snap: s.db.NewSnapshot()}, nil
}

func (v *view) close() { _ = v.snap.Close() }

func (v *view) get(sp int, key []byte) []byte {
	val, closer, err := v.snap.Get(spaceKey(sp, key))
	if err != nil {
		return nil
	}
	out := append([]byte{}, val...)
	_ = closer.Close()
	return out
}

// cursor walks one key space in one direction.
type cursor struct {
	it   *pebble.Iterator
	sp   int
	desc bool
	err  error
}

func (v *view) cursor(sp int, desc bool) *cursor {
	lo, hi := []byte{'i' + byte(sp)}, []byte{'i' + byte(sp) + 1}
	it, err := v.snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	return &cursor{it: it, sp: sp, desc: desc, err: err}
}

func (c *cursor) cur(ok bool) ([]byte, []byte) {
	if !ok {
		return nil, nil
	}
	// Keys are valid only until the iterator moves; callers keep the last.
	return append([]byte(nil), c.it.Key()[1:]...), c.it.Value()
}

// seek: first key >= k ascending, last key < k descending (nil: the last).
func (c *cursor) seek(k []byte) ([]byte, []byte) {
	if c.err != nil {
		return nil, nil
	}
	if c.desc {
		if k == nil {
			return c.cur(c.it.Last())
		}
		return c.cur(c.it.SeekLT(spaceKey(c.sp, k)))
	}
	return c.cur(c.it.SeekGE(spaceKey(c.sp, k)))
}

func (c *cursor) next() ([]byte, []byte) {
	if c.desc {
		return c.cur(c.it.Prev())
	}
	return c.cur(c.it.Next())
}

var _ = errors.New
