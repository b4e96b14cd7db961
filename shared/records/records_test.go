package records_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/filestore"
	"github.com/custodymcp/custody/shared/store/storetest"
)

var importedAt = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// newStore opens a fresh file engine in a temp dir behind the
// fault-injecting decorator (which passes everything through until a test
// adds a rule).
func newStore(t *testing.T) *storetest.Faulty {
	t.Helper()
	fs, err := filestore.Open(filepath.Join(t.TempDir(), "custody.db"), filestore.Options{})
	if err != nil {
		t.Fatalf("filestore.Open: %v", err)
	}
	t.Cleanup(func() { fs.Close() })
	return storetest.NewFaulty(fs)
}

func demo(t *testing.T) records.Fixture {
	t.Helper()
	f, err := seed.Demo()
	if err != nil {
		t.Fatalf("seed.Demo() = %v", err)
	}
	return f
}

// seeded returns a store holding the demo firm and the other firm.
func seeded(t *testing.T) (*storetest.Faulty, records.Fixture) {
	t.Helper()
	s := newStore(t)
	f := demo(t)
	other, err := seed.OtherFirm()
	if err != nil {
		t.Fatalf("seed.OtherFirm() = %v", err)
	}
	for _, fx := range []records.Fixture{f, other} {
		if _, err := records.Import(context.Background(), s, fx, importedAt); err != nil {
			t.Fatalf("Import(%s) = %v", fx.Tenant.ID, err)
		}
	}
	return s, f
}

func TestValidID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"m_meridian", true},
		{"d-1.2", true},
		{"é", true},
		{strings.Repeat("a", records.MaxIDLen), true},
		{"", false},
		{strings.Repeat("a", records.MaxIDLen+1), false},
		{"m#x", false},
		{"m\x00x", false},
		{"m\nx", false},
		{"\xff", false},
	} {
		if got := records.ValidID(tc.id); got != tc.want {
			t.Errorf("ValidID(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

// TestSortKeysAreCleanPrefixes: a document prefix does not catch versions
// or chunks, and one document's chunk prefix does not catch another's.
func TestSortKeysAreCleanPrefixes(t *testing.T) {
	doc := records.DocumentKey("demo", "m", "d_a").SK
	others := []string{
		records.VersionKey("demo", "m", "d_a", 1).SK,
		records.ChunkKey("demo", "m", "d_a", 1, 1).SK,
		records.FactKey("demo", "m", "DOC").SK,
		records.DeadlineKey("demo", "m", "2026-01-01", "x").SK,
		records.NoteKey("demo", "m", importedAt, "x").SK,
	}
	for _, sk := range others {
		if strings.HasPrefix(sk, "DOC#") {
			t.Errorf("%q starts with the document prefix DOC#", sk)
		}
	}
	if !strings.HasPrefix(doc, "DOC#") {
		t.Errorf("document SK %q does not start with DOC#", doc)
	}
	a := records.ChunkKey("demo", "m", "d_a", 1, 7).SK
	ab := records.ChunkKey("demo", "m", "d_a_b", 1, 7).SK
	if prefix := strings.TrimSuffix(a, "00007"); strings.HasPrefix(ab, prefix) {
		t.Errorf("chunk of d_a_b %q matches the chunk prefix of d_a %q", ab, prefix)
	}
	if !(records.ChunkKey("demo", "m", "d", 1, 9).SK < records.ChunkKey("demo", "m", "d", 1, 10).SK) {
		t.Error("chunk 9 does not sort before chunk 10")
	}
	if !(records.VersionKey("demo", "m", "d", 9).SK < records.VersionKey("demo", "m", "d", 10).SK) {
		t.Error("version 9 does not sort before version 10")
	}
}

// TestNoteKeysSortByTime: RFC 3339 trims trailing zeros ("05Z" > "05.1Z" in
// byte order); the fixed-width layout keeps byte order equal to time order.
func TestNoteKeysSortByTime(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	times := []time.Time{base, base.Add(100 * time.Millisecond), base.Add(time.Second), base.Add(time.Nanosecond)}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(times); i++ {
		a := records.NoteKey("demo", "m", times[i-1], "z").SK
		b := records.NoteKey("demo", "m", times[i], "a").SK
		if a >= b {
			t.Errorf("NoteKey(%v) = %q does not sort before NoteKey(%v) = %q", times[i-1], a, times[i], b)
		}
	}
}

func TestFactVerifiedOnlyByLatestConfirmedCheck(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	confirmed := records.Check{Method: "m", CheckedBy: "p", CheckedAt: t0, Result: records.CheckConfirmed}
	refuted := records.Check{Method: "m", CheckedBy: "p", CheckedAt: t0.Add(time.Hour), Result: records.CheckRefuted}
	laterConfirmed := confirmed
	laterConfirmed.CheckedAt = t0.Add(2 * time.Hour)
	for _, tc := range []struct {
		name   string
		checks []records.Check
		want   bool
	}{
		{"no check is never verified", nil, false},
		{"a confirmed check verifies", []records.Check{confirmed}, true},
		{"a later refutation withdraws it", []records.Check{confirmed, refuted}, false},
		{"order in the slice does not matter", []records.Check{refuted, confirmed}, false},
		{"a later confirmation restores it", []records.Check{confirmed, refuted, laterConfirmed}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := records.Fact{Checks: tc.checks}
			if got := f.Verified(); got != tc.want {
				t.Errorf("Verified() = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestReadsReturnWhatWasImported reads every collection of every demo matter
// back from the file engine and compares it with the fixture.
func TestReadsReturnWhatWasImported(t *testing.T) {
	s, f := seeded(t)
	r := records.NewRepo(s)
	ctx := context.Background()

	tn, err := r.Tenant(ctx, "demo")
	if err != nil || tn.Name != f.Tenant.Name {
		t.Fatalf("Tenant(demo) = %+v, %v; want %q", tn, err, f.Tenant.Name)
	}
	ps, err := r.Principals(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	wantPs := slices.Clone(f.Principals)
	slices.SortFunc(wantPs, func(a, b records.Principal) int { return strings.Compare(a.ID, b.ID) })
	if diff := cmp.Diff(wantPs, ps); diff != "" {
		t.Errorf("Principals(demo) mismatch (-want +got):\n%s", diff)
	}
	p, err := r.Principal(ctx, "demo", seed.DemoParalegal)
	if err != nil || p.Role != records.RoleParalegal {
		t.Errorf("Principal(paralegal) = %+v, %v", p, err)
	}
	matters, err := r.Matters(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range matters {
		ids = append(ids, m.ID)
	}
	if diff := cmp.Diff(seed.DemoMatters, ids); diff != "" {
		t.Errorf("Matters(demo) ids mismatch (-want +got):\n%s", diff)
	}

	for _, m := range f.Matters {
		t.Run(m.ID, func(t *testing.T) {
			got, err := r.Matter(ctx, "demo", m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(m, got); diff != "" {
				t.Errorf("Matter mismatch (-want +got):\n%s", diff)
			}

			var wantDocs []records.Document
			wantChunks := map[string][]records.Chunk{}
			for _, d := range f.Documents {
				if d.Matter != m.ID {
					continue
				}
				wantDocs = append(wantDocs, d.Document)
				for _, v := range d.Versions {
					wantChunks[fmt.Sprintf("%s#%d", d.ID, v.Number)] = v.Chunks
				}
			}
			slices.SortFunc(wantDocs, func(a, b records.Document) int { return strings.Compare(a.ID, b.ID) })
			docs, err := r.Documents(ctx, "demo", m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantDocs, docs); diff != "" {
				t.Errorf("Documents mismatch (-want +got):\n%s", diff)
			}

			// Page through every version three chunks at a time.
			for _, d := range docs {
				vs, err := r.Versions(ctx, "demo", m.ID, d.ID)
				if err != nil || len(vs) != d.CurrentVersion {
					t.Fatalf("Versions(%s) = %d versions, %v; want %d", d.ID, len(vs), err, d.CurrentVersion)
				}
				for _, v := range vs {
					var got []records.Chunk
					from := 0
					for {
						page, err := r.Chunks(ctx, "demo", m.ID, d.ID, v.Number, from, 3)
						if err != nil {
							t.Fatal(err)
						}
						got = append(got, page.Chunks...)
						if !page.More {
							if page.NextSeq != 0 {
								t.Errorf("last page has NextSeq %d", page.NextSeq)
							}
							break
						}
						from = page.NextSeq
					}
					if diff := cmp.Diff(wantChunks[fmt.Sprintf("%s#%d", d.ID, v.Number)], got); diff != "" {
						t.Errorf("Chunks(%s v%d) mismatch (-want +got):\n%s", d.ID, v.Number, diff)
					}
				}
			}

			n := 0
			for c, err := range r.AllChunks(ctx, "demo", m.ID) {
				if err != nil {
					t.Fatal(err)
				}
				if c.Matter != m.ID {
					t.Errorf("AllChunks yielded a chunk of matter %s", c.Matter)
				}
				n++
			}
			total := 0
			for _, cs := range wantChunks {
				total += len(cs)
			}
			if n != total {
				t.Errorf("AllChunks yielded %d chunks, want %d", n, total)
			}

			var wantFacts []records.Fact
			for _, x := range f.Facts {
				if x.Matter == m.ID {
					wantFacts = append(wantFacts, x)
				}
			}
			facts, err := r.Facts(ctx, "demo", m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantFacts, facts); diff != "" {
				t.Errorf("Facts mismatch (-want +got):\n%s", diff)
			}
			one, err := r.Fact(ctx, "demo", m.ID, wantFacts[0].ID)
			if err != nil || one.ID != wantFacts[0].ID {
				t.Errorf("Fact(%s) = %v, %v", wantFacts[0].ID, one.ID, err)
			}

			dls, err := r.Deadlines(ctx, "demo", m.ID)
			if err != nil || len(dls) < 4 {
				t.Fatalf("Deadlines = %d, %v", len(dls), err)
			}
			if !slices.IsSortedFunc(dls, func(a, b records.Deadline) int { return strings.Compare(a.Due, b.Due) }) {
				t.Errorf("Deadlines are not ordered by due date")
			}
			notes, err := r.Notes(ctx, "demo", m.ID)
			if err != nil || len(notes) < 3 {
				t.Fatalf("Notes = %d, %v", len(notes), err)
			}
			if !slices.IsSortedFunc(notes, func(a, b records.Note) int { return b.CreatedAt.Compare(a.CreatedAt) }) {
				t.Errorf("Notes are not newest first")
			}
		})
	}
}

func TestAbsentRowsAreNotFoundAndEmptyCollectionsAreNil(t *testing.T) {
	s, _ := seeded(t)
	r := records.NewRepo(s)
	ctx := context.Background()
	if _, err := r.Matter(ctx, "demo", "m_nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Matter(m_nope) = %v, want ErrNotFound", err)
	}
	if _, err := r.Matter(ctx, "other", seed.Meridian); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Matter(other tenant, m_meridian) = %v, want ErrNotFound", err)
	}
	if _, err := r.Document(ctx, "demo", seed.Alvarez, "d_mer_msa"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Document of another matter = %v, want ErrNotFound", err)
	}
	if _, err := r.Fact(ctx, "demo", seed.Alvarez, "f_nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Fact(f_nope) = %v, want ErrNotFound", err)
	}
	facts, err := r.Facts(ctx, "demo", "m_nope")
	if err != nil || facts != nil {
		t.Errorf("Facts(m_nope) = %v, %v; want nil, nil (read, empty)", facts, err)
	}
	page, err := r.Chunks(ctx, "demo", seed.Meridian, "d_mer_msa", 9, 0, 10)
	if err != nil || len(page.Chunks) != 0 || page.More {
		t.Errorf("Chunks(absent version) = %+v, %v; want an empty page", page, err)
	}
	if _, err := r.Chunks(ctx, "demo", seed.Meridian, "d_mer_msa", 1, 0, 0); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Chunks(limit 0) = %v, want ErrInvalid", err)
	}
}

// TestInvalidIDsReadNothing: an id that cannot be stored is "not found"
// without a store call, so a '#' cannot reach another kind of row.
func TestInvalidIDsReadNothing(t *testing.T) {
	s, _ := seeded(t)
	r := records.NewRepo(s)
	ctx := context.Background()
	before := s.Calls(storetest.MethodGet) + s.Calls(storetest.MethodQuery)
	for _, err := range []error{
		func() error { _, err := r.Matter(ctx, "demo", "m_meridian#x"); return err }(),
		func() error { _, err := r.Document(ctx, "demo", seed.Meridian, "d_mer_msa#V#0001"); return err }(),
		func() error { _, err := r.Facts(ctx, "demo#M#m_meridian", "x"); return err }(),
		func() error { _, err := r.Tenant(ctx, "demo\x00"); return err }(),
	} {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("read with an invalid id = %v, want ErrNotFound", err)
		}
	}
	if after := s.Calls(storetest.MethodGet) + s.Calls(storetest.MethodQuery); after != before {
		t.Errorf("reads with invalid ids made %d store calls, want 0", after-before)
	}
}

// TestUnreadableIsNotEmpty: a store failure surfaces as ErrUnavailable,
// never as an empty collection (docs/contracts.md §1 read_state).
func TestUnreadableIsNotEmpty(t *testing.T) {
	s, _ := seeded(t)
	r := records.NewRepo(s)
	ctx := context.Background()
	s.Add(storetest.Rule{Err: store.ErrUnavailable})
	checks := map[string]error{}
	checks["Matter"] = func() error { _, err := r.Matter(ctx, "demo", seed.Meridian); return err }()
	checks["Matters"] = func() error { _, err := r.Matters(ctx, "demo"); return err }()
	checks["Documents"] = func() error { _, err := r.Documents(ctx, "demo", seed.Meridian); return err }()
	checks["Chunks"] = func() error { _, err := r.Chunks(ctx, "demo", seed.Meridian, "d_mer_msa", 1, 0, 5); return err }()
	checks["Facts"] = func() error { _, err := r.Facts(ctx, "demo", seed.Meridian); return err }()
	checks["Deadlines"] = func() error { _, err := r.Deadlines(ctx, "demo", seed.Meridian); return err }()
	checks["Notes"] = func() error { _, err := r.Notes(ctx, "demo", seed.Meridian); return err }()
	checks["AllChunks"] = func() error {
		for _, err := range r.AllChunks(ctx, "demo", seed.Meridian) {
			if err != nil {
				return err
			}
		}
		return nil
	}()
	for name, err := range checks {
		if !errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s on a failing store = %v, want ErrUnavailable", name, err)
		}
	}
}

// TestOneQueryPerCollection pins the read cost: one store query per
// collection of the demo's size, no N+1.
func TestOneQueryPerCollection(t *testing.T) {
	s, _ := seeded(t)
	r := records.NewRepo(s)
	ctx := context.Background()
	for name, read := range map[string]func() error{
		"Matters":   func() error { _, err := r.Matters(ctx, "demo"); return err },
		"Documents": func() error { _, err := r.Documents(ctx, "demo", seed.Meridian); return err },
		"Facts":     func() error { _, err := r.Facts(ctx, "demo", seed.Meridian); return err },
		"Deadlines": func() error { _, err := r.Deadlines(ctx, "demo", seed.Meridian); return err },
		"Notes":     func() error { _, err := r.Notes(ctx, "demo", seed.Meridian); return err },
	} {
		before := s.Calls(storetest.MethodQuery)
		if err := read(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n := s.Calls(storetest.MethodQuery) - before; n != 1 {
			t.Errorf("%s made %d queries, want 1", name, n)
		}
	}
}

// TestAllChunksPagesPastTheQueryLimit writes more chunks than one query
// returns and reads them all, in order, with the minimum number of queries.
func TestAllChunksPagesPastTheQueryLimit(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	const n = store.MaxQueryLimit + 37
	var ops []store.Op
	flush := func() {
		if len(ops) > 0 {
			if err := s.Transact(ctx, ops); err != nil {
				t.Fatal(err)
			}
			ops = nil
		}
	}
	for i := 1; i <= n; i++ {
		it, err := records.ChunkItem("t", records.Chunk{
			DocumentID: "d_big", Matter: "m_big", Version: 1, Seq: i, PageStart: i, PageEnd: i,
			Text: fmt.Sprintf("page %d", i), Privilege: records.PrivilegeNone, CreatedAt: importedAt, UpdatedAt: importedAt,
		}, n)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, store.PutOp(it))
		if len(ops) == store.MaxTransactItems {
			flush()
		}
	}
	flush()
	r := records.NewRepo(s)
	before := s.Calls(storetest.MethodQuery)
	seq := 0
	for c, err := range r.AllChunks(ctx, "t", "m_big") {
		if err != nil {
			t.Fatal(err)
		}
		if c.Seq != seq+1 {
			t.Fatalf("AllChunks yielded seq %d after %d", c.Seq, seq)
		}
		seq = c.Seq
	}
	if seq != n {
		t.Errorf("AllChunks yielded %d chunks, want %d", seq, n)
	}
	if q := s.Calls(storetest.MethodQuery) - before; q != 2 {
		t.Errorf("AllChunks made %d queries for %d chunks, want 2", q, n)
	}
	// A consumer that stops early stops the reads.
	before = s.Calls(storetest.MethodQuery)
	for range r.AllChunks(ctx, "t", "m_big") {
		break
	}
	if q := s.Calls(storetest.MethodQuery) - before; q != 1 {
		t.Errorf("AllChunks stopped after one chunk made %d queries, want 1", q)
	}
	page, err := r.Chunks(ctx, "t", "m_big", "d_big", 1, n-1, 5)
	if err != nil || len(page.Chunks) != 2 || page.More {
		t.Errorf("Chunks(from %d, limit 5) = %d chunks, more %v, %v; want the last 2 and no more", n-1, len(page.Chunks), page.More, err)
	}
}

func TestCorruptRowMakesTheCollectionUnreadable(t *testing.T) {
	s, _ := seeded(t)
	ctx := context.Background()
	k := records.FactKey("demo", seed.Meridian, "f_mer_000")
	if err := s.Put(ctx, store.Item{PK: k.PK, SK: k.SK, Version: 1, Attrs: map[string]any{records.AttrData: []byte("{not json")}}); err != nil {
		t.Fatal(err)
	}
	facts, err := records.NewRepo(s).Facts(ctx, "demo", seed.Meridian)
	if !errors.Is(err, records.ErrCorrupt) || facts != nil {
		t.Errorf("Facts with a corrupt row = %d facts, %v; want nil, ErrCorrupt", len(facts), err)
	}
}

func TestImportIsIdempotent(t *testing.T) {
	ctx := context.Background()
	f := demo(t)

	t.Run("a second run finds its marker and writes nothing", func(t *testing.T) {
		s := newStore(t)
		first, err := records.Import(ctx, s, f, importedAt)
		if err != nil || first.Written != first.Rows || first.Skipped != 0 {
			t.Fatalf("first Import = %+v, %v", first, err)
		}
		puts := s.Calls(storetest.MethodTransact) + s.Calls(storetest.MethodPut)
		second, err := records.Import(ctx, s, f, importedAt.Add(time.Hour))
		if err != nil || !second.AlreadyImported || second.Written != 0 {
			t.Fatalf("second Import = %+v, %v", second, err)
		}
		if n := s.Calls(storetest.MethodTransact) + s.Calls(storetest.MethodPut) - puts; n != 0 {
			t.Errorf("second Import made %d writes, want 0", n)
		}
	})

	t.Run("a run after a failure finishes without duplicating or overwriting", func(t *testing.T) {
		s := newStore(t)
		s.Add(storetest.Rule{Method: storetest.MethodTransact, Nth: 7, Err: store.ErrUnavailable})
		if _, err := records.Import(ctx, s, f, importedAt); !errors.Is(err, store.ErrUnavailable) {
			t.Fatalf("Import with a failing 7th transaction = %v, want ErrUnavailable", err)
		}
		s.Reset()
		// An edit made between the runs survives the second run.
		edited := f.Facts[0]
		edited.Posture = records.PostureDisputed
		it, err := records.FactItem("demo", edited)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, it); err != nil {
			t.Fatal(err)
		}
		st, err := records.Import(ctx, s, f, importedAt)
		if err != nil || st.AlreadyImported || st.Written+st.Skipped != st.Rows || st.Skipped == 0 {
			t.Fatalf("re-run Import = %+v, %v; want every row written or skipped", st, err)
		}
		got, err := records.NewRepo(s).Fact(ctx, "demo", edited.Matter, edited.ID)
		if err != nil || got.Posture != records.PostureDisputed {
			t.Errorf("edited fact after re-run = %v, %v; want the edit kept", got.Posture, err)
		}
		facts := 0
		for _, m := range f.Matters {
			fs, err := records.NewRepo(s).Facts(ctx, "demo", m.ID)
			if err != nil {
				t.Fatal(err)
			}
			facts += len(fs)
		}
		if facts != len(f.Facts) {
			t.Errorf("%d facts after re-run, want %d", facts, len(f.Facts))
		}
	})

	t.Run("an invalid fixture writes nothing", func(t *testing.T) {
		s := newStore(t)
		bad := f.Normalize(time.Time{})
		bad.Facts = slices.Clone(bad.Facts)
		for i, x := range bad.Facts {
			if len(x.Assertions) > 0 {
				x.Assertions = slices.Clone(x.Assertions)
				x.Assertions[0].Quote += " (not in the source)"
				bad.Facts[i] = x
				break
			}
		}
		if _, err := records.Import(ctx, s, bad, importedAt); !errors.Is(err, records.ErrInvalid) {
			t.Fatalf("Import(fixture with a false quote) = %v, want ErrInvalid", err)
		}
		if n := s.Calls(storetest.MethodTransact) + s.Calls(storetest.MethodPut); n != 0 {
			t.Errorf("invalid Import made %d writes, want 0", n)
		}
	})
}

func TestImportFillsMissingTimesFromNow(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	f := records.Fixture{
		Tenant:     records.Tenant{ID: "t1", Name: "Small Firm"},
		Principals: []records.Principal{{ID: "p1", Name: "A", Role: records.RoleAttorney, Licensed: true}},
		Matters:    []records.Matter{{ID: "m1", Name: "M", Client: "C", Status: records.MatterOpen, Team: []string{"p1"}, OpenedOn: "2026-01-02"}},
		Notes:      []records.Note{{ID: "n1", Matter: "m1", Author: "p1", Body: "hello", Privilege: records.PrivilegeNone}},
	}
	if _, err := records.Import(ctx, s, f, importedAt); err != nil {
		t.Fatal(err)
	}
	notes, err := records.NewRepo(s).Notes(ctx, "t1", "m1")
	if err != nil || len(notes) != 1 || !notes[0].CreatedAt.Equal(importedAt) || !notes[0].UpdatedAt.Equal(importedAt) {
		t.Errorf("Notes = %+v, %v; want one note created and updated at %v", notes, err, importedAt)
	}
}

func TestADocumentOfAnUnknownKindIsRefused(t *testing.T) {
	f := demo(t)
	f.Documents[0].Kind = "bogus"
	if _, err := records.Import(context.Background(), newStore(t), f, importedAt); !errors.Is(err, records.ErrInvalid) {
		t.Errorf("Import(a document of kind bogus) = %v, want ErrInvalid", err)
	}
}
