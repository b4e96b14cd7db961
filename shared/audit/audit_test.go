package audit_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/records"
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

// TestRowHomeAndIndexItems: a record whose answer contains a matter's rows
// is one item in that matter's audit partition with no index (GSI1) entry;
// any other record is a day-partition row indexed under the matter it
// named; every further matter gets one index item pointing at the row.
func TestRowHomeAndIndexItems(t *testing.T) {
	day := "T#t1#AUDIT#2026-11-30"
	for _, tc := range []struct {
		name    string
		matter  string
		matters []string
		pk, gsi string   // the row's partition and its own index partition
		items   []string // the index items' partitions
	}{
		{"no matter: the day partition, not indexed", "", nil, day, "", nil},
		{"a refusal naming a matter: the day partition, indexed", "m_a", nil, day, "T#t1#M#m_a#AUDIT", nil},
		{"an answer of the named matter: one item at home", "m_a", []string{"m_a"}, "T#t1#M#m_a#AUDIT", "", nil},
		{"a named matter and two more the answer contains", "m_a", []string{"m_b", "m_a", "m_c"},
			"T#t1#M#m_b#AUDIT", "", []string{"T#t1#M#m_a#AUDIT", "T#t1#M#m_c#AUDIT"}},
		{"answers across matters, none named", "", []string{"m_b", "m_c"}, "T#t1#M#m_b#AUDIT", "", []string{"T#t1#M#m_c#AUDIT"}},
		{"an impossible named id is kept out of the index", "m#x", []string{"m_b"}, "T#t1#M#m_b#AUDIT", "", nil},
		{"an impossible answered id is no home", "m_a", []string{"m#x"}, day, "T#t1#M#m_a#AUDIT", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := audit.Record{RequestID: "r1", At: at, Tenant: "t1", Matter: tc.matter, Matters: tc.matters,
				ExpiresAt: at.Add(time.Hour)}
			row := r.Item()
			if row.PK != tc.pk || row.GSI1PK != tc.gsi {
				t.Errorf("row PK %q GSI1PK %q, want %q and %q", row.PK, row.GSI1PK, tc.pk, tc.gsi)
			}
			sk := "2026-11-30T12:00:00.000000000Z#r1"
			if row.PK != day && row.SK != sk {
				t.Errorf("row SK = %q, want %q", row.SK, sk)
			}
			if row.GSI1PK != "" && row.GSI1SK != sk {
				t.Errorf("row GSI1SK = %q, want %q", row.GSI1SK, sk)
			}
			var got []string
			for _, it := range r.IndexItems() {
				got = append(got, it.PK)
				if it.SK != sk || it.ExpiresAt != row.ExpiresAt || it.GSI1PK != "" {
					t.Errorf("index item %s: SK %q expiry %d GSI1PK %q, want %q, the row's %d and none",
						it.PK, it.SK, it.ExpiresAt, it.GSI1PK, sk, row.ExpiresAt)
				}
				if it.String("row_pk") != row.PK || it.String("row_sk") != row.SK {
					t.Errorf("index item %s points at %s / %s, want the row %s", it.PK, it.String("row_pk"), it.String("row_sk"), row.Key())
				}
			}
			if diff := cmp.Diff(tc.items, got); diff != "" {
				t.Errorf("index items (-want +got):\n%s", diff)
			}
		})
	}
}

// putMatter stores the key of a matter row (package records), which is all
// audit.Day reads of it.
func putMatter(t *testing.T, st store.Store, tenant, matter string) {
	t.Helper()
	k := records.MatterKey(tenant, matter)
	if err := st.Put(context.Background(), store.Item{PK: k.PK, SK: k.SK, Version: 1}); err != nil {
		t.Fatal(err)
	}
}

// legacy stores a row as it was written before rows moved into matter
// partitions (issue 19 item 6): in the day partition, indexed (GSI1) under
// its first matter, the further ones by index items.
func legacy(t *testing.T, st store.Store, r audit.Record) {
	t.Helper()
	first := r.Matter
	if first == "" {
		first = r.Matters[0]
	}
	old := audit.Record{RequestID: r.RequestID, At: r.At, Tenant: r.Tenant, Matter: first}
	row := old.Item()
	row.Attrs = r.Item().Attrs
	ops := []store.Op{store.PutOp(row, store.NotExists())}
	for _, m := range r.Matters {
		if m != first {
			ops = append(ops, store.PutOp(store.Item{PK: audit.MatterIndexPK(r.Tenant, m),
				SK: row.GSI1SK, Version: 1, Attrs: map[string]any{"row_pk": row.PK, "row_sk": row.SK}}))
		}
	}
	if err := st.Transact(context.Background(), ops); err != nil {
		t.Fatal(err)
	}
}

// TestDayListsEveryRecordOfTheDay: the day partition's rows and the rows
// homed in each of the tenant's matter partitions, once each (index items
// are not rows), in time order; other days and tenants stay out.
func TestDayListsEveryRecordOfTheDay(t *testing.T) {
	st := open(t)
	ctx := context.Background()
	putMatter(t, st, "t1", "m_a")
	putMatter(t, st, "t1", "m_b")
	putMatter(t, st, "t2", "m_a")
	write(t, st, audit.Record{RequestID: "r4", At: at.Add(4 * time.Second), Tenant: "t1", Matters: []string{"m_b", "m_a"}})
	write(t, st, audit.Record{RequestID: "r1", At: at.Add(time.Second), Tenant: "t1", Matter: "m_a", Matters: []string{"m_a"}})
	write(t, st, audit.Record{RequestID: "r2", At: at.Add(2 * time.Second), Tenant: "t1", Matter: "m_nope"}) // refused
	write(t, st, audit.Record{RequestID: "r3", At: at.Add(3 * time.Second), Tenant: "t1", Method: "initialize"})
	legacy(t, st, audit.Record{RequestID: "r0", At: at, Tenant: "t1", Matters: []string{"m_a", "m_b"}})
	write(t, st, audit.Record{RequestID: "y1", At: at.Add(-13 * time.Hour), Tenant: "t1", Matters: []string{"m_a"}})
	write(t, st, audit.Record{RequestID: "n1", At: at.Add(13 * time.Hour), Tenant: "t1", Matters: []string{"m_b"}})
	write(t, st, audit.Record{RequestID: "o1", At: at, Tenant: "t2", Matters: []string{"m_a"}})
	recs, err := audit.Day(ctx, st, "t1", at)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.RequestID)
	}
	if diff := cmp.Diff([]string{"r0", "r1", "r2", "r3", "r4"}, got); diff != "" {
		t.Errorf("Day (-want +got):\n%s", diff)
	}
}

// TestForMatterListsEveryRequestThatTouchedTheMatterInTimeOrder: the rows
// homed in the matter's partition, the day-partition rows indexed under it
// (refusals, and rows written before issue 19 item 6) and those its index
// items point at, once each, oldest first; an index item whose row was never written (its
// request failed to commit) is skipped; other matters and tenants stay out.
func TestForMatterListsEveryRequestThatTouchedTheMatterInTimeOrder(t *testing.T) {
	st := open(t)
	ctx := context.Background()
	write(t, st, audit.Record{RequestID: "r3", At: at.Add(3 * time.Second), Tenant: "t1", Matters: []string{"m_b", "m_a"}})
	write(t, st, audit.Record{RequestID: "r1", At: at.Add(time.Second), Tenant: "t1", Matter: "m_a", Matters: []string{"m_a"}})
	write(t, st, audit.Record{RequestID: "r2", At: at.Add(2 * time.Second), Tenant: "t1", Matters: []string{"m_a", "m_b"}})
	write(t, st, audit.Record{RequestID: "r4", At: at.Add(4 * time.Second), Tenant: "t1", Matter: "m_b"})
	write(t, st, audit.Record{RequestID: "o1", At: at, Tenant: "t2", Matters: []string{"m_c", "m_a"}})
	legacy(t, st, audit.Record{RequestID: "r0", At: at, Tenant: "t1", Matters: []string{"m_b", "m_a"}})
	legacy(t, st, audit.Record{RequestID: "r6", At: at.Add(6 * time.Second), Tenant: "t1", Matter: "m_a", Matters: []string{"m_a"}})
	// An index item put before a transaction that then failed.
	dangling := audit.Record{RequestID: "r5", At: at.Add(5 * time.Second), Tenant: "t1", Matters: []string{"m_b", "m_a"}}
	for _, it := range dangling.IndexItems() {
		if err := st.Put(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	for matter, want := range map[string][]string{
		"m_a": {"r0", "r1", "r2", "r3", "r6"},
		"m_b": {"r0", "r2", "r3", "r4"},
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
