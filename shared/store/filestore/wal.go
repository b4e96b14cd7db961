package filestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

// The write-ahead log: two files beside the bbolt file, used in turn. The
// writer appends one record per group commit to the current file and
// fdatasyncs it once; that sync is the commit. When the overlay is frozen
// for a checkpoint (writer.go) the writer moves to the other file, from
// offset 0: the other file's records are all in bbolt by then (a file is
// reused only after the checkpoint of everything in it has committed).
//
// Files grow in walChunk steps written as zeros and synced before any
// record lands there, so a record's own fdatasync never changes the file's
// size or its block map (on ext4, writing into fallocate'd extents would
// still be a metadata change per sync); after the first few checkpoints
// both files are at their working size and every commit is exactly one
// fdatasync of data blocks.
//
//	record  uint32 length of payload (little endian)
//	        uint32 CRC-32C of seq and payload
//	        uint64 seq (consecutive from 1 over the store's life)
//	        payload: ops, each
//	          byte space (0 items, 1 gsi1), byte kind (1 put, 2 delete),
//	          uvarint len(key), key, and for a put uvarint len(value), value
//
// Replay (Open) starts at the sequence number after the last one a
// checkpoint wrote into bbolt (the meta bucket's applied key) and follows
// consecutive records, in the file where the next one sits at offset 0 or
// right after the last; it stops at the first record that is torn
// (checksum), stale (an older seq left from an earlier round) or zero.
// What was never synced was never acknowledged, so stopping there loses
// nothing acknowledged.

// walChunk is the step in which a log file grows (zeros, then a sync).
const walChunk = 1 << 20

// walHeader is the size of a record header.
const walHeader = 16

// Op kinds in a record.
const (
	walPut = 1
	walDel = 2
)

// The meta bucket (name as a constant: no package-level mutable state)
// holds metaApplied: the seq of the last record copied into bbolt,
// big-endian uint64.
const (
	bucketMetaName = "meta"
	metaApplied    = "wal-applied"
)

// walFile is one log file: what the log needs of an *os.File, so that the
// power-loss test can put a file in front that forgets what was not synced.
type walFile interface {
	io.ReaderAt
	io.WriterAt
	// Datasync makes every write so far durable (fdatasync).
	Datasync() error
	Close() error
}

// osFile is a log file on disk.
type osFile struct{ *os.File }

func (f osFile) Datasync() error { return datasync(f.File) }

// wal is the writer's log: the two files, which one is current, and the
// write position. Only the writer goroutine (and Open and Close, when it
// does not run) touches it.
type wal struct {
	files  [2]walFile
	sizes  [2]int64 // bytes allocated (zeros written and synced)
	cur    int      // index of the current file
	off    int64    // where the next record goes in it
	seq    uint64   // seq of the last record written
	crc    *crc32.Table
	buf    []byte // the record being written, reused
	failed error  // a write or sync failed: the log's state is unknown
}

// walPaths names the log files of the store at path.
func walPaths(path string) [2]string {
	return [2]string{path + "-wal.0", path + "-wal.1"}
}

// openWAL opens (creating) the log files of the store at path with open.
func openWAL(path string, open func(string) (walFile, int64, error)) (*wal, error) {
	w := &wal{crc: crc32.MakeTable(crc32.Castagnoli)}
	created := false
	for i, p := range walPaths(path) {
		_, statErr := os.Stat(p)
		f, size, err := open(p)
		if err != nil {
			w.close()
			return nil, fmt.Errorf("open log %s: %w", p, err)
		}
		w.files[i], w.sizes[i] = f, size
		created = created || errors.Is(statErr, os.ErrNotExist)
	}
	if created {
		// The new files' directory entries must survive a power loss
		// before a commit relies on them.
		if err := syncDir(filepath.Dir(path)); err != nil {
			w.close()
			return nil, err
		}
	}
	return w, nil
}

// openOSFile opens a log file on disk and reports its size.
func openOSFile(p string) (walFile, int64, error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, 0, err
	}
	return osFile{f}, fi.Size(), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}

func (w *wal) close() error {
	var first error
	for _, f := range w.files {
		if f != nil {
			if err := f.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// appendOps encodes one op of a record payload.
func appendOp(b []byte, sp int, e entry) []byte {
	kind := byte(walPut)
	if e.del {
		kind = walDel
	}
	b = append(b, byte(sp), kind)
	b = binary.AppendUvarint(b, uint64(len(e.key)))
	b = append(b, e.key...)
	if !e.del {
		b = binary.AppendUvarint(b, uint64(len(e.val)))
		b = append(b, e.val...)
	}
	return b
}

// commit appends the batch as one record to the current file and syncs it
// once. On failure the log is unusable (what reached the disk is unknown)
// and every later commit fails too.
func (w *wal) commit(batch [numSpaces][]entry) (uint64, error) {
	if w.failed != nil {
		return 0, w.failed
	}
	var header [walHeader]byte
	b := append(w.buf[:0], header[:]...)
	for sp, es := range batch {
		for _, e := range es {
			b = appendOp(b, sp, e)
		}
	}
	seq := w.seq + 1
	binary.LittleEndian.PutUint32(b[0:], uint32(len(b)-walHeader))
	binary.LittleEndian.PutUint64(b[8:], seq)
	binary.LittleEndian.PutUint32(b[4:], crc32.Checksum(b[8:], w.crc))
	w.buf = b
	if err := w.write(b); err != nil {
		w.failed = fmt.Errorf("write-ahead log: %w", err)
		return 0, w.failed
	}
	w.seq = seq
	return seq, nil
}

// write puts b at the current offset, growing the file ahead of it first,
// and syncs.
func (w *wal) write(b []byte) error {
	f := w.files[w.cur]
	end := w.off + int64(len(b))
	if end > w.sizes[w.cur] {
		size := (end + walChunk - 1) / walChunk * walChunk
		zeros := make([]byte, size-w.sizes[w.cur])
		if _, err := f.WriteAt(zeros, w.sizes[w.cur]); err != nil {
			return err
		}
		if err := f.Datasync(); err != nil {
			return err
		}
		w.sizes[w.cur] = size
	}
	if _, err := f.WriteAt(b, w.off); err != nil {
		return err
	}
	if err := f.Datasync(); err != nil {
		return err
	}
	w.off = end
	return nil
}

// switchFile moves the writer to the start of the other file. The caller
// guarantees everything in it is in bbolt.
func (w *wal) switchFile() {
	w.cur = 1 - w.cur
	w.off = 0
}

// replay reads the records after applied from both files, in order, and
// returns their ops, last write of a key winning, as a layer (nil when
// there are none). It reads record by record, so a log with nothing to
// replay costs two header reads. It leaves the log positioned after the
// last record.
func (w *wal) replay(applied uint64) (*layer, error) {
	w.seq = applied
	pending := [numSpaces]map[string]entry{{}, {}}
	found := false
	cur, off := -1, int64(0)
	for {
		next := w.seq + 1
		// The next record follows the last one, or starts the other file.
		var rec []byte
		var err error
		if cur >= 0 {
			rec, err = w.record(cur, off, next)
		}
		if rec == nil && err == nil {
			for i := range 2 {
				if i == cur {
					continue
				}
				if rec, err = w.record(i, 0, next); rec != nil || err != nil {
					cur, off = i, 0
					break
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("read write-ahead log: %w", err)
		}
		if rec == nil {
			break
		}
		if err := decodeOps(rec[walHeader:], pending); err != nil {
			return nil, fmt.Errorf("write-ahead log record %d: %w", next, err)
		}
		found = true
		w.seq = next
		off += int64(len(rec))
	}
	if cur >= 0 {
		w.cur, w.off = cur, off
	}
	if !found {
		return nil, nil
	}
	var sorted [numSpaces][]entry
	for sp := range numSpaces {
		sorted[sp] = sortedEntries(pending[sp])
	}
	return (*layer)(nil).merged(sorted, w.seq), nil
}

// record returns the record at off in file i when it is intact and has
// sequence number seq, nil when there is none such (torn, stale, zeros or
// past the end).
func (w *wal) record(i int, off int64, seq uint64) ([]byte, error) {
	if off+walHeader > w.sizes[i] {
		return nil, nil
	}
	var h [walHeader]byte
	if _, err := w.files[i].ReadAt(h[:], off); err != nil {
		return nil, err
	}
	n := int64(binary.LittleEndian.Uint32(h[0:]))
	if binary.LittleEndian.Uint64(h[8:]) != seq || off+walHeader+n > w.sizes[i] {
		return nil, nil
	}
	rec := make([]byte, walHeader+n)
	if _, err := w.files[i].ReadAt(rec, off); err != nil {
		return nil, err
	}
	if crc32.Checksum(rec[8:], w.crc) != binary.LittleEndian.Uint32(h[4:]) {
		return nil, nil
	}
	return rec, nil
}

// decodeOps applies a record payload's ops to pending.
func decodeOps(p []byte, pending [numSpaces]map[string]entry) error {
	d := decoder{b: p}
	for d.off < len(p) && !d.bad {
		if d.off+2 > len(p) {
			return errCorrupt
		}
		sp, kind := int(p[d.off]), p[d.off+1]
		d.off += 2
		if sp >= numSpaces {
			return errCorrupt
		}
		key := append([]byte(nil), d.bytes()...)
		switch kind {
		case walPut:
			val := append([]byte{}, d.bytes()...)
			pending[sp][string(key)] = entry{key: key, val: val}
		case walDel:
			pending[sp][string(key)] = entry{key: key, del: true}
		default:
			return errCorrupt
		}
	}
	if d.bad {
		return errCorrupt
	}
	return nil
}
