package records

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/custodymcp/custody/shared/store"
)

// ErrUnknownPrincipal: a screen names a principal the tenant does not have.
var ErrUnknownPrincipal = errors.New("records: unknown principal")

// CreateTenant writes a new tenant row (id and name, created and updated at
// now) under a NotExists condition. An existing tenant is store.ErrExists
// (wrapped) and left as it is; an invalid id is ErrInvalid.
func CreateTenant(ctx context.Context, s store.Store, id, name string, now time.Time) (Tenant, error) {
	now = now.UTC()
	t := Tenant{ID: id, Name: name, CreatedAt: now, UpdatedAt: now}
	it, err := TenantItem(t)
	if err != nil {
		return Tenant{}, fmt.Errorf("create tenant: %w", err)
	}
	if err := s.Put(ctx, it, store.NotExists()); err != nil {
		return Tenant{}, fmt.Errorf("create tenant %s: %w", id, err)
	}
	return t, nil
}

// maxScreenAttempts bounds Screen's optimistic-concurrency retries.
const maxScreenAttempts = 8

// Screen puts principal behind the ethical wall of a matter (screened true)
// or takes it out (false): it reads the matter row and writes it back with
// Screened changed and Version+1, under VersionEquals of the version read,
// so a concurrent change of the row is never overwritten (it re-reads and
// retries, up to 8 times, then store.ErrConflict). The funnel refuses a
// screened principal on its next call (package access). reason, when
// non-empty, replaces the matter's ScreenReason on a screen; taking the
// last principal out clears it.
//
// updated_at is left as it was: a screen decides who reaches the matter,
// it is not record data, so it must not move the as_of of reads (as_of is
// when the data was true, docs/contracts.md §1).
//
// Screening a principal the tenant does not have is ErrUnknownPrincipal: a
// typo must not leave the wall down while the operator believes it up.
// Taking out a principal is allowed whether or not the principal still
// exists. An absent matter is store.ErrNotFound (wrapped). changed is false
// when the row already said so (nothing written).
func Screen(ctx context.Context, s store.Store, tenant, matter, principal string, screened bool, reason string) (Matter, bool, error) {
	if !ValidID(tenant) || !ValidID(matter) || !ValidID(principal) {
		return Matter{}, false, fmt.Errorf("screen: tenant, matter and principal ids: %w", ErrInvalid)
	}
	if screened {
		switch _, err := s.Get(ctx, PrincipalKey(tenant, principal)); {
		case errors.Is(err, store.ErrNotFound):
			return Matter{}, false, fmt.Errorf("screen %s from %s: %w", principal, matter, ErrUnknownPrincipal)
		case err != nil:
			return Matter{}, false, fmt.Errorf("screen %s from %s: read principal: %w", principal, matter, err)
		}
	}
	key := MatterKey(tenant, matter)
	for range maxScreenAttempts {
		it, err := s.Get(ctx, key)
		if err != nil {
			return Matter{}, false, fmt.Errorf("screen on %s: %w", matter, err)
		}
		var m Matter // fresh on every attempt: decoding skips absent fields
		if err := decode(it, &m); err != nil {
			return Matter{}, false, err
		}
		if slices.Contains(m.Screened, principal) == screened && (!screened || reason == "" || reason == m.ScreenReason) {
			return m, false, nil
		}
		if screened {
			if !slices.Contains(m.Screened, principal) {
				m.Screened = append(m.Screened, principal)
				slices.Sort(m.Screened)
			}
			if reason != "" {
				m.ScreenReason = reason
			}
		} else {
			m.Screened = slices.DeleteFunc(m.Screened, func(p string) bool { return p == principal })
			if len(m.Screened) == 0 {
				m.Screened, m.ScreenReason = nil, ""
			}
		}
		row, err := MatterItem(tenant, m)
		if err != nil {
			return Matter{}, false, fmt.Errorf("screen on %s: %w", matter, err)
		}
		row.Version = it.Version + 1
		err = s.Put(ctx, row, store.VersionEquals(it.Version))
		if errors.Is(err, store.ErrConflict) {
			continue // changed under us: read it again
		}
		if err != nil {
			return Matter{}, false, fmt.Errorf("screen on %s: %w", matter, err)
		}
		return m, true, nil
	}
	return Matter{}, false, fmt.Errorf("screen on %s: the matter row kept changing (%d attempts): %w",
		matter, maxScreenAttempts, store.ErrConflict)
}
