package tools

// The decision: the one answer shape of a governed write (docs/contracts.md
// §4). A write tool (Spec.Write) answers a Decision on success, and every
// refusal of it — the pipeline's included, a VALIDATION or a RATE_LIMITED —
// is the denied decision, so an agent reads one shape whatever happened:
//
//	{"status":"executed","executed":true,"data":{…}}
//	{"status":"pending_approval","executed":false,"approval_id":"prp_…",…}
//	{"status":"denied","executed":false,"error":{"class":…,"message":…}}
//
// isError is true exactly when the status is denied.

// Decision statuses.
const (
	StatusExecuted        = "executed"
	StatusPendingApproval = "pending_approval"
	StatusDenied          = "denied"
)

// Decision is a governed write's answer. Exactly one of Data (executed),
// the PendingApproval fields (pending_approval) and Error (denied) is set.
type Decision struct {
	Status   string `json:"status"`
	Executed bool   `json:"executed"`
	// Data is the write's receipt, when executed. Its schema carries a
	// description so that it is an object, not the boolean schema true: MCP
	// declares outputSchema's properties objects, and the TypeScript SDK
	// refuses a tools/list that has another.
	Data any `json:"data,omitempty" jsonschema:"The write's receipt, when executed: the tool's own answer."`
	// PendingApproval carries a filed proposal's fields, when pending.
	*PendingApproval
	// Error is the refusal, when denied.
	Error *Refusal `json:"error,omitempty"`
}

// PendingApproval are the fields of a proposal that executes nothing until
// a person approves it (docs/contracts.md §4).
type PendingApproval struct {
	ApprovalID       string   `json:"approval_id"`
	Action           string   `json:"action"`
	CaseID           string   `json:"case_id"`
	WhatWillHappen   string   `json:"what_will_happen"`
	DeliverableNoun  string   `json:"deliverable_noun"`
	SupervisionFloor string   `json:"supervision_floor"`
	ConfirmRequired  bool     `json:"confirm_required"`
	BatchEligible    bool     `json:"batch_eligible"`
	CappedAt         string   `json:"capped_at"`
	OverrideAttempt  bool     `json:"override_attempted"`
	StrippedFields   []string `json:"stripped_fields"`
	ExpiresAt        string   `json:"expires_at"`
	ReviewURL        string   `json:"review_url"`
	NextStep         string   `json:"next_step"`
}

// Executed is the decision of a write carried out, with its receipt.
func Executed(data any) Decision {
	return Decision{Status: StatusExecuted, Executed: true, Data: data}
}

// Pending is the decision of a proposal filed for approval.
func Pending(p PendingApproval) Decision {
	return Decision{Status: StatusPendingApproval, PendingApproval: &p}
}

// Denied is the decision of a refused write.
func Denied(r *Refusal) Decision {
	return Decision{Status: StatusDenied, Error: r}
}
