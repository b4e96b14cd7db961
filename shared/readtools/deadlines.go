package readtools

import (
	"context"
	"time"

	"github.com/custodymcp/custody/shared/attest"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/tools"
)

// ListDeadlinesInput names the matter, an optional status and the page.
type ListDeadlinesInput struct {
	CaseInput
	Status string `json:"status,omitempty" jsonschema:"Only deadlines with this status: open or done." schema:"enum=open|done"`
	tools.Paging
}

// DeadlineSource is where a deadline's date comes from: a rule or order, a
// source document page, or both (null where the record cites none).
type DeadlineSource struct {
	Rule       *string `json:"rule"`
	DocumentID *string `json:"document_id"`
	Page       *int    `json:"page"`
}

func deadlineSource(d records.Deadline) DeadlineSource {
	var src DeadlineSource
	if d.Rule != "" {
		src.Rule = &d.Rule
	}
	if d.SourceDocumentID != "" {
		src.DocumentID = &d.SourceDocumentID
		if d.SourcePage > 0 {
			src.Page = &d.SourcePage
		}
	}
	return src
}

// DeadlineItem is one deadline.
type DeadlineItem struct {
	ID             string         `json:"id"`
	Title          string         `json:"title"`
	DueDate        string         `json:"due_date"`
	Kind           string         `json:"kind"`
	Status         string         `json:"status"`
	Source         DeadlineSource `json:"source"`
	DocketingCheck *check         `json:"docketing_check"`
	UpdatedAt      attest.Time    `json:"updated_at"`
	attest.Item
}

// ListDeadlinesOutput is list_deadlines' answer.
type ListDeadlinesOutput struct {
	attest.Envelope
	Listing[DeadlineItem]
}

// deadlineItem describes a deadline; a source document the caller may not
// see is left out, as if the record cited none.
func deadlineItem(c *tools.Call, d records.Deadline, sourceVisible bool) DeadlineItem {
	if !sourceVisible {
		d.SourceDocumentID, d.SourcePage = "", 0
	}
	status := attest.Ungrounded
	ids := []string{urn(c, "deadline", d.ID)}
	if d.Rule != "" || d.SourceDocumentID != "" {
		status = attest.Grounded
	}
	if d.SourceDocumentID != "" {
		ids = append(ids, urn(c, "document", d.SourceDocumentID))
	}
	if d.DocketingCheck != nil && d.DocketingCheck.Result == records.CheckConfirmed {
		status = attest.Verified
	}
	return DeadlineItem{
		ID: d.ID, Title: d.Title, DueDate: d.Due, Kind: d.Kind, Status: string(d.Status),
		Source:         deadlineSource(d),
		DocketingCheck: checkOf(d.DocketingCheck), UpdatedAt: attest.At(d.UpdatedAt),
		Item: attest.Item{ProvenanceIDs: ids, VerificationStatus: status},
	}
}

// listDeadlines lists a matter's deadlines by due date.
func (rt *readTools) listDeadlines(ctx context.Context, c *tools.Call, in ListDeadlinesInput) (ListDeadlinesOutput, error) {
	b := attest.New(c.Now, c.Matter.ID, "Read the matter's deadline rows; a deadline is verified only when a recorded docketing check confirmed it, grounded when it cites a rule or source document.")
	matterRow(b, c)
	clientSafeNote(b, c)
	all, err := rt.repo.Deadlines(ctx, c.Who.Tenant, c.Matter.ID)
	var kept []records.Deadline
	var cited []records.DocumentRef
	for _, d := range all {
		if in.Status == "" || string(d.Status) == in.Status {
			kept = append(kept, d)
			if d.SourceDocumentID != "" {
				cited = append(cited, records.DocumentRef{Matter: c.Matter.ID, ID: d.SourceDocumentID})
			}
		}
	}
	var sees func(records.DocumentRef) bool
	if err == nil {
		sees, err = rt.citedVisible(ctx, c, cited)
	}
	out := ListDeadlinesOutput{Listing: listRows(b, "deadlines", kept, err, in.Paging,
		func(d records.Deadline) (DeadlineItem, attest.Item, time.Time) {
			it := deadlineItem(c, d, sees(records.DocumentRef{Matter: c.Matter.ID, ID: d.SourceDocumentID}))
			return it, it.Item, d.UpdatedAt
		})}
	out.Envelope = b.Envelope()
	return out, nil
}
