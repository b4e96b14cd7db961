// Package blob is Custody's object storage port: the staging and record
// buckets of the upload lane (docs/contracts.md §5), reached through Amazon S3's
// own API.
//
// There is one engine, S3, over aws-sdk-go-v2's service/s3, in every
// environment: on AWS it talks to S3, in tests and in the dev server to the
// local S3 server of package s3local (gofakes3 behind a strict front that
// verifies SigV4, expiry, unsigned headers, checksums and part sizes as S3
// does). The same request path is exercised everywhere, down to the presigned
// URLs an agent PUTs with curl. The interfaces below are the port so that a
// capability depends only on what it uses (the lane on Multipart and Objects,
// the scan gate on Objects and Tagging, downloads on Presigner) and so that a
// fault-injecting decorator can stand in front of the real engine in tests.
//
// # Buckets and keys
//
// Callers name a bucket by its role (Staging, Record), never by its name:
// the names are configuration (Buckets). Every key is a role prefix and a
// random ID of 32 hex digits ("incoming/<id>", "verified/<id>",
// "quarantine/<id>" in Staging; "obj/<id>" in Record), immutable, naming no
// tenant, matter or file (docs/decisions.md "Storage"), so a key that reaches a
// log, a URL or an S3 event says nothing about the record. The engine
// refuses any other key with ErrInvalid.
//
// # Errors
//
// The engine translates S3's errors at the boundary into the sentinels
// below, wrapped with the operation and the reference and keeping the SDK's
// error in the chain (errors.As reaches smithy.APIError for S3's code).
// Test with errors.Is.
package blob

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"
)

// Sentinel errors of the port. The engine wraps them; callers use errors.Is.
var (
	// ErrNotFound: no object under the key (S3's NoSuchKey, or 404 on a
	// HEAD), or no multipart upload under the upload ID (NoSuchUpload:
	// completed, aborted, expired, or lost when s3local restarted).
	ErrNotFound = errors.New("blob: not found")
	// ErrExists: PutObject found an object under the key (keys are
	// immutable; S3 answers the If-None-Match precondition 412).
	ErrExists = errors.New("blob: object already exists")
	// ErrInvalid: the request breaks the port's rules (a key of another
	// shape, a bad part number, too many tags) or S3 refused what was
	// uploaded (EntityTooSmall, InvalidPart, InvalidPartOrder, BadDigest,
	// InvalidRequest): retrying the same request cannot succeed.
	ErrInvalid = errors.New("blob: invalid request")
	// ErrUnavailable: S3 is throttling (SlowDown), failing (5xx), timed out
	// or unreachable, or refused our own credentials or bucket (a
	// deployment fault, never the caller's request). Retrying later may
	// succeed; the lane answers UNAVAILABLE with the grant unspent.
	ErrUnavailable = errors.New("blob: engine unavailable")
	// ErrMismatch: Verify read an object whose size or SHA-256 differs from
	// the declared one (docs/contracts.md §5).
	ErrMismatch = errors.New("blob: object does not match its declared size and SHA-256")
)

// Limits of S3 that the port states (Amazon S3 User Guide, "Amazon S3
// multipart upload limits"; "Categorizing your storage using tags").
const (
	// MinPartSize is the least size of every part but the last:
	// CompleteMultipartUpload refuses smaller ones with EntityTooSmall.
	MinPartSize = 5 << 20
	// MaxPartNumber is the highest part number.
	MaxPartNumber = 10000
	// MaxPresignExpiry is the longest life of a SigV4 presigned URL.
	MaxPresignExpiry = 7 * 24 * time.Hour
	// MaxTags is the most tags an object has; a tag key is 1–128 and a
	// value 0–256 Unicode characters.
	MaxTags = 10
)

// Defaults of Custody (docs/decisions.md "Time and size constants").
const (
	// DownloadURLExpiry is the life of a presigned GET behind a download
	// link's redirect.
	DownloadURLExpiry = 60 * time.Second
	// VerifyBufferSize is the one buffer Verify reads through.
	VerifyBufferSize = 1 << 20
)

// ObjectInfo describes a stored object.
type ObjectInfo struct {
	// Size is the object's length in bytes.
	Size int64
	// ContentType is the media type it was stored with ("" when none).
	ContentType string
	// ETag is S3's entity tag, quotes included. It is not a digest of the
	// content for multipart objects; Custody trusts only its own SHA-256.
	ETag string
	// LastModified is when the object was written, at S3's one-second
	// resolution.
	LastModified time.Time
}

// Object is an object being read. The caller must close Body; a read error
// from Body wraps ErrUnavailable.
type Object struct {
	ObjectInfo
	Body io.ReadCloser
}

// PutOptions are the optional fields of PutObject.
type PutOptions struct {
	// ContentType is stored with the object; "" stores
	// application/octet-stream, as S3 does.
	ContentType string
}

// Objects reads and writes whole objects.
type Objects interface {
	// PutObject stores body under ref, failing with ErrExists when an
	// object is already there (keys are immutable). It is for small
	// objects (one request; S3 takes up to 5 GiB): the body must be
	// seekable because the engine reads it once for its SHA-256, which S3
	// checks (x-amz-checksum-sha256), and the SDK again to send it.
	PutObject(ctx context.Context, ref Ref, body io.ReadSeeker, opts PutOptions) error
	// GetObject opens the object at ref for a streamed read: nothing is
	// buffered beyond what the caller reads. ErrNotFound when absent.
	GetObject(ctx context.Context, ref Ref) (*Object, error)
	// HeadObject describes the object at ref. ErrNotFound when absent.
	HeadObject(ctx context.Context, ref Ref) (ObjectInfo, error)
	// CopyObject copies src to dst inside S3 (no bytes pass through
	// Custody; one request takes up to 5 GiB), keeping the content type and
	// the tags. ErrNotFound when src is absent.
	CopyObject(ctx context.Context, src, dst Ref) error
	// DeleteObject removes the object at ref. Deleting an absent object
	// succeeds, as in S3.
	DeleteObject(ctx context.Context, ref Ref) error
}

// Tagging reads and replaces an object's tags (the scan verdict's fallback:
// GuardDuty tags what it scanned, docs/decisions.md "Scanning").
type Tagging interface {
	// PutObjectTagging replaces the object's whole tag set with tags (at
	// most MaxTags; ErrInvalid otherwise). ErrNotFound when absent.
	PutObjectTagging(ctx context.Context, ref Ref, tags map[string]string) error
	// GetObjectTagging returns the object's tags (an empty, non-nil map
	// when it has none). ErrNotFound when absent.
	GetObjectTagging(ctx context.Context, ref Ref) (map[string]string, error)
}

// Upload names one multipart upload: where it will land and S3's upload ID.
// The upload ID is S3's own and never leaves Custody (the lane shows agents
// its own upl_ ID).
type Upload struct {
	Ref      Ref
	UploadID string
}

// CreateOptions are the optional fields of CreateMultipartUpload.
type CreateOptions struct {
	// ContentType is stored with the finished object.
	ContentType string
}

// PartRequest is one part to presign.
type PartRequest struct {
	// PartNumber is 1–MaxPartNumber.
	PartNumber int32
	// Size is the part's exact length in bytes (> 0). It is signed as
	// Content-Length, so the URL takes no other length.
	Size int64
	// ChecksumSHA256 is the part's SHA-256 in standard base64 (44
	// characters), signed as x-amz-checksum-sha256: S3 refuses any other
	// body with BadDigest.
	ChecksumSHA256 string
	// Expires is the URL's life, at most MaxPresignExpiry.
	Expires time.Duration
}

// Part is one uploaded part as S3 lists it.
type Part struct {
	PartNumber int32
	// Size is the part's length in bytes.
	Size int64
	// ETag is S3's entity tag of the part, quotes included.
	ETag string
	// ChecksumSHA256 is the SHA-256 S3 verified on upload, standard base64.
	ChecksumSHA256 string
}

// PresignedRequest is a request signed for someone else to send: an agent
// uploading a part, a browser following a download redirect.
type PresignedRequest struct {
	// URL carries the SigV4 query signature (X-Amz-Signature).
	URL string
	// Method is the HTTP method the signature covers ("PUT", "GET").
	Method string
	// Header holds exactly the signed headers other than Host, with the
	// values the sender must send (canonical names, one value each). A
	// sender that drops, changes or adds an x-amz-* header is refused.
	Header http.Header
	// Expires is when S3 stops accepting the URL: the signing time plus the
	// requested life, or the signing credentials' expiry when that is
	// earlier (a URL outlives nothing that signed it).
	Expires time.Time
}

// Multipart runs multipart uploads whose parts an agent PUTs directly to S3
// with presigned URLs. Every upload uses the SHA256 checksum algorithm:
// each part carries its SHA-256, which S3 verifies and ListParts reports.
type Multipart interface {
	// CreateMultipartUpload starts an upload to ref with checksum
	// algorithm SHA256.
	CreateMultipartUpload(ctx context.Context, ref Ref, opts CreateOptions) (Upload, error)
	// PresignUploadPart signs one UploadPart for up: method PUT, the part's
	// size and SHA-256 as signed headers (never hoisted into the query),
	// ErrInvalid for a bad PartRequest.
	PresignUploadPart(ctx context.Context, up Upload, part PartRequest) (PresignedRequest, error)
	// ListParts returns every part S3 holds for up, in part-number order,
	// paging through ListParts as needed. ErrNotFound when the upload is
	// gone.
	ListParts(ctx context.Context, up Upload) ([]Part, error)
	// CompleteMultipartUpload assembles parts (as ListParts returned them,
	// in order) into the object at up.Ref. S3's refusals (EntityTooSmall,
	// InvalidPart, InvalidPartOrder) are ErrInvalid; a gone upload is
	// ErrNotFound.
	CompleteMultipartUpload(ctx context.Context, up Upload, parts []Part) error
	// AbortMultipartUpload discards up and its parts. ErrNotFound when the
	// upload is already gone.
	AbortMultipartUpload(ctx context.Context, up Upload) error
}

// GetURLOptions are the fields of PresignGetObject.
type GetURLOptions struct {
	// Filename is offered to the browser in Content-Disposition:
	// attachment (RFC 6266, with an RFC 8187 filename* for non-ASCII
	// names). "" sends a bare attachment.
	Filename string
	// ContentType overrides the served Content-Type ("" keeps the stored
	// one).
	ContentType string
	// Expires is the URL's life; 0 means DownloadURLExpiry.
	Expires time.Duration
}

// Presigner signs GETs for a browser to fetch an object directly.
type Presigner interface {
	// PresignGetObject signs a GET of the object at ref that S3 answers as
	// an attachment. The object need not exist yet; S3 answers 404 then.
	PresignGetObject(ctx context.Context, ref Ref, opts GetURLOptions) (PresignedRequest, error)
}

// Store is the whole port, as the engine implements it.
type Store interface {
	Objects
	Tagging
	Multipart
	Presigner
}
