package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/s3local"
	"github.com/custodymcp/custody/shared/lambdaio/s3event"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/scan/gate"
	"github.com/custodymcp/custody/shared/scan/scantest"
	"github.com/custodymcp/custody/shared/scan/signature"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/uploads"
	"github.com/custodymcp/custody/shared/uploads/uploadstest"
)

// heldUploads deposits two files through the lane into st and has the scan
// gate judge them while its engine is broken: two scan_failed uploads.
func heldUploads(t *testing.T, st store.Store) []uploads.Upload {
	t.Helper()
	ctx := context.Background()
	_, cred, err := auth.Mint(ctx, st, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney,
		Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	objects, _ := s3local.NewStore(t, nil)
	sc := scantest.NewFaulty(signature.New(), signature.Name)
	sc.Break(nil)
	g, err := gate.New(gate.Options{Store: st, Blob: objects, Buckets: s3local.Buckets, Scanner: sc})
	if err != nil {
		t.Fatal(err)
	}
	dep := uploadstest.Depositor{Lane: uploads.New(uploads.Options{Store: st, Blob: objects, Scanner: sc}), Store: st,
		Credential: cred, Admin: seed.DemoAdmin, Now: time.Now}
	var out []uploads.Upload
	for _, name := range []string{"deposition.pdf", "exhibit 4.pdf"} {
		u := dep.Deposit(t, seed.Alvarez, name, []byte("the text of "+name))
		if _, err := g.HandleS3(ctx, s3Event(t, blob.Verified(u.Object).Key)); err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

// TestHeldUploadsAreListedAndRescannedOnEveryEngine: `uploads list
// --state` shows the uploads the gate held, and `uploads rescan --by`
// sends one back to scan_pending for a firm administrator only — on the
// file engine with the server stopped and running, and on DynamoDB.
func TestHeldUploadsAreListedAndRescannedOnEveryEngine(t *testing.T) {
	for _, b := range []backend{stoppedFile(t), runningFile(t), dynamoDB(t)} {
		t.Run(b.name, func(t *testing.T) {
			env := b.env
			if b.requests != nil {
				mustCtl(t, env, b.args("table", "create")...)
			}
			mustCtl(t, env, b.args("import", demoFixture)...)
			var held []uploads.Upload
			b.withStore(t, func(st store.Store) { held = heldUploads(t, st) })

			out := mustCtl(t, env, b.args("uploads", "list", "--state", "scan_failed")...)
			for _, u := range held {
				if !strings.Contains(out, u.ID) || !strings.Contains(out, `"`+u.Filename+`"`) {
					t.Errorf("uploads list --state scan_failed:\n%s\nwant %s (%s)", out, u.ID, u.Filename)
				}
			}
			if out := mustCtl(t, env, b.args("uploads", "list", "--state", "infected")...); !strings.Contains(out, "no infected uploads") {
				t.Errorf("uploads list --state infected = %q, want none", out)
			}
			if _, err := ctl(t, env, b.args("uploads", "list", "--state", "clean")...); err == nil {
				t.Error("uploads list --state clean succeeded, want refused (only held states are listed)")
			}
			if _, err := ctl(t, env, b.args("uploads", "rescan", held[0].ID, "--by", seed.DemoAttorney)...); err == nil {
				t.Error("a rescan by an attorney succeeded, want refused (firm administrators only)")
			}
			out = mustCtl(t, env, b.args("uploads", "rescan", held[0].ID, "--by", seed.DemoAdmin)...)
			if !strings.Contains(out, "scan_pending") {
				t.Errorf("uploads rescan = %q", out)
			}
			if _, err := ctl(t, env, b.args("uploads", "rescan", held[0].ID, "--by", seed.DemoAdmin)...); err == nil {
				t.Error("a second rescan of the same upload succeeded, want refused (it is scan_pending)")
			}
			b.withStore(t, func(st store.Store) {
				it, err := st.Get(context.Background(), uploads.UploadKey(held[0].ID))
				if err != nil {
					t.Fatal(err)
				}
				if u, _ := uploads.DecodeUpload(it); u.State != uploads.StateScanPending || u.RescanBy != seed.DemoAdmin {
					t.Errorf("the rescanned upload is %s by %q, want scan_pending by %s", u.State, u.RescanBy, seed.DemoAdmin)
				}
			})
			out = mustCtl(t, env, b.args("uploads", "list", "--state", "scan_failed")...)
			if strings.Contains(out, held[0].ID) || !strings.Contains(out, held[1].ID) {
				t.Errorf("after the rescan, uploads list --state scan_failed:\n%s\nwant %s alone", out, held[1].ID)
			}
		})
	}
}

// s3Event is the ObjectCreated event S3 sends for key in the staging
// bucket, decoded from its JSON as Lambda decodes it.
func s3Event(t *testing.T, key string) events.S3Event {
	t.Helper()
	raw, err := json.Marshal(s3event.ObjectCreated("Copy", "us-east-1", s3local.Buckets.Staging, key, 1, "etag", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.S3Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}
