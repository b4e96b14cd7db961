package records

import (
	"errors"
	"fmt"
	"github.com/custodymcp/custody/shared/keyspace"
	"slices"
	"strings"
	"time"
)

// ErrCorrupt reports a stored row whose payload cannot be decoded. A read
// that meets one fails as a whole: the collection is unreadable, not empty.
var ErrCorrupt = errors.New("records: corrupt row")

// ErrInvalid reports a row or fixture that breaks the record's rules (an
// unknown posture, a chunk outside its document's pages, a quote citing a
// document of another matter). Nothing is written.
var ErrInvalid = errors.New("records: invalid record")

// MaxIDLen is the longest id ValidID accepts, in bytes.
const MaxIDLen = keyspace.MaxIDLen

// DateLayout is the layout of calendar dates ("2026-12-14").
const DateLayout = "2006-01-02"

// ValidID reports whether s can be an id of a tenant, principal, matter,
// document, fact, deadline or note (keyspace.ValidID: 1 to MaxIDLen bytes of
// valid UTF-8 without '#', white space or control characters). An id it
// refuses names nothing, so readers answer "not found".
func ValidID(s string) bool { return keyspace.ValidID(s) }

// ValidDate reports whether s is a calendar date in DateLayout.
func ValidDate(s string) bool {
	t, err := time.Parse(DateLayout, s)
	return err == nil && t.Format(DateLayout) == s
}

// Privilege is the privilege designation of a document, chunk, fact or note.
// A client_safe credential sees only PrivilegeNone (docs/decisions.md).
type Privilege string

// Privilege values.
const (
	PrivilegeNone        Privilege = "none"
	PrivilegePrivileged  Privilege = "privileged"
	PrivilegeWorkProduct Privilege = "work_product"
)

// Valid reports whether p is one of the three privilege values.
func (p Privilege) Valid() bool {
	return p == PrivilegeNone || p == PrivilegePrivileged || p == PrivilegeWorkProduct
}

// Posture is the posture of a fact as an attorney records it.
type Posture string

// Posture values an attorney records (docs/decisions.md).
const (
	PostureUndisputed Posture = "undisputed"
	PostureDisputed   Posture = "disputed"
	PostureAdmitted   Posture = "admitted"
	PostureDenied     Posture = "denied"
	PostureUnresolved Posture = "unresolved"
)

// Postures lists every posture in a fixed order (for counts and schemas).
var Postures = []Posture{PostureUndisputed, PostureDisputed, PostureAdmitted, PostureDenied, PostureUnresolved}

// Valid reports whether p is one of the five postures.
func (p Posture) Valid() bool {
	for _, q := range Postures {
		if p == q {
			return true
		}
	}
	return false
}

// SourceClass is the kind of source an assertion comes from.
type SourceClass string

// Source classes (docs/decisions.md).
const (
	SourcePleading          SourceClass = "pleading"
	SourceDiscoveryResponse SourceClass = "discovery_response"
	SourceDeposition        SourceClass = "deposition"
	SourceDocument          SourceClass = "document"
	SourceCorrespondence    SourceClass = "correspondence"
	SourceExpertReport      SourceClass = "expert_report"
)

// SourceClasses lists every source class in a fixed order.
var SourceClasses = []SourceClass{SourcePleading, SourceDiscoveryResponse, SourceDeposition, SourceDocument, SourceCorrespondence, SourceExpertReport}

// Valid reports whether c is one of the six source classes.
func (c SourceClass) Valid() bool {
	for _, d := range SourceClasses {
		if c == d {
			return true
		}
	}
	return false
}

// DocumentKinds is the vocabulary of a document's kind, sorted: what
// list_documents filters by and advertises as an enum. A document of
// another kind is refused at import (Document.Validate); "other" takes what
// fits none.
var DocumentKinds = []string{
	"agency_complaint", "agency_report", "answer", "bill_of_lading", "brief", "complaint",
	"contract", "data_report", "declaration", "deposition_transcript", "discovery_response",
	"email", "estimate", "exhibit", "expert_analysis", "expert_report", "field_report", "invoice",
	"letter", "log", "memo", "minutes", "motion", "notice", "order", "other", "payroll_record",
	"performance_review", "personnel_record", "photograph", "specification", "subpoena", "upload",
}

// ValidDocumentKind reports whether k is one of DocumentKinds.
func ValidDocumentKind(k string) bool {
	_, found := slices.BinarySearch(DocumentKinds, k)
	return found
}

// Role is a principal's role at the firm. A role grants no matter access by
// itself: access comes from a matter's team (package access).
type Role string

// Roles.
const (
	RoleAttorney  Role = "attorney"
	RoleParalegal Role = "paralegal"
	RoleAdmin     Role = "admin"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r == RoleAttorney || r == RoleParalegal || r == RoleAdmin }

// MatterStatus is whether a matter is open or closed.
type MatterStatus string

// Matter statuses.
const (
	MatterOpen   MatterStatus = "open"
	MatterClosed MatterStatus = "closed"
)

// CheckResult is the outcome of a recorded check.
type CheckResult string

// Check results.
const (
	CheckConfirmed CheckResult = "confirmed"
	CheckRefuted   CheckResult = "refuted"
)

// DeadlineStatus is whether a deadline is still to be met.
type DeadlineStatus string

// Deadline statuses.
const (
	DeadlineOpen DeadlineStatus = "open"
	DeadlineDone DeadlineStatus = "done"
)

// Tenant is one firm. A frozen tenant answers nothing (the kill switch,
// docs/architecture.md request path step 3).
type Tenant struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Frozen stops every call of the tenant's credentials.
	Frozen bool `json:"frozen"`
	// Instructions, when set, is the firm's guidance to agents (sent as the
	// server's instructions).
	Instructions string    `json:"instructions,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// Principal is a person at the firm who acts (docs/decisions.md "Identity and
// binding"); credentials belong to a principal.
type Principal struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email,omitempty"`
	Role  Role   `json:"role"`
	// Licensed is true for an attorney admitted to practice; BarNumber then
	// names the bar and number ("CA 287114").
	Licensed  bool      `json:"licensed"`
	BarNumber string    `json:"bar_number,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Matter is one case file. Team lists the principals with access; Screened
// lists the principals behind an ethical wall, who have no access even when
// on the team (package access is the one place that decides).
type Matter struct {
	ID           string       `json:"case_id"`
	Name         string       `json:"name"`    // short name: "Meridian v. Caldwell"
	Caption      string       `json:"caption"` // full caption as filed
	Court        string       `json:"court,omitempty"`
	DocketNumber string       `json:"docket_number,omitempty"`
	Client       string       `json:"client"`
	ClientRole   string       `json:"client_role,omitempty"` // plaintiff, defendant, petitioner…
	PracticeArea string       `json:"practice_area"`
	Status       MatterStatus `json:"status"`
	Team         []string     `json:"team"`
	Screened     []string     `json:"screened,omitempty"`
	// ScreenReason says why the wall exists, without naming the principal.
	ScreenReason string `json:"screen_reason,omitempty"`
	// SourceDocumentID is the pleading that opened the matter (complaint,
	// petition), a document of this matter.
	SourceDocumentID string    `json:"source_document_id,omitempty"`
	OpenedOn         string    `json:"opened_on"` // DateLayout
	ClosedOn         string    `json:"closed_on,omitempty"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
}

// Document is one document of a matter; its text lives in the chunks of its
// versions. SHA256 and PageCount describe the current version.
type Document struct {
	ID        string    `json:"id"`
	Matter    string    `json:"case_id"`
	Title     string    `json:"title"`
	Kind      string    `json:"kind"` // one of DocumentKinds: complaint, answer, contract, email…
	Privilege Privilege `json:"privilege"`
	Author    string    `json:"author,omitempty"`
	Custodian string    `json:"custodian,omitempty"`
	// Party is the party the document comes from (its author's side).
	Party          string `json:"party,omitempty"`
	DocumentDate   string `json:"document_date,omitempty"` // DateLayout
	CurrentVersion int    `json:"current_version"`
	PageCount      int    `json:"page_count"`
	SHA256         string `json:"sha256"` // lower-case hex of the current version
	// ChecksumVerifiedAt is when a recorded check last recomputed the current
	// version's SHA-256 and found it equal; nil means never checked.
	ChecksumVerifiedAt *time.Time `json:"checksum_verified_at"`
	// ReviewState is where the document stands in privilege review: ""
	// (a document of the record as imported) or "reviewed" is served;
	// "pending_review" (an upload no attorney has reviewed yet, issue 18)
	// and "withdrawn" are served by nothing.
	ReviewState ReviewState `json:"review_state,omitempty"`
	// ReviewedBy and ReviewedAt are the licensed attorney who reviewed an
	// upload's document (or withdrew it) and when (issue 18: custodyctl
	// documents review); empty for a document of the record as imported.
	ReviewedBy string     `json:"reviewed_by,omitempty"`
	ReviewedAt *time.Time `json:"reviewed_at,omitempty"`
	// SourceUpload and SourceCredential are the upload intake made the
	// document of and the credential that deposited it (an import's is
	// "import:<principal>"); empty for the record as imported.
	SourceUpload     string `json:"source_upload,omitempty"`
	SourceCredential string `json:"source_credential,omitempty"`
	// TextState and TextReason are the current version's
	// (Version.TextState), copied so an answer naming the document can
	// say how much of its text the chunks hold without reading the
	// version; "" for the record as imported.
	TextState  TextState `json:"text_state,omitempty"`
	TextReason string    `json:"text_reason,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// ReviewState is a document's privilege-review state.
type ReviewState string

// Review states ("" is a document of the record as imported: reviewed).
const (
	ReviewPending   ReviewState = "pending_review"
	ReviewReviewed  ReviewState = "reviewed"
	ReviewWithdrawn ReviewState = "withdrawn"
)

// Valid reports whether s is a review state.
func (s ReviewState) Valid() bool {
	return s == "" || s == ReviewPending || s == ReviewReviewed || s == ReviewWithdrawn
}

// Served reports whether rows in state s may be served: reviewed, or of
// the record as imported ("").
func (s ReviewState) Served() bool { return s == "" || s == ReviewReviewed }

// Reviewed reports whether the document may be served: reviewed, or of
// the record as imported.
func (d Document) Reviewed() bool { return d.ReviewState.Served() }

// TextState says how much of a version's text its chunks hold (issue 18:
// an upload's text as intake extracted it); "" for the record as imported,
// whose chunks are its text.
type TextState string

// Text states.
const (
	TextComplete    TextState = "complete"
	TextPartial     TextState = "partial"
	TextUnavailable TextState = "unavailable"
)

// Version is one version of a document.
type Version struct {
	DocumentID string `json:"document_id"`
	Matter     string `json:"case_id"`
	Number     int    `json:"number"` // 1..9999
	SHA256     string `json:"sha256"`
	PageCount  int    `json:"page_count"`
	SizeBytes  int64  `json:"size_bytes,omitempty"`
	MediaType  string `json:"media_type,omitempty"`
	Filename   string `json:"filename,omitempty"`
	// ObjectKey points at the bytes in the record bucket, when there are any.
	ObjectKey string `json:"object_key,omitempty"`
	Comment   string `json:"comment,omitempty"` // "executed copy", "errata applied"
	// TextState and TextReason say how much of the file's text the chunks
	// hold and why not all (issue 18 §4); "" for the record as imported.
	TextState  TextState `json:"text_state,omitempty"`
	TextReason string    `json:"text_reason,omitempty"`
	// ReviewState is its document's (Document.ReviewState), copied so a
	// read of versions alone serves none of an unreviewed document.
	ReviewState ReviewState `json:"review_state,omitempty"`
	CreatedAt   time.Time   `json:"created_at"`
	UpdatedAt   time.Time   `json:"updated_at"`
}

// Chunk is a run of text of one version, on pages PageStart..PageEnd
// (1-based, inclusive). Seq orders a version's chunks (1..99999). Privilege
// is copied from the document.
type Chunk struct {
	DocumentID string    `json:"document_id,omitempty"`
	Matter     string    `json:"case_id,omitempty"`
	Version    int       `json:"version,omitempty"`
	Seq        int       `json:"seq"`
	PageStart  int       `json:"page_start"`
	PageEnd    int       `json:"page_end"`
	Text       string    `json:"text"`
	Privilege  Privilege `json:"privilege,omitempty"`
	// ReviewState is its document's (Document.ReviewState), so a read of
	// chunks alone (search) serves none of an unreviewed document.
	ReviewState ReviewState `json:"review_state,omitempty"`
	CreatedAt   time.Time   `json:"created_at,omitzero"`
	UpdatedAt   time.Time   `json:"updated_at,omitzero"`
}

// Assertion is one source's statement of a fact: a verbatim Quote that
// appears on pages PageStart..PageEnd of version Version of DocumentID, the
// class of that source and the party who asserts it.
type Assertion struct {
	Quote       string      `json:"quote"`
	DocumentID  string      `json:"document_id"`
	Version     int         `json:"version"`
	PageStart   int         `json:"page_start"`
	PageEnd     int         `json:"page_end"`
	SourceClass SourceClass `json:"source_class"`
	Party       string      `json:"party"`
}

// Check is a recorded check: who checked what, how, when, with what result.
type Check struct {
	Method    string      `json:"method"` // what was compared with what
	CheckedBy string      `json:"checked_by"`
	CheckedAt time.Time   `json:"checked_at"`
	Result    CheckResult `json:"result"`
	Comment   string      `json:"comment,omitempty"`
	// Citation is the authority relied on (a record cite, a rule, a case),
	// when the check was recorded through an approved record_fact_check.
	Citation string `json:"citation,omitempty"`
}

// ModelProposal is a model's suggested posture for a fact. It is never the
// fact's posture and is never counted as one.
type ModelProposal struct {
	Posture    Posture   `json:"posture"`
	Rationale  string    `json:"rationale"`
	Model      string    `json:"model"`
	ProposedAt time.Time `json:"proposed_at"`
}

// Fact is one fact of a matter as the firm records it.
type Fact struct {
	ID        string  `json:"id"`
	Matter    string  `json:"case_id"`
	Statement string  `json:"statement"`
	Posture   Posture `json:"posture"`
	// RecordedBy is the principal who recorded the posture.
	RecordedBy string `json:"recorded_by,omitempty"`
	// PostureBasis is why the posture was recorded, when it was recorded
	// by approving an agent's set_fact_posture proposal: the note that is
	// its basis, the proposal, who asked and who approved.
	PostureBasis  *PostureBasis  `json:"posture_basis,omitempty"`
	ModelProposal *ModelProposal `json:"model_proposal"`
	Privilege     Privilege      `json:"privilege"`
	Assertions    []Assertion    `json:"assertions"`
	Checks        []Check        `json:"checks"`
	CreatedAt     time.Time      `json:"created_at"`
	UpdatedAt     time.Time      `json:"updated_at"`
}

// PostureBasis is the basis of a posture recorded through an approval:
// the note the proposal carried, the proposal, the requester (the
// requesting credential's owner) and the approver.
type PostureBasis struct {
	Note      string `json:"note"`
	Proposal  string `json:"proposal"`
	Requester string `json:"requester"`
	Approver  string `json:"approver"`
}

// Exhibit is a document of a matter marked as an exhibit under a label
// unique in the matter (compared without letter case: PX-12 and px-12 are
// one label).
type Exhibit struct {
	Label       string `json:"label"`
	Matter      string `json:"case_id"`
	DocumentID  string `json:"document_id"`
	Description string `json:"description,omitempty"`
	// MarkedBy is the principal who marked it (the approver of an
	// add_exhibit proposal); Proposal is that proposal, when there was one.
	MarkedBy  string    `json:"marked_by"`
	Proposal  string    `json:"proposal,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Grounded reports whether the record cites a source for the fact.
func (f Fact) Grounded() bool { return len(f.Assertions) > 0 }

// Verified reports whether the fact's latest recorded check (by CheckedAt)
// confirmed it. A later refuting check withdraws an earlier confirmation;
// a fact with no check is never verified (docs/contracts.md §1).
func (f Fact) Verified() bool {
	c, ok := LatestCheck(f.Checks)
	return ok && c.Result == CheckConfirmed
}

// LatestCheck returns the check with the latest CheckedAt (the later one in
// the slice on a tie) and whether there was any.
func LatestCheck(checks []Check) (Check, bool) {
	var best Check
	found := false
	for _, c := range checks {
		if !found || !c.CheckedAt.Before(best.CheckedAt) {
			best, found = c, true
		}
	}
	return best, found
}

// Deadline is a date the matter must meet.
type Deadline struct {
	ID     string `json:"id"`
	Matter string `json:"case_id"`
	Title  string `json:"title"`
	Due    string `json:"due_date"` // DateLayout
	Kind   string `json:"kind"`     // filing, discovery, hearing, deposition, expert, mediation, trial
	// Rule is the rule or order the date comes from ("Fed. R. Civ. P.
	// 26(a)(2)(D)", "Scheduling Order ¶ 4").
	Rule             string         `json:"rule,omitempty"`
	SourceDocumentID string         `json:"source_document_id,omitempty"`
	SourcePage       int            `json:"source_page,omitempty"`
	Status           DeadlineStatus `json:"status"`
	// DocketingCheck is the recorded check of the computed date against its
	// source, when one was made.
	DocketingCheck *Check    `json:"docketing_check"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// Note is a case note written by a principal (or an agent on a principal's
// behalf).
type Note struct {
	ID         string    `json:"id"`
	Matter     string    `json:"case_id"`
	Author     string    `json:"author"` // principal id
	Body       string    `json:"body"`
	Privilege  Privilege `json:"privilege"`
	DocumentID string    `json:"document_id,omitempty"`
	// ViaCredential is the credential an agent wrote the note through
	// (add_case_note, issue 13); the author stays the credential's owner.
	// Empty for a note a person wrote.
	ViaCredential string    `json:"via_credential,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// Validate checks a principal's own fields.
func (p Principal) Validate() error {
	switch {
	case !ValidID(p.ID):
		return invalidf("principal id %q", p.ID)
	case !p.Role.Valid():
		return invalidf("principal %s: role %q", p.ID, p.Role)
	case p.Licensed && p.Role != RoleAttorney:
		return invalidf("principal %s: only an attorney is licensed", p.ID)
	}
	return checkTimes("principal "+p.ID, p.CreatedAt, p.UpdatedAt)
}

// Validate checks a matter's own fields (not that its team exists).
func (m Matter) Validate() error {
	switch {
	case !ValidID(m.ID):
		return invalidf("matter id %q", m.ID)
	case m.Status != MatterOpen && m.Status != MatterClosed:
		return invalidf("matter %s: status %q", m.ID, m.Status)
	case !ValidDate(m.OpenedOn):
		return invalidf("matter %s: opened_on %q", m.ID, m.OpenedOn)
	case m.ClosedOn != "" && !ValidDate(m.ClosedOn):
		return invalidf("matter %s: closed_on %q", m.ID, m.ClosedOn)
	case m.SourceDocumentID != "" && !ValidID(m.SourceDocumentID):
		return invalidf("matter %s: source document id", m.ID)
	}
	for _, p := range append(append([]string(nil), m.Team...), m.Screened...) {
		if !ValidID(p) {
			return invalidf("matter %s: principal id %q", m.ID, p)
		}
	}
	return checkTimes("matter "+m.ID, m.CreatedAt, m.UpdatedAt)
}

// Validate checks a document's own fields.
func (d Document) Validate() error {
	switch {
	case !ValidID(d.ID) || !ValidID(d.Matter):
		return invalidf("document %q of matter %q: id", d.ID, d.Matter)
	case !d.Privilege.Valid():
		return invalidf("document %s: privilege %q", d.ID, d.Privilege)
	case !d.ReviewState.Valid():
		return invalidf("document %s: review_state %q", d.ID, d.ReviewState)
	case !ValidDocumentKind(d.Kind):
		return invalidf("document %s: kind %q is not one of records.DocumentKinds", d.ID, d.Kind)
	case d.CurrentVersion < 1 || d.CurrentVersion > maxVersion:
		return invalidf("document %s: current version %d", d.ID, d.CurrentVersion)
	case d.PageCount < 1:
		return invalidf("document %s: page count %d", d.ID, d.PageCount)
	case !validSHA256(d.SHA256):
		return invalidf("document %s: sha256", d.ID)
	case d.DocumentDate != "" && !ValidDate(d.DocumentDate):
		return invalidf("document %s: document_date %q", d.ID, d.DocumentDate)
	}
	return checkTimes("document "+d.ID, d.CreatedAt, d.UpdatedAt)
}

// Validate checks a version's own fields.
func (v Version) Validate() error {
	switch {
	case !ValidID(v.DocumentID) || !ValidID(v.Matter):
		return invalidf("version of document %q: ids", v.DocumentID)
	case v.Number < 1 || v.Number > maxVersion:
		return invalidf("document %s: version number %d", v.DocumentID, v.Number)
	case v.PageCount < 1:
		return invalidf("document %s v%d: page count %d", v.DocumentID, v.Number, v.PageCount)
	case !validSHA256(v.SHA256):
		return invalidf("document %s v%d: sha256", v.DocumentID, v.Number)
	}
	return checkTimes(fmt.Sprintf("document %s v%d", v.DocumentID, v.Number), v.CreatedAt, v.UpdatedAt)
}

// Validate checks a chunk's own fields; pageCount is its version's.
func (c Chunk) Validate(pageCount int) error {
	where := fmt.Sprintf("chunk %s v%d #%d", c.DocumentID, c.Version, c.Seq)
	switch {
	case !ValidID(c.DocumentID) || !ValidID(c.Matter):
		return invalidf("%s: ids", where)
	case c.Version < 1 || c.Version > maxVersion:
		return invalidf("%s: version", where)
	case c.Seq < 1 || c.Seq > maxSeq:
		return invalidf("%s: seq out of 1..%d", where, maxSeq)
	case c.PageStart < 1 || c.PageEnd < c.PageStart || c.PageEnd > pageCount:
		return invalidf("%s: pages %d-%d of %d", where, c.PageStart, c.PageEnd, pageCount)
	case strings.TrimSpace(c.Text) == "":
		return invalidf("%s: empty text", where)
	case !c.Privilege.Valid():
		return invalidf("%s: privilege %q", where, c.Privilege)
	}
	return checkTimes(where, c.CreatedAt, c.UpdatedAt)
}

// Validate checks a fact's own fields (not that its quotes appear in their
// documents; Fixture.Validate checks that too).
func (f Fact) Validate() error {
	switch {
	case !ValidID(f.ID) || !ValidID(f.Matter):
		return invalidf("fact %q of matter %q: id", f.ID, f.Matter)
	case strings.TrimSpace(f.Statement) == "":
		return invalidf("fact %s: empty statement", f.ID)
	case !f.Posture.Valid():
		return invalidf("fact %s: posture %q", f.ID, f.Posture)
	case !f.Privilege.Valid():
		return invalidf("fact %s: privilege %q", f.ID, f.Privilege)
	case f.ModelProposal != nil && !f.ModelProposal.Posture.Valid():
		return invalidf("fact %s: model proposal posture %q", f.ID, f.ModelProposal.Posture)
	}
	for i, a := range f.Assertions {
		switch {
		case strings.TrimSpace(a.Quote) == "":
			return invalidf("fact %s assertion %d: empty quote", f.ID, i)
		case !ValidID(a.DocumentID):
			return invalidf("fact %s assertion %d: document id", f.ID, i)
		case a.Version < 1 || a.PageStart < 1 || a.PageEnd < a.PageStart:
			return invalidf("fact %s assertion %d: version or pages", f.ID, i)
		case !a.SourceClass.Valid():
			return invalidf("fact %s assertion %d: source class %q", f.ID, i, a.SourceClass)
		case strings.TrimSpace(a.Party) == "":
			return invalidf("fact %s assertion %d: party", f.ID, i)
		}
	}
	for i, c := range f.Checks {
		if err := c.validate(); err != nil {
			return fmt.Errorf("fact %s check %d: %w", f.ID, i, err)
		}
	}
	return checkTimes("fact "+f.ID, f.CreatedAt, f.UpdatedAt)
}

func (c Check) validate() error {
	switch {
	case strings.TrimSpace(c.Method) == "":
		return invalidf("check without method")
	case !ValidID(c.CheckedBy):
		return invalidf("check by %q", c.CheckedBy)
	case c.CheckedAt.IsZero():
		return invalidf("check without time")
	case c.Result != CheckConfirmed && c.Result != CheckRefuted:
		return invalidf("check result %q", c.Result)
	}
	return nil
}

// Validate checks a deadline's own fields.
func (d Deadline) Validate() error {
	switch {
	case !ValidID(d.ID) || !ValidID(d.Matter):
		return invalidf("deadline %q of matter %q: id", d.ID, d.Matter)
	case strings.TrimSpace(d.Title) == "":
		return invalidf("deadline %s: empty title", d.ID)
	case !ValidDate(d.Due):
		return invalidf("deadline %s: due_date %q", d.ID, d.Due)
	case d.Status != DeadlineOpen && d.Status != DeadlineDone:
		return invalidf("deadline %s: status %q", d.ID, d.Status)
	case d.SourceDocumentID != "" && !ValidID(d.SourceDocumentID):
		return invalidf("deadline %s: source document id", d.ID)
	case d.SourcePage < 0 || (d.SourcePage > 0 && d.SourceDocumentID == ""):
		return invalidf("deadline %s: source page without document", d.ID)
	}
	if d.DocketingCheck != nil {
		if err := d.DocketingCheck.validate(); err != nil {
			return fmt.Errorf("deadline %s: %w", d.ID, err)
		}
	}
	return checkTimes("deadline "+d.ID, d.CreatedAt, d.UpdatedAt)
}

// Validate checks a note's own fields.
func (n Note) Validate() error {
	switch {
	case !ValidID(n.ID) || !ValidID(n.Matter):
		return invalidf("note %q of matter %q: id", n.ID, n.Matter)
	case !ValidID(n.Author):
		return invalidf("note %s: author", n.ID)
	case strings.TrimSpace(n.Body) == "":
		return invalidf("note %s: empty body", n.ID)
	case !n.Privilege.Valid():
		return invalidf("note %s: privilege %q", n.ID, n.Privilege)
	case n.DocumentID != "" && !ValidID(n.DocumentID):
		return invalidf("note %s: document id", n.ID)
	}
	return checkTimes("note "+n.ID, n.CreatedAt, n.UpdatedAt)
}

// Validate checks an exhibit's own fields.
func (e Exhibit) Validate() error {
	switch {
	case !ValidID(e.Label) || !ValidID(e.Matter) || !ValidID(e.DocumentID):
		return invalidf("exhibit %q of matter %q: label or ids", e.Label, e.Matter)
	case !ValidID(e.MarkedBy):
		return invalidf("exhibit %s: marked_by", e.Label)
	}
	return checkTimes("exhibit "+e.Label, e.CreatedAt, e.UpdatedAt)
}

// Validate checks the tenant's own fields.
func (t Tenant) Validate() error {
	if !ValidID(t.ID) {
		return invalidf("tenant id %q", t.ID)
	}
	return checkTimes("tenant "+t.ID, t.CreatedAt, t.UpdatedAt)
}

const (
	maxVersion = 9999
	maxSeq     = 99999
)

func validSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// checkTimes requires both timestamps, updated not before created. Zones
// are not checked: the item builders store every time in UTC.
func checkTimes(what string, created, updated time.Time) error {
	switch {
	case created.IsZero() || updated.IsZero():
		return invalidf("%s: created_at and updated_at are required", what)
	case updated.Before(created):
		return invalidf("%s: updated_at before created_at", what)
	}
	return nil
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, ErrInvalid)...)
}
