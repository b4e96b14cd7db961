package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/custodymcp/custody/shared/approvals/browsertest"
	"github.com/custodymcp/custody/shared/records/seed"
)

// TestApproveInARealBrowser is an attorney's first decisions, in Chromium,
// against the dev server as its own process: a paralegal's key files one
// routine proposal (a deadline) and one that needs a second confirmation
// (serving a production, an act outside the firm) through /mcp; the
// attorney opens a sign-in link from custodyctl. The review page has no
// approve-all control and no box ticked; one tick approves the routine
// row, whose status the results page gives; the other row is opened, asks
// to be confirmed again, and is confirmed. custodyctl ledger verify then
// finds the matter's chain intact, and the external act waits in the
// outbox. The review page as the attorney first saw it is saved as a PNG.
func TestApproveInARealBrowser(t *testing.T) {
	ctx := browsertest.New(t) // skips (or fails under CI=true) without chromium
	dev, ctlBin, _ := buildTools(t)
	data := t.TempDir()
	p := start(t, "dev", dev, []string{"STORE_ENGINE=file"}, "-addr", "127.0.0.1:0", "-data", data)
	base := p.await(t, regexp.MustCompile(`^Approval page: (http://\S+)/approvals `), time.Minute)
	ctl := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(ctlBin, append([]string{"--data", data}, args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("custodyctl %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}

	// The paralegal's agent files two proposals.
	key := ctl("keys", "mint", "--owner", seed.DemoParalegal, "--scopes", "read write")
	status, h, _ := mcpPost(t, base+"/mcp", key, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"paralegal-agent","version":"0"}}}`)
	sid := h.Get("Mcp-Session-Id")
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d", status)
	}
	propose := func(action string, args map[string]any, idem string) string {
		t.Helper()
		_, _, msg := mcpPost(t, base+"/mcp", key, sid, toolCall("propose_action", map[string]any{"case_id": seed.Alvarez,
			"action": action, "args": args, "reason": "The scheduling order sets it.", "idempotency_key": idem}))
		res, _ := msg["result"].(map[string]any)
		sc, _ := res["structuredContent"].(map[string]any)
		id, _ := sc["approval_id"].(string)
		if sc["status"] != "pending_approval" || id == "" {
			b, _ := json.Marshal(msg)
			t.Fatalf("propose_action %s = %s", action, b)
		}
		return id
	}
	routine := propose("create_deadline", map[string]any{"title": "Opposition to the motion to compel", "due_date": "2027-01-15",
		"kind": "filing", "rule": "L.R. 7-3"}, "browser-deadline")
	confirmed := propose("serve_production", map[string]any{"document_ids": []any{"d_alv_complaint", "d_alv_answer"},
		"recipient": "Defense counsel of record", "method": "electronic_service", "force": true}, "browser-production")

	// The attorney signs in with a link.
	link := ctl("signin-link", "--principal", seed.DemoAttorney)
	if err := chromedp.Do(ctx, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#sign-in")),
		chromedp.Click(chromedp.CSS("#sign-in")), chromedp.WaitVisible(chromedp.CSS("#decidable"))); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	count := func(js string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](js))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return n
	}
	attr := func(sel, name string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(sel), name))
		if err != nil || !v.Exists {
			t.Fatalf("read %s of %s: %v", name, sel, err)
		}
		return v.Value
	}

	// No approve-all control, nothing ticked, one box for the one routine row.
	if n := count(`document.querySelectorAll("input[type=checkbox]:checked, input[checked], option[selected]").length`); n != 0 {
		t.Errorf("%d controls are selected before anyone touched the page, want none", n)
	}
	if n := count(`[...document.querySelectorAll("button, input[type=submit], a, label")].filter(e => /\ball\b/i.test(e.textContent + " " + (e.value || "") + " " + e.id)).length`); n != 0 {
		t.Errorf("%d controls speak of all, want no approve-all control", n)
	}
	if n := count(`document.querySelectorAll("input[type=checkbox][name=ids]").length`); n != 1 {
		t.Errorf("%d boxes to tick, want 1 (the routine row only)", n)
	}
	if n := count(fmt.Sprintf(`document.querySelectorAll("#select-%s").length`, confirmed)); n != 0 {
		t.Errorf("the row that needs confirming can be ticked")
	}
	if n := count(fmt.Sprintf(`document.querySelectorAll("#proposal-%s .override, #proposal-%s .why li").length`, confirmed, confirmed)); n < 2 {
		t.Errorf("the confirm-required row shows %d exclusion reasons and override notes, want its reasons and the planted field", n)
	}
	browsertest.Screenshot(t, ctx, screenshotPath)

	// One positive selection approves the routine row.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#select-"+routine)), chromedp.Click(chromedp.CSS("#approve-selected")),
		chromedp.WaitVisible(chromedp.CSS("#results"))); err != nil {
		t.Fatalf("approve the ticked row: %v", err)
	}
	if got := attr("#result-"+routine, "data-status"); got != "approved" {
		t.Errorf("the routine row's status = %q, want approved", got)
	}
	if got := attr("#heading", "data-ok"); got != "true" {
		t.Errorf("the results page says ok=%q, want true", got)
	}

	// The other one is opened, asks to be confirmed again, and is confirmed.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#back")), chromedp.WaitVisible(chromedp.CSS("#open-"+confirmed)),
		chromedp.Click(chromedp.CSS("#open-"+confirmed)), chromedp.WaitVisible(chromedp.CSS("#confirm-again"))); err != nil {
		t.Fatalf("open the confirm-required row: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#confirm-approve")), chromedp.WaitVisible(chromedp.CSS("#results"))); err != nil {
		t.Fatalf("confirm: %v", err)
	}
	if got := attr("#result-"+confirmed, "data-status"); got != "approved" {
		t.Errorf("the confirmed row's status = %q, want approved", got)
	}

	// The ledger is intact, the external act waits in the outbox.
	if out := ctl("ledger", "verify", "--case", seed.Alvarez); !strings.Contains(out, "2 entries, intact") {
		t.Errorf("custodyctl ledger verify = %q, want 2 entries, intact", out)
	}
	if out := ctl("outbox", "list"); !strings.Contains(out, "serve_production") || !strings.Contains(out, confirmed) {
		t.Errorf("custodyctl outbox list = %q, want the production", out)
	}
}
