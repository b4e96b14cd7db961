package main

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/custodymcp/custody/shared/approvals"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/store"
)

// signin-link prints a link of the approval page's base that signs the
// principal in exactly once, on every engine: the file engine with the dev
// server stopped (make run's address), with it running (the server's own
// address, through its admin endpoint), and DynamoDB (PUBLIC_BASE_URL).
func TestSigninLinkOnEveryEngine(t *testing.T) {
	for _, c := range []struct {
		b        backend
		env      map[string]string
		wantBase func(b backend) string
	}{
		{stoppedFile(t), nil, func(backend) string { return "http://127.0.0.1:8080" }},
		{runningFile(t), nil, func(b backend) string { return strings.TrimSuffix(b.mcp, "/mcp") }},
		{dynamoDB(t), map[string]string{"PUBLIC_BASE_URL": "https://abc.execute-api.us-east-1.amazonaws.com/prod"},
			func(backend) string { return "https://abc.execute-api.us-east-1.amazonaws.com/prod" }},
	} {
		t.Run(c.b.name, func(t *testing.T) {
			b := c.b
			env := map[string]string{}
			for k, v := range b.env {
				env[k] = v
			}
			if b.requests != nil {
				mustCtl(t, env, b.args("table", "create")...)
				if _, err := ctl(t, env, b.args("signin-link", "--principal", seed.DemoAttorney)...); err == nil ||
					!strings.Contains(err.Error(), "PUBLIC_BASE_URL") {
					t.Errorf("signin-link on DynamoDB without a base = %v, want an error naming PUBLIC_BASE_URL", err)
				}
			}
			for k, v := range c.env {
				env[k] = v
			}
			mustCtl(t, env, b.args("import", demoFixture)...)
			out := strings.TrimSpace(mustCtl(t, env, b.args("signin-link", "--principal", seed.DemoAttorney, "--ttl", "5m")...))
			base := c.wantBase(b)
			u, err := url.Parse(out)
			if err != nil || !strings.HasPrefix(out, base+"/approvals/signin?t=csl_") || len(u.Query().Get("t")) != 4+48 {
				t.Fatalf("signin-link printed %q, want %s/approvals/signin?t=csl_<48 hex>", out, base)
			}
			token := u.Query().Get("t")
			b.withStore(t, func(st store.Store) {
				page, err := approvals.New(approvals.Config{Store: st, PublicBaseURL: base})
				if err != nil {
					t.Fatal(err)
				}
				press := func() int {
					r := httptest.NewRequest(http.MethodPost, "/approvals/signin", strings.NewReader(url.Values{"t": {token}}.Encode()))
					r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					r.Header.Set("Origin", (&url.URL{Scheme: u.Scheme, Host: u.Host}).String())
					w := httptest.NewRecorder()
					page.ServeHTTP(w, r)
					return w.Code
				}
				if got, want := press(), http.StatusSeeOther; got != want {
					t.Errorf("pressing the printed link = %d, want %d", got, want)
				}
				if got, want := press(), http.StatusForbidden; got != want {
					t.Errorf("pressing it again = %d, want %d", got, want)
				}
			})
		})
	}
}

func TestSigninLinkRefusesBadArguments(t *testing.T) {
	b := stoppedFile(t)
	mustCtl(t, b.env, b.args("import", demoFixture)...)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no principal", []string{"signin-link"}, "--principal"},
		{"a life under a minute", []string{"signin-link", "--principal", seed.DemoAttorney, "--ttl", "30s"}, "1m to 24h"},
		{"a life over a day", []string{"signin-link", "--principal", seed.DemoAttorney, "--ttl", "25h"}, "1m to 24h"},
		{"a principal the firm does not have", []string{"signin-link", "--principal", "p_nobody"}, "no such principal"},
		{"another firm's principal", []string{"signin-link", "--principal", seed.OtherPrincipal}, "no such principal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := ctl(t, b.env, b.args(c.args...)...)
			if err == nil || out != "" || !strings.Contains(err.Error(), c.want) {
				t.Errorf("custodyctl %v = %q, %v; want no link and an error saying %q", c.args, out, err, c.want)
			}
		})
	}
}
