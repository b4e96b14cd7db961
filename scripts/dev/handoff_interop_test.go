package main

import (
	"bufio"
	"context"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/custodymcp/custody/shared/approvals/browsertest"
	"github.com/custodymcp/custody/shared/nodetest"
	"github.com/custodymcp/custody/shared/records/seed"
)

// TestHandOffWithTheTypeScriptSDKAndChromium is issue 15 end to end
// against the dev server as its own process: the official TypeScript SDK
// client 1.32 (scripts/interop/ts, pinned by its lockfile, installed into
// .tools by nodetest) declares URL elicitation and calls propose_action;
// it receives elicitation/create and accepts. The test opens the URL in
// Chromium — the paralegal's signed-in browser gets the generic 403, the
// owner attorney signs in with a sign-in link carrying the link's path,
// sees the bound proposal first and approves it with the page's forms —
// and the client receives notifications/elicitation/complete on its GET
// stream. Locally it skips without Chromium or npm, naming them; with
// CI=true it fails instead.
func TestHandOffWithTheTypeScriptSDKAndChromium(t *testing.T) {
	src := filepath.Join("..", "interop", "ts")
	node, dir := nodetest.Require(t, src, "interop-ts")
	if err := nodetest.CopyFile(filepath.Join(src, "handoff.mjs"), filepath.Join(dir, "handoff.mjs")); err != nil {
		t.Fatal(err)
	}
	owner := browsertest.New(t)
	paralegal := browsertest.New(t)
	devBin, ctlBin, _ := buildTools(t)
	data := t.TempDir()
	p := start(t, "dev", devBin, []string{"STORE_ENGINE=file"}, "-addr", "127.0.0.1:0", "-data", data)
	base := p.await(t, regexp.MustCompile(`^Approval page: (http://\S+)/approvals `), time.Minute)
	ctl := ctlOf(t, ctlBin, data, nil)
	key, _ := ctl("keys", "mint", "--owner", seed.DemoAttorney, "--scopes", "read write")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := nodetest.Command(ctx, node, dir, "handoff.mjs")
	cmd.Env = append(cmd.Env, "CUSTODY_MCP_URL="+base+"/mcp", "CUSTODY_KEY="+strings.TrimSpace(key), "CUSTODY_CASE_ID="+seed.Meridian)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	next := func(prefix string) string {
		t.Helper()
		for lines.Scan() {
			if v, ok := strings.CutPrefix(lines.Text(), prefix+" "); ok {
				return v
			}
		}
		_ = cmd.Wait()
		t.Fatalf("node handoff.mjs ended before %s:\n%s", prefix, stderr.String())
		return ""
	}
	link := next("HANDOFF_URL")
	approval := next("HANDOFF_RECEIPT")
	if !strings.HasPrefix(link, base+"/approvals/h/eli_") {
		t.Fatalf("the link %q is not below the dev server's base %s", link, base)
	}
	path := strings.TrimPrefix(link, base)

	// The paralegal, signed in, opens the attorney's link: the generic 403.
	plink, _ := ctl("signin-link", "--principal", seed.DemoParalegal)
	if err := chromedp.Do(paralegal, chromedp.Navigate(strings.TrimSpace(plink)), chromedp.WaitVisible(chromedp.CSS("#sign-in")),
		chromedp.Click(chromedp.CSS("#sign-in")), chromedp.WaitVisible(chromedp.CSS("#signed-in")),
		chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#heading"))); err != nil {
		t.Fatalf("the paralegal opens the link: %v", err)
	}
	text, err := chromedp.Run(paralegal, chromedp.Text(chromedp.CSS("main")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "This link cannot be opened") || strings.Contains(text, "Meridian") || strings.Contains(text, "Handed off") {
		t.Errorf("the paralegal's page says %q, want the generic refusal naming nothing", text)
	}

	// The owner signs in with a link that carries the hand-off's path,
	// lands on it, sees the bound proposal first and approves it.
	olink, _ := ctl("signin-link", "--principal", seed.DemoAttorney)
	u, err := url.Parse(strings.TrimSpace(olink))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("next", path)
	u.RawQuery = q.Encode()
	if err := chromedp.Do(owner, chromedp.Navigate(u.String()), chromedp.WaitVisible(chromedp.CSS("#sign-in")),
		chromedp.Click(chromedp.CSS("#sign-in")), chromedp.WaitVisible(chromedp.CSS("#handoff"))); err != nil {
		t.Fatalf("the owner opens the link: %v", err)
	}
	first, err := chromedp.Run(owner, chromedp.Evaluate[string](`document.querySelector("tr[id^=proposal-]").id`))
	if err != nil {
		t.Fatal(err)
	}
	if first != "proposal-"+approval {
		t.Errorf("the first proposal on the owner's page is %s, want the bound %s", first, approval)
	}
	if err := chromedp.Do(owner, chromedp.Click(chromedp.CSS("#open-"+approval)), chromedp.WaitVisible(chromedp.CSS("#confirm-approve")),
		chromedp.Click(chromedp.CSS("#confirm-approve")), chromedp.WaitVisible(chromedp.CSS("#results"))); err != nil {
		t.Fatalf("approve: %v", err)
	}
	if v, err := chromedp.Run(owner, chromedp.AttributeValue(chromedp.CSS("#result-"+approval), "data-status")); err != nil || v.Value != "approved" {
		t.Errorf("the result's status = %q (%v), want approved", v.Value, err)
	}

	done := next("HANDOFF_COMPLETE")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node handoff.mjs: %v\n%s", err, stderr.String())
	}
	if !strings.HasPrefix(link, base+"/approvals/h/"+done) {
		t.Errorf("completed %s, want the hand-off of %s", done, link)
	}
}
