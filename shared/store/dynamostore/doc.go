// Package dynamostore is the DynamoDB engine of the storage port
// (shared/store), built on aws-sdk-go-v2. It is the production engine; its
// tests run it against the minidyn emulator (see dynamotest, which also lists
// the emulator's gaps and repairs them).
//
// # Table
//
// One table, described once by CreateTableInput (the SAM template must equal
// it): string keys PK (HASH) and SK (RANGE), one global secondary index GSI1
// on GSI1PK/GSI1SK projecting ALL, on-demand billing, server-side encryption.
// An item is stored as
//
//	PK, SK          S   the key
//	GSI1PK, GSI1SK  S   only when both are non-empty (the index is sparse)
//	version         N   Item.Version
//	expires_at      N   epoch seconds, only when non-zero (the table's TTL attribute)
//	write_token     S   the write token of the call that last put or updated it (see Retries)
//	<attr>          S | N | BOOL | B   string | int64 | bool | []byte
//
// # Expiry
//
// DynamoDB deletes expired items lazily (typically within days), so the
// engine never relies on it: the clock of Options.Now decides. Every read
// drops items with expires_at <= now, and every condition treats them as
// absent. The port's conditions become condition expressions:
//
//	NotExists         attribute_not_exists(PK) OR expires_at <= :now
//	Exists            attribute_exists(PK) AND live
//	VersionEquals(v)  version = :v AND live
//	AttrEquals(a, x)  a IN (:x) AND live   (DynamoDB's a = :x; see expr.go)
//	live              attribute_not_exists(expires_at) OR expires_at > :now
//
// (a comparison with a missing attribute is false, so "expires_at <= :now"
// holds only for items that have an expiry).
//
// An Update of an expired item must start from an empty item, which an
// UpdateItem cannot express (it merges into whatever is stored). So every
// UpdateItem also carries the guard "absent or live"
// (attribute_not_exists(PK) OR live) and asks for the old item on failure
// (ReturnValuesOnConditionCheckFailure ALL_OLD). When the old item turns out
// to be expired, the caller's conditions are evaluated against "absent"
// (store.CheckConditions); if they hold, the engine writes
// store.ApplyUpdate(key, nil, u) with a PutItem conditioned on "the item is
// still there and still expired", and starts over if that fails. Updating an
// expired-but-undeleted item therefore costs one more write round trip, in
// Update and in Transact alike; any other write costs exactly one.
//
// # Failed conditions
//
// ConditionalCheckFailedException (or a transaction cancellation reason
// ConditionalCheckFailed) that is not the resend of this call's own write
// (see Retries) becomes ErrExists when only NotExists failed and ErrConflict
// otherwise. DynamoDB does not say which condition failed, so every
// conditional write asks for the old item (ALL_OLD) and the engine
// evaluates the conditions against it with store.CheckConditions; no old
// item means none was stored. Should the conditions hold against what came back (an
// emulator that ignores ALL_OLD; minidyn does on PutItem and DeleteItem, which
// dynamotest repairs), an item must have been there, and the engine decides
// conservatively: ErrExists when every condition is NotExists, ErrConflict
// otherwise.
//
// # Retries
//
// The SDK's retryer resends a request whose answer was lost: a 5xx
// (DynamoDB's InternalServerError means the request may or may not have
// been applied), a connection reset, a timeout. It resends it unchanged, and
// DynamoDB offers no idempotency key for PutItem, UpdateItem or DeleteItem,
// so the resend of an applied conditional write used to fail on the item it
// had written and be reported as ErrExists or ErrConflict, and the resend of
// an Update whose condition still held applied it twice. The engine makes
// every write recognise its own earlier attempt, without any added request:
//
//   - Write token. Every Put, Update and Transact call draws a token of 128
//     random bits (store.WriteTokenLen characters of base64url) and writes it
//     into store.WriteTokenAttr of each item it stores: PutItem's item,
//     UpdateItem's SET, and the Puts and Updates of TransactWriteItems. Every
//     such write is also guarded by "attribute_not_exists(write_token) OR
//     write_token <> :token", so its resend never applies twice: it fails,
//     and the old item it returns (ALL_OLD) shows the token.
//   - Put and Update. A ConditionalCheckFailedException whose old item holds
//     the call's token is the call's success. Put returns nil; Update returns
//     that old item, which is exactly the item it wrote (any later write
//     would have replaced the token). The same holds for the PutItem that
//     replaces an expired item in Update.
//   - Delete. It stores nothing, so there is no token to find. A conditional
//     Delete watches its own attempts (a per-call Finalize middleware after
//     the SDK's retry loop) and notes whether one failed with its outcome
//     unknown: anything but a 4xx answer, since DynamoDB applies nothing it
//     answers with a 4xx (throttling included). A ConditionalCheckFailed
//     with no old item at all, after such an attempt, is nil. Unconditional
//     Deletes cannot fail and are not watched.
//   - Transact. The SDK fills TransactWriteItems' ClientRequestToken once
//     per call, so its resend carries the first attempt's, and DynamoDB
//     answers the resend of an applied transaction with success for 10
//     minutes. Where the resend is evaluated anyway (minidyn ignores the
//     token), its guarded Puts and Updates fail on items holding the call's
//     token: one such cancellation reason proves the whole transaction was
//     applied, and Transact returns nil. A transaction of Deletes and
//     ConditionChecks alone has only the ClientRequestToken.
//
// store.go ("Retries") states the resulting contract and where it is not
// exact (another writer between the lost answer and the resend). The token
// costs store.WriteTokenLen+11 bytes of every item, which store.ItemSize
// counts, one more condition clause on every Put and Update (an
// unconditional Put now carries the guard as its only condition) and one
// more SET in every Update; the request count is unchanged.
//
// # Queries
//
// DynamoDB's Limit counts items before the filter expression that drops
// expired items, so a DynamoDB page says nothing about how many live items
// follow. Query keeps reading (with ExclusiveStartKey) until it holds
// Limit+1 live items or the partition is exhausted, returns Limit of them,
// and builds its own page token from the last item returned: base64url JSON
// of that item's table key (plus its index key on GSI1) and a fingerprint of
// the query (index, partition, sort-key condition, direction). A token whose
// fingerprint or key does not belong to the query is ErrInvalid. So
// NextToken is non-empty exactly when another live item follows.
//
// Table reads (GetItem, BatchGetItem, table Query) are strongly consistent;
// index queries cannot be (DynamoDB's rule).
//
// # Errors
//
// Driver errors are translated at the boundary, wrapping the original so
// errors.As still finds the AWS error: throttling, 5xx, a missing table,
// network errors and context deadlines or cancellations are ErrUnavailable
// (the SDK's standard retryer has already retried throttling and 5xx; the
// engine adds no retry loop of its own except for BatchGetItem's
// UnprocessedKeys, which the SDK does not retry, and a transaction
// cancelled for TransactionConflict, below); ValidationException is
// ErrInvalid, or ErrTooLarge when DynamoDB reports the item size limit.
// Items are checked with store.ValidateItem before any write, since the
// emulator does not enforce the 400 KB limit.
//
// A cancelled transaction reports the first operation whose reason is
// ConditionalCheckFailed as a *store.TxCanceledError. One cancelled only
// for TransactionConflict — concurrent transactions on one item, such as
// proposals racing for a matter's pending counter — wrote nothing and is
// sent again, at most 3 times after a jittered pause, each one more write;
// other cancellation reasons (throttling, conflicts past the retries) are
// ErrUnavailable, a ValidationError reason is ErrInvalid.
package dynamostore
