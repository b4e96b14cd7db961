package readtools

import (
	"context"
	"time"

	"github.com/custodymcp/custody/shared/attest"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/tools"
)

// ListCaseNotesInput names the matter and the page.
type ListCaseNotesInput struct {
	CaseInput
	tools.Paging
}

// NoteItem is one case note.
type NoteItem struct {
	ID         string      `json:"id"`
	Author     string      `json:"author"`
	Body       string      `json:"body"`
	Privilege  string      `json:"privilege"`
	DocumentID string      `json:"document_id"`
	CreatedAt  attest.Time `json:"created_at"`
	UpdatedAt  attest.Time `json:"updated_at"`
	attest.Item
}

// ListCaseNotesOutput is list_case_notes' answer.
type ListCaseNotesOutput struct {
	attest.Envelope
	Listing[NoteItem]
}

// noteItem describes a note; a cited document the caller may not see is
// left out, as if the note cited none.
func noteItem(c *tools.Call, n records.Note, citationVisible bool) NoteItem {
	if !citationVisible {
		n.DocumentID = ""
	}
	status := attest.Ungrounded
	ids := []string{urn(c, "note", n.ID)}
	if n.DocumentID != "" {
		status = attest.Grounded
		ids = append(ids, urn(c, "document", n.DocumentID))
	}
	return NoteItem{
		ID: n.ID, Author: n.Author, Body: n.Body, Privilege: string(n.Privilege),
		DocumentID: n.DocumentID, CreatedAt: attest.At(n.CreatedAt), UpdatedAt: attest.At(n.UpdatedAt),
		Item: attest.Item{ProvenanceIDs: ids, VerificationStatus: status},
	}
}

// listCaseNotes lists a matter's notes, newest first, privilege-filtered
// for client-safe credentials before paging.
func (rt *readTools) listCaseNotes(ctx context.Context, c *tools.Call, in ListCaseNotesInput) (ListCaseNotesOutput, error) {
	b := attest.New(c.Now, c.Matter.ID, "Read the matter's case notes; a note is grounded only when it cites a document, otherwise it is its author's statement.")
	matterRow(b, c)
	clientSafeNote(b, c)
	all, err := rt.repo.Notes(ctx, c.Who.Tenant, c.Matter.ID)
	seen := visible(c, all, func(n records.Note) records.Privilege { return n.Privilege })
	var cited []records.DocumentRef
	for _, n := range seen {
		if n.DocumentID != "" {
			cited = append(cited, records.DocumentRef{Matter: c.Matter.ID, ID: n.DocumentID})
		}
	}
	var sees func(records.DocumentRef) bool
	if err == nil {
		sees, err = rt.citedVisible(ctx, c, cited)
	}
	out := ListCaseNotesOutput{Listing: listRows(b, "case notes", seen, err, in.Paging,
		func(n records.Note) (NoteItem, attest.Item, time.Time) {
			it := noteItem(c, n, n.DocumentID == "" || sees(records.DocumentRef{Matter: c.Matter.ID, ID: n.DocumentID}))
			return it, it.Item, n.UpdatedAt
		})}
	out.Envelope = b.Envelope()
	return out, nil
}
