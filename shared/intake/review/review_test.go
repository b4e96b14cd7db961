package review_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/intake"
	"github.com/custodymcp/custody/shared/intake/extract"
	"github.com/custodymcp/custody/shared/intake/review"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/filestore"
	"github.com/custodymcp/custody/shared/uploads"
)

var epoch = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// pendingEnv is the demo firm with one document of Alvarez pending review,
// as intake writes it: three chunks, privileged, pending.
func pendingEnv(t *testing.T) (store.Store, string) {
	t.Helper()
	st, err := filestore.Open(filepath.Join(t.TempDir(), "custody.db"), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	fx, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := records.Import(ctx, st, fx, epoch.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	obj := blob.NewID()
	u := uploads.Upload{ID: uploads.UploadID(obj), Object: obj, Tenant: seed.DemoTenant, Matter: seed.Alvarez,
		CredentialID: "cred_x", Filename: "inspection.pdf", Size: 1234, SHA256: strings.Repeat("ab", 32)}
	res := &extract.Result{MediaType: "application/pdf", TextState: extract.Complete, Pages: 3,
		Chunks: []extract.Chunk{{Page: 1, Text: "page one"}, {Page: 2, Text: "page two"}, {Page: 3, Text: "page three"}}}
	d, v, chunks, err := intake.Rows(u, res, blob.Stored(obj).Key, epoch)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chunks {
		it, err := records.ChunkItem(seed.DemoTenant, c, v.PageCount)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Put(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	di, _ := records.DocumentItem(seed.DemoTenant, d)
	vi, _ := records.VersionItem(seed.DemoTenant, v)
	if err := st.Transact(ctx, []store.Op{store.PutOp(di), store.PutOp(vi)}); err != nil {
		t.Fatal(err)
	}
	return st, d.ID
}

// snapshot is every row of the Alvarez partition and the audit rows.
func snapshot(t *testing.T, st store.Store) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	p, err := st.Query(context.Background(), store.Query{PK: records.MatterPK(seed.DemoTenant, seed.Alvarez), Limit: store.MaxQueryLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range p.Items {
		out[it.SK] = it.Version
	}
	recs, err := audit.ForMatter(context.Background(), st, seed.DemoTenant, seed.Alvarez)
	if err != nil {
		t.Fatal(err)
	}
	out["audit rows"] = int64(len(recs))
	return out
}

// Review by a paralegal, a screened attorney, an attorney off the matter,
// or without a privilege, is refused, and nothing changes.
func TestReviewByAnyoneButALicensedAttorneyOnTheMatterIsRefusedAndChangesNothing(t *testing.T) {
	st, doc := pendingEnv(t)
	ctx := context.Background()
	// The demo firm's administrator is off the Alvarez team; the screened
	// attorney is the last case.
	before := snapshot(t, st)
	cases := []struct {
		name  string
		req   review.Request
		setup func()
	}{
		{"paralegal", review.Request{By: seed.DemoParalegal, Privilege: records.PrivilegeNone}, nil},
		{"admin off the matter", review.Request{By: seed.DemoAdmin, Privilege: records.PrivilegeNone}, nil},
		{"no such principal", review.Request{By: "p_nobody", Privilege: records.PrivilegeNone}, nil},
		{"no privilege", review.Request{By: seed.DemoAttorney}, nil},
		{"an unknown privilege", review.Request{By: seed.DemoAttorney, Privilege: "secret"}, nil},
		{"an unknown kind", review.Request{By: seed.DemoAttorney, Privilege: records.PrivilegeNone, Kind: "novel"}, nil},
		{"withdraw with a privilege", review.Request{By: seed.DemoAttorney, Privilege: records.PrivilegeNone, Withdraw: true}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.req.Tenant, c.req.Matter, c.req.Document = seed.DemoTenant, seed.Alvarez, doc
			_, err := review.Review(ctx, st, c.req, epoch)
			var refused *review.Refused
			if !errors.As(err, &refused) {
				t.Fatalf("Review = %v, want a refusal", err)
			}
			if after := snapshot(t, st); !reflect.DeepEqual(before, after) {
				t.Errorf("a refused review changed rows:\n%v\n%v", before, after)
			}
		})
	}
	t.Run("screened attorney", func(t *testing.T) {
		if _, _, err := records.Screen(ctx, st, seed.DemoTenant, seed.Alvarez, seed.DemoAttorney, true, "a conflict"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _, _ = records.Screen(ctx, st, seed.DemoTenant, seed.Alvarez, seed.DemoAttorney, false, "") })
		before := snapshot(t, st)
		_, err := review.Review(ctx, st, review.Request{Tenant: seed.DemoTenant, Matter: seed.Alvarez, Document: doc,
			By: seed.DemoAttorney, Privilege: records.PrivilegeNone}, epoch)
		var refused *review.Refused
		if !errors.As(err, &refused) {
			t.Fatalf("Review by a screened attorney = %v, want a refusal", err)
		}
		if after := snapshot(t, st); !reflect.DeepEqual(before, after) {
			t.Error("a refused review changed rows")
		}
	})
}

// A licensed attorney on the matter reviews it: the privilege (required)
// on the document and every chunk, the title and kind replaced, reviewed_by,
// reviewed_at and updated_at moved, served from then on, one audit row; a
// second review is refused. A withdrawn one keeps its rows, never served.
func TestAReviewServesTheDocumentWithItsPrivilegeAndAWithdrawalNever(t *testing.T) {
	st, doc := pendingEnv(t)
	ctx := context.Background()
	repo := records.NewRepo(st)
	if _, err := repo.Document(ctx, seed.DemoTenant, seed.Alvarez, doc); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a pending document is served: %v", err)
	}
	pending, err := review.ListPending(ctx, st, seed.DemoTenant, seed.Alvarez)
	if err != nil || len(pending) != 1 || pending[0].DocumentID != doc || pending[0].TextState != records.TextComplete || pending[0].Filename != "inspection.pdf" {
		t.Fatalf("pending = %+v, %v", pending, err)
	}
	audits := len(snapshotAudit(t, st))
	at := epoch.Add(time.Hour)
	res, err := review.Review(ctx, st, review.Request{Tenant: seed.DemoTenant, Matter: seed.Alvarez, Document: doc,
		By: seed.DemoAttorney, Privilege: records.PrivilegeWorkProduct, Title: "Inspection report", Kind: "field_report"}, at)
	if err != nil {
		t.Fatal(err)
	}
	if res.Chunks != 3 {
		t.Errorf("%d chunks took the privilege, want 3", res.Chunks)
	}
	d, err := repo.Document(ctx, seed.DemoTenant, seed.Alvarez, doc)
	if err != nil {
		t.Fatalf("the reviewed document is not served: %v", err)
	}
	if d.Privilege != records.PrivilegeWorkProduct || d.Title != "Inspection report" || d.Kind != "field_report" ||
		d.ReviewedBy != seed.DemoAttorney || d.ReviewedAt == nil || !d.ReviewedAt.Equal(at) || !d.UpdatedAt.Equal(at) || d.ReviewState != records.ReviewReviewed {
		t.Errorf("reviewed document = %+v", d)
	}
	cp, err := repo.Chunks(ctx, seed.DemoTenant, seed.Alvarez, doc, 1, 1, 100)
	if err != nil || len(cp.Chunks) != 3 {
		t.Fatalf("chunks served = %d, %v; want 3", len(cp.Chunks), err)
	}
	for _, c := range cp.Chunks {
		if c.Privilege != records.PrivilegeWorkProduct || !c.UpdatedAt.Equal(at) {
			t.Errorf("chunk %d: privilege %s updated %v", c.Seq, c.Privilege, c.UpdatedAt)
		}
	}
	recs := snapshotAudit(t, st)
	if len(recs) != audits+1 || recs[len(recs)-1].Method != review.MethodReview || recs[len(recs)-1].Principal != seed.DemoAttorney {
		t.Errorf("audit rows %d → %d (last %+v), want one review row", audits, len(recs), recs[len(recs)-1])
	}
	if _, err := review.Review(ctx, st, review.Request{Tenant: seed.DemoTenant, Matter: seed.Alvarez, Document: doc,
		By: seed.DemoAttorney, Privilege: records.PrivilegeNone}, at); err == nil {
		t.Error("a second review of a reviewed document succeeded")
	}
	if pending, _ := review.ListPending(ctx, st, seed.DemoTenant, seed.Alvarez); len(pending) != 0 {
		t.Errorf("still pending: %+v", pending)
	}

	// Withdrawal.
	st2, doc2 := pendingEnv(t)
	if _, err := review.Review(ctx, st2, review.Request{Tenant: seed.DemoTenant, Matter: seed.Alvarez, Document: doc2,
		By: seed.DemoAttorney, Withdraw: true}, at); err != nil {
		t.Fatal(err)
	}
	if _, err := records.NewRepo(st2).Document(ctx, seed.DemoTenant, seed.Alvarez, doc2); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a withdrawn document is served: %v", err)
	}
	it, err := st2.Get(ctx, records.DocumentKey(seed.DemoTenant, seed.Alvarez, doc2))
	var wd records.Document
	if err != nil || records.DecodeRow(it, &wd) != nil || wd.ReviewState != records.ReviewWithdrawn || wd.ReviewedBy != seed.DemoAttorney {
		t.Errorf("the withdrawn row = %+v, %v; want kept, withdrawn by the attorney", wd, err)
	}
}

func snapshotAudit(t *testing.T, st store.Store) []audit.Record {
	t.Helper()
	recs, err := audit.ForMatter(context.Background(), st, seed.DemoTenant, seed.Alvarez)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
