package store_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/custodymcp/custody/shared/store"
)

// TestARowCacheReusesOnlyADecodingOfIdenticalBytes: a row read again with
// the same version and bytes is not decoded again; a change of either
// decodes afresh (issue 19, item 2: no authority is cached, only parsing).
func TestARowCacheReusesOnlyADecodingOfIdenticalBytes(t *testing.T) {
	c := store.NewRowCache[string](2)
	decodes := 0
	decode := func(b []byte) (string, error) {
		decodes++
		if string(b) == "bad" {
			return "", errors.New("undecodable")
		}
		return "decoded " + string(b), nil
	}
	row := func(version int64, data string) store.Item {
		return store.Item{PK: "T#t", SK: "MATTER#m", Version: version, Attrs: map[string]any{"data": []byte(data)}}
	}
	steps := []struct {
		it      store.Item
		want    string
		decodes int
	}{
		{row(1, `{"team":["a"]}`), `decoded {"team":["a"]}`, 1},
		{row(1, `{"team":["a"]}`), `decoded {"team":["a"]}`, 1}, // identical: reused
		{row(1, `{"team":["b"]}`), `decoded {"team":["b"]}`, 2}, // same version, other bytes
		{row(2, `{"team":["b"]}`), `decoded {"team":["b"]}`, 3}, // other version
		{row(2, `{"team":["b"]}`), `decoded {"team":["b"]}`, 3},
	}
	for i, s := range steps {
		got, err := c.Decode(s.it, "data", decode)
		if err != nil || got != s.want || decodes != s.decodes {
			t.Errorf("step %d: %q, %v after %d decodings; want %q after %d", i, got, err, decodes, s.want, s.decodes)
		}
	}
	// A failed decoding is an error every time, never kept.
	for range 2 {
		if _, err := c.Decode(row(3, "bad"), "data", decode); err == nil {
			t.Error("a row that does not decode: nil error")
		}
	}
	if decodes != 5 {
		t.Errorf("%d decodings, want 5: a failure is not kept", decodes)
	}
	// The cache holds at most its size: other rows push the first out.
	for i := range 3 {
		it := row(1, "x")
		it.SK = "MATTER#" + strconv.Itoa(i)
		if _, err := c.Decode(it, "data", decode); err != nil {
			t.Fatal(err)
		}
	}
	// The caller's bytes may change after the call: the cache kept a copy.
	it := row(7, "same")
	if _, err := c.Decode(it, "data", decode); err != nil {
		t.Fatal(err)
	}
	it.Bytes("data")[0] = 'S'
	n := decodes
	if got, _ := c.Decode(row(7, "same"), "data", decode); got != "decoded same" || decodes != n {
		t.Errorf("after the caller changed its bytes: %q in %d more decodings, want the kept decoding", got, decodes-n)
	}
	// A nil cache decodes every time.
	var none *store.RowCache[string]
	n = decodes
	none.Decode(row(1, "x"), "data", decode)
	none.Decode(row(1, "x"), "data", decode)
	if decodes != n+2 {
		t.Errorf("a nil cache decoded %d times for two reads, want 2", decodes-n)
	}
}
