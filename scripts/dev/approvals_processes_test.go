package main

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/scripts/internal/engine"
	"github.com/custodymcp/custody/scripts/internal/engine/dynamoengine"
	"github.com/custodymcp/custody/shared/approvals/ledger"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
)

// TestTwoDecidersRaceOneProposalAcrossTwoProcesses runs the emulator and
// two dev servers on one table, signs one attorney in on each, and has both
// approve the same proposal at the same moment, round after round: nothing
// held in a process could decide it, and each round ends with one
// approval, one PROPOSAL_NOT_PENDING, one deadline and one ledger entry;
// the chain of all the rounds verifies.
func TestTwoDecidersRaceOneProposalAcrossTwoProcesses(t *testing.T) {
	pair := startPair(t)
	endpoint, data, urlA, urlB, ctl := pair.endpoint, pair.data, pair.urlA, pair.urlB, pair.ctl
	baseA, baseB := strings.TrimSuffix(urlA, "/mcp"), strings.TrimSuffix(urlB, "/mcp")

	// A second licensed attorney on the Alvarez team, written to the table
	// as the firm's records would be.
	eng, err := engine.FromEnv(func(k string) string {
		return map[string]string{"STORE_ENGINE": "dynamodb", "DYNAMODB_TABLE": "custody", "DYNAMODB_ENDPOINT": endpoint}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := eng.Open(context.Background(), datadir.Dir(data), dynamoengine.Open)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	const lee = "p_lee_marsh"
	now := time.Now()
	pr, err := records.PrincipalItem(seed.DemoTenant, records.Principal{ID: lee, Name: "Lee Marsh", Role: records.RoleAttorney, Licensed: true, CreatedAt: now, UpdatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, pr); err != nil {
		t.Fatal(err)
	}
	m, err := records.NewRepo(st).Matter(ctx, seed.DemoTenant, seed.Alvarez)
	if err != nil {
		t.Fatal(err)
	}
	m.Team = append(m.Team, lee)
	mr, err := records.MatterItem(seed.DemoTenant, m)
	if err != nil {
		t.Fatal(err)
	}
	mr.Version = 2
	if err := st.Put(ctx, mr); err != nil {
		t.Fatal(err)
	}

	key := ctl("keys", "mint", "--owner", seed.DemoParalegal, "--scopes", "read write")
	status, h, _ := mcpPost(t, urlA, key, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"race","version":"0"}}}`)
	sid := h.Get("Mcp-Session-Id")
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d", status)
	}

	// Dana signs in on A, Lee on B; each session row is in the one table.
	dana := signInOver(t, baseA, ctl("signin-link", "--principal", seed.DemoAttorney, "--base", baseA))
	leeS := signInOver(t, baseB, ctl("signin-link", "--principal", lee, "--base", baseB))

	const rounds = 5
	for r := range rounds {
		title := fmt.Sprint("Raced across processes ", r)
		_, _, msg := mcpPost(t, []string{urlA, urlB}[r%2], key, sid, toolCall("propose_action", map[string]any{"case_id": seed.Alvarez,
			"action": "create_deadline", "args": map[string]any{"title": title, "due_date": "2027-03-01", "kind": "filing"},
			"reason": "Raced.", "idempotency_key": fmt.Sprint("race-", r)}))
		res, _ := msg["result"].(map[string]any)
		sc, _ := res["structuredContent"].(map[string]any)
		id, _ := sc["approval_id"].(string)
		if id == "" {
			t.Fatalf("propose_action: %v", msg)
		}
		csrfA, csrfB := dana.reviewCSRF(t), leeS.reviewCSRF(t)
		var got [2]string
		var wg sync.WaitGroup
		go1 := make(chan struct{})
		for i, s := range []*pageSession{dana, leeS} {
			wg.Go(func() {
				<-go1
				got[i] = s.review(t, []string{csrfA, csrfB}[i], id)
			})
		}
		close(go1)
		wg.Wait()
		approved, notPending := 0, 0
		for _, g := range got {
			switch g {
			case "approved/":
				approved++
			case "approved/PROPOSAL_NOT_PENDING":
				notPending++
			}
		}
		if approved != 1 || notPending != 1 {
			t.Errorf("round %d: outcomes %v, want one approval and one PROPOSAL_NOT_PENDING", r, got)
		}
		dls, err := records.NewRepo(st).Deadlines(ctx, seed.DemoTenant, seed.Alvarez)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, d := range dls {
			if d.Title == title {
				n++
			}
		}
		if n != 1 {
			t.Errorf("round %d: %d deadlines, want 1", r, n)
		}
	}
	es, err := ledger.Entries(ctx, st, seed.DemoTenant, seed.Alvarez)
	if err != nil || len(es) != rounds {
		t.Errorf("the ledger has %d entries (%v), want %d", len(es), err, rounds)
	}
	if out := ctl("ledger", "verify", "--case", seed.Alvarez); !strings.Contains(out, fmt.Sprintf("%d entries, intact", rounds)) {
		t.Errorf("custodyctl ledger verify = %q", out)
	}
}

// processPair is two dev servers, A and B, on one DynamoDB emulator table
// and one data folder (the dev key and secrets), and custodyctl on them.
type processPair struct {
	endpoint, data, urlA, urlB string
	ctl                        func(args ...string) string
}

// startPair builds the tools, starts the emulator and the two servers, and
// returns them serving; everything stops with the test.
func startPair(t *testing.T) *processPair {
	t.Helper()
	devBin, ctlBin, minidynBin := buildTools(t)
	emu := start(t, "minidyn", minidynBin, nil, "-addr", "127.0.0.1:0", "-table", "custody")
	endpoint := emu.await(t, minidynURL, 30*time.Second)
	data := t.TempDir()
	env := []string{"STORE_ENGINE=dynamodb", "DYNAMODB_TABLE=custody", "DYNAMODB_ENDPOINT=" + endpoint}
	a := start(t, "dev A", devBin, env, "-addr", "127.0.0.1:0", "-data", data)
	urlA := a.await(t, serving, 2*time.Minute)
	b := start(t, "dev B", devBin, env, "-addr", "127.0.0.1:0", "-data", data)
	urlB := b.await(t, serving, time.Minute)
	return &processPair{endpoint: endpoint, data: data, urlA: urlA, urlB: urlB, ctl: func(args ...string) string {
		t.Helper()
		cmd := exec.Command(ctlBin, append([]string{"--data", data}, args...)...)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("custodyctl %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}}
}

// pageSession is a signed-in browser session of the approval page of one
// process, driven over plain HTTP as a browser of that page's origin.
type pageSession struct {
	base, cookie string
}

// signInOver spends a sign-in link on the process at base.
func signInOver(t testing.TB, base, link string) *pageSession {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	resp := formPost(t, base, "/approvals/signin", "", url.Values{"t": {u.Query().Get("t")}})
	for _, line := range resp.Header.Values("Set-Cookie") {
		if c, err := http.ParseSetCookie(line); err == nil && c.Name == "__Host-custody-approvals" {
			return &pageSession{base: base, cookie: c.Value}
		}
	}
	t.Fatalf("sign in at %s: %d, no cookie", base, resp.StatusCode)
	return nil
}

var reviewCSRF = regexp.MustCompile(`action="[^"]*/approvals/review"[^>]*>\s*<input type="hidden" name="csrf" value="([^"]+)"`)

// reviewCSRF reads the review form's token from the inbox.
func (s *pageSession) reviewCSRF(t *testing.T) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.base+"/approvals", nil)
	req.Header.Set("Cookie", "__Host-custody-approvals="+s.cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := reviewCSRF.FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("the inbox at %s has no review form:\n%s", s.base, b)
	}
	return html.UnescapeString(m[1])
}

var resultOf = regexp.MustCompile(`<tr id="result-([^"]+)" data-status="([^"]*)" data-code="([^"]*)">`)

// review posts the review form with one id and returns "status/code".
func (s *pageSession) review(t *testing.T, csrf, id string) string {
	t.Helper()
	resp := formPost(t, s.base, "/approvals/review", s.cookie, url.Values{"csrf": {csrf}, "ids": {id}})
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, m := range resultOf.FindAllStringSubmatch(string(b), -1) {
		if m[1] == id {
			return m[2] + "/" + m[3]
		}
	}
	return fmt.Sprintf("no result (%d)", resp.StatusCode)
}

// formPost posts a form as the page's own (Origin its base).
func formPost(t testing.TB, base, path, cookie string, form url.Values) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	if cookie != "" {
		req.Header.Set("Cookie", "__Host-custody-approvals="+cookie)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
