package readtools

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/attest"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/tools"
)

// GetFactRecordInput names the matter, an optional recorded posture and the page.
type GetFactRecordInput struct {
	CaseInput
	Posture string `json:"posture,omitempty" jsonschema:"Only facts whose RECORDED posture is this (a model's proposal is never matched)." schema:"enum=undisputed|disputed|admitted|denied|unresolved"`
	tools.Paging
}

// AssertionItem is one source's statement of a fact.
type AssertionItem struct {
	Quote       string `json:"quote"`
	DocumentID  string `json:"document_id"`
	Version     int    `json:"version"`
	PageStart   int    `json:"page_start"`
	PageEnd     int    `json:"page_end"`
	SourceClass string `json:"source_class"`
	Party       string `json:"party"`
}

// ModelProposalItem is a model's suggested posture: shown, never counted.
type ModelProposalItem struct {
	Posture    string      `json:"posture"`
	Rationale  string      `json:"rationale"`
	Model      string      `json:"model"`
	ProposedAt attest.Time `json:"proposed_at"`
	Notice     string      `json:"notice"`
}

const proposalNotice = "A model's suggestion, not the posture an attorney recorded; it is never counted or filtered on."

// FactItem is one fact as the firm recorded it.
type FactItem struct {
	ID         string             `json:"id"`
	Statement  string             `json:"statement"`
	Posture    string             `json:"posture"`
	RecordedBy string             `json:"recorded_by"`
	Privilege  string             `json:"privilege"`
	Assertions []AssertionItem    `json:"assertions"`
	Checks     []check            `json:"checks"`
	Proposal   *ModelProposalItem `json:"model_proposal"`
	UpdatedAt  attest.Time        `json:"updated_at"`
	attest.Item
}

// PostureCounts counts facts by RECORDED posture.
type PostureCounts struct {
	Undisputed int `json:"undisputed"`
	Disputed   int `json:"disputed"`
	Admitted   int `json:"admitted"`
	Denied     int `json:"denied"`
	Unresolved int `json:"unresolved"`
}

func (pc *PostureCounts) add(p records.Posture) {
	switch p {
	case records.PostureUndisputed:
		pc.Undisputed++
	case records.PostureDisputed:
		pc.Disputed++
	case records.PostureAdmitted:
		pc.Admitted++
	case records.PostureDenied:
		pc.Denied++
	case records.PostureUnresolved:
		pc.Unresolved++
	}
}

// GetFactRecordOutput is get_fact_record's answer.
type GetFactRecordOutput struct {
	attest.Envelope
	Listing[FactItem]
	// PostureCounts counts every visible fact of the matter (not only this
	// page) by recorded posture.
	PostureCounts *PostureCounts `json:"posture_counts"`
}

// factItem describes a fact with the assertions whose documents the caller
// may see; its status follows those (verified needs a confirmed check).
func factItem(c *tools.Call, f records.Fact, docVisible func(string) bool) FactItem {
	it := FactItem{
		ID: f.ID, Statement: f.Statement, Posture: string(f.Posture), RecordedBy: f.RecordedBy,
		Privilege: string(f.Privilege), Assertions: []AssertionItem{}, Checks: checksOf(f.Checks),
		UpdatedAt: attest.At(f.UpdatedAt),
	}
	ids := []string{urn(c, "fact", f.ID)}
	for _, a := range f.Assertions {
		if !docVisible(a.DocumentID) {
			continue
		}
		it.Assertions = append(it.Assertions, AssertionItem{
			Quote: a.Quote, DocumentID: a.DocumentID, Version: a.Version,
			PageStart: a.PageStart, PageEnd: a.PageEnd, SourceClass: string(a.SourceClass), Party: a.Party,
		})
		if id := urn(c, "document", a.DocumentID); !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if p := f.ModelProposal; p != nil {
		it.Proposal = &ModelProposalItem{Posture: string(p.Posture), Rationale: p.Rationale,
			Model: p.Model, ProposedAt: attest.At(p.ProposedAt), Notice: proposalNotice}
	}
	status := attest.Ungrounded
	if len(it.Assertions) > 0 {
		status = attest.Grounded
	}
	if f.Verified() && len(it.Assertions) == len(f.Assertions) {
		status = attest.Verified
	}
	it.Item = attest.Item{ProvenanceIDs: ids, VerificationStatus: status}
	return it
}

// documentVisibility returns which documents of the matter the caller may
// see. Standard credentials see all without a read; a client-safe credential
// needs the documents' privilege, and without it nothing can be shown.
func (rt *readTools) documentVisibility(ctx context.Context, c *tools.Call) (func(string) bool, error) {
	if !c.ClientSafe() {
		return func(string) bool { return true }, nil
	}
	docs, err := c.Funnel.Documents(ctx, c.Who, c.Matter)
	if err != nil {
		return nil, err
	}
	ok := make(map[string]bool, len(docs))
	for _, d := range docs {
		ok[d.ID] = true
	}
	return func(id string) bool { return ok[id] }, nil
}

// getFactRecord lists the matter's facts by recorded posture.
func (rt *readTools) getFactRecord(ctx context.Context, c *tools.Call, in GetFactRecordInput) (GetFactRecordOutput, error) {
	b := attest.New(c.Now, c.Matter.ID, "Read the matter's fact rows; a fact is verified only with a recorded confirmed check, grounded when it cites a document, pages and a quote, else ungrounded.")
	matterRow(b, c)
	clientSafeNote(b, c)
	all, err := rt.repo.Facts(ctx, c.Who.Tenant, c.Matter.ID)
	var docVisible func(string) bool
	if err == nil {
		docVisible, err = rt.documentVisibility(ctx, c)
	}
	var out GetFactRecordOutput
	var kept []records.Fact
	if err == nil {
		counts := PostureCounts{}
		for _, f := range visible(c, all, func(f records.Fact) records.Privilege { return f.Privilege }) {
			counts.add(f.Posture)
			if in.Posture == "" || string(f.Posture) == in.Posture {
				kept = append(kept, f)
			}
		}
		out.PostureCounts = &counts
	}
	out.Listing = listRows(b, "facts", kept, err, in.Paging,
		func(f records.Fact) (FactItem, attest.Item, time.Time) {
			it := factItem(c, f, docVisible)
			return it, it.Item, f.UpdatedAt
		})
	out.Envelope = b.Envelope()
	return out, nil
}

// GetFactProvenanceInput names the fact.
type GetFactProvenanceInput struct {
	CaseInput
	FactID string `json:"fact_id" jsonschema:"The fact's id (from get_fact_record)." schema:"minLength=1;maxLength=128"`
}

// SourceItem is one assertion of a fact with the text of the cited pages.
type SourceItem struct {
	AssertionItem
	DocumentTitle string `json:"document_title"`
	// QuoteLocated says whether the quote appears verbatim in the cited
	// pages' text as stored now. It is reported, not recorded, so it never
	// makes anything verified.
	QuoteLocated bool      `json:"quote_located"`
	Pages        []Passage `json:"pages"`
	attest.Item
}

// GetFactProvenanceOutput is get_fact_provenance's answer.
type GetFactProvenanceOutput struct {
	attest.Envelope
	Fact             FactItem         `json:"fact"`
	Sources          *[]SourceItem    `json:"sources"`
	SourcesReadState attest.ReadState `json:"sources_read_state"`
	SourcesCount     *int             `json:"sources_count"`
}

// getFactProvenance answers one fact with every source that asserts it.
func (rt *readTools) getFactProvenance(ctx context.Context, c *tools.Call, in GetFactProvenanceInput) (GetFactProvenanceOutput, error) {
	f, err := c.Funnel.Fact(ctx, c.Who, c.Matter, in.FactID)
	if err != nil {
		return GetFactProvenanceOutput{}, err // NOT_FOUND, absent and withheld alike
	}
	b := attest.New(c.Now, c.Matter.ID, "Read the fact row, the documents it cites and the text of the cited pages; quote_located compares the quote with that text, but only a recorded check makes a fact verified.")
	matterRow(b, c)
	clientSafeNote(b, c)
	b.Row(urn(c, "fact", f.ID), f.UpdatedAt)
	out := GetFactProvenanceOutput{}

	sources, err := rt.sources(ctx, c, b, f)
	// Without the sources, which cited documents a client-safe caller may
	// see is unknown: it is shown no assertion (fail closed).
	docVisible := func(string) bool { return !c.ClientSafe() }
	if err != nil {
		out.SourcesReadState = attest.StateUnreadable
		b.Unreadable("sources")
	} else {
		shown := map[string]bool{}
		for _, s := range sources {
			shown[s.DocumentID] = true
			b.Add(s.Item)
		}
		docVisible = func(id string) bool { return shown[id] }
		n := len(sources)
		out.Sources, out.SourcesCount = &sources, &n
		out.SourcesReadState = attest.ReadStateOf(n, nil)
	}
	out.Fact = factItem(c, f, docVisible)
	b.Add(out.Fact.Item)
	out.Envelope = b.Envelope()
	return out, nil
}

// sourceCache keeps the documents and chunks read for one answer, so that
// an answer over many facts (export_fact_record) reads each once.
type sourceCache struct {
	docs   map[string]records.Document
	read   map[string]bool // document ids read (found or not)
	chunks map[string][]records.Chunk
}

func newSourceCache() *sourceCache {
	return &sourceCache{docs: map[string]records.Document{}, read: map[string]bool{}, chunks: map[string][]records.Chunk{}}
}

// sources reads each cited document and the chunks of the cited version,
// keeping the pages each assertion cites.
func (rt *readTools) sources(ctx context.Context, c *tools.Call, b *attest.Builder, f records.Fact) ([]SourceItem, error) {
	return rt.sourcesWith(ctx, c, b, f, newSourceCache())
}

// sourcesWith is sources reading through cache.
func (rt *readTools) sourcesWith(ctx context.Context, c *tools.Call, b *attest.Builder, f records.Fact, cache *sourceCache) ([]SourceItem, error) {
	var ids, unread []string
	for _, a := range f.Assertions {
		if !slices.Contains(ids, a.DocumentID) {
			ids = append(ids, a.DocumentID)
			if !cache.read[a.DocumentID] {
				unread = append(unread, a.DocumentID)
			}
		}
	}
	if len(unread) > 0 {
		got, err := rt.repo.DocumentsByID(ctx, c.Who.Tenant, c.Matter.ID, unread)
		if err != nil {
			return nil, err
		}
		for _, id := range unread {
			cache.read[id] = true
			if d, ok := got[id]; ok {
				cache.docs[id] = d
			}
		}
	}
	docs := cache.docs
	for _, id := range ids {
		if d, ok := docs[id]; ok && c.Sees(d.Privilege) {
			b.Row(urn(c, "document", d.ID), d.UpdatedAt)
		}
	}
	chunks := cache.chunks
	out := []SourceItem{}
	for _, a := range f.Assertions {
		d, ok := docs[a.DocumentID]
		if !ok {
			continue // a dangling citation: the fact's status shows it
		}
		if !c.Sees(d.Privilege) {
			continue
		}
		key := a.DocumentID + "#" + itoa(a.Version)
		cs, ok := chunks[key]
		if !ok {
			var err error
			cs, err = rt.allChunks(ctx, c, a.DocumentID, a.Version)
			if err != nil {
				return nil, err
			}
			chunks[key] = cs
		}
		src := SourceItem{
			AssertionItem: AssertionItem{Quote: a.Quote, DocumentID: a.DocumentID, Version: a.Version,
				PageStart: a.PageStart, PageEnd: a.PageEnd, SourceClass: string(a.SourceClass), Party: a.Party},
			DocumentTitle: d.Title, Pages: []Passage{},
		}
		ids := []string{urn(c, "document", d.ID)}
		var text strings.Builder
		for _, ch := range cs {
			if ch.PageEnd < a.PageStart || ch.PageStart > a.PageEnd {
				continue
			}
			p := passage(c, d, ch)
			b.Row(p.ProvenanceIDs[0], ch.UpdatedAt)
			ids = append(ids, p.ProvenanceIDs[0])
			src.Pages = append(src.Pages, p)
			text.WriteString(ch.Text)
			text.WriteByte('\n')
		}
		src.QuoteLocated = a.Quote != "" && strings.Contains(normalizeSpace(text.String()), normalizeSpace(a.Quote))
		src.Item = attest.Item{ProvenanceIDs: ids, VerificationStatus: attest.Grounded}
		out = append(out, src)
	}
	return out, nil
}

// normalizeSpace folds runs of white space to one space, so a quote that
// spans a chunk boundary is still located.
func normalizeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
