package blob_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/blobtest"
	"github.com/custodymcp/custody/shared/blob/s3local"
)

// The fault decorator fails exactly the calls its rules choose, passes the
// rest to the real engine, and counts every call.
func TestFaultyFailsTheChosenCallsAndPassesTheRest(t *testing.T) {
	eng, _ := s3local.NewStore(t, nil)
	f := blobtest.NewFaulty(eng)
	ctx := t.Context()
	body := blobtest.Pattern(300_000, 1)
	ref := blob.Stored(blob.NewID())
	if err := f.PutObject(ctx, ref, bytes.NewReader(body), blob.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)

	t.Run("an Err rule on the Nth GetObject fails that call only", func(t *testing.T) {
		f.Reset()
		f.Add(blobtest.Rule{Op: blobtest.OpGetObject, Nth: 2, Err: blob.ErrUnavailable})
		for i, want := range []error{nil, blob.ErrUnavailable, nil} {
			if err := blob.Verify(ctx, f, ref, int64(len(body)), sum); !errors.Is(err, want) || (want == nil && err != nil) {
				t.Errorf("Verify %d = %v, want %v", i+1, err, want)
			}
		}
	})
	t.Run("a stream cut short fails Verify with ErrUnavailable, never ErrMismatch", func(t *testing.T) {
		f.Reset()
		f.Add(blobtest.Rule{Op: blobtest.OpGetObject, CutAfter: 1000})
		err := blob.Verify(ctx, f, ref, int64(len(body)), sum)
		if !errors.Is(err, blob.ErrUnavailable) || errors.Is(err, blob.ErrMismatch) {
			t.Errorf("Verify = %v, want ErrUnavailable and not ErrMismatch", err)
		}
	})
	t.Run("an After rule applies the call and then fails it", func(t *testing.T) {
		f.Reset()
		dst := blob.Stored(blob.NewID())
		f.Add(blobtest.Rule{Op: blobtest.OpCopyObject, Ref: blobtest.Prefix(blob.Record, blob.PrefixObject), After: true, Err: blob.ErrUnavailable})
		if err := f.CopyObject(ctx, ref, dst); !errors.Is(err, blob.ErrUnavailable) {
			t.Errorf("CopyObject = %v, want ErrUnavailable", err)
		}
		if _, err := eng.HeadObject(ctx, dst); err != nil {
			t.Errorf("the copy was not applied: %v", err)
		}
	})
	t.Run("a rule for another prefix lets the call through", func(t *testing.T) {
		f.Reset()
		f.Add(blobtest.Rule{Ref: blobtest.Prefix(blob.Staging, blob.PrefixIncoming), Err: blob.ErrUnavailable})
		if _, err := f.HeadObject(ctx, ref); err != nil {
			t.Errorf("HeadObject = %v, want it through", err)
		}
	})
	if got := f.Calls(blobtest.OpGetObject); got != 4 {
		t.Errorf("GetObject calls = %d, want 4", got)
	}
}
