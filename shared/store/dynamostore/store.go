package dynamostore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/custodymcp/custody/shared/store"
)

var _ store.Store = (*Store)(nil)

// Options configures a Store. The zero value is ready to use.
type Options struct {
	// Now is the clock that decides expiry; nil means time.Now.
	Now func() time.Time
}

// Store is the DynamoDB engine of the storage port. It keeps no state besides
// its client and is safe for concurrent use.
type Store struct {
	client *dynamodb.Client
	table  string
	now    func() time.Time
}

// New returns the engine over the table named table (created with
// CreateTableInput). The client's retryer handles throttling and 5xx; build
// the client once per process and share it.
func New(client *dynamodb.Client, table string, opts Options) *Store {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Store{client: client, table: table, now: now}
}

// clock is the engine's "now" in epoch seconds.
func (s *Store) clock() int64 { return s.now().Unix() }

// maxExpiredRewrites bounds the attempts of an Update (or Transact) that keeps
// finding expired items replaced under it; each attempt is one or two writes.
const maxExpiredRewrites = 4

// Get returns the live item at key with a strongly consistent GetItem, or
// ErrNotFound when none is stored or it has expired.
func (s *Store) Get(ctx context.Context, key store.Key) (store.Item, error) {
	if err := store.ValidateKey(key); err != nil {
		return store.Item{}, fmt.Errorf("dynamostore: get: %w", err)
	}
	now := s.clock()
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      &s.table,
		Key:            keyAV(key),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return store.Item{}, translate("get "+key.String(), err)
	}
	it, err := liveItem(out.Item, now)
	if err != nil {
		return store.Item{}, err
	}
	if it == nil {
		return store.Item{}, fmt.Errorf("dynamostore: get %s: %w", key, store.ErrNotFound)
	}
	return *it, nil
}

// Put writes the whole item with one PutItem, replacing an expired or live
// item, when every condition holds (ErrExists or ErrConflict otherwise). The
// item carries a fresh write token, and a resend by the SDK that finds the
// item this call stored is this call's success (see "Retries").
func (s *Store) Put(ctx context.Context, item store.Item, conds ...store.Condition) error {
	if err := validatePut(item, conds); err != nil {
		return fmt.Errorf("dynamostore: put %s: %w", item.Key(), err)
	}
	now, token := s.clock(), newWriteToken()
	e := newExpr(now)
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                           &s.table,
		Item:                                encodeItem(item, token),
		ConditionExpression:                 aws.String(e.conditions(conds, e.notWrittenBy(token))),
		ExpressionAttributeNames:            e.Names(),
		ExpressionAttributeValues:           e.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if old, ok := conditionFailed(err); ok {
		if writtenBy(old, token) {
			return nil // an attempt of this call was applied; its answer was lost
		}
		return fmt.Errorf("dynamostore: put %s: %w", item.Key(), failure(conds, old, now))
	}
	if err != nil {
		return translate("put "+item.Key().String(), err)
	}
	return nil
}

func validatePut(item store.Item, conds []store.Condition) error {
	if err := store.ValidateItem(item); err != nil {
		return err
	}
	return store.ValidateConditions(conds)
}

// Delete removes the item at key with one DeleteItem when every condition
// holds. Without conditions it succeeds whether or not an item is there. A
// conditional Delete whose conditions fail on no item at all, after an
// attempt of this call whose outcome is unknown (a lost answer the SDK
// retried), reports success: the item is gone, most likely by that attempt
// (see "Retries" for when it was not).
func (s *Store) Delete(ctx context.Context, key store.Key, conds ...store.Condition) error {
	if err := validateKeyed(key, conds); err != nil {
		return fmt.Errorf("dynamostore: delete: %w", err)
	}
	now := s.clock()
	e := newExpr(now)
	var att attempts
	var watch []func(*dynamodb.Options)
	if len(conds) > 0 {
		watch = append(watch, att.watch)
	}
	_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                           &s.table,
		Key:                                 keyAV(key),
		ConditionExpression:                 optional(e.conditions(conds)),
		ExpressionAttributeNames:            e.Names(),
		ExpressionAttributeValues:           e.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}, watch...)
	if old, ok := conditionFailed(err); ok {
		if len(old) == 0 && att.unknown {
			return nil // no item left, after an attempt that may have removed it
		}
		return fmt.Errorf("dynamostore: delete %s: %w", key, failure(conds, old, now))
	}
	if err != nil {
		return translate("delete "+key.String(), err)
	}
	return nil
}

func validateKeyed(key store.Key, conds []store.Condition) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	return store.ValidateConditions(conds)
}

// Update applies u with one UpdateItem (SET, ADD for counters and version,
// REMOVE; ReturnValues ALL_NEW) when every condition holds, and returns the
// item as written. An expired item is replaced by u applied to an empty item,
// at the cost of one more write (see the package doc). An update whose own
// attributes exceed store.MaxItemBytes is ErrTooLarge before any call. The
// update sets a fresh write token and is guarded against it, so a resend by
// the SDK never applies u twice: it finds the item this call wrote, which is
// returned (see "Retries").
func (s *Store) Update(ctx context.Context, key store.Key, u store.Update, conds ...store.Condition) (store.Item, error) {
	if err := validateUpdate(key, u, conds); err != nil {
		return store.Item{}, fmt.Errorf("dynamostore: update: %w", err)
	}
	op := "update " + key.String()
	token := newWriteToken()
	for range maxExpiredRewrites {
		now := s.clock()
		e := newExpr(now)
		out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                           &s.table,
			Key:                                 keyAV(key),
			UpdateExpression:                    aws.String(e.update(u, token)),
			ConditionExpression:                 aws.String(e.conditions(conds, e.absentOrLive(), e.notWrittenBy(token))),
			ExpressionAttributeNames:            e.Names(),
			ExpressionAttributeValues:           e.Values(),
			ReturnValues:                        types.ReturnValueAllNew,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		if err == nil {
			return decodeItem(out.Attributes)
		}
		old, ok := conditionFailed(err)
		if !ok {
			return store.Item{}, translate(op, err)
		}
		if writtenBy(old, token) {
			return decodeItem(old) // an attempt of this call was applied; its answer was lost
		}
		if !storedExpired(old, now) {
			return store.Item{}, fmt.Errorf("dynamostore: %s: %w", op, failure(conds, old, now))
		}
		// An expired item is stored: the guard failed, perhaps with the
		// caller's conditions, which now see no item.
		if err := store.CheckConditions(conds, nil); err != nil {
			return store.Item{}, fmt.Errorf("dynamostore: %s: %w", op, err)
		}
		item := store.ApplyUpdate(key, nil, u)
		err = s.replaceExpired(ctx, item, token, now)
		if err == nil {
			return normalize(item), nil
		}
		old, ok = conditionFailed(err)
		if !ok {
			return store.Item{}, translate(op, err)
		}
		if writtenBy(old, token) {
			return decodeItem(old) // the replacement was applied; its answer was lost
		}
		// The expired item changed under us (deleted, renewed): start over.
	}
	return store.Item{}, fmt.Errorf("dynamostore: %s: expired item replaced concurrently %d times: %w",
		op, maxExpiredRewrites, store.ErrUnavailable)
}

func validateUpdate(key store.Key, u store.Update, conds []store.Condition) error {
	if err := validateKeyed(key, conds); err != nil {
		return err
	}
	if err := store.ValidateUpdate(u); err != nil {
		return err
	}
	// The result is at least u applied to an empty item; DynamoDB checks the
	// rest (and minidyn does not).
	if it := store.ApplyUpdate(key, nil, u); store.ItemSize(it) > store.MaxItemBytes {
		return fmt.Errorf("update of %s writes %d bytes, over %d: %w", key, store.ItemSize(it), store.MaxItemBytes, store.ErrTooLarge)
	}
	return nil
}

// replaceExpired writes item, with the call's write token, over the
// expired item stored at its key, on the condition that it is still stored
// and still expired at now (and not already written by this call). The item
// is validated first (it may be over the size limit).
func (s *Store) replaceExpired(ctx context.Context, item store.Item, token string, now int64) error {
	if err := store.ValidateItem(item); err != nil {
		return err
	}
	e := newExpr(now)
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                           &s.table,
		Item:                                encodeItem(item, token),
		ConditionExpression:                 aws.String(e.conditions(nil, e.presentAndExpired(), e.notWrittenBy(token))),
		ExpressionAttributeNames:            e.Names(),
		ExpressionAttributeValues:           e.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	return err
}

// storedExpired reports whether old, an item DynamoDB returned, is stored but
// expired at now.
func storedExpired(old av, now int64) bool {
	if len(old) == 0 {
		return false
	}
	it, err := decodeItem(old)
	return err == nil && !store.Live(it.ExpiresAt, now)
}

// normalize gives an item the shape decodeItem gives it (nil Attrs when
// empty), so both paths of Update return alike.
func normalize(it store.Item) store.Item {
	if len(it.Attrs) == 0 {
		it.Attrs = nil
	}
	return it
}
