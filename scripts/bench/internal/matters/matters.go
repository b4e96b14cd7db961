// Package matters is the bench peers' whole "record": three matters in a Go
// map, looked up by case_id. Both peers serve exactly this data so that
// their answers are byte-for-byte comparable; neither touches a store,
// authenticates or audits (that is what the comparison with Custody is
// about).
package matters

import "fmt"

// Input is get_matter's arguments, the same shape Custody's get_matter takes.
type Input struct {
	CaseID string `json:"case_id" jsonschema:"the matter's case_id"`
}

// Matter is get_matter's structured result.
type Matter struct {
	CaseID       string   `json:"case_id"`
	Name         string   `json:"name"`
	Caption      string   `json:"caption"`
	Court        string   `json:"court"`
	DocketNumber string   `json:"docket_number"`
	Client       string   `json:"client"`
	Status       string   `json:"status"`
	OpenedOn     string   `json:"opened_on"`
	Team         []string `json:"team"`
}

// IDs are the case_ids the peers know, in a stable order.
var IDs = []string{"m_meridian", "m_harbor", "m_quill"}

var byID = map[string]Matter{
	"m_meridian": {
		CaseID: "m_meridian", Name: "Meridian Logistics v. Northgate Freight",
		Caption: "Meridian Logistics, Inc. v. Northgate Freight LLC", Court: "N.D. Ill.",
		DocketNumber: "1:25-cv-01873", Client: "Meridian Logistics, Inc.", Status: "open",
		OpenedOn: "2025-02-11", Team: []string{"p_dana_whitfield", "p_sam_okafor", "p_priya_nair"},
	},
	"m_harbor": {
		CaseID: "m_harbor", Name: "Harbor Point HOA v. Castellan Builders",
		Caption: "Harbor Point Homeowners Ass'n v. Castellan Builders Corp.", Court: "Cal. Super. Ct., San Diego",
		DocketNumber: "37-2024-00051122", Client: "Castellan Builders Corp.", Status: "open",
		OpenedOn: "2024-10-03", Team: []string{"p_dana_whitfield", "p_priya_nair"},
	},
	"m_quill": {
		CaseID: "m_quill", Name: "In re Quill Software Licensing",
		Caption: "In re Quill Software Licensing Arbitration", Court: "AAA Commercial",
		DocketNumber: "01-25-0004-1187", Client: "Quill Software Ltd.", Status: "closed",
		OpenedOn: "2023-06-19", Team: []string{"p_sam_okafor"},
	},
}

// UnknownError is Get's error for a case_id that is not one of IDs.
type UnknownError struct{ CaseID string }

func (e UnknownError) Error() string { return fmt.Sprintf("no matter %q", e.CaseID) }

// Get returns the matter named by caseID.
func Get(caseID string) (Matter, error) {
	m, ok := byID[caseID]
	if !ok {
		return Matter{}, UnknownError{CaseID: caseID}
	}
	return m, nil
}
