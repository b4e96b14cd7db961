package approvals

import (
	"crypto/rand"
	"errors"
	"net/http"
	"strings"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/handoff"
	"github.com/custodymcp/custody/shared/store"
)

// pathHandoff starts a hand-off's link: /approvals/h/<elicitation id>
// (issue 15; package handoff).
const pathHandoff = PathPrefix + "/h/"

// auditHandoff is the audit method of a refused hand-off link.
const auditHandoff = "approvals/handoff"

// handoffView is what the hand-off page shows: the bound proposal first
// (nil once it is decided or out of reach), then the owner's other pending
// proposals.
type handoffView struct {
	Bound  *Proposal
	Others []Proposal
}

// serveHandoff is GET /approvals/h/<id>, the link of a URL-mode hand-off
// (docs/decisions.md "The hand-off"). Without a session it sends the
// browser to sign in, carrying only the path (the opaque id). Signed in,
// the binding row alone is read and its owner and tenant compared with the
// session's before any proposal row is: another principal, another
// tenant, an unknown, declined, cancelled or expired hand-off all get one
// generic 403, audited, and the binding is left as it was. The owner gets
// a review set anchored on the bound proposal: it first, then up to 24
// other pending proposals filed through their credentials, each from the
// set the page computes for them (the matters they reach, the approver
// rules), never from the URL. Deciding uses the page's ordinary forms; the
// link pre-authorizes nothing.
func (p *Page) serveHandoff(w http.ResponseWriter, r *http.Request, id string) {
	s, who, err := p.session(r.Context(), r)
	switch {
	case errors.Is(err, errNoSession):
		p.toSignIn(w, r)
		return
	case err != nil:
		p.unavailable(w, "read the session", err)
		return
	}
	var b *handoff.Binding
	it, err := p.st.Get(r.Context(), handoff.Key(id))
	switch {
	case err == nil:
		b = handoff.Decode(id, it)
	case !errors.Is(err, store.ErrNotFound):
		p.unavailable(w, "read a hand-off", err)
		return
	}
	now := p.now()
	if !b.OpenableBy(s.Tenant, s.Principal, now) {
		rec := audit.Record{RequestID: "apr_" + rand.Text(), At: now.UTC(), Tenant: s.Tenant, Principal: s.Principal,
			CredentialID: s.ID, Method: auditHandoff, Outcome: "http:403", ExpiresAt: now.Add(p.retention)}
		if err := p.st.Put(r.Context(), rec.Item(), store.NotExists()); err != nil {
			p.log.Warn("approvals: audit a refused hand-off link", "tenant", s.Tenant, "err", err)
		}
		p.message(w, http.StatusForbidden, "This link cannot be opened",
			"This link does not open for you: it may belong to someone else, it may have been declined, or it may have expired. Nothing was changed. Your own proposals are on the approval page.")
		return
	}
	set, err := p.loadSet(r.Context(), s.Who(), who)
	if err != nil {
		p.unavailable(w, "read the review set", err)
		return
	}
	var shown []*setRow
	if row := set.byID[b.ApprovalID]; row != nil && row.Summary.Requester == b.Owner {
		shown = append(shown, row)
	}
	for _, row := range set.rows {
		if len(shown) == handoff.MaxReviewSet {
			break
		}
		if row.Summary.ID != b.ApprovalID && row.Summary.Requester == b.Owner {
			shown = append(shown, row)
		}
	}
	d, err := p.details(r.Context(), set, shown)
	if err != nil {
		p.unavailable(w, "read the listed proposals", err)
		return
	}
	names := map[string]string{who.ID: who.Name}
	hv := &handoffView{Others: []Proposal{}}
	for _, row := range shown {
		v, ok := d.view(p, set, row, names, now)
		if !ok {
			continue
		}
		if row.Summary.ID == b.ApprovalID {
			hv.Bound = &v
			continue
		}
		hv.Others = append(hv.Others, v)
	}
	v := p.signedIn(s, who)
	v.Title, v.Handoff, v.Approver = "Your agent's proposal · Custody approvals", hv, set.approver
	p.render(w, http.StatusOK, "handoff.html", v)
}

// handoffRoute parses the id below pathHandoff: shaped as an elicitation
// id, so nothing else costs a store read.
func handoffRoute(rest string) (string, bool) {
	if strings.Contains(rest, "/") || !handoff.ValidID(rest) {
		return "", false
	}
	return rest, true
}
