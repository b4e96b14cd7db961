package blob_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/blob"
)

func TestNewIDIsThirtyTwoLowercaseHexDigitsNeverRepeated(t *testing.T) {
	seen := map[blob.ID]bool{}
	for range 1000 {
		id := blob.NewID()
		if _, err := blob.ParseID(string(id)); err != nil {
			t.Fatalf("ParseID(NewID() = %q) = %v", id, err)
		}
		if seen[id] {
			t.Fatalf("NewID repeated %q", id)
		}
		seen[id] = true
	}
}

func TestParseIDRefusesAnyOtherShapeWithErrInvalid(t *testing.T) {
	for _, s := range []string{"", "0123456789abcdef0123456789abcde", "0123456789abcdef0123456789abcdef0",
		"0123456789ABCDEF0123456789abcdef", "0123456789abcdef0123456789abcdeg", "contract.pdf"} {
		if _, err := blob.ParseID(s); !errors.Is(err, blob.ErrInvalid) {
			t.Errorf("ParseID(%q) = %v, want ErrInvalid", s, err)
		}
	}
}

func TestRefConstructorsPutEachPrefixInItsBucket(t *testing.T) {
	id := blob.NewID()
	for _, c := range []struct {
		got  blob.Ref
		want blob.Ref
	}{
		{blob.Incoming(id), blob.Ref{Bucket: blob.Staging, Key: "incoming/" + string(id)}},
		{blob.Verified(id), blob.Ref{Bucket: blob.Staging, Key: "verified/" + string(id)}},
		{blob.Quarantined(id), blob.Ref{Bucket: blob.Staging, Key: "quarantine/" + string(id)}},
		{blob.Stored(id), blob.Ref{Bucket: blob.Record, Key: "obj/" + string(id)}},
	} {
		if c.got != c.want {
			t.Errorf("ref = %v, want %v", c.got, c.want)
		}
		if err := c.got.Validate(); err != nil {
			t.Errorf("%v.Validate() = %v, want nil", c.got, err)
		}
		if c.got.ID() != id {
			t.Errorf("%v.ID() = %q, want %q", c.got, c.got.ID(), id)
		}
	}
	if got := (blob.Ref{Bucket: blob.Record, Key: "obj/x"}).ID(); got != "" {
		t.Errorf("ID() of an invalid ref = %q, want empty", got)
	}
}

func TestBucketsParseNamesTheRefOfAnEventsBucketAndKey(t *testing.T) {
	bs := blob.Buckets{Staging: "acme-staging", Record: "acme-record"}
	id := blob.NewID()
	good := []struct {
		bucket, key string
		want        blob.Ref
	}{
		{"acme-staging", "verified/" + string(id), blob.Verified(id)},
		{"acme-staging", "incoming/" + string(id), blob.Incoming(id)},
		{"acme-record", "obj/" + string(id), blob.Stored(id)},
	}
	for _, c := range good {
		got, err := bs.Parse(c.bucket, c.key)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q, %q) = %v, %v; want %v", c.bucket, c.key, got, err, c.want)
		}
	}
	for _, c := range [][2]string{
		{"other-bucket", "verified/" + string(id)},
		{"acme-record", "verified/" + string(id)},
		{"acme-staging", "verified/report.pdf"},
		{"", ""},
	} {
		if _, err := bs.Parse(c[0], c[1]); !errors.Is(err, blob.ErrInvalid) {
			t.Errorf("Parse(%q, %q) = %v, want ErrInvalid", c[0], c[1], err)
		}
	}
	if diff := cmp.Diff([]string{"acme-staging", "acme-record", ""}, []string{bs.Name(blob.Staging), bs.Name(blob.Record), bs.Name(7)}); diff != "" {
		t.Errorf("Name (-want +got):\n%s", diff)
	}
}
