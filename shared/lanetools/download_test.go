package lanetools_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/downloads"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
)

// storedDocument writes a document of matter with one version whose file
// is stored in the record bucket, and returns the file's bytes.
func (e *laneEnv) storedDocument(t *testing.T, matter, id string, privilege records.Privilege, review records.ReviewState) []byte {
	t.Helper()
	ctx := context.Background()
	body := pattern(70_000, byte(len(id)))
	ref := blob.Stored(blob.NewID())
	if err := e.Engine.PutObject(ctx, ref, bytes.NewReader(body), blob.PutOptions{ContentType: "application/pdf"}); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	at := servertest.Epoch.Add(-time.Hour)
	doc := records.Document{ID: id, Matter: matter, Title: "Signed declaration", Kind: "declaration", Privilege: privilege,
		CurrentVersion: 1, PageCount: 1, SHA256: hex.EncodeToString(sum[:]), ReviewState: review, CreatedAt: at, UpdatedAt: at}
	ver := records.Version{DocumentID: id, Matter: matter, Number: 1, SHA256: doc.SHA256, PageCount: 1, SizeBytes: int64(len(body)),
		MediaType: "application/pdf", Filename: "Declaration of R. Alvarez.pdf", ObjectKey: ref.Key, CreatedAt: at, UpdatedAt: at}
	di, err := records.DocumentItem(seed.DemoTenant, doc)
	if err != nil {
		t.Fatal(err)
	}
	vi, err := records.VersionItem(seed.DemoTenant, ver)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.Transact(ctx, []store.Op{store.PutOp(di), store.PutOp(vi)}); err != nil {
		t.Fatal(err)
	}
	return body
}

// noRedirect is an HTTP client that shows redirects instead of following.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func fetch(t *testing.T, url string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := noRedirect.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

func downloadURL(t *testing.T, s *servertest.Session, args map[string]any) string {
	t.Helper()
	res := s.Tool(t, "get_document_download", args)
	if c := servertest.RefusalClass(res); c != "" {
		t.Fatalf("get_document_download = %s", c)
	}
	sc := servertest.Structured(t, res)
	u, _ := sc["url"].(string)
	if !strings.Contains(u, downloads.PathPrefix+downloads.TokenPrefix) {
		t.Fatalf("url = %q, want a /downloads/dlt_ link", u)
	}
	return u
}

// A download link (docs/contracts.md §5): needing no key, it answers 303 to
// a presigned GET that serves the version's file as an attachment, and the
// fetch is audited; expired, it is 404.
func TestADownloadLinkRedirectsToTheFileUntilItExpires(t *testing.T) {
	e := newLaneEnv(t, laneOptions{})
	body := e.storedDocument(t, seed.Alvarez, "d_alv_declaration", records.PrivilegeNone, "")
	res := e.Session.Tool(t, "get_document_download", map[string]any{"case_id": seed.Alvarez, "document_id": "d_alv_declaration"})
	sc := servertest.Structured(t, res)
	sum := sha256.Sum256(body)
	if sc["sha256"] != hex.EncodeToString(sum[:]) || sc["size_bytes"] != float64(len(body)) || sc["version"] != float64(1) ||
		sc["filename"] != "Declaration of R. Alvarez.pdf" || sc["verification_status"] == nil {
		t.Errorf("answer = %v, want the version's digest, size, filename and an attested envelope", sc)
	}
	link := sc["url"].(string)

	status, h, _ := fetch(t, link)
	if status != http.StatusSeeOther || !strings.Contains(h.Get("Location"), "X-Amz-Signature=") {
		t.Fatalf("GET the link = %d, Location %q; want 303 to a presigned GET", status, h.Get("Location"))
	}
	if h.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", h.Get("Cache-Control"))
	}
	status, fh, got := fetch(t, h.Get("Location"))
	if status != http.StatusOK || !bytes.Equal(got, body) || !strings.HasPrefix(fh.Get("Content-Disposition"), "attachment") {
		t.Errorf("GET the redirect = %d, %d bytes, %q; want 200, the file, an attachment", status, len(got), fh.Get("Content-Disposition"))
	}
	rows, err := audit.Day(context.Background(), e.Store, seed.DemoTenant, e.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	fetched := 0
	for _, r := range rows {
		if r.Method == downloads.Method && r.Outcome == audit.OutcomeOK && r.CredentialID == e.WriterID && r.Matter == seed.Alvarez {
			fetched++
		}
		if strings.Contains(r.RequestID+r.Method+r.Resource, "dlt_") {
			t.Errorf("an audit row holds the token: %+v", r)
		}
	}
	if fetched != 1 {
		t.Errorf("%d audit rows of the fetch, want 1", fetched)
	}

	e.Clock.Advance(downloads.LinkLife + time.Second)
	if status, _, _ := fetch(t, link); status != http.StatusNotFound {
		t.Errorf("GET the link after %v = %d, want 404", downloads.LinkLife, status)
	}
}

// What a download is refused (issue 16): a document pending review is
// NOT_FOUND, as one that does not exist; a privileged one is NOT_FOUND to
// a client-safe key; one without a stored file is NOT_PROVISIONED.
func TestDownloadsOfUnreviewedWithheldOrUnstoredDocumentsAreRefused(t *testing.T) {
	e := newLaneEnv(t, laneOptions{})
	e.storedDocument(t, seed.Alvarez, "d_alv_pending", records.PrivilegeNone, records.ReviewPending)
	e.storedDocument(t, seed.Alvarez, "d_alv_privileged", records.PrivilegePrivileged, "")
	clientSafe := e.Initialize(t, servertest.ClientSafe, rev)
	for _, c := range []struct {
		name    string
		s       *servertest.Session
		doc     string
		version int
		want    string
	}{
		{"a document pending review", e.Session, "d_alv_pending", 0, "NOT_FOUND"},
		{"a document that does not exist", e.Session, "d_alv_nothing", 0, "NOT_FOUND"},
		{"a version that does not exist", e.Session, "d_alv_privileged", 2, "NOT_FOUND"},
		{"a privileged document for a client-safe key", clientSafe, "d_alv_privileged", 0, "NOT_FOUND"},
		{"a seeded document without a stored file", e.Session, "d_alv_complaint", 1, "NOT_PROVISIONED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"case_id": seed.Alvarez, "document_id": c.doc}
			if c.version > 0 {
				args["version"] = c.version
			}
			if got := servertest.RefusalClass(c.s.Tool(t, "get_document_download", args)); got != c.want {
				t.Errorf("= %q, want %s", got, c.want)
			}
		})
	}
}

// A fetch re-checks everything, and every failure is the same 404
// (docs/decisions.md "Answers on the wire"): a revoked minting key, a
// principal screened since, a document withdrawn since, a malformed or
// unknown token, a method other than GET.
func TestADownloadLinkIsOne404OnceItsCredentialOrAccessIsGone(t *testing.T) {
	e := newLaneEnv(t, laneOptions{})
	ctx := context.Background()
	e.storedDocument(t, seed.Alvarez, "d_alv_declaration", records.PrivilegeNone, "")
	e.storedDocument(t, seed.Harbor, "d_hbr_declaration", records.PrivilegeNone, "")
	e.storedDocument(t, seed.Meridian, "d_mer_declaration", records.PrivilegeNone, "")
	args := func(m, d string) map[string]any { return map[string]any{"case_id": m, "document_id": d} }

	revokedKey, revoked, err := auth.Mint(ctx, e.Store, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney,
		Scopes: []auth.Scope{auth.ScopeDocsRead}}, servertest.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	e.Keys["soon revoked"] = revokedKey
	byRevoked := downloadURL(t, e.Initialize(t, "soon revoked", rev), args(seed.Alvarez, "d_alv_declaration"))
	screened := downloadURL(t, e.Session, args(seed.Harbor, "d_hbr_declaration"))
	withdrawn := downloadURL(t, e.Session, args(seed.Meridian, "d_mer_declaration"))
	base := strings.TrimSuffix(e.URL, "/mcp")

	if err := auth.Revoke(ctx, e.Store, seed.DemoTenant, revoked.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := records.Screen(ctx, e.Store, seed.DemoTenant, seed.Harbor, seed.DemoAttorney, true, "a conflict found"); err != nil {
		t.Fatal(err)
	}
	it, err := e.Store.Get(ctx, records.DocumentKey(seed.DemoTenant, seed.Meridian, "d_mer_declaration"))
	if err != nil {
		t.Fatal(err)
	}
	var d records.Document
	if err := records.DecodeRow(it, &d); err != nil {
		t.Fatal(err)
	}
	d.ReviewState = records.ReviewWithdrawn
	if di, err := records.DocumentItem(seed.DemoTenant, d); err != nil || e.Store.Put(ctx, di) != nil {
		t.Fatal("withdraw the document")
	}

	var first []byte
	for _, c := range []struct{ name, method, url string }{
		{"the minting key revoked", http.MethodGet, byRevoked},
		{"the principal screened from the matter since", http.MethodGet, screened},
		{"the document withdrawn since", http.MethodGet, withdrawn},
		{"a malformed token", http.MethodGet, base + downloads.PathPrefix + "dlt_zz"},
		{"an unknown token", http.MethodGet, base + downloads.PathPrefix + downloads.NewToken()},
		{"a POST", http.MethodPost, withdrawn},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, c.url, nil)
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Fatalf("= %d, want 404", resp.StatusCode)
			}
			if first == nil {
				first = b
			} else if !bytes.Equal(b, first) {
				t.Errorf("body %q differs from %q: every failure is one 404", b, first)
			}
		})
	}
}
