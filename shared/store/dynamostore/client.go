package dynamostore

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	smithyendpoints "github.com/aws/smithy-go/endpoints"
)

// maxIdleConns is how many idle connections to DynamoDB the client keeps:
// more than the concurrent requests of one process (the SDK keeps 10 per
// host, so at higher concurrency every request past the tenth opened a
// connection and closed it again, a TLS handshake each on AWS).
const maxIdleConns = 256

// ClientOptions returns the settings the engine's client runs with, to be
// applied last when the client is built (once per process):
//
//   - The endpoint is resolved once. The SDK runs DynamoDB's endpoint rules
//     on every operation; their answer depends only on the region, the
//     FIPS and dual-stack settings and the base endpoint, which do not
//     change in a client's life, so the first answer is kept and reused.
//     Account-ID endpoints are turned off (their host depends on the
//     caller's account, and the engine needs none of what they offer), so
//     the rules' answer is the regional endpoint, the same for every call.
//   - Connections are kept: up to maxIdleConns idle connections instead of
//     the SDK's 10 per host.
//
// baseEndpoint is an emulator's URL, or "" on AWS.
func ClientOptions(baseEndpoint string) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		if baseEndpoint != "" {
			o.BaseEndpoint = aws.String(baseEndpoint)
		}
		o.AccountIDEndpointMode = aws.AccountIDEndpointModeDisabled
		o.EndpointResolverV2 = &onceResolver{next: o.EndpointResolverV2}
		o.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
			t.MaxIdleConns = maxIdleConns
			t.MaxIdleConnsPerHost = maxIdleConns
		})
	}
}

// onceResolver resolves the endpoint with the SDK's rules the first time
// and answers every later call with that endpoint.
type onceResolver struct {
	next dynamodb.EndpointResolverV2

	mu       sync.Mutex
	resolved *smithyendpoints.Endpoint
}

func (r *onceResolver) ResolveEndpoint(ctx context.Context, params dynamodb.EndpointParameters) (smithyendpoints.Endpoint, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.resolved != nil {
		return *r.resolved, nil
	}
	next := r.next
	if next == nil {
		next = dynamodb.NewDefaultEndpointResolverV2()
	}
	// Only what is fixed for the client's life decides the endpoint.
	fixed := dynamodb.EndpointParameters{Region: params.Region, UseFIPS: params.UseFIPS,
		UseDualStack: params.UseDualStack, Endpoint: params.Endpoint, AccountIdEndpointMode: params.AccountIdEndpointMode}
	ep, err := next.ResolveEndpoint(ctx, fixed)
	if err != nil {
		return ep, fmt.Errorf("resolve the DynamoDB endpoint: %w", err)
	}
	r.resolved = &ep
	return ep, nil
}
