package tools

// Tool-level pagination (docs/contracts.md §2): list-shaped tools return
// {"results": [...], "page": {...}}. has_more is always exact; next_offset
// is null on the last page; total appears only where it is counted without
// doing every page's work. A limit above the cap is clamped and echoed; a
// negative offset or a limit below 1 is refused by the input schema. The
// limit counts rows the caller receives: access filtering happens first.

// DefaultLimit and MaxLimit are the tool page size and its cap
// (docs/decisions.md "Time and size constants").
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// Paging is the offset/limit input of list-shaped tools; embed it.
type Paging struct {
	Offset int `json:"offset,omitempty" jsonschema:"Rows to skip; 0 (the default) starts at the first row." schema:"minimum=0"`
	Limit  int `json:"limit,omitempty" jsonschema:"Rows to return; default 20, at most 100 (larger values are clamped)." schema:"minimum=1"`
}

// Page is the pagination block of a list-shaped result.
type Page struct {
	Offset     int  `json:"offset"`
	Limit      int  `json:"limit"`
	Returned   int  `json:"returned"`
	HasMore    bool `json:"has_more"`
	NextOffset *int `json:"next_offset"`
	Total      *int `json:"total,omitempty"`
}

// Window returns the effective offset and limit: the default when the limit
// is absent, clamped to maxLimit.
func (p Paging) Window(maxLimit int) (offset, limit int) {
	limit = p.Limit
	if limit == 0 {
		limit = min(DefaultLimit, maxLimit)
	}
	return p.Offset, min(limit, maxLimit)
}

// Paginate returns the page of items at the paging window (items already
// filtered for access) and its block; total is reported when counted.
func Paginate[T any](items []T, p Paging, maxLimit int, counted bool) ([]T, Page) {
	offset, limit := p.Window(maxLimit)
	start := min(offset, len(items))
	end := min(start+limit, len(items))
	page := Page{Offset: offset, Limit: limit, Returned: end - start, HasMore: end < len(items)}
	if page.HasMore {
		next := end
		page.NextOffset = &next
	}
	if counted {
		total := len(items)
		page.Total = &total
	}
	out := items[start:end]
	if out == nil {
		out = []T{}
	}
	return out, page
}
