package approvals

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/approvals/internal/executors"
	"github.com/custodymcp/custody/shared/approvals/ledger"
	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/auth/oauth"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
)

// Decided is a proposal the page is ending, as a DecisionHook sees it.
type Decided struct {
	Proposal *proposals.Proposal
	// Status is what it becomes: approved, declined, denied or expired.
	Status proposals.Status
	// Code is the decision code ("" for an approval or a decline).
	Code      Code
	DecidedBy Principal
	At        time.Time
}

// A DecisionHook adds writes to the one transaction that ends a proposal
// on the page — approved, declined, denied or expired — so what must move
// with the decision moves in it or not at all (the hand-off binding of
// issue 15 and its completion message). Its rows are read in the
// decision's one batch read.
type DecisionHook interface {
	// Keys names rows to read with the decision, from the proposal's inbox
	// row (a pointer: the hook checks what it reads against the proposal).
	Keys(s proposals.Summary) []store.Key
	// Ops returns the writes to add for d; rows are aligned with Keys (nil
	// where absent). An error fails the decision (nothing is written).
	Ops(d Decided, rows []*store.Item) ([]store.Op, error)
}

// verb is what a person asks of one proposal.
type verb int

const (
	// verbApprove approves (from the review form, the confirmation page or
	// a direct decide form).
	verbApprove verb = iota
	// verbConfirm is the confirmation page: every check of an approval,
	// then a nonce minted instead of the decision.
	verbConfirm
	// verbDecline declines (an approver) or withdraws (its requester).
	verbDecline
)

// ask is one decision asked for.
type ask struct {
	verb verb
	// batch: from the review form, so the proposal must be batch-eligible.
	batch bool
	// nonce is a confirmation nonce ("" none).
	nonce string
}

// Outcome is one proposal's decision.
type Outcome struct {
	ID     string
	CaseID string
	Noun   string
	// Status is the proposal's status after the decision: approved or
	// declined, denied or expired when a code ended it, pending when it was
	// left as it was. Empty when no proposal was found.
	Status proposals.Status
	// Code is why it was not approved (or declined) as asked; "" when it was.
	Code Code
	// Nonce is the nonce the confirmation page minted.
	Nonce string
	// Proposal is the proposal as read, for the confirmation page.
	Proposal *proposals.Proposal
	// Err is set when the store failed: nothing of the decision is known
	// to be written, and nothing is inferred from it.
	Err error
}

// Approved reports whether the proposal was approved by this decision.
func (o Outcome) Approved() bool {
	return o.Err == nil && o.Code == "" && o.Status == proposals.StatusApproved
}

// maxAttempts bounds how often a decision is tried again after its
// transaction lost a race (another decision on the same proposal, or on
// the same matter's ledger head): each lost race means another decision
// committed, so 32 covers a full matter's worth of concurrent approvals.
const maxAttempts = 32

// errContended: the decision lost its race maxAttempts times.
var errContended = fmt.Errorf("approvals: the matter's ledger stayed contended: %w", store.ErrUnavailable)

// decide decides one proposal of the set for the session's principal,
// trying again while its transaction loses races.
func (p *Page) decide(ctx context.Context, s *Session, set *reviewSet, id string, a ask) Outcome {
	row := set.byID[id]
	if row == nil {
		// No pending proposal awaits: decided already, or never one of the
		// set's. A confirmation carried with it that no longer holds says
		// so first (the second press of a confirmation's button).
		if a.nonce != "" && !p.nonceLive(ctx, set, a.nonce) {
			return Outcome{ID: id, Code: CodeNonceInvalid}
		}
		// What it was decided to, when it was one of the set's matters'
		// (unknown on a failed read: the refusal stands without it).
		out := Outcome{ID: id, Code: CodeProposalNotPending}
		if decided, err := p.probe(ctx, set, []string{id}); err == nil {
			out.Status = decided[id]
		}
		return out
	}
	for attempt := 1; ; attempt++ {
		out, retry := p.attempt(ctx, s, set, row, a)
		if !retry {
			return out
		}
		if attempt == maxAttempts {
			return Outcome{ID: id, CaseID: row.Matter.ID, Noun: row.Summary.DeliverableNoun, Err: errContended}
		}
		// Back off a random while, growing with the attempts, so racing
		// deciders do not meet again at once.
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(attempt)*int64(2*time.Millisecond)+1))
		select {
		case <-ctx.Done():
			return Outcome{ID: id, CaseID: row.Matter.ID, Err: ctx.Err()}
		case <-time.After(time.Duration(n.Int64())):
		}
	}
}

// nonceLive reports whether a nonce's row exists, unexpired, for the set's
// principal (a store failure counts as not live: it is only told apart
// from PROPOSAL_NOT_PENDING).
func (p *Page) nonceLive(ctx context.Context, set *reviewSet, nonce string) bool {
	if !wellFormed(nonce, NoncePrefix, nonceBytes) {
		return false
	}
	it, err := p.st.Get(ctx, nonceKey(nonce))
	return err == nil && it.String(attrTenant) == set.who.Tenant && it.String(attrDecider) == set.who.ID &&
		p.now().Before(time.UnixMilli(it.Int(attrExpires)))
}

// reads are the rows one attempt read, by key.
type reads map[store.Key]*store.Item

// read adds the rows at keys not read yet, in batch reads of at most 100.
func (r reads) read(ctx context.Context, st store.Store, keys []store.Key) error {
	var want []store.Key
	seen := map[store.Key]bool{}
	for _, k := range keys {
		if _, done := r[k]; !done && !seen[k] {
			seen[k] = true
			want = append(want, k)
		}
	}
	for start := 0; start < len(want); start += store.MaxBatchGetKeys {
		batch := want[start:min(start+store.MaxBatchGetKeys, len(want))]
		got, err := st.BatchGet(ctx, batch)
		if err != nil {
			return fmt.Errorf("read the decision's rows: %w", err)
		}
		for i, it := range got {
			r[batch[i]] = it
		}
	}
	return nil
}

// requesterKeys are the rows that re-admit a requester: their principal
// row and, for an API key, the credential row (by its key hash, a pointer)
// or, without a hash, the credential listing row that names it.
func requesterKeys(tenant string, ref auth.Reference, keyHash string) []store.Key {
	var keys []store.Key
	if keyspaceID(ref.Owner) {
		keys = append(keys, records.PrincipalKey(tenant, ref.Owner))
	}
	if ref.Type == auth.RefAPIKey {
		switch {
		case keyHash != "":
			keys = append(keys, auth.CredentialKey(keyHash))
		case keyspaceID(ref.CredentialID):
			keys = append(keys, auth.DirectoryKey(tenant, ref.CredentialID))
		}
	}
	return keys
}

// refKeys are the target's and the cited rows' keys.
func refKeys(tenant, matter string, target proposals.Target, cites []proposals.Ref) []store.Key {
	var keys []store.Key
	if k, err := targetKey(tenant, matter, target); err == nil {
		keys = append(keys, k)
	}
	for _, c := range cites {
		if k, err := proposals.RefKey(tenant, matter, c); err == nil {
			keys = append(keys, k)
		}
	}
	return keys
}

// attempt tries one decision once. retry is true when its transaction
// lost a race and the whole decision must be made again from a fresh read.
//
// Order of the checks (each answered with its code, docs/contracts.md §6):
// the tenant's kill switch; the nonce the form carries, if any; the
// proposal still pending; the decider (an
// approver, or for a decline also the requester); the expiry; for a
// selection, batch eligibility; requested_by present and sound; the action
// (registered, enabled, with an impact and an executor, its args
// decodable); an independent floor's decider other than the requester's
// owner; the requester re-admitted now (the credential, its write scope,
// its owner, the matter through the credential's own rules); the target
// unmoved; a confirmation where one is needed; the executor's own
// preconditions. Only then is
// anything written, in one transaction.
func (p *Page) attempt(ctx context.Context, s *Session, set *reviewSet, row *setRow, a ask) (Outcome, bool) {
	t, m, sum := set.who.Tenant, row.Matter.ID, row.Summary
	out := Outcome{ID: sum.ID, CaseID: m, Noun: noun(sum.DeliverableNoun, sum.Action), Status: proposals.StatusPending}
	pk := proposals.Key(t, m, sum.ID)
	keys := []store.Key{pk, records.MatterKey(t, m), records.TenantKey(t), records.PrincipalKey(t, set.who.ID),
		proposals.ConfigKey(t, sum.Action)}
	if a.verb == verbApprove {
		keys = append(keys, ledger.HeadKey(t, m))
	}
	// Predicted from the inbox row (a pointer): the requester's rows, the
	// target's and the cited ones'. What the proposal itself names is read
	// after it when the prediction missed.
	keys = append(keys, requesterKeys(t, auth.Reference{Type: refType(sum), Owner: sum.Requester, CredentialID: sum.CredentialID}, sum.CredentialKeyHash)...)
	keys = append(keys, refKeys(t, m, sum.Target, sum.Cites)...)
	if wellFormed(a.nonce, NoncePrefix, nonceBytes) {
		keys = append(keys, nonceKey(a.nonce))
	}
	var hookKeys [][]store.Key
	for _, h := range p.hooks {
		hk := h.Keys(sum)
		hookKeys = append(hookKeys, hk)
		keys = append(keys, hk...)
	}
	rs := reads{}
	if err := rs.read(ctx, p.st, keys); err != nil {
		out.Err = err
		return out, false
	}

	it := rs[pk]
	if it == nil {
		out.Status, out.Code = "", CodeProposalNotPending
		return out, false
	}
	prop, err := proposals.Decode(*it)
	if err != nil || prop.ID != sum.ID || prop.Tenant != t || prop.CaseID != m {
		// A row that cannot be read as its own key's proposal cannot be
		// ended either: it is refused and left alone.
		out.Code = CodeApprovalProvenanceInvalid
		return out, false
	}
	out.Proposal, out.Noun = prop, noun(prop.DeliverableNoun, prop.Action)
	ref := prop.RequestedBy.Ref
	// What the proposal itself names, read now if the inbox row did not
	// predict it.
	need := append(requesterKeys(t, ref, prop.CredentialKeyHash), refKeys(t, m, prop.Target, prop.Cites)...)
	if err := rs.read(ctx, p.st, need); err != nil {
		out.Err = err
		return out, false
	}
	now := p.now()
	end := func(status proposals.Status, code Code) (Outcome, bool) {
		return p.end(ctx, s, set, prop, status, code, hookKeys, rs, now, out)
	}
	refuse := func(code Code) (Outcome, bool) {
		p.auditRefusal(ctx, s, prop, code, now)
		out.Code = code
		return out, false
	}

	// The kill switch: a frozen tenant decides nothing.
	var tenant records.Tenant
	if tr := rs[records.TenantKey(t)]; p.frozen[t] || (tr != nil && records.DecodeRow(*tr, &tenant) == nil && tenant.Frozen) {
		return refuse(CodeKillSwitch)
	}
	// A confirmation the form carries must hold before anything else is
	// judged: a spent, expired or foreign nonce, or one minted before the
	// proposal or its target changed, confirms nothing.
	var nonceOp *store.Op
	if a.verb == verbApprove && a.nonce != "" {
		nr := rs[nonceKey(a.nonce)]
		if !wellFormed(a.nonce, NoncePrefix, nonceBytes) || !nonceHolds(nr, t, set.who.ID, prop, now) {
			return refuse(CodeNonceInvalid)
		}
		op := store.DeleteOp(nr.Key(), store.VersionEquals(nr.Version))
		nonceOp = &op
	}
	if prop.Status != proposals.StatusPending {
		out.Status, out.Code = prop.Status, CodeProposalNotPending
		return out, false
	}

	// The decider, re-read now: the matter row and their principal row.
	var matter, decider = records.Matter{}, records.Principal{}
	mr, dr := rs[records.MatterKey(t, m)], rs[records.PrincipalKey(t, set.who.ID)]
	if mr == nil || records.DecodeRow(*mr, &matter) != nil || dr == nil || records.DecodeRow(*dr, &decider) != nil {
		return refuse(CodeDeciderNotEligible)
	}
	reaches := access.Reaches(access.Who{Tenant: t, Principal: decider.ID}, matter)
	approver := reaches && isApprover(decider)
	switch {
	case a.verb == verbDecline && !approver && !(reaches && ref.Owner != "" && ref.Owner == decider.ID):
		return refuse(CodeDeciderNotEligible)
	case a.verb != verbDecline && !approver:
		return refuse(CodeDeciderNotEligible)
	}
	if !now.Before(prop.ExpiresAt) {
		return end(proposals.StatusExpired, CodeProposalExpired)
	}
	if a.verb == verbDecline {
		return end(proposals.StatusDeclined, "")
	}

	var target *store.Item
	if k, err := targetKey(t, m, prop.Target); err == nil {
		target = rs[k]
	}
	cfg := rs[proposals.ConfigKey(t, prop.Action)]
	if a.batch {
		el := Eligibility{Proposal: prop, Actions: p.actions, Config: cfg, Pending: set.pendingOf(m), Target: target}
		if !el.BatchEligible() {
			return refuse(CodeNotBatchEligible)
		}
	}

	// requested_by: present, and a sound reference of this tenant.
	if prop.RequestedBy.Kind == "" && ref.Type == "" && ref.Tenant == "" && ref.CredentialID == "" && ref.Owner == "" {
		return end(proposals.StatusDenied, CodeApprovalProvenanceMissing)
	}
	if prop.RequestedBy.Kind != "principal" || ref.Validate() != nil || ref.Tenant != t {
		return end(proposals.StatusDenied, CodeApprovalProvenanceInvalid)
	}

	// The action, from the live registry.
	action, ok := p.actions.Action(prop.Action)
	exec, hasExec := executors.For(prop.Action)
	if !ok || !hasExec || action.Impact == nil || prop.Impact == nil {
		return end(proposals.StatusDenied, CodeActionUnavailable)
	}
	eff := action.Effective(proposals.DecodeConfig(cfg))
	if !eff.Enabled {
		return refuse(CodeKillSwitch)
	}
	args, err := action.Decode(prop.Args)
	if err != nil {
		return end(proposals.StatusDenied, CodeActionUnavailable)
	}
	floor := prop.SupervisionFloor.Max(eff.Floor)
	if floor == proposals.FloorIndependent && ref.Owner == decider.ID {
		return refuse(CodeIndependentApproverRequired)
	}

	// The requester, re-admitted now: the intersection of rights is theirs
	// and the decider's, both as they stand.
	requester, code, err := p.readmit(ctx, rs, t, prop, matter, now)
	if err != nil {
		out.Err = err
		return out, false
	}
	switch {
	case code == CodeRequesterResolutionFailed:
		return refuse(code)
	case code != "":
		return end(code.Effect(), code)
	}

	if moved(prop, target) {
		return refuse(CodeTargetChanged)
	}

	// The confirmation: the nonce checked above, or none needed.
	if a.verb == verbApprove && nonceOp == nil && confirmRequired(prop, action, floor) {
		return refuse(CodeConfirmationRequired)
	}

	// The act itself, with the rows it names.
	res, err := exec.Execute(executors.Input{Proposal: prop, Args: args, Matter: matter, Decider: decider.ID,
		Requester: ref, Now: now, Rows: rs, Sees: requester.Sees})
	switch {
	case errors.Is(err, executors.ErrPrecondition):
		return refuse(CodeTargetChanged)
	case errors.Is(err, executors.ErrArgs):
		return end(proposals.StatusDenied, CodeActionUnavailable)
	case err != nil:
		out.Err = err
		return out, false
	}
	if a.verb == verbConfirm {
		// Everything an approval checks holds: mint the nonce the second
		// confirmation carries, and decide nothing yet.
		n, put := mintNonce(t, decider.ID, prop, now)
		rec := p.decisionAudit(s, prop, auditConfirm, audit.OutcomeOK, now)
		if err := p.st.Transact(ctx, []store.Op{put, rec}); err != nil {
			out.Err = fmt.Errorf("mint a confirmation: %w", err)
			return out, false
		}
		out.Nonce = n
		return out, false
	}
	head, err := ledger.DecodeHead(rs[ledger.HeadKey(t, m)])
	if err != nil {
		out.Err = err
		return out, false
	}
	ledgerOps, _, err := ledger.Append(head, ledger.Body{At: now, Tenant: t, CaseID: m, Proposal: prop.ID, Action: prop.Action,
		ArgsSHA256: argsDigest(prop), Requester: ledger.Requester{Type: ref.Type, CredentialID: ref.CredentialID, Owner: ref.Owner},
		ApprovedBy: decider.ID, Effects: res.Effects})
	if err != nil {
		out.Err = err
		return out, false
	}

	d := Decided{Proposal: prop, Status: proposals.StatusApproved, DecidedBy: set.who, At: now}
	ops := proposals.EndOps(prop, proposals.StatusApproved, &proposals.Decision{DecidedBy: decider.ID, DecidedAt: now}, now)
	nEnd := len(ops)
	nonceAt := -1
	if nonceOp != nil {
		nonceAt = len(ops)
		ops = append(ops, *nonceOp)
	}
	execFrom := len(ops)
	ops = append(ops, res.Ops...)
	execTo := len(ops)
	ops = append(ops, ledgerOps...)
	hookOps, err := p.hookOps(d, hookKeys, rs)
	if err != nil {
		out.Err = err
		return out, false
	}
	ops = append(ops, hookOps...)
	ops = append(ops, p.decisionAudit(s, prop, auditApprove, audit.OutcomeOK, now))
	err = p.st.Transact(ctx, ops)
	var tx *store.TxCanceledError
	switch {
	case err == nil:
		out.Status = proposals.StatusApproved
		return out, false
	case errors.As(err, &tx) && tx.Index == nonceAt:
		// Spent by a concurrent decision of the same person.
		return refuse(CodeNonceInvalid)
	case errors.As(err, &tx) && tx.Index >= execFrom && tx.Index < execTo:
		// The record moved under the act (the label was taken, the fact
		// changed) between the read and the commit.
		return refuse(CodeTargetChanged)
	case errors.As(err, &tx) && (tx.Index == proposals.OpProposal || tx.Index >= execTo):
		// Another decision of this proposal, or another approval on the
		// matter's ledger, committed first: decide again from a fresh read.
		return out, true
	case errors.As(err, &tx) && tx.Index < nEnd:
		// The requester's pointer is not where requested_by says.
		return end(proposals.StatusDenied, CodeApprovalProvenanceInvalid)
	}
	out.Err = fmt.Errorf("approve %s: %w", prop.ID, err)
	return out, false
}

// refType is the reference type an inbox row implies: an API key when it
// names a key hash or a credential id that is not OAuth's.
func refType(s proposals.Summary) string {
	if len(s.CredentialID) > len(oauth.IDPrefix) && s.CredentialID[:len(oauth.IDPrefix)] == oauth.IDPrefix {
		return auth.RefOAuth
	}
	return auth.RefAPIKey
}

func keyspaceID(s string) bool { return records.ValidID(s) }

// readmit re-admits the requester of prop now, gate-like (the gate's
// Readmit; shared/gate is out of this package's reach): an API key
// re-read by its credential row, an OAuth token rebuilt from the claims
// its reference recorded and honoured until its expiry, the owner's
// principal row, and the matter through the credential's own rules (team,
// screen, allow-list). It answers the requester as the funnel sees them,
// or the code that refuses them; err is a store failure.
func (p *Page) readmit(ctx context.Context, rs reads, tenant string, prop *proposals.Proposal, matter records.Matter, now time.Time) (access.Who, Code, error) {
	ref := prop.RequestedBy.Ref
	var cred *auth.Credential
	switch ref.Type {
	case auth.RefAPIKey:
		k := auth.CredentialKey(prop.CredentialKeyHash)
		if prop.CredentialKeyHash == "" {
			dir := rs[auth.DirectoryKey(tenant, ref.CredentialID)]
			if dir == nil {
				return access.Who{}, CodeRequesterRevoked, nil // the credential no longer exists
			}
			k = auth.CredentialKey(dir.String("key_hash"))
			if err := rs.read(ctx, p.st, []store.Key{k}); err != nil {
				return access.Who{}, "", err
			}
		}
		row := rs[k]
		if row == nil {
			return access.Who{}, CodeRequesterRevoked, nil
		}
		c, err := auth.DecodeCredential(*row)
		if err != nil {
			return access.Who{}, CodeRequesterResolutionFailed, nil
		}
		if c.ID != ref.CredentialID || c.Tenant != ref.Tenant || c.Owner != ref.Owner {
			return access.Who{}, CodeApprovalProvenanceInvalid, nil
		}
		if c.Revoked {
			return access.Who{}, CodeRequesterRevoked, nil
		}
		c.Scopes = auth.ClassScopes(c.Class, c.Scopes)
		cred = c
	case auth.RefOAuth:
		if id, _ := oauth.CredentialID(ref.Issuer, ref.Tenant, ref.Subject, ref.ClientID, ref.Class); id != ref.CredentialID {
			return access.Who{}, CodeApprovalProvenanceInvalid, nil
		}
		if !now.Before(ref.ExpiresAt) {
			// Custody cannot revoke a token, so it honours one no longer than
			// the token itself asked (auth.Reference).
			return access.Who{}, CodeRequesterRevoked, nil
		}
		cred = &auth.Credential{ID: ref.CredentialID, Tenant: ref.Tenant, Owner: ref.Owner, Class: ref.Class,
			Scopes: auth.ClassScopes(ref.Class, ref.Scopes)}
	default:
		return access.Who{}, CodeApprovalProvenanceInvalid, nil
	}
	if !cred.Has(auth.ScopeWrite) {
		return access.Who{}, CodeRequesterRevoked, nil
	}
	if rs[records.PrincipalKey(tenant, ref.Owner)] == nil {
		return access.Who{}, CodeRequesterAccessLost, nil // no longer at the firm
	}
	who := access.WhoOf(cred)
	if !access.Reaches(who, matter) {
		return access.Who{}, CodeRequesterAccessLost, nil
	}
	return who, "", nil
}

// end ends prop with status and code in one transaction: the proposal
// (pending, at the version read), its inbox row, its pointer (left out for
// a reference that cannot be trusted to name it), the counter −1, the
// hooks' writes and the audit row.
func (p *Page) end(ctx context.Context, s *Session, set *reviewSet, prop *proposals.Proposal, status proposals.Status, code Code,
	hookKeys [][]store.Key, rs reads, now time.Time, out Outcome) (Outcome, bool) {
	dec := &proposals.Decision{Code: string(code), DecidedBy: set.who.ID, DecidedAt: now}
	ops := proposals.EndOps(prop, status, dec, now)
	if code == CodeApprovalProvenanceMissing || code == CodeApprovalProvenanceInvalid {
		// The reference cannot be trusted to name the requester's pointer.
		ops = slices.Delete(ops, proposals.OpPointer, proposals.OpPointer+1)
	}
	hookOps, err := p.hookOps(Decided{Proposal: prop, Status: status, Code: code, DecidedBy: set.who, At: now}, hookKeys, rs)
	if err != nil {
		out.Err = err
		return out, false
	}
	ops = append(ops, hookOps...)
	method, outcome := auditDeny, string(code)
	switch status {
	case proposals.StatusDeclined:
		method, outcome = auditDecline, audit.OutcomeOK
	case proposals.StatusExpired:
		method = auditExpire
	}
	ops = append(ops, p.decisionAudit(s, prop, method, outcome, now))
	err = p.st.Transact(ctx, ops)
	var tx *store.TxCanceledError
	switch {
	case err == nil:
		out.Status, out.Code = status, code
		return out, false
	case errors.As(err, &tx) && tx.Index == proposals.OpProposal:
		return out, true // decided meanwhile: read it again
	case errors.As(err, &tx) && tx.Index == proposals.OpPointer && code != CodeApprovalProvenanceInvalid:
		return p.end(ctx, s, set, prop, proposals.StatusDenied, CodeApprovalProvenanceInvalid, hookKeys, rs, now, out)
	case errors.As(err, &tx):
		return out, true
	}
	out.Err = fmt.Errorf("end %s: %w", prop.ID, err)
	return out, false
}

// hookOps are the hooks' writes for d.
func (p *Page) hookOps(d Decided, hookKeys [][]store.Key, rs reads) ([]store.Op, error) {
	var ops []store.Op
	for i, h := range p.hooks {
		rows := make([]*store.Item, len(hookKeys[i]))
		for j, k := range hookKeys[i] {
			rows[j] = rs[k]
		}
		more, err := h.Ops(d, rows)
		if err != nil {
			return nil, fmt.Errorf("a decision hook: %w", err)
		}
		ops = append(ops, more...)
	}
	return ops, nil
}

// The audit methods of decisions.
const (
	auditApprove = "approvals/approve"
	auditConfirm = "approvals/confirm"
	auditDecline = "approvals/decline"
	auditDeny    = "approvals/deny"
	auditExpire  = "approvals/expire"
	auditRefuse  = "approvals/refuse"
)

// decisionAudit is the audit row of a decision: the decider, their
// session, the action as the tool, the matter, the outcome (ok or the
// code).
func (p *Page) decisionAudit(s *Session, prop *proposals.Proposal, method, outcome string, now time.Time) store.Op {
	rec := audit.Record{RequestID: "apr_" + rand.Text(), At: now.UTC(), Tenant: s.Tenant, Principal: s.Principal,
		CredentialID: s.ID, Method: method, Tool: prop.Action, Matter: prop.CaseID, Outcome: outcome,
		ExpiresAt: now.Add(p.retention)}
	return store.PutOp(rec.Item(), store.NotExists())
}

// auditRefusal records a decision refused with the row left as it was:
// one write of its own, logged and dropped if it fails (the refusal
// stands either way).
func (p *Page) auditRefusal(ctx context.Context, s *Session, prop *proposals.Proposal, code Code, now time.Time) {
	op := p.decisionAudit(s, prop, auditRefuse, string(code), now)
	if err := p.st.Put(ctx, op.Item, op.Conditions...); err != nil {
		p.log.Warn("approvals: audit a refused decision", "tenant", s.Tenant, "code", string(code), "err", err)
	}
}
