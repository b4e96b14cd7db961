package server_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/server/servertest"
)

func TestGETStreamDeliversQueuedMessagesAndClosesOnRevocation(t *testing.T) {
	env := servertest.New(t, servertest.Options{GETStream: true})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	es := servertest.OpenStream(t, http.MethodGet, env.URL, nil, append(s.Headers(), "Accept: text/event-stream")...)
	if ev, ok := es.Next(); !ok || ev.ID == "" || ev.Data != "" {
		t.Fatalf("first event %+v, want a priming event", ev)
	}
	// Another instance (here: the store directly) queues a message for the session.
	sess := &mcp.Session{ID: s.ID, ExpiresAt: servertest.Epoch.Add(24 * 60 * 60 * 1e9)}
	if err := mcp.PostToSession(context.Background(), env.Store, sess, "notifications/resources/updated",
		map[string]any{"uri": "custody://matters/m_harbor"}, servertest.Epoch); err != nil {
		t.Fatal(err)
	}
	msg := es.NextMessage(t)
	if msg["method"] != "notifications/resources/updated" || msg["params"].(map[string]any)["uri"] != "custody://matters/m_harbor" {
		t.Errorf("stream delivered %v", msg)
	}
	cred := env.Creds[servertest.Attorney]
	if err := auth.Revoke(context.Background(), env.Store, cred.Tenant, cred.ID); err != nil {
		t.Fatal(err)
	}
	for {
		ev, ok := es.Next()
		if !ok {
			break // closed after the credential stopped resolving
		}
		if ev.Data != "" {
			t.Errorf("after revocation the stream sent %+v", ev)
		}
	}
}

func TestFB30_GETIsAStreamOr405NeverAn400(t *testing.T) {
	for _, on := range []bool{false, true} {
		env := servertest.New(t, servertest.Options{GETStream: on})
		s := env.Initialize(t, servertest.Attorney, "2025-11-25")
		r := env.Do(t, http.MethodGet, nil, append(s.Headers(), "Accept: application/json")...)
		if r.Status != http.StatusMethodNotAllowed || r.Header.Get("WWW-Authenticate") != "" {
			t.Errorf("stream %v, Accept JSON: %d, want 405 without a challenge", on, r.Status)
		}
		if !on {
			r := env.Do(t, http.MethodGet, nil, append(s.Headers(), "Accept: text/event-stream")...)
			if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST, DELETE, OPTIONS" {
				t.Errorf("stream off: %d Allow=%q, want 405 with Allow: POST, DELETE, OPTIONS", r.Status, r.Header.Get("Allow"))
			}
		}
		// Every 405 and the preflight name the same methods (RFC 9110 §10.2.1).
		want := map[bool]string{false: "POST, DELETE, OPTIONS", true: "GET, POST, DELETE, OPTIONS"}[on]
		for _, m := range []string{http.MethodPut, http.MethodHead, http.MethodOptions} {
			if got := env.Do(t, m, nil).Header.Get("Allow"); got != want {
				t.Errorf("stream %v, %s: Allow %q, want %q", on, m, got, want)
			}
		}
	}
}
