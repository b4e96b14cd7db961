package approvals_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/custodymcp/custody/shared/approvals"
	"github.com/custodymcp/custody/shared/approvals/ledger"
	"github.com/custodymcp/custody/shared/approvals/outbox"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
)

// desk is the whole product as a decision test meets it: the composed
// server (servertest, file engine behind the fault decorator, the demo firm
// seeded) with the approval page under /approvals of its own URL, agents'
// keys filing proposals through /mcp propose_action, and people signing in
// to the page with sign-in links.
type desk struct {
	*servertest.Env
	base string
	// lastID is a test case's scratch: the proposal (or value) it works on.
	lastID string
	// sessions are the MCP sessions of the roles that proposed, reused;
	// filed numbers the idempotency keys.
	sessions map[string]*servertest.Session
	filed    int
}

func newDesk(t testing.TB, opts ...func(*servertest.Options)) *desk {
	t.Helper()
	o := servertest.Options{Approvals: true}
	for _, f := range opts {
		f(&o)
	}
	env := servertest.New(t, o)
	return &desk{Env: env, base: env.HTTP.URL, sessions: map[string]*servertest.Session{}}
}

// propose files a proposal through the role's key and returns its id.
func (d *desk) propose(t testing.TB, role, matter, action string, args map[string]any) string {
	t.Helper()
	s := d.sessions[role]
	if s == nil {
		s = d.Initialize(t, role, "2025-11-25")
		d.sessions[role] = s
	}
	d.filed++
	key := fmt.Sprintf("k-%d", d.filed)
	res := s.Tool(t, "propose_action", servertest.ProposeArgs(matter, key, action, args))
	sc := servertest.Structured(t, res)
	id, _ := sc["approval_id"].(string)
	if sc["status"] != "pending_approval" || id == "" {
		t.Fatalf("propose_action(%s on %s) = %v, want pending_approval", action, matter, sc)
	}
	return id
}

// deadline files a routine create_deadline on matter.
func (d *desk) deadline(t testing.TB, role, matter, title string) string {
	t.Helper()
	return d.propose(t, role, matter, proposals.ActionCreateDeadline,
		map[string]any{"title": title, "due_date": "2027-01-15", "kind": "filing"})
}

// production files a serve_production (confirm-required, independent) on
// matter.
func (d *desk) production(t testing.TB, role, matter string, docs ...string) string {
	t.Helper()
	ids := make([]any, len(docs))
	for i, doc := range docs {
		ids[i] = doc
	}
	return d.propose(t, role, matter, proposals.ActionServeProduction,
		map[string]any{"document_ids": ids, "recipient": "Opposing counsel", "method": "electronic_service"})
}

// person is someone signed in to the page: their session cookie.
type person struct {
	d      *desk
	who    string
	cookie string
}

// signIn spends a fresh sign-in link of principal on the page.
func (d *desk) signIn(t testing.TB, principal string) *person {
	t.Helper()
	l, err := approvals.MintLink(context.Background(), d.Store, approvals.LinkRequest{Tenant: seed.DemoTenant, Principal: principal}, d.Clock.Now())
	if err != nil {
		t.Fatalf("MintLink(%s): %v", principal, err)
	}
	a := d.post(t, "/approvals/signin", url.Values{"t": {l.Token}}, "")
	if a.Status != http.StatusSeeOther {
		t.Fatalf("sign in %s = %d:\n%s", principal, a.Status, a.Body)
	}
	for _, line := range a.Header.Values("Set-Cookie") {
		if c, err := http.ParseSetCookie(line); err == nil && c.Name == approvals.CookieName {
			return &person{d: d, who: principal, cookie: c.Value}
		}
	}
	t.Fatalf("sign in %s set no session cookie", principal)
	return nil
}

// page is an answer of the page.
type page struct {
	Status int
	Header http.Header
	Body   string
}

// request sends a request to the page as a browser of its origin would
// (Origin the base's, the cookie when given).
func (d *desk) request(t testing.TB, method, path string, form url.Values, cookie string, header map[string]string) page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, d.base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", d.base)
	}
	if cookie != "" {
		req.Header.Set("Cookie", approvals.CookieName+"="+cookie)
	}
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return page{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

func (d *desk) post(t testing.TB, path string, form url.Values, cookie string) page {
	t.Helper()
	return d.request(t, http.MethodPost, path, form, cookie, nil)
}

// csrf is the person's token for a form.
func (p *person) csrf(form string) string { return approvals.CSRFToken(p.cookie, form) }

// inbox is the person's review page.
func (p *person) inbox(t testing.TB) page {
	t.Helper()
	a := p.d.request(t, http.MethodGet, "/approvals", nil, p.cookie, nil)
	if a.Status != http.StatusOK {
		t.Fatalf("GET /approvals as %s = %d:\n%s", p.who, a.Status, a.Body)
	}
	return a
}

// review posts the review form with ids (and any extra fields).
func (p *person) review(t testing.TB, ids []string, extra url.Values) page {
	t.Helper()
	form := url.Values{"csrf": {p.csrf(approvals.FormReview)}, "ids": ids}
	for k, v := range extra {
		form[k] = v
	}
	return p.d.post(t, "/approvals/review", form, p.cookie)
}

// confirm asks for the second confirmation of id and returns the page and
// the nonce it carries ("" when none).
func (p *person) confirm(t testing.TB, id string) (page, string) {
	t.Helper()
	a := p.d.post(t, "/approvals/p/"+id+"/confirm", url.Values{"csrf": {p.csrf(approvals.FormConfirm)}}, p.cookie)
	m := regexp.MustCompile(`name="nonce" value="(cnf_[0-9a-f]{32})"`).FindStringSubmatch(a.Body)
	if m == nil {
		return a, ""
	}
	return a, m[1]
}

// decide posts the decide form of id (with a nonce when not "").
func (p *person) decide(t testing.TB, id, nonce string) page {
	t.Helper()
	form := url.Values{"csrf": {p.csrf(approvals.FormDecide)}}
	if nonce != "" {
		form.Set("nonce", nonce)
	}
	return p.d.post(t, "/approvals/p/"+id+"/decide", form, p.cookie)
}

// decline posts the decline form of id.
func (p *person) decline(t testing.TB, id string) page {
	t.Helper()
	return p.d.post(t, "/approvals/p/"+id+"/decline", url.Values{"csrf": {p.csrf(approvals.FormDecline)}}, p.cookie)
}

// outcome is one id's row on a results page.
type outcome struct{ Status, Code string }

var resultRow = regexp.MustCompile(`<tr id="result-([^"]+)" data-status="([^"]*)" data-code="([^"]*)">`)

// outcomes reads a results page: id → its status and code.
func outcomes(t testing.TB, a page) map[string]outcome {
	t.Helper()
	if a.Status != http.StatusOK {
		t.Fatalf("results page = %d:\n%s", a.Status, a.Body)
	}
	out := map[string]outcome{}
	for _, m := range resultRow.FindAllStringSubmatch(a.Body, -1) {
		out[html.UnescapeString(m[1])] = outcome{Status: m[2], Code: m[3]}
	}
	return out
}

// allOK reads a results page's headline: every asked decision done.
func allOK(a page) bool { return strings.Contains(a.Body, `data-ok="true"`) }

// proposal reads a proposal row as stored.
func (d *desk) proposal(t testing.TB, matter, id string) *proposals.Proposal {
	t.Helper()
	it, err := d.Store.Get(context.Background(), proposals.Key(seed.DemoTenant, matter, id))
	if err != nil {
		t.Fatalf("read proposal %s: %v", id, err)
	}
	p, err := proposals.Decode(it)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// rows lists the rows of a matter's partition under a sort-key prefix.
func (d *desk) rows(t testing.TB, matter, prefix string) []store.Item {
	t.Helper()
	pg, err := d.Store.Query(context.Background(), store.Query{PK: records.MatterPK(seed.DemoTenant, matter), SK: store.SortKeyCondition{Prefix: prefix}})
	if err != nil {
		t.Fatal(err)
	}
	return pg.Items
}

// deadlines are a matter's deadline rows titled title.
func (d *desk) deadlines(t testing.TB, matter, title string) []records.Deadline {
	t.Helper()
	all, err := records.NewRepo(d.Store).Deadlines(context.Background(), seed.DemoTenant, matter)
	if err != nil {
		t.Fatal(err)
	}
	var out []records.Deadline
	for _, dl := range all {
		if dl.Title == title {
			out = append(out, dl)
		}
	}
	return out
}

// ledgerOf is a matter's ledger entries.
func (d *desk) ledgerOf(t testing.TB, matter string) []ledger.Entry {
	t.Helper()
	es, err := ledger.Entries(context.Background(), d.Store, seed.DemoTenant, matter)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// counter is a matter's pending counter.
func (d *desk) counter(t testing.TB, matter string) int64 {
	t.Helper()
	it, err := d.Store.Get(context.Background(), proposals.CounterKey(seed.DemoTenant, matter))
	if err != nil {
		return 0
	}
	return proposals.Pending(&it)
}

// putRow rewrites a stored row (a test planting or editing what the store
// holds, as someone with access to the table could).
func (d *desk) putRow(t testing.TB, it store.Item) {
	t.Helper()
	if err := d.Store.Put(context.Background(), it); err != nil {
		t.Fatal(err)
	}
}

// editProposal rewrites a proposal row's payload with f applied.
func (d *desk) editProposal(t testing.TB, matter, id string, f func(map[string]any)) {
	t.Helper()
	it, err := d.Store.Get(context.Background(), proposals.Key(seed.DemoTenant, matter, id))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(it.Bytes(proposals.AttrData), &doc); err != nil {
		t.Fatal(err)
	}
	f(doc)
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	it.Attrs[proposals.AttrData] = b
	d.putRow(t, it)
}

// addAttorney adds a second licensed attorney to the demo firm and to the
// teams of matters.
func (d *desk) addAttorney(t testing.TB, id string, matters ...string) {
	t.Helper()
	ctx := context.Background()
	now := d.Clock.Now()
	it, err := records.PrincipalItem(seed.DemoTenant, records.Principal{ID: id, Name: "Lee Marsh", Role: records.RoleAttorney,
		Licensed: true, CreatedAt: now, UpdatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	d.putRow(t, it)
	repo := records.NewRepo(d.Store)
	for _, m := range matters {
		mt, err := repo.Matter(ctx, seed.DemoTenant, m)
		if err != nil {
			t.Fatal(err)
		}
		mt.Team = append(mt.Team, id)
		row, err := records.MatterItem(seed.DemoTenant, mt)
		if err != nil {
			t.Fatal(err)
		}
		cur, _ := d.Store.Get(ctx, records.MatterKey(seed.DemoTenant, m))
		row.Version = cur.Version + 1
		d.putRow(t, row)
	}
}

// outbox is the demo firm's outbox, every message.
func (d *desk) outbox(t testing.TB) []outbox.Message {
	t.Helper()
	msgs, err := outbox.List(context.Background(), d.Store, seed.DemoTenant, true)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// mintKey mints another key for owner with scopes.
func (d *desk) mintKey(t testing.TB, owner string, scopes ...auth.Scope) (string, *auth.Credential) {
	t.Helper()
	key, cred, err := auth.Mint(context.Background(), d.Store, auth.MintRequest{Tenant: seed.DemoTenant, Owner: owner, Scopes: scopes}, d.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return key, cred
}
