package seed_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/store/filestore"
)

func demo(t *testing.T) records.Fixture {
	t.Helper()
	f, err := seed.Demo()
	if err != nil {
		t.Fatalf("seed.Demo() = %v", err)
	}
	return f
}

// TestEveryQuoteAppearsVerbatimOnItsCitedPages checks each assertion
// against the text of the cited version's chunks that lie on the cited
// pages, independently of records.QuoteOnPages.
func TestEveryQuoteAppearsVerbatimOnItsCitedPages(t *testing.T) {
	for _, load := range []func() (records.Fixture, error){seed.Demo, seed.OtherFirm} {
		f, err := load()
		if err != nil {
			t.Fatal(err)
		}
		docs := map[string]records.FixtureDocument{}
		for _, d := range f.Documents {
			docs[d.ID] = d
		}
		n := 0
		for _, x := range f.Facts {
			for i, a := range x.Assertions {
				d, ok := docs[a.DocumentID]
				if !ok || d.Matter != x.Matter {
					t.Errorf("%s assertion %d cites %s, not a document of %s", x.ID, i, a.DocumentID, x.Matter)
					continue
				}
				if a.Version < 1 || a.Version > len(d.Versions) {
					t.Errorf("%s assertion %d cites version %d of %s, which has %d", x.ID, i, a.Version, d.ID, len(d.Versions))
					continue
				}
				found := false
				for _, c := range d.Versions[a.Version-1].Chunks {
					if c.PageStart >= a.PageStart && c.PageEnd <= a.PageEnd && strings.Contains(c.Text, a.Quote) {
						found = true
						break
					}
				}
				if !found {
					t.Errorf("%s assertion %d: quote %q is not on pages %d-%d of %s v%d", x.ID, i, a.Quote, a.PageStart, a.PageEnd, d.ID, a.Version)
				}
				n++
			}
		}
		if n == 0 {
			t.Errorf("tenant %s: no assertions checked", f.Tenant.ID)
		}
	}
}

func TestChunksLieOnTheirVersionsPages(t *testing.T) {
	f := demo(t)
	for _, d := range f.Documents {
		for _, v := range d.Versions {
			prevEnd := 0
			for _, c := range v.Chunks {
				if c.PageStart < 1 || c.PageEnd > v.PageCount || c.PageStart > c.PageEnd || c.PageStart < prevEnd {
					t.Errorf("%s v%d chunk %d: pages %d-%d of %d (previous chunk ended on %d)", d.ID, v.Number, c.Seq, c.PageStart, c.PageEnd, v.PageCount, prevEnd)
				}
				prevEnd = c.PageEnd
			}
			if len(v.Chunks) == 0 || v.Chunks[0].PageStart != 1 || prevEnd != v.PageCount {
				t.Errorf("%s v%d: chunks do not run from page 1 to page %d", d.ID, v.Number, v.PageCount)
			}
			sum := sha256.Sum256([]byte(seed.VersionText(v.Chunks)))
			if got := hex.EncodeToString(sum[:]); got != v.SHA256 {
				t.Errorf("%s v%d: sha256 %s, want the digest of VersionText %s", d.ID, v.Number, v.SHA256, got)
			}
		}
	}
}

// TestDemoIsBigEnoughToPage pins the sizes docs/decisions.md asks of the seed
// (≥ 3 matters, ≥ 40 documents, ≥ 300 chunks, ≥ 150 facts) and the spread
// the read tools need to show.
func TestDemoIsBigEnoughToPage(t *testing.T) {
	f := demo(t)
	chunks, currentChunks := 0, 0
	for _, d := range f.Documents {
		for _, v := range d.Versions {
			chunks += len(v.Chunks)
			if v.Number == d.CurrentVersion {
				currentChunks += len(v.Chunks)
			}
		}
	}
	if len(f.Matters) < 3 || len(f.Documents) < 40 || currentChunks < 300 || len(f.Facts) < 150 {
		t.Errorf("demo has %d matters, %d documents, %d chunks (%d current), %d facts; want ≥ 3, 40, 300, 150",
			len(f.Matters), len(f.Documents), chunks, currentChunks, len(f.Facts))
	}
	multiVersion := 0
	for _, d := range f.Documents {
		if len(d.Versions) > 1 {
			multiVersion++
		}
	}
	if multiVersion < 3 {
		t.Errorf("%d documents have more than one version, want ≥ 3", multiVersion)
	}

	postures := map[records.Posture]int{}
	var ungrounded, verified, refutedOnly, proposalsDiffering, oneToThree int
	for _, x := range f.Facts {
		postures[x.Posture]++
		if !x.Grounded() {
			ungrounded++
		}
		if x.Verified() {
			verified++
		} else if len(x.Checks) > 0 {
			refutedOnly++
		}
		if x.ModelProposal != nil && x.ModelProposal.Posture != x.Posture {
			proposalsDiffering++
		}
		if n := len(x.Assertions); n >= 1 && n <= 3 {
			oneToThree++
		}
	}
	if oneToThree*10 < len(f.Facts)*7 {
		t.Errorf("%d of %d facts have 1 to 3 assertions; want most", oneToThree, len(f.Facts))
	}
	for _, p := range records.Postures {
		if postures[p] < 5 {
			t.Errorf("%d facts are %s, want ≥ 5", postures[p], p)
		}
	}
	if ungrounded < 5 || verified < 3 || refutedOnly < 1 || proposalsDiffering < 5 {
		t.Errorf("ungrounded %d, verified %d, checked but not verified %d, differing model proposals %d; want ≥ 5, 3, 1, 5",
			ungrounded, verified, refutedOnly, proposalsDiffering)
	}
	if grounded := len(f.Facts) - ungrounded; grounded*10 < len(f.Facts)*8 {
		t.Errorf("only %d of %d facts are grounded; most should be", grounded, len(f.Facts))
	}

	privileges := map[string]map[records.Privilege]int{"document": {}, "fact": {}, "note": {}}
	for _, d := range f.Documents {
		privileges["document"][d.Privilege]++
	}
	for _, x := range f.Facts {
		privileges["fact"][x.Privilege]++
	}
	for _, n := range f.Notes {
		privileges["note"][n.Privilege]++
	}
	for kind, by := range privileges {
		if by[records.PrivilegeNone] <= by[records.PrivilegePrivileged]+by[records.PrivilegeWorkProduct] ||
			by[records.PrivilegePrivileged] == 0 || by[records.PrivilegeWorkProduct] == 0 {
			t.Errorf("%s privileges %v: want most none and some of each other value", kind, by)
		}
	}

	for _, m := range f.Matters {
		var dls, dlCiting, notes int
		for _, d := range f.Deadlines {
			if d.Matter == m.ID {
				dls++
				if d.Rule != "" && d.SourceDocumentID != "" && d.SourcePage > 0 {
					dlCiting++
				}
			}
		}
		for _, n := range f.Notes {
			if n.Matter == m.ID {
				notes++
			}
		}
		if dls < 4 || dlCiting < 2 || notes < 3 {
			t.Errorf("%s: %d deadlines (%d citing a rule and a page), %d notes; want ≥ 4 (2), 3", m.ID, dls, dlCiting, notes)
		}
	}
}

// TestDemoTimesVaryAndPrecedeNovember2026: as_of is the newest updated_at
// behind an answer, so the rows must not share one clock.
func TestDemoTimesVaryAndPrecedeNovember2026(t *testing.T) {
	f := demo(t)
	limit := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	seen := map[time.Time]int{}
	rows := 0
	add := func(id string, created, updated time.Time) {
		rows++
		seen[updated]++
		if updated.Before(created) || !updated.Before(limit) || created.IsZero() {
			t.Errorf("%s: created %v, updated %v", id, created, updated)
		}
	}
	for _, d := range f.Documents {
		add(d.ID, d.CreatedAt, d.UpdatedAt)
	}
	for _, x := range f.Facts {
		add(x.ID, x.CreatedAt, x.UpdatedAt)
	}
	for _, d := range f.Deadlines {
		add(d.ID, d.CreatedAt, d.UpdatedAt)
	}
	for _, n := range f.Notes {
		add(n.ID, n.CreatedAt, n.UpdatedAt)
	}
	if len(seen)*10 < rows*9 {
		t.Errorf("%d distinct updated_at values over %d rows; want nearly all distinct", len(seen), rows)
	}
}

func TestDemoTeamsAndScreens(t *testing.T) {
	f := demo(t)
	want := map[string]struct{ team, screened []string }{
		seed.Meridian: {[]string{seed.DemoAttorney, seed.DemoParalegal, seed.DemoAdmin}, nil},
		seed.Alvarez:  {[]string{seed.DemoAttorney, seed.DemoParalegal}, nil},
		seed.Harbor:   {[]string{seed.DemoAttorney, seed.DemoParalegal}, []string{seed.DemoParalegal}},
	}
	var ids []string
	for _, m := range f.Matters {
		ids = append(ids, m.ID)
		w := want[m.ID]
		if !slices.Equal(m.Team, w.team) || !slices.Equal(m.Screened, w.screened) {
			t.Errorf("%s: team %v screened %v; want %v, %v", m.ID, m.Team, m.Screened, w.team, w.screened)
		}
		if m.SourceDocumentID == "" {
			t.Errorf("%s has no source document", m.ID)
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, seed.DemoMatters) {
		t.Errorf("matters %v, want DemoMatters %v", ids, seed.DemoMatters)
	}
	// The screened paralegal authored nothing in the matter.
	for _, n := range f.Notes {
		if n.Matter == seed.Harbor && n.Author == seed.DemoParalegal {
			t.Errorf("note %s in the screened matter is by the screened paralegal", n.ID)
		}
	}
}

func TestFixturesImportIntoTheFileEngine(t *testing.T) {
	fs, err := filestore.Open(filepath.Join(t.TempDir(), "custody.db"), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, load := range []func() (records.Fixture, error){seed.Demo, seed.OtherFirm, seed.Demo} {
		f, err := load()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := records.Import(ctx, fs, f, now); err != nil {
			t.Fatalf("Import(%s) = %v", f.Tenant.ID, err)
		}
	}
	other, err := records.NewRepo(fs).Matters(ctx, seed.OtherTenant)
	if err != nil || len(other) != 1 || other[0].ID != seed.Northwind {
		t.Errorf("Matters(other) = %v, %v; want only %s", other, err, seed.Northwind)
	}
}

// TestCommittedJSONIsTheGeneratorsOutput: the fixtures are generated, never
// edited by hand.
func TestCommittedJSONIsTheGeneratorsOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator with the go command")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is not on PATH: this test runs the generator with it")
	}
	dir := t.TempDir()
	cmd := exec.Command(gobin, "run", "./gen", "-out", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./gen: %v\n%s", err, out)
	}
	for _, name := range []string{"demo.json", "otherfirm.json"} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the generator's output; run go generate ./shared/records/seed", name)
		}
	}
}
