package store

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ValidateKey checks the port's key rules: non-empty, valid UTF-8, no NUL.
func ValidateKey(k Key) error {
	if err := validKeyPart("PK", k.PK); err != nil {
		return err
	}
	return validKeyPart("SK", k.SK)
}

// Key length limits (DynamoDB's: 2048 bytes for a partition key, 1024 for a
// sort key; the same for the index keys).
const (
	MaxPKBytes = 2048
	MaxSKBytes = 1024
)

func validKeyPart(name, s string) error {
	limit := MaxSKBytes
	if name == "PK" || name == "GSI1PK" {
		limit = MaxPKBytes
	}
	switch {
	case s == "":
		return fmt.Errorf("%s is empty: %w", name, ErrInvalid)
	case len(s) > limit:
		return fmt.Errorf("%s is %d bytes, over %d: %w", name, len(s), limit, ErrInvalid)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s is not valid UTF-8: %w", name, ErrInvalid)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("%s contains NUL: %w", name, ErrInvalid)
	}
	return nil
}

// ValidateItem checks an item against the port's rules (keys, index keys,
// attribute names and types, MaxItemBytes). Both engines call it before any
// write, so both refuse the same items with the same errors.
func ValidateItem(it Item) error {
	if err := ValidateKey(it.Key()); err != nil {
		return err
	}
	if (it.GSI1PK == "") != (it.GSI1SK == "") {
		return fmt.Errorf("GSI1PK and GSI1SK must be set together: %w", ErrInvalid)
	}
	if it.GSI1PK != "" {
		if err := validKeyPart("GSI1PK", it.GSI1PK); err != nil {
			return err
		}
		if err := validKeyPart("GSI1SK", it.GSI1SK); err != nil {
			return err
		}
	}
	if it.ExpiresAt < 0 {
		return fmt.Errorf("negative expiry: %w", ErrInvalid)
	}
	for name, v := range it.Attrs {
		if err := validAttr(name, v); err != nil {
			return err
		}
	}
	if n := ItemSize(it); n > MaxItemBytes {
		return fmt.Errorf("item %s is %d bytes, over %d: %w", it.Key(), n, MaxItemBytes, ErrTooLarge)
	}
	return nil
}

func validAttr(name string, v any) error {
	if name == "" || !utf8.ValidString(name) {
		return fmt.Errorf("attribute name %q: %w", name, ErrInvalid)
	}
	if ReservedAttr[name] {
		return fmt.Errorf("attribute name %q is reserved: %w", name, ErrInvalid)
	}
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) {
			return fmt.Errorf("attribute %q is not valid UTF-8: %w", name, ErrInvalid)
		}
	case int64, bool, []byte:
	default:
		return fmt.Errorf("attribute %q has unsupported type %T: %w", name, v, ErrInvalid)
	}
	return nil
}

// ValidateUpdate checks an Update: attribute names and types, each
// attribute named once across Set, Add and Remove, and index keys updated
// together, both set (valid key parts) or both removed ("").
func ValidateUpdate(u Update) error {
	named := map[string]bool{}
	name := func(n string) error {
		if named[n] {
			return fmt.Errorf("attribute %q named twice in one update: %w", n, ErrInvalid)
		}
		named[n] = true
		return nil
	}
	for n, v := range u.Set {
		if err := validAttr(n, v); err != nil {
			return err
		}
		if err := name(n); err != nil {
			return err
		}
	}
	for n := range u.Add {
		if err := validAttr(n, int64(0)); err != nil {
			return err
		}
		if err := name(n); err != nil {
			return err
		}
	}
	for _, n := range u.Remove {
		if err := validAttr(n, int64(0)); err != nil {
			return err
		}
		if err := name(n); err != nil {
			return err
		}
	}
	if u.ExpiresAt != nil && *u.ExpiresAt < 0 {
		return fmt.Errorf("negative expiry: %w", ErrInvalid)
	}
	if (u.GSI1PK == nil) != (u.GSI1SK == nil) {
		return fmt.Errorf("GSI1PK and GSI1SK must be updated together: %w", ErrInvalid)
	}
	if u.GSI1PK != nil {
		pk, sk := *u.GSI1PK, *u.GSI1SK
		if (pk == "") != (sk == "") {
			return fmt.Errorf("GSI1PK and GSI1SK must be both set or both removed: %w", ErrInvalid)
		}
		if pk != "" {
			if err := validKeyPart("GSI1PK", pk); err != nil {
				return err
			}
			if err := validKeyPart("GSI1SK", sk); err != nil {
				return err
			}
		}
	}
	return nil
}

// ValidateBatchGet checks a batch read: at most MaxBatchGetKeys keys, each
// valid, none twice (DynamoDB's BatchGetItem refuses duplicates).
func ValidateBatchGet(keys []Key) error {
	if len(keys) > MaxBatchGetKeys {
		return fmt.Errorf("batch get of %d keys, over %d: %w", len(keys), MaxBatchGetKeys, ErrInvalid)
	}
	seen := make(map[Key]bool, len(keys))
	for _, k := range keys {
		if err := ValidateKey(k); err != nil {
			return err
		}
		if seen[k] {
			return fmt.Errorf("batch get names key %s twice: %w", k, ErrInvalid)
		}
		seen[k] = true
	}
	return nil
}

// ValidateQuery checks a query's shape and returns its effective limit
// (MaxQueryLimit for 0): a known index, a partition key and sort-key bounds
// that are valid UTF-8 without NUL (the partition within MaxPKBytes), a
// prefix or a range but not both, a limit in 0..MaxQueryLimit. Both engines
// call it first, so both refuse the same queries; without it the AWS SDK
// would turn invalid UTF-8 into U+FFFD and match other keys.
func ValidateQuery(q Query) (int, error) {
	if q.Index != "" && q.Index != IndexGSI1 {
		return 0, fmt.Errorf("unknown index %q: %w", q.Index, ErrInvalid)
	}
	if err := validKeyPart("PK", q.PK); err != nil {
		return 0, fmt.Errorf("query partition: %w", err)
	}
	for _, part := range []string{q.SK.Prefix, q.SK.From, q.SK.To} {
		if !utf8.ValidString(part) || strings.IndexByte(part, 0) >= 0 {
			return 0, fmt.Errorf("query sort-key bound %q is not UTF-8 without NUL: %w", part, ErrInvalid)
		}
	}
	switch {
	case q.SK.Prefix != "" && (q.SK.From != "" || q.SK.To != ""):
		return 0, fmt.Errorf("query combines a sort-key prefix and a range: %w", ErrInvalid)
	case q.Limit < 0 || q.Limit > MaxQueryLimit:
		return 0, fmt.Errorf("query limit %d outside 0..%d: %w", q.Limit, MaxQueryLimit, ErrInvalid)
	case q.Limit == 0:
		return MaxQueryLimit, nil
	}
	return q.Limit, nil
}

// ValidateConditions checks the conditions' shapes.
func ValidateConditions(conds []Condition) error {
	for _, c := range conds {
		switch c.Kind {
		case CondNotExists, CondExists, CondVersionEquals:
		case CondAttrEquals:
			if c.Attr == "" || ReservedAttr[c.Attr] {
				return fmt.Errorf("condition on attribute %q: name an ordinary attribute (VersionEquals and Exists cover the item fields): %w", c.Attr, ErrInvalid)
			}
			switch v := c.Value.(type) {
			case string:
				if !utf8.ValidString(v) {
					return fmt.Errorf("condition on %q compares a string that is not UTF-8: %w", c.Attr, ErrInvalid)
				}
			case int64, bool:
			default:
				return fmt.Errorf("condition on %q compares unsupported type %T: %w", c.Attr, c.Value, ErrInvalid)
			}
		case CondAttrBelow:
			if c.Attr == "" || ReservedAttr[c.Attr] {
				return fmt.Errorf("condition on attribute %q: name an ordinary attribute: %w", c.Attr, ErrInvalid)
			}
			if _, ok := c.Value.(int64); !ok {
				return fmt.Errorf("below-condition on %q compares unsupported type %T (an int64 bound): %w", c.Attr, c.Value, ErrInvalid)
			}
		default:
			return fmt.Errorf("unknown condition kind %d: %w", c.Kind, ErrInvalid)
		}
	}
	return nil
}

// ValidateTransact checks a transaction before any engine evaluates it: the
// operation count, each operation's shape, and that no two operations
// address one item (DynamoDB's rule, which the file engine shares).
func ValidateTransact(ops []Op) error {
	if len(ops) == 0 {
		return fmt.Errorf("empty transaction: %w", ErrInvalid)
	}
	if len(ops) > MaxTransactItems {
		return fmt.Errorf("transaction of %d operations, over %d: %w", len(ops), MaxTransactItems, ErrInvalid)
	}
	seen := make(map[Key]int, len(ops))
	for i, op := range ops {
		k := op.OpKey()
		if j, dup := seen[k]; dup {
			return fmt.Errorf("operations %d and %d both address %s: %w", j, i, k, ErrInvalid)
		}
		seen[k] = i
		var err error
		switch op.Kind {
		case OpPut:
			err = ValidateItem(op.Item)
		case OpUpdate:
			if err = ValidateKey(op.Key); err == nil {
				err = ValidateUpdate(op.Update)
			}
		case OpDelete:
			err = ValidateKey(op.Key)
		case OpCheck:
			if err = ValidateKey(op.Key); err == nil && len(op.Conditions) == 0 {
				err = fmt.Errorf("check operation %d without conditions: %w", i, ErrInvalid)
			}
		default:
			err = fmt.Errorf("operation %d has unknown kind %d: %w", i, op.Kind, ErrInvalid)
		}
		if err == nil {
			err = ValidateConditions(op.Conditions)
		}
		if err != nil {
			return fmt.Errorf("operation %d: %w", i, err)
		}
	}
	return nil
}

// ItemSize is the item's size as DynamoDB counts it (see MaxItemBytes),
// with the write token counted on every item (WriteTokenAttr).
func ItemSize(it Item) int {
	n := len("PK") + len(it.PK) + len("SK") + len(it.SK) + len("version") + numLen(it.Version) +
		len(WriteTokenAttr) + WriteTokenLen
	if it.GSI1PK != "" {
		n += len("GSI1PK") + len(it.GSI1PK) + len("GSI1SK") + len(it.GSI1SK)
	}
	if it.ExpiresAt != 0 {
		n += len("expires_at") + numLen(it.ExpiresAt)
	}
	for name, v := range it.Attrs {
		n += len(name)
		switch x := v.(type) {
		case string:
			n += len(x)
		case []byte:
			n += len(x)
		case int64:
			n += numLen(x)
		case bool:
			n++
		}
	}
	return n
}

// numLen is a number's size as DynamoDB counts it: one byte per two
// significant digits, plus one (leading and trailing zeroes trimmed).
func numLen(v int64) int {
	digits := strings.TrimRight(strings.TrimPrefix(strconv.FormatInt(v, 10), "-"), "0")
	return (len(digits)+1)/2 + 1
}

// Live reports whether an item with this expiry is live at now (epoch
// seconds): expiry 0 never expires; otherwise live while ExpiresAt > now.
func Live(expiresAt, now int64) bool { return expiresAt == 0 || expiresAt > now }

// Holds evaluates one condition against the live item at its key (nil when
// none). Engines that evaluate conditions in-process use it; DynamoDB
// evaluates the equivalent condition expressions.
func Holds(c Condition, live *Item) bool {
	switch c.Kind {
	case CondNotExists:
		return live == nil
	case CondExists:
		return live != nil
	case CondVersionEquals:
		return live != nil && live.Version == c.Version
	case CondAttrEquals:
		if live == nil {
			return false
		}
		return attrEqual(live.Attrs[c.Attr], c.Value)
	case CondAttrBelow:
		if live == nil {
			return true
		}
		v, present := live.Attrs[c.Attr]
		if !present {
			return true
		}
		n, ok := v.(int64)
		return ok && n < c.Value.(int64)
	}
	return false
}

func attrEqual(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	return false
}

// CheckConditions evaluates conds against the live item and returns nil,
// ErrExists (only NotExists failed) or ErrConflict.
func CheckConditions(conds []Condition, live *Item) error {
	failed, onlyNotExists := false, true
	for _, c := range conds {
		if !Holds(c, live) {
			failed = true
			if c.Kind != CondNotExists {
				onlyNotExists = false
			}
		}
	}
	switch {
	case !failed:
		return nil
	case onlyNotExists:
		return ErrExists
	default:
		return ErrConflict
	}
}

// ApplyUpdate returns the item that results from applying u to the live item
// at key (nil: start from an empty item). Version becomes old+1.
func ApplyUpdate(key Key, live *Item, u Update) Item {
	out := Item{PK: key.PK, SK: key.SK, Attrs: map[string]any{}}
	if live != nil {
		out.GSI1PK, out.GSI1SK = live.GSI1PK, live.GSI1SK
		out.Version, out.ExpiresAt = live.Version, live.ExpiresAt
		for k, v := range live.Attrs {
			out.Attrs[k] = v
		}
	}
	for k, v := range u.Set {
		out.Attrs[k] = v
	}
	for k, d := range u.Add {
		cur, _ := out.Attrs[k].(int64)
		out.Attrs[k] = cur + d
	}
	for _, k := range u.Remove {
		delete(out.Attrs, k)
	}
	if u.ExpiresAt != nil {
		out.ExpiresAt = *u.ExpiresAt
	}
	if u.GSI1PK != nil {
		out.GSI1PK, out.GSI1SK = *u.GSI1PK, *u.GSI1SK
	}
	out.Version++
	return out
}
