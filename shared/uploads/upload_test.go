package uploads_test

import (
	"context"
	"errors"
	"testing"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/uploads"
)

func TestAnUploadIDIsUplAndItsObjectsID(t *testing.T) {
	id := blob.NewID()
	for _, c := range []struct {
		in   string
		want blob.ID
		ok   bool
	}{
		{uploads.UploadID(id), id, true},
		{string(id), "", false},
		{"upl_" + string(id)[:31], "", false},
		{"upl_" + string(id) + "0", "", false},
		{"UPL_" + string(id), "", false},
	} {
		if got, ok := uploads.ParseUploadID(c.in); got != c.want || ok != c.ok {
			t.Errorf("ParseUploadID(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// The scan gate's one conditional write (issue 17 builds on it): an upload
// moves from scan_pending once, and a duplicate or late event, meeting
// another state, changes nothing.
func TestTransitionMovesAnUploadFromOneStateOnce(t *testing.T) {
	for name, newFirm := range engines(t) {
		t.Run(name, func(t *testing.T) {
			f := newFirm(t)
			ctx := context.Background()
			id := uploads.UploadID(blob.NewID())
			k := uploads.UploadKey(id)
			pk, sk := "SWEEP#upload_pending#00", "2026-11-30T12:01:00.000000000Z#"+id
			if err := f.st.Put(ctx, store.Item{PK: k.PK, SK: k.SK, GSI1PK: pk, GSI1SK: sk, Version: 1,
				Attrs: map[string]any{"state": string(uploads.StateScanPending)}}); err != nil {
				t.Fatal(err)
			}
			op := uploads.Transition(id, uploads.StateScanPending, uploads.StateClean, map[string]any{"verdict_engine": "signature"}, epoch)
			if err := f.st.Transact(ctx, []store.Op{op, store.CheckOp(store.Key{PK: "x", SK: "y"}, store.NotExists())}); err != nil {
				t.Fatalf("the first transition = %v", err)
			}
			var tx *store.TxCanceledError
			if err := f.st.Transact(ctx, []store.Op{op, store.CheckOp(store.Key{PK: "x", SK: "y"}, store.NotExists())}); !errors.As(err, &tx) || tx.Index != 0 {
				t.Errorf("the repeated transition = %v, want cancelled by its condition", err)
			}
			it, err := f.st.Get(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if it.String("state") != "clean" || it.String("verdict_engine") != "signature" || it.GSI1PK != "" {
				t.Errorf("row = %v (index %q), want clean with its verdict, out of the sweeper index", it.Attrs, it.GSI1PK)
			}
		})
	}
}
