package approvals

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/store"
)

// Confirmation nonces (docs/contracts.md §6): cnf_ + 32 hex, minted by the
// confirmation page for one decider and one proposal as it stood, stored
// only as its SHA-256 (NONCE#<sha256> / NONCE), spent by the decision's
// own transaction, valid NonceTTL.
const (
	NoncePrefix = "cnf_"
	nonceBytes  = 16
	// NonceTTL is how long a confirmation stays valid.
	NonceTTL = 5 * time.Minute
)

func nonceKey(nonce string) store.Key { return store.Key{PK: "NONCE#" + digest(nonce), SK: "NONCE"} }

// Attributes of a nonce row: what it is bound to (besides attrTenant and
// attrExpires).
const (
	attrProposal      = "proposal"
	attrAction        = "action"
	attrCase          = "case_id"
	attrDecider       = "decider"
	attrArgsDigest    = "args_sha256"
	attrTargetVersion = "target_version"
)

// argsDigest is the lowercase hex SHA-256 of a proposal's stored args: what
// a nonce binds and the ledger records as executed. An edit of the stored
// args changes it.
func argsDigest(p *proposals.Proposal) string {
	sum := sha256.Sum256(p.Args)
	return hex.EncodeToString(sum[:])
}

// mintNonce returns a fresh nonce bound to the decider and the proposal as
// read (its action, matter, args and target version), and the put of its
// row (NotExists), valid until now + NonceTTL.
func mintNonce(tenant, decider string, p *proposals.Proposal, now time.Time) (string, store.Op) {
	n := newSecret(NoncePrefix, nonceBytes)
	k := nonceKey(n)
	exp := now.Add(NonceTTL)
	return n, store.PutOp(store.Item{PK: k.PK, SK: k.SK, Version: 1, ExpiresAt: ceilUnix(exp), Attrs: map[string]any{
		attrTenant: tenant, attrDecider: decider, attrProposal: p.ID, attrAction: p.Action, attrCase: p.CaseID,
		attrArgsDigest: argsDigest(p), attrTargetVersion: p.Target.Version, attrExpires: exp.UnixMilli(),
	}}, store.NotExists())
}

// nonceHolds reports whether a nonce row (nil: none) is valid at now for
// this decider and this proposal as it stands: unexpired, and every bound
// field equal to what the store says now.
func nonceHolds(row *store.Item, tenant, decider string, p *proposals.Proposal, now time.Time) bool {
	return row != nil && now.Before(time.UnixMilli(row.Int(attrExpires))) &&
		row.String(attrTenant) == tenant && row.String(attrDecider) == decider &&
		row.String(attrProposal) == p.ID && row.String(attrAction) == p.Action && row.String(attrCase) == p.CaseID &&
		row.String(attrArgsDigest) == argsDigest(p) && row.Int(attrTargetVersion) == p.Target.Version
}
