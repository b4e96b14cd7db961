package ondynamo_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/auth/oauth/oauthtest"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// TestRoundTripsOfAnOAuthTokenCallAreThoseOfAKeyCall pins what an OAuth
// access token costs on DynamoDB (docs/decisions.md "Pipeline choices"): the
// token is verified on the CPU against the cached JWKS, so a call makes the
// same one BatchGetItem (the session; there is no credential row to read)
// and the same one write as a key's (its audit row's PutItem, or the
// transaction of a session's rows and of several matters' index items;
// the rate lease's requests, once per slice, are counted apart), and a
// refused token — expired, of another audience, lacking the required scope,
// forged — makes no DynamoDB request at all (a refused key makes one read).
// The JWKS is fetched once, by the first token, never per call.
func TestRoundTripsOfAnOAuthTokenCallAreThoseOfAKeyCall(t *testing.T) {
	iss := oauthtest.New(t)
	cfg := iss.Config("")
	env := newDynEnv(t, servertest.Options{OAuth: &cfg})
	sh := demoShape(t)
	const m = seed.Meridian
	now := env.Clock.Now()
	claims := iss.AccessToken(now, env.URL, seed.DemoTenant, seed.DemoAttorney,
		"custody:mcp", "custody:read", "custody:docs", "custody:tasks", "custody:analysis")
	token := iss.Sign(t, jose.ES256, oauthtest.ECKeyID, claims)
	refreshed := iss.Sign(t, jose.RS256, oauthtest.RSAKeyID, claims.With("jti", "refreshed"))
	expired := iss.Sign(t, jose.ES256, oauthtest.ECKeyID, claims.With("exp", now.Add(-time.Hour).Unix()))
	elsewhere := iss.Sign(t, jose.ES256, oauthtest.ECKeyID, claims.With("aud", "https://elsewhere.example/mcp"))
	noScope := iss.Sign(t, jose.ES256, oauthtest.ECKeyID, claims.With("scope", "custody:read"))
	otherFirm := iss.Sign(t, jose.ES256, oauthtest.ECKeyID,
		iss.AccessToken(now, env.URL, seed.OtherTenant, seed.OtherPrincipal, "custody:mcp", "custody:read"))

	// A batch read that names a credential row fails: token calls must
	// never make one. (Checked below to hit a key call, so the rule is live.)
	env.faults.set(&wireFault{Op: "BatchGetItem", BodyContains: `"SK":{"S":"CRED"}`, Status: 400, Type: "ValidationException"})
	if r := env.Do(t, http.MethodPost, []byte(initBody(rev)), headers(env.Keys[servertest.Attorney], "", "")...); r.Status != http.StatusServiceUnavailable || env.faults.hit() == 0 {
		t.Fatalf("a key call under the credential-row fault = %d (hits %d), want 503: the fault does not match credential reads", r.Status, env.faults.hit())
	}
	env.faults.set(&wireFault{Op: "BatchGetItem", BodyContains: `"SK":{"S":"CRED"}`, Status: 400, Type: "ValidationException"})
	env.ops.take()

	var sid string
	send := func(tok string, body string) func(*testing.T) *servertest.Response {
		return func(t *testing.T) *servertest.Response {
			revision := rev
			if sid == "" {
				revision = ""
			}
			return env.Do(t, http.MethodPost, []byte(body), headers(tok, sid, revision)...)
		}
	}
	cases := []struct {
		name   string
		call   func(*testing.T) *servertest.Response
		status int
		want   cost
	}{
		{"initialize (token)", func(t *testing.T) *servertest.Response {
			r := send(token, initBody(rev))(t)
			sid = r.Header.Get("Mcp-Session-Id")
			return r
		}, 200, authedTx(1, 0)}, // the tenant's instructions, as for a key
		{"notifications/initialized (token)", send(token, `{"jsonrpc":"2.0","method":"notifications/initialized"}`), 202, authed(0, 0)},
		{"tools/list (token)", send(token, rpc(2, "tools/list", nil)), 200, authed(0, 0)},
		{"tools/call list_matters (token)", send(token, toolCall(3, "list_matters", nil)), 200, authedTx(0, pages(sh.matters))},
		{"tools/call get_matter (token)", send(token, toolCall(4, "get_matter", map[string]any{"case_id": m})), 200,
			authed(1, 0)}, // the funnel's matter row is all it reads
		{"ping (refreshed token, RS256, same session)", send(refreshed, rpc(5, "ping", nil)), 200, authed(0, 0)},
		{"404 another firm's token in the session", send(otherFirm, rpc(7, "ping", nil)), 404, authed(0, 0)},
		{"401 expired token", send(expired, rpc(8, "ping", nil)), 401, cost{}},
		{"401 token for another resource", send(elsewhere, rpc(9, "ping", nil)), 401, cost{}},
		{"401 alg none", send(oauthtest.Unsigned(claims), rpc(10, "ping", nil)), 401, cost{}},
		{"403 token without custody:mcp", send(noScope, rpc(11, "ping", nil)), 403, cost{}},
		{"DELETE (token)", func(t *testing.T) *servertest.Response {
			return env.Do(t, http.MethodDelete, nil, headers(token, sid, rev)...)
		}, 204, authedTx(0, 1)},
	}
	for _, c := range cases {
		ok := t.Run(c.name, func(t *testing.T) {
			env.ops.take()
			r := c.call(t)
			got := env.ops.take()
			if r.Status != c.status {
				t.Fatalf("status = %d, want %d; body %s", r.Status, c.status, r.Body)
			}
			if diff := cmp.Diff(map[string]int(c.want), got); diff != "" {
				t.Errorf("DynamoDB requests by operation (-want +got):\n%s", diff)
			}
			t.Logf("%s: %d, reads %s, writes %s", c.name, r.Status, describe(got, readOps), describe(got, writeOps))
		})
		if !ok && strings.HasPrefix(c.name, "initialize") {
			t.Fatal("no session: the remaining cases need it")
		}
	}
	if hits := env.faults.hit(); hits != 0 {
		t.Errorf("token calls made %d batch reads naming a credential row, want none", hits)
	}
	if got := iss.Fetches(); got != 1 {
		t.Errorf("%d JWKS fetches over %d token calls, want 1 (the key set is cached)", got, len(cases))
	}
}
