// Package gate implements mcp.Gate over the store: it authenticates every
// request from scratch, meters it and audits it, in the round trips
// DECISIONS.md pins — one batch read (credential, session, rate bucket) before
// anything is evaluated, and exactly one write (the rate count and the audit
// rows with their per-matter index items, plus a session row at initialize
// or DELETE) after the answer is known, refusals included. Only index items
// beyond the one transaction's room are put before it (package audit's
// write rule), so an ordinary call still costs one write. An unauthenticated request costs at most that one
// read and no write.
//
// A request presents an API key (auth.WellFormedKey) or, once an issuer is
// configured (Options.OAuth), an OAuth access token. A token is verified
// first, on the CPU (package oauth; its issuer's key set is cached), so its
// one batch read holds only the session and the rate bucket — there is no
// credential row — and a refused token costs no read at all. From there a
// token's credential is treated as a key's: the session must belong to its
// principal, the bucket is keyed by its digest (Credential.KeyHash), the one
// write is the same. A key set that cannot be fetched is an Admit error
// (503, like a store failure); a bad token is refused with
// Denial{Error: "invalid_token"} (401), a valid one lacking the scope /mcp
// requires with Denial{Error: "insufficient_scope"} (403, RFC 6750 §3.1).
// An unknown or revoked key is refused with the zero Denial, which mcp
// answers as invalid_token too (the client presented it), with the same
// message for both: the answer never says which.
package gate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/auth/oauth"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/store"
)

// Surface names the rate-limit surface of /mcp.
const Surface = "mcp"

// Gate is the store-backed mcp.Gate.
type Gate struct {
	store  store.Store
	limits ratelimit.Limits
	oauth  *oauth.Verifier
}

var _ mcp.Gate = (*Gate)(nil)

// Options configure a Gate. The zero value serves API keys with the default
// limits.
type Options struct {
	// Limits are the per-lane limits per minute; nil means
	// ratelimit.DefaultLimits() (a credential row may override them).
	Limits ratelimit.Limits
	// OAuth, when set, accepts the access tokens it verifies beside API
	// keys; nil accepts API keys only.
	OAuth *oauth.Verifier
}

// New returns a gate over st.
func New(st store.Store, opts Options) *Gate {
	if opts.Limits == nil {
		opts.Limits = ratelimit.DefaultLimits()
	}
	return &Gate{store: st, limits: opts.Limits, oauth: opts.OAuth}
}

// admitted is what Commit needs from Admit's read.
type admitted struct {
	bucket ratelimit.Bucket
	now    time.Time
}

// Admit authenticates the token and reads the session and rate bucket in the
// same batch (DECISIONS.md "Identity and binding": fetched together, judged
// only after the credential is accepted).
func (g *Gate) Admit(ctx context.Context, req mcp.AdmitRequest) (*mcp.Admission, error) {
	switch {
	case auth.WellFormedKey(req.Token):
		return g.admitKey(ctx, req)
	case g.oauth != nil && req.Token != "":
		return g.admitToken(ctx, req)
	}
	return &mcp.Admission{}, nil
}

// admitKey reads the key's credential row with the session and bucket.
func (g *Gate) admitKey(ctx context.Context, req mcp.AdmitRequest) (*mcp.Admission, error) {
	hash := auth.HashKey(req.Token)
	bucketKey := ratelimit.Key(hash, Surface, req.Lane)
	keys := []store.Key{auth.CredentialKey(hash), bucketKey}
	if req.SessionID != "" {
		keys = append(keys, mcp.SessionKey(req.SessionID))
	}
	rows, err := g.store.BatchGet(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("admit: %w", err)
	}
	if rows[0] == nil {
		return &mcp.Admission{}, nil
	}
	cred, err := auth.DecodeCredential(*rows[0])
	if err != nil {
		return nil, fmt.Errorf("admit: %w", err)
	}
	if cred.Revoked {
		return &mcp.Admission{}, nil
	}
	return g.admitted(req, cred, bucketKey, rows[1], rows[2:])
}

// admitToken verifies an OAuth access token, then reads the session and
// bucket: the token is its own credential, there is no row to read.
func (g *Gate) admitToken(ctx context.Context, req mcp.AdmitRequest) (*mcp.Admission, error) {
	cred, err := g.oauth.Verify(ctx, req.Token, req.Now)
	switch {
	case errors.Is(err, oauth.ErrUnavailable):
		return nil, fmt.Errorf("admit: %w", err)
	case errors.Is(err, oauth.ErrInsufficientScope):
		return &mcp.Admission{Denial: mcp.Denial{Error: "insufficient_scope", Scope: g.oauth.RequiredScope()}}, nil
	case err != nil:
		return &mcp.Admission{Denial: mcp.Denial{Error: "invalid_token"}}, nil
	}
	bucketKey := ratelimit.Key(cred.KeyHash, Surface, req.Lane)
	keys := []store.Key{bucketKey}
	if req.SessionID != "" {
		keys = append(keys, mcp.SessionKey(req.SessionID))
	}
	rows, err := g.store.BatchGet(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("admit: %w", err)
	}
	return g.admitted(req, cred, bucketKey, rows[0], rows[1:])
}

// admitted judges what the batch read brought for an accepted credential:
// the session (sessionRow, when one was asked for) only if it belongs to
// the credential's principal, and the lane's rate decision.
func (g *Gate) admitted(req mcp.AdmitRequest, cred *auth.Credential, bucketKey store.Key, bucketRow *store.Item, sessionRow []*store.Item) (*mcp.Admission, error) {
	adm := &mcp.Admission{Credential: cred}
	if len(sessionRow) > 0 && sessionRow[0] != nil {
		sess, err := mcp.DecodeSession(*sessionRow[0])
		if err != nil {
			return nil, fmt.Errorf("admit: %w", err)
		}
		// A session of another principal is answered like an unknown one.
		if sess.Tenant == cred.Tenant && sess.Principal == cred.Owner {
			adm.Session = sess
		}
	}
	bucket := ratelimit.DecodeBucket(bucketKey, bucketRow)
	limit, ok := cred.RateLimits[string(req.Lane)]
	if !ok {
		limit = g.limits[req.Lane]
	}
	adm.Rate = ratelimit.Decide(bucket, limit, req.Now)
	adm.State = &admitted{bucket: bucket, now: req.Now}
	return adm, nil
}

// maxBucketRetries bounds the re-reads when concurrent requests of one key
// open a new rate window at once.
const maxBucketRetries = 5

// Commit performs the request's one write. Only when another request of the
// same key opened a new rate window in between does it re-read the bucket and
// write again (ratelimit package doc) — or when the call ran longer than
// ratelimit.MaxCall, so the bucket row it was admitted with has expired (a
// case shared/server/ondynamo pins).
//
// The audit rows' index items (audit.Record.IndexItems: one per further
// matter an answer contains) join the transaction as far as it has room
// (store.MaxTransactItems); the rest are put before it, one plain put each,
// so no answer is ever committed without its index entries (the write rule
// of package audit). A request of at most one matter writes none.
func (g *Gate) Commit(ctx context.Context, adm *mcp.Admission, c mcp.Commitment) error {
	st, _ := adm.State.(*admitted)
	if st == nil {
		return errors.New("commit: admission was not made by this gate")
	}
	var index []store.Item
	for i := range c.Audit {
		index = append(index, c.Audit[i].IndexItems()...)
	}
	withOps := true
	for attempt := 0; ; attempt++ {
		var ops []store.Op
		if c.Count > 0 {
			ops = append(ops, ratelimit.Consume(st.bucket, st.now, int64(c.Count)))
		}
		for i := range c.Audit {
			ops = append(ops, store.PutOp(c.Audit[i].Item(), store.NotExists()))
		}
		if c.CreateSession != nil {
			ops = append(ops, store.PutOp(c.CreateSession.Item(), store.NotExists()))
		}
		if c.DeleteSession != "" {
			ops = append(ops, store.DeleteOp(mcp.SessionKey(c.DeleteSession)))
		}
		if len(index) > 0 {
			room := store.MaxTransactItems - len(ops) - len(c.Ops)
			room = max(0, min(room, len(index)))
			// Written once, on the first attempt: a retry finds them there.
			if err := putAll(ctx, g.store, index[room:]); err != nil {
				return fmt.Errorf("commit: audit index: %w", err)
			}
			for _, it := range index[:room] {
				ops = append(ops, store.PutOp(it))
			}
			index = index[:room]
		}
		ownOps := len(ops)
		if withOps {
			ops = append(ops, c.Ops...)
		}
		if len(ops) == 0 {
			return nil
		}
		err := write(ctx, g.store, ops)
		if err == nil {
			if !withOps && len(c.Ops) > 0 {
				return mcp.ErrOpsConflict
			}
			return nil
		}
		var tx *store.TxCanceledError
		if errors.As(err, &tx) && tx.Index >= ownOps {
			// The request's own condition failed: record the count and the
			// audit rows in one more write, without its ops.
			withOps = false
			continue
		}
		if c.Count == 0 || !bucketFailed(err) || attempt >= maxBucketRetries {
			return fmt.Errorf("commit: %w", err)
		}
		it, gerr := g.store.Get(ctx, st.bucket.Key)
		switch {
		case errors.Is(gerr, store.ErrNotFound):
			st.bucket = ratelimit.DecodeBucket(st.bucket.Key, nil)
		case gerr != nil:
			return fmt.Errorf("commit: re-read rate bucket: %w", gerr)
		default:
			st.bucket = ratelimit.DecodeBucket(st.bucket.Key, &it)
		}
	}
}

// maxParallelPuts bounds the overflow index puts in flight at once.
const maxParallelPuts = 8

// putAll puts items unconditionally, up to maxParallelPuts at a time, and
// returns the first failure once every put has ended.
func putAll(ctx context.Context, st store.Store, items []store.Item) error {
	if len(items) == 0 {
		return nil
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	slots := make(chan struct{}, maxParallelPuts)
	for _, it := range items {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if err := st.Put(ctx, it); err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("put %s: %w", it.Key(), err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

// bucketFailed reports whether the write failed on the rate bucket's guard
// (always the first operation when a count is written).
func bucketFailed(err error) bool {
	var tx *store.TxCanceledError
	if errors.As(err, &tx) {
		return tx.Index == 0
	}
	return errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrExists)
}

// write performs ops as one write: a single operation directly, several as
// one transaction.
func write(ctx context.Context, st store.Store, ops []store.Op) error {
	if len(ops) > 1 {
		return st.Transact(ctx, ops)
	}
	op := ops[0]
	switch op.Kind {
	case store.OpPut:
		return st.Put(ctx, op.Item, op.Conditions...)
	case store.OpUpdate:
		_, err := st.Update(ctx, op.Key, op.Update, op.Conditions...)
		return err
	case store.OpDelete:
		return st.Delete(ctx, op.Key, op.Conditions...)
	}
	return st.Transact(ctx, ops)
}
