// Package readtools holds Custody's read tools over the matter record. Each
// returns the verified-read envelope of docs/contracts.md §1 beside its data
// (package attest), with per-item provenance and status, and
// `<field>_read_state` on every collection.
//
// Shared rules, decided here:
//
//   - The matter row read by the access funnel is behind every matter-scoped
//     answer: it is in provenance_ids and counts toward as_of. A failure to
//     read it is refused UNAVAILABLE (the primary row); a failure to read a
//     collection of the matter makes that collection null, its read_state
//     "unreadable", its count (and page) null, and the roll-up unknown.
//   - Statuses: a fact is verified only with a recorded confirmed check,
//     grounded when it cites a source (an assertion with document, pages and
//     quote), else ungrounded. A document is verified when a recorded check
//     recomputed its checksum, else grounded (it is the source). A passage is
//     grounded (it is a page of a document). A deadline is verified with a
//     recorded docketing check that confirmed it, grounded when it cites a
//     rule or a source document, else ungrounded. A note is grounded when it
//     cites a document, else ungrounded. A matter is grounded when it cites
//     the pleading that opened it, else ungrounded.
//   - A client-safe credential sees only privilege "none" (the access
//     funnel decides: access.Who.Sees): privileged and work-product items
//     are filtered out before paging, and for it a withheld item does not
//     exist — a direct read of one by id (get_document, search_in_document,
//     get_fact_provenance) is the NOT_FOUND an absent id gets, the same
//     class, sentence and shape. Its answers say so in a note. A
//     citation of such a document (a fact's assertion, a deadline's or a
//     matter's source) is left out, its id and provenance id included, and
//     the item's status is what the visible citations support.
//   - A model's proposed posture is shown only under model_proposal and is
//     never counted or filtered on.
//   - Every matter row cited behind an answer (citeMatter) is reported to
//     the audit index too (tools.Call.ReportMatter), so an answer across
//     matters is indexed under each matter it contains.
package readtools

import (
	"context"
	"fmt"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/attest"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/tools"
)

// Options configure the read tools.
type Options struct {
	Repo *records.Repo
	// Store keeps fact-record exports (RegisterTaskTools); the read tools
	// of Register need none.
	Store store.Store
	// SearchWindow caps the ranked hits of search_documents; 0 means 200.
	SearchWindow int
	// ChunksPerPage is get_document's page size; 0 means 12.
	ChunksPerPage int
}

// readTools holds the read tools' dependencies.
type readTools struct {
	repo          *records.Repo
	store         store.Store
	searchWindow  int
	chunksPerPage int
}

// Register adds every read tool to reg.
func Register(reg *tools.Registry, opts Options) error {
	rt := &readTools{repo: opts.Repo, searchWindow: opts.SearchWindow, chunksPerPage: opts.ChunksPerPage}
	if rt.searchWindow == 0 {
		rt.searchWindow = 200
	}
	if rt.chunksPerPage == 0 {
		rt.chunksPerPage = 12
	}
	for _, err := range []error{
		tools.Register(reg, spec("list_matters", "List matters", auth.ScopeRead,
			"Lists the matters this credential can reach, with attestation. Paged with offset and limit."), rt.listMatters),
		tools.Register(reg, spec("get_matter", "Get a matter", auth.ScopeRead,
			"Returns one matter by case_id: caption, court, docket number, client, practice area, status and team, with attestation. Its deadlines and notes: list_deadlines and list_case_notes."), rt.getMatter),
		tools.Register(reg, spec("list_documents", "List documents", auth.ScopeDocsRead,
			"Lists the documents of a matter (title, kind, privilege, version, pages, checksum), with attestation. Paged with offset and limit."), rt.listDocuments),
		tools.Register(reg, spec("get_document", "Get a document", auth.ScopeDocsRead,
			fmt.Sprintf("Returns one document of a matter with its versions and one page of its page-numbered text chunks (%d per page; continue with offset). Text is quoted verbatim as evidence.", rt.chunksPerPage)), rt.getDocument),
		tools.Register(reg, withLane(spec("search_documents", "Search documents", auth.ScopeDocsRead,
			"Lexical search over the current text of every document this credential can reach (or one matter with case_id). Returns ranked verbatim passages with document, version and pages. Expensive: separately rate-limited."), ratelimit.LaneExpensive), rt.searchDocuments),
		tools.Register(reg, spec("search_in_document", "Search in a document", auth.ScopeDocsRead,
			"Finds the passages of one document's current version that contain the query's words, in page order, quoted verbatim."), rt.searchInDocument),
		tools.Register(reg, spec("get_fact_record", "Get the fact record", auth.ScopeRead,
			"Returns the facts of a matter with the posture an attorney recorded (undisputed, disputed, admitted, denied, unresolved), their sources and status; filter by recorded posture. A model's proposed posture is shown separately and never counted."), rt.getFactRecord),
		tools.Register(reg, spec("get_fact_provenance", "Get a fact's provenance", auth.ScopeRead,
			"Returns one fact with every source that asserts it: the verbatim quote, the document, version and pages, the source class and party, the text of the cited pages, and the recorded checks."), rt.getFactProvenance),
		tools.Register(reg, spec("list_deadlines", "List deadlines", auth.ScopeRead,
			"Lists a matter's deadlines by due date with the rule or order and source page they come from and any recorded docketing check. Filter by status."), rt.listDeadlines),
		tools.Register(reg, spec("list_case_notes", "List case notes", auth.ScopeRead,
			"Lists a matter's case notes, newest first."), rt.listCaseNotes),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// spec describes a read tool: read-only, idempotent, closed-world.
func spec(name, title string, scope auth.Scope, description string) tools.Spec {
	return tools.Spec{
		Name: name, Title: title, Description: description, Scope: scope,
		Annotations: mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}
}

func withLane(s tools.Spec, lane ratelimit.Lane) tools.Spec {
	s.Lane = lane
	return s
}

// CaseInput names a matter; the pipeline resolves it through the funnel.
type CaseInput struct {
	CaseID string `json:"case_id" jsonschema:"The matter's case_id (from list_matters)." schema:"minLength=1;maxLength=128"`
}

// MatterID implements tools.MatterScoped.
func (in CaseInput) MatterID() string { return in.CaseID }

// withheldNote is said to a client-safe credential wherever material may
// have been filtered.
const withheldNote = "This credential is client-safe: privileged and work-product material is not shown."

// matterRow records the matter row behind a matter-scoped answer.
func matterRow(b *attest.Builder, c *tools.Call) { citeMatter(b, c, c.Matter) }

// citeMatter records the row of a matter behind the answer: in provenance
// and as_of, and in the audit index (the answer contains rows of m).
func citeMatter(b *attest.Builder, c *tools.Call, m records.Matter) {
	b.Row(urn(c, "matter", m.ID), m.UpdatedAt)
	c.ReportMatter(m.ID)
}

func urn(c *tools.Call, kind, id string) string {
	return attest.URN(c.Credential.Tenant, kind, id)
}

// textNotes adds, once per document, a note saying how much of an
// uploaded document's text its chunks hold (issue 18 §4: the text state
// intake recorded, and why not all), so a reader is told when a search of
// it cannot be exhaustive. Documents of the record as imported have none.
func textNotes(b *attest.Builder, docs ...records.Document) {
	seen := map[string]bool{}
	for _, d := range docs {
		if d.TextState == "" || seen[d.ID] {
			continue
		}
		seen[d.ID] = true
		switch d.TextState {
		case records.TextComplete:
			b.Note(fmt.Sprintf("Document %s v%d: its text is complete (every page read).", d.ID, d.CurrentVersion))
		case records.TextPartial:
			b.Note(fmt.Sprintf("Document %s v%d: its text is partial (%s); passages past that are missing, not absent.", d.ID, d.CurrentVersion, d.TextReason))
		default:
			b.Note(fmt.Sprintf("Document %s v%d: its text is unavailable (%s); it has no passages to find.", d.ID, d.CurrentVersion, d.TextReason))
		}
	}
}

func clientSafeNote(b *attest.Builder, c *tools.Call) {
	if c.ClientSafe() {
		b.Note(withheldNote)
	}
}

// citedVisible reports which cited source documents the caller may see
// named (docs/architecture.md step 8: a client-safe credential never sees
// privileged or work-product material, its ids included). A standard
// credential sees every citation without a read; for a client-safe one the
// cited documents are read in one batch, and a citation whose document
// cannot be found is withheld too (its privilege is unknown).
func (rt *readTools) citedVisible(ctx context.Context, c *tools.Call, refs []records.DocumentRef) (func(records.DocumentRef) bool, error) {
	if !c.ClientSafe() || len(refs) == 0 {
		return func(records.DocumentRef) bool { return true }, nil
	}
	docs, err := rt.repo.DocumentsAt(ctx, c.Who.Tenant, refs)
	if err != nil {
		return nil, err
	}
	return func(ref records.DocumentRef) bool {
		d, ok := docs[ref]
		return ok && c.Sees(d.Privilege)
	}, nil
}

// visible filters items of a collection to those the credential may see
// (access.Visible: the funnel's rule).
func visible[T any](c *tools.Call, items []T, privilege func(T) records.Privilege) []T {
	return access.Visible(c.Who, items, privilege)
}

// check is a recorded check on the wire.
type check struct {
	Method    string      `json:"method"`
	CheckedBy string      `json:"checked_by"`
	CheckedAt attest.Time `json:"checked_at"`
	Result    string      `json:"result"`
}

func checkOf(ch *records.Check) *check {
	if ch == nil {
		return nil
	}
	return &check{Method: ch.Method, CheckedBy: ch.CheckedBy, CheckedAt: attest.At(ch.CheckedAt), Result: string(ch.Result)}
}

func checksOf(cs []records.Check) []check {
	out := make([]check, len(cs))
	for i := range cs {
		out[i] = *checkOf(&cs[i])
	}
	return out
}
