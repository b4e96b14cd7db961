package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// extractBytes runs e.Extract over b.
func extractBytes(t testing.TB, e *Extractor, b []byte, hint Hint) *Result {
	t.Helper()
	res, err := e.Extract(context.Background(), bytes.NewReader(b), int64(len(b)), hint)
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	return res
}

// pageTexts joins each page's chunks: page number → text.
func pageTexts(res *Result) map[int]string {
	m := map[int]string{}
	for _, c := range res.Chunks {
		m[c.Page] += c.Text
	}
	return m
}

func TestPDFPhraseOnPageTwoIsInPageTwosChunk(t *testing.T) {
	e := sharedExtractor(t)
	pdf := makePDF(t, pdfSpec{pages: [][]string{
		{"Engagement letter", "Alvarez v. Northwind"},
		{"Deposition of the plaintiff", "the blue ledger was never produced"},
		{"Exhibit list"},
	}})
	res := extractBytes(t, e, pdf, Hint{Filename: "depo.txt"})

	if res.MediaType != mediaPDF || res.TextState != Complete || res.Reason != "" || res.Pages != 3 {
		t.Fatalf("Extract = %s %s %q, %d pages; want %s complete, no reason, 3 pages",
			res.MediaType, res.TextState, res.Reason, res.Pages, mediaPDF)
	}
	texts := pageTexts(res)
	const phrase = "the blue ledger was never produced"
	for page := 1; page <= 3; page++ {
		if got, want := strings.Contains(texts[page], phrase), page == 2; got != want {
			t.Errorf("page %d text %q holds %q = %v, want %v", page, texts[page], phrase, got, want)
		}
	}
	if got, want := len(res.Chunks), 3; got != want {
		t.Errorf("len(Chunks) = %d, want %d (one per page)", got, want)
	}
}

func TestPDFOfTenThousandPagesIsPartialAtThePageLimit(t *testing.T) {
	e := sharedExtractor(t)
	pages := make([]string, 10000)
	for i := range pages {
		pages[i] = fmt.Sprintf("page %d", i+1)
	}
	// Uncompressed: fpdf deflates 10,000 pages slowly under -race.
	res := extractBytes(t, e, makePDF(t, pdfSpec{pages: pagesOf(pages...)}), Hint{})

	if got, want := res.TextState, Partial; got != want {
		t.Fatalf("TextState = %s (%s), want %s", got, res.Reason, want)
	}
	if diff := cmp.Diff([]Limit{LimitPages}, res.Limits); diff != "" {
		t.Errorf("Limits (-want +got):\n%s", diff)
	}
	if got, want := res.Reason, "page limit: 2000 of 10000 pages"; got != want {
		t.Errorf("Reason = %q, want %q", got, want)
	}
	if got, want := res.Pages, DefaultMaxPages; got != want {
		t.Errorf("Pages = %d, want %d", got, want)
	}
	last := res.Chunks[len(res.Chunks)-1]
	if got, want := last, (Chunk{Page: 2000, Text: "page 2000"}); got != want {
		t.Errorf("last chunk = %+v, want %+v", got, want)
	}
}

// denseSpec is a PDF whose text passes 20 MB in well under 2,000 pages:
// 120 pages of 55 lines, each about 1,100 characters of Windows-1252
// letters that are three bytes each in UTF-8 (about 180 KB per page, under
// the page limit).
func denseSpec() pdfSpec {
	var pages [][]string
	body := strings.Repeat("€…™•", 272)
	for p := range 120 {
		var lines []string
		for l := range 55 {
			lines = append(lines, fmt.Sprintf("p%d l%d %s", p, l, body))
		}
		pages = append(pages, lines)
	}
	return pdfSpec{pages: pages, fontSize: 4, lineStep: 2, compress: true}
}

func TestPDFWithMoreThanTwentyMBOfTextIsPartialAtTheTextLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 20 MB of PDF text (seconds); not in -short")
	}
	e := sharedExtractor(t)
	res := extractBytes(t, e, makePDF(t, denseSpec()), Hint{})

	if got, want := res.TextState, Partial; got != want {
		t.Fatalf("TextState = %s (%s), want %s", got, res.Reason, want)
	}
	if diff := cmp.Diff([]Limit{LimitText}, res.Limits); diff != "" {
		t.Errorf("Limits (-want +got):\n%s", diff)
	}
	total := 0
	for _, c := range res.Chunks {
		total += len(c.Text)
	}
	if total > DefaultMaxTextBytes || total < DefaultMaxTextBytes-4 {
		t.Errorf("text kept = %d bytes, want the first %d (to a rune)", total, DefaultMaxTextBytes)
	}
	if res.Pages >= 120 {
		t.Errorf("Pages = %d, want fewer than the 120 of the document", res.Pages)
	}
	if !strings.HasPrefix(res.Reason, "text limit: 20000000 bytes, reached on page ") {
		t.Errorf("Reason = %q, want it to name the text limit", res.Reason)
	}
}

func TestDamagedPDFIsPartialOrUnavailableWithAReason(t *testing.T) {
	e := sharedExtractor(t)
	three := makePDF(t, pdfSpec{pages: pagesOf("first page", "second page", "third page")})
	xref := bytes.LastIndex(three, []byte("xref"))
	secondPage := bytes.Index(three, []byte("second page"))
	if xref < 0 || secondPage < 0 {
		t.Fatal("generated PDF has no xref or no second page")
	}
	tests := []struct {
		name       string
		pdf        []byte
		wantState  TextState
		wantReason string
		wantPages  int
	}{
		{
			name:       "a PDF cut before its xref is partial: rebuilt, its text found",
			pdf:        three[:xref],
			wantState:  Partial,
			wantReason: "damaged PDF: cross-reference table rebuilt, pages or text may be missing",
			wantPages:  3,
		},
		{
			// fpdf writes page 1's object first, at offset 9.
			name:       "a PDF whose xref sends page 1 to a wrong offset is partial: page 1 unreadable",
			pdf:        bytes.Replace(three, []byte("0000000009 00000 n"), []byte("0000000999 00000 n"), 1),
			wantState:  Partial,
			wantReason: "page 1 unreadable",
			wantPages:  3,
		},
		{
			name:       "a PDF cut inside its second page is unreadable: its page tree is lost",
			pdf:        three[:secondPage],
			wantState:  Unavailable,
			wantReason: ReasonUnreadablePDF,
		},
		{
			name:       "a header and nothing else is unreadable",
			pdf:        []byte("%PDF-1.7\n"),
			wantState:  Unavailable,
			wantReason: ReasonUnreadablePDF,
		},
		{
			name:       "a header and noise is unreadable",
			pdf:        append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 4096)...),
			wantState:  Unavailable,
			wantReason: ReasonUnreadablePDF,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := extractBytes(t, e, tt.pdf, Hint{})
			if res.TextState != tt.wantState || res.Reason != tt.wantReason || res.Pages != tt.wantPages {
				t.Errorf("Extract = %s %q, %d pages; want %s %q, %d pages",
					res.TextState, res.Reason, res.Pages, tt.wantState, tt.wantReason, tt.wantPages)
			}
			if len(res.Limits) != 0 {
				t.Errorf("Limits = %v, want none", res.Limits)
			}
		})
	}
}

func TestEncryptedPDF(t *testing.T) {
	e := sharedExtractor(t)
	tests := []struct {
		name       string
		spec       pdfSpec
		wantState  TextState
		wantReason string
		wantText   string
	}{
		{
			name:       "a PDF that needs a password to open is unavailable: encrypted",
			spec:       pdfSpec{pages: pagesOf("sealed settlement terms"), userPassword: "open-sesame", ownerPassword: "owner"},
			wantState:  Unavailable,
			wantReason: ReasonEncrypted,
		},
		{
			name:      "a PDF encrypted with an empty user password opens without one, so its text is taken",
			spec:      pdfSpec{pages: pagesOf("printable, not editable"), ownerPassword: "owner"},
			wantState: Complete,
			wantText:  "printable, not editable",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pdf := makePDF(t, tt.spec)
			if !bytes.Contains(pdf, []byte("/Encrypt")) {
				t.Fatal("fpdf wrote no /Encrypt dictionary")
			}
			res := extractBytes(t, e, pdf, Hint{})
			if res.TextState != tt.wantState || res.Reason != tt.wantReason {
				t.Errorf("Extract = %s %q, want %s %q", res.TextState, res.Reason, tt.wantState, tt.wantReason)
			}
			if got := pageTexts(res)[1]; got != tt.wantText {
				t.Errorf("page 1 text = %q, want %q", got, tt.wantText)
			}
		})
	}
}

func TestPDFWithoutTextIsUnavailableNoTextLayer(t *testing.T) {
	e := sharedExtractor(t)
	res := extractBytes(t, e, makePDF(t, pdfSpec{pages: [][]string{{}, {}}}), Hint{})
	if res.TextState != Unavailable || res.Reason != ReasonNoTextLayer || res.Pages != 2 {
		t.Errorf("Extract = %s %q, %d pages; want unavailable %q, 2 pages", res.TextState, res.Reason, res.Pages, ReasonNoTextLayer)
	}
}

func TestPDFPageLongerThanAChunkIsSeveralChunksOfThatPage(t *testing.T) {
	e := sharedExtractor(t)
	var lines []string
	for i := range 200 {
		lines = append(lines, fmt.Sprintf("line %03d %s", i, strings.Repeat("x", 80)))
	}
	res := extractBytes(t, e, makePDF(t, pdfSpec{pages: [][]string{{"cover"}, lines}, fontSize: 2, lineStep: 1}), Hint{})
	if res.TextState != Complete {
		t.Fatalf("TextState = %s (%s), want complete", res.TextState, res.Reason)
	}
	var page2 []Chunk
	for _, c := range res.Chunks {
		if c.Page == 2 {
			page2 = append(page2, c)
		}
	}
	if len(page2) < 3 {
		t.Fatalf("page 2 is %d chunks, want at least 3 for ~18,000 characters", len(page2))
	}
	for i, c := range page2 {
		if n := len([]rune(c.Text)); n > DefaultChunkChars {
			t.Errorf("chunk %d of page 2 has %d characters, want at most %d", i, n, DefaultChunkChars)
		}
		if i < len(page2)-1 && !strings.HasSuffix(c.Text, "\n") {
			t.Errorf("chunk %d of page 2 ends %q, want a line break (the last one within the limit)", i, c.Text[len(c.Text)-10:])
		}
	}
	if got := pageTexts(res)[2]; !strings.Contains(got, "line 000") || !strings.Contains(got, "line 199") {
		t.Errorf("page 2 text lacks its first or last line")
	}
}

func TestPDFPastTheTimeLimitIsKilledAndTheNextDocumentIsRead(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 20 MB-text PDF; not in -short")
	}
	// 100 ms for a document that takes seconds: the limit is reached on any
	// machine, and the instance must be killed mid-call.
	e := newExtractor(t, &Options{TimeLimit: 100e6, Concurrency: 1})
	res := extractBytes(t, e, makePDF(t, denseSpec()), Hint{})
	if res.TextState == Complete || len(res.Limits) != 1 || res.Limits[0] != LimitTime {
		t.Fatalf("Extract = %s %q %v, want partial or unavailable at the time limit", res.TextState, res.Reason, res.Limits)
	}
	if !strings.HasPrefix(res.Reason, "time limit: 100ms, reached on page ") {
		t.Errorf("Reason = %q, want it to name the time limit", res.Reason)
	}
	// Concurrency 1: the next document gets an instance only if the killed
	// one was discarded. It gets the default limit: 100 ms is what the
	// first document was meant to hit, and a fresh instance on a loaded
	// machine could reach it too (no wall-clock assertion here).
	e.o.TimeLimit = DefaultTimeLimit
	next := extractBytes(t, e, makePDF(t, pdfSpec{pages: pagesOf("next event")}), Hint{})
	if next.TextState != Complete || pageTexts(next)[1] != "next event" {
		t.Errorf("next Extract = %s %q, page 1 %q; want complete \"next event\"", next.TextState, next.Reason, pageTexts(next)[1])
	}
}

func TestPDFWhenTheCallerGivesUpIsAnErrorNotAResult(t *testing.T) {
	e := sharedExtractor(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pdf := makePDF(t, pdfSpec{pages: pagesOf("never read")})
	res, err := e.Extract(ctx, bytes.NewReader(pdf), int64(len(pdf)), Hint{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Extract = %+v, %v; want context.Canceled", res, err)
	}
}

// failingReader fails every read past its first n bytes.
type failingReader struct {
	b []byte
	n int64
}

var errDisk = errors.New("disk read failed")

func (r failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > r.n {
		return 0, errDisk
	}
	return copy(p, r.b[off:]), nil
}

func TestFailingReaderIsAnErrorNotADamagedFile(t *testing.T) {
	e := sharedExtractor(t)
	pdf := makePDF(t, pdfSpec{pages: pagesOf("on a flaky disk")})
	text := []byte(strings.Repeat("plain text\n", 10000))
	tests := []struct {
		name string
		b    []byte
	}{
		{"a PDF", pdf},
		{"a text file", text},
	}
	for _, tt := range tests {
		t.Run(tt.name+" whose reader fails is an error wrapping the reader's", func(t *testing.T) {
			r := failingReader{b: tt.b, n: int64(len(tt.b)) / 2}
			res, err := e.Extract(context.Background(), r, int64(len(tt.b)), Hint{})
			if !errors.Is(err, errDisk) {
				t.Errorf("Extract = %+v, %v; want an error wrapping errDisk", res, err)
			}
		})
	}
}

func TestConcurrentPDFsEachGetTheirOwnText(t *testing.T) {
	e := newExtractor(t, &Options{Concurrency: 2})
	const n = 8
	pdfs := make([][]byte, n)
	for i := range pdfs {
		pdfs[i] = makePDF(t, pdfSpec{pages: pagesOf(fmt.Sprintf("document %d page one", i), fmt.Sprintf("document %d page two", i))})
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			res, err := e.Extract(context.Background(), bytes.NewReader(pdfs[i]), int64(len(pdfs[i])), Hint{})
			switch {
			case err != nil:
				errs[i] = err
			case pageTexts(res)[2] != fmt.Sprintf("document %d page two", i):
				errs[i] = fmt.Errorf("page 2 = %q", pageTexts(res)[2])
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("document %d: %v", i, err)
		}
	}
}

func TestPDFPageNeedingMoreThanTheEngineMemoryEndsTheDocumentNotTheProcess(t *testing.T) {
	// Page 2 holds 300,000 characters: PDFium's text page for it needs well
	// over 32 MiB.
	var lines []string
	for i := range 300 {
		lines = append(lines, fmt.Sprintf("%d %s", i, strings.Repeat("abcdefghij", 100)))
	}
	pdf := makePDF(t, pdfSpec{pages: [][]string{{"cover"}, lines, {"after"}}, fontSize: 1, lineStep: 0.5, compress: true})
	e := newExtractor(t, &Options{EngineMemory: 32 << 20, Concurrency: 1})

	res := extractBytes(t, e, pdf, Hint{})
	want := &Result{
		MediaType: mediaPDF,
		TextState: Partial,
		Reason:    "the PDF engine stopped on page 2: the page is damaged or needs more than 32 MiB of engine memory",
		Pages:     1,
		Chunks:    []Chunk{{Page: 1, Text: "cover"}},
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Extract (-want +got):\n%s", diff)
	}
	next := extractBytes(t, e, makePDF(t, pdfSpec{pages: pagesOf("next event")}), Hint{})
	if next.TextState != Complete || pageTexts(next)[1] != "next event" {
		t.Errorf("next Extract = %s %q, page 1 %q; want complete \"next event\"", next.TextState, next.Reason, pageTexts(next)[1])
	}
}
