package readtools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/attest"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/tools"
)

// The long read tools, registered where tasks are served
// (RegisterTaskTools): each reads a whole matter, so it may run as a task
// (docs/protocol.md "Tasks").
//
//   - export_fact_record (taskSupport optional): every fact of a matter
//     with its full provenance — the assertions, the text of the cited
//     pages, the recorded checks — as one attested document. The document
//     is kept under the credential that made it for ExportTTL
//     (EXPORT#<export>#<seq>, parts of up to exportPartBytes written with
//     the call's one commit), and the answer is a resource_link to
//     custody://matters/{case_id}/exports/{export_id}. Reading that URI
//     later runs get_fact_export through the governed pipeline, so the
//     access funnel decides again then: a wall raised since, or another
//     credential, reads nothing. The export copies what its credential
//     could already read; it changes nothing in the record.
//   - get_fact_export: reads such an export back (the resource's tool).
//   - audit_citations (taskSupport required, scope analysis:read, the
//     expensive lane): for every assertion of every fact of a matter,
//     compares its verbatim quote with the text of the chunks on its cited
//     pages and reports match, mismatch or unreadable, with progress. It
//     records nothing and changes no status: only a recorded check makes a
//     fact verified, and recording one is a governed write (planned:
//     issue 13).

// ExportTTL is how long a fact-record export is kept: the longest a task
// lives (tasks.MaxTTL), so an export outlives the task that made it.
const ExportTTL = 24 * time.Hour

// Export storage bounds: parts as large as the store's items allow beside
// their key, and at most as many as one transaction carries with the
// task's own rows within DynamoDB's 4 MB per transaction.
const (
	exportPartBytes = 300_000
	maxExportParts  = 10
)

// RegisterTaskTools adds export_fact_record, get_fact_export and
// audit_citations to reg.
func RegisterTaskTools(reg *tools.Registry, opts Options) error {
	if opts.Store == nil {
		return fmt.Errorf("register the task tools: a store is required (exports are kept in it)")
	}
	rt := &readTools{repo: opts.Repo, store: opts.Store}
	export := spec("export_fact_record", "Export the fact record", auth.ScopeRead,
		"Exports every fact of a matter with its full provenance (assertions, the verbatim text of the cited pages, recorded checks) as one attested JSON document, kept 24 hours for this credential. Long: may run as a task. The answer links the export as a custom resource (custody://matters/{case_id}/exports/{export_id}); read it with resources/read, or with get_fact_export.")
	export.TaskSupport = tools.TaskOptional
	get := spec("get_fact_export", "Get a fact-record export", auth.ScopeRead,
		"Returns a fact-record export this credential made with export_fact_record, by case_id and export_id, within 24 hours of its making.")
	citations := spec("audit_citations", "Audit the citations", auth.ScopeAnalysisRead,
		"Checks every assertion of a matter's facts: compares its verbatim quote with the text of the chunks on its cited pages and reports match, mismatch or unreadable per assertion, with progress. Records nothing and changes no status. Runs only as a task. Expensive: separately rate-limited.")
	citations.TaskSupport, citations.Lane = tools.TaskRequired, ratelimit.LaneExpensive
	for _, err := range []error{
		tools.Register(reg, export, rt.exportFactRecord),
		tools.Register(reg, get, rt.getFactExport),
		tools.Register(reg, citations, rt.auditCitations),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// ExportedFact is one fact of an export with its sources.
type ExportedFact struct {
	FactItem
	Sources []SourceItem `json:"sources"`
}

// FactExport is an export as stored and read back: the attested record of
// every visible fact of a matter.
type FactExport struct {
	attest.Envelope
	ExportID       string           `json:"export_id"`
	Facts          *[]ExportedFact  `json:"facts"`
	FactsReadState attest.ReadState `json:"facts_read_state"`
	FactsCount     *int             `json:"facts_count"`
}

// ExportFactRecordOutput is export_fact_record's answer: where the export
// is and what it holds, with the attestation of what was read.
type ExportFactRecordOutput struct {
	attest.Envelope
	ExportID  string      `json:"export_id"`
	URI       string      `json:"uri"`
	Facts     int         `json:"facts"`
	Bytes     int         `json:"bytes"`
	ExpiresAt attest.Time `json:"expires_at"`
}

// ResourceLinks implements tools.Linked: the export as a resource link.
func (o ExportFactRecordOutput) ResourceLinks() []mcp.Content {
	return []mcp.Content{{Type: "resource_link", URI: o.URI, Name: "fact-record-export-" + o.ExportID,
		MimeType: "application/json", Description: fmt.Sprintf("The exported fact record (%d facts); kept 24 hours for this credential.", o.Facts)}}
}

// exportKey is part seq of an export, in the credential's own partition.
func exportKey(c *tools.Call, id string, seq int) store.Key {
	return store.Key{PK: keyspace.TenantCredentialPK(c.Credential.Tenant, c.Credential.ID),
		SK: exportPrefix(id) + fmt.Sprintf("%03d", seq)}
}

func exportPrefix(id string) string { return "EXPORT#" + id + "#" }

// validExportID reports whether s has the shape of an export id.
func validExportID(s string) bool {
	if len(s) != 34 || !strings.HasPrefix(s, "fx") {
		return false
	}
	_, err := hex.DecodeString(s[2:])
	return err == nil && s == strings.ToLower(s)
}

// exportFactRecord builds the export and hands its parts to the call's
// commit.
func (rt *readTools) exportFactRecord(ctx context.Context, c *tools.Call, in CaseInput) (ExportFactRecordOutput, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := "fx" + hex.EncodeToString(b[:])
	doc := rt.factExport(ctx, c, id)
	enc, err := mcp.Marshal(doc)
	if err != nil {
		return ExportFactRecordOutput{}, err
	}
	n := (len(enc) + exportPartBytes - 1) / exportPartBytes
	if n > maxExportParts {
		return ExportFactRecordOutput{}, tools.Refuse(tools.ClassValidation,
			fmt.Sprintf("The matter's fact record is too large to export in one piece (over %d bytes); read it with get_fact_record and get_fact_provenance.", maxExportParts*exportPartBytes))
	}
	expires := c.Now.Add(ExportTTL)
	var ops []store.Op
	for i := range n {
		k := exportKey(c, id, i)
		ops = append(ops, store.PutOp(store.Item{PK: k.PK, SK: k.SK, Version: 1, ExpiresAt: expires.Unix(),
			Attrs: map[string]any{"case_id": c.Matter.ID, "parts": int64(n),
				"data": enc[i*exportPartBytes : min(len(enc), (i+1)*exportPartBytes)]}}, store.NotExists()))
	}
	c.Write(tools.Write{Ops: ops})
	facts := 0
	if doc.FactsCount != nil {
		facts = *doc.FactsCount
	}
	return ExportFactRecordOutput{Envelope: doc.Envelope, ExportID: id, URI: exportURI(c.Matter.ID, id),
		Facts: facts, Bytes: len(enc), ExpiresAt: attest.At(expires)}, nil
}

// exportURI is the resource URI of an export (resources.ExportTemplate).
func exportURI(caseID, id string) string {
	return "custody://matters/" + caseID + "/exports/" + id
}

// factExport reads every visible fact of the matter with its sources.
func (rt *readTools) factExport(ctx context.Context, c *tools.Call, id string) FactExport {
	b := attest.New(c.Now, c.Matter.ID, "Read every fact row of the matter, the documents they cite and the text of the cited pages; quote_located compares each quote with that text, but only a recorded check makes a fact verified.")
	matterRow(b, c)
	clientSafeNote(b, c)
	out := FactExport{ExportID: id}
	all, err := rt.repo.Facts(ctx, c.Who.Tenant, c.Matter.ID)
	var facts []ExportedFact
	if err == nil {
		cache := newSourceCache()
		for _, f := range visible(c, all, func(f records.Fact) records.Privilege { return f.Privilege }) {
			if err = ctx.Err(); err != nil {
				break
			}
			var sources []SourceItem
			if sources, err = rt.sourcesWith(ctx, c, b, f, cache); err != nil {
				break
			}
			shown := map[string]bool{}
			for _, s := range sources {
				shown[s.DocumentID] = true
				b.Add(s.Item)
			}
			it := ExportedFact{FactItem: factItem(c, f, func(id string) bool { return shown[id] }), Sources: sources}
			b.Row(urn(c, "fact", f.ID), f.UpdatedAt)
			b.Add(it.Item)
			facts = append(facts, it)
		}
	}
	if err != nil {
		b.Unreadable("facts")
		out.FactsReadState = attest.StateUnreadable
	} else {
		if facts == nil {
			facts = []ExportedFact{}
		}
		n := len(facts)
		out.Facts, out.FactsCount = &facts, &n
		out.FactsReadState = attest.ReadStateOf(n, nil)
	}
	out.Envelope = b.Envelope()
	return out
}

// GetFactExportInput names an export.
type GetFactExportInput struct {
	CaseInput
	ExportID string `json:"export_id" jsonschema:"The export's id (from export_fact_record)." schema:"minLength=1;maxLength=128"`
}

// errNoExport is every failure to find an export: unknown, another
// credential's, another matter's, expired.
func errNoExport() *tools.Refusal {
	return tools.Refuse(tools.ClassNotFound, "No export with that export_id exists for this credential and matter (exports are kept 24 hours).")
}

// getFactExport reads an export back, from the caller's own partition.
func (rt *readTools) getFactExport(ctx context.Context, c *tools.Call, in GetFactExportInput) (FactExport, error) {
	if !validExportID(in.ExportID) {
		return FactExport{}, errNoExport()
	}
	k := exportKey(c, in.ExportID, 0)
	page, err := rt.store.Query(ctx, store.Query{PK: k.PK, SK: store.SortKeyCondition{Prefix: exportPrefix(in.ExportID)},
		Limit: maxExportParts + 1})
	if err != nil {
		return FactExport{}, fmt.Errorf("read export %s: %w", in.ExportID, err)
	}
	if len(page.Items) == 0 || page.Items[0].String("case_id") != c.Matter.ID || int(page.Items[0].Int("parts")) != len(page.Items) {
		return FactExport{}, errNoExport()
	}
	var data []byte
	for _, it := range page.Items {
		data = append(data, it.Bytes("data")...)
	}
	var out FactExport
	if err := json.Unmarshal(data, &out); err != nil {
		return FactExport{}, fmt.Errorf("decode export %s: %w", in.ExportID, err)
	}
	c.ReportMatter(c.Matter.ID)
	return out, nil
}

// Citation results.
const (
	CitationMatch      = "match"
	CitationMismatch   = "mismatch"
	CitationUnreadable = "unreadable"
)

// CitationCheck is the comparison of one assertion with its cited pages.
type CitationCheck struct {
	FactID string `json:"fact_id"`
	// Assertion is the assertion's position among the fact's (0-based).
	Assertion  int    `json:"assertion"`
	DocumentID string `json:"document_id"`
	Version    int    `json:"version"`
	PageStart  int    `json:"page_start"`
	PageEnd    int    `json:"page_end"`
	Quote      string `json:"quote"`
	// Result is match (the quote is on the cited pages, white space
	// folded), mismatch (the pages were read and it is not there) or
	// unreadable (the pages could not be read; Reason says why).
	Result string `json:"result" schema:"enum=match|mismatch|unreadable"`
	Reason string `json:"reason,omitempty"`
	attest.Item
}

// CitationCounts counts the checks by result.
type CitationCounts struct {
	Match      int `json:"match"`
	Mismatch   int `json:"mismatch"`
	Unreadable int `json:"unreadable"`
}

// AuditCitationsOutput is audit_citations' answer.
type AuditCitationsOutput struct {
	attest.Envelope
	Checks          *[]CitationCheck `json:"checks"`
	ChecksReadState attest.ReadState `json:"checks_read_state"`
	Counts          *CitationCounts  `json:"counts"`
	// Notice says that the audit recorded nothing.
	Notice string `json:"notice"`
}

const citationsNotice = "This audit compared text and recorded nothing: no fact's status changed. A fact is verified only by a recorded check."

// Reasons a citation is unreadable.
const (
	reasonNoSource = "The cited document or version is not in the record."
	reasonNoPages  = "The cited pages could not be read just now."
	reasonNoText   = "The record holds no text on the cited pages."
)

// auditCitations compares every assertion's quote with its cited pages.
// A document the caller may not see is left out, as from every read; one
// that cannot be read makes its assertions unreadable, not the audit.
func (rt *readTools) auditCitations(ctx context.Context, c *tools.Call, in CaseInput) (AuditCitationsOutput, error) {
	b := attest.New(c.Now, c.Matter.ID, "Read every fact row of the matter and the text of the pages each assertion cites, and compared each verbatim quote with that text (white space folded); nothing was recorded.")
	matterRow(b, c)
	clientSafeNote(b, c)
	out := AuditCitationsOutput{Notice: citationsNotice}
	all, err := rt.repo.Facts(ctx, c.Who.Tenant, c.Matter.ID)
	var docs map[string]records.Document
	if err == nil {
		var ids []string
		for _, f := range all {
			for _, a := range f.Assertions {
				ids = append(ids, a.DocumentID)
			}
		}
		docs, err = rt.repo.DocumentsByID(ctx, c.Who.Tenant, c.Matter.ID, dedupe(ids))
	}
	if err != nil {
		b.Unreadable("checks")
		out.ChecksReadState = attest.StateUnreadable
		out.Envelope = b.Envelope()
		return out, nil
	}
	facts := visible(c, all, func(f records.Fact) records.Privilege { return f.Privilege })
	total := 0
	for _, f := range facts {
		for _, a := range f.Assertions {
			if d, ok := docs[a.DocumentID]; !ok || c.Sees(d.Privilege) {
				total++
			}
		}
	}
	checks := []CitationCheck{}
	counts := CitationCounts{}
	chunks := map[string][]records.Chunk{}
	failed := map[string]bool{}
	for _, f := range facts {
		b.Row(urn(c, "fact", f.ID), f.UpdatedAt)
		for i, a := range f.Assertions {
			d, found := docs[a.DocumentID]
			if found && !c.Sees(d.Privilege) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return AuditCitationsOutput{}, err
			}
			ck := CitationCheck{FactID: f.ID, Assertion: i, DocumentID: a.DocumentID, Version: a.Version,
				PageStart: a.PageStart, PageEnd: a.PageEnd, Quote: a.Quote}
			ids := []string{urn(c, "fact", f.ID)}
			key := a.DocumentID + "#" + itoa(a.Version)
			switch {
			case !found || a.Version < 1 || a.Version > d.CurrentVersion:
				ck.Result, ck.Reason = CitationUnreadable, reasonNoSource
			case failed[key]:
				ck.Result, ck.Reason = CitationUnreadable, reasonNoPages
			default:
				b.Row(urn(c, "document", d.ID), d.UpdatedAt)
				cs, ok := chunks[key]
				if !ok {
					var err error
					if cs, err = rt.allChunks(ctx, c, a.DocumentID, a.Version); err != nil {
						failed[key] = true
						ck.Result, ck.Reason = CitationUnreadable, reasonNoPages
						break
					}
					chunks[key] = cs
				}
				var text strings.Builder
				for _, ch := range cs {
					if ch.PageEnd < a.PageStart || ch.PageStart > a.PageEnd {
						continue
					}
					id := urn(c, "chunk", d.ID+"/v"+itoa(ch.Version)+"/"+itoa(ch.Seq))
					b.Row(id, ch.UpdatedAt)
					ids = append(ids, id)
					text.WriteString(ch.Text)
					text.WriteByte('\n')
				}
				switch {
				case text.Len() == 0:
					ck.Result, ck.Reason = CitationUnreadable, reasonNoText
				case a.Quote != "" && strings.Contains(normalizeSpace(text.String()), normalizeSpace(a.Quote)):
					ck.Result = CitationMatch
				default:
					ck.Result = CitationMismatch
				}
			}
			switch ck.Result {
			case CitationMatch:
				counts.Match++
			case CitationMismatch:
				counts.Mismatch++
			default:
				counts.Unreadable++
			}
			status := attest.Grounded
			if ck.Result == CitationUnreadable {
				status = attest.Unknown
			}
			ck.Item = attest.Item{ProvenanceIDs: ids, VerificationStatus: status}
			b.Add(ck.Item)
			checks = append(checks, ck)
			c.Peer.Progress(float64(len(checks)), float64(total), fmt.Sprintf("Checked %d of %d citations.", len(checks), total))
		}
	}
	if counts.Unreadable > 0 {
		b.Note(fmt.Sprintf("%d citation(s) could not be checked: their result is unreadable, not mismatch.", counts.Unreadable))
	}
	out.Checks, out.Counts = &checks, &counts
	out.ChecksReadState = attest.ReadStateOf(len(checks), nil)
	out.Envelope = b.Envelope()
	return out, nil
}

// dedupe returns ids without repeats, in first-seen order.
func dedupe(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
