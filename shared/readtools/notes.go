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
	ID         string    `json:"id"`
	Author     string    `json:"author"`
	Body       string    `json:"body"`
	Privilege  string    `json:"privilege"`
	DocumentID string    `json:"document_id"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	attest.Item
}

// ListCaseNotesOutput is list_case_notes' answer.
type ListCaseNotesOutput struct {
	attest.Envelope
	Results          *[]NoteItem      `json:"results"`
	ResultsReadState attest.ReadState `json:"results_read_state"`
	Page             *tools.Page      `json:"page"`
}

func noteItem(c *tools.Call, n records.Note) NoteItem {
	status := attest.Ungrounded
	ids := []string{urn(c, "note", n.ID)}
	if n.DocumentID != "" {
		status = attest.Grounded
		ids = append(ids, urn(c, "document", n.DocumentID))
	}
	return NoteItem{
		ID: n.ID, Author: n.Author, Body: n.Body, Privilege: string(n.Privilege),
		DocumentID: n.DocumentID, CreatedAt: n.CreatedAt.UTC(), UpdatedAt: n.UpdatedAt.UTC(),
		Item: attest.Item{ProvenanceIDs: ids, VerificationStatus: status},
	}
}

// listCaseNotes lists a matter's notes, newest first, privilege-filtered
// for client-safe credentials before paging.
func (rt *readTools) listCaseNotes(ctx context.Context, c *tools.Call, in ListCaseNotesInput) (ListCaseNotesOutput, error) {
	b := attest.New(c.Now, c.Matter.ID, "Read the matter's case notes; a note is grounded only when it cites a document, otherwise it is its author's statement.")
	matterRow(b, c)
	clientSafeNote(b, c)
	var out ListCaseNotesOutput
	all, err := rt.repo.Notes(ctx, c.Who.Tenant, c.Matter.ID)
	if err != nil {
		out.ResultsReadState = attest.StateUnreadable
		b.Unreadable("case notes")
		out.Envelope = b.Envelope()
		return out, nil
	}
	seen := visible(c, all, func(n records.Note) records.Privilege { return n.Privilege })
	page, block := tools.Paginate(seen, in.Paging, tools.MaxLimit, true)
	results := make([]NoteItem, len(page))
	for i, n := range page {
		results[i] = noteItem(c, n)
		b.Row(results[i].ProvenanceIDs[0], n.UpdatedAt)
		b.Add(results[i].Item)
	}
	out.Results, out.Page = &results, &block
	out.ResultsReadState = attest.ReadStateOf(len(seen), nil)
	out.Envelope = b.Envelope()
	return out, nil
}
