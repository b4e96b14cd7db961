package audit_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/filestore"
)

func open(t *testing.T) store.Store {
	t.Helper()
	fs, err := filestore.Open(filepath.Join(t.TempDir(), "custody.db"), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	return fs
}

var at = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// write stores a record's row and index items as the gate does.
func write(t *testing.T, st store.Store, r audit.Record) {
	t.Helper()
	ops := []store.Op{store.PutOp(r.Item(), store.NotExists())}
	for _, it := range r.IndexItems() {
		ops = append(ops, store.PutOp(it))
	}
	if err := st.Transact(context.Background(), ops); err != nil {
		t.Fatalf("write %s: %v", r.RequestID, err)
	}
}

func TestAddMatterKeepsEachMatterOnceInOrder(t *testing.T) {
	var r audit.Record
	r.AddMatter("m_b", "m_a", "", "m_b")
	r.AddMatter("m_a", "m_c")
	if diff := cmp.Diff([]string{"m_b", "m_a", "m_c"}, r.Matters); diff != "" {
		t.Errorf("Matters (-want +got):\n%s", diff)
	}
}

func TestIndexItemsAreOnePerFurtherMatter(t *testing.T) {
	for _, tc := range []struct {
		name    string
		matter  string
		matters []string
		gsi     string   // the row's own index partition
		items   []string // the index items' partitions
	}{
		{"no matter: not indexed", "", nil, "", nil},
		{"the named matter only", "m_a", []string{"m_a"}, "T#t1#M#m_a#AUDIT", nil},
		{"a named matter and two more the answer contains", "m_a", []string{"m_b", "m_a", "m_c"},
			"T#t1#M#m_a#AUDIT", []string{"T#t1#M#m_b#AUDIT", "T#t1#M#m_c#AUDIT"}},
		{"answers across matters, none named", "", []string{"m_b", "m_c"}, "T#t1#M#m_b#AUDIT", []string{"T#t1#M#m_c#AUDIT"}},
		{"an impossible named id is kept out of the index", "m#x", []string{"m_b"}, "T#t1#M#m_b#AUDIT", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := audit.Record{RequestID: "r1", At: at, Tenant: "t1", Matter: tc.matter, Matters: tc.matters}
			row := r.Item()
			if row.GSI1PK != tc.gsi {
				t.Errorf("row GSI1PK = %q, want %q", row.GSI1PK, tc.gsi)
			}
			var got []string
			for _, it := range r.IndexItems() {
				got = append(got, it.PK)
				if it.SK != row.GSI1SK || it.ExpiresAt != row.ExpiresAt {
					t.Errorf("index item %s: SK %q expiry %d, want the row's %q and %d", it.PK, it.SK, it.ExpiresAt, row.GSI1SK, row.ExpiresAt)
				}
			}
			if diff := cmp.Diff(tc.items, got); diff != "" {
				t.Errorf("index items (-want +got):\n%s", diff)
			}
		})
	}
}

// TestForMatterListsEveryRequestThatTouchedTheMatterInTimeOrder: the rows
// indexed under the matter itself and those its index items point at, once
// each, oldest first; an index item whose row was never written (its
// request failed to commit) is skipped; other matters and tenants stay out.
func TestForMatterListsEveryRequestThatTouchedTheMatterInTimeOrder(t *testing.T) {
	st := open(t)
	ctx := context.Background()
	write(t, st, audit.Record{RequestID: "r3", At: at.Add(3 * time.Second), Tenant: "t1", Matters: []string{"m_b", "m_a"}})
	write(t, st, audit.Record{RequestID: "r1", At: at.Add(time.Second), Tenant: "t1", Matter: "m_a", Matters: []string{"m_a"}})
	write(t, st, audit.Record{RequestID: "r2", At: at.Add(2 * time.Second), Tenant: "t1", Matters: []string{"m_a", "m_b"}})
	write(t, st, audit.Record{RequestID: "r4", At: at.Add(4 * time.Second), Tenant: "t1", Matter: "m_b"})
	write(t, st, audit.Record{RequestID: "o1", At: at, Tenant: "t2", Matters: []string{"m_c", "m_a"}})
	// An index item put before a transaction that then failed.
	dangling := audit.Record{RequestID: "r5", At: at.Add(5 * time.Second), Tenant: "t1", Matters: []string{"m_b", "m_a"}}
	for _, it := range dangling.IndexItems() {
		if err := st.Put(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	for matter, want := range map[string][]string{
		"m_a": {"r1", "r2", "r3"},
		"m_b": {"r2", "r3", "r4"},
		"m_c": nil,
		"m#x": nil,
	} {
		recs, err := audit.ForMatter(ctx, st, "t1", matter)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, r.RequestID)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ForMatter(%s) (-want +got):\n%s", matter, diff)
		}
	}
}
