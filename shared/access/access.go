// Package access is the one funnel every caller-supplied matter id passes
// through (docs/architecture.md request path, step 7).
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
// Not found and not accessible are the same answer (docs/contracts.md §3,
// NOT_FOUND "also used for not accessible"): ErrNoMatter, returned bare, so
// its text and identity never say which rule refused — another tenant, a
// screen, an allow-list, a syntactically impossible id or a matter that does
// not exist. A store failure is not a refusal: it is returned wrapped
// (errors.Is(err, store.ErrUnavailable)) and maps to UNAVAILABLE.
//
// Closed matters stay reachable: closing a file does not hide its record.
// The tenant's kill switch (Tenant.Frozen) is checked earlier in the request
// path, not here.
//
// The funnel is also the one place that decides which items of a reached
// matter a credential sees (docs/architecture.md request path, step 8): a
// client-safe credential sees only privilege "none" (Who.Sees). For it a
// withheld item does not exist: Document and Fact answer ErrNoDocument and
// ErrNoFact for a privileged or work-product id exactly as for an absent
// one (docs/contracts.md §3: withheld and absent are one answer), and Documents
// leaves withheld documents out. Whether an id names a withheld item or
// nothing is therefore never told, by any read path that resolves ids
// here: tools, resources, completion and prompts.
package access

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
)

// ErrNoMatter is the one answer for a matter the caller cannot reach, for
// whatever reason, including that it does not exist. Its text names no case.
var ErrNoMatter = errors.New("no such matter")

// ErrNoDocument is the one answer for a document id of a reached matter
// that names no document the caller may see: absent, impossible, or
// withheld from a client-safe credential.
var ErrNoDocument = errors.New("no such document")

// ErrNoFact is the one answer for a fact id of a reached matter that names
// no fact the caller may see: absent, impossible, or withheld from a
// client-safe credential.
var ErrNoFact = errors.New("no such fact")

// Who is the caller as the funnel sees it: the credential's tenant, its
// owner principal, its matter allow-list and whether it is client-safe.
type Who struct {
	Tenant    string
	Principal string
	// AllowList restricts the credential to these matter ids. nil means
	// unrestricted; an empty non-nil slice means no matter at all.
	AllowList []string
	// ClientSafe is true for a credential of the client-safe class: it
	// sees only material of privilege "none".
	ClientSafe bool
}

// WhoOf is the caller a credential is: every read path builds its Who here,
// so no path forgets a rule.
func WhoOf(c *auth.Credential) Who {
	return Who{Tenant: c.Tenant, Principal: c.Owner, AllowList: c.AllowList, ClientSafe: c.ClientSafe()}
}

// Sees reports whether the caller may see material of privilege p: a
// client-safe credential sees only privilege "none" (docs/decisions.md); any
// other credential sees every privilege of a matter it reaches.
func (w Who) Sees(p records.Privilege) bool {
	return !w.ClientSafe || p == records.PrivilegeNone
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

// MatterWith is Matter for a write that reads its own rows with the
// matter: the rows at extra come in the same one batch read (records.Repo.
// MatterWith), aligned with extra, nil where absent; version is the matter
// row's. The funnel's rules and answers are Matter's; an id that cannot be
// valid, or is off the allow-list, costs no read at all (and returns no
// rows). The rows of a refused matter are not returned.
func (f Funnel) MatterWith(ctx context.Context, who Who, caseID string, extra []store.Key) (m records.Matter, version int64, rows []*store.Item, err error) {
	if !records.ValidID(caseID) || !records.ValidID(who.Tenant) || !allowed(who, caseID) {
		return records.Matter{}, 0, nil, ErrNoMatter
	}
	m, version, rows, err = f.repo.MatterWith(ctx, who.Tenant, caseID, extra)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return records.Matter{}, 0, nil, ErrNoMatter
	case err != nil:
		return records.Matter{}, 0, nil, fmt.Errorf("resolve matter: %w", err)
	case !Reaches(who, m):
		return records.Matter{}, 0, nil, ErrNoMatter
	}
	return m, version, rows, nil
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

// Document resolves one caller-supplied document id of m, a matter Matter or
// Matters returned for who, with at most one store read. It returns the
// document, ErrNoDocument (absent, an id records.ValidID refuses, or a
// document who may not see), ErrNoMatter when who does not reach m, or a
// wrapped store error.
func (f Funnel) Document(ctx context.Context, who Who, m records.Matter, id string) (records.Document, error) {
	if !Reaches(who, m) {
		return records.Document{}, ErrNoMatter
	}
	if !records.ValidID(id) {
		return records.Document{}, ErrNoDocument
	}
	d, err := f.repo.Document(ctx, who.Tenant, m.ID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return records.Document{}, ErrNoDocument
	case err != nil:
		return records.Document{}, fmt.Errorf("resolve document: %w", err)
	case !who.Sees(d.Privilege):
		return records.Document{}, ErrNoDocument
	}
	return d, nil
}

// Documents returns the documents of m (a matter Matter or Matters returned
// for who) that who may see, by id, from one query of the matter partition
// (paged by the store): withheld documents are left out. ErrNoMatter when
// who does not reach m; a store failure is returned wrapped.
func (f Funnel) Documents(ctx context.Context, who Who, m records.Matter) ([]records.Document, error) {
	if !Reaches(who, m) {
		return nil, ErrNoMatter
	}
	all, err := f.repo.Documents(ctx, who.Tenant, m.ID)
	if err != nil {
		return nil, fmt.Errorf("list documents: %w", err)
	}
	return Visible(who, all, func(d records.Document) records.Privilege { return d.Privilege }), nil
}

// Fact resolves one caller-supplied fact id of m, a matter Matter or
// Matters returned for who, with at most one store read. It returns the
// fact, ErrNoFact (absent, an id records.ValidID refuses, or a fact who may
// not see), ErrNoMatter when who does not reach m, or a wrapped store error.
func (f Funnel) Fact(ctx context.Context, who Who, m records.Matter, id string) (records.Fact, error) {
	if !Reaches(who, m) {
		return records.Fact{}, ErrNoMatter
	}
	if !records.ValidID(id) {
		return records.Fact{}, ErrNoFact
	}
	x, err := f.repo.Fact(ctx, who.Tenant, m.ID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return records.Fact{}, ErrNoFact
	case err != nil:
		return records.Fact{}, fmt.Errorf("resolve fact: %w", err)
	case !who.Sees(x.Privilege):
		return records.Fact{}, ErrNoFact
	}
	return x, nil
}

// Visible returns the items who may see (Who.Sees of each item's
// privilege), in order: for collections a caller already read from a
// reached matter. The input is returned as is when nothing is withheld from
// who.
func Visible[T any](who Who, items []T, privilege func(T) records.Privilege) []T {
	if !who.ClientSafe {
		return items
	}
	out := make([]T, 0, len(items))
	for _, it := range items {
		if who.Sees(privilege(it)) {
			out = append(out, it)
		}
	}
	return out
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

// MatterRow returns the key of the matter row Matter would read to resolve
// caseID for who, so that a caller can read it in a batch of its own (the
// upload lane reads it with the grant, a download with the document), and
// false when no read is needed because the id cannot be reached — invalid
// for records.ValidID, of an invalid tenant, or outside the allow-list:
// the answer is then ErrNoMatter.
func MatterRow(who Who, caseID string) (store.Key, bool) {
	if !records.ValidID(caseID) || !records.ValidID(who.Tenant) || !allowed(who, caseID) {
		return store.Key{}, false
	}
	return records.MatterKey(who.Tenant, caseID), true
}

// MatterFrom decides, as Matter does, whether who reaches caseID, from the
// matter row the caller read at MatterRow's key (nil: no such row). It
// returns the matter or ErrNoMatter; a row that does not decode is an error
// wrapping records.ErrCorrupt.
func MatterFrom(who Who, caseID string, row *store.Item) (records.Matter, error) {
	if _, ok := MatterRow(who, caseID); !ok || row == nil {
		return records.Matter{}, ErrNoMatter
	}
	var m records.Matter
	if err := records.DecodeRow(*row, &m); err != nil {
		return records.Matter{}, fmt.Errorf("resolve matter: %w", err)
	}
	if m.ID != caseID || !Reaches(who, m) {
		return records.Matter{}, ErrNoMatter
	}
	return m, nil
}
