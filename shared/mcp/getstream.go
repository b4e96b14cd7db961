package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/store"
)

// The GET stream (MCP basic/transports §Listening for Messages from the
// Server) carries a session's server-initiated messages — resource updates,
// notifications/elicitation/complete — that any instance may produce. They
// are posted as outbox rows under the session (`SESS#<id>` / `OUT#…`); the
// instance holding the stream polls them, sends each once and deletes it.
// The stream opens with a priming event, sends an SSE comment as a
// heartbeat, and re-resolves the credential every Options.Recheck (30 s by
// default): a revoked key, a failed resolver or an ended session closes
// it. Each message is checked again as it is delivered
// (Options.MayDeliver): access may have changed since it was queued, and
// a message the credential may no longer receive is dropped, not sent.
// Offering the stream is a configuration switch, since a held stream is a
// held Lambda.

// OutboxKey is the row of one message waiting for a session's GET stream.
func OutboxKey(sessionID string, at time.Time) store.Key {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return store.Key{PK: SessionPK(sessionID), SK: "OUT#" + at.UTC().Format("20060102T150405.000000000") + "#" + hex.EncodeToString(b[:])}
}

// PostToSession queues a notification for a session's GET stream. It expires
// with the session, whether or not a stream ever takes it.
func PostToSession(ctx context.Context, st store.Store, sess *Session, method string, params any, now time.Time) error {
	op, err := OutboxOp(sess.ID, sess.ExpiresAt, method, params, now)
	if err != nil {
		return err
	}
	return st.Put(ctx, op.Item, op.Conditions...)
}

// OutboxOp is PostToSession as an operation for a caller's transaction:
// the outbox row of a notification for session sessionID, expiring with
// the session at sessionExpires (the hand-off's completion joins the
// transaction that decides its proposal, issue 15).
func OutboxOp(sessionID string, sessionExpires time.Time, method string, params any, now time.Time) (store.Op, error) {
	msg, err := Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if err != nil {
		return store.Op{}, err
	}
	k := OutboxKey(sessionID, now)
	return store.PutOp(store.Item{PK: k.PK, SK: k.SK, Version: 1, ExpiresAt: sessionExpires.Unix(),
		Attrs: map[string]any{"message": msg}}, store.NotExists()), nil
}

// serveGETStream holds the session's stream until the client leaves, the
// session ends or the credential stops resolving.
//
// A session holds at most Options.MaxGETStreams streams (issue 8, item 9):
// each takes a slot row, `SESS#<id>` / `STREAM#<n>`, claimed with a
// not-exists condition in the GET's one commit and leased for three
// Recheck intervals (streamLease); the holder renews it at each recheck and deletes it
// when the stream ends. A process that dies leaves its slot to expire.
// Every slot taken → 429.
func (s *Server) serveGETStream(x *exchange, token string) {
	sess := x.adm.Session
	slot, ok := s.freeStreamSlot(x.r.Context(), sess)
	if !ok {
		x.w.Header().Set("Retry-After", strconv.Itoa(int(s.streamLease()/time.Second)+1))
		s.httpRefusal(x, "GET /mcp", http.StatusTooManyRequests, ID{}, &Error{Code: CodeRateLimited,
			Message: "Too many GET streams: this session holds " + strconv.Itoa(s.opts.MaxGETStreams) + " already; close one first."})
		return
	}
	holder := newRequestID()
	rec := s.newAudit(x, "GET /mcp")
	rec.Outcome = audit.OutcomeOK
	x.count = s.countIfAllowed(x, 1)
	taken := false
	x.addWrites(Writes{Ops: []store.Op{store.PutOp(store.Item{PK: slot.PK, SK: slot.SK, Version: 1,
		ExpiresAt: x.started.Add(s.streamLease()).Unix(), Attrs: map[string]any{"holder": holder}}, store.NotExists())}},
		func(context.Context, int) { taken = true; rec.Outcome = "http:429" })
	if err := s.commit(x); err != nil {
		s.commitFailed(x, ID{}, err)
		return
	}
	if taken { // another stream took the slot between the read and the write
		s.logOutcome(x, http.StatusTooManyRequests)
		writeError(x.w, http.StatusTooManyRequests, ID{}, &Error{Code: CodeRateLimited,
			Message: "Too many GET streams for this session; retry shortly."})
		return
	}
	s.logOutcome(x, http.StatusOK)
	defer s.releaseStreamSlot(x.r.Context(), slot, holder)
	out := newStream(x.w, true)
	ctx := x.r.Context()
	cred := x.adm.Credential
	if err := out.start(); err != nil { // the priming event alone
		return
	}
	poll := time.NewTicker(s.opts.StreamPoll)
	defer poll.Stop()
	heartbeat := time.NewTicker(s.opts.Heartbeat)
	defer heartbeat.Stop()
	recheck := time.NewTicker(s.opts.Recheck)
	defer recheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-heartbeat.C:
			if out.comment("keep-alive") != nil {
				return
			}
		case <-recheck.C:
			if cred = s.stillAuthorized(ctx, token, sess); cred == nil || !s.renewStreamSlot(ctx, slot, holder) {
				return
			}
		case <-poll.C:
			if s.drainOutbox(ctx, out, sess, cred) != nil {
				return
			}
		}
	}
}

// streamLease is how long a stream's slot lives unrenewed: three Recheck
// intervals, and never under 3 s (expiry is kept in whole seconds).
func (s *Server) streamLease() time.Duration { return max(3*s.opts.Recheck, 3*time.Second) }

// streamSlotKey is the row of a session's n-th GET stream slot.
func streamSlotKey(sessionID string, n int) store.Key {
	return store.Key{PK: SessionPK(sessionID), SK: "STREAM#" + strconv.Itoa(n)}
}

// freeStreamSlot reads the session's slots (one strongly consistent query)
// and returns a free one.
func (s *Server) freeStreamSlot(ctx context.Context, sess *Session) (store.Key, bool) {
	taken := map[string]bool{}
	page, err := s.opts.Store.Query(ctx, store.Query{PK: SessionPK(sess.ID), SK: store.SortKeyCondition{Prefix: "STREAM#"}})
	if err != nil {
		return store.Key{}, false
	}
	for _, it := range page.Items {
		taken[it.SK] = true
	}
	for n := 0; n < s.opts.MaxGETStreams; n++ {
		if k := streamSlotKey(sess.ID, n); !taken[k.SK] {
			return k, true
		}
	}
	return store.Key{}, false
}

// renewStreamSlot extends the stream's lease; false when the slot is no
// longer this stream's (it expired and another took it).
func (s *Server) renewStreamSlot(ctx context.Context, slot store.Key, holder string) bool {
	exp := s.opts.Now().Add(s.streamLease()).Unix()
	_, err := s.opts.Store.Update(ctx, slot, store.Update{ExpiresAt: &exp}, store.AttrEquals("holder", holder))
	return err == nil || errors.Is(err, store.ErrUnavailable) // a store hiccup does not end a stream
}

// releaseStreamSlot frees the slot when the stream ends, even when the
// client has gone (its context is cancelled by then).
func (s *Server) releaseStreamSlot(ctx context.Context, slot store.Key, holder string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_ = s.opts.Store.Delete(ctx, slot, store.AttrEquals("holder", holder))
}

// stillAuthorized re-resolves the credential and the session: it returns
// the credential as it now stands, or nil when the stream must close.
func (s *Server) stillAuthorized(ctx context.Context, token string, sess *Session) *auth.Credential {
	adm, err := s.opts.Gate.Admit(ctx, AdmitRequest{Token: token, SessionID: sess.ID, Lane: ratelimit.LaneRead, Now: s.opts.Now()})
	if err != nil || adm.Credential == nil || adm.Session == nil {
		return nil
	}
	return adm.Credential
}

// drainOutbox sends the session's queued messages in order, deleting each
// once sent and dropping each Options.MayDeliver withholds from cred; an
// unreadable outbox, or a delivery check that fails, is retried at the
// next tick.
func (s *Server) drainOutbox(ctx context.Context, out *stream, sess *Session, cred *auth.Credential) error {
	page, err := s.opts.Store.Query(ctx, store.Query{PK: SessionPK(sess.ID), SK: store.SortKeyCondition{Prefix: "OUT#"}, Limit: 50})
	if err != nil {
		return nil
	}
	for _, it := range page.Items {
		if s.opts.MayDeliver != nil {
			ok, err := s.opts.MayDeliver(ctx, cred, it.Bytes("message"))
			if err != nil {
				return nil
			}
			if !ok {
				// Withheld for good: a later change of access does not
				// resend what was decided at delivery.
				if err := s.opts.Store.Delete(ctx, it.Key()); err != nil && !errors.Is(err, store.ErrConflict) {
					return nil
				}
				continue
			}
		}
		// Deleting first makes delivery at most once when two streams of one
		// session race for the same row.
		if err := s.opts.Store.Delete(ctx, it.Key(), store.Exists()); err != nil {
			if errors.Is(err, store.ErrConflict) {
				continue
			}
			return nil
		}
		if err := out.send(it.Bytes("message")); err != nil {
			return err
		}
	}
	return nil
}

// streamToken is the credential a GET presented (re-resolved while it runs).
func (s *Server) streamToken(r *http.Request) string {
	t, ok, err := auth.Presented(r.Header)
	if err != nil {
		return "" // admit refused it already
	}
	if ok {
		return t
	}
	return s.opts.AnonymousToken
}
