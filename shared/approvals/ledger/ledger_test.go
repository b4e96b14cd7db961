package ledger_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/approvals/ledger"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/filestore"
)

// An entry's hash is the SHA-256 of its canonical JSON, which is the same
// bytes whatever the zone of its time and whether its effects were nil.
func TestCanonicalFormIsOneFormPerEntry(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	a := ledger.Body{Seq: 1, Previous: ledger.Genesis, At: at, Tenant: "demo", CaseID: "m_alvarez", Proposal: "prp_1", Action: "create_deadline"}
	b := a
	b.At = at.In(time.FixedZone("CET", 3600))
	b.Effects = []string{}
	ca, err := a.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	cb, err := b.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if string(ca) != string(cb) || ledger.Hash(ca) != ledger.Hash(cb) {
		t.Errorf("two forms of one entry:\n%s\n%s", ca, cb)
	}
}

// Appends are serialized by the head: two appends after the same head
// cannot both commit, and the chain they leave verifies.
func TestTwoAppendsAfterOneHeadCannotBothCommit(t *testing.T) {
	fs, err := filestore.Open(filepath.Join(t.TempDir(), "store.db"), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	ctx := context.Background()
	body := func(p string) ledger.Body {
		return ledger.Body{At: time.Now(), Tenant: "demo", CaseID: "m_alvarez", Proposal: p, Action: "create_deadline"}
	}
	first, _, err := ledger.Append(ledger.Head{Hash: ledger.Genesis}, body("prp_1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Transact(ctx, first); err != nil {
		t.Fatal(err)
	}
	headRow, err := fs.Get(ctx, ledger.HeadKey("demo", "m_alvarez"))
	if err != nil {
		t.Fatal(err)
	}
	head, err := ledger.DecodeHead(&headRow)
	if err != nil || head.Seq != 1 {
		t.Fatalf("head = %+v, %v", head, err)
	}
	a, _, _ := ledger.Append(head, body("prp_2"))
	b, _, _ := ledger.Append(head, body("prp_3"))
	if err := fs.Transact(ctx, a); err != nil {
		t.Fatal(err)
	}
	var tx *store.TxCanceledError
	if err := fs.Transact(ctx, b); !errors.As(err, &tx) {
		t.Errorf("the second append after one head = %v, want cancelled", err)
	}
	rep, err := ledger.Verify(ctx, fs, "demo", "m_alvarez")
	if err != nil || !rep.OK || rep.Entries != 2 {
		t.Errorf("Verify = %+v, %v; want an intact chain of 2", rep, err)
	}
	// The first append of a matter also cannot happen twice.
	again, _, _ := ledger.Append(ledger.Head{Hash: ledger.Genesis}, body("prp_4"))
	if err := fs.Transact(ctx, again); !errors.As(err, &tx) {
		t.Errorf("a second first entry = %v, want cancelled", err)
	}
}
