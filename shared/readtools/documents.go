package readtools

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/custodymcp/custody/shared/attest"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/tools"
)

// ListDocumentsInput names the matter, an optional kind and the page.
type ListDocumentsInput struct {
	CaseInput
	// Kind's enum is records.DocumentKinds (a test holds them equal).
	Kind string `json:"kind,omitempty" jsonschema:"Only documents of this kind." schema:"enum=agency_complaint|agency_report|answer|bill_of_lading|brief|complaint|contract|data_report|declaration|deposition_transcript|discovery_response|email|estimate|exhibit|expert_analysis|expert_report|field_report|invoice|letter|log|memo|minutes|motion|notice|order|other|payroll_record|performance_review|personnel_record|photograph|specification|subpoena|upload"`
	tools.Paging
}

// DocumentItem is one document.
type DocumentItem struct {
	ID                 string       `json:"id"`
	Title              string       `json:"title"`
	Kind               string       `json:"kind"`
	Privilege          string       `json:"privilege"`
	Author             string       `json:"author"`
	Custodian          string       `json:"custodian"`
	Party              string       `json:"party"`
	DocumentDate       string       `json:"document_date"`
	CurrentVersion     int          `json:"current_version"`
	PageCount          int          `json:"page_count"`
	SHA256             string       `json:"sha256"`
	ChecksumVerifiedAt *attest.Time `json:"checksum_verified_at"`
	UpdatedAt          attest.Time  `json:"updated_at"`
	attest.Item
}

// ListDocumentsOutput is list_documents' answer.
type ListDocumentsOutput struct {
	attest.Envelope
	Listing[DocumentItem]
}

func documentItem(c *tools.Call, d records.Document) DocumentItem {
	status := attest.Grounded
	if d.ChecksumVerifiedAt != nil {
		status = attest.Verified
	}
	return DocumentItem{
		ID: d.ID, Title: d.Title, Kind: d.Kind, Privilege: string(d.Privilege), Author: d.Author,
		Custodian: d.Custodian, Party: d.Party, DocumentDate: d.DocumentDate,
		CurrentVersion: d.CurrentVersion, PageCount: d.PageCount, SHA256: d.SHA256,
		ChecksumVerifiedAt: attest.AtPtr(d.ChecksumVerifiedAt), UpdatedAt: attest.At(d.UpdatedAt),
		Item: attest.Item{ProvenanceIDs: []string{urn(c, "document", d.ID)}, VerificationStatus: status},
	}
}

// listDocuments lists a matter's documents, privilege-filtered for
// client-safe credentials before paging.
func (rt *readTools) listDocuments(ctx context.Context, c *tools.Call, in ListDocumentsInput) (ListDocumentsOutput, error) {
	b := attest.New(c.Now, c.Matter.ID, "Read the matter's document rows; a document is verified when a recorded check recomputed its checksum, otherwise grounded as a source itself.")
	matterRow(b, c)
	clientSafeNote(b, c)
	docs, err := c.Funnel.Documents(ctx, c.Who, c.Matter)
	var kept []records.Document
	for _, d := range docs {
		if in.Kind == "" || d.Kind == in.Kind {
			kept = append(kept, d)
		}
	}
	out := ListDocumentsOutput{Listing: listRows(b, "documents", kept, err, in.Paging,
		func(d records.Document) (DocumentItem, attest.Item, time.Time) {
			textNotes(b, d)
			it := documentItem(c, d)
			return it, it.Item, d.UpdatedAt
		})}
	out.Envelope = b.Envelope()
	return out, nil
}

// DocumentInput names one document of a matter.
type DocumentInput struct {
	CaseInput
	DocumentID string `json:"document_id" jsonschema:"The document's id (from list_documents or search results)." schema:"minLength=1;maxLength=128"`
}

// GetDocumentInput names the document, a version and the chunk offset.
type GetDocumentInput struct {
	DocumentInput
	Version int `json:"version,omitempty" jsonschema:"The version to read; default the current version." schema:"minimum=1"`
	Offset  int `json:"offset,omitempty" jsonschema:"Chunks to skip; use page.next_offset to continue." schema:"minimum=0"`
}

// Passage is one page-numbered chunk of a document's text, verbatim.
type Passage struct {
	DocumentID string `json:"document_id"`
	Version    int    `json:"version"`
	Seq        int    `json:"seq"`
	PageStart  int    `json:"page_start"`
	PageEnd    int    `json:"page_end"`
	Text       string `json:"text"`
	attest.Item
}

func passage(c *tools.Call, d records.Document, ch records.Chunk) Passage {
	return Passage{
		DocumentID: d.ID, Version: ch.Version, Seq: ch.Seq, PageStart: ch.PageStart, PageEnd: ch.PageEnd,
		Text: ch.Text,
		Item: attest.Item{
			ProvenanceIDs:      []string{urn(c, "chunk", d.ID+"/v"+itoa(ch.Version)+"/"+itoa(ch.Seq))},
			VerificationStatus: attest.Grounded,
		},
	}
}

// VersionItem is one version of a document.
type VersionItem struct {
	Number    int         `json:"number"`
	SHA256    string      `json:"sha256"`
	PageCount int         `json:"page_count"`
	Comment   string      `json:"comment"`
	CreatedAt attest.Time `json:"created_at"`
}

// GetDocumentOutput is get_document's answer.
type GetDocumentOutput struct {
	attest.Envelope
	Document          DocumentItem     `json:"document"`
	Versions          *[]VersionItem   `json:"versions"`
	VersionsReadState attest.ReadState `json:"versions_read_state"`
	VersionsCount     *int             `json:"versions_count"`
	Chunks            *[]Passage       `json:"chunks"`
	ChunksReadState   attest.ReadState `json:"chunks_read_state"`
	Page              *tools.Page      `json:"page"`
}

// getDocument answers one document with its versions and one page of chunks.
func (rt *readTools) getDocument(ctx context.Context, c *tools.Call, in GetDocumentInput) (GetDocumentOutput, error) {
	d, err := c.Funnel.Document(ctx, c.Who, c.Matter, in.DocumentID)
	if err != nil {
		return GetDocumentOutput{}, err // NOT_FOUND, absent and withheld alike
	}
	version := in.Version
	if version == 0 {
		version = d.CurrentVersion
	}
	if version > d.CurrentVersion {
		return GetDocumentOutput{}, tools.Invalid("version", "The field 'version' names a version this document does not have.")
	}
	b := attest.New(c.Now, c.Matter.ID, "Read the document row, its versions and one page of the chosen version's text; passages are grounded as pages of the document, quoted verbatim.")
	matterRow(b, c)
	out := GetDocumentOutput{Document: documentItem(c, d)}
	b.Row(out.Document.ProvenanceIDs[0], d.UpdatedAt)
	b.Add(out.Document.Item)
	textNotes(b, d)

	versions, err := rt.repo.Versions(ctx, c.Who.Tenant, c.Matter.ID, d.ID)
	if err != nil {
		out.VersionsReadState = attest.StateUnreadable
		b.Unreadable("versions")
	} else {
		items := make([]VersionItem, len(versions))
		for i, v := range versions {
			items[i] = VersionItem{Number: v.Number, SHA256: v.SHA256, PageCount: v.PageCount, Comment: v.Comment, CreatedAt: attest.At(v.CreatedAt)}
			b.Row(urn(c, "version", d.ID+"/v"+itoa(v.Number)), v.UpdatedAt)
		}
		n := len(items)
		out.Versions, out.VersionsCount = &items, &n
		out.VersionsReadState = attest.ReadStateOf(n, nil)
	}

	// Chunk sequence numbers run 1..n without gaps within a version, so the
	// chunk offset is seq-1 and a page is one range query.
	from := in.Offset + 1
	if in.Offset == math.MaxInt {
		from = in.Offset // past every chunk; offset+1 would wrap to the first
	}
	cp, err := rt.repo.Chunks(ctx, c.Who.Tenant, c.Matter.ID, d.ID, version, from, rt.chunksPerPage)
	if err != nil {
		out.ChunksReadState = attest.StateUnreadable
		b.Unreadable("chunks")
	} else {
		items := make([]Passage, len(cp.Chunks))
		for i, ch := range cp.Chunks {
			items[i] = passage(c, d, ch)
			b.Row(items[i].ProvenanceIDs[0], ch.UpdatedAt)
			b.Add(items[i].Item)
		}
		page := tools.Page{Offset: in.Offset, Limit: rt.chunksPerPage, Returned: len(items), HasMore: cp.More}
		if cp.More {
			next := in.Offset + len(items)
			page.NextOffset = &next
		}
		out.Chunks, out.Page = &items, &page
		out.ChunksReadState = attest.ReadStateOf(len(items), nil)
		if len(items) == 0 && in.Offset > 0 {
			b.Note("The offset is past the last chunk of this version.")
		}
	}
	out.Envelope = b.Envelope()
	return out, nil
}

// allChunks reads every chunk of one version of a document, in seq order.
func (rt *readTools) allChunks(ctx context.Context, c *tools.Call, doc string, version int) ([]records.Chunk, error) {
	var out []records.Chunk
	from := 1
	for {
		cp, err := rt.repo.Chunks(ctx, c.Who.Tenant, c.Matter.ID, doc, version, from, store.MaxQueryLimit)
		if err != nil {
			return nil, err
		}
		out = append(out, cp.Chunks...)
		if !cp.More {
			return out, nil
		}
		from = cp.NextSeq
	}
}

// SearchInDocumentInput names the document and the words to find.
type SearchInDocumentInput struct {
	DocumentInput
	Query string `json:"query" jsonschema:"Words to find; a passage matches when it contains every word." schema:"minLength=1;maxLength=512"`
	tools.Paging
}

// SearchInDocumentOutput is search_in_document's answer.
type SearchInDocumentOutput struct {
	attest.Envelope
	Document DocumentItem `json:"document"`
	Listing[Passage]
}

// searchInDocument returns the current version's passages that contain every
// query term, in page order.
func (rt *readTools) searchInDocument(ctx context.Context, c *tools.Call, in SearchInDocumentInput) (SearchInDocumentOutput, error) {
	terms := Terms(in.Query)
	if len(terms) == 0 {
		return SearchInDocumentOutput{}, tools.Invalid("query", msgNoTerms)
	}
	d, err := c.Funnel.Document(ctx, c.Who, c.Matter, in.DocumentID)
	if err != nil {
		return SearchInDocumentOutput{}, err // NOT_FOUND, absent and withheld alike
	}
	b := attest.New(c.Now, c.Matter.ID, "Read every chunk of the document's current version and kept those containing every query word; passages are quoted verbatim.")
	matterRow(b, c)
	out := SearchInDocumentOutput{Document: documentItem(c, d)}
	b.Row(out.Document.ProvenanceIDs[0], d.UpdatedAt)
	textNotes(b, d)
	chunks, err := rt.allChunks(ctx, c, d.ID, d.CurrentVersion)
	var hits []records.Chunk
	for _, ch := range chunks {
		if containsAll(termCounts(ch.Text), terms) {
			hits = append(hits, ch)
		}
	}
	out.Listing = listRows(b, "passages", hits, err, in.Paging,
		func(ch records.Chunk) (Passage, attest.Item, time.Time) {
			p := passage(c, d, ch)
			return p, p.Item, ch.UpdatedAt
		})
	out.Envelope = b.Envelope()
	return out, nil
}

func itoa(n int) string { return strconv.Itoa(n) }
