package filestore

import (
	"bytes"
	"slices"
)

// The overlay is what the write-ahead log holds and bbolt does not hold
// yet: every acknowledged write since the last checkpoint, in memory, in
// key order, one sorted run per key space (items, gsi1) in each of a few
// layers. Reads look at the layers first, newest first, and at bbolt
// beneath them (view.go); the checkpointer copies a frozen layer into bbolt
// in one transaction (checkpoint.go).
//
// A layer is immutable once published: the writer builds the next one by
// merging a batch's writes into a copy (copy on write), so a reader holds a
// snapshot without a lock. A copy costs O(layer size); batches are merged
// into a small recent layer, and that into the larger active one only when
// it fills (state.recent, view.go), so a batch copies a few kilobytes.

// Key spaces: the two bbolt buckets.
const (
	spaceItems = 0
	spaceGSI1  = 1
	numSpaces  = 2
)

// entry is one key's newest state: its value, or a deletion (del).
type entry struct {
	key []byte
	val []byte
	del bool
}

// layer is one generation of overlay entries, sorted by key, keys unique.
type layer struct {
	spaces [numSpaces][]entry
	// seq is the log sequence number of the last batch it holds (0: none).
	seq uint64
}

// size is the number of entries in every space.
func (l *layer) size() int {
	if l == nil {
		return 0
	}
	n := 0
	for _, s := range l.spaces {
		n += len(s)
	}
	return n
}

// find returns the entry at key in space sp.
func (l *layer) find(sp int, key []byte) (entry, bool) {
	if l == nil {
		return entry{}, false
	}
	es := l.spaces[sp]
	i, ok := slices.BinarySearchFunc(es, key, func(e entry, k []byte) int { return bytes.Compare(e.key, k) })
	if !ok {
		return entry{}, false
	}
	return es[i], true
}

// merged returns a new layer: l's entries with the batch's (sorted,
// unique per space, newer) entries merged over them. l is not changed.
func (l *layer) merged(batch [numSpaces][]entry, seq uint64) *layer {
	out := &layer{seq: seq}
	for sp := range numSpaces {
		var old []entry
		if l != nil {
			old = l.spaces[sp]
		}
		add := batch[sp]
		if len(add) == 0 {
			out.spaces[sp] = old // shared: neither is ever written again
			continue
		}
		m := make([]entry, 0, len(old)+len(add))
		i, j := 0, 0
		for i < len(old) && j < len(add) {
			switch c := bytes.Compare(old[i].key, add[j].key); {
			case c < 0:
				m = append(m, old[i])
				i++
			case c > 0:
				m = append(m, add[j])
				j++
			default: // the batch's write replaces the older one
				m = append(m, add[j])
				i++
				j++
			}
		}
		m = append(m, old[i:]...)
		m = append(m, add[j:]...)
		out.spaces[sp] = m
	}
	return out
}

// source is one sorted run of a merged iteration: a layer's space, or a
// bbolt cursor (view.go). Sources are read in one direction.
type source interface {
	// seek positions at the first key >= k (ascending) or the last key
	// < k (descending; nil k: the last key) and returns it.
	seek(k []byte, desc bool) (key, val []byte, del bool)
	// step moves one key on in the direction of the seek.
	step(desc bool) (key, val []byte, del bool)
}

// layerSource iterates one space of a layer.
type layerSource struct {
	es []entry
	i  int
}

func (s *layerSource) cur() ([]byte, []byte, bool) {
	if s.i < 0 || s.i >= len(s.es) {
		return nil, nil, false
	}
	e := s.es[s.i]
	return e.key, e.val, e.del
}

func (s *layerSource) seek(k []byte, desc bool) ([]byte, []byte, bool) {
	i, _ := slices.BinarySearchFunc(s.es, k, func(e entry, k []byte) int { return bytes.Compare(e.key, k) })
	if k == nil && desc {
		i = len(s.es)
	}
	if desc {
		i-- // the last key below k
	}
	s.i = i
	return s.cur()
}

func (s *layerSource) step(desc bool) ([]byte, []byte, bool) {
	if desc {
		s.i--
	} else {
		s.i++
	}
	return s.cur()
}

// merger walks several sources as one, in one direction: at each key the
// first source (the newest) that has it wins, and deletions are skipped.
type merger struct {
	desc bool
	srcs []source
	keys [][]byte // each source's current key (nil: exhausted)
	vals [][]byte
	dels []bool
}

func newMerger(desc bool, srcs ...source) *merger {
	return &merger{desc: desc, srcs: srcs,
		keys: make([][]byte, len(srcs)), vals: make([][]byte, len(srcs)), dels: make([]bool, len(srcs))}
}

// seek positions every source (see source.seek) and returns the first live
// key and value, or nil.
func (m *merger) seek(k []byte) ([]byte, []byte) {
	for i, s := range m.srcs {
		m.keys[i], m.vals[i], m.dels[i] = s.seek(k, m.desc)
	}
	return m.next()
}

// next returns the current best live key and its value and moves past it;
// nil at the end.
func (m *merger) next() ([]byte, []byte) {
	for {
		best := -1
		for i, k := range m.keys {
			if k == nil {
				continue
			}
			if best < 0 {
				best = i
				continue
			}
			c := bytes.Compare(k, m.keys[best])
			if m.desc && c > 0 || !m.desc && c < 0 {
				best = i
			}
		}
		if best < 0 {
			return nil, nil
		}
		key, val, del := m.keys[best], m.vals[best], m.dels[best]
		for i, k := range m.keys {
			if k != nil && bytes.Equal(k, key) {
				m.keys[i], m.vals[i], m.dels[i] = m.srcs[i].step(m.desc)
			}
		}
		if !del {
			return key, val
		}
	}
}
