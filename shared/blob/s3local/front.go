package s3local

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
)

// MaxBodyBytes is the largest request body the front takes. It buffers a
// body whole before gofakes3 sees it (a body whose checksum fails must
// never be stored), and gofakes3 holds parts in memory anyway; S3's own
// limit is 5 GiB. The lane's parts are 16 MiB.
const MaxBodyBytes = 64 << 20

// The operations the front serves; anything else is NotImplemented, so a
// client cannot come to rely on a gofakes3 behaviour S3 does not have.
type op int

const (
	opListObjects op = iota + 1
	opHeadBucket
	opPutObject
	opCopyObject
	opGetObject
	opHeadObject
	opDeleteObject
	opPutObjectTagging
	opGetObjectTagging
	opDeleteObjectTagging
	opCreateMultipartUpload
	opUploadPart
	opListParts
	opCompleteMultipartUpload
	opAbortMultipartUpload
)

// knownQuery are the query parameters of those operations (and of SigV4).
var knownQuery = map[string]bool{
	"uploadId": true, "partNumber": true, "uploads": true, "tagging": true, "x-id": true,
	"max-parts": true, "part-number-marker": true,
	"list-type": true, "prefix": true, "delimiter": true, "max-keys": true, "continuation-token": true,
	"start-after": true, "encoding-type": true, "fetch-owner": true, "marker": true,
	"response-content-type": true, "response-content-disposition": true, "response-content-language": true,
	"response-content-encoding": true, "response-cache-control": true, "response-expires": true,
}

func classify(r *http.Request, key string) (op, *s3Error) {
	q := r.URL.Query()
	for k := range q {
		if !knownQuery[k] && !strings.HasPrefix(k, "X-Amz-") {
			return 0, errNotImplemented("the " + k + " subresource")
		}
	}
	has := func(k string) bool { _, ok := q[k]; return ok }
	if key == "" {
		switch r.Method {
		case http.MethodGet:
			if has("uploads") || has("tagging") {
				break
			}
			return opListObjects, nil
		case http.MethodHead:
			return opHeadBucket, nil
		}
		return 0, errNotImplemented(r.Method + " of a bucket")
	}
	switch {
	case has("uploadId"):
		switch r.Method {
		case http.MethodPut:
			if r.Header.Get("X-Amz-Copy-Source") != "" {
				return 0, errNotImplemented("UploadPartCopy")
			}
			return opUploadPart, nil
		case http.MethodGet:
			return opListParts, nil
		case http.MethodPost:
			return opCompleteMultipartUpload, nil
		case http.MethodDelete:
			return opAbortMultipartUpload, nil
		}
	case has("uploads"):
		if r.Method == http.MethodPost {
			return opCreateMultipartUpload, nil
		}
	case has("tagging"):
		switch r.Method {
		case http.MethodPut:
			return opPutObjectTagging, nil
		case http.MethodGet:
			return opGetObjectTagging, nil
		case http.MethodDelete:
			return opDeleteObjectTagging, nil
		}
	default:
		switch r.Method {
		case http.MethodPut:
			if r.Header.Get("X-Amz-Copy-Source") != "" {
				return opCopyObject, nil
			}
			return opPutObject, nil
		case http.MethodGet:
			return opGetObject, nil
		case http.MethodHead:
			return opHeadObject, nil
		case http.MethodDelete:
			return opDeleteObject, nil
		}
	}
	return 0, errNotImplemented(r.Method + " " + strings.Join(queryKeys(q), "&"))
}

func queryKeys(q url.Values) []string {
	var ks []string
	for k := range q {
		if !strings.HasPrefix(k, "X-Amz-") {
			ks = append(ks, k)
		}
	}
	return ks
}

// ServeHTTP answers one S3 request: authenticate, check the body, then
// serve it through gofakes3 or the front's own handlers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := strconv.FormatUint(s.requests.Add(1), 16)
	if e := s.serve(w, r); e != nil {
		e.write(w, r, strings.ToUpper(id))
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) *s3Error {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	a, e := s.authenticate(r)
	if e != nil {
		return e
	}
	if bucket == "" {
		return errNotImplemented("ListBuckets")
	}
	if !s.buckets[bucket] {
		return errNoSuchBucket()
	}
	op, e := classify(r, key)
	if e != nil {
		return e
	}
	body, sums, e := readBody(r, a)
	if e != nil {
		return e
	}
	in := inbound(r, body)
	switch op {
	case opListObjects, opHeadBucket:
		s.s3.ServeHTTP(&scrubbed{ResponseWriter: w}, in)
	case opGetObject, opHeadObject:
		s.tagCount(w.Header(), bucket, key)
		s.s3.ServeHTTP(&scrubbed{ResponseWriter: w}, in)
	case opPutObject:
		return s.putObject(w, r, in, bucket, key)
	case opCopyObject:
		return s.copyObject(w, r, in, bucket, key)
	case opDeleteObject:
		s.tagMu.Lock()
		defer s.tagMu.Unlock()
		rec := s.forwardRecorded(in)
		if rec.Code/100 == 2 {
			s.deleteTags(bucket, key)
		}
		copyResponse(w, rec)
	case opPutObjectTagging:
		return s.putObjectTagging(w, bucket, key, body)
	case opGetObjectTagging:
		return s.getObjectTagging(w, bucket, key)
	case opDeleteObjectTagging:
		return s.deleteObjectTagging(w, bucket, key)
	case opCreateMultipartUpload:
		return s.createMultipartUpload(w, r, in, bucket, key)
	case opUploadPart:
		return s.uploadPart(w, in, bucket, key, body, sums)
	case opListParts:
		return s.listParts(w, in, bucket, key)
	case opCompleteMultipartUpload:
		return s.completeMultipartUpload(w, in, bucket, key, body)
	case opAbortMultipartUpload:
		return s.abortMultipartUpload(w, in, bucket, key)
	}
	return nil
}

// putObject, copyObject and createMultipartUpload read the x-amz-* headers
// of r, the request as received, and forward in (see inbound).
func (s *Server) putObject(w http.ResponseWriter, r, in *http.Request, bucket, key string) *s3Error {
	if r.Header.Get("X-Amz-Tagging") != "" {
		return errNotImplemented("x-amz-tagging on PutObject")
	}
	s.tagMu.Lock()
	defer s.tagMu.Unlock()
	rec := s.forwardRecorded(in)
	if rec.Code == http.StatusOK {
		s.deleteTags(bucket, key)
	}
	copyResponse(w, rec)
	return nil
}

func (s *Server) copyObject(w http.ResponseWriter, r, in *http.Request, bucket, key string) *s3Error {
	src, err := url.PathUnescape(strings.TrimPrefix(r.Header.Get("X-Amz-Copy-Source"), "/"))
	if err != nil {
		return errorf(http.StatusBadRequest, "InvalidArgument", "Invalid copy source encoding")
	}
	if strings.Contains(src, "?") {
		return errNotImplemented("copying an object version")
	}
	srcBucket, srcKey, _ := strings.Cut(src, "/")
	if !s.buckets[srcBucket] || srcKey == "" {
		return errNoSuchBucket()
	}
	directive := r.Header.Get("X-Amz-Tagging-Directive")
	if r.Header.Get("X-Amz-Tagging") != "" {
		return errNotImplemented("x-amz-tagging on CopyObject")
	}
	if md := r.Header.Get("X-Amz-Metadata-Directive"); md != "" && md != "COPY" {
		return errNotImplemented("x-amz-metadata-directive " + md)
	}
	s.tagMu.Lock()
	defer s.tagMu.Unlock()
	rec := s.forwardRecorded(in)
	if rec.Code == http.StatusOK {
		var tags []xmlTag
		if directive == "" || directive == "COPY" {
			tags = s.readTags(srcBucket, srcKey)
		}
		if e := s.writeTags(bucket, key, tags); e != nil {
			return e
		}
	}
	copyResponse(w, rec)
	return nil
}

// forwardRecorded serves r with gofakes3 into a recorder: for the small
// answers the front inspects or rewrites.
func (s *Server) forwardRecorded(r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.s3.ServeHTTP(rec, r)
	return rec
}

// inbound is r as gofakes3 gets it: the verified body, and no SigV4 or
// checksum headers, which gofakes3 would otherwise store as object
// metadata and send back on every GET.
func inbound(r *http.Request, body []byte) *http.Request {
	in := r.Clone(r.Context())
	in.Body = io.NopCloser(bytes.NewReader(body))
	in.ContentLength = int64(len(body))
	in.Header.Del("Authorization")
	for k := range in.Header {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-amz-") && !strings.HasPrefix(lk, "x-amz-meta-") && lk != "x-amz-copy-source" {
			in.Header.Del(k)
		}
	}
	if r.Method == http.MethodPut || r.Method == http.MethodPost {
		in.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	return in
}

// readBody reads a PUT's or POST's body whole and checks it against what
// the request declares, as S3 does, before anything is stored: its length
// (IncompleteBody), x-amz-content-sha256 (XAmzContentSHA256Mismatch),
// Content-MD5 and one x-amz-checksum-* (BadDigest). It returns the
// verified checksums by algorithm ("SHA256" → base64).
func readBody(r *http.Request, a *auth) ([]byte, map[string]string, *s3Error) {
	if strings.HasPrefix(a.payloadHash, "STREAMING-") || r.Header.Get("X-Amz-Trailer") != "" ||
		strings.Contains(r.Header.Get("Content-Encoding"), "aws-chunked") {
		return nil, nil, errNotImplemented("aws-chunked bodies; set the client's RequestChecksumCalculation to WhenRequired (blob.LocalClientOptions)")
	}
	var body []byte
	if r.Method == http.MethodPut || r.Method == http.MethodPost {
		if r.ContentLength < 0 {
			return nil, nil, errorf(http.StatusLengthRequired, "MissingContentLength", "You must provide the Content-Length HTTP header.")
		}
		if r.ContentLength > MaxBodyBytes {
			return nil, nil, errorf(http.StatusBadRequest, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size (s3local buffers bodies up to %d bytes)", MaxBodyBytes).
				with("ProposedSize", strconv.FormatInt(r.ContentLength, 10)).with("MaxSizeAllowed", strconv.Itoa(MaxBodyBytes))
		}
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, r.ContentLength+1))
		if err != nil || int64(len(body)) != r.ContentLength {
			return nil, nil, errorf(http.StatusBadRequest, "IncompleteBody", "You did not provide the number of bytes specified by the Content-Length HTTP header")
		}
	}
	if a.payloadHash != unsignedPayload {
		sum := sha256.Sum256(body)
		if got := hex.EncodeToString(sum[:]); got != strings.ToLower(a.payloadHash) {
			return nil, nil, errorf(http.StatusBadRequest, "XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match what was computed.").
				with("ClientComputedContentSHA256", a.payloadHash).with("S3ComputedContentSHA256", got)
		}
	}
	if v, ok := r.Header["Content-Md5"]; ok {
		want, err := base64.StdEncoding.DecodeString(strings.Join(v, ""))
		if err != nil || len(want) != md5.Size {
			return nil, nil, errorf(http.StatusBadRequest, "InvalidDigest", "The Content-MD5 you specified was not valid.")
		}
		if got := md5.Sum(body); !bytes.Equal(got[:], want) {
			return nil, nil, errorf(http.StatusBadRequest, "BadDigest", "The Content-MD5 you specified did not match what we received.")
		}
	}
	sums := map[string]string{}
	for k, v := range r.Header {
		alg, ok := strings.CutPrefix(strings.ToUpper(k), "X-AMZ-CHECKSUM-")
		if !ok || alg == "ALGORITHM" || alg == "MODE" || alg == "TYPE" {
			continue
		}
		if len(sums) > 0 {
			return nil, nil, errorf(http.StatusBadRequest, "InvalidRequest", "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
		}
		h := newChecksum(alg)
		if h == nil {
			return nil, nil, errNotImplemented("the " + alg + " checksum")
		}
		want, err := base64.StdEncoding.Strict().DecodeString(strings.Join(v, ""))
		if err != nil || len(want) != h.Size() {
			return nil, nil, errorf(http.StatusBadRequest, "InvalidRequest", "Value for x-amz-checksum-%s header is invalid.", strings.ToLower(alg))
		}
		h.Write(body)
		if !bytes.Equal(h.Sum(nil), want) {
			return nil, nil, errorf(http.StatusBadRequest, "BadDigest", "The %s you specified did not match the calculated checksum.", alg)
		}
		sums[alg] = strings.Join(v, "")
	}
	return body, sums, nil
}

// newChecksum returns a hash of S3's algorithm name, or nil for one the
// front cannot compute (CRC64NVME: not in the standard library).
func newChecksum(alg string) hash.Hash {
	switch alg {
	case "SHA256":
		return sha256.New()
	case "SHA1":
		return sha1.New()
	case "CRC32":
		return &crc{Hash32: crc32.NewIEEE()}
	case "CRC32C":
		return &crc{Hash32: crc32.New(crc32.MakeTable(crc32.Castagnoli))}
	}
	return nil
}

// crc sums a CRC32 big-endian, as S3's checksum headers carry it.
type crc struct{ hash.Hash32 }

func (c *crc) Sum(b []byte) []byte { return binary.BigEndian.AppendUint32(b, c.Sum32()) }

// checksumHeader is the response header of an algorithm ("" if unknown).
func checksumHeader(alg string) string {
	if newChecksum(alg) == nil {
		return ""
	}
	return "x-amz-checksum-" + strings.ToLower(alg)
}

// scrubbed passes gofakes3's answer on without the headers S3 would not
// send: x-amz-* values gofakes3 kept from the request as metadata (e.g.
// x-amz-copy-source) and its permissive CORS headers.
type scrubbed struct {
	http.ResponseWriter
	wrote bool
}

func (s *scrubbed) WriteHeader(code int) {
	if s.wrote {
		// gofakes3 answers an error after a body it could not finish
		// (the client went away): too late to say anything.
		return
	}
	s.wrote = true
	scrub(s.Header())
	s.ResponseWriter.WriteHeader(code)
}

func (s *scrubbed) Write(b []byte) (int, error) {
	if !s.wrote {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

var keptAmzHeaders = map[string]bool{
	"x-amz-request-id": true, "x-amz-id-2": true, "x-amz-version-id": true, "x-amz-delete-marker": true,
	"x-amz-tagging-count": true, "x-amz-checksum-algorithm": true, "x-amz-checksum-type": true,
}

func scrub(h http.Header) {
	for k := range h {
		lk := strings.ToLower(k)
		switch {
		case strings.HasPrefix(lk, "access-control-"):
			h.Del(k)
		case strings.HasPrefix(lk, "x-amz-") && !strings.HasPrefix(lk, "x-amz-meta-") &&
			!strings.HasPrefix(lk, "x-amz-checksum-") && !keptAmzHeaders[lk]:
			h.Del(k)
		}
	}
}
