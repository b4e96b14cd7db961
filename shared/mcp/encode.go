package mcp

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Encoded is a result already encoded as JSON by this server (trusted: not
// re-validated). Handlers return it to skip a second pass of encoding/json
// over large results, which would re-scan every byte.
type Encoded []byte

// Encode writes the tool result as JSON. StructuredContent that is a
// json.RawMessage is copied as is; text blocks are quoted directly.
func (r *CallToolResult) Encode() (Encoded, error) {
	b := make([]byte, 0, estimate(r)+128)
	b = append(b, `{"content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = c.appendJSON(b); err != nil {
			return nil, err
		}
	}
	b = append(b, ']')
	if r.StructuredContent != nil {
		b = append(b, `,"structuredContent":`...)
		if raw, ok := r.StructuredContent.(json.RawMessage); ok {
			b = append(b, raw...)
		} else {
			sc, err := Marshal(r.StructuredContent)
			if err != nil {
				return nil, err
			}
			b = append(b, sc...)
		}
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	if len(r.Meta) > 0 {
		m, err := Marshal(r.Meta)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"_meta":`...)
		b = append(b, m...)
	}
	return append(b, '}'), nil
}

// estimate is the encoding's likely size: the text blocks with room for
// their escapes (a JSON text quoted escapes each of its quotes; a quarter
// more covers that) and the raw structuredContent, copied as is.
func estimate(r *CallToolResult) int {
	n := 0
	for _, c := range r.Content {
		n += len(c.Text) + len(c.Text)/4
	}
	if raw, ok := r.StructuredContent.(json.RawMessage); ok {
		n += len(raw)
	}
	return n
}

// AppendQuoted appends s as a JSON string, byte for byte what encoding/json
// writes with HTML escaping off: quotes, backslashes and control characters
// escaped, U+2028 and U+2029 escaped, invalid UTF-8 replaced by U+FFFD.
func AppendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, `\u00`...)
				b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = strconv.AppendInt(b, int64(r&0xf), 16)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
