package lanetools_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/uploads"
)

// The lane end to end (issue 16): a file of two parts is begun, PUT part by
// part with nothing but each URL and its headers (what curl sends),
// completed into scan_pending with the grant spent, copied to verified/
// with its incoming/ source gone, reported by get_upload_status, and a
// repeat of complete_upload answers the original receipt.
func TestAnUploadBegunPutAndCompletedIsScanPendingWithItsGrantSpent(t *testing.T) {
	e := newLaneEnv(t, laneOptions{})
	grant := e.grant(t, seed.Alvarez)
	f := newFile(pattern(uploads.PartSize+1000, 1))

	s := e.mustBegin(t, grant, seed.Alvarez, f)
	if got, want := len(s.Parts), 2; got != want {
		t.Fatalf("parts = %d, want %d", got, want)
	}
	for i, p := range s.Parts {
		if p.PartNumber != i+1 || p.Method != http.MethodPut || p.SizeBytes != int64(len(f.parts[i])) {
			t.Errorf("part %d = number %d, %s, %d bytes; want %d, PUT, %d", i, p.PartNumber, p.Method, p.SizeBytes, i+1, len(f.parts[i]))
		}
	}
	if state, open := e.grantState(t, grant); state != "unspent" || open != 1 {
		t.Errorf("after begin: grant %s with %d open, want unspent with 1 open (begin spends nothing)", state, open)
	}
	put(t, s, f)

	r := receiptOf(t, e.complete(t, grant, s.UploadID))
	if r.UploadID != s.UploadID || r.State != "scan_pending" || !r.Spent || r.SHA256 != f.sha || r.ScannerPosture != "ARMED" {
		t.Errorf("receipt = %+v, want %s scan_pending, spent, its sha256, scanner ARMED", r, s.UploadID)
	}
	if state, _ := e.grantState(t, grant); state != "spent" {
		t.Errorf("grant = %s, want spent", state)
	}
	id := objectOf(t, s.UploadID)
	if !e.exists(t, blob.Verified(id)) || e.exists(t, blob.Incoming(id)) {
		t.Errorf("after completion: verified/ %v, incoming/ %v; want the object in verified/ only",
			e.exists(t, blob.Verified(id)), e.exists(t, blob.Incoming(id)))
	}

	st := servertest.Structured(t, e.Session.Tool(t, "get_upload_status", map[string]any{"upload_id": s.UploadID}))
	if st["state"] != "scan_pending" || st["spent"] != true || st["scanner_posture"] != "ARMED" || st["document_id"] != nil {
		t.Errorf("get_upload_status = %v, want scan_pending, spent, ARMED, no document yet", st)
	}

	again := receiptOf(t, e.complete(t, grant, s.UploadID))
	if diff := cmp.Diff(r, again); diff != "" {
		t.Errorf("a repeat of complete_upload (-first +repeat):\n%s", diff)
	}
	outcomes := map[string]int{}
	rows, err := audit.Day(context.Background(), e.Store, seed.DemoTenant, e.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if row.Tool == uploads.ToolComplete {
			outcomes[row.Outcome]++
			if row.Matter != "" && row.Matter != seed.Alvarez {
				t.Errorf("audit row of complete_upload names matter %q", row.Matter)
			}
		}
		if raw, _ := json.Marshal(row); strings.Contains(string(raw), grant[len(uploads.TokenPrefix):]) {
			t.Errorf("an audit row holds the grant token: %s", raw)
		}
	}
	if diff := cmp.Diff(map[string]int{"ok": 1, "ok:replay": 1}, outcomes); diff != "" {
		t.Errorf("complete_upload audit outcomes (-want +got):\n%s", diff)
	}
}

// Every part URL (issue 16): x-amz-checksum-sha256 is among the signed
// headers, no checksum rides in the query, the headers returned are
// exactly the signed ones other than host, and the checksum is the one
// algorithm of the upload, SHA-256.
func TestEveryPartURLSignsItsChecksumAsAHeaderAndReturnsExactlyTheSignedHeaders(t *testing.T) {
	e := newLaneEnv(t, laneOptions{})
	f := newFile(pattern(2*uploads.PartSize+17, 2))
	s := e.mustBegin(t, e.grant(t, seed.Alvarez), seed.Alvarez, f)
	for i, p := range s.Parts {
		u, err := url.Parse(p.URL)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		signed := strings.Split(q.Get("X-Amz-SignedHeaders"), ";")
		if !slices.Contains(signed, "x-amz-checksum-sha256") {
			t.Errorf("part %d: X-Amz-SignedHeaders = %v, want x-amz-checksum-sha256 among them", p.PartNumber, signed)
		}
		for k := range q {
			if strings.Contains(strings.ToLower(k), "checksum") {
				t.Errorf("part %d: the query carries %s", p.PartNumber, k)
			}
		}
		var returned []string
		for k := range p.Headers {
			returned = append(returned, strings.ToLower(k))
			if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-amz-checksum-") && lk != "x-amz-checksum-sha256" {
				t.Errorf("part %d: header %s is of another algorithm than the upload's SHA256", p.PartNumber, k)
			}
		}
		slices.Sort(returned)
		wantSigned := slices.DeleteFunc(slices.Clone(signed), func(h string) bool { return h == "host" })
		slices.Sort(wantSigned)
		if diff := cmp.Diff(wantSigned, returned); diff != "" {
			t.Errorf("part %d: returned headers (-signed but host +returned):\n%s", p.PartNumber, diff)
		}
		if got := p.Headers["X-Amz-Checksum-Sha256"]; got != f.sums[i] {
			t.Errorf("part %d: signed checksum %q, want the declared %q", p.PartNumber, got, f.sums[i])
		}
	}
}
