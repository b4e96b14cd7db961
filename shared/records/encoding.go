package records

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// EncodingError reports a string of a fixture that is not valid UTF-8. The
// record keeps text verbatim — a quote must match its source byte for byte —
// and JSON cannot carry such a string unchanged (encoding/json would
// silently put U+FFFD in its place), so the whole fixture is refused and
// nothing is written. It wraps ErrInvalid.
type EncodingError struct {
	// Record names the record holding the string: "document d_x version 1
	// chunk 3", "fact f_x assertion 2", "matter m_x".
	Record string
	// Field is the string's field within the record: "text", "quote",
	// "model_proposal.rationale".
	Field string
}

func (e *EncodingError) Error() string {
	return fmt.Sprintf("%s: field %s is not valid UTF-8 (the record keeps text verbatim)", e.Record, e.Field)
}

// Unwrap returns ErrInvalid.
func (e *EncodingError) Unwrap() error { return ErrInvalid }

// pathElem is one step of a JSON path: an object member or an array index.
type pathElem struct {
	key   string
	index int
	array bool
}

// invalidUTF8In returns the path of the first JSON string (member name or
// value) of data whose bytes are not valid UTF-8, and whether there is one.
// data must be a JSON document; a syntax error ends the walk (the decoder
// that follows reports it).
func invalidUTF8In(data []byte) ([]pathElem, bool) {
	type frame struct {
		array   bool
		index   int
		key     string
		wantKey bool
	}
	var stack []frame
	path := func(last *pathElem) []pathElem {
		var out []pathElem
		for _, f := range stack {
			if f.array {
				out = append(out, pathElem{index: f.index, array: true})
			} else if f.key != "" {
				out = append(out, pathElem{key: f.key})
			}
		}
		if last != nil {
			out = append(out, *last)
		}
		return out
	}
	begin := func() {
		if n := len(stack); n > 0 && stack[n-1].array {
			stack[n-1].index++
		}
	}
	end := func() {
		if n := len(stack); n > 0 && !stack[n-1].array {
			stack[n-1].wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil { // io.EOF, or a syntax error ParseFixture reports
			return nil, false
		}
		// Between tokens there is only ASCII (white space, ',' and ':'), so
		// an invalid byte in this span belongs to this token.
		bad := !utf8.Valid(data[start:dec.InputOffset()])
		switch d, isDelim := tok.(json.Delim); {
		case isDelim && (d == '{' || d == '['):
			begin()
			stack = append(stack, frame{array: d == '[', index: -1, wantKey: d == '{'})
		case isDelim:
			stack = stack[:len(stack)-1]
			end()
		case len(stack) > 0 && !stack[len(stack)-1].array && stack[len(stack)-1].wantKey:
			key, _ := tok.(string)
			if bad {
				return path(&pathElem{key: strings.ToValidUTF8(key, "\uFFFD")}), true
			}
			stack[len(stack)-1].key, stack[len(stack)-1].wantKey = key, false
		default:
			begin()
			if bad {
				return path(nil), true
			}
			end()
		}
	}
}

// invalidUTF8Value returns the JSON path of the first string of v (a
// fixture, walked by its JSON field names) that is not valid UTF-8.
func invalidUTF8Value(v reflect.Value, prefix []pathElem) ([]pathElem, bool) {
	switch v.Kind() {
	case reflect.String:
		if !utf8.ValidString(v.String()) {
			return prefix, true
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return invalidUTF8Value(v.Elem(), prefix)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if p, ok := invalidUTF8Value(v.Index(i), append(prefix[:len(prefix):len(prefix)], pathElem{index: i, array: true})); ok {
				return p, true
			}
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return nil, false
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			next := prefix
			if !f.Anonymous { // an embedded struct's fields are the outer object's
				if name == "" {
					name = f.Name
				}
				next = append(prefix[:len(prefix):len(prefix)], pathElem{key: name})
			}
			if p, ok := invalidUTF8Value(v.Field(i), next); ok {
				return p, true
			}
		}
	}
	return nil, false
}

// checkUTF8 refuses a fixture holding a string that is not valid UTF-8
// (*EncodingError).
func checkUTF8(f Fixture) error {
	if p, ok := invalidUTF8Value(reflect.ValueOf(f), nil); ok {
		return encodingError(f, p)
	}
	return nil
}

// encodingError names the record and field at path p of fixture f: ids
// where the fixture has them, else positions.
func encodingError(f Fixture, p []pathElem) *EncodingError {
	var record []string
	rest := p
	// take consumes "<collection>[i]" from rest when the collection is next.
	take := func(collection string) (int, bool) {
		if len(rest) >= 2 && rest[0].key == collection && rest[1].array {
			i := rest[1].index
			rest = rest[2:]
			return i, true
		}
		return 0, false
	}
	// An id that is itself the invalid string (decoded as U+FFFD, or
	// still invalid in a Go fixture) cannot name its record: its position does.
	named := func(kind string, id string, i int) string {
		if id == "" || !utf8.ValidString(id) || strings.ContainsRune(id, utf8.RuneError) {
			return kind + " #" + strconv.Itoa(i+1)
		}
		return kind + " " + id
	}
	number := func(kind string, n, i int) string {
		if n < 1 {
			n = i + 1
		}
		return kind + " " + strconv.Itoa(n)
	}
	if len(rest) > 0 && rest[0].key == "tenant" {
		record, rest = append(record, named("tenant", f.Tenant.ID, 0)), rest[1:]
	} else if i, ok := take("principals"); ok && i < len(f.Principals) {
		record = append(record, named("principal", f.Principals[i].ID, i))
	} else if i, ok := take("matters"); ok && i < len(f.Matters) {
		record = append(record, named("matter", f.Matters[i].ID, i))
	} else if i, ok := take("documents"); ok && i < len(f.Documents) {
		d := f.Documents[i]
		record = append(record, named("document", d.ID, i))
		if j, ok := take("versions"); ok && j < len(d.Versions) {
			v := d.Versions[j]
			record = append(record, number("version", v.Number, j))
			if k, ok := take("chunks"); ok && k < len(v.Chunks) {
				record = append(record, number("chunk", v.Chunks[k].Seq, k))
			}
		}
	} else if i, ok := take("facts"); ok && i < len(f.Facts) {
		record = append(record, named("fact", f.Facts[i].ID, i))
		if k, ok := take("assertions"); ok {
			record = append(record, "assertion "+strconv.Itoa(k+1))
		} else if k, ok := take("checks"); ok {
			record = append(record, "check "+strconv.Itoa(k+1))
		}
	} else if i, ok := take("deadlines"); ok && i < len(f.Deadlines) {
		record = append(record, named("deadline", f.Deadlines[i].ID, i))
	} else if i, ok := take("notes"); ok && i < len(f.Notes) {
		record = append(record, named("note", f.Notes[i].ID, i))
	}
	if len(record) == 0 {
		record, rest = []string{"fixture"}, p
	}
	var field strings.Builder
	for _, e := range rest {
		switch {
		case e.array:
			field.WriteString("[" + strconv.Itoa(e.index) + "]")
		case field.Len() > 0:
			field.WriteString("." + e.key)
		default:
			field.WriteString(e.key)
		}
	}
	return &EncodingError{Record: strings.Join(record, " "), Field: field.String()}
}

// parseUTF8 refuses seed-format bytes holding a JSON string that is not
// valid UTF-8, naming its record and field; nil when every string is valid
// (or the bytes are not JSON, which the strict decoder reports).
func parseUTF8(data []byte) error {
	if utf8.Valid(data) {
		return nil
	}
	p, ok := invalidUTF8In(data)
	if !ok {
		return nil
	}
	// The ids that name the record: decoded leniently (the invalid bytes
	// become U+FFFD, which named() does not show as an id).
	var f Fixture
	if err := json.Unmarshal(data, &f); err != nil {
		f = Fixture{}
	}
	return encodingError(f, p)
}
