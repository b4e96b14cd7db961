package blob

import (
	"context"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// LocalClientOptions points an S3 client at a local S3 server (s3local) at
// endpoint, e.g. "http://127.0.0.1:9000", as s3.New's option function
// (docs/decisions.md "Versions"):
//
//   - path-style addressing (http://host/bucket/key): a loopback address
//     has no bucket subdomains;
//   - request checksums and response checksum validation only where an
//     operation requires them (aws.RequestChecksumCalculationWhenRequired,
//     aws.ResponseChecksumValidationWhenRequired), so the SDK never sends a
//     body as aws-chunked with a trailing checksum, which s3local refuses
//     (501), nor expects response checksums gofakes3 does not keep. The
//     engine sets the checksums it relies on itself (a part's and a
//     PutObject's x-amz-checksum-sha256).
//
// Bodies must be seekable: over plain HTTP the SDK signs the payload's
// SHA-256 and so reads the body before sending it (an unseekable one fails
// with "request stream is not seekable"), which is why PutObject takes an
// io.ReadSeeker. The engine's requests are otherwise the production ones.
func LocalClientOptions(endpoint string) func(*s3.Options) {
	return func(o *s3.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.UsePathStyle = true
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	}
}

// WithClock dates every request the client signs by now instead of the
// SDK's clock, as s3.New's option function. It is for tests whose clock
// moves (an expired grant, a URL past its life): the local server judges a
// request's X-Amz-Date against the same clock, which would otherwise find
// the SDK's requests skewed (RequestTimeTooSkewed). Presigned requests are
// dated by Options.Now of the engine.
func WithClock(now func() time.Time) func(*s3.Options) {
	return func(o *s3.Options) {
		o.HTTPSignerV4 = datedHTTPSigner{
			signer: v4.NewSigner(func(so *v4.SignerOptions) { so.DisableURIPathEscaping = true }),
			now:    now,
		}
	}
}

type datedHTTPSigner struct {
	signer *v4.Signer
	now    func() time.Time
}

func (d datedHTTPSigner) SignHTTP(
	ctx context.Context, credentials aws.Credentials, r *http.Request,
	payloadHash string, service string, region string, _ time.Time,
	optFns ...func(*v4.SignerOptions),
) error {
	return d.signer.SignHTTP(ctx, credentials, r, payloadHash, service, region, d.now(), optFns...)
}
