package blob_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"time"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/s3local"
)

// The upload lane's use of the port (docs/contracts.md §5): start a multipart
// upload, presign each part with its SHA-256 as a signed header, let the
// agent PUT the bytes with nothing but the URL and the headers, then list
// the parts S3 holds, complete, verify the whole object, and copy it to
// verified/, the prefix the scanner watches.
func Example() {
	ctx := context.Background()
	srv, err := s3local.New(s3local.Options{})
	if err != nil {
		panic(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	store, err := blob.New(s3local.NewClient(hs.URL), s3local.Buckets, blob.Options{})
	if err != nil {
		panic(err)
	}

	file := bytes.Repeat([]byte("deposition transcript, page after page. "), 200_000) // 8 MB
	parts := [][]byte{file[:blob.MinPartSize], file[blob.MinPartSize:]}

	id := blob.NewID()
	up, err := store.CreateMultipartUpload(ctx, blob.Incoming(id), blob.CreateOptions{ContentType: "application/pdf"})
	if err != nil {
		panic(err)
	}
	for i, p := range parts {
		sum := sha256.Sum256(p)
		req, err := store.PresignUploadPart(ctx, up, blob.PartRequest{
			PartNumber:     int32(i + 1),
			Size:           int64(len(p)),
			ChecksumSHA256: base64.StdEncoding.EncodeToString(sum[:]),
			Expires:        30 * time.Minute,
		})
		if err != nil {
			panic(err)
		}
		// What the agent does, e.g. with curl -X PUT -H ... --data-binary @part.
		put, _ := http.NewRequest(req.Method, req.URL, bytes.NewReader(p))
		for k, vs := range req.Header {
			put.Header[k] = vs
		}
		resp, err := http.DefaultClient.Do(put)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Printf("part %d: %s, signed headers %v\n", i+1, resp.Status, keys(req.Header))
	}

	listed, err := store.ListParts(ctx, up)
	if err != nil {
		panic(err)
	}
	if err := store.CompleteMultipartUpload(ctx, up, listed); err != nil {
		panic(err)
	}
	err = blob.Verify(ctx, store, up.Ref, int64(len(file)), sha256.Sum256(file))
	fmt.Println("verified:", err == nil)
	if err := store.CopyObject(ctx, up.Ref, blob.Verified(id)); err != nil {
		panic(err)
	}
	if err := store.DeleteObject(ctx, up.Ref); err != nil {
		panic(err)
	}
	info, err := store.HeadObject(ctx, blob.Verified(id))
	if err != nil {
		panic(err)
	}
	fmt.Println("awaiting the scan:", info.Size, "bytes of", info.ContentType)
	// Output:
	// part 1: 200 OK, signed headers [Content-Length X-Amz-Checksum-Sha256]
	// part 2: 200 OK, signed headers [Content-Length X-Amz-Checksum-Sha256]
	// verified: true
	// awaiting the scan: 8000000 bytes of application/pdf
}

func keys(h http.Header) []string {
	var ks []string
	for k := range h {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
