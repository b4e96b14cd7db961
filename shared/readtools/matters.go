package readtools

import (
	"context"

	"github.com/custodymcp/custody/shared/attest"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/tools"
)

// ListMattersInput pages through the reachable matters.
type ListMattersInput struct {
	tools.Paging
}

// MatterSummary is a matter in a listing.
type MatterSummary struct {
	CaseID       string      `json:"case_id"`
	Name         string      `json:"name"`
	Caption      string      `json:"caption"`
	Court        string      `json:"court"`
	DocketNumber string      `json:"docket_number"`
	Client       string      `json:"client"`
	ClientRole   string      `json:"client_role"`
	PracticeArea string      `json:"practice_area"`
	Status       string      `json:"status"`
	OpenedOn     string      `json:"opened_on"`
	UpdatedAt    attest.Time `json:"updated_at"`
	attest.Item
}

// ListMattersOutput is list_matters' answer.
type ListMattersOutput struct {
	attest.Envelope
	Results          *[]MatterSummary `json:"results"`
	ResultsReadState attest.ReadState `json:"results_read_state"`
	Page             *tools.Page      `json:"page"`
}

func matterStatus(m records.Matter) attest.Status {
	if m.SourceDocumentID != "" {
		return attest.Grounded
	}
	return attest.Ungrounded
}

func matterProvenance(c *tools.Call, m records.Matter) []string {
	ids := []string{urn(c, "matter", m.ID)}
	if m.SourceDocumentID != "" {
		ids = append(ids, urn(c, "document", m.SourceDocumentID))
	}
	return ids
}

// sourceRefs names the source documents of matters that cite one.
func sourceRefs(ms ...records.Matter) []records.DocumentRef {
	var refs []records.DocumentRef
	for _, m := range ms {
		if m.SourceDocumentID != "" {
			refs = append(refs, records.DocumentRef{Matter: m.ID, ID: m.SourceDocumentID})
		}
	}
	return refs
}

// shown returns m as the caller may see it: a source document it may not
// see is left out, as if the record cited none.
func shown(m records.Matter, sees func(records.DocumentRef) bool) records.Matter {
	if m.SourceDocumentID != "" && !sees(records.DocumentRef{Matter: m.ID, ID: m.SourceDocumentID}) {
		m.SourceDocumentID = ""
	}
	return m
}

func summarize(c *tools.Call, m records.Matter) MatterSummary {
	return MatterSummary{
		CaseID: m.ID, Name: m.Name, Caption: m.Caption, Court: m.Court,
		DocketNumber: m.DocketNumber, Client: m.Client, ClientRole: m.ClientRole,
		PracticeArea: m.PracticeArea, Status: string(m.Status), OpenedOn: m.OpenedOn,
		UpdatedAt: attest.At(m.UpdatedAt),
		Item:      attest.Item{ProvenanceIDs: matterProvenance(c, m), VerificationStatus: matterStatus(m)},
	}
}

// listMatters lists the matters the funnel says the credential reaches. The
// matter rows are the primary read: a failure is refused UNAVAILABLE.
func (rt *readTools) listMatters(ctx context.Context, c *tools.Call, in ListMattersInput) (ListMattersOutput, error) {
	matters, err := c.Funnel.Matters(ctx, c.Who)
	if err != nil {
		return ListMattersOutput{}, err
	}
	b := attest.New(c.Now, "", "Listed the matter rows this credential reaches; a matter is grounded when it cites the pleading that opened it.")
	clientSafeNote(b, c)
	page, block := tools.Paginate(matters, in.Paging, tools.MaxLimit, true)
	sees, err := rt.citedVisible(ctx, c, sourceRefs(page...))
	if err != nil {
		return ListMattersOutput{}, err
	}
	results := make([]MatterSummary, len(page))
	for i, m := range page {
		results[i] = summarize(c, shown(m, sees))
		citeMatter(b, c, m)
		b.Add(results[i].Item)
	}
	return ListMattersOutput{
		Envelope: b.Envelope(), Results: &results,
		ResultsReadState: attest.ReadStateOf(len(matters), nil), Page: &block,
	}, nil
}

// GetMatterInput names the matter.
type GetMatterInput struct {
	CaseInput
}

// MatterDetail is one matter.
type MatterDetail struct {
	MatterSummary
	Team             []string `json:"team"`
	SourceDocumentID string   `json:"source_document_id"`
	ClosedOn         string   `json:"closed_on"`
}

// GetMatterOutput is get_matter's answer.
type GetMatterOutput struct {
	attest.Envelope
	Matter MatterDetail `json:"matter"`
}

// getMatter answers one matter: the row the access funnel already read, so
// it costs no further read (but for a client-safe credential, the privilege
// of the cited source document). Its deadlines and notes are
// list_deadlines' and list_case_notes' (filter and page there).
func (rt *readTools) getMatter(ctx context.Context, c *tools.Call, _ GetMatterInput) (GetMatterOutput, error) {
	sees, err := rt.citedVisible(ctx, c, sourceRefs(c.Matter))
	if err != nil {
		return GetMatterOutput{}, err
	}
	m := shown(c.Matter, sees)
	b := attest.New(c.Now, m.ID, "Read the matter row; a matter is grounded when it cites the pleading that opened it.")
	matterRow(b, c)
	clientSafeNote(b, c)
	out := GetMatterOutput{Matter: MatterDetail{
		MatterSummary: summarize(c, m), Team: m.Team,
		SourceDocumentID: m.SourceDocumentID, ClosedOn: m.ClosedOn,
	}}
	if out.Matter.Team == nil {
		out.Matter.Team = []string{}
	}
	b.Add(out.Matter.Item)
	out.Envelope = b.Envelope()
	return out, nil
}
