package ondynamo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/tools"
)

const rev = "2025-11-25"

// shape counts the demo firm's rows the read tools query, so every expected
// round trip below is derived from the data and from what each tool reads,
// not copied from a run.
type shape struct {
	matters        int
	docs           map[string]int // by matter
	chunks         map[string]int // by matter, every version
	facts          map[string]int // by matter
	deadlines      map[string]int // by matter
	notes          map[string]int // by matter
	versions       map[string]int // by document
	versionChunks  map[string]int // by document + "#" + version
	currentVersion map[string]int // by document
	fact           map[string]records.Fact
}

func demoShape(t *testing.T) shape {
	t.Helper()
	fx, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	s := shape{
		matters: len(fx.Matters), docs: map[string]int{}, chunks: map[string]int{}, facts: map[string]int{},
		deadlines: map[string]int{}, notes: map[string]int{}, versions: map[string]int{},
		versionChunks: map[string]int{}, currentVersion: map[string]int{}, fact: map[string]records.Fact{},
	}
	for _, d := range fx.Documents {
		s.docs[d.Matter]++
		s.versions[d.ID] = len(d.Versions)
		s.currentVersion[d.ID] = d.CurrentVersion
		for _, v := range d.Versions {
			s.chunks[d.Matter] += len(v.Chunks)
			s.versionChunks[fmt.Sprintf("%s#%d", d.ID, v.Number)] = len(v.Chunks)
		}
	}
	for _, f := range fx.Facts {
		s.facts[f.Matter]++
		s.fact[f.ID] = f
	}
	for _, d := range fx.Deadlines {
		s.deadlines[d.Matter]++
	}
	for _, n := range fx.Notes {
		s.notes[n.Matter]++
	}
	return s
}

// pages is how many DynamoDB Query requests reading n rows of one key range
// takes: the repo reads store.MaxQueryLimit rows per store query, and
// dynamostore asks DynamoDB for one more than that to know whether more
// follow. (DynamoDB also cuts a response at 1 MB, which the emulator does
// not; on AWS a partition of large rows may take more pages, each one more
// read of the tool's own.)
func pages(n int) int { return max(1, (n+store.MaxQueryLimit-1)/store.MaxQueryLimit) }

// factReads are get_fact_provenance's own reads for fact f of an attorney:
// the funnel's matter row and the fact row (GetItem), the distinct cited
// documents in one batch read per 100 (BatchGetItem), and every chunk of each
// distinct cited version (Query).
func (s shape) factReads(f string) (gets, batches, queries int) {
	docs, versions := map[string]bool{}, map[string]bool{}
	for _, a := range s.fact[f].Assertions {
		docs[a.DocumentID] = true
		versions[fmt.Sprintf("%s#%d", a.DocumentID, a.Version)] = true
	}
	for v := range versions {
		queries += pages(s.versionChunks[v])
	}
	return 2, (len(docs) + 99) / 100, queries
}

// cost is a call's DynamoDB requests by operation.
type cost map[string]int

// authed is the cost of an authenticated call whose tool reads gets point
// reads and queries Query requests, and which ends in the one write of its
// audit row, a plain conditional PutItem (issue 19, item 6: the rate count
// is the lease's, once per slice, counted apart — ops.takeLeases).
func authed(gets, queries int) cost {
	c := cost{"BatchGetItem": 1, "PutItem": 1}
	if gets > 0 {
		c["GetItem"] = gets
	}
	if queries > 0 {
		c["Query"] = queries
	}
	return c
}

// authedTx is authed for a call whose one write holds more than its audit
// row — a session's rows (initialize, DELETE, logging/setLevel), several
// audit rows (a batch) or index items of further matters — and so is one
// TransactWriteItems.
func authedTx(gets, queries int) cost {
	c := authed(gets, queries)
	delete(c, "PutItem")
	c["TransactWriteItems"] = 1
	return c
}

// refusedByRate is the cost of a call refused by its rate limit: the batch
// read, and the audit row alone written with one PutItem (nothing counted).
var refusedByRate = cost{"BatchGetItem": 1, "PutItem": 1}

// SlowInput asks the slow fixture to let the clock run.
type SlowInput struct {
	Seconds int `json:"seconds" jsonschema:"How far the test clock moves while the call runs."`
}

// SlowOutput is the slow fixture's answer.
type SlowOutput struct {
	Done bool `json:"done"`
}

// registerSlow adds fixture_slow: a tool that advances the test clock while
// it runs, standing for a call that outlives its rate window.
func registerSlow(clock *servertest.Clock) func(*tools.Registry) error {
	return func(reg *tools.Registry) error {
		return tools.Register(reg, tools.Spec{
			Name: "fixture_slow", Title: "Slow call (test fixture)", Scope: auth.ScopeRead,
			Description: "Advances the test clock by the given seconds while it runs.",
		}, func(_ context.Context, _ *tools.Call, in SlowInput) (SlowOutput, error) {
			clock.Advance(time.Duration(in.Seconds) * time.Second)
			return SlowOutput{Done: true}, nil
		})
	}
}

func rpc(id int, method string, params any) string {
	p, _ := json.Marshal(params)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p)
}

func toolCall(id int, name string, args map[string]any) string {
	return rpc(id, "tools/call", map[string]any{"name": name, "arguments": args})
}

func initBody(revision string) string {
	return rpc(1, "initialize", map[string]any{
		"protocolVersion": revision, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "ondynamo", "version": "0"},
	})
}

// headers builds request headers; empty values are left out.
func headers(key, sid, revision string) []string {
	var h []string
	if key != "" {
		h = append(h, "Authorization: Bearer "+key)
	}
	if sid != "" {
		h = append(h, "Mcp-Session-Id: "+sid)
	}
	if revision != "" {
		h = append(h, "MCP-Protocol-Version: "+revision)
	}
	return h
}

// refusalClass returns a tools/call answer's refusal class ("" for a
// success) and its JSON-RPC error code (0 for none).
func refusalClass(t *testing.T, r *servertest.Response) (class string, code int) {
	t.Helper()
	var msg struct {
		Result *struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Error struct {
					Class string `json:"class"`
				} `json:"error"`
			} `json:"structuredContent"`
		} `json:"result"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &msg); err != nil {
		t.Fatalf("answer is not JSON-RPC: %q", r.Body)
	}
	if msg.Error != nil {
		return "", msg.Error.Code
	}
	if msg.Result != nil && msg.Result.IsError {
		return msg.Result.StructuredContent.Error.Class, 0
	}
	return "", 0
}

// TestRoundTripsPerCallTypeAreExactlyWhatDecisionsAllow pins, per call type,
// the DynamoDB requests one call costs (docs/decisions.md "Pipeline
// choices"): one BatchGetItem (credential, session) plus the tool's own
// reads, and exactly one write — a single PutItem of the audit row, or a
// TransactWriteItems when the request writes more (the session's rows at
// initialize, DELETE and logging/setLevel, several audit rows of a batch,
// index items of further matters) — on every authenticated path, refusals
// included. The rate count is no longer in that write (issue 19, item 6):
// admission takes the call from the instance's lease of the bucket, whose
// requests (a GetItem and a PutItem for a window's first slice, an
// UpdateItem for each further one) are counted apart and pinned by the
// time cases below and TestRoundTripsOfRateLeasesArePinned. An unknown
// or revoked key costs the batch read and no write; a missing or malformed
// key costs nothing. The test clock stands still unless a case moves it, so
// every call lands in one rate window and no row expires under a write by
// accident (the last cases show what time does).
func TestRoundTripsPerCallTypeAreExactlyWhatDecisionsAllow(t *testing.T) {
	clock := servertest.NewClock(servertest.Epoch)
	env := newDynEnv(t, servertest.Options{Clock: clock, RegisterExtra: registerSlow(clock)})
	sh := demoShape(t)
	ctx := context.Background()

	// Sessions and keys the cases use, made before counting starts.
	paralegal := env.Initialize(t, servertest.Paralegal, rev)
	allowListed := env.Initialize(t, servertest.AllowListed, rev)
	clientSafe := env.Initialize(t, servertest.ClientSafe, rev)
	batching := env.Initialize(t, servertest.Attorney, "2025-03-26")
	limitedKey, _, err := auth.Mint(ctx, env.Store, auth.MintRequest{
		Tenant: seed.DemoTenant, Owner: seed.DemoAttorney, Scopes: []auth.Scope{auth.ScopeRead},
		RateLimits: map[string]int{"read": 1}, Label: "one read a minute",
	}, servertest.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	revokedKey, revoked, err := auth.Mint(ctx, env.Store, auth.MintRequest{
		Tenant: seed.DemoTenant, Owner: seed.DemoAttorney, Scopes: []auth.Scope{auth.ScopeRead},
	}, servertest.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	if err := auth.Revoke(ctx, env.Store, revoked.Tenant, revoked.ID); err != nil {
		t.Fatal(err)
	}
	env.ops.take()

	attorney := env.Keys[servertest.Attorney]
	var sid, limitedSID string // minted by the initialize cases
	send := func(key string, session *string, body string) func(*testing.T) *servertest.Response {
		return func(t *testing.T) *servertest.Response {
			s := ""
			if session != nil {
				s = *session
			}
			revision := rev
			if s == "" {
				revision = ""
			}
			return env.Do(t, http.MethodPost, []byte(body), headers(key, s, revision)...)
		}
	}
	in := func(s *servertest.Session, body string) func(*testing.T) *servertest.Response {
		return func(t *testing.T) *servertest.Response { return s.Post(t, []byte(body)) }
	}
	const m = seed.Meridian
	const doc = "d_mer_complaint"
	const fact = "f_mer_001"
	factGets, factBatches, factQueries := sh.factReads(fact)
	factCost := authed(factGets, factQueries)
	factCost["BatchGetItem"] += factBatches
	// search_documents without a case_id lists the matters, then reads each
	// one the attorney reaches (every demo matter).
	reachable := len(seed.DemoMatters)
	searchAll := pages(sh.matters)
	for _, mm := range seed.DemoMatters {
		searchAll += pages(sh.docs[mm]) + pages(sh.chunks[mm])
	}

	cases := []struct {
		name   string
		call   func(*testing.T) *servertest.Response
		status int
		class  string // expected refusal class of a tools/call ("" none)
		code   int    // expected JSON-RPC error code (0 none)
		batch  int    // a batch: the number of responses expected
		want   cost
		// leases, when set, are the rate bucket's requests the call makes
		// exactly (counted apart from want; otherwise only reported).
		leases cost
	}{
		// initialize reads the tenant row for the firm's own instructions.
		{name: "initialize", status: 200, want: authedTx(1, 0),
			call: func(t *testing.T) *servertest.Response {
				r := send(attorney, nil, initBody(rev))(t)
				sid = r.Header.Get("Mcp-Session-Id")
				return r
			}},
		{name: "notifications/initialized", status: 202, want: authed(0, 0),
			call: send(attorney, &sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)},
		{name: "ping", status: 200, want: authed(0, 0), call: send(attorney, &sid, rpc(2, "ping", nil))},
		{name: "tools/list", status: 200, want: authed(0, 0), call: send(attorney, &sid, rpc(3, "tools/list", nil))},

		// Each read tool: the funnel's GetItem of the matter row, then what
		// the tool itself reads.
		// list_matters answers from every matter: their index items join
		// the audit row in one transaction.
		{name: "tools/call list_matters", status: 200, want: authedTx(0, pages(sh.matters)),
			call: send(attorney, &sid, toolCall(4, "list_matters", nil))},
		// get_matter answers from the matter row the funnel read.
		{name: "tools/call get_matter", status: 200, want: authed(1, 0),
			call: send(attorney, &sid, toolCall(5, "get_matter", map[string]any{"case_id": m}))},
		{name: "tools/call list_documents", status: 200, want: authed(1, pages(sh.docs[m])),
			call: send(attorney, &sid, toolCall(6, "list_documents", map[string]any{"case_id": m}))},
		{name: "tools/call get_document", status: 200, want: authed(2, pages(sh.versions[doc])+1),
			call: send(attorney, &sid, toolCall(7, "get_document", map[string]any{"case_id": m, "document_id": doc}))},
		{name: "tools/call search_documents (one matter)", status: 200, want: authed(1, pages(sh.docs[m])+pages(sh.chunks[m])),
			call: send(attorney, &sid, toolCall(8, "search_documents", map[string]any{"case_id": m, "query": "cargo damage"}))},
		{name: fmt.Sprintf("tools/call search_documents (%d reachable matters)", reachable), status: 200, want: authedTx(0, searchAll),
			call: send(attorney, &sid, toolCall(9, "search_documents", map[string]any{"query": "cargo damage"}))},
		{name: "tools/call search_in_document", status: 200,
			want: authed(2, pages(sh.versionChunks[fmt.Sprintf("%s#%d", doc, sh.currentVersion[doc])])),
			call: send(attorney, &sid, toolCall(10, "search_in_document", map[string]any{"case_id": m, "document_id": doc, "query": "plaintiff"}))},
		{name: "tools/call get_fact_record", status: 200, want: authed(1, pages(sh.facts[m])),
			call: send(attorney, &sid, toolCall(11, "get_fact_record", map[string]any{"case_id": m}))},
		{name: "tools/call get_fact_record (client-safe: + document privileges)", status: 200,
			want: authed(1, pages(sh.facts[m])+pages(sh.docs[m])),
			call: in(clientSafe, toolCall(12, "get_fact_record", map[string]any{"case_id": m}))},
		{name: "tools/call get_fact_provenance", status: 200, want: factCost,
			call: send(attorney, &sid, toolCall(13, "get_fact_provenance", map[string]any{"case_id": m, "fact_id": fact}))},
		{name: "tools/call list_deadlines", status: 200, want: authed(1, pages(sh.deadlines[m])),
			call: send(attorney, &sid, toolCall(14, "list_deadlines", map[string]any{"case_id": m}))},
		{name: "tools/call list_case_notes", status: 200, want: authed(1, pages(sh.notes[m])),
			call: send(attorney, &sid, toolCall(15, "list_case_notes", map[string]any{"case_id": m}))},

		// Refusals: audited and counted like any call, in the same one write.
		{name: "tools/call VALIDATION refusal", status: 200, class: tools.ClassValidation, want: authed(0, 0),
			call: send(attorney, &sid, toolCall(16, "get_matter", map[string]any{"case_id": m, "unexpected": true}))},
		{name: "tools/call unknown tool (-32602)", status: 200, code: -32602, want: authed(0, 0),
			call: send(attorney, &sid, toolCall(17, "no_such_tool", nil))},
		{name: "tools/call NOT_FOUND (no such matter)", status: 200, class: tools.ClassNotFound, want: authed(1, 0),
			call: send(attorney, &sid, toolCall(18, "get_matter", map[string]any{"case_id": "m_does_not_exist"}))},
		{name: "tools/call NOT_FOUND (screened matter)", status: 200, class: tools.ClassNotFound, want: authed(1, 0),
			call: in(paralegal, toolCall(19, "get_matter", map[string]any{"case_id": seed.Harbor}))},
		{name: "tools/call NOT_FOUND (outside the allow-list: no read)", status: 200, class: tools.ClassNotFound, want: authed(0, 0),
			call: in(allowListed, toolCall(20, "get_matter", map[string]any{"case_id": seed.Harbor}))},
		{name: "batch of ping + tools/list (2025-03-26)", status: 200, batch: 2, want: authedTx(0, 0),
			call: in(batching, `[`+rpc(21, "ping", nil)+`,`+rpc(22, "tools/list", nil)+`]`)},
		{name: "GET /mcp (no stream: 405)", status: 405, want: authed(0, 0),
			call: func(t *testing.T) *servertest.Response {
				return env.Do(t, http.MethodGet, nil, headers(attorney, sid, rev)...)
			}},
		{name: "400 missing Mcp-Session-Id", status: 400, want: authed(0, 0),
			call: send(attorney, nil, rpc(23, "ping", nil))},
		{name: "404 unknown session", status: 404, want: authed(0, 0),
			call: func(t *testing.T) *servertest.Response {
				return env.Do(t, http.MethodPost, []byte(rpc(24, "ping", nil)), headers(attorney, strings.Repeat("ab", 16), rev)...)
			}},

		// Session-level requests of the streaming work: the log level is an
		// update of the session row inside the one transaction; a
		// cancellation reads the session's parked requests (one Query) to
		// withdraw those it names; a client's answer reads the parked
		// request it names (one GetItem) and is refused 400 when none is
		// pending.
		{name: "logging/setLevel", status: 200, want: authedTx(0, 0),
			call: send(attorney, &sid, rpc(40, "logging/setLevel", map[string]any{"level": "warning"}))},
		{name: "notifications/cancelled", status: 202, want: authed(0, 1),
			call: send(attorney, &sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":15}}`)},
		{name: "client response to no pending request (400)", status: 400, want: authed(1, 0),
			call: send(attorney, &sid, `{"jsonrpc":"2.0","id":"s-nothing-pending","result":{}}`)},

		// A key allowed one read a minute: initialize takes it, then every
		// call is refused and writes its audit row alone.
		{name: "initialize (limit 1/min: the one allowed)", status: 200, want: authedTx(1, 0),
			call: func(t *testing.T) *servertest.Response {
				r := send(limitedKey, nil, initBody(rev))(t)
				limitedSID = r.Header.Get("Mcp-Session-Id")
				return r
			}},
		{name: "notification over the limit (202, audit only)", status: 202, want: refusedByRate,
			call: send(limitedKey, &limitedSID, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)},
		{name: "ping over the limit (429)", status: 429, code: -32000, want: refusedByRate,
			call: send(limitedKey, &limitedSID, rpc(25, "ping", nil))},
		{name: "tools/call over the limit (RATE_LIMITED)", status: 200, class: tools.ClassRateLimited, want: refusedByRate,
			call: send(limitedKey, &limitedSID, toolCall(26, "get_matter", map[string]any{"case_id": m}))},
		{name: "DELETE over the limit (audit + session delete, nothing counted)", status: 204, want: authedTx(0, 1),
			call: func(t *testing.T) *servertest.Response {
				return env.Do(t, http.MethodDelete, nil, headers(limitedKey, limitedSID, rev)...)
			}},

		// Unauthenticated: at most the batch read, never a write.
		{name: "401 no credential", status: 401, want: cost{},
			call: send("", &sid, rpc(27, "ping", nil))},
		{name: "401 malformed key", status: 401, want: cost{},
			call: send("ck_not-a-key", &sid, rpc(28, "ping", nil))},
		{name: "401 unknown well-formed key", status: 401, want: cost{"BatchGetItem": 1},
			call: send(auth.NewKey(), &sid, rpc(29, "ping", nil))},
		{name: "401 revoked key", status: 401, want: cost{"BatchGetItem": 1},
			call: send(revokedKey, &sid, rpc(30, "ping", nil))},

		// DELETE reads the session's parked requests (one Query) to reject
		// the pending ones in its one write.
		{name: "DELETE", status: 204, want: authedTx(0, 1),
			call: func(t *testing.T) *servertest.Response {
				return env.Do(t, http.MethodDelete, nil, headers(attorney, sid, rev)...)
			}},
		{name: "404 the deleted session", status: 404, want: authed(0, 0),
			call: send(attorney, &sid, rpc(31, "ping", nil))},

		// Time. The first call of a new rate window leases the window's
		// first slice: a GetItem of the bucket and a PutItem guarded by the
		// version read, before the call runs; its commit is its audit row.
		{name: "ping three minutes later (a new rate window)", status: 200, want: authed(0, 0),
			leases: cost{"GetItem": 1, "PutItem": 1},
			call: func(t *testing.T) *servertest.Response {
				clock.Advance(3 * time.Minute)
				return batching.Post(t, []byte(rpc(32, "ping", nil)))
			}},
		// A bucket row past its expiry is still stored (DynamoDB deletes
		// lazily): the lease's read drops it, and the Put of the new window
		// is guarded by NotExists, which treats an expired row as absent.
		{name: "ping after the bucket row expired (still stored)", status: 200, want: authed(0, 0),
			leases: cost{"GetItem": 1, "PutItem": 1},
			call: func(t *testing.T) *servertest.Response {
				clock.Advance(2*time.Minute + ratelimit.MaxCall)
				return batching.Post(t, []byte(rpc(33, "ping", nil)))
			}},
		// A call that outlives its rate window was counted by its slice
		// before it ran: its commit never touches the bucket, however long
		// it ran (before issue 19, a call past ratelimit.MaxCall met its
		// expired bucket row at commit and cost one more read and write).
		{name: "tools/call running 3 minutes (past its rate window)", status: 200, want: authed(0, 0),
			leases: cost{},
			call:   in(batching, toolCall(34, "fixture_slow", map[string]any{"seconds": 180}))},
		{name: "ping (a new window: its first slice)", status: 200, want: authed(0, 0),
			leases: cost{"GetItem": 1, "PutItem": 1},
			call:   in(batching, rpc(35, "ping", nil))},
		{name: "tools/call running 20 minutes (past ratelimit.MaxCall: still one write)", status: 200,
			want: authed(0, 0), leases: cost{},
			call: in(batching, toolCall(36, "fixture_slow", map[string]any{"seconds": 20 * 60}))},
	}

	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "call type\tstatus\treads\twrites\trate lease (once per slice)")
	for _, c := range cases {
		ok := t.Run(c.name, func(t *testing.T) {
			env.ops.take()
			env.ops.takeLeases()
			r := c.call(t)
			got := env.ops.take()
			leases := env.ops.takeLeases()
			fmt.Fprintf(tw, "%s\t%d\t%d (%s)\t%d (%s)\t%s\n", c.name, r.Status,
				sum(got, readOps), describe(got, readOps), sum(got, writeOps), describe(got, writeOps),
				describe(leases, append(readOps, writeOps...)))
			if c.leases != nil {
				if diff := cmp.Diff(map[string]int(c.leases), leases); diff != "" {
					t.Errorf("rate lease requests by operation (-want +got):\n%s", diff)
				}
			}
			if r.Status != c.status {
				t.Fatalf("status = %d, want %d; body %s", r.Status, c.status, r.Body)
			}
			switch {
			case c.batch > 0:
				var answers []map[string]any
				if err := json.Unmarshal(r.Body, &answers); err != nil || len(answers) != c.batch {
					t.Errorf("batch answer = %s, want %d responses", r.Body, c.batch)
				}
				for _, a := range answers {
					if a["error"] != nil {
						t.Errorf("batch response %v is an error", a)
					}
				}
			case c.status == 200:
				if class, code := refusalClass(t, r); class != c.class || code != c.code {
					t.Errorf("refusal = %q, code %d; want %q, code %d; body %s", class, code, c.class, c.code, r.Body)
				}
			}
			want := c.want
			if want == nil {
				want = cost{}
			}
			if diff := cmp.Diff(map[string]int(want), got); diff != "" {
				t.Errorf("DynamoDB requests by operation (-want +got):\n%s", diff)
			}
		})
		if !ok && c.name == "initialize" {
			t.Fatal("no session: the remaining cases need it")
		}
	}
	tw.Flush()
	t.Logf("DynamoDB round trips per call (minidyn, demo firm):\n%s", table.String())
}
