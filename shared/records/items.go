package records

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/store"
)

// The item builders validate a row, store its times in UTC and return the
// item to write: Version 1, payload in AttrData. Writers that need the row in
// their own transaction (a note beside its audit row) use them with
// store.PutOp; an update writes Version+1 under store.VersionEquals.

// TenantItem returns the item of a tenant row.
func TenantItem(t Tenant) (store.Item, error) {
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	if err := t.Validate(); err != nil {
		return store.Item{}, err
	}
	return newItem(TenantKey(t.ID), t)
}

// PrincipalItem returns the item of a principal row of tenant.
func PrincipalItem(tenant string, p Principal) (store.Item, error) {
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	if err := p.Validate(); err != nil {
		return store.Item{}, err
	}
	return newItem(PrincipalKey(tenant, p.ID), p)
}

// MatterItem returns the item of a matter row of tenant.
func MatterItem(tenant string, m Matter) (store.Item, error) {
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
	if err := m.Validate(); err != nil {
		return store.Item{}, err
	}
	return newItem(MatterKey(tenant, m.ID), m)
}

// DocumentItem returns the item of a document row of tenant.
func DocumentItem(tenant string, d Document) (store.Item, error) {
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	d.ChecksumVerifiedAt = utcPtr(d.ChecksumVerifiedAt)
	if err := d.Validate(); err != nil {
		return store.Item{}, err
	}
	return newItem(DocumentKey(tenant, d.Matter, d.ID), d)
}

// VersionItem returns the item of a document version row of tenant.
func VersionItem(tenant string, v Version) (store.Item, error) {
	v.CreatedAt, v.UpdatedAt = v.CreatedAt.UTC(), v.UpdatedAt.UTC()
	if err := v.Validate(); err != nil {
		return store.Item{}, err
	}
	return newItem(VersionKey(tenant, v.Matter, v.DocumentID, v.Number), v)
}

// ChunkItem returns the item of a chunk row of tenant; pageCount is the
// chunk's version's page count.
func ChunkItem(tenant string, c Chunk, pageCount int) (store.Item, error) {
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	if err := c.Validate(pageCount); err != nil {
		return store.Item{}, err
	}
	return newItem(ChunkKey(tenant, c.Matter, c.DocumentID, c.Version, c.Seq), c)
}

// FactItem returns the item of a fact row of tenant.
func FactItem(tenant string, f Fact) (store.Item, error) {
	f.CreatedAt, f.UpdatedAt = f.CreatedAt.UTC(), f.UpdatedAt.UTC()
	if f.ModelProposal != nil {
		mp := *f.ModelProposal
		mp.ProposedAt = mp.ProposedAt.UTC()
		f.ModelProposal = &mp
	}
	f.Checks = utcChecks(f.Checks)
	if err := f.Validate(); err != nil {
		return store.Item{}, err
	}
	return newItem(FactKey(tenant, f.Matter, f.ID), f)
}

// DeadlineItem returns the item of a deadline row of tenant.
func DeadlineItem(tenant string, d Deadline) (store.Item, error) {
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	if d.DocketingCheck != nil {
		c := *d.DocketingCheck
		c.CheckedAt = c.CheckedAt.UTC()
		d.DocketingCheck = &c
	}
	if err := d.Validate(); err != nil {
		return store.Item{}, err
	}
	return newItem(DeadlineKey(tenant, d.Matter, d.Due, d.ID), d)
}

// NoteItem returns the item of a note row of tenant.
func NoteItem(tenant string, n Note) (store.Item, error) {
	n.CreatedAt, n.UpdatedAt = n.CreatedAt.UTC(), n.UpdatedAt.UTC()
	if err := n.Validate(); err != nil {
		return store.Item{}, err
	}
	return newItem(NoteKey(tenant, n.Matter, n.CreatedAt, n.ID), n)
}

// ExhibitItem returns the item of an exhibit row of tenant.
func ExhibitItem(tenant string, e Exhibit) (store.Item, error) {
	e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	if err := e.Validate(); err != nil {
		return store.Item{}, err
	}
	return newItem(ExhibitKey(tenant, e.Matter, e.Label), e)
}

func newItem(k store.Key, payload any) (store.Item, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return store.Item{}, fmt.Errorf("encode %s: %w", k, err)
	}
	it := store.Item{PK: k.PK, SK: k.SK, Version: 1, Attrs: map[string]any{AttrData: b}}
	if err := store.ValidateItem(it); err != nil {
		return store.Item{}, fmt.Errorf("row %s: %w", k, err)
	}
	return it, nil
}

// decode reads an item's payload into v.
func decode(it store.Item, v any) error {
	b := it.Bytes(AttrData)
	if b == nil {
		return fmt.Errorf("row %s has no %s: %w", it.Key(), AttrData, ErrCorrupt)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("row %s: %v: %w", it.Key(), err, ErrCorrupt)
	}
	return nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func utcChecks(cs []Check) []Check {
	if cs == nil {
		return nil
	}
	out := make([]Check, len(cs))
	for i, c := range cs {
		c.CheckedAt = c.CheckedAt.UTC()
		out[i] = c
	}
	return out
}

// DecodeRow decodes a record row read by key (a tenant, principal or
// matter row fetched in another package's batch read) into v. A row without
// data, or data that is not v's shape, is ErrCorrupt.
func DecodeRow(it store.Item, v any) error { return decode(it, v) }
