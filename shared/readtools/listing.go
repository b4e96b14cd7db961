package readtools

import (
	"time"

	"github.com/custodymcp/custody/shared/attest"
	"github.com/custodymcp/custody/shared/tools"
)

// Listing is the collection of a list-shaped read tool (docs/contracts.md §2):
// the results, their read state and the page block. Results and page are
// null when the collection could not be read — never [].
type Listing[I any] struct {
	Results          *[]I             `json:"results"`
	ResultsReadState attest.ReadState `json:"results_read_state"`
	Page             *tools.Page      `json:"page"`
}

// listRows builds a Listing from rows read with err. An unreadable
// collection is null and makes the roll-up unknown (attest.Builder.
// Unreadable, naming what); otherwise the page of rows — already filtered
// for access, so the limit counts what the caller receives — becomes items,
// each counted in the attestation: its status and provenance, and its row's
// update time toward as_of.
func listRows[R, I any](b *attest.Builder, what string, rows []R, err error, p tools.Paging,
	item func(R) (I, attest.Item, time.Time)) Listing[I] {
	if err != nil {
		b.Unreadable(what)
		return Listing[I]{ResultsReadState: attest.StateUnreadable}
	}
	page, block := tools.Paginate(rows, p, tools.MaxLimit, true)
	results := make([]I, len(page))
	for i, r := range page {
		var a attest.Item
		var updated time.Time
		results[i], a, updated = item(r)
		b.Row(a.ProvenanceIDs[0], updated)
		b.Add(a)
	}
	return Listing[I]{Results: &results, ResultsReadState: attest.ReadStateOf(len(rows), nil), Page: &block}
}
