// Package access is the one funnel every caller-supplied matter id passes
// through (ARCHITECTURE.md request path, step 7).
//
// A principal reaches a matter when all of these hold:
//
//   - the matter belongs to the credential's tenant (the tenant is part of
//     the key, so another tenant's matter is never even read);
//   - owner access: the matter's Team lists the credential's owner principal.
//     A role grants nothing by itself: a firm admin not on a team does not
//     reach the matter;
//   - no ethical wall: the owner is not in the matter's Screened list. A
//     screen wins over team membership;
//   - the credential's matter allow-list, when it has one, lists the matter.
//     A nil AllowList is unrestricted; an empty non-nil one reaches nothing.
//
// Not found and not accessible are the same answer (CONTRACTS.md §3,
// NOT_FOUND "also used for not accessible"): ErrNoMatter, returned bare, so
// its text and identity never say which rule refused — another tenant, a
// screen, an allow-list, a syntactically impossible id or a matter that does
// not exist. A store failure is not a refusal: it is returned wrapped
// (errors.Is(err, store.ErrUnavailable)) and maps to UNAVAILABLE.
//
// Closed matters stay reachable: closing a file does not hide its record.
// The tenant's kill switch (Tenant.Frozen) is checked earlier in the request
// path, not here.
package access

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
)

// ErrNoMatter is the one answer for a matter the caller cannot reach, for
// whatever reason, including that it does not exist. Its text names no case.
var ErrNoMatter = errors.New("no such matter")

// Who is the caller as the funnel sees it: the credential's tenant, its
// owner principal and its matter allow-list.
type Who struct {
	Tenant    string
	Principal string
	// AllowList restricts the credential to these matter ids. nil means
	// unrestricted; an empty non-nil slice means no matter at all.
	AllowList []string
}

// Funnel resolves matter ids for a caller. The zero value is not usable;
// build it with New.
type Funnel struct {
	repo *records.Repo
}

// New returns a Funnel reading matters through repo.
func New(repo *records.Repo) Funnel { return Funnel{repo: repo} }

// Matter resolves one caller-supplied case id with at most one store read
// (none when the id cannot be valid: records.ValidID, so a '#', a control
// character or more than records.MaxIDLen bytes is simply not found). It
// returns the matter, ErrNoMatter, or a wrapped store error.
func (f Funnel) Matter(ctx context.Context, who Who, caseID string) (records.Matter, error) {
	if !records.ValidID(caseID) || !records.ValidID(who.Tenant) || !allowed(who, caseID) {
		return records.Matter{}, ErrNoMatter
	}
	m, err := f.repo.Matter(ctx, who.Tenant, caseID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return records.Matter{}, ErrNoMatter
	case err != nil:
		return records.Matter{}, fmt.Errorf("resolve matter: %w", err)
	case !Reaches(who, m):
		return records.Matter{}, ErrNoMatter
	}
	return m, nil
}

// Matters returns every matter the caller reaches, sorted by id, from one
// query of the tenant partition (paged by the store). A store failure is
// returned wrapped; an empty result is a nil slice and a nil error.
func (f Funnel) Matters(ctx context.Context, who Who) ([]records.Matter, error) {
	if !records.ValidID(who.Tenant) || (who.AllowList != nil && len(who.AllowList) == 0) {
		return nil, nil
	}
	all, err := f.repo.Matters(ctx, who.Tenant)
	if err != nil {
		return nil, fmt.Errorf("list matters: %w", err)
	}
	var out []records.Matter
	for _, m := range all {
		if Reaches(who, m) {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b records.Matter) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Reaches reports whether who reaches m by the rules of the package doc.
// The caller must have read m from who's tenant (Repo reads by tenant, so
// a matter of another tenant cannot be passed in by mistake through
// Funnel). It is exported for listings that already hold the rows.
func Reaches(who Who, m records.Matter) bool {
	return who.Principal != "" &&
		slices.Contains(m.Team, who.Principal) &&
		!slices.Contains(m.Screened, who.Principal) &&
		allowed(who, m.ID)
}

func allowed(who Who, id string) bool {
	return who.AllowList == nil || slices.Contains(who.AllowList, id)
}
