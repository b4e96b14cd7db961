package tools

// Refusal classes (CONTRACTS.md §3).
const (
	ClassValidation        = "VALIDATION"
	ClassNotFound          = "NOT_FOUND"
	ClassClientSafeRefused = "CLIENT_SAFE_REFUSED"
	ClassRateLimited       = "RATE_LIMITED"
	ClassBackpressure      = "BACKPRESSURE"
	ClassKillSwitch        = "KILL_SWITCH"
	ClassNotProvisioned    = "NOT_PROVISIONED"
	ClassScannerUnavail    = "SCANNER_UNAVAILABLE"
	ClassGrantInvalid      = "GRANT_INVALID"
	ClassConflict          = "CONFLICT"
	ClassUnavailable       = "UNAVAILABLE"
	ClassInternal          = "INTERNAL"
)

// Refusal is a tool refusal: a CallToolResult with isError true, one plain
// sentence a model can act on, and structuredContent {"error": Refusal}
// (CONTRACTS.md §3). Messages never carry SQL, table or bucket names, paths,
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
	msgUnavailable = "The matter record could not be read just now; nothing was changed. Retry shortly."
	msgInternal    = "The tool failed unexpectedly; nothing was changed."
	msgKillSwitch  = "This tool is switched off for the firm right now; nothing was done."
	msgCannotAsk   = "This tool needs to ask the client a question, but this client cannot take one on this request: declare the capability at initialize and accept text/event-stream."
	msgAskExpired  = "The question this tool asked was not answered in time; nothing was done."
)

// cancelled marks a call the client withdrew (it gets no answer at all).
var cancelled = &Refusal{Class: "CANCELLED"}
