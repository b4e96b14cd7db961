package mcp

import (
	"encoding/json"
	"testing"
)

func TestAppendQuotedMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `quo"te \ back`, "tab\tnl\ncr\r", "\x00\x01\x1f", "<b>&amp;</b>",
		"é ü 漢字 🙂", "line\u2028sep\u2029", "bad\xffutf8", "\x7f"} {
		var want string
		if err := json.Unmarshal(AppendQuoted(nil, s), &want); err != nil {
			t.Fatalf("AppendQuoted(%q) = %s: not JSON: %v", s, AppendQuoted(nil, s), err)
		}
		ref, _ := json.Marshal(s)
		var refDecoded string
		_ = json.Unmarshal(ref, &refDecoded)
		if want != refDecoded {
			t.Errorf("AppendQuoted(%q) decodes to %q, encoding/json to %q", s, want, refDecoded)
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
