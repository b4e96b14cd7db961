package extract

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-pdf/fpdf"
)

// pdfSpec describes a PDF that makePDF writes with fpdf. Each page is a
// list of lines, drawn top to bottom; text is UTF-8 and must be in the core
// fonts' Windows-1252 repertoire.
type pdfSpec struct {
	pages    [][]string
	fontSize float64 // points; 12 when zero
	lineStep float64 // mm between lines; fontSize/2 when zero
	compress bool
	// userPassword and ownerPassword encrypt the document (RC4, fpdf's
	// only cipher) when either is set.
	userPassword, ownerPassword string
}

// fixedTime keeps fpdf's output byte-for-byte reproducible, so the seed
// corpus written from these specs can be checked against them.
var fixedTime = time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)

// makePDF writes the PDF of s.
func makePDF(tb testing.TB, s pdfSpec) []byte {
	tb.Helper()
	f := fpdf.New("P", "mm", "A4", "")
	f.SetCreationDate(fixedTime)
	f.SetModificationDate(fixedTime)
	f.SetCatalogSort(true)
	f.SetCompression(s.compress)
	if s.userPassword != "" || s.ownerPassword != "" {
		f.SetProtection(0, s.userPassword, s.ownerPassword)
	}
	size := s.fontSize
	if size == 0 {
		size = 12
	}
	step := s.lineStep
	if step == 0 {
		step = size / 2
	}
	f.SetFont("Helvetica", "", size)
	tr := f.UnicodeTranslatorFromDescriptor("")
	for _, lines := range s.pages {
		f.AddPage()
		for i, line := range lines {
			f.Text(10, 10+float64(i)*step, tr(line))
		}
	}
	var b bytes.Buffer
	if err := f.Output(&b); err != nil {
		tb.Fatalf("write PDF: %v", err)
	}
	return b.Bytes()
}

// pagesOf is a spec's pages of one line each.
func pagesOf(lines ...string) [][]string {
	pages := make([][]string, len(lines))
	for i, l := range lines {
		pages[i] = []string{l}
	}
	return pages
}

var (
	sharedOnce sync.Once
	shared     *Extractor
	sharedErr  error
)

// testCacheDir keeps the compiled engine between test processes (each fuzz
// worker is one), under the user's own cache directory; "" (in memory) when
// there is none.
func testCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "custody", "extract-pdfium")
}

// sharedExtractor is one Extractor with default limits for the package's
// tests: compiling the engine takes seconds, so it is done once.
func sharedExtractor(tb testing.TB) *Extractor {
	tb.Helper()
	sharedOnce.Do(func() { shared, sharedErr = New(&Options{CacheDir: testCacheDir()}) })
	if sharedErr != nil {
		tb.Fatalf("New(nil): %v", sharedErr)
	}
	return shared
}

// newExtractor builds an Extractor with opts (and the tests' cache
// directory), closed when tb ends.
func newExtractor(tb testing.TB, opts *Options) *Extractor {
	tb.Helper()
	opts.CacheDir = testCacheDir()
	e, err := New(opts)
	if err != nil {
		tb.Fatalf("New(%+v): %v", opts, err)
	}
	tb.Cleanup(func() {
		if err := e.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return e
}
