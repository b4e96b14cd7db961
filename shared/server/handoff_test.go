package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/approvals"
	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/handoff"
	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/storetest"
)

// The URL-mode hand-off of a filed proposal (issue 15; docs/decisions.md
// "The hand-off"), through the composed endpoint on the file engine.

const urlCaps = `{"elicitation":{"url":{}}}`

// handoffEnv is an Env serving the approval page and the GET stream.
func handoffEnv(t *testing.T) *servertest.Env {
	t.Helper()
	return servertest.New(t, servertest.Options{Approvals: true, GETStream: true})
}

// filed is one propose_action answered on its SSE stream.
type filed struct {
	elicitation map[string]any // the elicitation/create request, nil when none came
	receipt     map[string]any // the result's structuredContent
	events      int            // messages before the response
}

var callSeq int

// proposeOnStream files a deadline on matter under key through s, on a
// POST accepting text/event-stream (extra headers added), and reads the
// stream to its end.
func proposeOnStream(t *testing.T, env *servertest.Env, s *servertest.Session, matter, key string, extra ...string) filed {
	t.Helper()
	callSeq++
	args := servertest.ProposeArgs(matter, key, proposals.ActionCreateDeadline, servertest.DeadlineArgs())
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1000 + callSeq, "method": "tools/call",
		"params": map[string]any{"name": "propose_action", "arguments": args}})
	r := s.Post(t, body, append([]string{"Accept: application/json, text/event-stream"}, extra...)...)
	if r.Status != http.StatusOK {
		t.Fatalf("propose_action: %d %s", r.Status, r.Body)
	}
	var msgs []map[string]any
	if strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
		for _, ev := range strings.Split(string(r.Body), "\n\n") {
			var data []string
			for _, line := range strings.Split(ev, "\n") {
				if d, ok := strings.CutPrefix(line, "data:"); ok {
					data = append(data, strings.TrimPrefix(d, " "))
				}
			}
			if joined := strings.TrimSpace(strings.Join(data, "\n")); joined != "" {
				var m map[string]any
				if err := json.Unmarshal([]byte(joined), &m); err != nil {
					t.Fatalf("event %q: %v", joined, err)
				}
				msgs = append(msgs, m)
			}
		}
	} else {
		msgs = append(msgs, r.JSON(t))
	}
	var out filed
	for _, msg := range msgs {
		if msg["method"] == handoff.Method {
			out.elicitation = msg
			out.events++
			continue
		}
		if msg["method"] != nil {
			out.events++
			continue
		}
		res, _ := msg["result"].(map[string]any)
		out.receipt, _ = res["structuredContent"].(map[string]any)
		if out.receipt == nil {
			t.Fatalf("propose_action answered %v", msg)
		}
		return out
	}
	t.Fatalf("no response in %s", r.Body)
	return out
}

// elicitationParams are the elicitation/create's params.
func elicitationParams(t *testing.T, f filed) map[string]any {
	t.Helper()
	if f.elicitation == nil {
		t.Fatal("no elicitation/create came before the receipt")
	}
	p, _ := f.elicitation["params"].(map[string]any)
	return p
}

// binding reads the binding row of elicitation id.
func binding(t *testing.T, env *servertest.Env, id string) *handoff.Binding {
	t.Helper()
	it, err := env.Store.Get(context.Background(), handoff.Key(id))
	if err != nil {
		t.Fatalf("read the binding of %s: %v", id, err)
	}
	return handoff.Decode(id, it)
}

// outbox lists the messages waiting in a session's outbox.
func outbox(t *testing.T, env *servertest.Env, sessionID string) []string {
	t.Helper()
	page, err := env.Store.Query(context.Background(), store.Query{PK: keyspace.SessionPK(sessionID), SK: store.SortKeyCondition{Prefix: "OUT#"}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range page.Items {
		out = append(out, string(it.Bytes("message")))
	}
	return out
}

// answer posts the client's answer to the elicitation/create f carried.
func answer(t *testing.T, s *servertest.Session, f filed, action string) int {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": f.elicitation["id"], "result": map[string]any{"action": action}})
	return s.Post(t, body).Status
}

// browser is a person signed in to the approval page: their cookie.
type browser struct {
	env    *servertest.Env
	cookie string
}

// signIn spends a fresh sign-in link of principal of tenant.
func signIn(t *testing.T, env *servertest.Env, tenant, principal string) *browser {
	t.Helper()
	l, err := approvals.MintLink(context.Background(), env.Store, approvals.LinkRequest{Tenant: tenant, Principal: principal}, env.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{env: env}
	r := b.do(t, http.MethodPost, "/approvals/signin", url.Values{"t": {l.Token}})
	for _, line := range r.Header.Values("Set-Cookie") {
		if c, err := http.ParseSetCookie(line); err == nil && c.Name == approvals.CookieName {
			b.cookie = c.Value
		}
	}
	if b.cookie == "" {
		t.Fatalf("sign in %s: %d, no cookie", principal, r.Status)
	}
	return b
}

type answerPage struct {
	Status int
	Header http.Header
	Body   string
}

// do sends a request to the page as a browser of its origin.
func (b *browser) do(t *testing.T, method, path string, form url.Values) answerPage {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	target := path
	if !strings.HasPrefix(path, "http") {
		target = b.env.HTTP.URL + path
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", b.env.HTTP.URL)
	}
	if b.cookie != "" {
		req.Header.Set("Cookie", approvals.CookieName+"="+b.cookie)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return answerPage{Status: resp.StatusCode, Header: resp.Header, Body: string(raw)}
}

// formCSRF is the csrf field of the page's form posting to action, as a
// browser would send it ("" when the page has no such form).
func formCSRF(page, action string) string {
	i := strings.Index(page, `action="`+action+`"`)
	if i < 0 {
		return ""
	}
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page[i:])
	if m == nil {
		return ""
	}
	return m[1]
}

// approve approves id through the page's ordinary forms: the proposal's
// page, its confirmation, then the decision with its nonce.
func (b *browser) approve(t *testing.T, id string) answerPage {
	t.Helper()
	base := b.env.HTTP.URL + "/approvals/p/" + id
	detail := b.do(t, http.MethodGet, "/approvals/p/"+id, nil)
	c := b.do(t, http.MethodPost, "/approvals/p/"+id+"/confirm", url.Values{"csrf": {formCSRF(detail.Body, base+"/confirm")}})
	form := url.Values{"csrf": {formCSRF(c.Body, base+"/decide")}}
	if m := regexp.MustCompile(`name="nonce" value="(cnf_[0-9a-f]{32})"`).FindStringSubmatch(c.Body); m != nil {
		form.Set("nonce", m[1])
	}
	return b.do(t, http.MethodPost, "/approvals/p/"+id+"/decide", form)
}

// TestHandOffSendsTheElicitationThenTheReceipt: a 2025-11-25 session that
// declared elicitation.url gets, on the tools/call's stream, the priming
// event, elicitation/create in URL mode with the fixed message and a link
// below the configured base (whatever Host and X-Forwarded-Host say), and
// then the receipt; the binding row and the parked answer row were written
// with the proposal, the binding as long as the proposal and the answer
// row 1 h. A replay sends no second hand-off.
func TestHandOffSendsTheElicitationThenTheReceipt(t *testing.T) {
	env := handoffEnv(t)
	s := env.InitializeWith(t, servertest.Attorney, "2025-11-25", urlCaps)
	f := proposeOnStream(t, env, s, seed.Meridian, "h-1", "Host: evil.example", "X-Forwarded-Host: evil.example", "X-Forwarded-Proto: https")
	p := elicitationParams(t, f)
	id, _ := p["elicitationId"].(string)
	if !regexp.MustCompile(`^eli_[0-9a-f]{32}$`).MatchString(id) {
		t.Fatalf("elicitationId = %q, want eli_ + 32 hex", id)
	}
	wantURL := env.HTTP.URL + "/approvals/h/" + id
	if p["mode"] != "url" || p["url"] != wantURL || p["message"] != handoff.Message {
		t.Errorf("elicitation params = %v, want mode url, url %s and the fixed message", p, wantURL)
	}
	if f.events != 1 || f.receipt["status"] != "pending_approval" {
		t.Errorf("%d messages before a receipt %v, want the elicitation alone, then pending_approval", f.events, f.receipt)
	}
	approval, _ := f.receipt["approval_id"].(string)
	b := binding(t, env, id)
	cred := env.Creds[servertest.Attorney]
	want := &handoff.Binding{ID: id, Tenant: seed.DemoTenant, Owner: seed.DemoAttorney, CredentialID: cred.ID, ApprovalID: approval,
		CaseID: seed.Meridian, SessionID: s.ID, RequestID: fmt.Sprint(1000 + callSeq), State: handoff.StateSent,
		ExpiresAt: servertest.Epoch.Add(proposals.Life).UTC(), Version: 1}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("binding (-want +got):\n%s", diff)
	}
	parkedID, _ := f.elicitation["id"].(string)
	parked, err := env.Store.Get(context.Background(), mcp.ParkedKey(s.ID, parkedID))
	if err != nil {
		t.Fatalf("the parked answer row: %v", err)
	}
	if got := time.Unix(parked.ExpiresAt, 0).Sub(servertest.Epoch); got != handoff.AnswerTTL {
		t.Errorf("the parked answer row lives %v, want %v", got, handoff.AnswerTTL)
	}
	prop, err := env.Store.Get(context.Background(), proposals.Key(seed.DemoTenant, seed.Meridian, approval))
	if err != nil {
		t.Fatal(err)
	}
	if pr, _ := proposals.Decode(prop); pr.Handoff == nil || pr.Handoff.ID != id || pr.Handoff.Session != s.ID {
		t.Errorf("the proposal names hand-off %+v, want %s of session %s", pr.Handoff, id, s.ID)
	}
	// The replay: the original receipt, no second elicitation.
	again := proposeOnStream(t, env, s, seed.Meridian, "h-1")
	if again.elicitation != nil || again.receipt["approval_id"] != approval {
		t.Errorf("the replay sent %v and answered %v, want no hand-off and the original receipt", again.elicitation, again.receipt)
	}
}

// TestNoHandOffOutsideItsSessions: a 2026-07-28 request, a 2025-06-18
// session, elicitation {} and form-only clients, and a POST accepting only
// JSON get no elicitation/create, and their receipts equal a hand-off
// session's field by field but for ids and times.
func TestNoHandOffOutsideItsSessions(t *testing.T) {
	env := handoffEnv(t)
	strip := func(r map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range r {
			if k != "approval_id" && k != "expires_at" {
				out[k] = v
			}
		}
		return out
	}
	with := env.InitializeWith(t, servertest.Attorney, "2025-11-25", urlCaps)
	ref := proposeOnStream(t, env, with, seed.Meridian, "ref")
	elicitationParams(t, ref)
	n := 0
	for _, c := range []struct{ name, rev, caps string }{
		{"2025-06-18 session", "2025-06-18", urlCaps},
		{"elicitation {}", "2025-11-25", `{"elicitation":{}}`},
		{"form only", "2025-11-25", `{"elicitation":{"form":{}}}`},
	} {
		n++
		s := env.InitializeWith(t, servertest.Attorney, c.rev, c.caps)
		f := proposeOnStream(t, env, s, seed.Meridian, fmt.Sprintf("no-%d", n))
		if f.elicitation != nil {
			t.Errorf("%s: sent %v", c.name, f.elicitation)
		}
		if diff := cmp.Diff(strip(ref.receipt), strip(f.receipt)); diff != "" {
			t.Errorf("%s: receipt differs from a hand-off session's (-hand-off +this):\n%s", c.name, diff)
		}
	}
	// A POST accepting only JSON, in a session that declared URL mode.
	args := servertest.ProposeArgs(seed.Meridian, "json-only", proposals.ActionCreateDeadline, servertest.DeadlineArgs())
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 77, "method": "tools/call", "params": map[string]any{"name": "propose_action", "arguments": args}})
	r := with.Post(t, body, "Accept: application/json")
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("JSON-only POST: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	res := r.JSON(t)["result"].(map[string]any)
	if diff := cmp.Diff(strip(ref.receipt), strip(res["structuredContent"].(map[string]any))); diff != "" {
		t.Errorf("JSON-only POST: receipt differs (-hand-off +this):\n%s", diff)
	}
	// The 2026-07-28 era: the receipt, never input_required.
	st := env.Stateless(servertest.Attorney, urlCaps)
	msg := st.Call(t, "tools/call", map[string]any{"name": "propose_action",
		"arguments": servertest.ProposeArgs(seed.Meridian, "era-2026", proposals.ActionCreateDeadline, servertest.DeadlineArgs())})
	res26, _ := msg["result"].(map[string]any)
	if res26["resultType"] == "input_required" || res26["structuredContent"] == nil {
		t.Fatalf("2026-07-28: %v, want the receipt", msg)
	}
	if diff := cmp.Diff(strip(ref.receipt), strip(res26["structuredContent"].(map[string]any))); diff != "" {
		t.Errorf("2026-07-28: receipt differs (-hand-off +this):\n%s", diff)
	}
	// Only the one hand-off was bound.
	page, err := env.Store.Query(context.Background(), store.Query{PK: keyspace.MatterPK(seed.DemoTenant, seed.Meridian), SK: store.SortKeyCondition{Prefix: "PROP#"}})
	if err != nil {
		t.Fatal(err)
	}
	bound := 0
	for _, it := range page.Items {
		if p, _ := proposals.Decode(it); p != nil && p.Handoff != nil {
			bound++
		}
	}
	if bound != 1 || len(page.Items) != 6 {
		t.Errorf("%d proposals, %d with a hand-off; want 6 and 1", len(page.Items), bound)
	}
}

// TestADroppedStreamLeavesTheProposalAndTheBinding: the client leaves
// right after the priming event; the proposal is filed, list_my_proposals
// shows it and the binding is sent.
func TestADroppedStreamLeavesTheProposalAndTheBinding(t *testing.T) {
	env := handoffEnv(t)
	s := env.InitializeWith(t, servertest.Attorney, "2025-11-25", urlCaps)
	args := servertest.ProposeArgs(seed.Meridian, "drop", proposals.ActionCreateDeadline, servertest.DeadlineArgs())
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": map[string]any{"name": "propose_action", "arguments": args}})
	es := servertest.OpenStream(t, http.MethodPost, env.URL, body, s.Headers()...)
	if ev, ok := es.Next(); !ok || strings.TrimSpace(ev.Data) != "" {
		t.Fatalf("first event %+v, want the priming event", ev)
	}
	es.Close()
	id := proposals.ID(env.Creds[servertest.Attorney].ID, seed.Meridian, "drop")
	mine := servertest.Structured(t, s.Tool(t, "list_my_proposals", map[string]any{}))
	results, _ := mine["results"].([]any)
	if len(results) != 1 || results[0].(map[string]any)["approval_id"] != id {
		t.Fatalf("list_my_proposals = %v, want %s", mine, id)
	}
	it, err := env.Store.Get(context.Background(), proposals.Key(seed.DemoTenant, seed.Meridian, id))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := proposals.Decode(it)
	if p.Handoff == nil || binding(t, env, p.Handoff.ID).State != handoff.StateSent {
		t.Errorf("the proposal's hand-off %+v, want a binding in state sent", p.Handoff)
	}
}

// TestTheLinkOpensForItsOwnerOnly: without a session the link sends the
// browser to sign in with only its path; signed in as another principal of
// the same tenant, or of another tenant, it is one generic, audited 403
// naming no matter, client, caption or action; the owner then opens it,
// the bound proposal first, their other pending proposals after it, and
// approves it with the page's ordinary forms.
func TestTheLinkOpensForItsOwnerOnly(t *testing.T) {
	env := handoffEnv(t)
	s := env.InitializeWith(t, servertest.Attorney, "2025-11-25", urlCaps)
	older := proposeOnStream(t, env, s, seed.Meridian, "older")
	f := proposeOnStream(t, env, s, seed.Meridian, "bound")
	link, _ := elicitationParams(t, f)["url"].(string)
	id := strings.TrimPrefix(link, env.HTTP.URL+"/approvals/h/")
	approval, _ := f.receipt["approval_id"].(string)

	anon := &browser{env: env}
	r := anon.do(t, http.MethodGet, link, nil)
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != env.HTTP.URL+"/approvals/signin?next="+url.QueryEscape("/approvals/h/"+id) {
		t.Errorf("without a session: %d to %q, want 303 to sign in carrying the path", r.Status, r.Header.Get("Location"))
	}
	m, err := records.NewRepo(env.Store).Matter(context.Background(), seed.DemoTenant, seed.Meridian)
	if err != nil {
		t.Fatal(err)
	}
	// The owner check reads no proposal row: with every read of the firm's
	// matter partitions failing, the refusal is still the 403, not a 503.
	para := signIn(t, env, seed.DemoTenant, seed.DemoParalegal)
	env.Faulty.Add(storetest.Rule{Key: storetest.Prefix(keyspace.MatterPK(seed.DemoTenant, ""), ""), Err: store.ErrUnavailable})
	if r := para.do(t, http.MethodGet, link, nil); r.Status != http.StatusForbidden {
		t.Errorf("another principal, with the matters unreadable: %d, want 403 before any proposal row is read", r.Status)
	}
	env.Faulty.Reset()
	forbidden := ""
	for _, who := range []*browser{signIn(t, env, seed.DemoTenant, seed.DemoParalegal), signIn(t, env, seed.OtherTenant, seed.OtherPrincipal)} {
		r := who.do(t, http.MethodGet, link, nil)
		if r.Status != http.StatusForbidden {
			t.Errorf("another principal: %d, want 403", r.Status)
		}
		for _, leak := range []string{m.Name, m.Client, m.Caption, seed.Meridian, proposals.ActionCreateDeadline, "deadline", "Expert disclosures", approval} {
			if leak != "" && strings.Contains(r.Body, leak) {
				t.Errorf("the 403 page names %q", leak)
			}
		}
		if forbidden != "" && r.Body != forbidden {
			t.Errorf("the two 403 pages differ")
		}
		forbidden = r.Body
	}
	// An unknown id gets the same page.
	if r := signIn(t, env, seed.DemoTenant, seed.DemoParalegal).do(t, http.MethodGet, "/approvals/h/"+handoff.NewID(), nil); r.Status != http.StatusForbidden || r.Body != forbidden {
		t.Errorf("an unknown id: %d, want the same 403", r.Status)
	}
	if n := countAudit(t, env, seed.DemoTenant, "approvals/handoff"); n != 3 {
		t.Errorf("%d audited refusals of the link in the firm, want 3", n)
	}
	if n := countAudit(t, env, seed.OtherTenant, "approvals/handoff"); n != 1 {
		t.Errorf("%d audited refusals of the link in the other firm, want 1", n)
	}
	if b := binding(t, env, id); b.State != handoff.StateSent {
		t.Errorf("the refusals moved the binding to %s", b.State)
	}

	owner := signIn(t, env, seed.DemoTenant, seed.DemoAttorney)
	r = owner.do(t, http.MethodGet, link, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("the owner: %d\n%s", r.Status, r.Body)
	}
	first := strings.Index(r.Body, `id="proposal-`+approval+`"`)
	other := strings.Index(r.Body, `id="proposal-`+older.receipt["approval_id"].(string)+`"`)
	if first < 0 || other < 0 || first > other {
		t.Errorf("the owner's page: bound at %d, the other at %d; want the bound proposal first, then the other", first, other)
	}
	if !strings.Contains(r.Body, `/approvals/p/`+approval+`/confirm`) {
		t.Errorf("the owner (an approver) has no approval form for the bound proposal")
	}
	if a := owner.approve(t, approval); a.Status != http.StatusOK || !strings.Contains(a.Body, "Approved") {
		t.Fatalf("approve: %d\n%s", a.Status, a.Body)
	}
	if b := binding(t, env, id); b.State != handoff.StateCompleted {
		t.Errorf("after the approval the binding is %s, want completed", b.State)
	}
}

// countAudit counts the tenant's audit rows of method.
func countAudit(t *testing.T, env *servertest.Env, tenant, method string) int {
	t.Helper()
	rows, err := audit.Day(t.Context(), env.Store, tenant, env.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		if r.Method == method && r.Outcome == "http:403" {
			n++
		}
	}
	return n
}

// TestANonApproverOwnerGetsTheReadOnlyView: the paralegal's own hand-off
// opens for them without any approval form.
func TestANonApproverOwnerGetsTheReadOnlyView(t *testing.T) {
	env := handoffEnv(t)
	s := env.InitializeWith(t, servertest.Paralegal, "2025-11-25", urlCaps)
	f := proposeOnStream(t, env, s, seed.Meridian, "para")
	link, _ := elicitationParams(t, f)["url"].(string)
	approval, _ := f.receipt["approval_id"].(string)
	r := signIn(t, env, seed.DemoTenant, seed.DemoParalegal).do(t, http.MethodGet, link, nil)
	if r.Status != http.StatusOK || !strings.Contains(r.Body, `id="proposal-`+approval+`"`) {
		t.Fatalf("the paralegal's own link: %d\n%s", r.Status, r.Body)
	}
	if strings.Contains(r.Body, "/confirm") || !strings.Contains(r.Body, `id="not-an-approver"`) {
		t.Errorf("a non-approver's view carries an approval form or lacks the read-only note")
	}
}

// TestDeclineStopsTheLinkAndTheFirstAnswerWins: decline → the owner's link
// is the generic 403; accept after decline is refused 400 and the binding
// stays declined; a later decision posts nothing. A late answer (past the
// answer row's hour) is 400 and moves nothing.
func TestDeclineStopsTheLinkAndTheFirstAnswerWins(t *testing.T) {
	env := handoffEnv(t)
	s := env.InitializeWith(t, servertest.Attorney, "2025-11-25", urlCaps)
	f := proposeOnStream(t, env, s, seed.Meridian, "decline")
	id, _ := elicitationParams(t, f)["elicitationId"].(string)
	// An action the elicitation result does not have answers nothing: 400,
	// and the question waits for a real answer.
	if st := answer(t, s, f, "approve"); st != http.StatusBadRequest {
		t.Errorf("action approve: %d, want 400", st)
	}
	if b := binding(t, env, id); b.State != handoff.StateSent {
		t.Errorf("after an invalid answer the binding is %s, want sent", b.State)
	}
	if st := answer(t, s, f, "decline"); st != http.StatusAccepted {
		t.Fatalf("decline: %d, want 202", st)
	}
	if st := answer(t, s, f, "accept"); st != http.StatusBadRequest {
		t.Errorf("accept after decline: %d, want 400", st)
	}
	if b := binding(t, env, id); b.State != handoff.StateDeclined {
		t.Errorf("binding %s, want declined", b.State)
	}
	owner := signIn(t, env, seed.DemoTenant, seed.DemoAttorney)
	if r := owner.do(t, http.MethodGet, "/approvals/h/"+id, nil); r.Status != http.StatusForbidden {
		t.Errorf("the declined link for its owner: %d, want 403", r.Status)
	}
	if a := owner.approve(t, f.receipt["approval_id"].(string)); !strings.Contains(a.Body, "Approved") {
		t.Fatalf("approve: %d", a.Status)
	}
	if b := binding(t, env, id); b.State != handoff.StateDeclined {
		t.Errorf("after the decision the declined binding is %s", b.State)
	}
	if got := outbox(t, env, s.ID); len(got) != 0 {
		t.Errorf("a declined hand-off's decision posted %v", got)
	}

	// Late: the answer row is gone after its hour.
	late := proposeOnStream(t, env, s, seed.Meridian, "late")
	lateID, _ := elicitationParams(t, late)["elicitationId"].(string)
	env.Clock.Advance(handoff.AnswerTTL + time.Second)
	if st := answer(t, s, late, "accept"); st != http.StatusBadRequest {
		t.Errorf("a late accept: %d, want 400", st)
	}
	if b := binding(t, env, lateID); b.State != handoff.StateSent {
		t.Errorf("a late answer moved the binding to %s", b.State)
	}
	// An unanswered elicitation does not block the link.
	if r := owner.do(t, http.MethodGet, "/approvals/h/"+lateID, nil); r.Status != http.StatusOK {
		t.Errorf("an unanswered hand-off's link: %d, want 200", r.Status)
	}
}

// TestATerminalDecisionNotifiesTheInitiatingSessionOnce: after accept, the
// approval puts exactly one notifications/elicitation/complete in the
// initiating session's outbox, delivered on its GET stream, none while
// pending and none to a second session of the same owner.
func TestATerminalDecisionNotifiesTheInitiatingSessionOnce(t *testing.T) {
	env := handoffEnv(t)
	s := env.InitializeWith(t, servertest.Attorney, "2025-11-25", urlCaps)
	second := env.InitializeWith(t, servertest.Attorney, "2025-11-25", urlCaps)
	f := proposeOnStream(t, env, s, seed.Meridian, "complete")
	id, _ := elicitationParams(t, f)["elicitationId"].(string)
	if st := answer(t, s, f, "accept"); st != http.StatusAccepted {
		t.Fatalf("accept: %d", st)
	}
	if b := binding(t, env, id); b.State != handoff.StateAccepted {
		t.Errorf("binding %s, want accepted", b.State)
	}
	if got := outbox(t, env, s.ID); len(got) != 0 {
		t.Errorf("pending, the outbox holds %v", got)
	}
	owner := signIn(t, env, seed.DemoTenant, seed.DemoAttorney)
	if a := owner.approve(t, f.receipt["approval_id"].(string)); !strings.Contains(a.Body, "Approved") {
		t.Fatalf("approve: %d\n%s", a.Status, a.Body)
	}
	got := outbox(t, env, s.ID)
	if len(got) != 1 {
		t.Fatalf("the initiating session's outbox holds %v, want one message", got)
	}
	var msg map[string]any
	_ = json.Unmarshal([]byte(got[0]), &msg)
	if diff := cmp.Diff(map[string]any{"jsonrpc": "2.0", "method": handoff.CompleteMethod, "params": map[string]any{"elicitationId": id}}, msg); diff != "" {
		t.Errorf("the message (-want +got):\n%s", diff)
	}
	if other := outbox(t, env, second.ID); len(other) != 0 {
		t.Errorf("the owner's second session got %v", other)
	}
	stream := servertest.OpenStream(t, http.MethodGet, env.URL, nil, append(s.Headers(), "Accept: text/event-stream")...)
	if m := stream.NextMessage(t); m["method"] != handoff.CompleteMethod {
		t.Errorf("the GET stream delivered %v", m)
	}
	stream.Close()
	if b := binding(t, env, id); b.State != handoff.StateCompleted {
		t.Errorf("binding %s, want completed", b.State)
	}
}

// TestTheSweepersExpiryCompletesTheHandOff: a proposal that expires
// unanswered completes its binding and notifies its session in the
// expiry's transaction; a session that ended gets nothing and the expiry
// fails nothing.
func TestTheSweepersExpiryCompletesTheHandOff(t *testing.T) {
	// A proposal that expires within its session's day.
	env := servertest.New(t, servertest.Options{Approvals: true, GETStream: true, ProposalLife: 2 * time.Hour})
	s := env.InitializeWith(t, servertest.Attorney, "2025-11-25", urlCaps)
	gone := env.InitializeWith(t, servertest.Attorney, "2025-11-25", urlCaps)
	f := proposeOnStream(t, env, s, seed.Meridian, "expire")
	g := proposeOnStream(t, env, gone, seed.Meridian, "expire-gone")
	if r := servertest.DoURL(t, env.URL, http.MethodDelete, nil, gone.Headers()...); r.Status != http.StatusNoContent {
		t.Fatalf("DELETE the second session: %d", r.Status)
	}
	env.Clock.Advance(2*time.Hour + time.Minute)
	for _, d := range env.Server.Duties {
		if _, ok := d.(*proposals.Expiry); ok {
			if _, err := d.Sweep(context.Background(), env.Clock.Now()); err != nil {
				t.Fatalf("sweep: %v", err)
			}
		}
	}
	for _, c := range []struct {
		f    filed
		sess string
		msgs int
	}{{f, s.ID, 1}, {g, gone.ID, 0}} {
		id, _ := elicitationParams(t, c.f)["elicitationId"].(string)
		it, err := env.Store.Get(context.Background(), proposals.Key(seed.DemoTenant, seed.Meridian, c.f.receipt["approval_id"].(string)))
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := proposals.Decode(it); p.Status != proposals.StatusExpired {
			t.Errorf("proposal %s, want expired", p.Status)
		}
		if b := binding(t, env, id); b.State != handoff.StateCompleted {
			t.Errorf("binding %s, want completed", b.State)
		}
		if got := outbox(t, env, c.sess); len(got) != c.msgs {
			t.Errorf("session outbox %v, want %d message(s)", got, c.msgs)
		}
	}
}

// TestStoreFaultsLeaveNothingHalfDone: a fault on the binding fails the
// whole filing (503, nothing filed); a fault in the deciding transaction
// leaves neither the decision nor the notification.
func TestStoreFaultsLeaveNothingHalfDone(t *testing.T) {
	env := handoffEnv(t)
	s := env.InitializeWith(t, servertest.Attorney, "2025-11-25", urlCaps)
	env.Faulty.Add(storetest.Rule{Method: storetest.MethodTransact, Key: storetest.Prefix("HANDOFF#", ""), Nth: 1, Err: store.ErrUnavailable})
	args := servertest.ProposeArgs(seed.Meridian, "fault", proposals.ActionCreateDeadline, servertest.DeadlineArgs())
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": map[string]any{"name": "propose_action", "arguments": args}})
	r := s.Post(t, body)
	if r.Status != http.StatusServiceUnavailable {
		t.Errorf("with the binding's write failing: %d %s, want 503", r.Status, r.Body)
	}
	id := proposals.ID(env.Creds[servertest.Attorney].ID, seed.Meridian, "fault")
	if _, err := env.Store.Get(context.Background(), proposals.Key(seed.DemoTenant, seed.Meridian, id)); err == nil {
		t.Errorf("the proposal was filed")
	}
	env.Faulty.Reset()

	f := proposeOnStream(t, env, s, seed.Meridian, "decide-fault")
	eid, _ := elicitationParams(t, f)["elicitationId"].(string)
	owner := signIn(t, env, seed.DemoTenant, seed.DemoAttorney)
	env.Faulty.Add(storetest.Rule{Method: storetest.MethodTransact, Key: storetest.Prefix("HANDOFF#", ""), Err: store.ErrUnavailable})
	owner.approve(t, f.receipt["approval_id"].(string))
	env.Faulty.Reset()
	it, err := env.Store.Get(context.Background(), proposals.Key(seed.DemoTenant, seed.Meridian, f.receipt["approval_id"].(string)))
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := proposals.Decode(it); p.Status != proposals.StatusPending {
		t.Errorf("after a failed decision the proposal is %s, want pending", p.Status)
	}
	if b := binding(t, env, eid); b.State != handoff.StateSent {
		t.Errorf("after a failed decision the binding is %s", b.State)
	}
	if got := outbox(t, env, s.ID); len(got) != 0 {
		t.Errorf("after a failed decision the outbox holds %v", got)
	}
}
