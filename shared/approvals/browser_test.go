package approvals_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/custodymcp/custody/shared/approvals"
	"github.com/custodymcp/custody/shared/approvals/browsertest"
	"github.com/custodymcp/custody/shared/records/seed"
)

// The firm's sign-in in Chromium, on a loopback http base as the dev
// server's: the inbox sends the browser to sign in, the firm's button
// (a link: form-action 'self' would stop a form's redirect) goes to the
// provider and back through the callback, and the browser lands on the
// inbox signed in, the flow's binding cookie gone and the session cookie
// kept as decided.
func TestOIDCSignInInARealBrowser(t *testing.T) {
	ctx := browsertest.New(t)
	o := newOIDCEnvOn(t, httptest.NewServer, "")
	if err := chromedp.Do(ctx, chromedp.Navigate(o.base+"/approvals"), chromedp.WaitVisible(chromedp.CSS("#sign-in-oidc"))); err != nil {
		t.Fatalf("open the inbox signed out: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#sign-in-oidc")), chromedp.WaitVisible(chromedp.CSS("#signed-in"))); err != nil {
		t.Fatalf("sign in with the firm's account: %v", err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || loc != o.base+"/approvals" {
		t.Errorf("after the flow the browser is at %q (%v), want %s/approvals", loc, err, o.base)
	}
	who, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#principal-id")))
	if err != nil || strings.TrimSpace(who) != seed.DemoAttorney {
		t.Errorf("signed in as %q (%v), want %s", who, err, seed.DemoAttorney)
	}
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{o.base + "/approvals"}})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, c := range res.Cookies {
		names[c.Name] = true
	}
	if !names[approvals.CookieName] || names[approvals.OIDCCookieName] {
		t.Errorf("cookies after the flow = %v, want the session's and not the flow's binding", names)
	}
	if got := o.iss.TokenRequests(); got != 1 {
		t.Errorf("%d token requests, want 1", got)
	}
}
