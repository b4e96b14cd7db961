package blob

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Options configures the S3 engine. The zero value is usable.
type Options struct {
	// UploadPartCredentials sign the UploadPart URLs (PresignUploadPart).
	// On AWS they are the UploadSigner role's (UploadSignerCredentials),
	// allowed only s3:PutObject on incoming/*, so a leaked URL can only
	// upload a part. nil signs with the client's own credentials.
	UploadPartCredentials aws.CredentialsProvider
	// Now is the clock that dates presigned requests (X-Amz-Date) and so
	// their expiry; nil means time.Now. Requests the SDK sends itself are
	// dated by the client's signer (see WithClock).
	Now func() time.Time
	// Timeout bounds every call other than the body of a GetObject, which
	// the caller's context bounds; 0 means DefaultTimeout.
	Timeout time.Duration
	// ListPartsPageSize is the MaxParts of each ListParts page; 0 leaves
	// S3's 1000. Tests shrink it to force paging.
	ListPartsPageSize int32
}

// DefaultTimeout bounds one call of the engine (CompleteMultipartUpload of
// 64 parts and a CopyObject of 1 GiB take seconds, rarely more).
const DefaultTimeout = 2 * time.Minute

// S3 is the engine of the port over aws-sdk-go-v2's S3 client. Safe for
// concurrent use.
type S3 struct {
	client    *s3.Client
	presign   *s3.PresignClient
	buckets   Buckets
	now       func() time.Time
	timeout   time.Duration
	pageSize  int32
	partCreds aws.CredentialsProvider
	signer    *v4.Signer
}

var _ Store = (*S3)(nil)

// New returns the engine over client for buckets. client must have
// credentials. For s3local, build it with LocalClientOptions (path-style
// addressing, checksums only when required). It fails when buckets are not
// both named and distinct.
func New(client *s3.Client, buckets Buckets, opts Options) (*S3, error) {
	if err := buckets.validate(); err != nil {
		return nil, err
	}
	if client.Options().Credentials == nil {
		return nil, fmt.Errorf("blob engine: %w: the S3 client has no credentials", ErrInvalid)
	}
	e := &S3{
		client:    client,
		presign:   s3.NewPresignClient(client),
		buckets:   buckets,
		now:       opts.Now,
		timeout:   opts.Timeout,
		pageSize:  opts.ListPartsPageSize,
		partCreds: opts.UploadPartCredentials,
		// S3 signs the path as sent (no second escaping); headers stay
		// headers, so a part's checksum is a signed header the sender must
		// send, never a query parameter (docs/contracts.md §5).
		signer: v4.NewSigner(func(o *v4.SignerOptions) {
			o.DisableURIPathEscaping = true
			o.DisableHeaderHoisting = true
		}),
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	if e.partCreds == nil {
		e.partCreds = client.Options().Credentials
	}
	return e, nil
}

// bucket validates ref and returns its bucket's name.
func (e *S3) bucket(ref Ref) (*string, error) {
	if err := ref.Validate(); err != nil {
		return nil, err
	}
	return aws.String(e.buckets.Name(ref.Bucket)), nil
}

func (e *S3) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.timeout)
}

// PutObject implements Objects.
func (e *S3) PutObject(ctx context.Context, ref Ref, body io.ReadSeeker, opts PutOptions) error {
	bucket, err := e.bucket(ref)
	if err != nil {
		return err
	}
	start, err := body.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("put object %s: seek body: %w", ref, err)
	}
	h := sha256.New()
	n, err := io.Copy(h, body)
	if err != nil {
		return fmt.Errorf("put object %s: read body: %w", ref, err)
	}
	if _, err := body.Seek(start, io.SeekStart); err != nil {
		return fmt.Errorf("put object %s: seek body: %w", ref, err)
	}
	ct := opts.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	ctx, cancel := e.call(ctx)
	defer cancel()
	_, err = e.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:         bucket,
		Key:            aws.String(ref.Key),
		Body:           body,
		ContentLength:  aws.Int64(n),
		ContentType:    aws.String(ct),
		ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(h.Sum(nil))),
		// Keys are immutable: S3 refuses to replace an object (412).
		IfNoneMatch: aws.String("*"),
	})
	if err != nil {
		return translate("put object", ref, err)
	}
	return nil
}

// GetObject implements Objects. The caller's context bounds the whole
// read.
func (e *S3) GetObject(ctx context.Context, ref Ref) (*Object, error) {
	bucket, err := e.bucket(ref)
	if err != nil {
		return nil, err
	}
	out, err := e.client.GetObject(ctx, &s3.GetObjectInput{Bucket: bucket, Key: aws.String(ref.Key)})
	if err != nil {
		return nil, translate("get object", ref, err)
	}
	return &Object{
		ObjectInfo: ObjectInfo{
			Size:         aws.ToInt64(out.ContentLength),
			ContentType:  aws.ToString(out.ContentType),
			ETag:         aws.ToString(out.ETag),
			LastModified: aws.ToTime(out.LastModified),
		},
		Body: &objectBody{rc: out.Body, ref: ref},
	}, nil
}

// objectBody translates read errors of a streamed object at the boundary.
type objectBody struct {
	rc  io.ReadCloser
	ref Ref
}

func (b *objectBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("read object %s: %w: %w", b.ref, ErrUnavailable, err)
	}
	return n, err
}

func (b *objectBody) Close() error { return b.rc.Close() }

// HeadObject implements Objects.
func (e *S3) HeadObject(ctx context.Context, ref Ref) (ObjectInfo, error) {
	bucket, err := e.bucket(ref)
	if err != nil {
		return ObjectInfo{}, err
	}
	ctx, cancel := e.call(ctx)
	defer cancel()
	out, err := e.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: bucket, Key: aws.String(ref.Key)})
	if err != nil {
		return ObjectInfo{}, translate("head object", ref, err)
	}
	return ObjectInfo{
		Size:         aws.ToInt64(out.ContentLength),
		ContentType:  aws.ToString(out.ContentType),
		ETag:         aws.ToString(out.ETag),
		LastModified: aws.ToTime(out.LastModified),
	}, nil
}

// CopyObject implements Objects.
func (e *S3) CopyObject(ctx context.Context, src, dst Ref) error {
	srcBucket, err := e.bucket(src)
	if err != nil {
		return err
	}
	dstBucket, err := e.bucket(dst)
	if err != nil {
		return err
	}
	ctx, cancel := e.call(ctx)
	defer cancel()
	_, err = e.client.CopyObject(ctx, &s3.CopyObjectInput{
		Bucket: dstBucket,
		Key:    aws.String(dst.Key),
		// Bucket names and the port's keys need no URL escaping.
		CopySource:        aws.String(*srcBucket + "/" + src.Key),
		MetadataDirective: types.MetadataDirectiveCopy,
		TaggingDirective:  types.TaggingDirectiveCopy,
	})
	if err != nil {
		return translate("copy object "+src.String()+" to", dst, err)
	}
	return nil
}

// DeleteObject implements Objects.
func (e *S3) DeleteObject(ctx context.Context, ref Ref) error {
	bucket, err := e.bucket(ref)
	if err != nil {
		return err
	}
	ctx, cancel := e.call(ctx)
	defer cancel()
	if _, err := e.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: aws.String(ref.Key)}); err != nil {
		return translate("delete object", ref, err)
	}
	return nil
}

// PutObjectTagging implements Tagging.
func (e *S3) PutObjectTagging(ctx context.Context, ref Ref, tags map[string]string) error {
	bucket, err := e.bucket(ref)
	if err != nil {
		return err
	}
	if err := validateTags(tags); err != nil {
		return fmt.Errorf("put object tagging %s: %w", ref, err)
	}
	set := make([]types.Tag, 0, len(tags))
	for k, v := range tags {
		set = append(set, types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	sort.Slice(set, func(i, j int) bool { return *set[i].Key < *set[j].Key })
	ctx, cancel := e.call(ctx)
	defer cancel()
	_, err = e.client.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{
		Bucket:  bucket,
		Key:     aws.String(ref.Key),
		Tagging: &types.Tagging{TagSet: set},
	})
	if err != nil {
		return translate("put object tagging", ref, err)
	}
	return nil
}

// validateTags holds tags to S3's limits.
func validateTags(tags map[string]string) error {
	if len(tags) > MaxTags {
		return fmt.Errorf("%w: %d tags, at most %d", ErrInvalid, len(tags), MaxTags)
	}
	for k, v := range tags {
		if n := len([]rune(k)); n < 1 || n > 128 {
			return fmt.Errorf("%w: a tag key has %d characters, want 1–128", ErrInvalid, n)
		}
		if n := len([]rune(v)); n > 256 {
			return fmt.Errorf("%w: a tag value has %d characters, at most 256", ErrInvalid, n)
		}
	}
	return nil
}

// GetObjectTagging implements Tagging.
func (e *S3) GetObjectTagging(ctx context.Context, ref Ref) (map[string]string, error) {
	bucket, err := e.bucket(ref)
	if err != nil {
		return nil, err
	}
	ctx, cancel := e.call(ctx)
	defer cancel()
	out, err := e.client.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: bucket, Key: aws.String(ref.Key)})
	if err != nil {
		return nil, translate("get object tagging", ref, err)
	}
	tags := make(map[string]string, len(out.TagSet))
	for _, t := range out.TagSet {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return tags, nil
}

// CreateMultipartUpload implements Multipart.
func (e *S3) CreateMultipartUpload(ctx context.Context, ref Ref, opts CreateOptions) (Upload, error) {
	bucket, err := e.bucket(ref)
	if err != nil {
		return Upload{}, err
	}
	in := &s3.CreateMultipartUploadInput{
		Bucket:            bucket,
		Key:               aws.String(ref.Key),
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256,
	}
	if opts.ContentType != "" {
		in.ContentType = aws.String(opts.ContentType)
	}
	ctx, cancel := e.call(ctx)
	defer cancel()
	out, err := e.client.CreateMultipartUpload(ctx, in)
	if err != nil {
		return Upload{}, translate("create multipart upload", ref, err)
	}
	if aws.ToString(out.UploadId) == "" {
		return Upload{}, fmt.Errorf("create multipart upload %s: %w: no upload ID in the answer", ref, ErrUnavailable)
	}
	return Upload{Ref: ref, UploadID: aws.ToString(out.UploadId)}, nil
}

// PresignUploadPart implements Multipart.
func (e *S3) PresignUploadPart(ctx context.Context, up Upload, part PartRequest) (PresignedRequest, error) {
	bucket, err := e.bucket(up.Ref)
	if err != nil {
		return PresignedRequest{}, err
	}
	if err := validatePart(up, part); err != nil {
		return PresignedRequest{}, fmt.Errorf("presign upload part %d of %s: %w", part.PartNumber, up.Ref, err)
	}
	in := &s3.UploadPartInput{
		Bucket:         bucket,
		Key:            aws.String(up.Ref.Key),
		UploadId:       aws.String(up.UploadID),
		PartNumber:     aws.Int32(part.PartNumber),
		ContentLength:  aws.Int64(part.Size),
		ChecksumSHA256: aws.String(part.ChecksumSHA256),
	}
	req, err := e.presignWith(ctx, e.partCreds, part.Expires, func(ctx context.Context, opt func(*s3.PresignOptions)) (*v4.PresignedHTTPRequest, error) {
		return e.presign.PresignUploadPart(ctx, in, opt)
	})
	if err != nil {
		return PresignedRequest{}, translate(fmt.Sprintf("presign upload part %d of", part.PartNumber), up.Ref, err)
	}
	return req, nil
}

func validatePart(up Upload, part PartRequest) error {
	switch {
	case up.UploadID == "":
		return fmt.Errorf("%w: no upload ID", ErrInvalid)
	case part.PartNumber < 1 || part.PartNumber > MaxPartNumber:
		return fmt.Errorf("%w: part number %d, want 1–%d", ErrInvalid, part.PartNumber, MaxPartNumber)
	case part.Size < 1 || part.Size > 5<<30:
		return fmt.Errorf("%w: part size %d, want 1 byte to 5 GiB", ErrInvalid, part.Size)
	case part.Expires <= 0 || part.Expires > MaxPresignExpiry:
		return fmt.Errorf("%w: URL life %v, want above 0 and at most %v", ErrInvalid, part.Expires, MaxPresignExpiry)
	}
	if sum, err := base64.StdEncoding.Strict().DecodeString(part.ChecksumSHA256); err != nil || len(sum) != sha256.Size {
		return fmt.Errorf("%w: the part checksum is not a base64 SHA-256", ErrInvalid)
	}
	return nil
}

// presignWith signs one request with creds at the engine clock's now, for
// at most life and never past the credentials' expiry.
func (e *S3) presignWith(
	ctx context.Context, creds aws.CredentialsProvider, life time.Duration,
	presign func(context.Context, func(*s3.PresignOptions)) (*v4.PresignedHTTPRequest, error),
) (PresignedRequest, error) {
	ctx, cancel := e.call(ctx)
	defer cancel()
	// X-Amz-Date has whole seconds; so has X-Amz-Expires.
	at := e.now().UTC().Truncate(time.Second)
	expires := at.Add(life.Truncate(time.Second))
	// The SDK retrieves the same (cached) credentials again while signing;
	// a refresh in between only yields later-expiring ones.
	c, err := creds.Retrieve(ctx)
	if err != nil {
		return PresignedRequest{}, fmt.Errorf("%w: retrieve signing credentials: %w", ErrUnavailable, err)
	}
	if c.CanExpire && c.Expires.Before(expires) {
		expires = c.Expires.Truncate(time.Second)
	}
	if !expires.After(at) {
		return PresignedRequest{}, fmt.Errorf("%w: the signing credentials expire before the URL could be used", ErrUnavailable)
	}
	out, err := presign(ctx, func(o *s3.PresignOptions) {
		o.Presigner = datedSigner{signer: e.signer, at: at}
		o.Expires = expires.Sub(at)
		o.ClientOptions = append(o.ClientOptions, func(co *s3.Options) { co.Credentials = creds })
	})
	if err != nil {
		return PresignedRequest{}, err
	}
	h := make(http.Header, len(out.SignedHeader))
	for k, vs := range out.SignedHeader {
		if k == "Host" || len(vs) == 0 {
			continue
		}
		h.Set(k, vs[0])
	}
	return PresignedRequest{URL: out.URL, Method: out.Method, Header: h, Expires: expires}, nil
}

// datedSigner presigns at a given time instead of the SDK's clock, so the
// engine knows the exact expiry and tests can move time.
type datedSigner struct {
	signer *v4.Signer
	at     time.Time
}

func (d datedSigner) PresignHTTP(
	ctx context.Context, credentials aws.Credentials, r *http.Request,
	payloadHash string, service string, region string, _ time.Time,
	optFns ...func(*v4.SignerOptions),
) (string, http.Header, error) {
	return d.signer.PresignHTTP(ctx, credentials, r, payloadHash, service, region, d.at, optFns...)
}

// ListParts implements Multipart.
func (e *S3) ListParts(ctx context.Context, up Upload) ([]Part, error) {
	bucket, err := e.bucket(up.Ref)
	if err != nil {
		return nil, err
	}
	if up.UploadID == "" {
		return nil, fmt.Errorf("list parts of %s: %w: no upload ID", up.Ref, ErrInvalid)
	}
	ctx, cancel := e.call(ctx)
	defer cancel()
	var parts []Part
	var marker *string
	for {
		in := &s3.ListPartsInput{Bucket: bucket, Key: aws.String(up.Ref.Key), UploadId: aws.String(up.UploadID), PartNumberMarker: marker}
		if e.pageSize > 0 {
			in.MaxParts = aws.Int32(e.pageSize)
		}
		out, err := e.client.ListParts(ctx, in)
		if err != nil {
			return nil, translate("list parts of", up.Ref, err)
		}
		for _, p := range out.Parts {
			parts = append(parts, Part{
				PartNumber:     aws.ToInt32(p.PartNumber),
				Size:           aws.ToInt64(p.Size),
				ETag:           aws.ToString(p.ETag),
				ChecksumSHA256: aws.ToString(p.ChecksumSHA256),
			})
		}
		if !aws.ToBool(out.IsTruncated) {
			return parts, nil
		}
		next := aws.ToString(out.NextPartNumberMarker)
		if next == "" || (marker != nil && next == *marker) {
			return nil, fmt.Errorf("list parts of %s: %w: a truncated page without a next marker", up.Ref, ErrUnavailable)
		}
		marker = aws.String(next)
	}
}

// CompleteMultipartUpload implements Multipart.
func (e *S3) CompleteMultipartUpload(ctx context.Context, up Upload, parts []Part) error {
	bucket, err := e.bucket(up.Ref)
	if err != nil {
		return err
	}
	if up.UploadID == "" || len(parts) == 0 {
		return fmt.Errorf("complete multipart upload %s: %w: an upload ID and at least one part are needed", up.Ref, ErrInvalid)
	}
	done := make([]types.CompletedPart, len(parts))
	for i, p := range parts {
		done[i] = types.CompletedPart{PartNumber: aws.Int32(p.PartNumber), ETag: aws.String(p.ETag)}
		if p.ChecksumSHA256 != "" {
			done[i].ChecksumSHA256 = aws.String(p.ChecksumSHA256)
		}
	}
	ctx, cancel := e.call(ctx)
	defer cancel()
	_, err = e.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket:          bucket,
		Key:             aws.String(up.Ref.Key),
		UploadId:        aws.String(up.UploadID),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done},
	})
	if err != nil {
		return translate("complete multipart upload", up.Ref, err)
	}
	return nil
}

// AbortMultipartUpload implements Multipart.
func (e *S3) AbortMultipartUpload(ctx context.Context, up Upload) error {
	bucket, err := e.bucket(up.Ref)
	if err != nil {
		return err
	}
	if up.UploadID == "" {
		return fmt.Errorf("abort multipart upload %s: %w: no upload ID", up.Ref, ErrInvalid)
	}
	ctx, cancel := e.call(ctx)
	defer cancel()
	_, err = e.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
		Bucket: bucket, Key: aws.String(up.Ref.Key), UploadId: aws.String(up.UploadID),
	})
	if err != nil {
		return translate("abort multipart upload", up.Ref, err)
	}
	return nil
}

// PresignGetObject implements Presigner.
func (e *S3) PresignGetObject(ctx context.Context, ref Ref, opts GetURLOptions) (PresignedRequest, error) {
	bucket, err := e.bucket(ref)
	if err != nil {
		return PresignedRequest{}, err
	}
	life := opts.Expires
	if life == 0 {
		life = DownloadURLExpiry
	}
	if life < time.Second || life > MaxPresignExpiry {
		return PresignedRequest{}, fmt.Errorf("presign get object %s: %w: URL life %v, want 1 s to %v", ref, ErrInvalid, life, MaxPresignExpiry)
	}
	in := &s3.GetObjectInput{
		Bucket:                     bucket,
		Key:                        aws.String(ref.Key),
		ResponseContentDisposition: aws.String(attachment(opts.Filename)),
	}
	if opts.ContentType != "" {
		in.ResponseContentType = aws.String(opts.ContentType)
	}
	req, err := e.presignWith(ctx, e.client.Options().Credentials, life, func(ctx context.Context, opt func(*s3.PresignOptions)) (*v4.PresignedHTTPRequest, error) {
		return e.presign.PresignGetObject(ctx, in, opt)
	})
	if err != nil {
		return PresignedRequest{}, translate("presign get object", ref, err)
	}
	return req, nil
}

// attachment is the Content-Disposition of a download (RFC 6266): the
// filename quoted when it is printable ASCII, else as an RFC 2231/8187
// filename* in UTF-8, which mime.FormatMediaType writes.
func attachment(filename string) string {
	if filename == "" {
		return "attachment"
	}
	if v := mime.FormatMediaType("attachment", map[string]string{"filename": filename}); v != "" {
		return v
	}
	// Not representable (e.g. invalid UTF-8): a bare attachment still
	// downloads rather than displays.
	return "attachment"
}
