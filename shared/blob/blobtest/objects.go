package blobtest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/blob"
)

func objectTests() []test {
	return []test{
		{"PutObject then GetObject and HeadObject return the bytes, size and content type", func(t *testing.T, e *env) {
			ref := blob.Stored(blob.NewID())
			body := Pattern(100_000, 1)
			put(t, e, ref, body, "application/pdf")
			got, info := read(t, e, ref)
			if !bytes.Equal(got, body) {
				t.Fatalf("GetObject body: %d bytes, differing from the %d put", len(got), len(body))
			}
			head, err := e.HeadObject(ctx(t), ref)
			if err != nil {
				t.Fatalf("HeadObject = %v", err)
			}
			for _, i := range []blob.ObjectInfo{info, head} {
				if i.Size != int64(len(body)) || i.ContentType != "application/pdf" || i.ETag == "" || i.LastModified.IsZero() {
					t.Errorf("info = %+v, want size %d, application/pdf, an ETag and a time", i, len(body))
				}
			}
		}},
		{"PutObject without a content type stores application/octet-stream", func(t *testing.T, e *env) {
			ref := blob.Stored(blob.NewID())
			put(t, e, ref, []byte("x"), "")
			if _, info := read(t, e, ref); info.ContentType != "application/octet-stream" {
				t.Errorf("ContentType = %q, want application/octet-stream", info.ContentType)
			}
		}},
		{"PutObject of an empty body stores an empty object", func(t *testing.T, e *env) {
			ref := blob.Stored(blob.NewID())
			put(t, e, ref, nil, "")
			if got, info := read(t, e, ref); len(got) != 0 || info.Size != 0 {
				t.Errorf("GetObject = %d bytes, size %d; want 0", len(got), info.Size)
			}
		}},
		{"PutObject on an existing key is ErrExists and keeps the first object", func(t *testing.T, e *env) {
			ref := blob.Stored(blob.NewID())
			put(t, e, ref, []byte("first"), "")
			err := e.PutObject(ctx(t), ref, bytes.NewReader([]byte("second")), blob.PutOptions{})
			wantErr(t, "second PutObject", err, blob.ErrExists)
			if got, _ := read(t, e, ref); string(got) != "first" {
				t.Errorf("GetObject = %q, want %q", got, "first")
			}
		}},
		{"PutObject sends the body from the reader's position", func(t *testing.T, e *env) {
			ref := blob.Stored(blob.NewID())
			r := bytes.NewReader([]byte("skip:keep"))
			if _, err := r.Seek(5, 0); err != nil {
				t.Fatal(err)
			}
			if err := e.PutObject(ctx(t), ref, r, blob.PutOptions{}); err != nil {
				t.Fatalf("PutObject = %v", err)
			}
			if got, _ := read(t, e, ref); string(got) != "keep" {
				t.Errorf("GetObject = %q, want %q", got, "keep")
			}
		}},
		{"Sixteen goroutines putting one key: exactly one succeeds, the rest are ErrExists", func(t *testing.T, e *env) {
			ref := blob.Stored(blob.NewID())
			var wg sync.WaitGroup
			errs := make([]error, 16)
			for i := range errs {
				wg.Go(func() { errs[i] = e.PutObject(ctx(t), ref, bytes.NewReader(Pattern(1000, byte(i))), blob.PutOptions{}) })
			}
			wg.Wait()
			won := -1
			for i, err := range errs {
				switch {
				case err == nil && won >= 0:
					t.Fatalf("PutObject %d and %d both succeeded", won, i)
				case err == nil:
					won = i
				case !errors.Is(err, blob.ErrExists):
					t.Fatalf("PutObject %d = %v, want nil or ErrExists", i, err)
				}
			}
			if won < 0 {
				t.Fatal("no PutObject succeeded")
			}
			if got, _ := read(t, e, ref); !bytes.Equal(got, Pattern(1000, byte(won))) {
				t.Errorf("GetObject is not the winner's body")
			}
		}},
		{"GetObject and HeadObject of an absent key are ErrNotFound", func(t *testing.T, e *env) {
			ref := blob.Stored(blob.NewID())
			_, err := e.GetObject(ctx(t), ref)
			wantErr(t, "GetObject", err, blob.ErrNotFound)
			_, err = e.HeadObject(ctx(t), ref)
			wantErr(t, "HeadObject", err, blob.ErrNotFound)
		}},
		{"GetObject streams: a reader closed early leaves the object whole", func(t *testing.T, e *env) {
			ref := blob.Stored(blob.NewID())
			body := Pattern(3<<20, 2)
			put(t, e, ref, body, "")
			obj, err := e.GetObject(ctx(t), ref)
			if err != nil {
				t.Fatalf("GetObject = %v", err)
			}
			first := make([]byte, 10)
			if _, err := obj.Body.Read(first); err != nil {
				t.Fatalf("Read = %v", err)
			}
			if err := obj.Body.Close(); err != nil {
				t.Fatalf("Close = %v", err)
			}
			if got, _ := read(t, e, ref); !bytes.Equal(got, body) {
				t.Errorf("second GetObject differs")
			}
		}},
		{"CopyObject copies the content, content type and tags, and keeps the source", func(t *testing.T, e *env) {
			id := blob.NewID()
			src, dst := blob.Incoming(id), blob.Verified(id)
			body := Pattern(70_000, 3)
			put(t, e, src, body, "text/plain")
			tags := map[string]string{"scan": "pending"}
			if err := e.PutObjectTagging(ctx(t), src, tags); err != nil {
				t.Fatalf("PutObjectTagging = %v", err)
			}
			if err := e.CopyObject(ctx(t), src, dst); err != nil {
				t.Fatalf("CopyObject = %v", err)
			}
			got, info := read(t, e, dst)
			if !bytes.Equal(got, body) || info.ContentType != "text/plain" {
				t.Errorf("copy = %d bytes of %s, want the %d bytes of text/plain", len(got), info.ContentType, len(body))
			}
			gotTags, err := e.GetObjectTagging(ctx(t), dst)
			if err != nil {
				t.Fatalf("GetObjectTagging = %v", err)
			}
			if diff := cmp.Diff(tags, gotTags); diff != "" {
				t.Errorf("copy's tags (-want +got):\n%s", diff)
			}
			if got, _ := read(t, e, src); !bytes.Equal(got, body) {
				t.Errorf("source changed by the copy")
			}
		}},
		{"CopyObject across buckets copies the object", func(t *testing.T, e *env) {
			id := blob.NewID()
			src, dst := blob.Verified(id), blob.Stored(blob.NewID())
			put(t, e, src, []byte("to the record"), "")
			if err := e.CopyObject(ctx(t), src, dst); err != nil {
				t.Fatalf("CopyObject = %v", err)
			}
			if got, _ := read(t, e, dst); string(got) != "to the record" {
				t.Errorf("copy = %q", got)
			}
		}},
		{"CopyObject of an absent source is ErrNotFound", func(t *testing.T, e *env) {
			err := e.CopyObject(ctx(t), blob.Incoming(blob.NewID()), blob.Verified(blob.NewID()))
			wantErr(t, "CopyObject", err, blob.ErrNotFound)
		}},
		{"DeleteObject removes the object, and deleting an absent one succeeds", func(t *testing.T, e *env) {
			ref := blob.Stored(blob.NewID())
			put(t, e, ref, []byte("x"), "")
			if err := e.DeleteObject(ctx(t), ref); err != nil {
				t.Fatalf("DeleteObject = %v", err)
			}
			_, err := e.HeadObject(ctx(t), ref)
			wantErr(t, "HeadObject after delete", err, blob.ErrNotFound)
			if err := e.DeleteObject(ctx(t), ref); err != nil {
				t.Fatalf("second DeleteObject = %v, want nil", err)
			}
		}},
	}
}

func keyTests() []test {
	id := blob.NewID()
	bad := []struct {
		name string
		ref  blob.Ref
	}{
		{"a record key in the staging bucket", blob.Ref{Bucket: blob.Staging, Key: blob.PrefixObject + string(id)}},
		{"a staging key in the record bucket", blob.Ref{Bucket: blob.Record, Key: blob.PrefixIncoming + string(id)}},
		{"a key naming a file", blob.Ref{Bucket: blob.Staging, Key: blob.PrefixIncoming + "contract.pdf"}},
		{"upper-case hex", blob.Ref{Bucket: blob.Record, Key: blob.PrefixObject + "ABCDEF0123456789ABCDEF0123456789"}},
		{"a short ID", blob.Ref{Bucket: blob.Record, Key: blob.PrefixObject + string(id)[:31]}},
		{"a nested key", blob.Ref{Bucket: blob.Record, Key: blob.PrefixObject + string(id) + "/x"}},
		{"no prefix", blob.Ref{Bucket: blob.Record, Key: string(id)}},
		{"an empty key", blob.Ref{Bucket: blob.Record}},
		{"an unknown bucket", blob.Ref{Bucket: 9, Key: blob.PrefixObject + string(id)}},
	}
	var tests []test
	for _, b := range bad {
		tests = append(tests, test{"every operation refuses " + b.name + " with ErrInvalid", func(t *testing.T, e *env) {
			c := ctx(t)
			good := blob.Stored(blob.NewID())
			_, getErr := e.GetObject(c, b.ref)
			_, headErr := e.HeadObject(c, b.ref)
			_, tagErr := e.GetObjectTagging(c, b.ref)
			_, createErr := e.CreateMultipartUpload(c, b.ref, blob.CreateOptions{})
			_, urlErr := e.PresignGetObject(c, b.ref, blob.GetURLOptions{})
			_, listErr := e.ListParts(c, blob.Upload{Ref: b.ref, UploadID: "u"})
			for op, err := range map[string]error{
				"PutObject":               e.PutObject(c, b.ref, bytes.NewReader(nil), blob.PutOptions{}),
				"GetObject":               getErr,
				"HeadObject":              headErr,
				"CopyObject from":         e.CopyObject(c, b.ref, good),
				"CopyObject to":           e.CopyObject(c, good, b.ref),
				"DeleteObject":            e.DeleteObject(c, b.ref),
				"PutObjectTagging":        e.PutObjectTagging(c, b.ref, nil),
				"GetObjectTagging":        tagErr,
				"CreateMultipartUpload":   createErr,
				"ListParts":               listErr,
				"AbortMultipartUpload":    e.AbortMultipartUpload(c, blob.Upload{Ref: b.ref, UploadID: "u"}),
				"CompleteMultipartUpload": e.CompleteMultipartUpload(c, blob.Upload{Ref: b.ref, UploadID: "u"}, []blob.Part{{PartNumber: 1}}),
				"PresignGetObject":        urlErr,
			} {
				if !errors.Is(err, blob.ErrInvalid) {
					t.Errorf("%s(%s) = %v, want ErrInvalid", op, b.ref, err)
				}
			}
		}})
	}
	return tests
}

func taggingTests() []test {
	return []test{
		{"PutObjectTagging replaces the tag set and GetObjectTagging reads it", func(t *testing.T, e *env) {
			ref := blob.Verified(blob.NewID())
			put(t, e, ref, []byte("x"), "")
			got, err := e.GetObjectTagging(ctx(t), ref)
			if err != nil || got == nil || len(got) != 0 {
				t.Fatalf("GetObjectTagging of an untagged object = %v, %v; want an empty map", got, err)
			}
			first := map[string]string{"GuardDutyMalwareScanStatus": "NO_THREATS_FOUND", "empty": ""}
			second := map[string]string{"b": "2"}
			for _, tags := range []map[string]string{first, second} {
				if err := e.PutObjectTagging(ctx(t), ref, tags); err != nil {
					t.Fatalf("PutObjectTagging(%v) = %v", tags, err)
				}
				got, err := e.GetObjectTagging(ctx(t), ref)
				if err != nil {
					t.Fatalf("GetObjectTagging = %v", err)
				}
				if diff := cmp.Diff(tags, got); diff != "" {
					t.Errorf("tags (-want +got):\n%s", diff)
				}
			}
		}},
		{"Tagging an absent object is ErrNotFound", func(t *testing.T, e *env) {
			ref := blob.Verified(blob.NewID())
			wantErr(t, "PutObjectTagging", e.PutObjectTagging(ctx(t), ref, map[string]string{"a": "b"}), blob.ErrNotFound)
			_, err := e.GetObjectTagging(ctx(t), ref)
			wantErr(t, "GetObjectTagging", err, blob.ErrNotFound)
		}},
		{"More than ten tags, an empty key or a long value is ErrInvalid", func(t *testing.T, e *env) {
			ref := blob.Verified(blob.NewID())
			put(t, e, ref, []byte("x"), "")
			eleven := map[string]string{}
			for i := range 11 {
				eleven[string(rune('a'+i))] = "v"
			}
			for name, tags := range map[string]map[string]string{
				"eleven tags":  eleven,
				"an empty key": {"": "v"},
				"a long value": {"k": string(bytes.Repeat([]byte("v"), 257))},
				"a long key":   {string(bytes.Repeat([]byte("k"), 129)): "v"},
			} {
				if err := e.PutObjectTagging(ctx(t), ref, tags); !errors.Is(err, blob.ErrInvalid) {
					t.Errorf("PutObjectTagging(%s) = %v, want ErrInvalid", name, err)
				}
			}
		}},
		{"A deleted object's tags do not pass to a new object at its key", func(t *testing.T, e *env) {
			ref := blob.Verified(blob.NewID())
			put(t, e, ref, []byte("x"), "")
			if err := e.PutObjectTagging(ctx(t), ref, map[string]string{"a": "b"}); err != nil {
				t.Fatalf("PutObjectTagging = %v", err)
			}
			if err := e.DeleteObject(ctx(t), ref); err != nil {
				t.Fatalf("DeleteObject = %v", err)
			}
			put(t, e, ref, []byte("y"), "")
			got, err := e.GetObjectTagging(ctx(t), ref)
			if err != nil || len(got) != 0 {
				t.Errorf("GetObjectTagging of the new object = %v, %v; want no tags", got, err)
			}
		}},
	}
}

func verifyTests() []test {
	return []test{
		{"Verify accepts the exact bytes and refuses another size or digest with ErrMismatch", func(t *testing.T, e *env) {
			ref := blob.Incoming(blob.NewID())
			body := Pattern(blob.VerifyBufferSize*2+7, 4)
			put(t, e, ref, body, "")
			sum := sha256.Sum256(body)
			if err := blob.Verify(ctx(t), e, ref, int64(len(body)), sum); err != nil {
				t.Fatalf("Verify(the object's size and digest) = %v, want nil", err)
			}
			other := sum
			other[0] ^= 1
			for name, c := range map[string]struct {
				size int64
				sum  [sha256.Size]byte
			}{
				"a wrong digest":        {int64(len(body)), other},
				"a smaller size":        {int64(len(body)) - 1, sum},
				"a larger size":         {int64(len(body)) + 1, sum},
				"the digest of nothing": {0, sha256.Sum256(nil)},
			} {
				if err := blob.Verify(ctx(t), e, ref, c.size, c.sum); !errors.Is(err, blob.ErrMismatch) {
					t.Errorf("Verify(%s) = %v, want ErrMismatch", name, err)
				}
			}
		}},
		{"Verify accepts an empty object declared empty", func(t *testing.T, e *env) {
			ref := blob.Incoming(blob.NewID())
			put(t, e, ref, nil, "")
			if err := blob.Verify(ctx(t), e, ref, 0, sha256.Sum256(nil)); err != nil {
				t.Fatalf("Verify = %v, want nil", err)
			}
		}},
		{"Verify of an absent object is ErrNotFound, not a mismatch", func(t *testing.T, e *env) {
			err := blob.Verify(ctx(t), e, blob.Incoming(blob.NewID()), 1, sha256.Sum256([]byte("x")))
			wantErr(t, "Verify", err, blob.ErrNotFound)
			if errors.Is(err, blob.ErrMismatch) {
				t.Errorf("Verify = %v, also ErrMismatch", err)
			}
		}},
	}
}
