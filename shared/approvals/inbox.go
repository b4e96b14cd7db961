package approvals

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/custodymcp/custody/shared/records"
)

// Principal names a person of a tenant.
type Principal struct {
	Tenant string
	ID     string
}

// Inbox is where the inbox's two lists come from (docs/decisions.md
// "Approvers"). The page's own (a nil Config.Inbox) reads them from the
// proposal rows of shared/proposals; the page only shows what an Inbox
// returns and decides nothing from it: every decision re-reads the store.
type Inbox interface {
	// Decidable returns the pending proposals p may decide now: of matters
	// p reaches as a licensed attorney on the team and not screened, any
	// requester, computed server-side, oldest first. A non-approver gets
	// none.
	Decidable(ctx context.Context, p Principal) ([]Proposal, error)
	// Own returns the proposals filed through p's own credentials, any
	// status, newest first: what a non-approver may see (read-only) and
	// withdraw.
	Own(ctx context.Context, p Principal) ([]Proposal, error)
}

// Proposal is one proposal as the inbox shows it. Every field is text the
// page escapes; none is trusted as markup. The store-backed inbox
// (NewInbox) fills every field; a source that leaves the decision fields
// zero shows rows without any action.
type Proposal struct {
	ID string
	// CaseID and MatterName name the matter.
	CaseID     string
	MatterName string
	// Noun is the action's deliverable_noun, else the action's name.
	Noun   string
	Action string
	// WhatWillHappen is the proposal's stored what_will_happen, whole.
	WhatWillHappen string
	// Requester is the principal who owns the requesting credential;
	// RequesterName their name, when known.
	Requester     string
	RequesterName string
	// Reason is the agent's own reason: shown marked unverified.
	Reason    string
	Status    string
	CreatedAt time.Time
	ExpiresAt time.Time
	// OverrideAttempted and StrippedFields: the fields the agent planted
	// in its args and Custody removed (paths only, never values).
	OverrideAttempted bool
	StrippedFields    []string
	// Floor is the supervision floor, the firm's (never below the
	// registry's).
	Floor string
	// BatchEligible: it may be approved in a selection of several
	// (re-derived when the selection is submitted).
	BatchEligible bool
	// Exclusions are why it is individual-only, as sentences.
	Exclusions []string
	// CanApprove: the signed-in principal may approve it; NotApprovable
	// says why not when they may not (an approver's own independent act).
	CanApprove    bool
	NotApprovable string
	// CanDecline: the signed-in principal may decline it (an approver) or
	// withdraw it (its requester).
	CanDecline bool
	// AwaitingAttorney: pending, and the signed-in principal may not
	// approve it: it awaits a licensed attorney on the matter.
	AwaitingAttorney bool
	// Code is the decision code of a decided proposal ("" for an approval
	// or a withdrawal).
	Code string
}

// list is one of the inbox's lists as a page shows it: its rows, or that
// it could not be read (never an empty list in its place).
type list struct {
	Rows       []Proposal
	Unreadable bool
}

// load reads one list; a failure is logged and shown as unreadable.
func (p *Page) load(ctx context.Context, what string, f func(context.Context, Principal) ([]Proposal, error), who Principal) list {
	if f == nil {
		return list{}
	}
	rows, err := f(ctx, who)
	if err != nil {
		p.log.Warn("approvals: read the inbox", "list", what, "tenant", who.Tenant, "err", err)
		return list{Unreadable: true}
	}
	return list{Rows: rows}
}

// serveInbox is GET /approvals: the signed-in principal, what awaits their
// decision and what their own keys proposed.
func (p *Page) serveInbox(w http.ResponseWriter, r *http.Request) {
	s, who, err := p.session(r.Context(), r)
	switch {
	case errors.Is(err, errNoSession):
		p.toSignIn(w, r)
		return
	case err != nil:
		p.unavailable(w, "read the session", err)
		return
	}
	v := p.signedIn(s, who)
	v.Title = "Inbox · Custody approvals"
	if si, ok := p.inbox.(*storeInbox); ok {
		// The page's own inbox reads the set once for both lists.
		v.Decidable, v.Own, v.Approver = si.lists(r.Context(), s.Who(), who)
	} else {
		var decidable, own func(context.Context, Principal) ([]Proposal, error)
		if p.inbox != nil {
			decidable, own = p.inbox.Decidable, p.inbox.Own
		}
		v.Decidable = p.load(r.Context(), "decidable", decidable, s.Who())
		v.Own = p.load(r.Context(), "own", own, s.Who())
		v.Approver = true
	}
	p.render(w, http.StatusOK, "inbox.html", v)
}

// signedIn is the view of a page for a signed-in principal: who, and the
// tokens of the forms every page carries.
func (p *Page) signedIn(s *Session, who records.Principal) *view {
	pv := principalView(who)
	return &view{Session: &sessionView{Principal: pv, Tenant: s.Tenant, Method: s.Method, ExpiresAt: s.ExpiresAt,
		SignOutCSRF: s.CSRF(FormSignOut), ReviewCSRF: s.CSRF(FormReview), ConfirmCSRF: s.CSRF(FormConfirm),
		DecideCSRF: s.CSRF(FormDecide), DeclineCSRF: s.CSRF(FormDecline)}}
}
