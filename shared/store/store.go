// Package store is Custody's storage port: one table of items keyed by a
// partition key and a sort key, with conditional writes, prefix and range
// queries, one secondary index, small transactions and expiry.
//
// Two engines implement it: dynamostore (DynamoDB, production) and filestore
// (bbolt, the embedded default). The conformance suite in storetest is the
// contract both must pass; this file states it in prose.
//
// # Data model
//
// An Item has string keys PK and SK (non-empty, valid UTF-8, no NUL byte),
// optional index keys GSI1PK/GSI1SK (an item is in the index only when both
// are set), a caller-maintained Version, an optional expiry in epoch seconds
// and Attrs, whose values are string, int64, bool or []byte. Other value types
// are refused with ErrInvalid. Attribute names must not collide with the
// reserved names (ReservedAttr).
//
// # Expiry
//
// An item whose ExpiresAt is non-zero and not after the engine clock's "now"
// (ExpiresAt <= now, in whole seconds) is absent: no read returns it and every
// condition treats it as not existing. An Update of an expired item starts from
// an empty item. DynamoDB deletes expired items lazily, so the DynamoDB engine
// filters them on read; the file engine may delete them whenever it likes.
//
// # Errors
//
// Engines translate their driver's errors at the boundary into the sentinels
// below, wrapped with context (test with errors.Is). A failed condition is
// ErrExists when the only failed condition was NotExists, ErrConflict
// otherwise. A throttled, timed-out or unreachable engine is ErrUnavailable.
//
// # Retries: the outcome of a write
//
// A write's answer says what happened to it, also when the engine had to
// send it more than once. The DynamoDB engine's SDK resends a request whose
// answer was lost (a 5xx, a broken connection), and DynamoDB has no
// idempotency key for single-item writes, so the resend of a write that was
// applied meets the item it wrote; the engine recognises its own write by a
// write token stored with the item (dynamostore, "Retries") and answers as
// the first attempt would have. The file engine applies every write once and
// answers that one application, so its answers follow the same contract by
// construction. Write by write:
//
//   - Put: nil when the item was stored by this call. A resend that finds
//     this call's own item is nil whatever the conditions; ErrExists or
//     ErrConflict only against an item this call did not write.
//   - Update: the same, and u is applied once: the resend finds this call's
//     item and returns it as stored, which is the item the first attempt
//     wrote.
//   - Delete without conditions: nil; repeating it changes nothing.
//   - Delete with conditions: nil when it removed the item. A resend that
//     finds no item at all, after an attempt whose answer was lost, is nil
//     too: the item is gone, as the call meant.
//   - Transact: nil when applied. DynamoDB answers the resend of an applied
//     transaction with success by its ClientRequestToken (for 10 minutes);
//     a resend evaluated anyway (a server that ignores the token) and
//     cancelled on an item holding this call's write token is this call's
//     own transaction, nil too.
//
// Where this is not exact (nothing short of a history of writes can be):
//
//   - Another write between the lost answer and the resend replaces this
//     call's token, and the resend is judged against that writer's item. A
//     Put or Update (alone or in a Transact) whose conditions fail there reports ErrExists or
//     ErrConflict although it was applied (and then superseded); an Update
//     whose conditions still hold there is applied a second time (never one
//     conditioned on VersionEquals: its own application changed the
//     version).
//   - A conditional Delete resent after a lost answer cannot tell its own
//     removal from another writer's, nor from an item already absent when
//     the lost attempt was in fact not applied: each is nil. A 4xx answer
//     (throttling) applies nothing and is not a lost answer.
//   - A Transact without a Put or an Update stores no token to find: only
//     DynamoDB's ClientRequestToken recognises its resend; against a server
//     that ignores the token the resend is reported as cancelled.
//   - ErrUnavailable from a write leaves its outcome unknown (the last
//     attempt's answer may have been lost too). Repeating the write is a new
//     call with a new token, which meets the earlier one as another
//     writer's: ErrExists for a NotExists Put that had been applied.
//
// The write token lives in the reserved attribute WriteTokenAttr: callers
// cannot set, remove or condition on it, no read returns it, and ItemSize
// counts it on every item on both engines (the file engine stores none: it
// never resends), so both engines accept exactly the same items.
//
// # Consistency
//
// Get, BatchGet and table queries are strongly consistent (they decide
// authority: credentials, sessions, grants, tasks). Index queries may lag
// writes on DynamoDB; no correctness may depend on reading one's own write
// through the index (docs/decisions.md "Storage").
package store

import (
	"context"
	"errors"
	"fmt"
)

// Sentinel errors of the port. Engines wrap them; callers use errors.Is.
var (
	// ErrNotFound: Get found no live item under the key.
	ErrNotFound = errors.New("store: item not found")
	// ErrExists: a NotExists condition failed because a live item is there.
	ErrExists = errors.New("store: item already exists")
	// ErrConflict: any other condition failed (version, attribute, Exists).
	ErrConflict = errors.New("store: condition failed")
	// ErrUnavailable: the engine is throttled, timed out or down. Retrying
	// later may succeed; reads map it to UNAVAILABLE or an unreadable
	// collection (docs/decisions.md "Pipeline choices").
	ErrUnavailable = errors.New("store: engine unavailable")
	// ErrTooLarge: an item exceeds MaxItemBytes (DynamoDB's 400 KB rule,
	// enforced by both engines).
	ErrTooLarge = errors.New("store: item too large")
	// ErrInvalid: the request breaks the port's rules (empty key, NUL in a
	// key, unsupported attribute type, reserved attribute name, more than
	// MaxTransactItems operations, two operations on one item, a page token
	// that does not belong to the query).
	ErrInvalid = errors.New("store: invalid request")
)

// Limits shared by both engines (DynamoDB's own limits).
const (
	// MaxItemBytes is the largest item either engine accepts, counted as
	// DynamoDB counts it: the UTF-8 length of every attribute name plus the
	// size of its value (strings by UTF-8 length, []byte by length, numbers
	// by one byte per two significant digits plus one, bool as 1), keys and
	// index keys included, and the write token (WriteTokenAttr) on every
	// item.
	MaxItemBytes = 400 * 1024
	// MaxTransactItems is the most operations one Transact accepts.
	MaxTransactItems = 25
	// MaxBatchGetKeys is the most keys one BatchGet accepts.
	MaxBatchGetKeys = 100
	// MaxQueryLimit caps Query.Limit; a zero limit means MaxQueryLimit.
	MaxQueryLimit = 1000
)

// Reserved attribute names: the item fields as DynamoDB stores them, and
// the write token. Attrs may not use them.
var ReservedAttr = map[string]bool{
	"PK": true, "SK": true, "GSI1PK": true, "GSI1SK": true,
	"version": true, "expires_at": true, WriteTokenAttr: true,
}

// The write token (see "Retries" in the package doc): an engine that may
// send one write more than once stores, with every item it puts or
// updates, a random token of WriteTokenLen characters under the reserved
// attribute WriteTokenAttr, to recognise its own earlier attempt. No read
// returns it. ItemSize counts it on every item, on both engines, so both
// accept the same items.
const (
	WriteTokenAttr = "write_token"
	WriteTokenLen  = 22
)

// Key addresses one item.
type Key struct {
	PK string
	SK string
}

func (k Key) String() string { return k.PK + " / " + k.SK }

// Item is one row of the table.
type Item struct {
	PK string
	SK string
	// GSI1PK and GSI1SK place the item in the one secondary index; the item
	// is indexed only when both are non-empty.
	GSI1PK string
	GSI1SK string
	// Version is maintained by the caller on Put (write v+1 under
	// VersionEquals(v) for optimistic concurrency) and incremented by one on
	// every Update. A new item conventionally starts at 1.
	Version int64
	// ExpiresAt is the expiry in epoch seconds; 0 never expires.
	ExpiresAt int64
	// Attrs holds the item's other attributes: string, int64, bool or []byte.
	Attrs map[string]any
}

// Key returns the item's primary key.
func (it Item) Key() Key { return Key{PK: it.PK, SK: it.SK} }

// String returns the attribute name's value, or "" when it is absent or not
// a string.
func (it Item) String(name string) string { s, _ := it.Attrs[name].(string); return s }

// Int returns the attribute's int64 value, or 0.
func (it Item) Int(name string) int64 { n, _ := it.Attrs[name].(int64); return n }

// Bool returns the attribute's bool value, or false.
func (it Item) Bool(name string) bool { b, _ := it.Attrs[name].(bool); return b }

// Bytes returns the attribute's []byte value, or nil.
func (it Item) Bytes(name string) []byte { b, _ := it.Attrs[name].([]byte); return b }

// ConditionKind names one kind of write condition.
type ConditionKind uint8

// The condition vocabulary of the port (docs/architecture.md "Ports and engines").
const (
	// CondNotExists holds when no live item has the key.
	CondNotExists ConditionKind = iota + 1
	// CondExists holds when a live item has the key.
	CondExists
	// CondVersionEquals holds when a live item has the key and its Version
	// equals Condition.Version.
	CondVersionEquals
	// CondAttrEquals holds when a live item has the key and its attribute
	// Condition.Attr equals Condition.Value (same type and value).
	CondAttrEquals
	// CondAttrBelow holds when the live item's attribute Condition.Attr is
	// absent (or no live item has the key) or is an int64 below
	// Condition.Value (an int64): the guard of a counter that must stay
	// under a cap (a rate-limit reservation, a pending-proposal cap). It is
	// meant for counters; on an attribute of another type it fails (on
	// DynamoDB by its rule that "<" between types is false — the emulator
	// raises an error instead, so storetest leaves that case out).
	CondAttrBelow
)

// Condition guards a write. Several conditions on one write must all hold.
type Condition struct {
	Kind    ConditionKind
	Version int64
	Attr    string
	Value   any
}

// NotExists is the condition that no live item has the key.
func NotExists() Condition { return Condition{Kind: CondNotExists} }

// Exists is the condition that a live item has the key.
func Exists() Condition { return Condition{Kind: CondExists} }

// VersionEquals is the condition that the live item's Version is v.
func VersionEquals(v int64) Condition { return Condition{Kind: CondVersionEquals, Version: v} }

// AttrEquals is the condition that the live item's attribute name equals v
// (string, int64 or bool).
func AttrEquals(name string, v any) Condition {
	return Condition{Kind: CondAttrEquals, Attr: name, Value: v}
}

// AttrBelow is the condition that the live item's int64 attribute name is
// absent or below n (docs/decisions.md "Storage": the port's vocabulary).
func AttrBelow(name string, n int64) Condition {
	return Condition{Kind: CondAttrBelow, Attr: name, Value: n}
}

func (c Condition) String() string {
	switch c.Kind {
	case CondNotExists:
		return "not-exists"
	case CondExists:
		return "exists"
	case CondVersionEquals:
		return fmt.Sprintf("version=%d", c.Version)
	case CondAttrEquals:
		return fmt.Sprintf("%s=%v", c.Attr, c.Value)
	case CondAttrBelow:
		return fmt.Sprintf("%s<%v", c.Attr, c.Value)
	}
	return "invalid-condition"
}

// Update changes some fields of one item, creating it when absent (unless a
// condition forbids that). Version is incremented by one (an absent item
// becomes Version 1).
type Update struct {
	// Set assigns attributes (string, int64, bool, []byte).
	Set map[string]any
	// Add adds to int64 attributes; an absent attribute counts as 0.
	Add map[string]int64
	// Remove deletes attributes.
	Remove []string
	// ExpiresAt, when non-nil, sets the expiry (0 clears it).
	ExpiresAt *int64
	// GSI1PK and GSI1SK, when non-nil, set the index keys ("" removes).
	GSI1PK *string
	GSI1SK *string
}

// SortKeyCondition restricts a query's sort keys. The zero value matches
// every sort key in the partition.
type SortKeyCondition struct {
	// Prefix, when non-empty, keeps sort keys that begin with it.
	Prefix string
	// From and To, when non-empty, keep sort keys s with From <= s <= To
	// (byte order, both inclusive); From > To selects nothing (an empty page,
	// not an error). Prefix and a range may not be combined.
	From string
	To   string
}

// IndexGSI1 names the one secondary index.
const IndexGSI1 = "GSI1"

// Query reads the items of one partition in sort-key order.
type Query struct {
	// Index is "" for the table, IndexGSI1 for the index (PK then means
	// GSI1PK and the sort-key condition applies to GSI1SK; items with equal
	// GSI1SK come in table-key order).
	Index string
	// PK is the partition to read.
	PK string
	// SK restricts the sort keys.
	SK SortKeyCondition
	// Descending reads from the largest sort key down.
	Descending bool
	// Limit is the most items returned (1..MaxQueryLimit; 0 means
	// MaxQueryLimit). Expired items are filtered out before the limit counts.
	Limit int
	// PageToken continues a previous query with the same Index, PK, SK and
	// Descending; "" starts at the beginning.
	PageToken string
}

// Page is one page of a query.
type Page struct {
	// Items are live items in the query's order; at most Query.Limit.
	Items []Item
	// NextToken is non-empty exactly when more live items follow: a page that
	// ends on the partition's last live item has none. Tokens are opaque,
	// engine-specific and not authenticated (never hand them to clients).
	NextToken string
}

// OpKind names one kind of transaction operation.
type OpKind uint8

// Transaction operation kinds.
const (
	OpPut OpKind = iota + 1
	OpUpdate
	OpDelete
	// OpCheck writes nothing and only asserts its conditions.
	OpCheck
)

// Op is one operation of a transaction.
type Op struct {
	Kind       OpKind
	Item       Item   // OpPut
	Key        Key    // OpUpdate, OpDelete, OpCheck
	Update     Update // OpUpdate
	Conditions []Condition
}

// PutOp puts item when the conditions hold.
func PutOp(item Item, conds ...Condition) Op { return Op{Kind: OpPut, Item: item, Conditions: conds} }

// UpdateOp updates the item at key when the conditions hold.
func UpdateOp(key Key, u Update, conds ...Condition) Op {
	return Op{Kind: OpUpdate, Key: key, Update: u, Conditions: conds}
}

// DeleteOp deletes the item at key when the conditions hold.
func DeleteOp(key Key, conds ...Condition) Op {
	return Op{Kind: OpDelete, Key: key, Conditions: conds}
}

// CheckOp asserts the conditions on the item at key and writes nothing.
func CheckOp(key Key, conds ...Condition) Op {
	return Op{Kind: OpCheck, Key: key, Conditions: conds}
}

// OpKey returns the key the operation addresses.
func (op Op) OpKey() Key {
	if op.Kind == OpPut {
		return op.Item.Key()
	}
	return op.Key
}

// TxCanceledError reports a transaction cancelled by a failed condition. It
// names the first operation (by index and key) whose condition failed; Err is
// ErrExists or ErrConflict under the same rule as single writes. Nothing of
// the transaction was written.
type TxCanceledError struct {
	Index int
	Key   Key
	Err   error
}

func (e *TxCanceledError) Error() string {
	return fmt.Sprintf("store: transaction canceled: operation %d (%s): %v", e.Index, e.Key, e.Err)
}

// Unwrap returns ErrExists or ErrConflict.
func (e *TxCanceledError) Unwrap() error { return e.Err }

// Store is the storage port. Every method is safe for concurrent use.
type Store interface {
	// Get returns the live item at key, or ErrNotFound.
	Get(ctx context.Context, key Key) (Item, error)

	// BatchGet reads up to MaxBatchGetKeys distinct keys in one round trip.
	// The result is aligned with keys: nil where no live item exists.
	BatchGet(ctx context.Context, keys []Key) ([]*Item, error)

	// Put writes the whole item, replacing any item at its key, when every
	// condition holds. Failed condition: ErrExists or ErrConflict, never
	// for the item this call itself stored (see "Retries").
	Put(ctx context.Context, item Item, conds ...Condition) error

	// Update applies u to the item at key when every condition holds and
	// returns the item as written. A resent Update returns the item this
	// call wrote and never applies u twice (see "Retries" for the one
	// exception).
	Update(ctx context.Context, key Key, u Update, conds ...Condition) (Item, error)

	// Delete removes the item at key when every condition holds. Deleting an
	// absent item without conditions succeeds; a conditional Delete resent
	// after a lost answer that finds no item succeeds (see "Retries").
	Delete(ctx context.Context, key Key, conds ...Condition) error

	// Query returns one page of a partition of the table or the index.
	Query(ctx context.Context, q Query) (Page, error)

	// Transact applies up to MaxTransactItems operations atomically: all or
	// none. Two operations on one key are refused with ErrInvalid before
	// anything is evaluated. A failed condition cancels the whole
	// transaction with a *TxCanceledError; a resend of this call's applied
	// transaction is nil (see "Retries").
	Transact(ctx context.Context, ops []Op) error
}

// CommitCounter is an optional capability: an engine that groups concurrent writes
// into shared commits reports how many commits it made (filestore does).
type CommitCounter interface {
	Commits() uint64
}
