package s3local

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/custodymcp/custody/shared/blob"
)

// Multipart uploads pass through gofakes3, which stores the parts, but the
// front keeps its own record of each upload and of every part it accepted,
// because gofakes3 v1.2.0 lacks what the lane relies on:
//
//   - upload IDs: gofakes3 numbers uploads 1, 2, … from each start, so an
//     ID from before a restart would name someone else's upload. The front
//     hands out random IDs of its own and maps them; after a restart every
//     old ID is NoSuchUpload, as for an upload S3 has expired.
//   - checksums: gofakes3 ignores x-amz-checksum-algorithm and the parts'
//     checksums. The front verifies each part's (front.go), requires the
//     upload's algorithm on every part, reports the SHA-256 in ListParts
//     and checks it at CompleteMultipartUpload, as S3 does.
//   - ListParts paging: gofakes3 numbers the parts of a later page from
//     the marker; the front answers ListParts from its record.
//   - part sizes: gofakes3 completes an upload of any part sizes; S3
//     refuses a part under 5 MiB that is not the last (EntityTooSmall).
//
// gofakes3 keeps parts in memory on every backend, so the record is in
// memory too: both are lost together when the server stops.

type upload struct {
	bucket, key string
	// inner is gofakes3's upload ID.
	inner string
	// algorithm is the checksum algorithm of CreateMultipartUpload
	// ("SHA256", "CRC32", …; "" for none).
	algorithm string
	initiated time.Time

	// mu serializes UploadPart, CompleteMultipartUpload and
	// AbortMultipartUpload of this upload, so the record and gofakes3's
	// parts change together.
	mu    sync.Mutex
	parts map[int]part
	done  bool
}

type part struct {
	size     int64
	etag     string
	checksum string // the upload algorithm's checksum, base64 ("" for none)
	modified time.Time
}

func newUploadID() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// lookup returns the upload id of bucket/key, or NoSuchUpload.
func (s *Server) lookup(bucket, key, id string) (*upload, *s3Error) {
	s.mu.Lock()
	up := s.uploads[id]
	s.mu.Unlock()
	if up == nil || up.bucket != bucket || up.key != key {
		return nil, errNoSuchUpload()
	}
	return up, nil
}

// withInnerID returns a copy of r addressed to gofakes3's upload id.
func withInnerID(r *http.Request, inner string) *http.Request {
	q := r.URL.Query()
	q.Set("uploadId", inner)
	r2 := r.Clone(r.Context())
	r2.URL.RawQuery = q.Encode()
	return r2
}

type initiateResult struct {
	XMLName  xml.Name `xml:"InitiateMultipartUploadResult"`
	Bucket   string
	Key      string
	UploadID string `xml:"UploadId"`
}

func (s *Server) createMultipartUpload(w http.ResponseWriter, r, in *http.Request, bucket, key string) *s3Error {
	alg := strings.ToUpper(r.Header.Get("X-Amz-Checksum-Algorithm"))
	if alg != "" && checksumHeader(alg) == "" {
		return errorf(http.StatusBadRequest, "InvalidRequest", "Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, SHA1, SHA256]")
	}
	rec := s.forwardRecorded(in)
	if rec.Code != http.StatusOK {
		copyResponse(w, rec)
		return nil
	}
	var res initiateResult
	if err := xml.Unmarshal(rec.Body.Bytes(), &res); err != nil || res.UploadID == "" {
		return errorf(http.StatusInternalServerError, "InternalError", "gofakes3 answered CreateMultipartUpload without an upload ID")
	}
	id := newUploadID()
	s.mu.Lock()
	s.uploads[id] = &upload{bucket: bucket, key: key, inner: res.UploadID, algorithm: alg, initiated: s.now(), parts: map[int]part{}}
	s.mu.Unlock()
	res.UploadID = id
	if alg != "" {
		w.Header().Set("x-amz-checksum-algorithm", alg)
		w.Header().Set("x-amz-checksum-type", "COMPOSITE")
	}
	writeXML(w, http.StatusOK, struct {
		XMLName xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ InitiateMultipartUploadResult"`
		initiateResult
	}{initiateResult: res})
	return nil
}

func (s *Server) uploadPart(w http.ResponseWriter, r *http.Request, bucket, key string, body []byte, sums map[string]string) *s3Error {
	n, err := strconv.Atoi(r.URL.Query().Get("partNumber"))
	if err != nil || n < 1 || n > blob.MaxPartNumber {
		return errorf(http.StatusBadRequest, "InvalidArgument", "Part number must be an integer between 1 and 10000, inclusive").
			with("ArgumentName", "partNumber").with("ArgumentValue", r.URL.Query().Get("partNumber"))
	}
	up, e := s.lookup(bucket, key, r.URL.Query().Get("uploadId"))
	if e != nil {
		return e
	}
	sum := ""
	if up.algorithm != "" {
		sum = sums[up.algorithm]
		if sum == "" {
			got := "null"
			for alg := range sums {
				got = strings.ToLower(alg)
			}
			return errorf(http.StatusBadRequest, "InvalidRequest", "Checksum Type mismatch occurred, expected checksum Type: %s, actual checksum Type: %s", strings.ToLower(up.algorithm), got)
		}
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if up.done {
		return errNoSuchUpload()
	}
	rec := s.forwardRecorded(withInnerID(r, up.inner))
	if rec.Code == http.StatusOK {
		up.parts[n] = part{size: int64(len(body)), etag: rec.Header().Get("ETag"), checksum: sum, modified: s.now()}
		if sum != "" {
			rec.Header().Set(checksumHeader(up.algorithm), sum)
		}
	}
	copyResponse(w, rec)
	return nil
}

type xmlPart struct {
	PartNumber     int
	LastModified   string `xml:",omitempty"`
	ETag           string
	Size           int64  `xml:",omitempty"`
	ChecksumCRC32  string `xml:",omitempty"`
	ChecksumCRC32C string `xml:",omitempty"`
	ChecksumSHA1   string `xml:",omitempty"`
	ChecksumSHA256 string `xml:",omitempty"`
}

func (p *xmlPart) checksum(alg string) *string {
	switch alg {
	case "CRC32":
		return &p.ChecksumCRC32
	case "CRC32C":
		return &p.ChecksumCRC32C
	case "SHA1":
		return &p.ChecksumSHA1
	case "SHA256":
		return &p.ChecksumSHA256
	}
	return nil
}

type listPartsResult struct {
	XMLName              xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListPartsResult"`
	Bucket               string
	Key                  string
	UploadID             string `xml:"UploadId"`
	PartNumberMarker     int
	NextPartNumberMarker int `xml:",omitempty"`
	MaxParts             int
	IsTruncated          bool
	ChecksumAlgorithm    string `xml:",omitempty"`
	ChecksumType         string `xml:",omitempty"`
	StorageClass         string
	Parts                []xmlPart `xml:"Part"`
}

// listParts answers ListParts from the front's record (see above), paged
// by max-parts (1–1000, default 1000) after part-number-marker.
func (s *Server) listParts(w http.ResponseWriter, r *http.Request, bucket, key string) *s3Error {
	q := r.URL.Query()
	id := q.Get("uploadId")
	up, e := s.lookup(bucket, key, id)
	if e != nil {
		return e
	}
	maxParts, marker := 1000, 0
	if v := q.Get("max-parts"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return errorf(http.StatusBadRequest, "InvalidArgument", "Provided max-parts not an integer or within integer range").with("ArgumentName", "max-parts")
		}
		maxParts = min(n, 1000)
	}
	if v := q.Get("part-number-marker"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return errorf(http.StatusBadRequest, "InvalidArgument", "Provided part-number-marker not an integer or within integer range").with("ArgumentName", "part-number-marker")
		}
		marker = n
	}
	up.mu.Lock()
	numbers := make([]int, 0, len(up.parts))
	for n := range up.parts {
		if n > marker {
			numbers = append(numbers, n)
		}
	}
	sort.Ints(numbers)
	res := listPartsResult{
		Bucket: bucket, Key: key, UploadID: id, PartNumberMarker: marker, MaxParts: maxParts,
		StorageClass: "STANDARD", ChecksumAlgorithm: up.algorithm,
	}
	if up.algorithm != "" {
		res.ChecksumType = "COMPOSITE"
	}
	for i, n := range numbers {
		if i == maxParts {
			res.IsTruncated = true
			res.NextPartNumberMarker = numbers[i-1]
			break
		}
		p := up.parts[n]
		x := xmlPart{PartNumber: n, LastModified: p.modified.UTC().Format("2006-01-02T15:04:05.000Z"), ETag: p.etag, Size: p.size}
		if c := x.checksum(up.algorithm); c != nil {
			*c = p.checksum
		}
		res.Parts = append(res.Parts, x)
	}
	up.mu.Unlock()
	writeXML(w, http.StatusOK, res)
	return nil
}

type completeRequest struct {
	Parts []xmlPart `xml:"Part"`
}

type completeResult struct {
	Location       string
	Bucket         string
	Key            string
	ETag           string
	ChecksumSHA256 string `xml:",omitempty"`
	ChecksumType   string `xml:",omitempty"`
}

func (s *Server) completeMultipartUpload(w http.ResponseWriter, r *http.Request, bucket, key string, body []byte) *s3Error {
	up, e := s.lookup(bucket, key, r.URL.Query().Get("uploadId"))
	if e != nil {
		return e
	}
	var in completeRequest
	if err := xml.Unmarshal(body, &in); err != nil || len(in.Parts) == 0 {
		return errorf(http.StatusBadRequest, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema")
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if up.done {
		return errNoSuchUpload()
	}
	composite := sha256.New()
	for i, p := range in.Parts {
		if i > 0 && p.PartNumber <= in.Parts[i-1].PartNumber {
			return errorf(http.StatusBadRequest, "InvalidPartOrder", "The list of parts was not in ascending order. The parts list must be specified in order by part number.")
		}
		have, ok := up.parts[p.PartNumber]
		if !ok || strings.Trim(p.ETag, `"`) != strings.Trim(have.etag, `"`) {
			return errInvalidPart()
		}
		if up.algorithm != "" {
			c := p.checksum(up.algorithm)
			if *c == "" {
				return errorf(http.StatusBadRequest, "InvalidRequest", "The upload was created using a %s checksum. The complete request must include the checksum for each part. It was missing for part %d in the request.", strings.ToLower(up.algorithm), p.PartNumber)
			}
			if *c != have.checksum {
				return errInvalidPart()
			}
			if up.algorithm == "SHA256" {
				raw, _ := base64.StdEncoding.DecodeString(have.checksum)
				composite.Write(raw)
			}
		}
		if i < len(in.Parts)-1 && have.size < blob.MinPartSize {
			return errorf(http.StatusBadRequest, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size").
				with("ProposedSize", strconv.FormatInt(have.size, 10)).with("MinSizeAllowed", strconv.Itoa(blob.MinPartSize)).
				with("PartNumber", strconv.Itoa(p.PartNumber)).with("ETag", strings.Trim(have.etag, `"`))
		}
	}
	s.tagMu.Lock()
	defer s.tagMu.Unlock()
	rec := s.forwardRecorded(withInnerID(r, up.inner))
	if rec.Code != http.StatusOK {
		copyResponse(w, rec)
		return nil
	}
	// The object is there now: whatever gofakes3's answer says, the
	// upload is done (a retry must meet NoSuchUpload, as on S3).
	var res completeResult
	_ = xml.Unmarshal(rec.Body.Bytes(), &res)
	res.Bucket, res.Key = bucket, key
	up.done = true
	s.mu.Lock()
	delete(s.uploads, r.URL.Query().Get("uploadId"))
	s.mu.Unlock()
	// A new object starts without tags.
	s.deleteTags(bucket, key)
	if up.algorithm == "SHA256" {
		res.ChecksumSHA256 = base64.StdEncoding.EncodeToString(composite.Sum(nil)) + "-" + strconv.Itoa(len(in.Parts))
		res.ChecksumType = "COMPOSITE"
	}
	writeXML(w, http.StatusOK, struct {
		XMLName xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ CompleteMultipartUploadResult"`
		completeResult
	}{completeResult: res})
	return nil
}

func (s *Server) abortMultipartUpload(w http.ResponseWriter, r *http.Request, bucket, key string) *s3Error {
	id := r.URL.Query().Get("uploadId")
	up, e := s.lookup(bucket, key, id)
	if e != nil {
		return e
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if up.done {
		return errNoSuchUpload()
	}
	rec := s.forwardRecorded(withInnerID(r, up.inner))
	if rec.Code/100 == 2 {
		up.done = true
		s.mu.Lock()
		delete(s.uploads, id)
		s.mu.Unlock()
	}
	copyResponse(w, rec)
	return nil
}

// writeXML answers v as an XML document with status.
func writeXML(w http.ResponseWriter, status int, v any) {
	out, err := xml.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	out = append([]byte(xml.Header), out...)
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// copyResponse replays a recorded gofakes3 answer on w.
func copyResponse(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	scrub(rec.Header())
	for k, vs := range rec.Header() {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Length", strconv.Itoa(rec.Body.Len()))
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}
