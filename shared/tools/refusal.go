package tools

import "github.com/custodymcp/custody/shared/mcp"

// Refusal classes (docs/contracts.md §3).
const (
	ClassValidation        = "VALIDATION"
	ClassNotFound          = "NOT_FOUND"
	ClassClientSafeRefused = "CLIENT_SAFE_REFUSED"
	ClassRateLimited       = "RATE_LIMITED"
	ClassBackpressure      = "BACKPRESSURE"
	ClassKillSwitch        = "KILL_SWITCH"
	ClassAutonomyDenied    = "AUTONOMY_DENIED"
	ClassNotProvisioned    = "NOT_PROVISIONED"
	ClassScannerUnavail    = "SCANNER_UNAVAILABLE"
	ClassGrantInvalid      = "GRANT_INVALID"
	ClassConflict          = "CONFLICT"
	ClassUnavailable       = "UNAVAILABLE"
	ClassInternal          = "INTERNAL"
)

// Refusal is a tool refusal: a CallToolResult with isError true, one plain
// sentence a model can act on, and structuredContent {"error": Refusal}
// (docs/contracts.md §3). Messages never carry SQL, table or bucket names, paths,
// stack traces, or the offending argument's value. A handler returns one as
// its error.
type Refusal struct {
	Class   string `json:"class"`
	Message string `json:"message"`
	// Field names the offending argument by its path (VALIDATION).
	Field string `json:"field,omitempty"`
	// Limit and RetryAfterS accompany RATE_LIMITED.
	Limit       int `json:"limit,omitempty"`
	RetryAfterS int `json:"retry_after_s,omitempty"`
	// Spent says whether a grant was spent (GRANT_INVALID and the upload lane).
	Spent *bool `json:"spent,omitempty"`

	protocol *mcp.Error // a protocol error to answer instead (classProtocol)
}

func (r *Refusal) Error() string { return r.Class + ": " + r.Message }

// Refuse returns a refusal of class with message.
func Refuse(class, message string) *Refusal { return &Refusal{Class: class, Message: message} }

// Invalid returns a VALIDATION refusal naming field.
func Invalid(field, message string) *Refusal {
	return &Refusal{Class: ClassValidation, Message: message, Field: field}
}

// The fixed sentences of refusals the pipeline itself gives.
const (
	msgNoMatter    = "No matter with that case_id is available to this credential."
	msgNoDocument  = "No document with that document_id exists in this matter."
	msgNoFact      = "No fact with that fact_id exists in this matter."
	msgUnavailable = "The matter record could not be read just now; nothing was changed. Retry shortly."
	msgInternal    = "The tool failed unexpectedly; nothing was changed."
	msgKillSwitch  = "This tool is switched off for the firm right now; nothing was done."
	msgCannotAsk   = "This tool needs to ask the client a question, but this client cannot take one on this request: declare the capability at initialize and accept text/event-stream."
	msgAskExpired  = "The question this tool asked was not answered in time; nothing was done."
	msgReplayed    = "This request was already carried out; it runs at most once and was not run again."
	msgConflict    = "This call conflicts with a change made meanwhile, so it was not carried out; read again and retry."

	msgClientSafeRefused = "This tool is not available to a client-safe credential; nothing was done."
	msgAutonomyDenied    = "The firm's autonomy setting allows agents no writes here (level L0); nothing was done."
)

// cancelled marks a call the client withdrew (it gets no answer at all).
var cancelled = &Refusal{Class: "CANCELLED"}

// inputRequired marks a 2026-era call that asked the client for input: the
// transport answers input_required (MRTR).
var inputRequired = &Refusal{Class: "INPUT_REQUIRED"}

// classProtocol marks a refusal that is a protocol error, not a tool result.
const classProtocol = "PROTOCOL"

// passThrough returns the error a pipeline outcome becomes instead of a
// tool result: the call was cancelled, needs input (2026 era), or ended in
// a protocol error; nil for an ordinary refusal or success.
func (r *Refusal) passThrough() error {
	switch {
	case r == nil:
		return nil
	case r == cancelled:
		return mcp.ErrAskCancelled
	case r == inputRequired:
		return mcp.ErrInputRequired
	case r.protocol != nil:
		return r.protocol
	}
	return nil
}
