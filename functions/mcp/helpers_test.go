package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/custodymcp/custody/shared/approvals"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
)

// testCursorKeyHex is the fixed cursor key of emulator runs in tests.
var testCursorKeyHex = strings.Repeat("c0ffee42", 8)

// emulator is a DynamoDB emulator on loopback with Custody's table, the
// demo firm seeded and one key of the demo attorney minted.
type emulator struct {
	URL   string
	Table string
	Store store.Store
	Key   string
}

// startEmulator starts minidyn (in process, on a loopback listener that
// other processes can reach too), creates the table, seeds the demo firm and
// mints a key with every read scope.
func startEmulator(t testing.TB) *emulator {
	t.Helper()
	srv := dynamotest.NewServer(t)
	client := srv.Client()
	table := dynamotest.CreateTable(t, client)
	st := dynamostore.New(client, table, dynamostore.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fx, err := seed.Demo()
	if err != nil {
		t.Fatalf("load the demo fixture: %v", err)
	}
	if _, err := records.Import(ctx, st, fx, time.Now()); err != nil {
		t.Fatalf("seed the demo firm: %v", err)
	}
	key, _, err := auth.Mint(ctx, st, auth.MintRequest{
		Tenant: seed.DemoTenant, Owner: seed.DemoAttorney, Label: "functions/mcp test",
		Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeDocsRead, auth.ScopeTasksRead, auth.ScopeAnalysisRead},
	}, time.Now())
	if err != nil {
		t.Fatalf("mint a key: %v", err)
	}
	return &emulator{URL: srv.URL, Table: table, Store: st, Key: key}
}

// env is the function's environment for an emulator run.
func (e *emulator) env(streaming bool) map[string]string {
	return map[string]string{
		"DYNAMODB_TABLE":        e.Table,
		"DYNAMODB_ENDPOINT":     e.URL,
		"LOCAL_CURSOR_KEY_HEX":  testCursorKeyHex,
		"CURSOR_KEY_SECRET_ARN": "",
		"RESPONSE_STREAMING":    map[bool]string{true: "true", false: "false"}[streaming],
		"PUBLIC_BASE_URL":       "http://127.0.0.1",
		"ALLOWED_ORIGINS":       "",
		"MAX_BODY_BYTES":        "",
		"LOG_LEVEL":             "INFO",
	}
}

// testAWSConfig is an AWS configuration with static dummy credentials: what
// LoadDefaultConfig yields from the environment in an emulator run.
func testAWSConfig() aws.Config {
	return aws.Config{Region: dynamotest.Region,
		Credentials: credentials.NewStaticCredentialsProvider("emulator", "emulator", "")}
}

// sampleDir holds the sample events.
var sampleDir = filepath.Join("..", "..", "events", "mcp")

// Placeholders the samples carry where a live value goes.
const (
	placeholderKey     = "{{API_KEY}}"
	placeholderSession = "{{SESSION_ID}}"
	// The approval page's: a sign-in link's token (minted for the demo
	// attorney before the samples play), the session cookie the sign-in
	// answered, and the sign-out form's CSRF token the inbox carried.
	placeholderSignIn = "{{SIGNIN_TOKEN}}"
	placeholderCookie = "{{APPROVALS_COOKIE}}"
	placeholderCSRF   = "{{APPROVALS_CSRF}}"
	// The review form's: its CSRF token (on the inbox, which lists the
	// pending proposal the play filed) and that proposal's id.
	placeholderReviewCSRF = "{{APPROVALS_REVIEW_CSRF}}"
	placeholderProposal   = "{{PROPOSAL_ID}}"
)

// response is an answer as an HTTP client sees it.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// sampleStep is one sample of the session the samples play, with what its
// answer must be.
type sampleStep struct {
	file  string
	check func(t testing.TB, r response, s *sampleSession)
}

// sampleSession is the state the samples thread: the key and the session
// id; the sign-in link, the approval session's cookie and its CSRF token.
type sampleSession struct {
	key, sessionID       string
	signIn, cookie, csrf string
	reviewCSRF, proposal string
}

// session is the start of one play of the samples: the emulator's key, a
// fresh sign-in link of the demo attorney (a link works once) and a fresh
// pending proposal for the review form to approve.
func (e *emulator) session(t *testing.T) *sampleSession {
	t.Helper()
	l, err := approvals.MintLink(context.Background(), e.Store, approvals.LinkRequest{Tenant: seed.DemoTenant, Principal: seed.DemoAttorney}, time.Now())
	if err != nil {
		t.Fatalf("mint a sign-in link: %v", err)
	}
	return &sampleSession{key: e.Key, signIn: l.Token, proposal: e.fileProposal(t)}
}

// fileProposal files a routine create_deadline proposal of the demo
// paralegal on Alvarez, with the rows propose_action writes
// (proposals.Proposal.FileOps), and returns its id.
func (e *emulator) fileProposal(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	_, cred, err := auth.Mint(ctx, e.Store, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoParalegal,
		Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite}, Label: "functions/mcp sample proposal"}, now)
	if err != nil {
		t.Fatal(err)
	}
	matterRow, err := e.Store.Get(ctx, records.MatterKey(seed.DemoTenant, seed.Alvarez))
	if err != nil {
		t.Fatal(err)
	}
	var m records.Matter
	if err := records.DecodeRow(matterRow, &m); err != nil {
		t.Fatal(err)
	}
	action, _ := proposals.Default().Action(proposals.ActionCreateDeadline)
	raw := []byte(`{"due_date":"2027-01-15","kind":"filing","title":"Sample reply brief"}`)
	args, err := action.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	eff := action.Effective(proposals.Config{})
	p := &proposals.Proposal{ID: proposals.ID(cred.ID, seed.Alvarez, "sample"), Tenant: seed.DemoTenant, CaseID: seed.Alvarez,
		Action: action.Name, Args: raw, ArgsDigest: strings.Repeat("0", 64),
		Target: proposals.Target{Ref: proposals.Ref{Kind: proposals.TargetMatter, ID: seed.Alvarez}, Version: matterRow.Version},
		Impact: action.Impact, WhatWillHappen: action.WhatWillHappen(args, m), DeliverableNoun: action.DeliverableNoun,
		SupervisionFloor: eff.Floor, BatchEligible: action.BatchEligible(eff), Reason: "The order sets it.", StrippedFields: []string{},
		RequestedBy: proposals.RequestedBy{Kind: "principal", Ref: cred.Reference()}, CredentialKeyHash: cred.KeyHash,
		FiledVia: "propose_action", CreatedAt: now, ExpiresAt: now.Add(proposals.Life)}
	ops, err := p.FileOps()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.Transact(ctx, ops); err != nil {
		t.Fatalf("file the sample proposal: %v", err)
	}
	return p.ID
}

// sampleBase is the emulator runs' PUBLIC_BASE_URL (emulator.env).
const sampleBase = "http://127.0.0.1"

// sampleSession's sequence: initialize, the initialized notification,
// tools/list, a read tool, DELETE; the approval page's sign-in (a form
// body), its inbox (the cookie), the review form approving the pending
// proposal (cookie and form) and sign-out (cookie and form); then an
// unauthenticated call. Every file in events/mcp is one step (a test holds
// them equal).
var sampleSteps = []sampleStep{
	{"apigw-initialize.json", func(t testing.TB, r response, s *sampleSession) {
		res := rpcResult(t, r, http.StatusOK)
		if res["protocolVersion"] != "2025-11-25" {
			t.Errorf("initialize protocolVersion = %v, want 2025-11-25", res["protocolVersion"])
		}
		if s.sessionID = r.Header.Get("Mcp-Session-Id"); s.sessionID == "" {
			t.Fatalf("initialize answered no Mcp-Session-Id (headers %v)", r.Header)
		}
	}},
	{"apigw-notification-initialized.json", func(t testing.TB, r response, _ *sampleSession) {
		if r.Status != http.StatusAccepted || len(r.Body) != 0 {
			t.Errorf("notification = %d %q, want 202 and no body", r.Status, r.Body)
		}
	}},
	{"apigw-tools-list.json", func(t testing.TB, r response, _ *sampleSession) {
		res := rpcResult(t, r, http.StatusOK)
		var names []string
		for _, tool := range res["tools"].([]any) {
			names = append(names, tool.(map[string]any)["name"].(string))
		}
		if !slices.Contains(names, "list_matters") {
			t.Errorf("tools/list = %v, want list_matters among them", names)
		}
		for _, n := range names {
			if strings.HasPrefix(n, "fixture_") {
				t.Errorf("tools/list offers the test fixture %s: the fixture profile must never be reachable from the Lambda", n)
			}
		}
	}},
	{"apigw-tools-call.json", func(t testing.TB, r response, _ *sampleSession) {
		res := rpcResult(t, r, http.StatusOK)
		if res["isError"] == true {
			t.Fatalf("list_matters refused: %v", res)
		}
		sc, _ := res["structuredContent"].(map[string]any)
		var ids []string
		for _, m := range asSlice(sc["results"]) {
			ids = append(ids, m.(map[string]any)["case_id"].(string))
		}
		slices.Sort(ids)
		want := slices.Clone(seed.DemoMatters)
		slices.Sort(want)
		if !slices.Equal(ids, want) {
			t.Errorf("list_matters case_ids = %v, want the demo attorney's %v", ids, want)
		}
	}},
	{"apigw-delete-session.json", func(t testing.TB, r response, _ *sampleSession) {
		if r.Status != http.StatusNoContent {
			t.Errorf("DELETE = %d %q, want 204", r.Status, r.Body)
		}
	}},
	{"apigw-approvals-signin.json", func(t testing.TB, r response, s *sampleSession) {
		if r.Status != http.StatusSeeOther || r.Header.Get("Location") != sampleBase+"/approvals" {
			t.Fatalf("sign-in = %d Location %q, want 303 to %s/approvals:\n%s", r.Status, r.Header.Get("Location"), sampleBase, r.Body)
		}
		for _, line := range r.Header.Values("Set-Cookie") {
			c, err := http.ParseSetCookie(line)
			if err == nil && c.Name == approvals.CookieName && c.HttpOnly && c.Secure && c.SameSite == http.SameSiteLaxMode && c.Path == "/" {
				s.cookie = c.Value
			}
		}
		if s.cookie == "" {
			t.Fatalf("sign-in set no %s cookie with HttpOnly, Secure, SameSite=Lax, Path=/ (Set-Cookie %q)", approvals.CookieName, r.Header.Values("Set-Cookie"))
		}
	}},
	{"apigw-approvals-inbox.json", func(t testing.TB, r response, s *sampleSession) {
		if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("inbox = %d %q, want an HTML page:\n%s", r.Status, r.Header.Get("Content-Type"), r.Body)
		}
		for k, want := range approvals.SecurityHeaders {
			if got := r.Header.Get(k); got != want {
				t.Errorf("inbox %s = %q, want %q", k, got, want)
			}
		}
		body := string(r.Body)
		if !strings.Contains(body, seed.DemoAttorney) || !strings.Contains(body, `href="`+sampleBase+`/approvals/style.css"`) {
			t.Errorf("the inbox does not name %s or links off the public base:\n%s", seed.DemoAttorney, body)
		}
		const field = `name="csrf" value="`
		i := strings.Index(body, field)
		if i < 0 {
			t.Fatalf("the inbox has no sign-out form:\n%s", body)
		}
		rest := body[i+len(field):]
		s.csrf = rest[:strings.IndexByte(rest, '"')]
		j := strings.Index(body, `action="`+sampleBase+`/approvals/review"`)
		if j < 0 || !strings.Contains(body, `name="ids" value="`+s.proposal+`"`) {
			t.Fatalf("the inbox offers no selection of the pending proposal %s:\n%s", s.proposal, body)
		}
		rest = body[j:]
		rest = rest[strings.Index(rest, field)+len(field):]
		s.reviewCSRF = rest[:strings.IndexByte(rest, '"')]
	}},
	{"apigw-approvals-review-post.json", func(t testing.TB, r response, s *sampleSession) {
		if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("review = %d %q, want an HTML page:\n%s", r.Status, r.Header.Get("Content-Type"), r.Body)
		}
		body := string(r.Body)
		if !strings.Contains(body, `id="result-`+s.proposal+`" data-status="approved" data-code=""`) || !strings.Contains(body, `data-ok="true"`) {
			t.Errorf("the review did not approve %s:\n%s", s.proposal, body)
		}
	}},
	{"apigw-approvals-signout.json", func(t testing.TB, r response, _ *sampleSession) {
		if r.Status != http.StatusSeeOther || r.Header.Get("Location") != sampleBase+"/approvals/signin" {
			t.Errorf("sign-out = %d Location %q, want 303 to the sign-in page:\n%s", r.Status, r.Header.Get("Location"), r.Body)
		}
	}},
	{"apigw-unauthenticated.json", func(t testing.TB, r response, _ *sampleSession) {
		if r.Status != http.StatusUnauthorized || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("unauthenticated = %d, WWW-Authenticate %q; want 401 with a Bearer challenge", r.Status, r.Header.Get("WWW-Authenticate"))
		}
	}},
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// rpcResult checks the status and returns the JSON-RPC result object.
func rpcResult(t testing.TB, r response, status int) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d; body %s", r.Status, status, r.Body)
	}
	var msg struct {
		Result map[string]any  `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &msg); err != nil {
		t.Fatalf("body %q is not JSON: %v", r.Body, err)
	}
	if msg.Error != nil || msg.Result == nil {
		t.Fatalf("JSON-RPC answer %s has no result", r.Body)
	}
	return msg.Result
}

// readSample returns a sample event with the placeholders filled in.
func readSample(t testing.TB, file string, s *sampleSession) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(sampleDir, file))
	if err != nil {
		t.Fatalf("read sample: %v", err)
	}
	return []byte(strings.NewReplacer(placeholderKey, s.key, placeholderSession, s.sessionID,
		placeholderSignIn, s.signIn, placeholderCookie, s.cookie, placeholderCSRF, s.csrf,
		placeholderReviewCSRF, s.reviewCSRF, placeholderProposal, s.proposal).Replace(string(raw)))
}

// playSamples plays every sample in order through invoke, from s.
func playSamples(t *testing.T, s *sampleSession, invoke func(t *testing.T, event []byte) response) {
	t.Helper()
	for _, step := range sampleSteps {
		t.Run(strings.TrimSuffix(step.file, ".json"), func(t *testing.T) {
			step.check(t, invoke(t, readSample(t, step.file, s)), s)
		})
		if t.Failed() {
			return
		}
	}
}
