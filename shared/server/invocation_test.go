package server_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/auth/oauth"
	"github.com/custodymcp/custody/shared/gate"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/tools"
)

// The invocation core (issue 9): one governed invocation wherever it runs,
// answers settled after the write, params decoded once.

func receiptEnv(t *testing.T, opts servertest.Options) *servertest.Env {
	opts.RegisterExtraOn = servertest.RegisterReceiptFixture
	return servertest.New(t, opts)
}

func receiptOf(t *testing.T, res map[string]any) servertest.Receipt {
	t.Helper()
	b, _ := json.Marshal(servertest.Structured(t, res))
	var r servertest.Receipt
	if err := json.Unmarshal(b, &r); err != nil || r.ID == "" {
		t.Fatalf("no receipt in %v", res)
	}
	return r
}

// A write whose condition fails answers from the handler's conflict path:
// the first call executes and answers its receipt; a replay answers the
// original receipt, not a 503 and not a second row.
func TestAReplayedWriteAnswersItsOriginalReceiptFromTheConflictPath(t *testing.T) {
	env := receiptEnv(t, servertest.Options{})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	args := map[string]any{"key": "k1", "text": "hello"}
	first := receiptOf(t, s.Tool(t, servertest.ReceiptTool, args))
	if first.Replayed {
		t.Fatalf("first call = %+v, want executed", first)
	}
	again := s.Tool(t, servertest.ReceiptTool, args)
	if r := receiptOf(t, again); r.ID != first.ID || !r.Replayed {
		t.Errorf("replay = %+v, want the original receipt %s, replayed", r, first.ID)
	}
	// Other text under the same key is a CONFLICT, answered as a tool refusal.
	if c := servertest.RefusalClass(s.Tool(t, servertest.ReceiptTool, map[string]any{"key": "k1", "text": "other"})); c != "CONFLICT" {
		t.Errorf("same key, other text = %q, want CONFLICT", c)
	}
	var outcomes []string
	for _, r := range auditRows(t, env) {
		if r.Tool == servertest.ReceiptTool {
			outcomes = append(outcomes, r.Outcome)
		}
	}
	slices.Sort(outcomes) // the test clock stands still: rows share one time
	if diff := cmp.Diff([]string{"CONFLICT", "ok", "ok:replay"}, outcomes); diff != "" {
		t.Errorf("audit outcomes (-want +got):\n%s", diff)
	}
}

// Twenty concurrent calls with one key leave one row and twenty answers
// naming one receipt; the audit says executed once and replayed 19 times.
// (A mutex would pass this in one process; the condition is what holds it,
// and shared/server/ondynamo runs it on DynamoDB.)
func TestTwentyConcurrentWritesWithOneKeyLeaveOneRow(t *testing.T) {
	env := receiptEnv(t, servertest.Options{})
	servertest.RaceReceipts(t, env, 20)
}

// The invocation core runs outside HTTP: a plain Go call of Registry.Run,
// under an admission of the gate, is refused exactly as tools/call refuses
// — a missing scope, an invalid argument, a screened matter and a withheld
// document for a client-safe key — and each leaves one audit row.
func TestTheInvocationCoreRefusesOutsideHTTPExactlyAsOverHTTP(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	core := env.Server.Core
	cases := []struct {
		name, role, tool string
		args             map[string]any
	}{
		{"a missing scope", servertest.ReadOnly, "list_documents", map[string]any{"case_id": seed.Alvarez}},
		{"an invalid argument", servertest.Attorney, "get_matter", map[string]any{"case_id": seed.Alvarez, "bogus": 1}},
		{"a screened matter", servertest.Paralegal, "get_matter", map[string]any{"case_id": seed.Harbor}},
		{"a withheld document for a client-safe key", servertest.ClientSafe, "get_document",
			map[string]any{"case_id": seed.Alvarez, "document_id": privilegedDocument(t, env)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Over HTTP.
			s := env.Initialize(t, c.role, "2025-11-25")
			overHTTP := s.Call(t, "tools/call", map[string]any{"name": c.tool, "arguments": c.args})
			// Through the core, with no HTTP request at all.
			cred := env.Creds[c.role]
			adm, err := core.Gate.Readmit(t.Context(), cred.Reference(), env.Clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			rec := &audit.Record{RequestID: "plain-" + c.role, At: env.Clock.Now(), Tenant: cred.Tenant,
				Principal: cred.Owner, CredentialID: cred.ID, Method: "tools/call"}
			args, _ := json.Marshal(c.args)
			before := len(auditRows(t, env))
			out, err := core.Tools.Run(t.Context(), core.Gate, adm, tools.Invocation{
				Name: c.tool, Arguments: args, Credential: adm.Credential, Revision: mcp.Rev20251125,
				Rate: adm.Rate, Now: env.Clock.Now(), Arrived: time.Now(), Audit: rec,
			}, 0)
			if err != nil {
				t.Fatal(err)
			}
			rows := auditRows(t, env)
			if n := len(rows) - before; n != 1 {
				t.Errorf("%d audit rows written, want 1", n)
			}
			var httpOutcome, coreOutcome string
			for _, r := range rows {
				switch {
				case r.RequestID == rec.RequestID:
					coreOutcome = r.Outcome
				case r.CredentialID == cred.ID && r.Method == "tools/call":
					httpOutcome = r.Outcome
				}
			}
			if coreOutcome == "" || coreOutcome != httpOutcome {
				t.Errorf("audit outcome outside HTTP %q, over HTTP %q: want one and the same", coreOutcome, httpOutcome)
			}
			got := plainAnswer(t, out)
			want := overHTTP["result"]
			if want == nil {
				want = overHTTP["error"]
			}
			zeroMeta(got)
			zeroMeta(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("outside HTTP vs over HTTP (-http +core):\n%s", diff)
			}
		})
	}
}

// plainAnswer is an outcome as the JSON tools/call would carry.
func plainAnswer(t *testing.T, out tools.Outcome) any {
	t.Helper()
	var v any
	switch {
	case errors.Is(out.Err, tools.ErrUnknownTool):
		b, _ := json.Marshal(mcp.InvalidParams("Unknown tool."))
		_ = json.Unmarshal(b, &v)
	case out.Err != nil:
		b, _ := json.Marshal(out.Err)
		_ = json.Unmarshal(b, &v)
	default:
		b, err := out.Result.Encode()
		if err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal(b, &v)
	}
	return v
}

// privilegedDocument is a privileged document of the Alvarez matter.
func privilegedDocument(t *testing.T, env *servertest.Env) string {
	t.Helper()
	docs, err := records.NewRepo(env.Store).Documents(t.Context(), seed.DemoTenant, seed.Alvarez)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if d.Privilege != records.PrivilegeNone {
			return d.ID
		}
	}
	t.Fatal("the seed has no privileged Alvarez document")
	return ""
}

// A stored credential is re-admitted from the store, never from what the
// work recorded: revoked since → refused with the reason; a frozen tenant →
// refused by the kill switch; an OAuth reference past its exp → refused.
func TestReadmissionRefusesWhatChangedSinceTheWorkWasStored(t *testing.T) {
	env := servertest.New(t, servertest.Options{KillSwitch: tools.KillSwitch{FrozenTenants: map[string]bool{seed.OtherTenant: true}}})
	g := env.Server.Core.Gate
	now := env.Clock.Now()
	ref := env.Creds[servertest.Attorney2].Reference()
	if adm, err := g.Readmit(t.Context(), ref, now); err != nil || adm.Credential.ID != ref.CredentialID {
		t.Fatalf("Readmit of a live key = %v, %v", adm, err)
	}
	if err := auth.Revoke(t.Context(), env.Store, seed.DemoTenant, ref.CredentialID); err != nil {
		t.Fatal(err)
	}
	var refused *gate.RefusedError
	if _, err := g.Readmit(t.Context(), ref, now); !errors.As(err, &refused) || refused.Reason != gate.ReasonRevoked {
		t.Errorf("Readmit of a revoked key = %v, want %q", err, gate.ReasonRevoked)
	}
	if _, err := g.Readmit(t.Context(), env.Creds[servertest.OtherFirm].Reference(), now); !errors.As(err, &refused) || refused.Reason != gate.ReasonFrozen {
		t.Errorf("Readmit in a frozen tenant = %v, want %q", err, gate.ReasonFrozen)
	}
	// An OAuth reference carries its token's claims and exp.
	oauthRef := auth.Reference{Type: auth.RefOAuth, Tenant: seed.DemoTenant, Owner: seed.DemoAttorney,
		Issuer: "https://idp.example", Subject: "u1", ClientID: "c1", Class: auth.ClassStandard,
		Scopes: []auth.Scope{auth.ScopeRead}, ExpiresAt: now.Add(time.Minute)}
	oauthRef.CredentialID = oauthCredentialID(oauthRef)
	if _, err := g.Readmit(t.Context(), oauthRef, now); err != nil {
		t.Errorf("Readmit of an unexpired OAuth reference = %v", err)
	}
	if _, err := g.Readmit(t.Context(), oauthRef, now.Add(2*time.Minute)); !errors.As(err, &refused) || refused.Reason != gate.ReasonExpired {
		t.Errorf("Readmit past the token's exp = %v, want %q", err, gate.ReasonExpired)
	}
	tampered := oauthRef
	tampered.Scopes = append(tampered.Scopes, auth.ScopeWrite)
	tampered.Class = auth.ClassClientSafe // the id no longer derives from the claims
	if _, err := g.Readmit(t.Context(), tampered, now); !errors.As(err, &refused) {
		t.Errorf("Readmit of a reference whose claims do not give its id = %v, want refused", err)
	}
}

// Params are decoded once per tools/call, in both eras (the counting hook
// of mcp.Options.ParamsDecoded).
func TestParamsAreDecodedOncePerToolsCallInBothEras(t *testing.T) {
	var mu sync.Mutex
	decodes := map[string][]int{}
	env := servertest.New(t, servertest.Options{ParamsDecoded: func(method string, n int) {
		mu.Lock()
		defer mu.Unlock()
		decodes[method] = append(decodes[method], n)
	}})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	s.Tool(t, "get_matter", map[string]any{"case_id": seed.Alvarez, "_meta": map[string]any{"progressToken": 1}})
	r := call2026(t, env.URL, env.Keys[servertest.Attorney], 3, "tools/call", map[string]any{
		"name": "get_matter", "arguments": map[string]any{"case_id": seed.Alvarez}, "_meta": meta2026(`{}`)})
	if r.Status != http.StatusOK {
		t.Fatalf("2026 call: %d %s", r.Status, r.Body)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]int{1, 1}, decodes["tools/call"]); diff != "" {
		t.Errorf("params decodes per tools/call, 2025 then 2026 (-want +got):\n%s", diff)
	}
}

func oauthCredentialID(r auth.Reference) string {
	id, _ := oauth.CredentialID(r.Issuer, r.Tenant, r.Subject, r.ClientID, r.Class)
	return id
}
