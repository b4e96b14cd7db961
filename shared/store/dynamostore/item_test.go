package dynamostore

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/custodymcp/custody/shared/store"
)

// storedSize is an item's size as DynamoDB documents it ("Item sizes and
// formats"): each attribute's name in UTF-8 bytes plus its value, strings
// by UTF-8 length, binaries by length, booleans as 1, numbers as one byte
// per two significant digits plus one.
func storedSize(t *testing.T, m av) int {
	t.Helper()
	n := 0
	for name, v := range m {
		n += len(name)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			n += len(v.Value)
		case *types.AttributeValueMemberB:
			n += len(v.Value)
		case *types.AttributeValueMemberBOOL:
			n++
		case *types.AttributeValueMemberN:
			digits := strings.Trim(strings.TrimPrefix(v.Value, "-"), "0")
			n += (len(digits)+1)/2 + 1
		default:
			t.Fatalf("attribute %q has type %T, which the engine never stores", name, v)
		}
	}
	return n
}

// The port's MaxItemBytes must hold for the item as this engine stores it,
// write token included, or DynamoDB would refuse an item the port accepts.
func TestItemSizeIsTheStoredItemsSizeWithItsWriteToken(t *testing.T) {
	tests := []struct {
		name string
		item store.Item
	}{
		{"keys and version only", store.Item{PK: "p", SK: "s", Version: 1}},
		{"every field and type", store.Item{PK: "T#1#M#2", SK: "DOC#ü", GSI1PK: "M#2", GSI1SK: "2026", Version: 1234567,
			ExpiresAt: 1_800_000_000, Attrs: map[string]any{"s": "héllo", "n": int64(-100), "b": true, "y": []byte{1, 2, 3}, "zero": int64(0)}}},
		{"a version of zero", store.Item{PK: "p", SK: "s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := encodeItem(tt.item, newWriteToken())
			if got, want := store.ItemSize(tt.item), storedSize(t, m); got != want {
				t.Errorf("ItemSize = %d, want %d (the stored item's size)", got, want)
			}
		})
	}
}

func TestWriteTokensAreFreshAndOfTheCountedLength(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		tok := newWriteToken()
		if len(tok) != store.WriteTokenLen {
			t.Fatalf("newWriteToken() = %q, %d characters, want %d", tok, len(tok), store.WriteTokenLen)
		}
		if seen[tok] {
			t.Fatalf("newWriteToken() repeated %q", tok)
		}
		seen[tok] = true
	}
}
