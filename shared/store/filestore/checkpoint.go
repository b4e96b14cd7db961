package filestore

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Checkpoints. The writer freezes the active overlay layer when it holds
// Options.CheckpointEntries entries or its log file has grown past
// Options.CheckpointLogBytes, and moves the log to its other file; the
// checkpointer goroutine then copies the frozen layer into bbolt in one
// read-write transaction (bbolt's own two syncs, once per checkpoint rather
// than per request), records the last seq it holds in the meta bucket in
// that same transaction, and publishes the state without it. Until then
// reads find the frozen entries in the layer; after it, in bbolt: never
// neither (Store.view's generation check).
//
// Appends (audit rows) therefore reach bbolt's B+tree a checkpoint at a
// time: a leaf and its branch pages are rewritten once per checkpoint for
// all the rows that landed in them, not once per call.

// Defaults of the checkpoint thresholds.
const (
	defaultCheckpointEntries  = 4096
	defaultCheckpointLogBytes = 8 << 20
)

// publish makes a committed batch visible: merged over the recent layer,
// which moves into the active one when it is full. The checkpointer may
// have changed the state since the batch began; only the recent and
// active layers are the writer's.
func (s *Store) publish(batch [numSpaces][]entry, seq uint64) {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	cur := s.state.Load()
	next := &state{gen: cur.gen, recent: cur.recent.merged(batch, seq), active: cur.active, frozen: cur.frozen}
	if next.recent.size() >= recentEntries {
		next.active, next.recent = next.active.merged(next.recent.spaces, seq), nil
	}
	s.state.Store(next)
}

// maybeCheckpoint freezes the active layer when it is due and no
// checkpoint is running, and hands it to the checkpointer. When one is
// running and the log has grown far past its threshold (writes outpace
// checkpoints), the writer waits for it rather than grow the log without
// bound.
func (s *Store) maybeCheckpoint() {
	st := s.state.Load()
	if st.unfrozen() < s.opts.CheckpointEntries && s.log.off < s.opts.CheckpointLogBytes {
		return
	}
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()
	if s.ckptRunning && s.log.off < 4*s.opts.CheckpointLogBytes {
		return
	}
	for s.ckptRunning {
		s.ckptDone.Wait()
	}
	if s.ckptErr != nil {
		return
	}
	s.freezeLocked()
}

// freezeLocked moves the active layer to frozen and the log to its other
// file, and wakes the checkpointer. The caller holds ckptMu and no
// checkpoint is running, so there is no frozen layer.
func (s *Store) freezeLocked() {
	s.stateMu.Lock()
	cur := s.state.Load()
	if cur.unfrozen() == 0 {
		s.stateMu.Unlock()
		return
	}
	frozen := cur.active
	if cur.recent != nil {
		frozen = cur.active.merged(cur.recent.spaces, cur.recent.seq)
	}
	s.state.Store(&state{gen: cur.gen, frozen: frozen})
	s.stateMu.Unlock()
	s.log.switchFile()
	s.ckptRunning = true
	s.ckptWake <- struct{}{} // buffered (1): the checkpointer is idle
}

// waitCheckpoint waits until no checkpoint is running and returns the
// error of a failed one.
func (s *Store) waitCheckpoint() error {
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()
	for s.ckptRunning {
		s.ckptDone.Wait()
	}
	return s.ckptErr
}

// broken returns why the store takes no more writes: a failed checkpoint.
func (s *Store) broken() error {
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()
	return s.ckptErr
}

// checkpointer copies each frozen layer into bbolt, until ckptWake closes.
// A failed checkpoint leaves the frozen layer in place (reads stay right,
// the log still holds it) and fails every later write: the store is
// broken until reopened, when the log is replayed again. The frozen layer
// leaves the state, and the checkpoint stops running, in one step under
// ckptMu, so the writer never sees a finished checkpoint's layer.
func (s *Store) checkpointer() {
	defer close(s.ckptExited)
	for range s.ckptWake {
		err := s.checkpoint(s.state.Load().frozen)
		s.ckptMu.Lock()
		if err == nil {
			s.stateMu.Lock()
			cur := s.state.Load()
			s.state.Store(&state{gen: cur.gen + 1, recent: cur.recent, active: cur.active})
			s.stateMu.Unlock()
		} else if s.ckptErr == nil {
			s.ckptErr = err
		}
		s.ckptRunning = false
		s.ckptDone.Broadcast()
		s.ckptMu.Unlock()
	}
}

// checkpoint writes l into bbolt in one transaction, with the seq it holds
// as the meta bucket's applied mark.
func (s *Store) checkpoint(l *layer) error {
	if l == nil {
		return nil
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		for sp, name := range [numSpaces][]byte{bucketItems, bucketGSI1} {
			b := tx.Bucket(name)
			for _, e := range l.spaces[sp] {
				var err error
				if e.del {
					err = b.Delete(e.key)
				} else {
					err = b.Put(e.key, e.val)
				}
				if err != nil {
					return err
				}
			}
		}
		return tx.Bucket([]byte(bucketMetaName)).Put([]byte(metaApplied), binary.BigEndian.AppendUint64(nil, l.seq))
	})
	if err != nil {
		return fmt.Errorf("checkpoint through log record %d: %w", l.seq, err)
	}
	s.checkpoints.Add(1)
	return nil
}

// applied reads the meta bucket's applied mark (0 when none).
func applied(tx *bolt.Tx) uint64 {
	v := tx.Bucket([]byte(bucketMetaName)).Get([]byte(metaApplied))
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}
