package dynamotest_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
)

func TestFaultsLoseAnswersAfterOrInsteadOfApplying(t *testing.T) {
	ctx := context.Background()
	key := item{"PK": s("p"), "SK": s("a")}
	noRetry := func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} }
	tests := []struct {
		name       string
		fault      dynamotest.Fault
		wantStored bool
		// wantStatus is the HTTP status the client sees, 0 for no answer.
		wantStatus int
	}{
		{"an applied request answered 500 is stored", dynamotest.Fault{Applied: true}, true, http.StatusInternalServerError},
		{"an applied request whose connection is reset is stored", dynamotest.Fault{Applied: true, Reset: true}, true, 0},
		{"a request answered 500 before the emulator is not stored", dynamotest.Fault{}, false, http.StatusInternalServerError},
		{"a request reset before the emulator is not stored", dynamotest.Fault{Reset: true}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			faults := &dynamotest.Faults{}
			srv := dynamotest.NewServer(t, faults.Middleware)
			c := srv.Client()
			table := dynamotest.CreateTable(t, c)
			// A reset gives no happens-before edge back to the client:
			// the hook reports through a channel.
			ran := make(chan bool, 1)
			tt.fault.Meanwhile = func() { ran <- true }
			faults.Next("PutItem", tt.fault)

			_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: key}, noRetry)
			// The SDK reports a broken connection as a response error of
			// status 0.
			status := -1
			if respErr := (*smithyhttp.ResponseError)(nil); errors.As(err, &respErr) {
				status = respErr.HTTPStatusCode()
			}
			switch {
			case err == nil:
				t.Fatalf("PutItem = nil, want the injected failure")
			case status != tt.wantStatus:
				t.Fatalf("PutItem = %v (HTTP %d), want HTTP %d", err, status, tt.wantStatus)
			case !retry.NewStandard().IsErrorRetryable(err):
				t.Fatalf("PutItem = %v, want an error the SDK retries", err)
			}
			select {
			case <-ran:
			default:
				t.Errorf("Meanwhile did not run")
			}
			if got := faults.Injected("PutItem"); got != 1 {
				t.Errorf("Injected(PutItem) = %d, want 1", got)
			}
			out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key, ConsistentRead: aws.Bool(true)})
			if err != nil {
				t.Fatalf("GetItem = %v", err)
			}
			if got := len(out.Item) > 0; got != tt.wantStored {
				t.Errorf("stored = %v, want %v", got, tt.wantStored)
			}
		})
	}

	t.Run("the SDK retries a lost answer and the next request passes", func(t *testing.T) {
		faults := &dynamotest.Faults{}
		srv := dynamotest.NewServer(t, faults.Middleware)
		c := srv.Client()
		table := dynamotest.CreateTable(t, c)
		faults.Next("PutItem", dynamotest.Fault{Applied: true})
		_, err := c.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: &table, Item: key, ConditionExpression: aws.String("attribute_not_exists(PK)"),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		// The resend of an applied conditional put fails its condition: the
		// failure the engine must recognise as its own write.
		var ccf *types.ConditionalCheckFailedException
		if !errors.As(err, &ccf) || len(ccf.Item) == 0 {
			t.Fatalf("PutItem after a lost answer = %v, want ConditionalCheckFailedException with the item", err)
		}
		if got := faults.Pending("PutItem"); got != 0 {
			t.Errorf("Pending(PutItem) = %d, want 0", got)
		}
	})
}
