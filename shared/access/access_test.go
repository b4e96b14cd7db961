package access_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/filestore"
	"github.com/custodymcp/custody/shared/store/storetest"
)

// seeded opens the file engine in a temp dir behind the fault-injecting
// decorator and imports the demo firm and the other firm.
func seeded(t *testing.T) (*storetest.Faulty, access.Funnel) {
	t.Helper()
	fs, err := filestore.Open(filepath.Join(t.TempDir(), "custody.db"), filestore.Options{})
	if err != nil {
		t.Fatalf("filestore.Open: %v", err)
	}
	t.Cleanup(func() { fs.Close() })
	s := storetest.NewFaulty(fs)
	for _, load := range []func() (records.Fixture, error){seed.Demo, seed.OtherFirm} {
		f, err := load()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := records.Import(context.Background(), s, f, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
	}
	return s, access.New(records.NewRepo(s))
}

var (
	attorney  = access.Who{Tenant: seed.DemoTenant, Principal: seed.DemoAttorney}
	paralegal = access.Who{Tenant: seed.DemoTenant, Principal: seed.DemoParalegal}
	admin     = access.Who{Tenant: seed.DemoTenant, Principal: seed.DemoAdmin}
	// otherDana is a principal of the other firm with the same id as the
	// demo's attorney: ids are per tenant.
	otherDana = access.Who{Tenant: seed.OtherTenant, Principal: seed.DemoAttorney}
)

func allow(who access.Who, ids ...string) access.Who {
	who.AllowList = append([]string{}, ids...) // non-nil even when empty
	return who
}

func TestMatter(t *testing.T) {
	s, funnel := seeded(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		who    access.Who
		caseID string
		reads  int  // store reads the call may make
		ok     bool // reaches the matter
	}{
		{"owner on the team reaches the matter", attorney, seed.Harbor, 1, true},
		{"paralegal on the team reaches an unscreened matter", paralegal, seed.Alvarez, 1, true},
		{"admin on one team reaches that matter", admin, seed.Meridian, 1, true},
		{"a closed or open matter is reached the same way", attorney, seed.Meridian, 1, true},
		{"screened principal does not reach the matter although on its team", paralegal, seed.Harbor, 1, false},
		{"admin role grants nothing off the team", admin, seed.Alvarez, 1, false},
		{"another tenant's matter is not found", attorney, seed.Northwind, 1, false},
		{"the same principal id in another tenant reaches nothing of this one", otherDana, seed.Meridian, 1, false},
		{"the other tenant's own principal reaches its own matter", otherDana, seed.Northwind, 1, true},
		{"a nonexistent matter is not found", attorney, "m_does_not_exist", 1, false},
		{"allow-list listing the matter reaches it", allow(attorney, seed.Alvarez), seed.Alvarez, 1, true},
		{"allow-list not listing the matter refuses without a read", allow(attorney, seed.Alvarez), seed.Meridian, 0, false},
		{"an empty allow-list reaches nothing", allow(attorney), seed.Meridian, 0, false},
		{"allow-list does not override a screen", allow(paralegal, seed.Harbor), seed.Harbor, 1, false},
		{"a case id with # is not found without a read", attorney, seed.Meridian + "#DOC#x", 0, false},
		{"a case id with NUL is not found without a read", attorney, "m_meridian\x00", 0, false},
		{"a case id over 128 bytes is not found without a read", attorney, "m_" + strings.Repeat("x", 127), 0, false},
		{"an empty case id is not found without a read", attorney, "", 0, false},
		{"a missing principal reaches nothing", access.Who{Tenant: seed.DemoTenant}, seed.Meridian, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.Calls(storetest.MethodGet) + s.Calls(storetest.MethodQuery) + s.Calls(storetest.MethodBatchGet)
			m, err := funnel.Matter(ctx, tc.who, tc.caseID)
			if reads := s.Calls(storetest.MethodGet) + s.Calls(storetest.MethodQuery) + s.Calls(storetest.MethodBatchGet) - before; reads > tc.reads {
				t.Errorf("Matter made %d store reads, want at most %d", reads, tc.reads)
			}
			if tc.ok {
				if err != nil || m.ID != tc.caseID {
					t.Fatalf("Matter(%q) = %q, %v; want the matter", tc.caseID, m.ID, err)
				}
				return
			}
			// Every refusal is the one bare sentinel: same identity, same
			// text, nothing that says which rule applied.
			if err != access.ErrNoMatter {
				t.Fatalf("Matter(%q) = %v, want exactly access.ErrNoMatter", tc.caseID, err)
			}
			if m.ID != "" {
				t.Errorf("refused Matter returned a matter %q", m.ID)
			}
		})
	}
}

func TestRefusalsAreIndistinguishable(t *testing.T) {
	_, funnel := seeded(t)
	ctx := context.Background()
	refusals := []struct {
		who    access.Who
		caseID string
	}{
		{paralegal, seed.Harbor},                       // screened
		{attorney, seed.Northwind},                     // other tenant
		{attorney, "m_nope"},                           // nonexistent
		{allow(attorney, seed.Alvarez), seed.Meridian}, // outside the allow-list
		{allow(attorney), seed.Meridian},               // empty allow-list
		{attorney, "m#x"},                              // impossible id
	}
	var texts []string
	for _, r := range refusals {
		_, err := funnel.Matter(ctx, r.who, r.caseID)
		if !errors.Is(err, access.ErrNoMatter) {
			t.Fatalf("Matter(%q) = %v, want ErrNoMatter", r.caseID, err)
		}
		if r.caseID != "" && strings.Contains(err.Error(), r.caseID) {
			t.Errorf("refusal text %q quotes the case id", err)
		}
		texts = append(texts, err.Error())
	}
	for _, s := range texts[1:] {
		if s != texts[0] {
			t.Errorf("refusal texts differ: %q and %q", texts[0], s)
		}
	}
}

func TestMatters(t *testing.T) {
	_, funnel := seeded(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		who  access.Who
		want []string
	}{
		{"the attorney reaches every demo matter, sorted by id", attorney, seed.DemoMatters},
		{"the paralegal's list leaves out the screened matter", paralegal, []string{seed.Alvarez, seed.Meridian}},
		{"the admin reaches only the matter whose team lists her", admin, []string{seed.Meridian}},
		{"an allow-list intersects the reachable matters", allow(paralegal, seed.Harbor, seed.Meridian, "m_nope"), []string{seed.Meridian}},
		{"an empty allow-list reaches nothing", allow(attorney), nil},
		{"the other tenant sees only its own matter", otherDana, []string{seed.Northwind}},
		{"an unknown tenant has no matters", access.Who{Tenant: "nobody", Principal: seed.DemoAttorney}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := funnel.Matters(ctx, tc.who)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range ms {
				got = append(got, m.ID)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Matters mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStoreFailureIsNotARefusal: an unreadable store maps to UNAVAILABLE,
// never to "not found".
func TestStoreFailureIsNotARefusal(t *testing.T) {
	s, funnel := seeded(t)
	ctx := context.Background()
	s.Add(storetest.Rule{Err: store.ErrUnavailable})
	if _, err := funnel.Matter(ctx, attorney, seed.Meridian); !errors.Is(err, store.ErrUnavailable) || errors.Is(err, access.ErrNoMatter) {
		t.Errorf("Matter on a failing store = %v, want ErrUnavailable and not ErrNoMatter", err)
	}
	if ms, err := funnel.Matters(ctx, attorney); !errors.Is(err, store.ErrUnavailable) || ms != nil {
		t.Errorf("Matters on a failing store = %v, %v; want nil, ErrUnavailable", ms, err)
	}
}

func TestReaches(t *testing.T) {
	m := records.Matter{ID: "m1", Team: []string{"p1", "p2"}, Screened: []string{"p2"}}
	for _, tc := range []struct {
		who  access.Who
		want bool
	}{
		{access.Who{Principal: "p1"}, true},
		{access.Who{Principal: "p2"}, false},
		{access.Who{Principal: "p3"}, false},
		{access.Who{Principal: ""}, false},
		{access.Who{Principal: "p1", AllowList: []string{"m1"}}, true},
		{access.Who{Principal: "p1", AllowList: []string{"m2"}}, false},
		{access.Who{Principal: "p1", AllowList: []string{}}, false},
	} {
		if got := access.Reaches(tc.who, m); got != tc.want {
			t.Errorf("Reaches(%+v) = %v, want %v", tc.who, got, tc.want)
		}
	}
}

// TestItemsWithheldFromAClientSafeCallerDoNotExist: Document and Fact answer
// the one bare sentinel of their kind for an absent id, an impossible one
// and one withheld from a client-safe caller alike; Documents leaves the
// withheld out; a standard caller sees every privilege; a matter the caller
// does not reach is refused before any read.
func TestItemsWithheldFromAClientSafeCallerDoNotExist(t *testing.T) {
	s, funnel := seeded(t)
	ctx := context.Background()
	safe := attorney
	safe.ClientSafe = true
	alvarez, err := funnel.Matter(ctx, attorney, seed.Alvarez)
	if err != nil {
		t.Fatal(err)
	}
	harbor, err := funnel.Matter(ctx, attorney, seed.Harbor)
	if err != nil {
		t.Fatal(err)
	}
	const (
		privilegedDoc = "d_alv_intake_memo" // privileged
		plainDoc      = "d_alv_complaint"
		workProduct   = "f_alv_037" // work product
		plainFact     = "f_alv_001"
	)
	for _, tc := range []struct {
		name  string
		who   access.Who
		m     records.Matter
		doc   string
		fact  string
		reads int   // store reads each call may make
		want  error // nil: found
	}{
		{"a standard caller sees a privileged document and a work-product fact", attorney, alvarez, privilegedDoc, workProduct, 1, nil},
		{"a client-safe caller sees privilege none", safe, alvarez, plainDoc, plainFact, 1, nil},
		{"a withheld item does not exist for a client-safe caller", safe, alvarez, privilegedDoc, workProduct, 1, errNo},
		{"an absent item is not found", safe, alvarez, "d_alv_absent", "f_alv_999", 1, errNo},
		{"an item of another matter is not found in this one", attorney, alvarez, "d_hbr_complaint", "f_hbr_001", 1, errNo},
		{"an impossible id is not found without a read", attorney, alvarez, "d#x", "f\x00", 0, errNo},
		{"a matter the caller does not reach refuses before a read", paralegal, harbor, "d_hbr_complaint", "f_hbr_001", 0, access.ErrNoMatter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reads := func() int {
				return s.Calls(storetest.MethodGet) + s.Calls(storetest.MethodQuery) + s.Calls(storetest.MethodBatchGet)
			}
			before := reads()
			d, err := funnel.Document(ctx, tc.who, tc.m, tc.doc)
			if n := reads() - before; n > tc.reads {
				t.Errorf("Document made %d store reads, want at most %d", n, tc.reads)
			}
			check(t, "Document", err, d.ID, tc.doc, tc.want, access.ErrNoDocument)
			before = reads()
			f, err := funnel.Fact(ctx, tc.who, tc.m, tc.fact)
			if n := reads() - before; n > tc.reads {
				t.Errorf("Fact made %d store reads, want at most %d", n, tc.reads)
			}
			check(t, "Fact", err, f.ID, tc.fact, tc.want, access.ErrNoFact)
		})
	}
	docs, err := funnel.Documents(ctx, safe, alvarez)
	if err != nil {
		t.Fatal(err)
	}
	all, err := funnel.Documents(ctx, attorney, alvarez)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 || len(docs) >= len(all) {
		t.Errorf("Documents: %d for a client-safe caller of %d, want fewer but some", len(docs), len(all))
	}
	for _, d := range docs {
		if d.Privilege != records.PrivilegeNone {
			t.Errorf("Documents for a client-safe caller lists %s (%s)", d.ID, d.Privilege)
		}
	}
	if _, err := funnel.Documents(ctx, paralegal, harbor); err != access.ErrNoMatter {
		t.Errorf("Documents of a screened matter = %v, want access.ErrNoMatter", err)
	}
	s.Add(storetest.Rule{Err: store.ErrUnavailable})
	if _, err := funnel.Document(ctx, safe, alvarez, plainDoc); !errors.Is(err, store.ErrUnavailable) || errors.Is(err, access.ErrNoDocument) {
		t.Errorf("Document on a failing store = %v, want ErrUnavailable and not ErrNoDocument", err)
	}
	if _, err := funnel.Fact(ctx, safe, alvarez, plainFact); !errors.Is(err, store.ErrUnavailable) || errors.Is(err, access.ErrNoFact) {
		t.Errorf("Fact on a failing store = %v, want ErrUnavailable and not ErrNoFact", err)
	}
}

// errNo stands for the item kind's own sentinel in the table above.
var errNo = errors.New("the kind's not-found sentinel")

func check(t *testing.T, call string, err error, gotID, wantID string, want, sentinel error) {
	t.Helper()
	switch {
	case want == nil:
		if err != nil || gotID != wantID {
			t.Errorf("%s(%q) = %q, %v; want the item", call, wantID, gotID, err)
		}
	case want == errNo:
		// The bare sentinel: one identity and text, whatever the reason.
		if err != sentinel || gotID != "" {
			t.Errorf("%s(%q) = %q, %v; want exactly %v", call, wantID, gotID, err, sentinel)
		}
	default:
		if err != want {
			t.Errorf("%s(%q) = %v, want exactly %v", call, wantID, err, want)
		}
	}
}
