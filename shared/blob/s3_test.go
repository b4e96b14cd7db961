package blob_test

import (
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/blobtest"
	"github.com/custodymcp/custody/shared/blob/s3local"
)

// newStore is the engine over a fresh in-memory s3local whose clock is
// now, paging ListParts two parts at a time.
func newStore(t *testing.T, now func() time.Time) *blob.S3 {
	t.Helper()
	srv := s3local.Start(t, s3local.Options{Now: now})
	e, err := blob.New(s3local.NewClient(srv.URL, blob.WithClock(now)), s3local.Buckets, blob.Options{Now: now, ListPartsPageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestS3PassesTheConformanceSuiteAgainstS3Local(t *testing.T) {
	blobtest.Run(t, func(t *testing.T, now func() time.Time) blob.Store { return newStore(t, now) })
}
