package subscriptions_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/filestore"
	"github.com/custodymcp/custody/shared/subscriptions"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := filestore.Open(filepath.Join(t.TempDir(), "custody.db"), filestore.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// subscribe writes a session and its fan-out row as a subscribing request's
// commit would.
func subscribe(t *testing.T, st store.Store, tenant, uri string, live bool) *mcp.Session {
	t.Helper()
	sess := &mcp.Session{ID: mcp.NewSessionID(), Tenant: tenant, Revision: mcp.Rev20251125,
		CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour)}
	if live {
		if err := st.Put(context.Background(), sess.Item()); err != nil {
			t.Fatal(err)
		}
	}
	k := subscriptions.FanOutKey(tenant, uri, sess.ID)
	if err := st.Put(context.Background(), store.Item{PK: k.PK, SK: k.SK, Version: 1, ExpiresAt: sess.ExpiresAt.Unix(),
		Attrs: map[string]any{"uri": uri}}); err != nil {
		t.Fatal(err)
	}
	return sess
}

func outbox(t *testing.T, st store.Store, sess *mcp.Session) []store.Item {
	t.Helper()
	page, err := st.Query(context.Background(), store.Query{PK: "SESS#" + sess.ID, SK: store.SortKeyCondition{Prefix: "OUT#"}})
	if err != nil {
		t.Fatal(err)
	}
	return page.Items
}

func TestNotifyQueuesOneUpdateForEveryLiveSubscriberAcrossPages(t *testing.T) {
	st := openStore(t)
	const uri = "custody://matters/m_alvarez"
	var live []*mcp.Session
	for range 130 { // more than one page of store.MaxBatchGetKeys
		live = append(live, subscribe(t, st, "demo", uri, true))
	}
	ended := subscribe(t, st, "demo", uri, false)
	other := subscribe(t, st, "other", uri, true) // same URI, another tenant
	elsewhere := subscribe(t, st, "demo", uri+"/facts", true)

	n, err := subscriptions.Notify(context.Background(), st, now, "demo", uri)
	if err != nil || n != len(live) {
		t.Fatalf("Notify = %d, %v; want %d", n, err, len(live))
	}
	for _, sess := range live {
		items := outbox(t, st, sess)
		if len(items) != 1 {
			t.Fatalf("session outbox holds %d messages, want 1", len(items))
		}
		want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":%q}}`, uri)
		if got := string(items[0].Bytes("message")); got != want || items[0].ExpiresAt != sess.ExpiresAt.Unix() {
			t.Errorf("queued %s expiring %d, want %s expiring with the session", got, items[0].ExpiresAt, want)
		}
	}
	for name, sess := range map[string]*mcp.Session{"another tenant's": other, "another URI's": elsewhere} {
		if items := outbox(t, st, sess); len(items) != 0 {
			t.Errorf("%s subscriber was notified", name)
		}
	}
	// The ended session's fan-out row is gone: the next change skips it unread.
	if _, err := st.Get(context.Background(), subscriptions.FanOutKey("demo", uri, ended.ID)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the fan-out row of an ended session survived: %v", err)
	}
}
