package ondynamo_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/server"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store/dynamostore"
)

// TestARevokedKeyFailsOnItsNextCallOnDynamoDB is the file engine's
// revocation invariant (shared/server) on the DynamoDB engine, with a second
// instance of the endpoint on the same table: a key revoked while its
// session is open fails on its very next call, on either instance (nothing
// about authorization is cached, docs/architecture.md "The request path" step 2),
// and costs that call the batch read alone. The session belongs to the
// principal, so the owner's other key keeps it.
func TestARevokedKeyFailsOnItsNextCallOnDynamoDB(t *testing.T) {
	env := newDynEnv(t, servertest.Options{})
	// Instance B: the same composed endpoint over its own engine value on
	// the same table, with the same cursor key (as two Lambdas would be).
	storeB := dynamostore.New(env.client, env.table, dynamostore.Options{Now: env.Clock.Now})
	srvB, err := server.New(server.Config{Store: storeB, CursorKey: bytes.Repeat([]byte{7}, 32), Now: env.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	b := httptest.NewServer(srvB.Handler())
	t.Cleanup(b.Close)

	s := env.Initialize(t, servertest.Attorney, rev)
	call := toolCall(9, "list_matters", nil)
	postTo := func(url, key string) *servertest.Response {
		return post(t, url, key, s.ID, call)
	}
	for name, url := range map[string]string{"A": env.URL, "B": b.URL + "/mcp"} {
		if r := postTo(url, s.Key); r.Status != http.StatusOK {
			t.Fatalf("before revocation, instance %s: %d %s", name, r.Status, r.Body)
		}
	}

	cred := env.Creds[servertest.Attorney]
	if err := auth.Revoke(context.Background(), env.Store, cred.Tenant, cred.ID); err != nil {
		t.Fatal(err)
	}
	env.ops.take()
	for name, url := range map[string]string{"A": env.URL, "B": b.URL + "/mcp"} {
		r := postTo(url, s.Key)
		if r.Status != http.StatusUnauthorized {
			t.Errorf("after revocation, instance %s: %d %s, want 401", name, r.Status, r.Body)
		}
		if got := r.Header.Get("WWW-Authenticate"); got == "" {
			t.Errorf("instance %s: 401 without a WWW-Authenticate challenge", name)
		}
	}
	if got := env.ops.take(); sum(got, writeOps) != 0 || got["BatchGetItem"] != 2 || sum(got, readOps) != 2 {
		t.Errorf("two refused calls cost %v, want one BatchGetItem each and no write", got)
	}

	// The session is the principal's: the owner's second key keeps it.
	if r := postTo(env.URL, env.Keys[servertest.Attorney2]); r.Status != http.StatusOK {
		t.Errorf("the owner's other key lost the session: %d %s", r.Status, r.Body)
	}
}
