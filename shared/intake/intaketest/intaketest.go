// Package intaketest makes the files intake's tests and the dev server's
// walk-through upload: PDFs written with github.com/go-pdf/fpdf, one page
// per entry, each page its lines top to bottom.
package intaketest

import (
	"bytes"
	"testing"
	"time"

	"github.com/go-pdf/fpdf"
)

// fixedTime keeps the output reproducible.
var fixedTime = time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)

// PDF writes a PDF with one page per entry of pages, each page's lines in
// 12-point Helvetica (text in the Windows-1252 repertoire).
func PDF(tb testing.TB, pages ...[]string) []byte {
	tb.Helper()
	f := fpdf.New("P", "mm", "A4", "")
	f.SetCreationDate(fixedTime)
	f.SetModificationDate(fixedTime)
	f.SetFont("Helvetica", "", 12)
	tr := f.UnicodeTranslatorFromDescriptor("")
	for _, lines := range pages {
		f.AddPage()
		for i, line := range lines {
			f.Text(10, 20+float64(i)*7, tr(line))
		}
	}
	var b bytes.Buffer
	if err := f.Output(&b); err != nil {
		tb.Fatalf("write PDF: %v", err)
	}
	return b.Bytes()
}

// ThreePages is the three-page PDF of the walk-through: a phrase of its
// own on each page (ThreePagePhrases), so a search for one names its page.
func ThreePages(tb testing.TB) []byte {
	tb.Helper()
	return PDF(tb,
		[]string{"Statement of the Alvarez site inspection.", ThreePagePhrases[0]},
		[]string{"Observations recorded on the second visit.", ThreePagePhrases[1]},
		[]string{"Conclusions of the inspector.", ThreePagePhrases[2]},
	)
}

// ThreePagePhrases are the phrases of ThreePages, page 1 to 3: words no
// seeded document holds.
var ThreePagePhrases = [3]string{
	"The quartermaster logged amberjack crates at dawn.",
	"The periwinkle scaffolding buckled under the gantry.",
	"The inspector found the lodestone ledger incomplete.",
}
