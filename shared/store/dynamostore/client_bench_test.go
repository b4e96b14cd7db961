package dynamostore_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
)

// getItemAnswer is a GetItem answer of a credential-sized row.
const getItemAnswer = `{"Item":{"PK":{"S":"CRED#0123456789abcdef"},"SK":{"S":"CRED"},"version":{"N":"1"},` +
	`"tenant":{"S":"t_whitfield"},"principal":{"S":"p_dana_whitfield"},"scopes":{"S":"read docs:read"},` +
	`"created_at":{"N":"1800000000"},"revoked":{"BOOL":false}}}`

// processCPU is the process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkClientGetItem measures what the SDK costs the caller per
// operation: one Get through the engine against an HTTP endpoint that
// answers every request with the same GetItem answer at once, so nothing
// but the client side (serialisation, signing, endpoint, retry and
// middleware, HTTP and decoding) and the fixed answer's HTTP server are in
// the figure; cpu-ns/op is the process's CPU per operation.
func BenchmarkClientGetItem(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write([]byte(getItemAnswer))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name string
		opts []func(*dynamodb.Options)
	}{
		{"sdk-defaults", nil},
		{"tuned", []func(*dynamodb.Options){dynamostore.ClientOptions(srv.URL)}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			client := dynamodb.New(dynamodb.Options{
				Region:       "us-east-1",
				BaseEndpoint: aws.String(srv.URL),
				Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
					return aws.Credentials{AccessKeyID: "bench", SecretAccessKey: "bench", Source: "bench"}, nil
				}),
				DisableValidateResponseChecksum: true,
			}, tc.opts...)
			st := dynamostore.New(client, "custody", dynamostore.Options{})
			k := store.Key{PK: "CRED#0123456789abcdef", SK: "CRED"}
			b.ReportAllocs()
			cpu0 := processCPU(b)
			defer func() { b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op") }()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := st.Get(context.Background(), k); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
