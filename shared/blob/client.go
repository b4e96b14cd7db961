package blob

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// LocalClientOptions points an S3 client at a local S3 server (s3local) at
// endpoint, e.g. "http://127.0.0.1:9000", as s3.New's option function:
//
//   - path-style addressing (http://host/bucket/key): a loopback address
//     has no bucket subdomains;
//   - request checksums and response checksum validation only when an
//     operation requires them (aws.RequestChecksumCalculationWhenRequired,
//     aws.ResponseChecksumValidationWhenRequired): by default the SDK
//     sends bodies as aws-chunked with a trailing CRC, which needs TLS and
//     which s3local refuses. Bodies must then be seekable, because over
//     plain HTTP the SDK signs the payload's SHA-256 and reads it twice
//     (PutObject takes an io.ReadSeeker for this reason).
//
// The engine's requests are otherwise the production ones.
func LocalClientOptions(endpoint string) func(*s3.Options) {
	return func(o *s3.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.UsePathStyle = true
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	}
}
