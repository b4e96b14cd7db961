package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/custodymcp/custody/shared/store"
)

// Transact applies ops atomically with one TransactWriteItems (Put, Update,
// Delete, ConditionCheck), after store.ValidateTransact (too many operations,
// two on one item, a bad shape: ErrInvalid before any call). A cancellation
// whose first ConditionalCheckFailed reason is a caller's condition is a
// *store.TxCanceledError (ErrExists or ErrConflict, as for single writes).
// An Update of an expired item is rewritten as a Put of u applied to an empty
// item and the transaction retried once more (see the package doc).
// A transaction cancelled only for TransactionConflict (another
// transaction held one of its items; nothing was written) is sent again up
// to maxConflictRetries times after a jittered pause, each one more write;
// cancellations for other reasons are ErrUnavailable (throttling, or
// conflicts past the retries) or ErrInvalid (ValidationError). Puts and Updates carry the
// call's write token; a cancellation on an item holding it is the SDK's
// resend of this call's applied transaction, and Transact returns nil (see
// "Retries").
func (s *Store) Transact(ctx context.Context, ops []store.Op) error {
	if err := store.ValidateTransact(ops); err != nil {
		return fmt.Errorf("dynamostore: transact: %w", err)
	}
	for _, op := range ops {
		if op.Kind == store.OpUpdate {
			if err := validateUpdate(op.Key, op.Update, op.Conditions); err != nil {
				return fmt.Errorf("dynamostore: transact: %w", err)
			}
		}
	}
	// rewrite[i]: ops[i] is an Update found to address an expired item.
	rewrite := make([]bool, len(ops))
	token := newWriteToken()
	conflicts := 0
	for attempt := 0; attempt < maxExpiredRewrites; attempt++ {
		now := s.clock()
		items := make([]types.TransactWriteItem, len(ops))
		for i, op := range ops {
			var err error
			if items[i], err = s.transactItem(op, rewrite[i], token, now); err != nil {
				return fmt.Errorf("dynamostore: transact: operation %d: %w", i, err)
			}
		}
		_, err := s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if err == nil {
			return nil
		}
		var canceled *types.TransactionCanceledException
		if !errors.As(err, &canceled) {
			return translate(fmt.Sprintf("transact %d operations", len(ops)), err)
		}
		retry, err := s.cancellation(ops, rewrite, canceled, token, now)
		if errors.Is(err, errTransactionConflict) && conflicts < maxConflictRetries {
			// Another transaction held one of the items: nothing was
			// written, so the same transaction is sent again after a
			// jittered pause (not counted against the expiry rewrites).
			conflicts++
			attempt--
			if werr := conflictPause(ctx, conflicts); werr != nil {
				return err
			}
			continue
		}
		if !retry {
			return err
		}
	}
	return fmt.Errorf("dynamostore: transact: expired items replaced concurrently %d times: %w",
		maxExpiredRewrites, store.ErrUnavailable)
}

// maxConflictRetries bounds how often Transact sends a transaction again
// that DynamoDB cancelled only for TransactionConflict (another
// transaction held one of its items): each retry is one more write.
const maxConflictRetries = 3

// errTransactionConflict is a cancellation whose only reasons were
// TransactionConflict: retryable, and ErrUnavailable once retries are
// spent.
var errTransactionConflict = fmt.Errorf("cancelled by a conflicting transaction (TransactionConflict): %w", store.ErrUnavailable)

// conflictPause waits before the n-th retry of a conflicting transaction:
// a random time up to 25 ms × 2^(n−1) (full jitter, so racing writers
// spread out), or until ctx ends.
func conflictPause(ctx context.Context, n int) error {
	d := time.Duration(rand.Int64N(int64(25*time.Millisecond) << (n - 1)))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// cancellation reads a TransactionCanceledException. It returns the error to
// report (nil when an attempt of this call was applied, see "Retries"), or
// retry=true after marking (or unmarking) Updates of expired items in
// rewrite.
func (s *Store) cancellation(ops []store.Op, rewrite []bool, canceled *types.TransactionCanceledException, token string, now int64) (retry bool, err error) {
	for _, r := range canceled.CancellationReasons {
		// One item holding this call's token proves the whole transaction
		// was applied (it is atomic); this is the SDK's resend of it.
		if aws.ToString(r.Code) == "ConditionalCheckFailed" && writtenBy(r.Item, token) {
			return false, nil
		}
	}
	var other error
	conflict := false
	for i, r := range canceled.CancellationReasons {
		if i >= len(ops) {
			break
		}
		op := ops[i]
		switch code := aws.ToString(r.Code); code {
		case "", "None":
		case "ConditionalCheckFailed":
			switch {
			case op.Kind == store.OpUpdate && rewrite[i]:
				// The expired item we meant to replace changed: update again.
				rewrite[i], retry = false, true
			case op.Kind == store.OpUpdate && storedExpired(r.Item, now):
				if err := store.CheckConditions(op.Conditions, nil); err != nil {
					return false, &store.TxCanceledError{Index: i, Key: op.OpKey(), Err: err}
				}
				rewrite[i], retry = true, true
			default:
				return false, &store.TxCanceledError{Index: i, Key: op.OpKey(), Err: failure(op.Conditions, r.Item, now)}
			}
		case "ValidationError":
			if other == nil {
				other = fmt.Errorf("dynamostore: transact: operation %d (%s): %s: %w", i, op.OpKey(), aws.ToString(r.Message), store.ErrInvalid)
			}
		case "TransactionConflict":
			conflict = true
		default:
			// ThrottlingError, ProvisionedThroughputExceeded…
			if other == nil {
				other = fmt.Errorf("dynamostore: transact: operation %d (%s): %s: %w", i, op.OpKey(), code, store.ErrUnavailable)
			}
		}
	}
	if conflict && other == nil && !retry {
		return false, fmt.Errorf("dynamostore: transact: %w", errTransactionConflict)
	}
	switch {
	case other != nil:
		return false, other
	case retry:
		return true, nil
	}
	return false, fmt.Errorf("dynamostore: transact: canceled without a reason: %w: %w", store.ErrUnavailable, canceled)
}

// transactItem is the TransactWriteItem of op. An Update marked rewrite
// becomes a Put of its update applied to an empty item, on the condition that
// the expired item is still there. Puts and Updates carry the call's write
// token and the guard against it.
func (s *Store) transactItem(op store.Op, rewrite bool, token string, now int64) (types.TransactWriteItem, error) {
	e := newExpr(now)
	key := keyAV(op.OpKey())
	allOld := types.ReturnValuesOnConditionCheckFailureAllOld
	switch {
	case op.Kind == store.OpPut:
		return types.TransactWriteItem{Put: &types.Put{
			TableName: &s.table, Item: encodeItem(op.Item, token),
			ConditionExpression:      aws.String(e.conditions(op.Conditions, e.notWrittenBy(token))),
			ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(),
			ReturnValuesOnConditionCheckFailure: allOld,
		}}, nil
	case op.Kind == store.OpUpdate && rewrite:
		item := store.ApplyUpdate(op.Key, nil, op.Update)
		if err := store.ValidateItem(item); err != nil {
			return types.TransactWriteItem{}, err
		}
		return types.TransactWriteItem{Put: &types.Put{
			TableName: &s.table, Item: encodeItem(item, token),
			ConditionExpression:      aws.String(e.conditions(nil, e.presentAndExpired(), e.notWrittenBy(token))),
			ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(),
			ReturnValuesOnConditionCheckFailure: allOld,
		}}, nil
	case op.Kind == store.OpUpdate:
		update := e.update(op.Update, token)
		return types.TransactWriteItem{Update: &types.Update{
			TableName: &s.table, Key: key,
			UpdateExpression:         aws.String(update),
			ConditionExpression:      aws.String(e.conditions(op.Conditions, e.absentOrLive(), e.notWrittenBy(token))),
			ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(),
			ReturnValuesOnConditionCheckFailure: allOld,
		}}, nil
	case op.Kind == store.OpDelete:
		return types.TransactWriteItem{Delete: &types.Delete{
			TableName: &s.table, Key: key,
			ConditionExpression:      optional(e.conditions(op.Conditions)),
			ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(),
			ReturnValuesOnConditionCheckFailure: allOld,
		}}, nil
	default: // store.OpCheck
		return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName: &s.table, Key: key,
			ConditionExpression:      aws.String(e.conditions(op.Conditions)),
			ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(),
			ReturnValuesOnConditionCheckFailure: allOld,
		}}, nil
	}
}
