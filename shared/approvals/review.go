package approvals

import (
	"errors"
	"net/http"
	"strings"

	"github.com/custodymcp/custody/shared/proposals"
)

// MaxSelection bounds how many proposals one review form may name: the
// pending cap of four matters' worth (docs/decisions.md "Time and size
// constants": 25 per matter). A longer selection is refused whole.
const MaxSelection = 100

// The verbs of a proposal's own pages (pathProposal + <id> + "/" + verb).
const (
	routeDetail  = ""
	routeConfirm = "confirm"
	routeDecide  = "decide"
	routeDecline = "decline"
)

// proposalRoute parses "<id>" or "<id>/<verb>" below pathProposal: the id
// must be shaped as a proposal id (prp_ + 32 hex), so nothing else costs a
// store read.
func proposalRoute(rest string) (id, verb string, ok bool) {
	id, verb, _ = strings.Cut(rest, "/")
	if !wellFormed(id, "prp_", 16) {
		return "", "", false
	}
	switch verb {
	case routeDetail, routeConfirm, routeDecide, routeDecline:
		return id, verb, true
	}
	return "", "", false
}

// proposalRoutes are the methods of one proposal's page.
func (p *Page) proposalRoutes(id, verb string) map[string]http.HandlerFunc {
	switch verb {
	case routeDetail:
		return map[string]http.HandlerFunc{http.MethodGet: func(w http.ResponseWriter, r *http.Request) { p.serveProposal(w, r, id) }}
	case routeConfirm:
		return map[string]http.HandlerFunc{http.MethodPost: func(w http.ResponseWriter, r *http.Request) {
			p.postProposal(w, r, id, FormConfirm, ask{verb: verbConfirm})
		}}
	case routeDecide:
		return map[string]http.HandlerFunc{http.MethodPost: func(w http.ResponseWriter, r *http.Request) {
			p.postProposal(w, r, id, FormDecide, ask{verb: verbApprove})
		}}
	case routeDecline:
		return map[string]http.HandlerFunc{http.MethodPost: func(w http.ResponseWriter, r *http.Request) {
			p.postProposal(w, r, id, FormDecline, ask{verb: verbDecline})
		}}
	}
	return nil
}

// postReview is the review page's selection: POST /approvals/review {csrf,
// ids[]}. It reads nothing else of the form (a planted nonce or confirm
// field is never looked at), reloads the decider's set from the store,
// and decides each selected id on its own, in order: an id outside the set
// (another matter's, another tenant's, or nothing) is NOT_BATCH_ELIGIBLE
// — or PROPOSAL_NOT_PENDING when it is one of the set's matters' and was
// decided meanwhile — and each of the others is approved only if it is
// batch-eligible now, with everything an approval re-reads. The answer
// names one outcome per id; it is "all approved" or it is not, never a
// count.
func (p *Page) postReview(w http.ResponseWriter, r *http.Request) {
	s, who := p.sessionForm(w, r, FormReview)
	if s == nil {
		return
	}
	var ids []string
	seen := map[string]bool{}
	for _, id := range r.PostForm["ids"] {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	v := p.signedIn(s, who)
	v.Title, v.Asked = "Decisions · Custody approvals", "approve the selected proposals"
	switch {
	case len(ids) == 0:
		p.render(w, http.StatusBadRequest, "message.html", &view{Session: v.Session, Heading: "Nothing was selected",
			Text: "Select each proposal you approve, one by one, then approve the selection. Nothing was done."})
		return
	case len(ids) > MaxSelection:
		p.render(w, http.StatusBadRequest, "message.html", &view{Session: v.Session, Heading: "Too many at once",
			Text: "Select at most 100 proposals at a time. Nothing was done."})
		return
	}
	set, err := p.loadSet(r.Context(), s.Who(), who)
	if err != nil {
		p.unavailable(w, "read the review set", err)
		return
	}
	var missing []string
	for _, id := range ids {
		if set.byID[id] == nil {
			missing = append(missing, id)
		}
	}
	decided := map[string]proposals.Status{}
	if len(missing) > 0 {
		if decided, err = p.probe(r.Context(), set, missing); err != nil {
			p.unavailable(w, "look for decided proposals", err)
			return
		}
	}
	v.OK = true
	for _, id := range ids {
		var out Outcome
		switch {
		case set.byID[id] != nil:
			out = p.decide(r.Context(), s, set, id, ask{verb: verbApprove, batch: true})
		case decided[id] != "":
			out = Outcome{ID: id, Status: decided[id], Code: CodeProposalNotPending}
		default:
			out = Outcome{ID: id, Code: CodeNotBatchEligible}
		}
		v.OK = v.OK && out.Approved()
		v.Results = append(v.Results, p.result(out))
	}
	p.render(w, http.StatusOK, "results.html", v)
}

// postProposal is one proposal's decision form: confirm (mint the second
// confirmation), decide (approve, with the nonce when one is needed) or
// decline. The id is the path's; the set is reloaded; everything else is
// re-read from the store.
func (p *Page) postProposal(w http.ResponseWriter, r *http.Request, id, form string, a ask) {
	s, who := p.sessionForm(w, r, form)
	if s == nil {
		return
	}
	if a.verb == verbApprove {
		// The nonce is read from the form only to find its row: the row,
		// not the form, says what it confirms.
		a.nonce = r.PostForm.Get("nonce")
	}
	set, err := p.loadSet(r.Context(), s.Who(), who)
	if err != nil {
		p.unavailable(w, "read the review set", err)
		return
	}
	out := p.decide(r.Context(), s, set, id, a)
	if a.verb == verbConfirm && out.Nonce != "" {
		v := p.signedIn(s, who)
		detail, err := p.detail(r, set, id)
		if err != nil {
			p.unavailable(w, "read a proposal", err)
			return
		}
		v.Title, v.Detail, v.Nonce, v.NonceExpires = "Confirm · Custody approvals", detail, out.Nonce, p.now().Add(NonceTTL)
		p.render(w, http.StatusOK, "proposal.html", v)
		return
	}
	v := p.signedIn(s, who)
	v.Title = "Decision · Custody approvals"
	switch a.verb {
	case verbDecline:
		v.Asked = "decline this proposal"
		v.OK = out.Err == nil && out.Code == "" && out.Status == proposals.StatusDeclined
	default:
		v.Asked = "approve this proposal"
		v.OK = out.Approved()
	}
	v.Results = []resultView{p.result(out)}
	p.render(w, http.StatusOK, "results.html", v)
}

// serveProposal is GET /approvals/p/<id>: one pending proposal of the set
// with its own actions. An id outside the set is 404, whatever it names.
func (p *Page) serveProposal(w http.ResponseWriter, r *http.Request, id string) {
	s, who, err := p.session(r.Context(), r)
	switch {
	case errors.Is(err, errNoSession):
		p.toSignIn(w, r)
		return
	case err != nil:
		p.unavailable(w, "read the session", err)
		return
	}
	set, err := p.loadSet(r.Context(), s.Who(), who)
	if err != nil {
		p.unavailable(w, "read the review set", err)
		return
	}
	detail, err := p.detail(r, set, id)
	if err != nil {
		p.unavailable(w, "read a proposal", err)
		return
	}
	if detail == nil {
		p.message(w, http.StatusNotFound, "No such proposal awaits you",
			"It was decided already, it is not on a matter you reach, or it never existed.")
		return
	}
	v := p.signedIn(s, who)
	v.Title, v.Detail = detail.Noun+" · Custody approvals", detail
	p.render(w, http.StatusOK, "proposal.html", v)
}

// detail is one set row as a proposal page shows it (nil: not in the set,
// or gone).
func (p *Page) detail(r *http.Request, set *reviewSet, id string) (*Proposal, error) {
	row := set.byID[id]
	if row == nil {
		return nil, nil
	}
	d, err := p.details(r.Context(), set, []*setRow{row})
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	if pr, err := p.repo.Principal(r.Context(), set.who.Tenant, row.Summary.Requester); err == nil {
		names[pr.ID] = pr.Name
	}
	v, ok := d.view(p, set, row, names, p.now())
	if !ok {
		return nil, nil
	}
	return &v, nil
}

// result is an outcome as a results page shows it.
func (p *Page) result(out Outcome) resultView {
	v := resultView{ID: out.ID, CaseID: out.CaseID, Noun: out.Noun, Status: string(out.Status), Code: string(out.Code)}
	switch {
	case out.Err != nil:
		p.log.Warn("approvals: a decision failed", "proposal", out.ID, "err", out.Err)
		v.Status, v.Code = "", ""
		v.Text = "This could not be decided just now: the record could not be reached. Nothing is known to have changed; reload the approval page and try again."
	case out.Code != "":
		v.Text = out.Code.Explain()
	case out.Status == proposals.StatusApproved:
		v.Text = "Approved: carried out and recorded in the matter's decision ledger."
		if out.Proposal != nil && out.Proposal.Impact != nil && out.Proposal.Impact.ExternalEffectClass == proposals.EffectExternal {
			v.Text = "Approved: recorded in the firm's outbox for its own systems to carry out, and in the matter's decision ledger. Custody does not carry it out."
		}
	case out.Status == proposals.StatusDeclined:
		v.Text = "Declined. Nothing was done."
	}
	return v
}
