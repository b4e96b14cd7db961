package dynamostore

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/custodymcp/custody/shared/store"
)

// av is a DynamoDB attribute map, as items and keys travel on the wire.
type av = map[string]types.AttributeValue

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// attrValue encodes one of the port's attribute values (string, int64,
// bool, []byte; store.ValidateItem has refused the others).
func attrValue(v any) types.AttributeValue {
	switch x := v.(type) {
	case string:
		return str(x)
	case int64:
		return num(x)
	case bool:
		return &types.AttributeValueMemberBOOL{Value: x}
	case []byte:
		if x == nil {
			// The SDK sends a nil slice as "B": null, which DynamoDB
			// refuses; the port reads a nil []byte back as empty.
			x = []byte{}
		}
		return &types.AttributeValueMemberB{Value: x}
	}
	panic(fmt.Sprintf("dynamostore: unvalidated attribute type %T", v))
}

// keyAV is the table key of k.
func keyAV(k store.Key) av { return av{attrPK: str(k.PK), attrSK: str(k.SK)} }

// encodeItem is the stored form of it written by the call whose write
// token is token ("" stores none; see the package doc).
func encodeItem(it store.Item, token string) av {
	m := make(av, len(it.Attrs)+7)
	m[attrPK], m[attrSK], m[attrVersion] = str(it.PK), str(it.SK), num(it.Version)
	if token != "" {
		m[store.WriteTokenAttr] = str(token)
	}
	if it.GSI1PK != "" && it.GSI1SK != "" {
		m[attrGSI1PK], m[attrGSI1SK] = str(it.GSI1PK), str(it.GSI1SK)
	}
	if it.ExpiresAt != 0 {
		m[TTLAttribute] = num(it.ExpiresAt)
	}
	for name, v := range it.Attrs {
		m[name] = attrValue(v)
	}
	return m
}

// decodeItem reads a stored item, leaving out the write token. Attributes
// of types the engine never writes (lists, maps, sets, NULL) or numbers
// that are not int64 are an error: the row was not written through the
// port.
func decodeItem(m av) (store.Item, error) {
	var it store.Item
	for name, v := range m {
		var err error
		switch name {
		case store.WriteTokenAttr:
			// The engine's own (see "Retries"); never shown to callers.
		case attrPK:
			it.PK, err = asString(name, v)
		case attrSK:
			it.SK, err = asString(name, v)
		case attrGSI1PK:
			it.GSI1PK, err = asString(name, v)
		case attrGSI1SK:
			it.GSI1SK, err = asString(name, v)
		case attrVersion:
			it.Version, err = asInt(name, v)
		case TTLAttribute:
			it.ExpiresAt, err = asInt(name, v)
		default:
			var x any
			switch v := v.(type) {
			case *types.AttributeValueMemberS:
				x = v.Value
			case *types.AttributeValueMemberBOOL:
				x = v.Value
			case *types.AttributeValueMemberB:
				x = v.Value
			case *types.AttributeValueMemberN:
				x, err = asInt(name, v)
			default:
				err = fmt.Errorf("attribute %q has unsupported DynamoDB type %T", name, v)
			}
			if it.Attrs == nil {
				it.Attrs = make(map[string]any, len(m))
			}
			it.Attrs[name] = x
		}
		if err != nil {
			return store.Item{}, fmt.Errorf("dynamostore: decode item: %w: %w", store.ErrUnavailable, err)
		}
	}
	return it, nil
}

func asString(name string, v types.AttributeValue) (string, error) {
	s, ok := v.(*types.AttributeValueMemberS)
	if !ok {
		return "", fmt.Errorf("attribute %q is %T, want S", name, v)
	}
	return s.Value, nil
}

func asInt(name string, v types.AttributeValue) (int64, error) {
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("attribute %q is %T, want N", name, v)
	}
	i, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("attribute %q is not an int64: %w", name, err)
	}
	return i, nil
}

// liveItem decodes m and returns it when it is live at now (epoch seconds),
// nil when m is empty (absent) or expired.
func liveItem(m av, now int64) (*store.Item, error) {
	if len(m) == 0 {
		return nil, nil
	}
	it, err := decodeItem(m)
	if err != nil || !store.Live(it.ExpiresAt, now) {
		return nil, err
	}
	return &it, nil
}
