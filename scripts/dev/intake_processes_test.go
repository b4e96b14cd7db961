package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/intake/intaketest"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/uploads"
)

// Intake on the dev server, as a new user meets it (issue 18): a clean
// upload becomes a document pending privilege review that nothing serves;
// custodyctl documents pending lists it, documents review serves it, and
// search_documents then finds its page's phrase.

// settled polls the upload's state until intake has taken it (or the
// gate held it), every interval, for up to timeout.
func (l *devLane) settled(t testing.TB, uploadID string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := l.state(t, uploadID)
		if s != string(uploads.StateScanPending) && s != string(uploads.StateClean) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("upload %s is still %s after %v", uploadID, s, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reader is a session of a key of the demo attorney that reads documents
// (the lane's key holds read and write, not docs:read).
type reader struct{ url, key, sid string }

func (l *devLane) reader(t testing.TB) reader {
	t.Helper()
	out, _ := l.ctl("keys", "mint", "--owner", seed.DemoAttorney, "--scopes", "read docs:read", "--label", "reader",
		"--rate-read", "100000", "--rate-expensive", "100000")
	key := strings.TrimSpace(out)
	return reader{url: l.url, key: key, sid: initSession(t, l.url, key)}
}

func (r reader) call(t testing.TB, tool string, args map[string]any) map[string]any {
	t.Helper()
	_, _, msg := mcpPost(t, r.url, r.key, r.sid, toolCall(tool, args))
	return msg
}

// search is search_documents on Alvarez: its hits' document ids and
// page_starts.
func (r reader) search(t testing.TB, query string) (docs []string, pages []float64) {
	t.Helper()
	msg := r.call(t, "search_documents", map[string]any{"query": query, "case_id": seed.Alvarez})
	hits, _ := structured(t, msg)["results"].([]any)
	for _, h := range hits {
		m := h.(map[string]any)
		docs = append(docs, m["document_id"].(string))
		pages = append(pages, m["page_start"].(float64))
	}
	return docs, pages
}

var pendingDoc = regexp.MustCompile(`(?m)^(d_up_[0-9a-f]{32})\s`)

func TestTheDevServersIntakeTakesAnUploadIntoReviewAndSearchFindsItsPageOnceReviewed(t *testing.T) {
	devBin, ctlBin, _ := buildTools(t)
	l := startDevLane(t, devBin, ctlBin)
	id := l.deposit(t, "Site inspection.pdf", intaketest.ThreePages(t))
	if got := l.settled(t, id, 2*time.Minute); got != string(uploads.StateInReview) {
		t.Fatalf("the three-page PDF is %s, want in_review", got)
	}
	// Words of page 2's phrase that no seeded document holds (search ranks
	// passages matching any word).
	phrase := "periwinkle scaffolding"
	if !strings.Contains(intaketest.ThreePagePhrases[1], phrase) {
		t.Fatal("the phrase is not page 2's")
	}
	r := l.reader(t)
	if docs, _ := r.search(t, phrase); len(docs) != 0 {
		t.Fatalf("search_documents finds the pending document: %v", docs)
	}
	msg := r.call(t, "list_documents", map[string]any{"case_id": seed.Alvarez, "limit": 100})
	if listed := structured(t, msg); strings.Contains(strings.Join(strings.Fields(toJSON(t, listed)), ""), "d_up_") {
		t.Fatalf("list_documents lists the pending document")
	}
	out, _ := l.ctl("documents", "pending", "--case", seed.Alvarez)
	m := pendingDoc.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "Site inspection") || !strings.Contains(out, "complete") {
		t.Fatalf("custodyctl documents pending:\n%s\nwant the PDF, its text complete", out)
	}
	doc := m[1]
	msg = r.call(t, "get_document", map[string]any{"case_id": seed.Alvarez, "document_id": doc})
	if e, _ := structured(t, msg)["error"].(map[string]any); e["class"] != "NOT_FOUND" {
		t.Fatalf("get_document of the pending document = %v, want NOT_FOUND", structured(t, msg))
	}
	out, _ = l.ctl("documents", "review", doc, "--case", seed.Alvarez, "--by", seed.DemoAttorney, "--privilege", "none", "--title", "Site inspection report")
	if !strings.Contains(out, "reviewed "+doc) || !strings.Contains(out, "3 chunks") {
		t.Fatalf("custodyctl documents review said %q", out)
	}
	docs, pages := r.search(t, phrase)
	if len(docs) != 1 || docs[0] != doc || pages[0] != 2 {
		t.Fatalf("search_documents for page 2's phrase = %v pages %v, want %s page_start 2", docs, pages, doc)
	}
	msg = r.call(t, "search_in_document", map[string]any{"case_id": seed.Alvarez, "document_id": doc, "query": "lodestone ledger"})
	res, _ := structured(t, msg)["results"].([]any)
	if len(res) != 1 || res[0].(map[string]any)["page_start"] != float64(3) {
		t.Errorf("search_in_document for page 3's phrase = %v", res)
	}
}

// custodyctl import DIR against the running dev server: regular files
// through the same gate and intake, a symbolic link skipped and reported,
// the EICAR file infected and not taken in while the others continue, a
// second import skips what is already a version; with the scanner OFF the
// import is refused before anything is written.
func TestCustodyctlImportOfAFolderGoesThroughTheGateAndIntake(t *testing.T) {
	devBin, ctlBin, _ := buildTools(t)
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "letters"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "inspection.pdf"), intaketest.ThreePages(t), 0o644))
	must(os.WriteFile(filepath.Join(dir, "letters", "demand.pdf"), intaketest.PDF(t, []string{"Demand for the quartermaster's ledger."}), 0o644))
	must(os.WriteFile(filepath.Join(dir, "notes.md"), []byte("# Call notes\n\nThe gantry crew was told to stand down.\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "eicar.pdf"), scan.EICAR(), 0o644))
	must(os.Symlink(filepath.Join(dir, "inspection.pdf"), filepath.Join(dir, "link.pdf")))

	t.Run("the scanner OFF refuses before anything is written", func(t *testing.T) {
		l := startDevLane(t, devBin, ctlBin, "-scanner", "off")
		out, err := l.ctlErr("import", dir, "--matter", seed.Alvarez, "--by", seed.DemoAttorney)
		if err == nil || !strings.Contains(err.Error()+out, "scanner is OFF") {
			t.Fatalf("import with the scanner off = %v\n%s", err, out)
		}
		if pending, _ := l.ctl("documents", "pending", "--case", seed.Alvarez); strings.Contains(pending, "d_up_") {
			t.Errorf("documents after a refused import:\n%s", pending)
		}
	})
	t.Run("a paralegal is refused", func(t *testing.T) {
		l := startDevLane(t, devBin, ctlBin)
		if _, err := l.ctlErr("import", dir, "--case", seed.Alvarez, "--by", seed.DemoParalegal); err == nil {
			t.Fatal("a paralegal's import succeeded")
		}
	})
	l := startDevLane(t, devBin, ctlBin)
	out, _ := l.ctl("import", dir, "--matter", seed.Alvarez, "--by", seed.DemoAttorney)
	lines := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			lines[f[0]] = line
		}
	}
	for file, want := range map[string]string{
		"inspection.pdf": "clean", filepath.Join("letters", "demand.pdf"): "clean", "notes.md": "clean",
		"eicar.pdf": "infected", "link.pdf": "skipped",
	} {
		if f := strings.Fields(lines[file]); len(f) < 2 || f[1] != want {
			t.Errorf("%s: %q, want %s\n%s", file, lines[file], want, out)
		}
	}
	if !strings.Contains(lines["inspection.pdf"], "complete") || !strings.Contains(lines["link.pdf"], "symbolic link") {
		t.Errorf("the lines do not carry the text state or the skip's reason:\n%s", out)
	}
	pending, _ := l.ctl("documents", "pending", "--case", seed.Alvarez)
	if n := len(pendingDoc.FindAllString(pending, -1)); n != 3 {
		t.Errorf("%d documents pending after the import, want 3 (the EICAR file is not taken in):\n%s", n, pending)
	}
	again, _ := l.ctl("import", dir, "--matter", seed.Alvarez, "--by", seed.DemoAttorney)
	if strings.Count(again, "already a version") != 3 {
		t.Errorf("a second import:\n%s\nwant the three taken files skipped as already versions", again)
	}
}

// ctlErr runs custodyctl and returns its stdout and its failure (with
// its stderr).
func (l *devLane) ctlErr(args ...string) (string, error) {
	cmd := exec.Command(l.ctlBin, append([]string{"--data", l.data}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%w: %s", err, errOut.String())
	}
	return out.String(), nil
}

func toJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
