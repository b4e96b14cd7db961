// Package subscriptions keeps resource subscriptions (MCP server/resources
// §Subscriptions) as store rows and notifies subscribers of changes over
// their sessions' GET streams. It is the store side of resources/subscribe,
// kept apart so that package resources reads no store.
//
// A subscription is two rows, written (or deleted) together in the
// subscribing request's one commit and expiring with the session:
//
//	SESS#<session-id>      / SUB#<uri>        the session's own list
//	T#<tenant>#SUBS#<uri>  / <session-id>     the fan-out a change reads
//
// Notify reads the fan-out partition of a URI and queues
// notifications/resources/updated {uri} in each live session's outbox
// (mcp.PostToSession), which the instance holding that session's GET
// stream delivers. A session deleted before its subscriptions expire is
// skipped and its fan-out row removed. Whether the session's principal may
// still hear of the URI is decided at delivery, not here: the GET stream
// asks the access funnel as it sends each notice (mcp.Options.MayDeliver,
// resources.Registry.MayDeliver), so an ethical wall added after the
// subscription, or after a notice was queued, withholds it.
package subscriptions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/store"
)

// SessionKey is the session-side row of a subscription.
func SessionKey(sessionID, uri string) store.Key {
	return store.Key{PK: mcp.SessionPK(sessionID), SK: "SUB#" + uri}
}

// FanOutPK is the partition of a tenant's subscribers to uri.
func FanOutPK(tenant, uri string) string { return keyspace.TenantPK(tenant) + "#SUBS#" + uri }

// FanOutKey is the fan-out row of one session's subscription to uri.
func FanOutKey(tenant, uri, sessionID string) store.Key {
	return store.Key{PK: FanOutPK(tenant, uri), SK: sessionID}
}

// Recorder adds subscription rows to a request's one commit; it implements
// resources.Subscriber. The zero value is ready to use.
type Recorder struct{}

// Subscribe adds the two rows of req's session's subscription to uri to
// req's commit (a repeated subscription rewrites them). It needs a session.
func (Recorder) Subscribe(req *mcp.Request, uri string) error {
	sess := req.Session
	if sess == nil {
		return errors.New("subscribe: no session")
	}
	at := req.Started.UTC().Format(time.RFC3339Nano)
	exp := sess.ExpiresAt.Unix()
	own := SessionKey(sess.ID, uri)
	fan := FanOutKey(req.Credential.Tenant, uri, sess.ID)
	req.AddOp(store.PutOp(store.Item{PK: own.PK, SK: own.SK, Version: 1, ExpiresAt: exp, Attrs: map[string]any{
		"uri": uri, "tenant": req.Credential.Tenant, "credential_id": req.Credential.ID, "subscribed_at": at,
	}}))
	req.AddOp(store.PutOp(store.Item{PK: fan.PK, SK: fan.SK, Version: 1, ExpiresAt: exp, Attrs: map[string]any{
		"uri": uri, "subscribed_at": at,
	}}))
	return nil
}

// Unsubscribe adds the removal of both rows to req's commit (removing rows
// that do not exist is fine).
func (Recorder) Unsubscribe(req *mcp.Request, uri string) error {
	sess := req.Session
	if sess == nil {
		return errors.New("unsubscribe: no session")
	}
	req.AddOp(store.DeleteOp(SessionKey(sess.ID, uri)))
	req.AddOp(store.DeleteOp(FanOutKey(req.Credential.Tenant, uri, sess.ID)))
	return nil
}

// Notify queues notifications/resources/updated {uri} for every live
// session of tenant subscribed to uri and returns how many it notified.
// Each message expires with its session. now is the server's clock. A
// store failure stops it and is returned wrapped (sessions already
// notified stay notified).
func Notify(ctx context.Context, st store.Store, now time.Time, tenant, uri string) (int, error) {
	q := store.Query{PK: FanOutPK(tenant, uri), Limit: store.MaxBatchGetKeys}
	notified := 0
	for {
		page, err := st.Query(ctx, q)
		if err != nil {
			return notified, fmt.Errorf("notify %s: read subscribers: %w", uri, err)
		}
		n, err := notifyPage(ctx, st, now, uri, page.Items)
		notified += n
		if err != nil {
			return notified, err
		}
		if page.NextToken == "" {
			return notified, nil
		}
		q.PageToken = page.NextToken
	}
}

// notifyPage notifies the sessions of one page of fan-out rows (at most
// store.MaxBatchGetKeys), reading their session rows in one batch.
func notifyPage(ctx context.Context, st store.Store, now time.Time, uri string, rows []store.Item) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	keys := make([]store.Key, len(rows))
	for i, row := range rows {
		keys[i] = mcp.SessionKey(row.SK)
	}
	sessions, err := st.BatchGet(ctx, keys)
	if err != nil {
		return 0, fmt.Errorf("notify %s: read sessions: %w", uri, err)
	}
	n := 0
	for i, row := range rows {
		if sessions[i] == nil {
			// The session ended before its subscription expired.
			_ = st.Delete(ctx, row.Key())
			continue
		}
		sess, err := mcp.DecodeSession(*sessions[i])
		if err != nil {
			continue
		}
		params := map[string]any{"uri": uri}
		if err := mcp.PostToSession(ctx, st, sess, "notifications/resources/updated", params, now); err != nil {
			return n, fmt.Errorf("notify %s: %w", uri, err)
		}
		n++
	}
	return n, nil
}
