package pebblestore

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/fnv"

	"github.com/custodymcp/custody/shared/store"
)

// sep joins key parts. Keys hold no NUL (store.ValidateKey), and NUL sorts
// below every other byte, so "a" 0x00 … sorts before "ab" 0x00 …: the joined
// keys sort exactly as the parts do, part by part.
const sep = 0x00

// itemKey is the items bucket key: PK 0x00 SK.
func itemKey(k store.Key) []byte {
	b := make([]byte, 0, len(k.PK)+1+len(k.SK))
	b = append(b, k.PK...)
	b = append(b, sep)
	return append(b, k.SK...)
}

// splitItemKey is the inverse of itemKey.
func splitItemKey(ik []byte) (store.Key, error) {
	i := bytes.IndexByte(ik, sep)
	if i <= 0 || i == len(ik)-1 {
		return store.Key{}, fmt.Errorf("item key %q: %w", ik, errCorrupt)
	}
	s := string(ik)
	return store.Key{PK: s[:i], SK: s[i+1:]}, nil
}

// indexKey is the gsi1 bucket key: GSI1PK 0x00 GSI1SK 0x00 PK 0x00 SK, so
// entries with equal GSI1SK follow in table-key order.
func indexKey(gsi1pk, gsi1sk, ik []byte) []byte {
	b := make([]byte, 0, len(gsi1pk)+len(gsi1sk)+len(ik)+2)
	b = append(b, gsi1pk...)
	b = append(b, sep)
	b = append(b, gsi1sk...)
	b = append(b, sep)
	return append(b, ik...)
}

// tableKeyOf returns the item key inside an index key (after the second NUL).
func tableKeyOf(xk []byte) ([]byte, error) {
	i := bytes.IndexByte(xk, sep)
	if i >= 0 {
		if j := bytes.IndexByte(xk[i+1:], sep); j >= 0 {
			return xk[i+1+j+1:], nil
		}
	}
	return nil, fmt.Errorf("index key %q: %w", xk, errCorrupt)
}

// scan is a validated query as a half-open key range [lo, hi) of one bucket,
// read in one direction.
type scan struct {
	index bool
	lo    []byte // inclusive
	hi    []byte // exclusive
	desc  bool
	limit int
	shape uint64 // identifies Index, PK, SK and Descending for page tokens
}

// planQuery validates q (ErrInvalid) and turns it into a key range. Every
// range is [base+From, base+To+0x01) over base = partition 0x00: for the
// table an SK equal to To is exactly base+To, and for the index every entry
// with GSI1SK equal to To begins base+To 0x00, so both sort below the bound,
// while any larger sort key sorts at or above it. A prefix P is the range
// [base+P, base+P+0xFF): UTF-8 never contains the byte 0xFF.
func planQuery(q store.Query) (scan, error) {
	var sc scan
	limit, err := store.ValidateQuery(q)
	if err != nil {
		return sc, err
	}
	sc.index, sc.limit = q.Index == store.IndexGSI1, limit
	sc.desc = q.Descending

	base := append([]byte(q.PK), sep)
	join := func(s string, tail ...byte) []byte {
		b := make([]byte, 0, len(base)+len(s)+len(tail))
		return append(append(append(b, base...), s...), tail...)
	}
	if q.SK.Prefix != "" {
		sc.lo, sc.hi = join(q.SK.Prefix), join(q.SK.Prefix, 0xFF)
	} else {
		sc.lo, sc.hi = join(q.SK.From), join("", 0xFF)
		if q.SK.To != "" {
			sc.hi = join(q.SK.To, 0x01)
		}
	}

	h := fnv.New64a()
	for _, part := range []string{q.Index, q.PK, q.SK.Prefix, q.SK.From, q.SK.To} {
		h.Write([]byte(part))
		h.Write([]byte{sep})
	}
	if q.Descending {
		h.Write([]byte{1})
	}
	sc.shape = h.Sum64()

	if q.PageToken != "" {
		last, err := sc.decodeToken(q.PageToken)
		if err != nil {
			return sc, err
		}
		if sc.desc {
			sc.hi = last
		} else {
			sc.lo = append(last, sep) // the smallest key after last
		}
	}
	return sc, nil
}

// Page tokens are base64url (no padding) of: one version byte, the query's
// 8-byte shape hash, and the last returned bucket key. They are opaque and
// not authenticated (the port says never to hand them to clients); the shape
// hash and a range check refuse a token from another query.
const tokenV1 = 1

func (sc scan) encodeToken(last []byte) string {
	b := make([]byte, 0, 9+len(last))
	b = append(b, tokenV1)
	b = binary.BigEndian.AppendUint64(b, sc.shape)
	return base64.RawURLEncoding.EncodeToString(append(b, last...))
}

func (sc scan) decodeToken(tok string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) < 10 || b[0] != tokenV1 || binary.BigEndian.Uint64(b[1:9]) != sc.shape {
		return nil, fmt.Errorf("page token does not belong to this query: %w", store.ErrInvalid)
	}
	last := b[9:]
	if bytes.Compare(last, sc.lo) < 0 || bytes.Compare(last, sc.hi) >= 0 {
		return nil, fmt.Errorf("page token outside the query's range: %w", store.ErrInvalid)
	}
	return last, nil
}
