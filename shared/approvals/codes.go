package approvals

import "github.com/custodymcp/custody/shared/proposals"

// Code is a decision code (docs/contracts.md §6): why a decision did not
// approve, on the page and as decision.code in list_my_proposals.
type Code string

// The decision codes.
const (
	CodeRequesterRevoked            Code = "REQUESTER_REVOKED"
	CodeRequesterAccessLost         Code = "REQUESTER_ACCESS_LOST"
	CodeRequesterResolutionFailed   Code = "REQUESTER_RESOLUTION_FAILED"
	CodeApprovalProvenanceMissing   Code = "APPROVAL_PROVENANCE_MISSING"
	CodeApprovalProvenanceInvalid   Code = "APPROVAL_PROVENANCE_INVALID"
	CodeDeciderNotEligible          Code = "DECIDER_NOT_ELIGIBLE"
	CodeIndependentApproverRequired Code = "INDEPENDENT_APPROVER_REQUIRED"
	CodeConfirmationRequired        Code = "CONFIRMATION_REQUIRED"
	CodeNonceInvalid                Code = "NONCE_INVALID"
	CodeNotBatchEligible            Code = "NOT_BATCH_ELIGIBLE"
	CodeProposalNotPending          Code = "PROPOSAL_NOT_PENDING"
	CodeProposalExpired             Code = "PROPOSAL_EXPIRED"
	CodeTargetChanged               Code = "TARGET_CHANGED"
	CodeActionUnavailable           Code = "ACTION_UNAVAILABLE"
	CodeKillSwitch                  Code = "KILL_SWITCH"
)

// Codes lists every decision code, in the contract's order.
func Codes() []Code {
	return []Code{CodeRequesterRevoked, CodeRequesterAccessLost, CodeRequesterResolutionFailed,
		CodeApprovalProvenanceMissing, CodeApprovalProvenanceInvalid, CodeDeciderNotEligible,
		CodeIndependentApproverRequired, CodeConfirmationRequired, CodeNonceInvalid, CodeNotBatchEligible,
		CodeProposalNotPending, CodeProposalExpired, CodeTargetChanged, CodeActionUnavailable, CodeKillSwitch}
}

// Effect is what a code does to its proposal (docs/contracts.md §6): the
// codes about the requester or the row itself end it denied (the pending
// counter −1), PROPOSAL_EXPIRED ends it expired, and every other code
// leaves it as it was — pending, for a decision that can still be made.
func (c Code) Effect() proposals.Status {
	switch c {
	case CodeRequesterRevoked, CodeRequesterAccessLost, CodeApprovalProvenanceMissing,
		CodeApprovalProvenanceInvalid, CodeActionUnavailable:
		return proposals.StatusDenied
	case CodeProposalExpired:
		return proposals.StatusExpired
	}
	return proposals.StatusPending
}

// Explain is the sentence the page shows for a code: what happened and
// what the person can do. It names no secret and no other matter.
func (c Code) Explain() string {
	switch c {
	case CodeRequesterRevoked:
		return "The key that proposed this was revoked or may no longer write, so it was denied. Nothing was done."
	case CodeRequesterAccessLost:
		return "The person whose key proposed this no longer reaches this matter (screened, off the team or outside the key's matters), so it was denied. Nothing was done."
	case CodeRequesterResolutionFailed:
		return "The key that proposed this could not be read just now. Nothing was done and the proposal still waits; try again shortly."
	case CodeApprovalProvenanceMissing:
		return "The proposal does not say who asked for it, so it can never be approved and was denied. Nothing was done."
	case CodeApprovalProvenanceInvalid:
		return "What the proposal says about who asked for it does not hold, so it was denied. Nothing was done."
	case CodeDeciderNotEligible:
		return "Only a licensed attorney on this matter's team who is not screened from it may approve it. Nothing was done."
	case CodeIndependentApproverRequired:
		return "This needs an attorney other than the owner of the key that proposed it. Nothing was done; another attorney on the matter must approve it."
	case CodeConfirmationRequired:
		return "This needs a second confirmation: open it and approve it on its own page. Nothing was done."
	case CodeNonceInvalid:
		return "That confirmation is no longer valid (used, expired, another person's, or the proposal changed since). Nothing was done; open the proposal and confirm again."
	case CodeNotBatchEligible:
		return "This cannot be approved in a selection of several: it must be decided on its own, or it is not one of yours to decide. Nothing was done."
	case CodeProposalNotPending:
		return "This proposal was already decided, or it is not one awaiting you. Nothing was done."
	case CodeProposalExpired:
		return "This proposal expired before it was decided. Nothing was done."
	case CodeTargetChanged:
		return "The record this proposal acts on changed since it was filed (or a row it names is gone or taken), so approving it now would do something else. Nothing was done; decline it and ask for a new proposal."
	case CodeActionUnavailable:
		return "This action cannot be carried out any more (it is no longer defined, or its effect is unknown), so it was denied. Nothing was done."
	case CodeKillSwitch:
		return "The firm has switched this off for now. Nothing was done and the proposal still waits."
	}
	return "Nothing was done."
}
