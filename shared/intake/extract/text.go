package extract

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	formFeed = '\f'
	bom      = '\uFEFF'
)

// removed reports whether r is a control character that text loses: every
// Unicode control (C0, DEL, C1) but tab and line feed. A CR is kept only as
// the first half of a CRLF pair, which the callers decide with one rune of
// lookahead; a form feed is a text file's page break, handled before this.
func removed(r rune) bool {
	return r != '\t' && r != '\n' && unicode.IsControl(r)
}

// sanitize removes from s what removed says, keeping CRLF pairs. Invalid
// UTF-8 in s becomes U+FFFD, so the result is always valid UTF-8.
func sanitize(s string) string {
	clean := utf8.ValidString(s)
	for _, r := range s {
		if removed(r) {
			clean = false
			break
		}
	}
	if clean && !strings.Contains(s, "\r") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		if r == '\r' {
			if i+1 < len(s) && s[i+1] == '\n' {
				b.WriteByte('\r')
			}
			continue
		}
		if !removed(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// cut returns the byte length of the first page of s when pages hold at
// most max runes (max >= 2): all of s when it fits; else through the last
// line feed among its first max runes; else its first max runes, less a
// final CR whose LF follows, so a CRLF pair is never split.
func cut(s string, max int) int {
	n, lastLF := 0, -1
	for i, r := range s {
		if n == max {
			switch {
			case lastLF >= 0:
				return lastLF + 1
			case s[i] == '\n' && s[i-1] == '\r':
				return i - 1
			default:
				return i
			}
		}
		if r == '\n' {
			lastLF = i
		}
		n++
	}
	return len(s)
}

// splitPages splits s into pieces by cut. An empty s is no piece.
func splitPages(s string, max int) []string {
	var out []string
	for s != "" {
		n := cut(s, max)
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// truncate returns the longest prefix of s of at most n bytes that ends on
// a rune boundary and not inside a CRLF pair.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if n > 0 && s[n-1] == '\r' && s[n] == '\n' {
		n--
	}
	return s[:n]
}

// textRead is what readTextPages found.
type textRead struct {
	pages    []string // sanitized, each at most PageChars runes
	invalid  bool     // the bytes are not UTF-8
	stopped  Limit    // the limit that ended reading, or ""
	textUsed int      // bytes of text read
}

// readTextPages reads UTF-8 text from r and splits it into pages (package
// doc), reading no more than MaxTextBytes of text and MaxPages pages. It
// stops at the first invalid byte. It returns an error only for a failing
// reader or an ended ctx that is not the document's own time limit.
func readTextPages(ctx context.Context, r io.Reader, o Options) (textRead, error) {
	var (
		out   textRead
		br    = bufio.NewReaderSize(r, 64<<10)
		seg   []byte // the current form-feed segment, sanitized
		first = true
		runes int
	)
	// flush ends the current segment: an empty one is one empty page (two
	// form feeds in a row), the rest split at PageChars.
	flush := func() {
		if len(seg) == 0 {
			out.pages = append(out.pages, "")
		} else {
			out.pages = append(out.pages, splitPages(string(seg), o.PageChars)...)
		}
		seg = seg[:0]
	}
	for {
		if runes++; runes%(64<<10) == 0 && ctx.Err() != nil {
			if !errors.Is(context.Cause(ctx), errTimeLimit) {
				return out, ctx.Err()
			}
			out.stopped = LimitTime
			break
		}
		c, size, err := br.ReadRune()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return out, fmt.Errorf("read text: %w", err)
		}
		if c == utf8.RuneError && size == 1 {
			out.invalid = true
			return out, nil
		}
		if first {
			first = false
			if c == bom {
				continue
			}
		}
		switch {
		case c == formFeed:
			flush()
			if len(out.pages) > o.MaxPages {
				out.stopped = LimitPages
				return out, nil
			}
			continue
		case c == '\r':
			if next, _ := br.Peek(1); len(next) == 0 || next[0] != '\n' {
				continue
			}
		case removed(c):
			continue
		}
		if out.textUsed+size > o.MaxTextBytes {
			out.stopped = LimitText
			break
		}
		seg = utf8.AppendRune(seg, c)
		out.textUsed += size
	}
	if len(seg) > 0 {
		flush()
	}
	return out, nil
}

// extractText fills res with the pages of the text file at r.
func extractText(ctx context.Context, r io.Reader, o Options, res *Result) error {
	docCtx, cancel := context.WithTimeoutCause(ctx, o.TimeLimit, errTimeLimit)
	defer cancel()
	read, err := readTextPages(docCtx, r, o)
	if err != nil {
		return err
	}
	var c outcome
	if read.invalid {
		res.MediaType = strings.TrimSuffix(res.MediaType, "; charset=utf-8")
		c.note(ReasonNotUTF8)
		c.finish(res)
		return nil
	}
	pages := read.pages
	switch {
	case len(pages) > o.MaxPages:
		// The pages kept end before any text a later limit would have cut.
		pages = pages[:o.MaxPages]
		c.limit(LimitPages, "%d pages", o.MaxPages)
	case read.stopped == LimitText:
		c.limit(LimitText, "%d bytes, reached on page %d", o.MaxTextBytes, max(len(pages), 1))
	case read.stopped == LimitTime:
		c.limit(LimitTime, "%s, reached on page %d", o.TimeLimit, max(len(pages), 1))
	}
	var pc pageCutter
	for i, p := range pages {
		res.Chunks = pc.appendChunks(res.Chunks, i+1, p, false, o)
	}
	pc.report(&c, o)
	res.Pages = len(pages)
	c.finish(res)
	return nil
}

// pageCutter applies MaxPageBytes and splits pages into chunks, counting the
// pages it cut so the reason can say so once.
type pageCutter struct {
	cut   int // pages cut at MaxPageBytes
	first int // the first of them
}

// appendChunks cuts page text p (sanitized) at MaxPageBytes and appends its
// chunks of at most ChunkChars runes. more says the page had text past p.
func (pc *pageCutter) appendChunks(chunks []Chunk, page int, p string, more bool, o Options) []Chunk {
	if len(p) > o.MaxPageBytes || more {
		p = truncate(p, o.MaxPageBytes)
		if pc.cut++; pc.cut == 1 {
			pc.first = page
		}
	}
	for _, t := range splitPages(p, o.ChunkChars) {
		chunks = append(chunks, Chunk{Page: page, Text: t})
	}
	return chunks
}

func (pc *pageCutter) report(c *outcome, o Options) {
	switch {
	case pc.cut == 1:
		c.limit(LimitPageText, "%d bytes, page %d cut", o.MaxPageBytes, pc.first)
	case pc.cut > 1:
		c.limit(LimitPageText, "%d bytes, %d pages cut from page %d", o.MaxPageBytes, pc.cut, pc.first)
	}
}
