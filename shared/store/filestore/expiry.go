package filestore

import (
	"context"
	"fmt"

	"github.com/custodymcp/custody/shared/store"
)

// PurgeExpired deletes up to limit items (limit <= 0: no limit) that are
// expired at the engine clock's now, with their index entries, and returns
// how many it deleted. Reads already skip expired items; this reclaims their
// space (the sweeper's work on the file engine, where nothing deletes expired
// items on its own as DynamoDB's TTL does). The scan runs in a read
// transaction; the deletes are one write through the writer, which deletes
// an item only if it is still expired then.
func (s *Store) PurgeExpired(ctx context.Context, limit int) (int, error) {
	const op = "purge expired"
	if err := ctx.Err(); err != nil {
		return 0, ctxError(op, err)
	}
	now := s.now().Unix()
	var keys []store.Key
	err := s.read(func(vw *view) error {
		c := vw.cursor(spaceItems, false)
		for k, v := c.seek(nil); k != nil && (limit <= 0 || len(keys) < limit); k, v = c.next() {
			h, err := decodeHeader(v)
			if err != nil {
				return fmt.Errorf("item %q: %w", k, err)
			}
			if store.Live(h.ExpiresAt, now) {
				continue
			}
			key, err := splitItemKey(k)
			if err != nil {
				return err
			}
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return 0, engineError(op, err)
	}
	if len(keys) == 0 {
		return 0, nil
	}
	var n int
	err = s.write(ctx, op, func(w *writeTx) error {
		expired := make([]current, 0, len(keys))
		for _, key := range keys {
			c, err := w.load(key, false)
			if err != nil {
				return fmt.Errorf("filestore: %s: %w", op, err)
			}
			if c.have && c.live == nil {
				expired = append(expired, c)
			}
		}
		for _, c := range expired {
			w.del(c)
		}
		n = len(expired)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
