package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"
)

// TextState says how much of a file's text a Result holds (issue 18 §4).
type TextState string

const (
	// Complete: the chunks hold the text of every page.
	Complete TextState = "complete"
	// Partial: the chunks hold the text done before a limit or a damaged
	// part stopped extraction; Reason says what is missing.
	Partial TextState = "partial"
	// Unavailable: no text was taken; Reason says why.
	Unavailable TextState = "unavailable"
)

// Reasons of an Unavailable result that no limit caused. A Reason is a
// record's wording, shown to people: these constants are its fixed part.
const (
	ReasonUnsupportedType = "unsupported type"
	ReasonNotUTF8         = "not UTF-8"
	ReasonEncrypted       = "encrypted"
	ReasonUnreadablePDF   = "unreadable PDF"
	ReasonNoTextLayer     = "no text layer"
	ReasonTooLarge        = "too large for the PDF engine"
)

// Limit names an Options limit that cut a file's text.
type Limit string

const (
	LimitPages    Limit = "page limit"      // Options.MaxPages
	LimitText     Limit = "text limit"      // Options.MaxTextBytes
	LimitPageText Limit = "page text limit" // Options.MaxPageBytes
	LimitTime     Limit = "time limit"      // Options.TimeLimit
)

// Chunk is one piece of a page's text: at most Options.ChunkChars
// characters (runes) of page Page (1-based), valid UTF-8. A page longer than
// that is several chunks with the same Page, in order; a page without text
// has none.
type Chunk struct {
	Page int
	Text string
}

// Result is what Extract found in one file.
type Result struct {
	// MediaType is sniffed from the bytes (see the package doc):
	// "application/pdf", "text/plain; charset=utf-8",
	// "text/markdown; charset=utf-8", a text kind without "; charset=utf-8"
	// when the bytes are not UTF-8 (a UTF-16 file keeps its
	// "charset=utf-16le" or "utf-16be"), or net/http.DetectContentType's
	// answer for
	// anything else ("image/png", "application/zip",
	// "application/octet-stream", …).
	MediaType string
	TextState TextState
	// Reason is empty when TextState is Complete. Otherwise it says what is
	// missing and why, naming each limit reached ("page limit: 2000 of 10000
	// pages"); for an Unavailable file that no limit stopped it is one of the
	// Reason constants. Several causes are joined by "; ".
	Reason string
	// Limits lists the limits reached, in the order they were reached.
	Limits []Limit
	// Pages is how many pages were read: chunks are of pages 1..Pages.
	Pages int
	// Chunks is the text, in page order.
	Chunks []Chunk
}

// The defaults of Options (docs/decisions.md "Time and size constants": intake).
// MB and KB are decimal here: 20 MB is 20,000,000 bytes.
const (
	DefaultMaxPages     = 2000
	DefaultMaxTextBytes = 20_000_000
	DefaultMaxPageBytes = 200_000
	DefaultTimeLimit    = 60 * time.Second
	DefaultPageChars    = 3000
	DefaultChunkChars   = 8000
	DefaultEngineMemory = 1 << 30
)

// Options bounds extraction. A zero field takes its default; a negative
// field, or PageChars or ChunkChars of 1, is refused by New.
type Options struct {
	// MaxPages is the number of pages read per document (default 2,000).
	MaxPages int
	// MaxTextBytes bounds a document's text, in bytes of UTF-8 (default
	// 20 MB). The text kept is the first MaxTextBytes bytes, cut at a rune.
	MaxTextBytes int
	// MaxPageBytes bounds one page's text, in bytes of UTF-8 (default
	// 200 KB); a longer page keeps its first MaxPageBytes bytes.
	MaxPageBytes int
	// TimeLimit bounds one document (default 60 s). A PDF's engine
	// instance is killed when it is reached.
	TimeLimit time.Duration
	// PageChars is a text file's page length in characters (default 3,000).
	PageChars int
	// ChunkChars is a chunk's length in characters (default 8,000).
	ChunkChars int
	// EngineMemory bounds one PDF engine instance's memory in bytes
	// (default 1 GiB, at most 2 GiB, the module's own maximum), rounded
	// down to WebAssembly's 64 KiB pages.
	EngineMemory int
	// Concurrency is how many PDFs may be read at once (default
	// GOMAXPROCS); more wait for a free instance.
	Concurrency int
	// CacheDir, when set, keeps the compiled engine in that directory, so
	// a later process starts in a fraction of the compile time (a dev
	// server's restart, a fuzz worker). Its files are run as machine code:
	// it must be writable by this user alone (os.UserCacheDir, never a
	// shared temporary directory). Empty: the compiled engine is kept in
	// memory for the process.
	CacheDir string
}

// maxEngineMemory is the PDFium module's own memory maximum, 32768 pages.
const maxEngineMemory = 2 << 30

func (o *Options) withDefaults() (Options, error) {
	var v Options
	if o != nil {
		v = *o
	}
	if v.MaxPages < 0 || v.MaxTextBytes < 0 || v.MaxPageBytes < 0 || v.TimeLimit < 0 ||
		v.PageChars < 0 || v.ChunkChars < 0 || v.EngineMemory < 0 || v.Concurrency < 0 {
		return v, errors.New("extract options: a limit is negative")
	}
	if v.PageChars == 1 || v.ChunkChars == 1 {
		// A page or chunk of one character could not keep a CRLF pair whole.
		return v, errors.New("extract options: PageChars and ChunkChars must be at least 2")
	}
	if v.EngineMemory > maxEngineMemory {
		return v, fmt.Errorf("extract options: EngineMemory above %d bytes", maxEngineMemory)
	}
	def := func(p *int, d int) {
		if *p == 0 {
			*p = d
		}
	}
	def(&v.MaxPages, DefaultMaxPages)
	def(&v.MaxTextBytes, DefaultMaxTextBytes)
	def(&v.MaxPageBytes, DefaultMaxPageBytes)
	def(&v.PageChars, DefaultPageChars)
	def(&v.ChunkChars, DefaultChunkChars)
	def(&v.EngineMemory, DefaultEngineMemory)
	def(&v.Concurrency, runtime.GOMAXPROCS(0))
	if v.TimeLimit == 0 {
		v.TimeLimit = DefaultTimeLimit
	}
	return v, nil
}

// Hint is what the uploader declared about a file: its filename and media
// type. Neither is trusted; they only choose between text kinds for bytes
// that are text already (see the package doc).
type Hint struct {
	Filename  string
	MediaType string
}

// Extractor extracts text from files. It holds the compiled PDF engine, so
// build one per process (a Lambda's cold start) and Close it at the end. It
// is safe for concurrent use.
type Extractor struct {
	o   Options
	pdf *pdfEngine
}

// New compiles the PDF engine and checks that an instance starts. The
// first New of a process takes about 4 s and peaks near 300 MB of heap; the
// compiled module is kept for the process, so a later New takes
// milliseconds. It returns an error for invalid options or an engine that
// does not start.
func New(opts *Options) (*Extractor, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	pdf, err := newPDFEngine(o)
	if err != nil {
		return nil, err
	}
	return &Extractor{o: o, pdf: pdf}, nil
}

// Close releases the engine's runtime (the compiled module stays for the
// process). Extract fails after it.
func (e *Extractor) Close() error {
	return e.pdf.close()
}

// errTimeLimit is the cause of a document context that reached
// Options.TimeLimit, telling it apart from the caller's own deadline.
var errTimeLimit = errors.New("extract: document time limit")

// Extract reads the file of size bytes at r and returns its media type and
// text. Every outcome the file's bytes cause is a Result; an error means no
// result (r failed, ctx ended, or the engine did not start) and wraps the
// cause. It reads at most Options.TimeLimit past the wait for a free engine
// instance.
func (e *Extractor) Extract(ctx context.Context, r io.ReaderAt, size int64, hint Hint) (*Result, error) {
	if size < 0 {
		return nil, errors.New("extract text: negative size")
	}
	head := make([]byte, min(size, sniffLen))
	if n, err := r.ReadAt(head, 0); n < len(head) {
		// io.ReaderAt returns an error whenever it reads less than asked.
		return nil, fmt.Errorf("extract text: read: %w", err)
	}
	kind, mediaType := sniff(head, hint)
	res := &Result{MediaType: mediaType}
	var err error
	switch kind {
	case kindPDF:
		err = e.pdf.extract(ctx, r, size, res)
	case kindText:
		err = extractText(ctx, io.NewSectionReader(r, 0, size), e.o, res)
	default:
		res.TextState, res.Reason = Unavailable, ReasonUnsupportedType
	}
	if err != nil {
		return nil, fmt.Errorf("extract text: %w", err)
	}
	return res, nil
}

// outcome gathers what stopped or cut a document, then sets a Result's state.
type outcome struct {
	limits  []Limit
	reasons []string
}

func (c *outcome) limit(l Limit, format string, args ...any) {
	c.limits = append(c.limits, l)
	c.reasons = append(c.reasons, string(l)+": "+fmt.Sprintf(format, args...))
}

func (c *outcome) note(reason string) { c.reasons = append(c.reasons, reason) }

// finish sets res's state: Complete with nothing to say, else Partial with
// text or Unavailable without.
func (c *outcome) finish(res *Result) {
	res.Limits = c.limits
	res.Reason = strings.Join(c.reasons, "; ")
	switch {
	case len(c.reasons) == 0:
		res.TextState = Complete
	case len(res.Chunks) > 0:
		res.TextState = Partial
	default:
		res.TextState = Unavailable
	}
}
