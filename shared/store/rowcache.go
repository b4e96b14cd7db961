package store

import (
	"bytes"
	"sync"
)

// RowCache keeps the decoded form of rows a process reads on every request
// — the session row, the matter row (issue 19, item 2) — so that a row read
// again with exactly the bytes it had is not parsed again. It caches no
// authority: the row is still read from the store on every call, and its
// decoding is reused only when the row read now has the version and the
// attribute bytes of the one decoded, byte for byte; any change (a wall
// raised, a session's level set) decodes afresh. A value handed out is a
// copy of T, whose slices, maps and pointers are shared with every other
// copy: callers treat them as read-only (or clone them).
//
// A nil *RowCache decodes every time. It holds at most its size of rows,
// forgetting an arbitrary one when full.
type RowCache[T any] struct {
	mu   sync.Mutex
	rows map[Key]cachedRow[T]
	size int
}

type cachedRow[T any] struct {
	version int64
	data    []byte
	v       T
}

// NewRowCache returns a cache of at most size rows (size ≥ 1).
func NewRowCache[T any](size int) *RowCache[T] {
	return &RowCache[T]{rows: make(map[Key]cachedRow[T]), size: max(1, size)}
}

// Decode returns decode(it.Bytes(attr)): the value decoded before when the
// cache holds one for it's key with it's version and identical bytes,
// otherwise a fresh decoding, which it keeps. A failed decoding is not
// kept.
func (c *RowCache[T]) Decode(it Item, attr string, decode func([]byte) (T, error)) (T, error) {
	data := it.Bytes(attr)
	if c == nil {
		return decode(data)
	}
	k := it.Key()
	c.mu.Lock()
	r, ok := c.rows[k]
	c.mu.Unlock()
	if ok && r.version == it.Version && bytes.Equal(r.data, data) {
		return r.v, nil
	}
	v, err := decode(data)
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if _, had := c.rows[k]; !had && len(c.rows) >= c.size {
		for old := range c.rows {
			delete(c.rows, old)
			break
		}
	}
	c.rows[k] = cachedRow[T]{version: it.Version, data: bytes.Clone(data), v: v}
	c.mu.Unlock()
	return v, nil
}
