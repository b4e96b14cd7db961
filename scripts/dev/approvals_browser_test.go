package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/custodymcp/custody/shared/approvals"
	"github.com/custodymcp/custody/shared/approvals/browsertest"
	"github.com/custodymcp/custody/shared/records/seed"
)

// Where the browser tests leave their full-page PNGs (bin/ is
// git-ignored): the review page with its two kinds of rows, and the
// signed-in empty inbox of a first visit.
const (
	screenshotPath       = "bin/artifacts/approvals.png"
	signInScreenshotPath = "bin/artifacts/approvals-signin.png"
)

// TestApprovalSignInInARealBrowser is a new user's first visit, in
// Chromium: the dev server as its own process, `custodyctl signin-link` for
// the demo attorney through its admin endpoint, the link opened (a button,
// nothing spent), the button pressed (signed in on the inbox, the cookie as
// decided), signed out, and the link refused the second time.
func TestApprovalSignInInARealBrowser(t *testing.T) {
	ctx := browsertest.New(t) // skips (or fails under CI=true) without chromium
	dev, ctl, _ := buildTools(t)
	data := t.TempDir()
	p := start(t, "dev", dev, []string{"STORE_ENGINE=file"}, "-addr", "127.0.0.1:0", "-data", data)
	base := p.await(t, regexp.MustCompile(`^Approval page: (http://\S+)/approvals `), time.Minute)

	link := func(t *testing.T) string {
		t.Helper()
		cmd := exec.Command(ctl, "--data", data, "signin-link", "--principal", seed.DemoAttorney)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("custodyctl signin-link: %v", err)
		}
		l := strings.TrimSpace(string(out))
		if !strings.HasPrefix(l, base+"/approvals/signin?t=csl_") {
			t.Fatalf("custodyctl signin-link printed %q, want a link under %s", l, base)
		}
		return l
	}(t)

	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}
	location := func() string {
		t.Helper()
		l, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	cookies := func() map[string]*network.Cookie {
		t.Helper()
		res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/approvals"}})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*network.Cookie{}
		for _, c := range res.Cookies {
			out[c.Name] = c
		}
		return out
	}

	// Opening the link shows whom it signs in and a button; it spends nothing.
	if err := chromedp.Do(ctx, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#sign-in"))); err != nil {
		t.Fatalf("open the sign-in link: %v", err)
	}
	if got, want := text("#link-principal"), "Dana Whitfield"; got != want {
		t.Errorf("the link signs in %q, want %q", got, want)
	}
	// The stylesheet (style-src 'self') applies: the button is the accent.
	bg, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("#sign-in")).backgroundColor`))
	if err != nil || bg != "rgb(31, 78, 140)" {
		t.Errorf("the sign-in button's background = %q (%v), want the stylesheet's rgb(31, 78, 140)", bg, err)
	}
	if got := len(cookies()); got != 0 {
		t.Errorf("opening the link set %d cookies, want none", got)
	}

	// Pressing it signs in: the inbox, the principal named, the cookie as decided.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#sign-in")), chromedp.WaitVisible(chromedp.CSS("#signed-in"))); err != nil {
		t.Fatalf("press the sign-in button: %v", err)
	}
	if got, want := location(), base+"/approvals"; got != want {
		t.Errorf("after signing in the browser is at %q, want %q", got, want)
	}
	if got, want := text("#principal-id"), seed.DemoAttorney; got != want {
		t.Errorf("signed in as %q, want %q", got, want)
	}
	c := cookies()[approvals.CookieName]
	if c == nil {
		t.Fatalf("Chromium kept no %s cookie on %s (cookies %v)", approvals.CookieName, base, cookies())
	}
	if !c.HTTPOnly || !c.Secure || c.SameSite != network.CookieSameSiteLax || c.Path != "/" || c.Session || c.Domain != "127.0.0.1" {
		t.Errorf("the session cookie as Chromium keeps it = %+v, want HttpOnly, Secure, SameSite=Lax, Path=/, host-only, with an expiry", c)
	}
	if got := text("#decidable"); !strings.Contains(got, "Nothing here.") {
		t.Errorf("the inbox's decision list = %q, want it empty", got)
	}
	browsertest.Screenshot(t, ctx, signInScreenshotPath)

	// Signing out deletes the session: the inbox sends the browser to sign in.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#sign-out")), chromedp.WaitVisible(chromedp.CSS("#heading"))); err != nil {
		t.Fatalf("sign out: %v", err)
	}
	if got, want := location(), base+"/approvals/signin"; got != want {
		t.Errorf("after signing out the browser is at %q, want %q", got, want)
	}
	if _, ok := cookies()[approvals.CookieName]; ok {
		t.Error("the session cookie is still there after signing out")
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/approvals"), chromedp.WaitVisible(chromedp.CSS("#heading"))); err != nil {
		t.Fatal(err)
	}
	if got, want := location(), base+"/approvals/signin"; got != want {
		t.Errorf("the inbox after signing out is at %q, want %q (sign in first)", got, want)
	}

	// The link worked once.
	if err := chromedp.Do(ctx, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#heading"))); err != nil {
		t.Fatal(err)
	}
	if got, want := text("#heading"), "This sign-in link cannot be used"; got != want {
		t.Errorf("the link a second time says %q, want %q", got, want)
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#sign-in").length`))
	if err != nil || n != 0 {
		t.Errorf("the spent link's page has %d sign-in buttons (%v), want none", n, err)
	}
}
