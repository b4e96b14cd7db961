package resources

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// uriTemplate is a compiled RFC 6570 level-1 template: literal text and
// simple string expansions {var} only (RFC 6570 §1.2, level 1). Matching a
// URI is the reverse of expansion: each variable takes one non-empty run of
// characters other than '/', '?' and '#' (what a level-1 expansion of a
// value can produce, since it percent-encodes every reserved character),
// percent-decoded.
type uriTemplate struct {
	text string
	vars []string
	re   *regexp.Regexp
}

// compileTemplate parses a level-1 URI template. Variable names are
// [A-Za-z0-9_]+ and distinct; operators (+ # . / ; ? &), explode and
// prefix modifiers (levels 2–4) are refused.
func compileTemplate(text string) (*uriTemplate, error) {
	t := &uriTemplate{text: text}
	var pattern strings.Builder
	pattern.WriteString("^")
	rest := text
	for rest != "" {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			if strings.IndexByte(rest, '}') >= 0 {
				return nil, fmt.Errorf("uri template %q: unbalanced '}'", text)
			}
			pattern.WriteString(regexp.QuoteMeta(rest))
			break
		}
		lit := rest[:open]
		if strings.IndexByte(lit, '}') >= 0 {
			return nil, fmt.Errorf("uri template %q: unbalanced '}'", text)
		}
		pattern.WriteString(regexp.QuoteMeta(lit))
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("uri template %q: unclosed '{'", text)
		}
		name := rest[open+1 : open+end]
		if !varName(name) {
			return nil, fmt.Errorf("uri template %q: {%s} is not a level-1 variable ([A-Za-z0-9_]+)", text, name)
		}
		for _, v := range t.vars {
			if v == name {
				return nil, fmt.Errorf("uri template %q: variable %s repeated", text, name)
			}
		}
		t.vars = append(t.vars, name)
		pattern.WriteString(`([^/?#]+)`)
		rest = rest[open+end+1:]
	}
	pattern.WriteString("$")
	re, err := regexp.Compile(pattern.String())
	if err != nil {
		return nil, fmt.Errorf("uri template %q: %w", text, err)
	}
	t.re = re
	return t, nil
}

func varName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// match returns the variables of uri when it is an expansion of t; a value
// whose percent-encoding is malformed does not match.
func (t *uriTemplate) match(uri string) (map[string]string, bool) {
	m := t.re.FindStringSubmatch(uri)
	if m == nil {
		return nil, false
	}
	vars := make(map[string]string, len(t.vars))
	for i, name := range t.vars {
		v, err := url.PathUnescape(m[i+1])
		if err != nil || v == "" {
			return nil, false
		}
		vars[name] = v
	}
	return vars, true
}

// Expand expands a level-1 URI template with vars (RFC 6570 §3.2.2): each
// {name} becomes its value with every character outside the unreserved set
// (ALPHA, DIGIT, "-", ".", "_", "~") percent-encoded as UTF-8; a missing
// variable expands to "".
func Expand(template string, vars map[string]string) string {
	var b strings.Builder
	rest := template
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			b.WriteString(rest)
			return b.String()
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString(rest[:open])
		b.WriteString(escapeUnreserved(vars[rest[open+1:open+end]]))
		rest = rest[open+end+1:]
	}
}

func escapeUnreserved(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
	return b.String()
}

// MaxURIBytes bounds a URI resources/read, subscribe and unsubscribe
// accept: a subscription keys a store row by it (DynamoDB allows 1024-byte
// sort keys). A longer URI names no resource.
const MaxURIBytes = 1000

// isURI reports whether s is an absolute URI (RFC 3986 §4.3): a scheme —
// a letter, then letters, digits, "+", "-" or "." — a colon, and no
// whitespace or control character anywhere. "not a uri" is not one.
func isURI(s string) bool {
	colon := strings.IndexByte(s, ':')
	if colon < 1 {
		return false
	}
	for i := 0; i < colon; i++ {
		c := s[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	for _, r := range s {
		if r <= 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return false
		}
	}
	return true
}
