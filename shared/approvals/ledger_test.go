package approvals_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/approvals/ledger"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
)

// engines are the two store engines the concurrency properties are held
// on: the file engine (servertest's default) and DynamoDB (the in-process
// emulator).
var engines = []struct {
	name string
	opts func(t *testing.T, o *servertest.Options)
}{
	{"file engine", func(*testing.T, *servertest.Options) {}},
	{"DynamoDB emulator", func(t *testing.T, o *servertest.Options) {
		o.Clock = servertest.NewClock(servertest.Epoch)
		st, _ := dynamotest.NewStore(t, o.Clock.Now)
		o.Store = st
	}},
}

// Twenty approvals of twenty proposals of one matter, all at once from
// two attorneys' sessions: each is approved once, and the matter's ledger
// is one intact chain of twenty entries, seqs 1 to 20 — appends are
// serialized by the head row's version, not by anything in a process.
func TestConcurrentApprovalsKeepTheLedgerChainIntact(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			d := newDesk(t, func(o *servertest.Options) { eng.opts(t, o) })
			const lee = "p_lee_marsh"
			d.addAttorney(t, lee, seed.Alvarez)
			const n = 20
			ids := make([]string, n)
			for i := range ids {
				ids[i] = d.deadline(t, servertest.Paralegal, seed.Alvarez, fmt.Sprint("Concurrent ", i))
			}
			people := []*person{d.signIn(t, seed.DemoAttorney), d.signIn(t, lee)}
			got := make([]map[string]outcome, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Go(func() {
					<-start
					a := people[i%2].review(t, []string{ids[i]}, nil)
					got[i] = outcomes(t, a)
				})
			}
			close(start)
			wg.Wait()
			for i, id := range ids {
				if got[i][id] != (outcome{Status: "approved"}) {
					t.Errorf("approval %d = %+v, want approved", i, got[i][id])
				}
			}
			es := d.ledgerOf(t, seed.Alvarez)
			var seqs []int64
			seen := map[string]bool{}
			for _, e := range es {
				seqs = append(seqs, e.Seq)
				seen[e.Proposal] = true
			}
			want := make([]int64, n)
			for i := range want {
				want[i] = int64(i + 1)
			}
			if diff := cmp.Diff(want, seqs); diff != "" {
				t.Errorf("ledger seqs (-want +got):\n%s", diff)
			}
			if len(seen) != n {
				t.Errorf("the ledger names %d proposals, want %d", len(seen), n)
			}
			rep, err := ledger.Verify(context.Background(), d.Store, seed.DemoTenant, seed.Alvarez)
			if err != nil || !rep.OK || rep.Entries != n {
				t.Errorf("Verify = %+v, %v; want an intact chain of %d", rep, err, n)
			}
		})
	}
}

// Two attorneys race to approve one proposal, many times over: one
// approval, one PROPOSAL_NOT_PENDING, one deadline, one ledger entry.
func TestTwoDecidersRacingOneProposalApproveItOnce(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			d := newDesk(t, func(o *servertest.Options) { eng.opts(t, o) })
			const lee = "p_lee_marsh"
			d.addAttorney(t, lee, seed.Alvarez)
			people := []*person{d.signIn(t, seed.DemoAttorney), d.signIn(t, lee)}
			const rounds = 8
			for r := range rounds {
				title := fmt.Sprint("Raced ", r)
				id := d.deadline(t, servertest.Paralegal, seed.Alvarez, title)
				var got [2]outcome
				var wg sync.WaitGroup
				start := make(chan struct{})
				for i := range 2 {
					wg.Go(func() {
						<-start
						got[i] = outcomes(t, people[i].review(t, []string{id}, nil))[id]
					})
				}
				close(start)
				wg.Wait()
				approved, notPending := 0, 0
				for _, o := range got {
					switch {
					case o.Status == "approved" && o.Code == "":
						approved++
					case o.Code == "PROPOSAL_NOT_PENDING":
						notPending++
					}
				}
				if approved != 1 || notPending != 1 {
					t.Errorf("round %d: outcomes %+v, want one approval and one PROPOSAL_NOT_PENDING", r, got)
				}
				if n := len(d.deadlines(t, seed.Alvarez, title)); n != 1 {
					t.Errorf("round %d: %d deadlines, want 1", r, n)
				}
			}
			if n := len(d.ledgerOf(t, seed.Alvarez)); n != rounds {
				t.Errorf("%d ledger entries, want %d", n, rounds)
			}
		})
	}
}

// A ledger row edited in the store is found: Verify names its seq.
//
// A forger who rewrites an entry's body and its hash together leaves that
// entry consistent in itself; the chain then breaks at the first entry
// whose link to it fails (or at the head, for the last one), which is what
// Verify names: without a secret, a chain cannot tell more (docs/
// decisions.md "Approvers", the ledger).
func TestALedgerRowEditedInTheStoreIsNamedByItsSeq(t *testing.T) {
	var d *desk
	ctx := context.Background()
	for _, c := range []struct {
		name string
		edit func(t *testing.T)
		want int64
	}{
		{"the body of entry 3 names another approver", func(t *testing.T) {
			it, err := d.Store.Get(ctx, ledger.EntryKey(seed.DemoTenant, seed.Alvarez, 3))
			if err != nil {
				t.Fatal(err)
			}
			it.Attrs["body"] = []byte(strings.Replace(string(it.Bytes("body")), seed.DemoAttorney, "p_someone_else", 1))
			d.putRow(t, it)
		}, 3},
		{"entry 2's body and hash rewritten together: the first link that fails is entry 3's", func(t *testing.T) {
			rewrite(t, d, 2)
		}, 3},
		{"the last entry's body and hash rewritten together: the head disagrees", func(t *testing.T) {
			rewrite(t, d, 4)
		}, 4},
		{"entry 2 removed", func(t *testing.T) {
			if err := d.Store.Delete(ctx, ledger.EntryKey(seed.DemoTenant, seed.Alvarez, 2)); err != nil {
				t.Fatal(err)
			}
		}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			d = chained(t)
			rep, err := ledger.Verify(ctx, d.Store, seed.DemoTenant, seed.Alvarez)
			if err != nil || !rep.OK {
				t.Fatalf("before the edit Verify = %+v, %v", rep, err)
			}
			c.edit(t)
			rep, err = ledger.Verify(ctx, d.Store, seed.DemoTenant, seed.Alvarez)
			if err != nil || rep.OK || rep.BrokenSeq != c.want {
				t.Errorf("Verify = %+v, %v; want broken at seq %d", rep, err, c.want)
			}
		})
	}
}

// chained is a desk whose Alvarez ledger has four entries.
func chained(t *testing.T) *desk {
	t.Helper()
	d := newDesk(t)
	var ids []string
	for i := range 4 {
		ids = append(ids, d.deadline(t, servertest.Paralegal, seed.Alvarez, fmt.Sprint("Chained ", i)))
	}
	dana := d.signIn(t, seed.DemoAttorney)
	if a := dana.review(t, ids, nil); !allOK(a) {
		t.Fatalf("the approvals failed:\n%s", a.Body)
	}
	return d
}

// rewrite replaces entry seq's approver and stores the body with its
// matching hash.
func rewrite(t *testing.T, d *desk, seq int64) {
	t.Helper()
	ctx := context.Background()
	it, err := d.Store.Get(ctx, ledger.EntryKey(seed.DemoTenant, seed.Alvarez, seq))
	if err != nil {
		t.Fatal(err)
	}
	var b ledger.Body
	if err := json.Unmarshal(it.Bytes("body"), &b); err != nil {
		t.Fatal(err)
	}
	b.ApprovedBy = "p_someone_else"
	canon, err := b.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	it.Attrs["body"], it.Attrs["hash"] = canon, ledger.Hash(canon)
	d.putRow(t, it)
}
