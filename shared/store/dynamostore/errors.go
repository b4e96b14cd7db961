package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/custodymcp/custody/shared/store"
)

// translate wraps a driver error with the operation and the port's sentinel
// for it (see sentinel), keeping the original in the chain for errors.As.
func translate(op string, err error) error {
	if s := sentinel(err); s != nil {
		return fmt.Errorf("dynamostore: %s: %w: %w", op, s, err)
	}
	return fmt.Errorf("dynamostore: %s: %w", op, err)
}

// sentinel maps a driver error to the port's sentinel, or nil when none fits.
// Throttling and 5xx reach here only after the SDK's retryer gave up.
func sentinel(err error) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return store.ErrUnavailable
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded",
			"LimitExceededException", "TransactionInProgressException", "TransactionConflictException",
			"InternalServerError", "ServiceUnavailable", "ResourceNotFoundException":
			// A missing table is an engine that is not there (yet): a
			// deployment or configuration fault, never the caller's request.
			return store.ErrUnavailable
		case "ResourceInUseException":
			return store.ErrExists
		case "ItemCollectionSizeLimitExceededException":
			return store.ErrTooLarge
		case "ValidationException", "SerializationException":
			// DynamoDB says "Item size has exceeded the maximum allowed size"
			// (PutItem) or "Item size to update has exceeded …" (UpdateItem);
			// it has no distinct code for it.
			if strings.Contains(apiErr.ErrorMessage(), "exceeded the maximum allowed size") {
				return store.ErrTooLarge
			}
			return store.ErrInvalid
		}
		if apiErr.ErrorFault() == smithy.FaultServer {
			return store.ErrUnavailable
		}
	}
	var respErr *smithyhttp.ResponseError
	if errors.As(err, &respErr) && respErr.HTTPStatusCode() >= 500 {
		return store.ErrUnavailable
	}
	var (
		sendErr   *smithyhttp.RequestSendError
		cancelErr *aws.RequestCanceledError
		netErr    net.Error
	)
	if errors.As(err, &sendErr) || errors.As(err, &cancelErr) || errors.As(err, &netErr) {
		return store.ErrUnavailable
	}
	return nil
}

// conditionFailed reports whether err is DynamoDB's refusal of a conditional
// write, and returns the old item it sent back (ALL_OLD; nil when none).
func conditionFailed(err error) (old av, ok bool) {
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return nil, false
	}
	return ccf.Item, true
}

// failure decides ErrExists or ErrConflict for a write DynamoDB refused under
// conds, from the old item it returned (ALL_OLD; empty when absent) and the
// request's clock (see "Failed conditions" in the package doc).
func failure(conds []store.Condition, old av, now int64) error {
	live, err := liveItem(old, now)
	if err != nil {
		return fmt.Errorf("%w: %w", store.ErrConflict, err)
	}
	if err := store.CheckConditions(conds, live); err != nil {
		return err
	}
	// The conditions hold against what came back, yet the write was refused:
	// no old item came back although a live one was there. DynamoDB returns
	// ALL_OLD on every conditional failure, so only an emulator gets here
	// (minidyn omits it on PutItem and DeleteItem; dynamotest repairs that).
	// Only NotExists fails on a live item for sure; whether the others did is
	// unknown, so ErrConflict.
	if len(old) == 0 && allNotExists(conds) {
		return store.ErrExists
	}
	return store.ErrConflict
}

func allNotExists(conds []store.Condition) bool {
	for _, c := range conds {
		if c.Kind != store.CondNotExists {
			return false
		}
	}
	return len(conds) > 0
}
