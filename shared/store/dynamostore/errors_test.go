package dynamostore

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/custodymcp/custody/shared/store"
)

// The emulator cannot produce every DynamoDB error, so the boundary's mapping
// is tested here on the SDK's own error values.
func TestSentinelMapsDriverErrorsToThePortsSentinels(t *testing.T) {
	op := func(err error) error {
		return &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "GetItem", Err: err}
	}
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"throttled after retries", op(&types.ProvisionedThroughputExceededException{Message: aws.String("slow down")}), store.ErrUnavailable},
		{"throttling exception", op(&smithy.GenericAPIError{Code: "ThrottlingException"}), store.ErrUnavailable},
		{"request limit", op(&types.RequestLimitExceeded{}), store.ErrUnavailable},
		{"internal server error", op(&types.InternalServerError{}), store.ErrUnavailable},
		{"unknown server fault", op(&smithy.GenericAPIError{Code: "Whatever", Fault: smithy.FaultServer}), store.ErrUnavailable},
		{"missing table", op(&types.ResourceNotFoundException{}), store.ErrUnavailable},
		{"deadline", op(context.DeadlineExceeded), store.ErrUnavailable},
		{"canceled", op(context.Canceled), store.ErrUnavailable},
		{"network", op(&net.OpError{Op: "dial", Err: errors.New("connection refused")}), store.ErrUnavailable},
		{"validation", op(&smithy.GenericAPIError{Code: "ValidationException", Message: "bad expression"}), store.ErrInvalid},
		{"item too large on put", op(&smithy.GenericAPIError{Code: "ValidationException", Message: "Item size has exceeded the maximum allowed size"}), store.ErrTooLarge},
		{"item too large on update", op(&smithy.GenericAPIError{Code: "ValidationException", Message: "Item size to update has exceeded the maximum allowed size"}), store.ErrTooLarge},
		{"item collection too large", op(&types.ItemCollectionSizeLimitExceededException{}), store.ErrTooLarge},
		{"table exists", op(&types.ResourceInUseException{}), store.ErrExists},
		{"unknown client error", op(&smithy.GenericAPIError{Code: "AccessDeniedException", Fault: smithy.FaultClient}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sentinel(tt.err); got != tt.want {
				t.Errorf("sentinel(%v) = %v, want %v", tt.err, got, tt.want)
			}
			got := translate("get a / b", tt.err)
			if tt.want != nil && !errors.Is(got, tt.want) {
				t.Errorf("translate(%v) = %v, want it to wrap %v", tt.err, got, tt.want)
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("translate(%v) = %v, want it to wrap the original", tt.err, got)
			}
		})
	}
}

func TestFailureIsErrExistsOnlyWhenOnlyNotExistsFailed(t *testing.T) {
	const now = 1000
	item := func(version, expiresAt int64) av {
		return encodeItem(store.Item{PK: "p", SK: "s", Version: version, ExpiresAt: expiresAt, Attrs: map[string]any{"state": "open"}}, "")
	}
	tests := []struct {
		name  string
		conds []store.Condition
		old   av
		want  error
	}{
		{"not-exists on a live item", []store.Condition{store.NotExists()}, item(1, 0), store.ErrExists},
		{"not-exists, old item not returned (minidyn on put/delete)", []store.Condition{store.NotExists()}, nil, store.ErrExists},
		{"exists on an absent item", []store.Condition{store.Exists()}, nil, store.ErrConflict},
		{"exists on an expired item", []store.Condition{store.Exists()}, item(1, now), store.ErrConflict},
		{"version on a live item", []store.Condition{store.VersionEquals(2)}, item(1, 0), store.ErrConflict},
		{"attribute on a live item", []store.Condition{store.AttrEquals("state", "closed")}, item(1, now+1), store.ErrConflict},
		{"not-exists and version on a live item, only not-exists failed", []store.Condition{store.NotExists(), store.VersionEquals(1)}, item(1, 0), store.ErrExists},
		{"not-exists and version on a live item, both failed", []store.Condition{store.NotExists(), store.VersionEquals(7)}, item(1, 0), store.ErrConflict},
		{"not-exists and version, old item not returned", []store.Condition{store.NotExists(), store.VersionEquals(1)}, nil, store.ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := failure(tt.conds, tt.old, now); !errors.Is(got, tt.want) {
				t.Errorf("failure(%v) = %v, want %v", tt.conds, got, tt.want)
			}
		})
	}
}

func TestExpressionsUsePlaceholdersOnly(t *testing.T) {
	e := newExpr(42)
	cond := e.conditions([]store.Condition{
		store.NotExists(),
		store.AttrEquals("a) OR (1 = 1", "x' OR '1'='1"),
		store.VersionEquals(3),
	}, e.absentOrLive(), e.notWrittenBy("tok'en"))
	exp, idx := int64(0), ""
	update := e.update(store.Update{
		Set:       map[string]any{"name with spaces": "v"},
		Add:       map[string]int64{"count": 2},
		Remove:    []string{"gone"},
		ExpiresAt: &exp,
		GSI1PK:    &idx, GSI1SK: &idx,
	}, "tok'en")
	for _, s := range []string{cond, update} {
		for _, leak := range []string{"1 = 1", "x'", "name with spaces", "count", "gone", "expires_at", "version", "GSI1", "write_token", "tok'en"} {
			if strings.Contains(s, leak) {
				t.Errorf("expression %q contains %q literally", s, leak)
			}
		}
	}
	// :now, the compared attribute value, the compared version, the token
	// the guard compares, the token SET (a placeholder of its own), ADD
	// version's 1, the counter's delta and the SET value; removals take none.
	if got, want := len(e.Values()), 8; got != want {
		t.Errorf("len(values) = %d (%v), want %d", got, e.Values(), want)
	}
	for _, removed := range []string{"gone", "expires_at", "GSI1PK", "GSI1SK"} {
		if !strings.Contains(update, "REMOVE") || !strings.Contains(update[strings.Index(update, "REMOVE"):], e.name(removed)) {
			t.Errorf("update %q does not remove %s", update, removed)
		}
	}
}

func TestValidTableNameIsDynamoDBsRule(t *testing.T) {
	long := strings.Repeat("a", 255)
	for name, want := range map[string]bool{
		"custody": true, "Custody_prod-1.v2": true, "abc": true, long: true,
		"": false, "ab": false, long + "a": false, "has space": false, "slash/name": false, "ümlaut": false, "colon:x": false,
	} {
		if got := ValidTableName(name); got != want {
			t.Errorf("ValidTableName(%q) = %v, want %v", name, got, want)
		}
	}
}
