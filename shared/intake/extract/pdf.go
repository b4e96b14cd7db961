package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/klippa-app/go-pdfium"
	pdfiumerrors "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// wasmPageSize is WebAssembly's memory page, 64 KiB.
const wasmPageSize = 64 << 10

// compiled holds the compiled PDFium module for the process: compiling it
// is the engine's one large cost (seconds, and a heap peak near 300 MB), and
// a second Extractor, or one built after another was closed, reuses it.
var compiled = wazero.NewCompilationCache()

// pdfEngine is the compiled PDFium module and the pool its per-document
// instances come from.
type pdfEngine struct {
	o     Options
	pool  pdfium.Pool
	cache wazero.CompilationCache // its own, with Options.CacheDir
}

func newPDFEngine(o Options) (*pdfEngine, error) {
	cache := compiled
	var own wazero.CompilationCache
	if o.CacheDir != "" {
		var err error
		if own, err = wazero.NewCompilationCacheWithDir(o.CacheDir); err != nil {
			return nil, fmt.Errorf("open PDF engine cache: %w", err)
		}
		cache = own
	}
	pool, err := webassembly.Init(webassembly.Config{
		// The pool outlives any one call; each instance is bounded by its
		// document's context through Kill.
		Context:  context.Background(),
		MaxTotal: o.Concurrency,
		MaxIdle:  0,
		// An instance sees no file system (a PDF's bytes come through a
		// reader) and writes nowhere: PDFium's diagnostics would echo a
		// document's contents into the logs.
		FSConfig: wazero.NewFSConfig(),
		Stdout:   io.Discard,
		Stderr:   io.Discard,
		RuntimeConfig: wazero.NewRuntimeConfig().
			// The module lowers setjmp/longjmp to exception handling.
			WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
			// Kill cancels an instance's context; this makes wazero stop the
			// running call there instead of letting it finish.
			WithCloseOnContextDone(true).
			WithMemoryLimitPages(uint32(o.EngineMemory / wasmPageSize)).
			WithCompilationCache(cache),
		// Never reuse an instance: a document's heap state dies with it.
		ReuseWorkers: false,
	})
	if err != nil {
		if own != nil {
			own.Close(context.Background())
		}
		return nil, fmt.Errorf("start PDF engine: %w", err)
	}
	e := &pdfEngine{o: o, pool: pool, cache: own}
	// Start one instance now, so a broken engine fails at start-up and not
	// on the first upload.
	inst, err := pool.GetInstanceWithContext(context.Background())
	if err == nil {
		err = inst.Close()
	}
	if err != nil {
		e.close()
		return nil, fmt.Errorf("start PDF engine instance: %w", err)
	}
	return e, nil
}

func (e *pdfEngine) close() error {
	err := e.pool.Close()
	if e.cache != nil {
		err = errors.Join(err, e.cache.Close(context.Background()))
	}
	if err != nil {
		return fmt.Errorf("close PDF engine: %w", err)
	}
	return nil
}

// extract fills res with the text of the PDF of size bytes at r, in a fresh
// engine instance that is closed afterwards, or killed at the time limit.
func (e *pdfEngine) extract(ctx context.Context, r io.ReaderAt, size int64, res *Result) error {
	var c outcome
	if size > math.MaxUint32 {
		// The engine's file access is 32-bit (wasm32).
		c.note(ReasonTooLarge)
		c.finish(res)
		return nil
	}
	inst, err := e.pool.GetInstanceWithContext(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("wait for PDF engine: %w", ctx.Err())
		}
		return fmt.Errorf("start PDF engine instance: %w", err)
	}
	docCtx, cancel := context.WithTimeoutCause(ctx, e.o.TimeLimit, errTimeLimit)
	defer cancel()
	killed := make(chan struct{})
	stopKill := context.AfterFunc(docCtx, func() {
		defer close(killed)
		// Kill stops a running call and discards the instance; nothing of
		// it is used afterwards.
		_ = inst.Kill()
	})
	src := &source{r: io.NewSectionReader(r, 0, size)}
	e.read(docCtx, inst, src, size, res, &c)
	if stopKill() {
		_ = inst.Close()
	} else {
		<-killed
	}
	readErr := src.err
	src.release()
	// A failing reader and the caller's own deadline are the caller's, not
	// the file's: no result.
	if readErr != nil {
		return fmt.Errorf("read PDF: %w", readErr)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("read PDF: %w", ctx.Err())
	}
	c.finish(res)
	return nil
}

// read runs the document through inst, recording in c what stopped or cut
// it. A panic in the engine's bindings on hostile input ends the document,
// not the process.
func (e *pdfEngine) read(ctx context.Context, inst pdfium.Pdfium, src *source, size int64, res *Result, c *outcome) {
	page := 0 // the page being read, 1-based; 0 before the first
	// stop records why a failed engine call ended the document.
	stop := func() {
		switch {
		case errors.Is(context.Cause(ctx), errTimeLimit):
			c.limit(LimitTime, "%s, reached on page %d", e.o.TimeLimit, max(page, 1))
		case page == 0:
			c.note(ReasonUnreadablePDF)
		default:
			// A trap: a damaged page, or memory.grow refused at EngineMemory
			// (the two are not told apart without reading error text).
			c.note(fmt.Sprintf("the PDF engine stopped on page %d: the page is damaged or needs more than %d MiB of engine memory", page, e.o.EngineMemory>>20))
		}
	}
	defer func() {
		if p := recover(); p != nil {
			stop()
		}
	}()

	opened, err := inst.FPDF_LoadCustomDocument(&requests.FPDF_LoadCustomDocument{Reader: src, Size: size})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		stop()
		return
	case errors.Is(err, pdfiumerrors.ErrPassword), errors.Is(err, pdfiumerrors.ErrSecurity):
		// A password is needed to open it, or its security handler is one
		// PDFium does not know: either way the text is out of reach.
		c.note(ReasonEncrypted)
		return
	default:
		c.note(ReasonUnreadablePDF)
		return
	}
	doc := opened.Document

	xref, err := inst.FPDF_DocumentHasValidCrossReferenceTable(&requests.FPDF_DocumentHasValidCrossReferenceTable{Document: doc})
	if err != nil {
		stop()
		return
	}
	if !xref.DocumentHasValidCrossReferenceTable {
		c.note("damaged PDF: cross-reference table rebuilt, pages or text may be missing")
	}
	count, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: doc})
	if err != nil {
		stop()
		return
	}
	n := min(count.PageCount, e.o.MaxPages)

	var (
		pc       pageCutter
		used     int // bytes of text taken
		unread   int // pages PDFium could not load
		firstBad int
		hasText  bool
		textCut  bool
	)
	for page = 1; page <= n && !textCut; page++ {
		if ctx.Err() != nil {
			stop()
			return
		}
		text, more, err := e.pageText(inst, doc, page-1)
		if errors.Is(err, pdfiumerrors.ErrPage) {
			if unread++; unread == 1 {
				firstBad = page
			}
			res.Pages = page
			continue
		}
		if err != nil {
			stop()
			return
		}
		hasText = hasText || text != ""
		if used+len(text) > e.o.MaxTextBytes {
			text = truncate(text, e.o.MaxTextBytes-used)
			c.limit(LimitText, "%d bytes, reached on page %d", e.o.MaxTextBytes, page)
			textCut = true
		}
		used += len(text)
		res.Chunks = pc.appendChunks(res.Chunks, page, text, more, e.o)
		res.Pages = page
	}
	pc.report(c, e.o)
	if !textCut && count.PageCount > n {
		c.limit(LimitPages, "%d of %d pages", n, count.PageCount)
	}
	switch {
	case unread == 1:
		c.note(fmt.Sprintf("page %d unreadable", firstBad))
	case unread > 1:
		c.note(fmt.Sprintf("%d pages unreadable, the first page %d", unread, firstBad))
	}
	if !hasText && unread < res.Pages && !textCut {
		c.note(ReasonNoTextLayer)
	}
}

// pageText returns the sanitized text of page index (0-based) of doc, read
// until it holds more than MaxPageBytes (appendChunks cuts it there), and
// whether characters were left unread. It returns pdfiumerrors.ErrPage for a
// page PDFium cannot load.
func (e *pdfEngine) pageText(inst pdfium.Pdfium, doc references.FPDF_DOCUMENT, index int) (text string, more bool, err error) {
	page, err := inst.FPDF_LoadPage(&requests.FPDF_LoadPage{Document: doc, Index: index})
	if err != nil {
		return "", false, err
	}
	defer inst.FPDF_ClosePage(&requests.FPDF_ClosePage{Page: page.Page})
	tp, err := inst.FPDFText_LoadPage(&requests.FPDFText_LoadPage{Page: requests.Page{ByReference: &page.Page}})
	if err != nil {
		return "", false, err
	}
	defer inst.FPDFText_ClosePage(&requests.FPDFText_ClosePage{TextPage: tp.TextPage})
	chars, err := inst.FPDFText_CountChars(&requests.FPDFText_CountChars{TextPage: tp.TextPage})
	if err != nil {
		return "", false, err
	}
	// Every character kept is at least one byte, so one window of
	// MaxPageBytes+1 characters is enough unless control characters were
	// removed; a page of millions of them is read window by window, each
	// bounded, until the limit is passed.
	window := e.o.MaxPageBytes + 1
	var b strings.Builder
	carry := "" // a CR that ended the last window: kept only if an LF follows
	start := 0
	for ; start < chars.Count && b.Len() <= e.o.MaxPageBytes; start += window {
		got, err := inst.FPDFText_GetText(&requests.FPDFText_GetText{
			TextPage: tp.TextPage, StartIndex: start, Count: min(window, chars.Count-start),
		})
		if err != nil {
			return "", false, err
		}
		raw := carry + got.Text
		carry = ""
		if strings.HasSuffix(raw, "\r") {
			raw, carry = raw[:len(raw)-1], "\r"
		}
		b.WriteString(sanitize(raw))
	}
	return b.String(), start < chars.Count, nil
}

// source is the reader PDFium reads a document through. It keeps the
// first read error, so a failing reader is told apart from a damaged file,
// and release drops the reader: go-pdfium keeps a document's reader in a
// package-level table until the document is closed, which a killed
// instance never is.
type source struct {
	r   *io.SectionReader
	err error
}

var errReleased = errors.New("extract: reader released")

func (s *source) Read(p []byte) (int, error) {
	if s.r == nil {
		return 0, errReleased
	}
	n, err := s.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && s.err == nil {
		s.err = err
	}
	return n, err
}

func (s *source) Seek(offset int64, whence int) (int64, error) {
	if s.r == nil {
		return 0, errReleased
	}
	return s.r.Seek(offset, whence)
}

func (s *source) release() { s.r = nil }
