// Package extract turns one uploaded file into the page-numbered text the
// record's chunks hold (issue 18 §4): the file's media type, sniffed from its
// bytes, and its text page by page, with a TextState (complete, partial or
// unavailable) and a reason that says what is missing and why.
//
// The intake step calls it for a clean upload; the read tools later carry
// the state in verification.notes, so a reader is told when a document's
// text is cut short rather than left to think a search was exhaustive.
//
// # Which files have text
//
// The bytes decide, never the name (issue 18 §1: the media type is sniffed
// from the bytes, never the filename). A file whose first five bytes are "%PDF-" is a PDF (ISO
// 32000-2 §7.5.2 puts the header at the start; so do the WHATWG sniffing
// rules and net/http). Otherwise net/http.DetectContentType classifies the
// first 512 bytes: bytes it calls text/plain are text; anything else (an
// image, an archive, an Office file, bytes it cannot name) is "unsupported
// type" with no pages.
//
// Markdown cannot be told from plain text by its bytes: it is UTF-8 text. So
// the uploader's declared media type or filename (Hint) may choose between
// the text kinds, and only for bytes that are text already: text/markdown
// (".md", ".markdown") or text/plain. It may also take a file whose bytes
// look like HTML or XML ("<!-- …", "<div>") as the text kind it names, since
// Markdown may open with either. A hint never makes binary into text and
// never makes text into a PDF.
//
// # Text files
//
// A text file is valid UTF-8 or it is "not UTF-8" with no pages (a UTF-16
// file is text, but not UTF-8). A leading byte order mark is an encoding
// signature, not text, and is dropped. A page ends at a form feed (which
// belongs to no page; a form feed that ends the file starts no page), else
// at the last line break within Options.PageChars characters; a line longer
// than that is cut at PageChars characters, never inside a rune and never
// between the CR and LF of a line break. Markdown is kept as written.
//
// # PDFs
//
// PDF text comes from PDFium (github.com/klippa-app/go-pdfium) compiled to
// WebAssembly and run by wazero, so a CGO_ENABLED=0 linux/arm64 build keeps
// working and a fault in the engine is a trap, not a crash of the process.
// The module is compiled once per process (the first New: about 4 s and a
// heap peak near 300 MB; Options.CacheDir can keep it on disk); every
// document gets a fresh engine instance with its own memory
// (Options.EngineMemory at most), which is closed and discarded after the
// document and never reused, and is killed if the document runs past
// Options.TimeLimit. The instance sees no file system and writes
// nowhere. pdfcpu was weighed and dropped: it extracts content streams, not
// page text.
//
// Each page's text is one chunk, or several with the same page number when
// it is longer than Options.ChunkChars (split as text pages are). A document
// that needs a password to open is "encrypted"; one encrypted with an empty
// user password opens in every reader without one, so its text is taken. A
// document whose cross-reference table had to be rebuilt is partial
// ("damaged PDF"): PDFium recovers what it finds, and what it did not find
// cannot be told. A PDF with pages but no text on any of them (a scan
// without a text layer) is "no text layer".
//
// # Limits
//
// Options bounds every document: pages (2,000), text (20 MB, in UTF-8),
// text per page (200 KB), time (60 s). Reaching one is never silent: the
// result is partial, holds the text done before the limit, names the limit
// in Reason and lists it in Limits; a limit reached before any text is
// unavailable with the same reason. Control characters other than tab and
// line feed are removed from all text, except the CR of a CRLF pair, which
// is part of the line break as written.
//
// An error from Extract means there is no result for the file: its reader
// failed, the caller's context ended, or the engine could not start. The
// file is not at fault, and the caller should try again later. Anything a
// file's bytes cause, however malformed, is a Result.
package extract
