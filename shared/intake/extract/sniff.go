package extract

import (
	"bytes"
	"mime"
	"net/http"
	"path"
	"strings"
)

// sniffLen is how much of a file sniff looks at: net/http.DetectContentType
// reads 512 bytes.
const sniffLen = 512

type kind int

const (
	kindOther kind = iota
	kindPDF
	kindText
)

const (
	mediaPDF      = "application/pdf"
	mediaPlain    = "text/plain"
	mediaMarkdown = "text/markdown"
)

// sniff classifies a file by its first bytes (head) and returns its kind
// and the media type to record. For text the media type carries
// "; charset=utf-8" only while the text is taken to be UTF-8; extractText
// drops it when the bytes prove otherwise. The hint chooses the text kind
// and nothing else (package doc).
func sniff(head []byte, hint Hint) (kind, string) {
	if bytes.HasPrefix(head, []byte("%PDF-")) {
		return kindPDF, mediaPDF
	}
	detected := http.DetectContentType(head)
	essence, params, err := mime.ParseMediaType(detected)
	if err != nil {
		return kindOther, detected
	}
	hinted := hintedTextKind(hint)
	switch essence {
	case mediaPlain:
		// DetectContentType says text/plain for bytes with no binary byte in
		// the first 512 (charset utf-8, which it does not check) and for a
		// UTF-16 byte order mark (charset utf-16be or utf-16le).
		if hinted == "" {
			hinted = mediaPlain
		}
		return kindText, withCharset(hinted, params["charset"])
	case "text/html", "text/xml":
		// Markup-looking text ("<!-- …", "<div", "<?xml") is text the
		// uploader may name as plain or Markdown; unnamed, it is markup we
		// do not index.
		if hinted != "" {
			return kindText, withCharset(hinted, params["charset"])
		}
	}
	return kindOther, detected
}

func withCharset(mediaType, charset string) string {
	if charset == "" {
		return mediaType
	}
	return mediaType + "; charset=" + strings.ToLower(charset)
}

// hintedTextKind is the text kind a hint names: Markdown for
// text/markdown (RFC 7763; text/x-markdown before it) or a ".md" or
// ".markdown" name, plain for text/plain or a ".txt" or ".text" name, ""
// for anything else. A declared media type outranks the filename.
func hintedTextKind(h Hint) string {
	if essence, _, err := mime.ParseMediaType(h.MediaType); err == nil {
		switch essence {
		case mediaMarkdown, "text/x-markdown":
			return mediaMarkdown
		case mediaPlain:
			return mediaPlain
		}
	}
	name := h.Filename
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".markdown":
		return mediaMarkdown
	case ".txt", ".text":
		return mediaPlain
	}
	return ""
}
