package dynamostore_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	smithyendpoints "github.com/aws/smithy-go/endpoints"

	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
)

// countingResolver counts the endpoint resolutions it is asked for.
type countingResolver struct {
	n    atomic.Int64
	next dynamodb.EndpointResolverV2
}

func (r *countingResolver) ResolveEndpoint(ctx context.Context, p dynamodb.EndpointParameters) (smithyendpoints.Endpoint, error) {
	r.n.Add(1)
	return r.next.ResolveEndpoint(ctx, p)
}

func TestClientOptionsResolveTheEndpointOnceAndServeEveryOperation(t *testing.T) {
	emu := dynamotest.NewServer(t)
	rules := &countingResolver{next: dynamodb.NewDefaultEndpointResolverV2()}
	client := dynamotest.NewClient("http://unused.invalid", func(o *dynamodb.Options) { o.EndpointResolverV2 = rules },
		dynamostore.ClientOptions(emu.URL))
	st := dynamostore.New(client, dynamotest.CreateTable(t, client), dynamostore.Options{})
	ctx := t.Context()
	k := store.Key{PK: "p", SK: "a"}
	if err := st.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: 1}, store.NotExists()); err != nil {
		t.Fatalf("Put = %v", err)
	}
	for range 3 {
		if got, err := st.Get(ctx, k); err != nil || got.Version != 1 {
			t.Fatalf("Get = %+v, %v; want the item at version 1", got, err)
		}
	}
	if got, want := rules.n.Load(), int64(1); got != want {
		t.Fatalf("endpoint rules ran %d times for 5 operations (table creation included), want %d", got, want)
	}
}
