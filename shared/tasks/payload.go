package tasks

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/custodymcp/custody/shared/store"
)

// Large payloads (a task's arguments, its outcome) are kept by pointer: a
// payload over its inline limit is split into parts, rows of their own
// beside the task (TASKPART#<id>#<payload>#<seq>), written in the same
// transaction as the row that points at them and read back with one query.
// The chain lives in the store rather than in the blob store (S3): the
// outcome and its parts commit atomically with the terminal state, so there
// is never a pointer without its bytes nor bytes without a pointer, the
// parts expire with the row, and the worker needs no second service. The
// cost is a bound: DynamoDB's transaction carries at most 4 MB, so a payload
// has at most maxParts parts (docs/decisions.md "Storage").
const (
	// outcomeInlineMax is the largest outcome kept in the row itself (the
	// row's other attributes, arguments included, stay within the store's
	// 400 KB item limit beside it).
	outcomeInlineMax = 300_000
	// argsInlineMax is the largest arguments object kept in the row.
	argsInlineMax = 64 << 10
	// partBytes is the size of one part.
	partBytes = 300_000
	// maxParts bounds a payload's parts: 3 MB, within DynamoDB's 4 MB per
	// transaction with the row and the audit row beside them.
	maxParts = 10
)

// ErrPayloadTooLarge is a payload over maxParts parts.
var ErrPayloadTooLarge = errors.New("tasks: payload too large to keep with a task")

// payload is a payload as stored: inline, or as parts.
type payload struct {
	inline []byte
	parts  []store.Op
}

// split keeps data inline when it is at most inlineMax bytes, else as part
// rows of the task expiring at expiresAt (epoch seconds).
func split(r *Row, name string, data []byte, inlineMax int, expiresAt int64) (payload, error) {
	if len(data) <= inlineMax {
		return payload{inline: data}, nil
	}
	n := (len(data) + partBytes - 1) / partBytes
	if n > maxParts {
		return payload{}, fmt.Errorf("%s of %d bytes: %w", name, len(data), ErrPayloadTooLarge)
	}
	var p payload
	for i := range n {
		chunk := data[i*partBytes : min(len(data), (i+1)*partBytes)]
		k := partKey(r.Tenant, r.CredentialID, r.ID, name, i)
		p.parts = append(p.parts, store.PutOp(store.Item{PK: k.PK, SK: k.SK, Version: 1, ExpiresAt: expiresAt,
			Attrs: map[string]any{"data": chunk}}))
	}
	return p, nil
}

// readParts reads the n parts of a task's payload name in one query (a
// page holds up to store.MaxQueryLimit items, far more than maxParts).
func (s *Service) readParts(ctx context.Context, r *Row, name string, n int) ([]byte, error) {
	page, err := s.opts.Store.Query(ctx, store.Query{PK: r.Key().PK,
		SK: store.SortKeyCondition{Prefix: partPrefix(r.ID) + name + "#"}, Limit: maxParts + 1})
	if err != nil {
		return nil, fmt.Errorf("read the %s of task %s: %w", name, r.ID, err)
	}
	if len(page.Items) != n {
		return nil, fmt.Errorf("read the %s of task %s: %d parts, want %d", name, r.ID, len(page.Items), n)
	}
	var b bytes.Buffer
	for _, it := range page.Items {
		b.Write(it.Bytes("data"))
	}
	return b.Bytes(), nil
}

// args returns the task's arguments, reading their parts if needed.
func (s *Service) args(ctx context.Context, r *Row) ([]byte, error) {
	if r.ArgsParts == 0 {
		return r.Args, nil
	}
	return s.readParts(ctx, r, "args", r.ArgsParts)
}

// outcome returns the task's stored outcome, reading its parts if needed.
func (s *Service) outcome(ctx context.Context, r *Row) ([]byte, error) {
	if r.OutcomeParts == 0 {
		return r.Outcome, nil
	}
	return s.readParts(ctx, r, "outcome", r.OutcomeParts)
}
