package extract

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSniffTakesTheKindFromTheBytes(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	zip := []byte("PK\x03\x04\x14\x00\x06\x00")
	tests := []struct {
		name      string
		head      []byte
		hint      Hint
		wantKind  kind
		wantMedia string
	}{
		{"a PDF header is a PDF whatever the name", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"), Hint{Filename: "notes.txt", MediaType: "text/plain"}, kindPDF, "application/pdf"},
		{"UTF-8 text without a hint is plain text", []byte("Memo to file\n"), Hint{}, kindText, "text/plain; charset=utf-8"},
		{"text named .md is Markdown", []byte("# Chronology\n"), Hint{Filename: "case/Chronology.MD"}, kindText, "text/markdown; charset=utf-8"},
		{"text declared text/markdown is Markdown", []byte("# Chronology\n"), Hint{MediaType: "text/markdown; charset=UTF-8"}, kindText, "text/markdown; charset=utf-8"},
		{"a declared type outranks the filename", []byte("# Chronology\n"), Hint{Filename: "a.md", MediaType: "text/plain"}, kindText, "text/plain; charset=utf-8"},
		{"text named .csv is plain text: the hint names no text kind of ours", []byte("a,b\n1,2\n"), Hint{Filename: "x.csv", MediaType: "text/csv"}, kindText, "text/plain; charset=utf-8"},
		{"text declared a PDF is still plain text", []byte("just words\n"), Hint{Filename: "brief.pdf", MediaType: "application/pdf"}, kindText, "text/plain; charset=utf-8"},
		{"Markdown opening with an HTML comment is Markdown when named so", []byte("<!-- draft -->\n# Brief\n"), Hint{Filename: "brief.md"}, kindText, "text/markdown; charset=utf-8"},
		{"HTML without a text hint is unsupported", []byte("<!DOCTYPE html><html><body>hi</body></html>"), Hint{Filename: "page.html"}, kindOther, "text/html; charset=utf-8"},
		{"a UTF-16 byte order mark is text, not UTF-8", []byte("\xff\xfeM\x00e\x00m\x00o\x00"), Hint{}, kindText, "text/plain; charset=utf-16le"},
		{"a PNG named notes.txt is not text", png, Hint{Filename: "notes.txt", MediaType: "text/plain"}, kindOther, "image/png"},
		{"a zip named notes.md is not text", zip, Hint{Filename: "notes.md", MediaType: "text/markdown"}, kindOther, "application/zip"},
		{"bytes with NUL are not text", []byte("abc\x00\x01\x02def"), Hint{Filename: "a.txt"}, kindOther, "application/octet-stream"},
		{"an empty file is empty text", nil, Hint{}, kindText, "text/plain; charset=utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotKind, gotMedia := sniff(tt.head, tt.hint)
			if gotKind != tt.wantKind || gotMedia != tt.wantMedia {
				t.Errorf("sniff(%q, %+v) = %d, %q; want %d, %q", tt.head, tt.hint, gotKind, gotMedia, tt.wantKind, tt.wantMedia)
			}
		})
	}
}

// extractString runs e.Extract over s.
func extractString(t *testing.T, e *Extractor, s string, hint Hint) *Result {
	t.Helper()
	return extractBytes(t, e, []byte(s), hint)
}

func TestTextPages(t *testing.T) {
	e := sharedExtractor(t)
	a5000 := strings.Repeat("a", 5000)
	l2999 := strings.Repeat("b", 2999)
	tests := []struct {
		name string
		in   string
		want []Chunk
	}{
		{
			name: "a 5,000-character line is cut at 3,000 characters",
			in:   a5000,
			want: []Chunk{{1, a5000[:3000]}, {2, a5000[3000:]}},
		},
		{
			name: "CRLF lines end a page at the last line break before 3,000 characters, CRLF kept",
			in:   strings.Repeat("0123456789abcdefghijklmnopqrs\r\n", 200), // 31 characters a line
			want: []Chunk{
				{1, strings.Repeat("0123456789abcdefghijklmnopqrs\r\n", 96)}, // 2,976 characters
				{2, strings.Repeat("0123456789abcdefghijklmnopqrs\r\n", 96)},
				{3, strings.Repeat("0123456789abcdefghijklmnopqrs\r\n", 8)},
			},
		},
		{
			name: "a CRLF that would end past 3,000 characters moves to the next page whole",
			in:   l2999 + "\r\n" + "tail",
			want: []Chunk{{1, l2999}, {2, "\r\ntail"}},
		},
		{
			name: "a 5,000-character line after a CRLF line: the short line is a page, the long one is cut",
			in:   "heading\r\n" + a5000,
			want: []Chunk{{1, "heading\r\n"}, {2, a5000[:3000]}, {3, a5000[3000:]}},
		},
		{
			name: "a multi-byte rune at the cut stays whole",
			in:   strings.Repeat("é", 3001),
			want: []Chunk{{1, strings.Repeat("é", 3000)}, {2, "é"}},
		},
		{
			name: "a form feed ends a page and belongs to none; a final one starts none",
			in:   "one\fTwo\n\f",
			want: []Chunk{{1, "one"}, {2, "Two\n"}},
		},
		{
			name: "two form feeds make an empty page, which has no chunk",
			in:   "one\f\fthree",
			want: []Chunk{{1, "one"}, {3, "three"}},
		},
		{
			// Past the 512 bytes sniffed, where a NUL would make it binary.
			name: "control characters but tab and LF are removed, a lone CR with them",
			in:   strings.Repeat("-", 600) + "a\x00b\x1bc\td\re\x7ff\u0085g\n",
			want: []Chunk{{1, strings.Repeat("-", 600) + "abc\tdefg\n"}},
		},
		{
			name: "a leading byte order mark is dropped, a later U+FEFF kept",
			in:   "\uFEFFmemo\uFEFF",
			want: []Chunk{{1, "memo\uFEFF"}},
		},
		{
			name: "Markdown is kept as written",
			in:   "# Chronology\n\n- **2024-03-01** filed\n\n```\ncode\n```\n",
			want: []Chunk{{1, "# Chronology\n\n- **2024-03-01** filed\n\n```\ncode\n```\n"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := extractString(t, e, tt.in, Hint{Filename: "notes.md"})
			if res.TextState != Complete || res.Reason != "" {
				t.Errorf("Extract = %s %q, want complete", res.TextState, res.Reason)
			}
			if diff := cmp.Diff(tt.want, res.Chunks); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			wantPages := 0
			if len(tt.want) > 0 {
				wantPages = tt.want[len(tt.want)-1].Page
			}
			if res.Pages != wantPages {
				t.Errorf("Pages = %d, want %d", res.Pages, wantPages)
			}
		})
	}
}

func TestEmptyTextFileIsCompleteWithNoPages(t *testing.T) {
	res := extractString(t, sharedExtractor(t), "", Hint{})
	if res.TextState != Complete || res.Pages != 0 || len(res.Chunks) != 0 {
		t.Errorf("Extract(\"\") = %s, %d pages, %d chunks; want complete, none", res.TextState, res.Pages, len(res.Chunks))
	}
}

func TestTextThatIsNotUTF8IsUnavailable(t *testing.T) {
	e := sharedExtractor(t)
	tests := []struct {
		name, in, wantMedia string
	}{
		{"Latin-1 text is not UTF-8", "Caf\xe9 receipt\n", "text/plain"},
		{"a bad byte after valid pages is not UTF-8", strings.Repeat("line\n", 2000) + "\xff", "text/plain"},
		{"a truncated rune at the end is not UTF-8", "ends in \xe2\x82", "text/plain"},
		{"UTF-16 is text but not UTF-8", "\xff\xfeM\x00e\x00m\x00o\x00", "text/plain; charset=utf-16le"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := extractString(t, e, tt.in, Hint{})
			want := &Result{MediaType: tt.wantMedia, TextState: Unavailable, Reason: ReasonNotUTF8}
			if diff := cmp.Diff(want, res); diff != "" {
				t.Errorf("Extract (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnsupportedTypeHasNoPages(t *testing.T) {
	res := extractBytes(t, sharedExtractor(t), []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), Hint{Filename: "scan.txt"})
	want := &Result{MediaType: "image/png", TextState: Unavailable, Reason: ReasonUnsupportedType}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Extract (-want +got):\n%s", diff)
	}
}

func TestTextLimitsMakeItPartial(t *testing.T) {
	const ten = "0123456789"
	tests := []struct {
		name       string
		opts       Options
		in         string
		wantLimits []Limit
		wantReason string
		wantPages  int
		wantBytes  int
	}{
		{
			name:       "more pages than MaxPages keeps the first MaxPages",
			opts:       Options{MaxPages: 3},
			in:         "p1\fp2\fp3\fp4\fp5",
			wantLimits: []Limit{LimitPages},
			wantReason: "page limit: 3 pages",
			wantPages:  3,
			wantBytes:  6,
		},
		{
			name:       "more text than MaxTextBytes keeps that much, cut at a rune",
			opts:       Options{MaxTextBytes: 25},
			in:         ten + "\f" + ten + "\f" + "ééééé" + ten,
			wantLimits: []Limit{LimitText},
			wantReason: "text limit: 25 bytes, reached on page 3",
			wantPages:  3,
			wantBytes:  24, // 10 + 10 + two é; the third does not fit
		},
		{
			name:       "a text page longer than MaxPageBytes is cut",
			opts:       Options{MaxPageBytes: 4},
			in:         "abcdef\fgh\fijklmn",
			wantLimits: []Limit{LimitPageText},
			wantReason: "page text limit: 4 bytes, 2 pages cut from page 1",
			wantPages:  3,
			wantBytes:  10,
		},
		{
			name:       "page and text limits both reached: the page limit is the one that cut what is kept",
			opts:       Options{MaxPages: 2, MaxTextBytes: 8},
			in:         "aa\fbb\fcc\fdd\fee",
			wantLimits: []Limit{LimitPages},
			wantReason: "page limit: 2 pages",
			wantPages:  2,
			wantBytes:  4,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := tt.opts.withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			res := &Result{MediaType: mediaPlain}
			if err := extractText(context.Background(), strings.NewReader(tt.in), o, res); err != nil {
				t.Fatalf("extractText: %v", err)
			}
			if res.TextState != Partial || res.Reason != tt.wantReason || res.Pages != tt.wantPages {
				t.Errorf("extractText = %s %q, %d pages; want partial %q, %d pages", res.TextState, res.Reason, res.Pages, tt.wantReason, tt.wantPages)
			}
			if diff := cmp.Diff(tt.wantLimits, res.Limits); diff != "" {
				t.Errorf("Limits (-want +got):\n%s", diff)
			}
			got := 0
			for _, c := range res.Chunks {
				got += len(c.Text)
			}
			if got != tt.wantBytes {
				t.Errorf("text kept = %d bytes, want %d", got, tt.wantBytes)
			}
		})
	}
}

func TestTextPastTheTimeLimitIsPartial(t *testing.T) {
	o, err := (&Options{TimeLimit: time.Nanosecond}).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	res := &Result{MediaType: mediaPlain}
	// The clock is read every 65,536 characters: this is four times that.
	in := strings.Repeat("x\n", 128<<10)
	if err := extractText(context.Background(), strings.NewReader(in), o, res); err != nil {
		t.Fatalf("extractText: %v", err)
	}
	if res.TextState != Partial || res.Reason != "time limit: 1ns, reached on page 22" {
		t.Errorf("extractText = %s %q, want partial at the time limit on page 22", res.TextState, res.Reason)
	}
	if diff := cmp.Diff([]Limit{LimitTime}, res.Limits); diff != "" {
		t.Errorf("Limits (-want +got):\n%s", diff)
	}
}

func TestTextWhenTheCallerGivesUpIsAnError(t *testing.T) {
	o, _ := (*Options)(nil).withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := extractText(ctx, strings.NewReader(strings.Repeat("x", 1<<17)), o, &Result{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("extractText = %v, want the caller's context.Canceled", err)
	}
}

func TestOptionsOutOfRangeAreRefused(t *testing.T) {
	tests := []struct {
		name string
		o    Options
	}{
		{"a negative page limit", Options{MaxPages: -1}},
		{"a negative time limit", Options{TimeLimit: -time.Second}},
		{"pages of one character", Options{PageChars: 1}},
		{"chunks of one character", Options{ChunkChars: 1}},
		{"engine memory above the module's 2 GiB", Options{EngineMemory: 3 << 30}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			if _, err := New(&tt.o); err == nil {
				t.Errorf("New(%+v) = nil error, want one", tt.o)
			}
		})
	}
}

func TestCutNeverSplitsARuneOrACRLF(t *testing.T) {
	tests := []struct {
		s    string
		max  int
		want int
	}{
		{"abc", 3, 3},
		{"abcd", 3, 3},
		{"ab\ncd", 4, 3},
		{"a\r\nb", 2, 1},
		{"éé", 1 + 1, 4},
		{"ééé", 2, 4},
		{"\r\n\r\n", 3, 2},
		{"abc\r\ndef", 4, 3},
	}
	for _, tt := range tests {
		if got := cut(tt.s, tt.max); got != tt.want {
			t.Errorf("cut(%q, %d) = %d, want %d", tt.s, tt.max, got, tt.want)
		}
	}
}
