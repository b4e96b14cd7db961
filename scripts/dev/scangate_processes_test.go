package main

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/blob/blobtest"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/clamdtest"
	"github.com/custodymcp/custody/shared/uploads"
	"github.com/custodymcp/custody/shared/uploads/uploadstest"
)

// The dev server's scan gate, as a new user meets it (issue 17): the
// local S3 server sends no notifications, so the server marshals the S3
// event of each copy to verified/ and hands the JSON to the gate, which
// decodes it as the scangate function does. The EICAR text uploaded as
// notes.txt is infected, quarantined and listed by custodyctl; a PDF is
// clean — with the default signature engine and with a real clamd.

// fileServing matches the file engine's banner line.
var fileServing = regexp.MustCompile(`serving MCP at (http://\S+/mcp) on`)

// minimalPDF is a clean file that is a PDF.
var minimalPDF = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")

// devLane is a running dev server with a write key allowed many calls.
type devLane struct {
	url, key, credID, sid string
	ctl                   func(args ...string) (string, string)
	data, ctlBin          string
}

func startDevLane(t testing.TB, devBin, ctlBin string, args ...string) *devLane {
	t.Helper()
	data := t.TempDir()
	dev := start(t, "dev", devBin, nil, append([]string{"-addr", "127.0.0.1:0", "-data", data}, args...)...)
	url := dev.await(t, fileServing, 2*time.Minute)
	ctl := ctlOf(t, ctlBin, data, nil)
	out, notes := ctl("keys", "mint", "--owner", seed.DemoAttorney, "--scopes", "read write", "--label", "scan gate",
		"--rate-write", "100000", "--rate-read", "100000")
	id := regexp.MustCompile(`minted (cred_\w+)`).FindStringSubmatch(notes)
	if len(id) != 2 {
		t.Fatalf("keys mint said %q / %q", out, notes)
	}
	l := &devLane{url: url, key: strings.TrimSpace(out), credID: id[1], ctl: ctl, data: data, ctlBin: ctlBin}
	l.sid = initSession(t, url, l.key)
	return l
}

// begin mints a grant, begins an upload of body named filename and PUTs
// every part; it returns the grant and the upload id.
func (l *devLane) begin(t testing.TB, filename string, body []byte) (grant, uploadID string) {
	t.Helper()
	out, _ := l.ctl("grant", "mint", "--key", l.credID, "--case", seed.Alvarez, "--by", seed.DemoAdmin)
	grant = strings.TrimSpace(out)
	whole, parts := uploadstest.Digests(body)
	_, _, msg := mcpPost(t, l.url, l.key, l.sid, toolCall(uploads.ToolBegin, map[string]any{"grant_token": grant,
		"case_id": seed.Alvarez, "filename": filename, "size_bytes": len(body), "sha256": whole, "part_sha256": parts}))
	sc := structured(t, msg)
	if sc["status"] != "executed" {
		t.Fatalf("begin_upload_session(%s) = %v", filename, sc)
	}
	data := sc["data"].(map[string]any)
	for i, p := range data["parts"].([]any) {
		part := p.(map[string]any)
		h := http.Header{}
		for k, v := range part["headers"].(map[string]any) {
			h.Set(k, v.(string))
		}
		off := i * uploads.PartSize
		if status, code := blobtest.Send(t, http.MethodPut, part["url"].(string), h, body[off:off+int(part["size_bytes"].(float64))]); status != http.StatusOK {
			t.Fatalf("PUT part %d: %d %s", i+1, status, code)
		}
	}
	return grant, data["upload_id"].(string)
}

// complete completes an upload; it must be executed (scan_pending).
func (l *devLane) complete(t testing.TB, grant, uploadID string) {
	t.Helper()
	_, _, msg := mcpPost(t, l.url, l.key, l.sid, toolCall(uploads.ToolComplete, map[string]any{"grant_token": grant, "upload_id": uploadID}))
	if sc := structured(t, msg); sc["status"] != "executed" {
		t.Fatalf("complete_upload = %v", sc)
	}
}

// state is get_upload_status's state.
func (l *devLane) state(t testing.TB, uploadID string) string {
	t.Helper()
	_, _, msg := mcpPost(t, l.url, l.key, l.sid, toolCall("get_upload_status", map[string]any{"upload_id": uploadID}))
	return fmt.Sprint(structured(t, msg)["state"])
}

// verdict polls the upload's state until it leaves scan_pending, every
// interval, for up to timeout.
func (l *devLane) verdict(t testing.TB, uploadID string, interval, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := l.state(t, uploadID)
		if s != string(uploads.StateScanPending) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("upload %s is still scan_pending after %v", uploadID, timeout)
		}
		time.Sleep(interval)
	}
}

func (l *devLane) deposit(t testing.TB, filename string, body []byte) string {
	t.Helper()
	grant, id := l.begin(t, filename, body)
	l.complete(t, grant, id)
	return id
}

func TestTheDevServersScanGateJudgesEveryUpload(t *testing.T) {
	devBin, ctlBin, _ := buildTools(t)
	run := func(t *testing.T, l *devLane, threat string) {
		infected := l.deposit(t, "notes.txt", scan.EICAR())
		clean := l.deposit(t, "brief.pdf", minimalPDF)
		if got := l.verdict(t, infected, 20*time.Millisecond, time.Minute); got != string(uploads.StateInfected) {
			t.Errorf("the EICAR text as notes.txt is %s, want infected", got)
		}
		// Clean, then taken into review by intake (issue 18).
		if got := l.verdict(t, clean, 20*time.Millisecond, time.Minute); got != string(uploads.StateClean) && got != string(uploads.StateInReview) {
			t.Errorf("the PDF is %s, want clean (or in_review once intake took it)", got)
		}
		out, _ := l.ctl("uploads", "list", "--state", "infected")
		if !strings.Contains(out, infected) || !strings.Contains(out, `"notes.txt"`) || !strings.Contains(out, threat) || strings.Contains(out, clean) {
			t.Errorf("custodyctl uploads list --state infected:\n%s\nwant notes.txt's upload with %s alone", out, threat)
		}
	}
	t.Run("with the signature engine", func(t *testing.T) {
		run(t, startDevLane(t, devBin, ctlBin), scan.EICARThreat)
	})
	t.Run("with clamd", func(t *testing.T) {
		srv := clamdtest.Start(t, clamdtest.Config{})
		run(t, startDevLane(t, devBin, ctlBin, "-scanner", "clamd="+srv.Addr+",max=64M"), clamdtest.EICARThreat)
	})
	t.Run("with clamd stopped uploads are accepted and scan_failed, and a rescan scans them again", func(t *testing.T) {
		srv := clamdtest.Start(t, clamdtest.Config{})
		l := startDevLane(t, devBin, ctlBin, "-scanner", "clamd="+srv.Addr+",max=64M")
		if err := srv.Stop(); err != nil {
			t.Fatal(err)
		}
		id := l.deposit(t, "brief.pdf", minimalPDF)
		if got := l.verdict(t, id, 20*time.Millisecond, time.Minute); got != string(uploads.StateScanFailed) {
			t.Fatalf("with clamd stopped the PDF is %s, want scan_failed", got)
		}
		out, _ := l.ctl("uploads", "list", "--state", "scan_failed")
		if !strings.Contains(out, id) {
			t.Errorf("custodyctl uploads list --state scan_failed:\n%s\nwant %s", out, id)
		}
		out, _ = l.ctl("uploads", "rescan", id, "--by", seed.DemoAdmin)
		if !strings.Contains(out, "scan_pending") {
			t.Errorf("custodyctl uploads rescan said %q", out)
		}
		if got := l.state(t, id); got != string(uploads.StateScanPending) {
			t.Errorf("after the rescan the upload is %s, want scan_pending", got)
		}
	})
	t.Run("with -scanner off the lane refuses and the grant stays unspent", func(t *testing.T) {
		l := startDevLane(t, devBin, ctlBin, "-scanner", "off")
		out, _ := l.ctl("grant", "mint", "--key", l.credID, "--case", seed.Alvarez, "--by", seed.DemoAdmin)
		whole, parts := uploadstest.Digests(minimalPDF)
		_, _, msg := mcpPost(t, l.url, l.key, l.sid, toolCall(uploads.ToolBegin, map[string]any{"grant_token": strings.TrimSpace(out),
			"case_id": seed.Alvarez, "filename": "brief.pdf", "size_bytes": len(minimalPDF), "sha256": whole, "part_sha256": parts}))
		e, _ := structured(t, msg)["error"].(map[string]any)
		if e["class"] != "SCANNER_UNAVAILABLE" || e["spent"] != false {
			t.Errorf("begin_upload_session with the scanner off = %v, want SCANNER_UNAVAILABLE, spent false", e)
		}
		list, _ := l.ctl("grant", "list")
		if !strings.Contains(list, "unspent") {
			t.Errorf("custodyctl grant list:\n%s\nwant the grant unspent", list)
		}
	})
}

// BenchmarkCompleteToVerdictWithClamd measures, on the dev server with a
// real clamd at 100M limits (-scanner clamd=…,max=100M), the time from
// complete_upload's call to the verdict get_upload_status reports (polled
// every 5 ms), in two parts: the call (assembling the parts, reading the
// object back through SHA-256, the spend), and from its answer to the
// verdict (the copy to verified/ in the local S3 server, the S3 event, the
// gate's HEAD and read, the INSTREAM scan and the verdict's write). clamd's resident memory after the runs and at its peak is
// reported (one signature loaded: the scanning's own memory, not the
// official databases').
//
//	go test -run '^$' -bench BenchmarkCompleteToVerdictWithClamd -benchtime 5x ./scripts/dev
func BenchmarkCompleteToVerdictWithClamd(b *testing.B) {
	devBin, ctlBin, _ := buildTools(b)
	srv := clamdtest.Start(b, clamdtest.Config{StreamMaxLength: "100M", MaxFileSize: "100M", MaxScanSize: "100M"})
	l := startDevLane(b, devBin, ctlBin, "-scanner", "clamd="+srv.Addr+",max=100M")
	for _, size := range []int{1_000_000, 100_000_000} {
		b.Run(fmt.Sprintf("%dMB", size/1_000_000), func(b *testing.B) {
			var call, after time.Duration
			n := 0
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				body := blobtest.Pattern(size, byte(i))
				grant, id := l.begin(b, fmt.Sprintf("exhibit %d.bin", i), body)
				b.StartTimer()
				start := time.Now()
				l.complete(b, grant, id)
				answered := time.Now()
				if got := l.verdict(b, id, 5*time.Millisecond, 5*time.Minute); got != string(uploads.StateClean) && got != string(uploads.StateInReview) {
					b.Fatalf("verdict = %s, want clean", got)
				}
				call, after = call+answered.Sub(start), after+time.Since(answered)
				n++
			}
			// The call verifies the whole object (SHA-256) before it spends;
			// after its answer come the copy, the event and the scan.
			b.ReportMetric(float64(call.Milliseconds())/float64(n), "ms-complete-call")
			b.ReportMetric(float64(after.Milliseconds())/float64(n), "ms-answer-to-verdict")
			m, err := srv.Memory()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(m.RSS)/1e6, "clamd-RSS-MB")
			b.ReportMetric(float64(m.Peak)/1e6, "clamd-peak-RSS-MB")
		})
	}
}
