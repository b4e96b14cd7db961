package readtools

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/custodymcp/custody/shared/attest"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/tools"
)

// stopwords are too common in legal prose to rank by.
var stopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"for": true, "from": true, "in": true, "is": true, "it": true, "of": true, "on": true, "or": true,
	"that": true, "the": true, "this": true, "to": true, "was": true, "were": true, "with": true,
}

// msgNoTerms refuses a query with no search term left.
const msgNoTerms = "The field 'query' must contain a word of two or more letters or digits that is not a stop word such as \"the\" or \"and\"."

// Terms splits text into lower-case search terms: runs of letters and
// digits, stopwords dropped, one-letter words dropped.
func Terms(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(w) > 1 && !stopwords[w] {
			out = append(out, w)
		}
	}
	return out
}

func termCounts(text string) map[string]int {
	counts := map[string]int{}
	for _, t := range Terms(text) {
		counts[t]++
	}
	return counts
}

func containsAll(counts map[string]int, terms []string) bool {
	for _, t := range terms {
		if counts[t] == 0 {
			return false
		}
	}
	return true
}

// SearchDocumentsInput is the query, an optional matter and the page.
type SearchDocumentsInput struct {
	Query  string `json:"query" jsonschema:"Words to search for (lexical; ranked by BM25)." schema:"minLength=1;maxLength=512"`
	CaseID string `json:"case_id,omitempty" jsonschema:"Search only this matter; default every matter this credential reaches." schema:"minLength=1;maxLength=128"`
	tools.Paging
}

// MatterID implements tools.MatterScoped: an optional matter is resolved
// through the funnel when given.
func (in SearchDocumentsInput) MatterID() string { return in.CaseID }

// SearchHit is one ranked passage.
type SearchHit struct {
	CaseID        string  `json:"case_id"`
	DocumentTitle string  `json:"document_title"`
	Score         float64 `json:"score"`
	Passage
}

// SearchDocumentsOutput is search_documents' answer.
type SearchDocumentsOutput struct {
	attest.Envelope
	Results          *[]SearchHit     `json:"results"`
	ResultsReadState attest.ReadState `json:"results_read_state"`
	Page             *tools.Page      `json:"page"`
}

type candidate struct {
	matter records.Matter
	doc    records.Document
	chunk  records.Chunk
	counts map[string]int
	length int
	score  float64
}

// BM25 parameters (Robertson & Zaragoza's customary defaults).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// searchDocuments ranks the current text of every reachable document.
// Access filtering (funnel, privilege) happens before ranking, so corpus
// statistics and ranks never reflect what the caller cannot see; the ranked
// window is capped (200) and paged. A matter whose text cannot be read makes
// the whole answer unreadable: a ranking over part of the record would
// misstate what the record holds.
func (rt *readTools) searchDocuments(ctx context.Context, c *tools.Call, in SearchDocumentsInput) (SearchDocumentsOutput, error) {
	terms := Terms(in.Query)
	if len(terms) == 0 {
		return SearchDocumentsOutput{}, tools.Invalid("query", msgNoTerms)
	}
	matters := []records.Matter{c.Matter}
	if in.CaseID == "" {
		var err error
		if matters, err = c.Funnel.Matters(ctx, c.Who); err != nil {
			return SearchDocumentsOutput{}, err
		}
	}
	b := attest.New(c.Now, in.CaseID, "Ranked the current text of every document this credential can reach by BM25 over the query's words; passages are quoted verbatim and grounded as pages of their documents.")
	clientSafeNote(b, c)
	var out SearchDocumentsOutput
	var cands []*candidate
	for _, m := range matters {
		citeMatter(b, c, m)
		got, err := rt.matterCandidates(ctx, c, m)
		if err != nil {
			out.ResultsReadState = attest.StateUnreadable
			b.Unreadable("passages")
			out.Envelope = b.Envelope()
			return out, nil
		}
		cands = append(cands, got...)
	}
	ranked := rank(cands, terms)
	if len(ranked) > rt.searchWindow {
		ranked = ranked[:rt.searchWindow]
		b.Note(fmt.Sprintf("Only the %d best-ranked passages are kept; refine the query to see others.", rt.searchWindow))
	}
	page, block := tools.Paginate(ranked, in.Paging, tools.MaxLimit, true)
	results := make([]SearchHit, len(page))
	var docs []records.Document
	for i, cd := range page {
		results[i] = SearchHit{CaseID: cd.matter.ID, DocumentTitle: cd.doc.Title,
			Score: math.Round(cd.score*1000) / 1000, Passage: passage(c, cd.doc, cd.chunk)}
		b.Row(urn(c, "document", cd.doc.ID), cd.doc.UpdatedAt)
		docs = append(docs, cd.doc)
		b.Row(results[i].ProvenanceIDs[0], cd.chunk.UpdatedAt)
		b.Add(results[i].Item)
	}
	textNotes(b, docs...)
	out.Results, out.Page = &results, &block
	out.ResultsReadState = attest.ReadStateOf(len(ranked), nil)
	out.Envelope = b.Envelope()
	return out, nil
}

// matterCandidates reads a matter's documents and the chunks of their
// current versions the caller may see.
func (rt *readTools) matterCandidates(ctx context.Context, c *tools.Call, m records.Matter) ([]*candidate, error) {
	docs, err := c.Funnel.Documents(ctx, c.Who, m)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]records.Document, len(docs))
	for _, d := range docs {
		byID[d.ID] = d
	}
	var out []*candidate
	for ch, err := range rt.repo.AllChunks(ctx, c.Who.Tenant, m.ID) {
		if err != nil {
			return nil, err
		}
		d, ok := byID[ch.DocumentID]
		if !ok || ch.Version != d.CurrentVersion || !c.Sees(ch.Privilege) {
			continue
		}
		counts := termCounts(ch.Text)
		length := 0
		for _, n := range counts {
			length += n
		}
		out = append(out, &candidate{matter: m, doc: d, chunk: ch, counts: counts, length: length})
	}
	return out, nil
}

// rank scores candidates by BM25 over the visible corpus and returns those
// matching any term, best first (ties in record order).
func rank(cands []*candidate, terms []string) []*candidate {
	if len(cands) == 0 {
		return nil
	}
	df := map[string]int{}
	total := 0
	for _, cd := range cands {
		total += cd.length
		for _, t := range terms {
			if cd.counts[t] > 0 {
				df[t]++
			}
		}
	}
	avg := float64(total) / float64(len(cands))
	n := float64(len(cands))
	var hits []*candidate
	for _, cd := range cands {
		score := 0.0
		for _, t := range terms {
			tf := float64(cd.counts[t])
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
			score += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(cd.length)/avg))
		}
		if score > 0 {
			cd.score = score
			hits = append(hits, cd)
		}
	}
	slices.SortStableFunc(hits, func(a, b *candidate) int { return cmp.Compare(b.score, a.score) })
	return hits
}
