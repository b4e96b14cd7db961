package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
)

// Verify reads the object at ref through SHA-256 with one buffer of
// VerifyBufferSize and reports whether it is exactly size bytes with
// digest sum (docs/contracts.md §5: nothing is spent until the bytes are
// proven). The object is streamed: memory stays at the one buffer whatever
// its size, and a longer object is refused as soon as it passes size (so
// is one whose stated length differs, before any byte is read).
//
// It returns nil on a match, an error wrapping ErrMismatch on a different
// size or digest, and GetObject's or the stream's error otherwise
// (ErrNotFound, ErrUnavailable).
func Verify(ctx context.Context, objects Objects, ref Ref, size int64, sum [sha256.Size]byte) error {
	obj, err := objects.GetObject(ctx, ref)
	if err != nil {
		return fmt.Errorf("verify %s: %w", ref, err)
	}
	defer obj.Body.Close()
	if obj.Size != size {
		return fmt.Errorf("verify %s: %w: %d bytes, want %d", ref, ErrMismatch, obj.Size, size)
	}
	h := sha256.New()
	buf := make([]byte, VerifyBufferSize)
	var n int64
	for {
		k, err := io.ReadFull(obj.Body, buf)
		n += int64(k)
		if n > size {
			return fmt.Errorf("verify %s: %w: more than the %d bytes declared", ref, ErrMismatch, size)
		}
		h.Write(buf[:k])
		// io.ReadFull's own end markers, compared by identity: a stream cut
		// short by the network is the body's wrapped ErrUnavailable (which
		// may wrap io.ErrUnexpectedEOF too) and must not read as a
		// mismatch, which would delete a good object.
		if err == io.EOF || err == io.ErrUnexpectedEOF { //nolint:errorlint // identity intended
			break
		}
		if err != nil {
			return fmt.Errorf("verify %s: %w", ref, err)
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("verify %s: %w: %w", ref, ErrUnavailable, err)
		}
	}
	if n != size {
		return fmt.Errorf("verify %s: %w: %d bytes, want %d", ref, ErrMismatch, n, size)
	}
	if got := h.Sum(nil); [sha256.Size]byte(got) != sum {
		return fmt.Errorf("verify %s: %w: SHA-256 %s, want %s", ref, ErrMismatch, hex.EncodeToString(got), hex.EncodeToString(sum[:]))
	}
	return nil
}
