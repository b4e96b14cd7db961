package blob

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// translate wraps an SDK error with the operation, the reference and the
// port's sentinel for it (see sentinel), keeping the SDK's error in the
// chain for errors.As. An error that already carries a sentinel (the
// engine's own) is only wrapped.
func translate(op string, ref Ref, err error) error {
	for _, s := range []error{ErrNotFound, ErrExists, ErrInvalid, ErrUnavailable} {
		if errors.Is(err, s) {
			return fmt.Errorf("%s %s: %w", op, ref, err)
		}
	}
	if s := sentinel(err); s != nil {
		return fmt.Errorf("%s %s: %w: %w", op, ref, s, err)
	}
	return fmt.Errorf("%s %s: %w", op, ref, err)
}

// sentinel maps an SDK error to the port's sentinel, or nil when none fits.
// Throttling and 5xx reach here only after the SDK's retryer gave up.
func sentinel(err error) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return ErrUnavailable
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case "NoSuchKey", "NoSuchUpload", "NotFound":
			// NotFound: a HEAD's 404 has no body to name the code.
			return ErrNotFound
		case "PreconditionFailed":
			// Only PutObject sends a precondition (If-None-Match: *).
			return ErrExists
		case "EntityTooSmall", "EntityTooLarge", "InvalidPart", "InvalidPartOrder", "BadDigest",
			"InvalidDigest", "InvalidRequest", "InvalidArgument", "MalformedXML", "InvalidTag",
			"IncompleteBody", "MissingContentLength", "XAmzContentSHA256Mismatch", "KeyTooLongError":
			return ErrInvalid
		case "SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout", "RequestTimeTooSkewed",
			"NoSuchBucket", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken",
			"InvalidToken", "TokenRefreshRequired", "NotImplemented":
			// Our own bucket, credentials or clock refused: a deployment or
			// configuration fault, never the caller's request.
			return ErrUnavailable
		}
		if apiErr.ErrorFault() == smithy.FaultServer {
			return ErrUnavailable
		}
	}
	var respErr *smithyhttp.ResponseError
	if errors.As(err, &respErr) {
		switch code := respErr.HTTPStatusCode(); {
		case code == 404:
			return ErrNotFound
		case code >= 500, code == 403:
			return ErrUnavailable
		}
	}
	var (
		sendErr   *smithyhttp.RequestSendError
		cancelErr *aws.RequestCanceledError
		netErr    net.Error
	)
	if errors.As(err, &sendErr) || errors.As(err, &cancelErr) || errors.As(err, &netErr) {
		return ErrUnavailable
	}
	return nil
}
