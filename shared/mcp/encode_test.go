package mcp

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// AppendQuoted writes exactly what encoding/json writes without HTML
// escaping: the same escapes (U+2028 and U+2029 included) and U+FFFD for
// invalid UTF-8, so its output is always valid UTF-8.
func TestAppendQuotedMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `quo"te \ back`, "tab\tnl\ncr\r", "\x00\x01\x1f\b\f", "<b>&amp;</b>",
		"é ü 漢字 🙂", "line\u2028sep\u2029", "bad\xffutf8", "\x7f", "cut\xe6\x97"} {
		var ref bytes.Buffer
		enc := json.NewEncoder(&ref)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		got, want := AppendQuoted(nil, s), bytes.TrimSuffix(ref.Bytes(), []byte("\n"))
		if !bytes.Equal(got, want) {
			t.Errorf("AppendQuoted(%q) = %s, encoding/json writes %s", s, got, want)
		}
		if !utf8.Valid(got) {
			t.Errorf("AppendQuoted(%q) = %q is not valid UTF-8", s, got)
		}
	}
}

func TestCallToolResultEncodeIsTheSameJSON(t *testing.T) {
	r := &CallToolResult{
		Content:           []Content{TextContent(`{"a":"<x>"}`), TextContent("second")},
		StructuredContent: json.RawMessage(`{"a":"<x>"}`),
		IsError:           true,
		Meta:              map[string]any{"ms": 1.5},
	}
	got, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("Encode = %s: %v", got, err)
	}
	ref, _ := json.Marshal(r)
	_ = json.Unmarshal(ref, &b)
	if string(mustJSON(a)) != string(mustJSON(b)) {
		t.Errorf("Encode = %s, encoding/json = %s", got, ref)
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

func TestAResourceLinkBlockIsWrittenAsTheSchemaHasIt(t *testing.T) {
	res := CallToolResult{Content: []Content{{Type: "resource_link", URI: "custody://matters/m/exports/x",
		Name: "export", MimeType: "application/json", Description: "An export."}}}
	got, err := res.Encode()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content":[{"type":"resource_link","uri":"custody://matters/m/exports/x","name":"export","description":"An export.","mimeType":"application/json"}]}`
	if string(got) != want {
		t.Errorf("Encode = %s, want %s", got, want)
	}
}
