package dynamostore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/custodymcp/custody/shared/store"
)

// newWriteToken returns a fresh write token: 128 random bits as
// store.WriteTokenLen characters of unpadded base64url. One token serves
// every request of one engine call, and the SDK resends a request
// unchanged, so every attempt of the call carries it (see "Retries" in the
// package doc).
func newWriteToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it crashes the program instead)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// writtenBy reports whether old, an item DynamoDB returned, was stored by a
// write carrying token, that is by this engine call.
func writtenBy(old av, token string) bool {
	s, ok := old[store.WriteTokenAttr].(*types.AttributeValueMemberS)
	return ok && s.Value == token
}

// attempts watches the attempts the SDK makes for one request and remembers
// whether one of them failed with its outcome unknown: an answer other than
// a 4xx (a 5xx, a broken connection, a timeout), after which the request
// may have been applied. A 4xx (throttling, validation, a failed condition)
// is DynamoDB's refusal, which applies nothing.
//
// The SDK makes a request's attempts one after another on the caller's
// goroutine, so the field needs no lock.
type attempts struct {
	unknown bool
}

// watch is the per-call option that installs the watcher: a Finalize
// middleware after the SDK's retry loop ("Retry"), which therefore sees each
// attempt's own error.
func (a *attempts) watch(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
		return st.Finalize.Add(middleware.FinalizeMiddlewareFunc("CustodyAttemptOutcome", a.handle), middleware.After)
	})
}

func (a *attempts) handle(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (
	middleware.FinalizeOutput, middleware.Metadata, error,
) {
	out, md, err := next.HandleFinalize(ctx, in)
	if err != nil && !refused(err) {
		a.unknown = true
	}
	return out, md, err
}

// refused reports whether a failed attempt was answered with a 4xx.
func refused(err error) bool {
	var re *smithyhttp.ResponseError
	if !errors.As(err, &re) {
		return false
	}
	code := re.HTTPStatusCode()
	return code >= 400 && code < 500
}
