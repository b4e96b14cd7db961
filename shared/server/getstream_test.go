package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/admin"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/resources"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/subscriptions"
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
	// One priming event only: the next event is the queued message.
	ev, ok := es.Next()
	var msg map[string]any
	if !ok || ev.Data == "" || json.Unmarshal([]byte(ev.Data), &msg) != nil {
		t.Fatalf("second event %+v, want the queued message after one priming event", ev)
	}
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

// TestAnEthicalWallStopsNoticesAtDelivery: a principal subscribed to a
// matter's resources gets no further notice of it once screened from it —
// neither the screen's own notification nor one queued later — while its
// notices of other matters still flow; each withheld notice is dropped
// from the outbox, never held for later. The check is made through the
// access funnel when the stream delivers, so a notice queued before the
// wall went up is withheld too.
func TestAnEthicalWallStopsNoticesAtDelivery(t *testing.T) {
	env := servertest.New(t, servertest.Options{GETStream: true})
	ctx := context.Background()
	s := env.Initialize(t, servertest.Paralegal, "2025-11-25")
	walled, open := resources.MatterURI(seed.Alvarez), resources.MatterURI(seed.Meridian)
	for _, uri := range []string{walled, open} {
		if e := rpcErrorOf(s.Call(t, "resources/subscribe", map[string]any{"uri": uri})); e != nil {
			t.Fatalf("subscribe %s: %v", uri, e)
		}
	}
	// Queued before the wall: the stream is not open yet.
	if n, err := subscriptions.Notify(ctx, env.Store, servertest.Epoch, seed.DemoTenant, walled); err != nil || n != 1 {
		t.Fatalf("Notify(%s) = %d, %v", walled, n, err)
	}
	res, err := admin.Screen(ctx, env.Store, admin.ScreenRequest{Tenant: seed.DemoTenant, CaseID: seed.Alvarez,
		Principal: seed.DemoParalegal, Screened: true}, servertest.Epoch.Add(time.Second))
	if err != nil || !res.Changed || res.Notified == 0 {
		t.Fatalf("Screen = %+v, %v; want a change notifying the subscriber", res, err)
	}
	if n, err := subscriptions.Notify(ctx, env.Store, servertest.Epoch.Add(2*time.Second), seed.DemoTenant, walled); err != nil || n != 1 {
		t.Fatalf("Notify(%s) after the wall = %d, %v", walled, n, err)
	}
	// The last notice queued is of a matter the principal still reaches:
	// the stream delivers in order, so it arrives first only if every
	// notice of the walled matter was withheld.
	if n, err := subscriptions.Notify(ctx, env.Store, servertest.Epoch.Add(3*time.Second), seed.DemoTenant, open); err != nil || n != 1 {
		t.Fatalf("Notify(%s) = %d, %v", open, n, err)
	}
	es := servertest.OpenStream(t, http.MethodGet, env.URL, nil, append(s.Headers(), "Accept: text/event-stream")...)
	if ev, ok := es.Next(); !ok || ev.Data != "" {
		t.Fatalf("first event %+v, want the priming event", ev)
	}
	msg := es.NextMessage(t)
	if uri := msg["params"].(map[string]any)["uri"]; uri != open {
		t.Errorf("the stream delivered a notice of %v, want only %s (the walled matter's withheld)", uri, open)
	}
	es.Close()
	page, err := env.Store.Query(ctx, store.Query{PK: mcp.SessionPK(s.ID), SK: store.SortKeyCondition{Prefix: "OUT#"}})
	if err != nil || len(page.Items) != 0 {
		t.Errorf("outbox after delivery: %d rows, %v; want the withheld notices dropped", len(page.Items), err)
	}
}
