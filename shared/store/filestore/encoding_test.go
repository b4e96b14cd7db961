package filestore

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/store"
)

func TestEncodingRoundTrip(t *testing.T) {
	k := store.Key{PK: "p", SK: "s"}
	tests := []struct {
		name string
		in   store.Item
		want store.Item // zero: same as in
	}{
		{name: "bare", in: store.Item{PK: "p", SK: "s"}},
		{name: "every field", in: store.Item{
			PK: "p", SK: "s", GSI1PK: "g", GSI1SK: "é", Version: math.MinInt64, ExpiresAt: math.MaxInt64,
			Attrs: map[string]any{"": "", "s": "a\x00b", "i": int64(math.MaxInt64), "j": int64(-1),
				"t": true, "f": false, "y": []byte{0, 0xff}, "e": []byte{}},
		}},
		{
			name: "nil bytes read back empty",
			in:   store.Item{PK: "p", SK: "s", Attrs: map[string]any{"y": []byte(nil)}},
			want: store.Item{PK: "p", SK: "s", Attrs: map[string]any{"y": []byte{}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want.PK == "" {
				want = tc.in
			}
			if want.Attrs == nil {
				want.Attrs = map[string]any{}
			}
			got, err := decodeItem(k, encodeItem(tc.in))
			if err != nil {
				t.Fatalf("decodeItem(encodeItem(%+v)) = %v", tc.in, err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("round trip mismatch (-want +got):\n%s", d)
			}
		})
	}
}

func TestDecodeRefusesTruncatedValues(t *testing.T) {
	v := encodeItem(store.Item{PK: "p", SK: "s", GSI1PK: "g", GSI1SK: "h", Version: 300,
		Attrs: map[string]any{"s": "text", "i": int64(1 << 40), "y": []byte{1, 2}, "b": true}})
	for n := range len(v) {
		if _, err := decodeItem(store.Key{PK: "p", SK: "s"}, v[:n]); err == nil {
			t.Fatalf("decodeItem of the first %d of %d bytes = nil error, want errCorrupt", n, len(v))
		}
	}
	if _, err := decodeItem(store.Key{PK: "p", SK: "s"}, append(v, 0)); err == nil {
		t.Fatal("decodeItem with a trailing byte = nil error, want errCorrupt")
	}
}

func FuzzDecodeItem(f *testing.F) {
	f.Add(encodeItem(store.Item{PK: "p", SK: "s", GSI1PK: "g", GSI1SK: "h", Version: 1,
		Attrs: map[string]any{"s": "x", "i": int64(-5), "y": []byte{9}, "b": false}}))
	f.Add([]byte{formatV1})
	f.Fuzz(func(t *testing.T, v []byte) {
		it, err := decodeItem(store.Key{PK: "p", SK: "s"}, v)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to something that decodes the same.
		again, err := decodeItem(store.Key{PK: "p", SK: "s"}, encodeItem(it))
		if err != nil {
			t.Fatalf("re-decode = %v", err)
		}
		if d := cmp.Diff(it, again); d != "" {
			t.Fatalf("re-decode mismatch (-first +second):\n%s", d)
		}
	})
}

func BenchmarkEncode(b *testing.B) {
	it := benchItem()
	b.ReportAllocs()
	for b.Loop() {
		_ = encodeItem(it)
	}
}

func BenchmarkDecode(b *testing.B) {
	v := encodeItem(benchItem())
	k := store.Key{PK: "SESS#1", SK: "SESS"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeItem(k, v); err != nil {
			b.Fatal(err)
		}
	}
}

func benchItem() store.Item {
	return store.Item{
		PK: "SESS#1", SK: "SESS", GSI1PK: "T#tenant-0001#SESS", GSI1SK: "2026-05-01T12:00:00Z", Version: 1,
		Attrs: map[string]any{
			"tenant": "tenant-0001", "principal": "user:alice@example.com", "surface": "mcp",
			"protocol": "2025-11-25", "created_at": int64(1_800_000_000), "requests": int64(42),
			"client_safe": false, "sha256": make([]byte, 32),
		},
	}
}
