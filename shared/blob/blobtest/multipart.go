package blobtest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/blob"
)

func multipartTests() []test {
	return []test{
		{"Parts PUT with net/http and the returned headers are listed with their SHA-256 and complete into the object", func(t *testing.T, e *env) {
			up := create(t, e)
			parts := [][]byte{Pattern(blob.MinPartSize, 1), Pattern(blob.MinPartSize+1, 2), Pattern(1234, 3)}
			for i, p := range parts {
				uploadPart(t, e, up, int32(i+1), p)
			}
			listed, err := e.ListParts(ctx(t), up)
			if err != nil {
				t.Fatalf("ListParts = %v", err)
			}
			var want []blob.Part
			for i, p := range parts {
				want = append(want, blob.Part{PartNumber: int32(i + 1), Size: int64(len(p)), ChecksumSHA256: ChecksumSHA256(p)})
			}
			if diff := cmp.Diff(want, listed, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".ETag" }, cmp.Ignore())); diff != "" {
				t.Fatalf("ListParts (-want +got):\n%s", diff)
			}
			for _, p := range listed {
				if p.ETag == "" {
					t.Errorf("part %d has no ETag", p.PartNumber)
				}
			}
			if err := e.CompleteMultipartUpload(ctx(t), up, listed); err != nil {
				t.Fatalf("CompleteMultipartUpload = %v", err)
			}
			whole := bytes.Join(parts, nil)
			got, info := read(t, e, up.Ref)
			if !bytes.Equal(got, whole) || info.ContentType != "application/pdf" {
				t.Errorf("object = %d bytes of %s, want the %d bytes of the parts as application/pdf", len(got), info.ContentType, len(whole))
			}
			if err := blob.Verify(ctx(t), e, up.Ref, int64(len(whole)), sha256.Sum256(whole)); err != nil {
				t.Errorf("Verify = %v", err)
			}
		}},
		{"ListParts pages through every part in part-number order", func(t *testing.T, e *env) {
			up := create(t, e)
			for _, n := range []int32{5, 1, 3, 2, 4} {
				uploadPart(t, e, up, n, Pattern(100+int(n), byte(n)))
			}
			listed, err := e.ListParts(ctx(t), up)
			if err != nil {
				t.Fatalf("ListParts = %v", err)
			}
			if got, want := sizes(listed), "1:101 2:102 3:103 4:104 5:105 "; got != want {
				t.Errorf("ListParts = %s, want %s", got, want)
			}
		}},
		{"A part PUT again replaces the first", func(t *testing.T, e *env) {
			up := create(t, e)
			uploadPart(t, e, up, 1, Pattern(10, 1))
			uploadPart(t, e, up, 1, Pattern(20, 2))
			listed, err := e.ListParts(ctx(t), up)
			if err != nil {
				t.Fatalf("ListParts = %v", err)
			}
			if len(listed) != 1 || listed[0].Size != 20 || listed[0].ChecksumSHA256 != ChecksumSHA256(Pattern(20, 2)) {
				t.Errorf("ListParts = %+v, want the second part alone", listed)
			}
		}},
		{"Eight goroutines PUT eight parts at once and all are listed", func(t *testing.T, e *env) {
			up := create(t, e)
			var wg sync.WaitGroup
			for n := int32(1); n <= 8; n++ {
				req := presignPart(t, e, up, n, Pattern(1000, byte(n)))
				wg.Go(func() {
					if status, code := Send(t, req.Method, req.URL, req.Header, Pattern(1000, byte(n))); status != http.StatusOK {
						t.Errorf("PUT part %d = %d %s", n, status, code)
					}
				})
			}
			wg.Wait()
			listed, err := e.ListParts(ctx(t), up)
			if err != nil || len(listed) != 8 {
				t.Fatalf("ListParts = %s, %v; want 8 parts", sizes(listed), err)
			}
		}},
		{"A 4 MiB middle part makes CompleteMultipartUpload ErrInvalid (EntityTooSmall)", func(t *testing.T, e *env) {
			up := create(t, e)
			for i, size := range []int{blob.MinPartSize, 4 << 20, 1000} {
				uploadPart(t, e, up, int32(i+1), Pattern(size, byte(i)))
			}
			listed, err := e.ListParts(ctx(t), up)
			if err != nil {
				t.Fatalf("ListParts = %v", err)
			}
			err = e.CompleteMultipartUpload(ctx(t), up, listed)
			wantErr(t, "CompleteMultipartUpload", err, blob.ErrInvalid)
			if code := S3Code(err); code != "EntityTooSmall" {
				t.Errorf("S3 code = %q, want EntityTooSmall", code)
			}
			if _, err := e.HeadObject(ctx(t), up.Ref); !errors.Is(err, blob.ErrNotFound) {
				t.Errorf("HeadObject after the refusal = %v, want ErrNotFound", err)
			}
			if _, err := e.ListParts(ctx(t), up); err != nil {
				t.Errorf("ListParts after the refusal = %v, want the upload still open", err)
			}
		}},
		{"A small last part, and a single small part, complete", func(t *testing.T, e *env) {
			up := create(t, e)
			uploadPart(t, e, up, 1, []byte("only"))
			listed, err := e.ListParts(ctx(t), up)
			if err != nil {
				t.Fatalf("ListParts = %v", err)
			}
			if err := e.CompleteMultipartUpload(ctx(t), up, listed); err != nil {
				t.Fatalf("CompleteMultipartUpload = %v", err)
			}
		}},
		{"CompleteMultipartUpload with a changed part checksum, ETag or order is ErrInvalid", func(t *testing.T, e *env) {
			up := create(t, e)
			uploadPart(t, e, up, 1, Pattern(blob.MinPartSize, 1))
			uploadPart(t, e, up, 2, Pattern(10, 2))
			listed, err := e.ListParts(ctx(t), up)
			if err != nil {
				t.Fatalf("ListParts = %v", err)
			}
			bad := map[string]func([]blob.Part){
				"a checksum":   func(p []blob.Part) { p[1].ChecksumSHA256 = ChecksumSHA256([]byte("other")) },
				"an ETag":      func(p []blob.Part) { p[0].ETag = `"00000000000000000000000000000000"` },
				"the order":    func(p []blob.Part) { p[0], p[1] = p[1], p[0] },
				"a part added": func(p []blob.Part) { p[1].PartNumber = 3 },
			}
			for name, edit := range bad {
				parts := slices.Clone(listed)
				edit(parts)
				if err := e.CompleteMultipartUpload(ctx(t), up, parts); !errors.Is(err, blob.ErrInvalid) {
					t.Errorf("CompleteMultipartUpload with %s changed = %v, want ErrInvalid", name, err)
				}
			}
			if err := e.CompleteMultipartUpload(ctx(t), up, listed); err != nil {
				t.Errorf("CompleteMultipartUpload with the listed parts = %v, want nil", err)
			}
		}},
		{"A completed upload is gone: completing, listing, aborting again or PUTting a part is not found", func(t *testing.T, e *env) {
			up := create(t, e)
			uploadPart(t, e, up, 1, []byte("x"))
			listed, err := e.ListParts(ctx(t), up)
			if err != nil {
				t.Fatalf("ListParts = %v", err)
			}
			late := presignPart(t, e, up, 2, []byte("late"))
			if err := e.CompleteMultipartUpload(ctx(t), up, listed); err != nil {
				t.Fatalf("CompleteMultipartUpload = %v", err)
			}
			wantErr(t, "second CompleteMultipartUpload", e.CompleteMultipartUpload(ctx(t), up, listed), blob.ErrNotFound)
			_, err = e.ListParts(ctx(t), up)
			wantErr(t, "ListParts", err, blob.ErrNotFound)
			wantErr(t, "AbortMultipartUpload", e.AbortMultipartUpload(ctx(t), up), blob.ErrNotFound)
			if status, code := Send(t, late.Method, late.URL, late.Header, []byte("late")); status != http.StatusNotFound || code != "NoSuchUpload" {
				t.Errorf("PUT of a part = %d %s, want 404 NoSuchUpload", status, code)
			}
		}},
		{"Sixteen goroutines completing one upload: one succeeds, the rest are ErrNotFound", func(t *testing.T, e *env) {
			up := create(t, e)
			uploadPart(t, e, up, 1, []byte("x"))
			listed, err := e.ListParts(ctx(t), up)
			if err != nil {
				t.Fatalf("ListParts = %v", err)
			}
			var wg sync.WaitGroup
			errs := make([]error, 16)
			for i := range errs {
				wg.Go(func() { errs[i] = e.CompleteMultipartUpload(ctx(t), up, listed) })
			}
			wg.Wait()
			ok := 0
			for i, err := range errs {
				switch {
				case err == nil:
					ok++
				case !errors.Is(err, blob.ErrNotFound):
					t.Errorf("CompleteMultipartUpload %d = %v, want nil or ErrNotFound", i, err)
				}
			}
			if ok != 1 {
				t.Errorf("%d CompleteMultipartUpload calls succeeded, want 1", ok)
			}
		}},
		{"AbortMultipartUpload discards the upload and its parts", func(t *testing.T, e *env) {
			up := create(t, e)
			uploadPart(t, e, up, 1, []byte("x"))
			if err := e.AbortMultipartUpload(ctx(t), up); err != nil {
				t.Fatalf("AbortMultipartUpload = %v", err)
			}
			_, err := e.ListParts(ctx(t), up)
			wantErr(t, "ListParts", err, blob.ErrNotFound)
			wantErr(t, "second AbortMultipartUpload", e.AbortMultipartUpload(ctx(t), up), blob.ErrNotFound)
			if _, err := e.HeadObject(ctx(t), up.Ref); !errors.Is(err, blob.ErrNotFound) {
				t.Errorf("HeadObject = %v, want ErrNotFound", err)
			}
		}},
		{"An unknown upload ID, or one used with another key, is ErrNotFound", func(t *testing.T, e *env) {
			up := create(t, e)
			for _, other := range []blob.Upload{
				{Ref: up.Ref, UploadID: "not-an-upload"},
				{Ref: blob.Incoming(blob.NewID()), UploadID: up.UploadID},
			} {
				_, err := e.ListParts(ctx(t), other)
				wantErr(t, "ListParts", err, blob.ErrNotFound)
				wantErr(t, "CompleteMultipartUpload", e.CompleteMultipartUpload(ctx(t), other, []blob.Part{{PartNumber: 1, ETag: `"x"`}}), blob.ErrNotFound)
			}
		}},
		{"PresignUploadPart refuses a bad part with ErrInvalid", func(t *testing.T, e *env) {
			up := create(t, e)
			good := blob.PartRequest{PartNumber: 1, Size: 10, ChecksumSHA256: ChecksumSHA256([]byte("x")), Expires: time.Minute}
			for name, edit := range map[string]func(*blob.PartRequest){
				"part number 0":        func(p *blob.PartRequest) { p.PartNumber = 0 },
				"part number 10001":    func(p *blob.PartRequest) { p.PartNumber = 10001 },
				"size 0":               func(p *blob.PartRequest) { p.Size = 0 },
				"a hex checksum":       func(p *blob.PartRequest) { p.ChecksumSHA256 = strings.Repeat("ab", 32) },
				"a short checksum":     func(p *blob.PartRequest) { p.ChecksumSHA256 = "AAAA" },
				"no checksum":          func(p *blob.PartRequest) { p.ChecksumSHA256 = "" },
				"no life":              func(p *blob.PartRequest) { p.Expires = 0 },
				"a life over 7 days":   func(p *blob.PartRequest) { p.Expires = 7*24*time.Hour + time.Second },
				"a negative life":      func(p *blob.PartRequest) { p.Expires = -time.Minute },
				"a part over 5 GiB":    func(p *blob.PartRequest) { p.Size = 5<<30 + 1 },
				"a negative part size": func(p *blob.PartRequest) { p.Size = -1 },
			} {
				p := good
				edit(&p)
				if _, err := e.PresignUploadPart(ctx(t), up, p); !errors.Is(err, blob.ErrInvalid) {
					t.Errorf("PresignUploadPart(%s) = %v, want ErrInvalid", name, err)
				}
			}
			if _, err := e.PresignUploadPart(ctx(t), blob.Upload{Ref: up.Ref}, good); !errors.Is(err, blob.ErrInvalid) {
				t.Errorf("PresignUploadPart without an upload ID = %v, want ErrInvalid", err)
			}
		}},
	}
}

// partURLTests hold the part URLs to docs/contracts.md §5 and S3's refusals of
// everything but the exact signed request (issue 16, "Faults").
func partURLTests() []test {
	return []test{
		{"Every part URL signs x-amz-checksum-sha256 as a header, has no checksum in its query, and returns exactly the signed non-host headers", func(t *testing.T, e *env) {
			up := create(t, e)
			for n := int32(1); n <= 3; n++ {
				body := Pattern(int(n)*1000, byte(n))
				req := presignPart(t, e, up, n, body)
				u, err := url.Parse(req.URL)
				if err != nil {
					t.Fatalf("parse URL: %v", err)
				}
				q := u.Query()
				signed := strings.Split(q.Get("X-Amz-SignedHeaders"), ";")
				if !slices.Contains(signed, "x-amz-checksum-sha256") {
					t.Errorf("X-Amz-SignedHeaders = %v, want x-amz-checksum-sha256 among them", signed)
				}
				for k := range q {
					if strings.Contains(strings.ToLower(k), "checksum") {
						t.Errorf("query parameter %s: a checksum must be a header, not hoisted into the query", k)
					}
				}
				var returned []string
				for k, vs := range req.Header {
					returned = append(returned, strings.ToLower(k))
					if len(vs) != 1 {
						t.Errorf("header %s has %d values, want 1", k, len(vs))
					}
				}
				nonHost := slices.DeleteFunc(slices.Clone(signed), func(h string) bool { return h == "host" })
				slices.Sort(returned)
				if diff := cmp.Diff(nonHost, returned); diff != "" {
					t.Errorf("returned headers vs signed non-host headers (-signed +returned):\n%s", diff)
				}
				if got, want := req.Header.Get("X-Amz-Checksum-Sha256"), ChecksumSHA256(body); got != want {
					t.Errorf("x-amz-checksum-sha256 = %q, want the part's %q (the upload's algorithm, SHA256)", got, want)
				}
				if got := req.Header.Get("Content-Length"); got != strconv.Itoa(len(body)) {
					t.Errorf("Content-Length = %q, want %d", got, len(body))
				}
				if req.Method != http.MethodPut {
					t.Errorf("Method = %q, want PUT", req.Method)
				}
				if got, want := req.Expires, e.clock.Now().Truncate(time.Second).Add(30*time.Minute); !got.Equal(want) {
					t.Errorf("Expires = %v, want %v", got, want)
				}
				if got := q.Get("X-Amz-Expires"); got != "1800" {
					t.Errorf("X-Amz-Expires = %q, want 1800", got)
				}
			}
		}},
		{"A part URL used other than as signed is refused 403 and stores nothing", func(t *testing.T, e *env) {
			up := create(t, e)
			body := Pattern(2000, 1)
			other := Pattern(2000, 2)
			for _, c := range []struct {
				name   string
				send   func(req blob.PresignedRequest) (int, string)
				before func()
			}{
				{name: "a changed signed header", send: func(req blob.PresignedRequest) (int, string) {
					h := req.Header.Clone()
					h.Set("X-Amz-Checksum-Sha256", ChecksumSHA256(other))
					return Send(t, req.Method, req.URL, h, other)
				}},
				{name: "an extra unsigned x-amz-meta-* header", send: func(req blob.PresignedRequest) (int, string) {
					h := req.Header.Clone()
					h.Set("X-Amz-Meta-Matter", "m_alvarez")
					return Send(t, req.Method, req.URL, h, body)
				}},
				{name: "the checksum header left out", send: func(req blob.PresignedRequest) (int, string) {
					h := req.Header.Clone()
					h.Del("X-Amz-Checksum-Sha256")
					return Send(t, req.Method, req.URL, h, body)
				}},
				{name: "an edited query (another part number)", send: func(req blob.PresignedRequest) (int, string) {
					return Send(t, req.Method, strings.Replace(req.URL, "partNumber=1", "partNumber=2", 1), req.Header, body)
				}},
				{name: "an edited query (a longer life)", send: func(req blob.PresignedRequest) (int, string) {
					return Send(t, req.Method, strings.Replace(req.URL, "X-Amz-Expires=1800", "X-Amz-Expires=3600", 1), req.Header, body)
				}},
				{name: "another method", send: func(req blob.PresignedRequest) (int, string) {
					return Send(t, http.MethodPost, req.URL, req.Header, body)
				}},
				{name: "an expired URL (the clock past X-Amz-Expires)", before: func() { e.clock.Advance(30*time.Minute + time.Second) },
					send: func(req blob.PresignedRequest) (int, string) { return Send(t, req.Method, req.URL, req.Header, body) }},
			} {
				req := presignPart(t, e, up, 1, body)
				if c.before != nil {
					c.before()
				}
				if status, code := c.send(req); status != http.StatusForbidden {
					t.Errorf("%s: status %d %s, want 403", c.name, status, code)
				}
			}
			listed, err := e.ListParts(ctx(t), up)
			if err != nil || len(listed) != 0 {
				t.Errorf("ListParts = %s, %v; want no part stored", sizes(listed), err)
			}
		}},
		{"An unsigned x-amz-* header is refused as S3 does: AccessDenied", func(t *testing.T, e *env) {
			up := create(t, e)
			body := Pattern(100, 1)
			req := presignPart(t, e, up, 1, body)
			h := req.Header.Clone()
			h.Set("X-Amz-Meta-Filename", "contract.pdf")
			if status, code := Send(t, req.Method, req.URL, h, body); status != http.StatusForbidden || code != "AccessDenied" {
				t.Errorf("PUT = %d %s, want 403 AccessDenied", status, code)
			}
		}},
		{"The genuine headers with one body byte flipped are refused 400 BadDigest", func(t *testing.T, e *env) {
			up := create(t, e)
			body := Pattern(3000, 1)
			req := presignPart(t, e, up, 1, body)
			flipped := slices.Clone(body)
			flipped[1500] ^= 0x01
			if status, code := Send(t, req.Method, req.URL, req.Header, flipped); status != http.StatusBadRequest || code != "BadDigest" {
				t.Errorf("PUT = %d %s, want 400 BadDigest", status, code)
			}
			listed, err := e.ListParts(ctx(t), up)
			if err != nil || len(listed) != 0 {
				t.Errorf("ListParts = %s, %v; want no part stored", sizes(listed), err)
			}
			// The same URL still takes the genuine body.
			if status, code := Send(t, req.Method, req.URL, req.Header, body); status != http.StatusOK {
				t.Errorf("PUT of the genuine body = %d %s, want 200", status, code)
			}
		}},
		{"A plain net/http PUT with the returned headers, as curl sends it, is 200 until the URL expires", func(t *testing.T, e *env) {
			up := create(t, e)
			body := Pattern(5000, 1)
			req := presignPart(t, e, up, 1, body)
			e.clock.Advance(req.Expires.Sub(e.clock.Now()))
			if status, code := Send(t, req.Method, req.URL, req.Header, body); status != http.StatusOK {
				t.Errorf("PUT at the last second = %d %s, want 200", status, code)
			}
			e.clock.Advance(time.Second)
			if status, code := Send(t, req.Method, req.URL, req.Header, body); status != http.StatusForbidden || code != "AccessDenied" {
				t.Errorf("PUT a second later = %d %s, want 403 AccessDenied", status, code)
			}
		}},
		{"A body of another length than the signed Content-Length is refused 403", func(t *testing.T, e *env) {
			up := create(t, e)
			body := Pattern(100, 1)
			req := presignPart(t, e, up, 1, body)
			if status, code := Send(t, req.Method, req.URL, req.Header, append(body, 'x')); status != http.StatusForbidden {
				t.Errorf("PUT = %d %s, want 403", status, code)
			}
		}},
	}
}

func presignerTests() []test {
	return []test{
		{"A presigned GET serves the object as an attachment with its filename until it expires", func(t *testing.T, e *env) {
			ref := blob.Stored(blob.NewID())
			body := Pattern(4096, 9)
			put(t, e, ref, body, "application/pdf")
			for _, name := range []string{"Alvarez deposition.pdf", "Résumé — exhibit 4.pdf"} {
				req, err := e.PresignGetObject(ctx(t), ref, blob.GetURLOptions{Filename: name})
				if err != nil {
					t.Fatalf("PresignGetObject = %v", err)
				}
				if req.Method != http.MethodGet || len(req.Header) != 0 {
					t.Errorf("request = %s with headers %v, want a GET needing none", req.Method, req.Header)
				}
				if got, want := req.Expires, e.clock.Now().Truncate(time.Second).Add(blob.DownloadURLExpiry); !got.Equal(want) {
					t.Errorf("Expires = %v, want %v", got, want)
				}
				resp, err := http.Get(req.URL)
				if err != nil {
					t.Fatalf("GET: %v", err)
				}
				var got bytes.Buffer
				_, _ = got.ReadFrom(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !bytes.Equal(got.Bytes(), body) {
					t.Fatalf("GET = %d with %d bytes, want 200 with the %d bytes", resp.StatusCode, got.Len(), len(body))
				}
				disp, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition"))
				if err != nil || disp != "attachment" || params["filename"] != name {
					t.Errorf("Content-Disposition = %q: %s %v %v, want attachment with filename %q", resp.Header.Get("Content-Disposition"), disp, params, err, name)
				}
			}
			req, err := e.PresignGetObject(ctx(t), ref, blob.GetURLOptions{})
			if err != nil {
				t.Fatalf("PresignGetObject = %v", err)
			}
			e.clock.Advance(blob.DownloadURLExpiry + time.Second)
			if status, code := Send(t, http.MethodGet, req.URL, nil, nil); status != http.StatusForbidden {
				t.Errorf("GET after expiry = %d %s, want 403", status, code)
			}
		}},
		{"A presigned GET can override the content type and answers 404 for an absent object", func(t *testing.T, e *env) {
			ref := blob.Stored(blob.NewID())
			put(t, e, ref, []byte("x"), "application/octet-stream")
			req, err := e.PresignGetObject(ctx(t), ref, blob.GetURLOptions{ContentType: "text/plain"})
			if err != nil {
				t.Fatalf("PresignGetObject = %v", err)
			}
			resp, err := http.Get(req.URL)
			if err != nil {
				t.Fatalf("GET: %v", err)
			}
			resp.Body.Close()
			if got := resp.Header.Get("Content-Type"); got != "text/plain" {
				t.Errorf("Content-Type = %q, want text/plain", got)
			}
			absent, err := e.PresignGetObject(ctx(t), blob.Stored(blob.NewID()), blob.GetURLOptions{})
			if err != nil {
				t.Fatalf("PresignGetObject = %v", err)
			}
			if status, code := Send(t, http.MethodGet, absent.URL, nil, nil); status != http.StatusNotFound || code != "NoSuchKey" {
				t.Errorf("GET of an absent object = %d %s, want 404 NoSuchKey", status, code)
			}
		}},
		{"PresignGetObject refuses a life under a second or over 7 days", func(t *testing.T, e *env) {
			for _, life := range []time.Duration{time.Millisecond, -time.Second, 7*24*time.Hour + time.Second} {
				_, err := e.PresignGetObject(ctx(t), blob.Stored(blob.NewID()), blob.GetURLOptions{Expires: life})
				if !errors.Is(err, blob.ErrInvalid) {
					t.Errorf("PresignGetObject(life %v) = %v, want ErrInvalid", life, err)
				}
			}
		}},
	}
}
