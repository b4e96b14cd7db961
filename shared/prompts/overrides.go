package prompts

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/store"
)

// Tenant overrides. A firm may word an ordinary prompt its own way: one row
// per (tenant, prompt), `T#<tenant>` / `PROMPT#<name>`, with these string
// attributes (every one optional):
//
//	description  replaces Prompt.Description in prompts/list and prompts/get
//	text         replaces Prompt.Text, the message text the render function
//	             receives as Call.Text (the matter facts and the client's
//	             arguments are still rendered by code around it)
//	updated_by   who stored it (an operator or principal id), for the record
//	updated_at   when, RFC 3339
//
// An empty or absent description or text keeps the code's default. A
// Locked prompt never reads its row: whatever is stored there, it answers
// the default.

// Limits of an override's fields, in bytes.
const (
	MaxOverrideDescription = 1024
	MaxOverrideText        = 32 << 10
)

// Errors of PutOverride and DeleteOverride.
var (
	// ErrUnknownPrompt: no prompt of that name is registered.
	ErrUnknownPrompt = errors.New("prompts: unknown prompt")
	// ErrLocked: the prompt is locked; tenants cannot override it.
	ErrLocked = errors.New("prompts: the prompt is locked")
	// ErrInvalidOverride: a field is over its limit or not valid UTF-8.
	ErrInvalidOverride = errors.New("prompts: invalid override")
)

// Override is a tenant's wording of an ordinary prompt.
type Override struct {
	Description string
	Text        string
	UpdatedBy   string
	UpdatedAt   time.Time
}

// OverrideKey is the row of tenant's override of prompt name.
func OverrideKey(tenant, name string) store.Key {
	return store.Key{PK: keyspace.TenantPK(tenant), SK: "PROMPT#" + name}
}

// OverrideItem encodes o as the row of tenant's override of prompt name.
func OverrideItem(tenant, name string, o Override) store.Item {
	k := OverrideKey(tenant, name)
	return store.Item{PK: k.PK, SK: k.SK, Version: 1, Attrs: map[string]any{
		"description": o.Description,
		"text":        o.Text,
		"updated_by":  o.UpdatedBy,
		"updated_at":  o.UpdatedAt.UTC().Format(time.RFC3339Nano),
	}}
}

func decodeOverride(it store.Item) Override {
	o := Override{Description: it.String("description"), Text: it.String("text"), UpdatedBy: it.String("updated_by")}
	if t, err := time.Parse(time.RFC3339Nano, it.String("updated_at")); err == nil {
		o.UpdatedAt = t
	}
	return o
}

// PutOverride stores tenant's override of an ordinary prompt, replacing any
// earlier one. It returns ErrUnknownPrompt, ErrLocked (a locked prompt
// cannot be overridden; its row would be ignored anyway), ErrInvalidOverride
// for a field over MaxOverrideDescription or MaxOverrideText bytes, or a
// wrapped store error.
func (r *Registry) PutOverride(ctx context.Context, tenant, name string, o Override) error {
	p, ok := r.prompts[name]
	switch {
	case !ok:
		return fmt.Errorf("override prompt %s: %w", name, ErrUnknownPrompt)
	case p.Locked:
		return fmt.Errorf("override prompt %s: %w", name, ErrLocked)
	case len(o.Description) > MaxOverrideDescription || len(o.Text) > MaxOverrideText ||
		!utf8.ValidString(o.Description) || !utf8.ValidString(o.Text):
		return fmt.Errorf("override prompt %s: %w", name, ErrInvalidOverride)
	}
	if err := r.opts.Store.Put(ctx, OverrideItem(tenant, name, o)); err != nil {
		return fmt.Errorf("override prompt %s: %w", name, err)
	}
	return nil
}

// DeleteOverride removes tenant's override of prompt name (none is fine).
func (r *Registry) DeleteOverride(ctx context.Context, tenant, name string) error {
	if err := r.opts.Store.Delete(ctx, OverrideKey(tenant, name)); err != nil {
		return fmt.Errorf("remove override of prompt %s: %w", name, err)
	}
	return nil
}

// override reads tenant's override of one prompt; found is false when none
// is stored (or no store is configured).
func (r *Registry) override(ctx context.Context, tenant, name string) (o Override, found bool, err error) {
	if r.opts.Store == nil {
		return Override{}, false, nil
	}
	it, err := r.opts.Store.Get(ctx, OverrideKey(tenant, name))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Override{}, false, nil
	case err != nil:
		return Override{}, false, fmt.Errorf("read override of prompt %s: %w", name, err)
	}
	return decodeOverride(it), true, nil
}

// overrides reads tenant's overrides of the ordinary prompts among names in
// one batch read (a page holds at most store.MaxBatchGetKeys prompts).
func (r *Registry) overrides(ctx context.Context, tenant string, names []string) (map[string]Override, error) {
	if r.opts.Store == nil {
		return nil, nil
	}
	var keys []store.Key
	var ordinary []string
	for _, n := range names {
		if !r.prompts[n].Locked {
			keys = append(keys, OverrideKey(tenant, n))
			ordinary = append(ordinary, n)
		}
	}
	out := map[string]Override{}
	for start := 0; start < len(keys); start += store.MaxBatchGetKeys {
		end := min(start+store.MaxBatchGetKeys, len(keys))
		items, err := r.opts.Store.BatchGet(ctx, keys[start:end])
		if err != nil {
			return nil, fmt.Errorf("read prompt overrides: %w", err)
		}
		for i, it := range items {
			if it != nil {
				out[ordinary[start+i]] = decodeOverride(*it)
			}
		}
	}
	return out, nil
}
