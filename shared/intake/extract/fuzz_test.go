package extract

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// updateSeeds rewrites testdata/fuzz from the seeds below:
//
//	go test ./shared/intake/extract -run TestFuzzSeedCorpus -args -update-seeds
var updateSeeds = flag.Bool("update-seeds", false, "rewrite testdata/fuzz from the seeds in fuzz_test.go")

// textSeed is one FuzzTextPages input: the file, and the page and chunk
// lengths as fuzzChars reads them (0 = the default).
type textSeed struct {
	in                []byte
	pageChars, chunks byte
}

func textSeeds() map[string]textSeed {
	return map[string]textSeed{
		"crlf-lines":                {[]byte(strings.Repeat("line of text\r\n", 400)), 0, 0},
		"long-line":                 {[]byte("short\r\n" + strings.Repeat("a", 5000) + "\r\nend"), 0, 0},
		"crlf-at-the-cut":           {[]byte("abcdefg\r\nhij"), 6, 3},
		"form-feeds":                {[]byte("one\f\ftwo\fthree\f"), 5, 2},
		"bom-and-controls":          {[]byte("\uFEFFa\x00b\rc\r\r\nd\x7f\u0085e\t\n"), 3, 2},
		"multibyte-boundary":        {[]byte(strings.Repeat("é€😀", 40)), 7, 4},
		"not-utf8":                  {[]byte("valid then \xff invalid"), 0, 0},
		"markdown":                  {[]byte("# Title\n\n- item\n- item two\n\n```go\nx := 1\n```\n"), 9, 5},
		"empty":                     {nil, 0, 0},
		"only-a-cr":                 {[]byte("\r"), 6, 3},
		"crlf-after-a-full-page":    {[]byte("0000\r\n"), 2, 0},
		"short-line-then-long-crlf": {[]byte("\n000\r\n"), 2, 0},
	}
}

// pdfSeeds are FuzzPDFText's seed documents.
func pdfSeeds(tb testing.TB) map[string][]byte {
	three := makePDF(tb, pdfSpec{pages: pagesOf("first page", "second page holds the phrase", "third page")})
	long := make([]string, 120)
	for i := range long {
		long[i] = fmt.Sprintf("line %03d of a long page %s", i, strings.Repeat("z", 60))
	}
	return map[string][]byte{
		"one-page":         makePDF(tb, pdfSpec{pages: pagesOf("a single page")}),
		"three-pages":      three,
		"compressed":       makePDF(tb, pdfSpec{pages: pagesOf("deflated one", "deflated two"), compress: true}),
		"encrypted":        makePDF(tb, pdfSpec{pages: pagesOf("sealed"), userPassword: "user", ownerPassword: "owner"}),
		"owner-password":   makePDF(tb, pdfSpec{pages: pagesOf("open to read"), ownerPassword: "owner"}),
		"no-text":          makePDF(tb, pdfSpec{pages: [][]string{{}}}),
		"long-page":        makePDF(tb, pdfSpec{pages: [][]string{long}, fontSize: 3, lineStep: 1.5}),
		"cut-before-xref":  three[:bytes.LastIndex(three, []byte("xref"))],
		"cut-in-page-two":  three[:bytes.Index(three, []byte("second page"))],
		"winansi-letters":  makePDF(tb, pdfSpec{pages: pagesOf("Café, naïve, €5 — “quoted” … ™")}),
		"header-and-noise": append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 64)...),
	}
}

// corpusFile encodes values as a Go fuzz corpus file ("go test fuzz v1").
func corpusFile(values ...any) []byte {
	var b bytes.Buffer
	b.WriteString("go test fuzz v1\n")
	for _, v := range values {
		switch v := v.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", v)
		case byte:
			fmt.Fprintf(&b, "byte(%q)\n", v)
		}
	}
	return b.Bytes()
}

// TestFuzzSeedCorpus holds testdata/fuzz, which `go test` replays through
// both fuzz targets, to the seeds above: a seed deleted or edited by hand
// fails here. -update-seeds rewrites it.
func TestFuzzSeedCorpus(t *testing.T) {
	want := map[string][]byte{}
	for name, s := range textSeeds() {
		want[filepath.Join("FuzzTextPages", name)] = corpusFile(s.in, s.pageChars, s.chunks)
	}
	for name, pdf := range pdfSeeds(t) {
		want[filepath.Join("FuzzPDFText", name)] = corpusFile(pdf)
	}
	for rel, b := range want {
		path := filepath.Join("testdata", "fuzz", rel)
		if *updateSeeds {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("seed %s: %v (go test -run TestFuzzSeedCorpus -args -update-seeds writes it)", rel, err)
			continue
		}
		if !bytes.Equal(got, b) {
			t.Errorf("seed %s differs from its generator (-update-seeds rewrites it)", rel)
		}
	}
}

// fuzzChars maps a fuzzed byte to a page or chunk length: 0 is the
// default, anything else a short length (2..65) that forces many cuts.
func fuzzChars(b byte, def int) int {
	if b == 0 {
		return def
	}
	return 2 + int(b)%64
}

// FuzzTextPages checks the text page rule on any bytes: a file that is not
// UTF-8 has no pages; otherwise the pages, in order, are the file's text
// less its removed control characters, leading byte order mark and form
// feeds, form feed by form feed; no page splits a rune or a CRLF pair or
// passes PageChars; a page cut inside a segment ends at its last line
// break, or holds none when its line was too long, and could not have been
// longer; and the chunks are the pages cut at ChunkChars.
func FuzzTextPages(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte, pageChars, chunkChars byte) {
		o, err := (&Options{
			PageChars:  fuzzChars(pageChars, DefaultPageChars),
			ChunkChars: fuzzChars(chunkChars, DefaultChunkChars),
			MaxPages:   1 << 30, // no page limit: every byte is read
		}).withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		read, err := readTextPages(context.Background(), bytes.NewReader(in), o)
		if err != nil {
			t.Fatalf("readTextPages: %v", err)
		}
		if read.stopped != "" {
			t.Fatalf("readTextPages stopped at the %s on %d bytes", read.stopped, len(in))
		}
		if got, want := read.invalid, !utf8.Valid(in); got != want {
			t.Fatalf("invalid = %v, want %v", got, want)
		}
		if read.invalid {
			return
		}

		// The segments the pages must rebuild, by an independent reading:
		// drop a leading BOM, split at form feeds, sanitize each; a final
		// segment left empty is none.
		segments := strings.Split(strings.TrimPrefix(string(in), "\uFEFF"), "\f")
		for i := range segments {
			segments[i] = sanitize(segments[i])
		}
		if segments[len(segments)-1] == "" {
			segments = segments[:len(segments)-1]
		}
		pages := read.pages
		for si, seg := range segments {
			var mine []string // this segment's pages
			if seg == "" {
				if len(pages) == 0 || pages[0] != "" {
					t.Fatalf("segment %d is empty; want one empty page, have %q", si, pages[:min(1, len(pages))])
				}
				pages = pages[1:]
				continue
			}
			rest := seg
			for rest != "" {
				if len(pages) == 0 {
					t.Fatalf("segment %d: pages end with %q of it left", si, rest)
				}
				p := pages[0]
				if p == "" || !strings.HasPrefix(rest, p) {
					t.Fatalf("segment %d: page %q is not the next part of %q", si, p, rest)
				}
				mine = append(mine, p)
				rest, pages = rest[len(p):], pages[1:]
			}
			checkPageCuts(t, mine, o.PageChars)
		}
		if len(pages) != 0 {
			t.Fatalf("%d pages left after the last segment: %q", len(pages), pages)
		}

		// Chunks through the whole text path are the pages cut at
		// ChunkChars, numbered 1..n.
		res := &Result{MediaType: mediaPlain}
		if err := extractText(context.Background(), bytes.NewReader(in), o, res); err != nil {
			t.Fatalf("extractText: %v", err)
		}
		if res.TextState != Complete || res.Pages != len(read.pages) {
			t.Fatalf("extractText = %s %q, %d pages; want complete, %d", res.TextState, res.Reason, res.Pages, len(read.pages))
		}
		byPage := make([]string, len(read.pages)+1)
		for _, c := range res.Chunks {
			if c.Page < 1 || c.Page > res.Pages {
				t.Fatalf("chunk of page %d, want 1..%d", c.Page, res.Pages)
			}
			if c.Text == "" || !utf8.ValidString(c.Text) || utf8.RuneCountInString(c.Text) > o.ChunkChars {
				t.Fatalf("chunk %q of page %d: empty, not UTF-8 or over %d characters", c.Text, c.Page, o.ChunkChars)
			}
			byPage[c.Page] += c.Text
		}
		for i, p := range read.pages {
			if byPage[i+1] != p {
				t.Fatalf("page %d chunks join to %q, want %q", i+1, byPage[i+1], p)
			}
		}
	})
}

// checkPageCuts checks the pages one segment was cut into (package doc).
func checkPageCuts(t *testing.T, pages []string, max int) {
	t.Helper()
	for i, p := range pages {
		n := utf8.RuneCountInString(p)
		if !utf8.ValidString(p) || n > max {
			t.Fatalf("page %q: not UTF-8 or %d characters, over %d", p, n, max)
		}
		if strings.HasSuffix(p, "\r") {
			t.Fatalf("page %q ends inside a CRLF pair", p)
		}
		if i == len(pages)-1 {
			continue // ends with its segment
		}
		next := pages[i+1]
		if !strings.HasSuffix(p, "\n") {
			// A hard cut: the line was longer than a page. It is cut at max
			// characters, or one before when the max-th was the CR of a CRLF.
			crMoved := n == max-1 && strings.HasPrefix(next, "\r\n")
			if strings.Contains(p, "\n") || (n != max && !crMoved) {
				t.Fatalf("page %q (%d characters) before %q is cut neither at a line break nor at %d characters", p, n, next, max)
			}
			continue
		}
		// Cut at a line break: the next line of the segment (through its
		// own line break) would not have fitted.
		line := strings.Join(pages[i+1:], "")
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line = line[:j+1]
		}
		if n+utf8.RuneCountInString(line) <= max {
			t.Fatalf("page %q was cut before %q, which fits within %d characters", p, line, max)
		}
	}
}

// FuzzPDFText runs Extract over mutations of generated PDFs: it never
// panics or returns an error for bytes in memory, never runs past the time
// limit, numbers pages 1..n, and its state agrees with its reason and text.
func FuzzPDFText(f *testing.F) {
	e := sharedExtractor(f)
	f.Fuzz(func(t *testing.T, pdf []byte) {
		type outcome struct {
			res *Result
			err error
		}
		done := make(chan outcome, 1)
		go func() {
			res, err := e.Extract(context.Background(), bytes.NewReader(pdf), int64(len(pdf)), Hint{})
			done <- outcome{res, err}
		}()
		var got outcome
		// A hang detector, not a speed check: the engine must be stopped at
		// the time limit, so far past it something is stuck.
		select {
		case got = <-done:
		case <-time.After(e.o.TimeLimit + 30*time.Second):
			t.Fatalf("Extract ran past the %s time limit", e.o.TimeLimit)
		}
		if got.err != nil {
			t.Fatalf("Extract: %v", got.err)
		}
		checkResult(t, got.res, e.o)
	})
}

// checkResult checks what holds for every Result.
func checkResult(t *testing.T, res *Result, o Options) {
	t.Helper()
	switch res.TextState {
	case Complete:
		if res.Reason != "" || len(res.Limits) != 0 {
			t.Fatalf("complete with reason %q, limits %v", res.Reason, res.Limits)
		}
	case Partial:
		if res.Reason == "" || len(res.Chunks) == 0 {
			t.Fatalf("partial with reason %q and %d chunks", res.Reason, len(res.Chunks))
		}
	case Unavailable:
		if res.Reason == "" || len(res.Chunks) != 0 {
			t.Fatalf("unavailable with reason %q and %d chunks", res.Reason, len(res.Chunks))
		}
	default:
		t.Fatalf("TextState %q", res.TextState)
	}
	if res.Pages < 0 || res.Pages > o.MaxPages {
		t.Fatalf("Pages = %d, want 0..%d", res.Pages, o.MaxPages)
	}
	prev, total := 1, 0
	for _, c := range res.Chunks {
		if c.Page < prev || c.Page > res.Pages {
			t.Fatalf("chunk of page %d after page %d, want pages in order within 1..%d", c.Page, prev, res.Pages)
		}
		prev = c.Page
		if c.Text == "" || !utf8.ValidString(c.Text) || utf8.RuneCountInString(c.Text) > o.ChunkChars || sanitize(c.Text) != c.Text {
			t.Fatalf("chunk %q of page %d: empty, not UTF-8, over %d characters or holding a control character", c.Text, c.Page, o.ChunkChars)
		}
		total += len(c.Text)
	}
	if total > o.MaxTextBytes {
		t.Fatalf("%d bytes of text, over %d", total, o.MaxTextBytes)
	}
}
