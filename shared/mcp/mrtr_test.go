package mcp

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// topLevelKeys lists the keys of a JSON object in order, duplicates kept.
func topLevelKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s is not an object", raw)
	}
	var keys []string
	for d.More() {
		k, err := d.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// Every 2026 result has exactly one resultType; an input_required answer
// keeps its own and is never marked cacheable.
func TestStamp2026GivesOneResultType(t *testing.T) {
	s, _ := NewStateSealer(bytes.Repeat([]byte{5}, 32), time.Minute)
	m := &mrtr{sealer: s, asked: map[string]any{"q1": map[string]any{"method": "elicitation/create"}}}
	asked, err := m.inputRequired(time.Unix(1e9, 0))
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		result    any
		cacheable bool
		want      []string
	}{
		"input_required":     {asked, true, []string{"resultType", "inputRequests", "requestState"}},
		"a plain result":     {map[string]any{"tools": []any{}}, false, []string{"resultType", "tools"}},
		"a cacheable result": {Encoded(`{"contents":[]}`), true, []string{"resultType", "ttlMs", "cacheScope", "contents"}},
		"an empty result":    {struct{}{}, false, []string{"resultType"}},
	} {
		got := topLevelKeys(t, stamp2026(tc.result, tc.cacheable))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: keys %v, want %v", name, got, tc.want)
		}
	}
}
