// Package gate implements mcp.Gate over the store: it authenticates every
// request from scratch, meters it and audits it, in the round trips
// docs/decisions.md "Pipeline choices" pins — one batch read (credential,
// session) before anything is evaluated, and exactly one write (the audit
// rows with their per-matter index items, plus a session row at initialize
// or DELETE: a single put of the audit row for an ordinary call) after the
// answer is known, refusals included. Only index items beyond the one
// transaction's room are put before it (package audit's write rule). The
// rate limit is admitted from the process's lease of the lane's bucket
// (ratelimit.Leases): the bucket is read and written only when a new slice
// is leased, before the request runs. An unauthenticated request costs at
// most that one read and no write.
//
// A request presents an API key (auth.WellFormedKey) or, once an issuer is
// configured (Options.OAuth), an OAuth access token. A token is verified
// first, on the CPU (package oauth; its issuer's key set is cached), so its
// one batch read holds only the session — there is no
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
	store       store.Store
	limits      ratelimit.Limits
	oauth       *oauth.Verifier
	sessionTTL  time.Duration
	maxSessions int64
	slots       *slots
	frozen      map[string]bool
	retention   time.Duration
	leases      *ratelimit.Leases
	// sessions keeps session rows decoded, reused only for a row read
	// again with identical bytes (store.RowCache; issue 19, item 2).
	sessions *store.RowCache[mcp.Session]
}

// sessionRowsKept is how many decoded session rows a Gate keeps.
const sessionRowsKept = 4096

// DefaultAuditRetention is how long audit rows are kept unless configured:
// seven years, the span firms commonly keep client-file records (issue 8,
// item 4: every row expires; none grows the store for ever).
const DefaultAuditRetention = 7 * 365 * 24 * time.Hour

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
	// SessionTTL is a session's absolute lifetime (the window of the live
	// session count); 0 means 24 h.
	SessionTTL time.Duration
	// MaxSessions caps a credential's live sessions; 0 means 100
	// (issue 8, item 4).
	MaxSessions int
	// MaxConcurrent caps a credential's calls running at once in a lane, in
	// this process; nil means 4 in the expensive lane and no cap elsewhere.
	// A call over the cap is refused like a rate-limited one, retry after
	// 1 s (issue 8, item 3).
	MaxConcurrent map[ratelimit.Lane]int
	// FrozenTenants are the tenants the kill switch has turned off
	// (tools.KillSwitch's, from the same configuration): Readmit refuses
	// their work. Admit leaves the refusal to the invocation core, which
	// answers KILL_SWITCH.
	FrozenTenants map[string]bool
	// AuditRetention is the audit rows' TTL; 0 means DefaultAuditRetention.
	AuditRetention time.Duration
}

// New returns a gate over st.
func New(st store.Store, opts Options) *Gate {
	if opts.Limits == nil {
		opts.Limits = ratelimit.DefaultLimits()
	}
	if opts.SessionTTL == 0 {
		opts.SessionTTL = 24 * time.Hour
	}
	if opts.MaxSessions == 0 {
		opts.MaxSessions = 100
	}
	if opts.AuditRetention == 0 {
		opts.AuditRetention = DefaultAuditRetention
	}
	if opts.MaxConcurrent == nil {
		opts.MaxConcurrent = map[ratelimit.Lane]int{ratelimit.LaneExpensive: 4}
	}
	return &Gate{store: st, limits: opts.Limits, oauth: opts.OAuth, sessionTTL: opts.SessionTTL,
		maxSessions: int64(opts.MaxSessions), slots: newSlots(opts.MaxConcurrent), frozen: opts.FrozenTenants,
		retention: opts.AuditRetention, leases: ratelimit.NewLeases(), sessions: store.NewRowCache[mcp.Session](sessionRowsKept)}
}

// admitted is what Commit needs from Admit's read.
type admitted struct {
	bucket store.Key // the lane's rate bucket
	limit  int
	now    time.Time
	// charged is how many requests Admit took from the process's lease
	// (ratelimit.Leases): Commit gives back those not counted.
	charged int
	// sessions: the credential's session counters, read when the request
	// starts a session.
	sessions sessionCount
	keyHash  string
}

// Admit authenticates the token and reads the session in the same batch
// (docs/decisions.md "Identity and binding": fetched together, judged only
// after the credential is accepted), then admits the request against the
// process's lease of the lane's budget (ratelimit.Leases: a write only when
// a new slice is leased, before anything runs).
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
	rows, keys, err := g.read(ctx, req, hash, true)
	if err != nil {
		return nil, err
	}
	if rows.credential == nil {
		return &mcp.Admission{}, nil
	}
	cred, err := auth.DecodeCredential(*rows.credential)
	if err != nil {
		return nil, fmt.Errorf("admit: %w", err)
	}
	if cred.Revoked {
		return &mcp.Admission{}, nil
	}
	return g.admitted(ctx, req, cred, keys, rows)
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
	rows, keys, err := g.read(ctx, req, cred.KeyHash, false)
	if err != nil {
		return nil, err
	}
	return g.admitted(ctx, req, cred, keys, rows)
}

// batchRows are the rows of the admission's one batch read.
type batchRows struct {
	credential *store.Item
	session    *store.Item
	sessions   [2]*store.Item // this window's and the previous one's counters
}

// admitKeys are the keys the admission read.
type admitKeys struct {
	bucket   store.Key
	sessions [2]store.Key
	window   int64
}

// read performs the admission's one batch read: the credential row (for a
// key), the session and, for initialize, the live session counters. The
// lane's bucket is not read: the lease reads it when it needs a slice.
func (g *Gate) read(ctx context.Context, req mcp.AdmitRequest, hash string, withCredential bool) (batchRows, admitKeys, error) {
	k := admitKeys{bucket: ratelimit.Key(hash, Surface, req.Lane)}
	var keys []store.Key
	var idx struct{ cred, session, sessions int }
	idx.cred, idx.session, idx.sessions = -1, -1, -1
	if withCredential {
		idx.cred = len(keys)
		keys = append(keys, auth.CredentialKey(hash))
	}
	if req.SessionID != "" {
		idx.session = len(keys)
		keys = append(keys, mcp.SessionKey(req.SessionID))
	}
	if req.StartsSession {
		k.window = sessionWindow(req.Now, g.sessionTTL)
		k.sessions = [2]store.Key{sessionCounterKey(hash, k.window), sessionCounterKey(hash, k.window-int64(g.sessionTTL/time.Second))}
		idx.sessions = len(keys)
		keys = append(keys, k.sessions[0], k.sessions[1])
	}
	var rows batchRows
	if len(keys) == 0 {
		return rows, k, nil // a token without a session: nothing to read
	}
	items, err := g.store.BatchGet(ctx, keys)
	if err != nil {
		return batchRows{}, k, fmt.Errorf("admit: %w", err)
	}
	if idx.cred >= 0 {
		rows.credential = items[idx.cred]
	}
	if idx.session >= 0 {
		rows.session = items[idx.session]
	}
	if idx.sessions >= 0 {
		rows.sessions = [2]*store.Item{items[idx.sessions], items[idx.sessions+1]}
	}
	return rows, k, nil
}

// admitted judges what the batch read brought for an accepted credential:
// the session only if it belongs to the credential's principal, and the
// lane's rate decision for the request's cost (taken from the process's
// lease, which may write a new slice first), within the credential's cap of
// concurrent calls in the lane.
func (g *Gate) admitted(ctx context.Context, req mcp.AdmitRequest, cred *auth.Credential, k admitKeys, rows batchRows) (*mcp.Admission, error) {
	adm := &mcp.Admission{Credential: cred}
	if rows.session != nil {
		sess, err := mcp.DecodeSessionWith(g.sessions, *rows.session)
		if err != nil {
			return nil, fmt.Errorf("admit: %w", err)
		}
		// A session of another principal is answered like an unknown one.
		if sess.Tenant == cred.Tenant && sess.Principal == cred.Owner {
			adm.Session = sess
		}
	}
	limit, ok := cred.RateLimits[string(req.Lane)]
	if !ok {
		limit = g.limits[req.Lane]
	}
	cost := max(1, req.Cost)
	st := &admitted{bucket: k.bucket, limit: limit, now: req.Now, keyHash: cred.KeyHash}
	rate, err := g.leases.Take(ctx, g.store, k.bucket, limit, req.Now, cost)
	if err != nil {
		return nil, fmt.Errorf("admit: %w", err)
	}
	adm.Rate = rate
	if adm.Rate.Allowed {
		st.charged = cost
		release, ok := g.slots.acquire(cred.ID, req.Lane)
		if !ok {
			g.leases.Refund(k.bucket, limit, req.Now, cost)
			st.charged = 0
			adm.Rate = ratelimit.Decision{Limit: limit, RetryAfter: time.Second}
		}
		adm.Release = release
	}
	if req.StartsSession {
		st.sessions = sessionCount{window: k.window, keys: k.sessions,
			current: counterValue(rows.sessions[0]), previous: counterValue(rows.sessions[1])}
	}
	adm.State = st
	return adm, nil
}

// Commit performs one write of the request (mcp.Gate): the audit rows,
// any session change and the request's own conditional writes. The rate
// count is not in it: Admit took the request from the process's lease
// (ratelimit.Leases), whose slice was counted in the bucket row before the
// request ran, so an ordinary governed read is one plain conditional put
// of its audit row (NotExists, a single write request) and a transaction
// only where there is more than one row to write — a batch's rows, a
// session's rows at initialize and DELETE, a tool's conditional writes
// (docs/decisions.md "Pipeline choices"). Requests Admit charged but the
// request does not count (c.Count below the charge) go back to the
// lease; a Commit that counts more than Admit charged (an admission of
// Readmit's charges nothing) takes the rest from the lease first, and
// answers mcp.ErrRateExceeded, writing nothing, when the window has no
// room for it.
//
// The audit rows' index items (audit.Record.IndexItems: one per further
// matter an answer contains) join the write as far as a transaction has
// room (store.MaxTransactItems); the rest are put before it, one plain put
// each, so no answer is ever committed without its index entries (the
// write rule of package audit). A request of at most one matter writes
// none. Audit rows and their index items expire after the configured
// retention.
func (g *Gate) Commit(ctx context.Context, adm *mcp.Admission, c mcp.Commitment) error {
	st, _ := adm.State.(*admitted)
	if st == nil {
		return errors.New("commit: admission was not made by this gate")
	}
	switch {
	case c.Count < st.charged:
		g.leases.Refund(st.bucket, st.limit, st.now, st.charged-c.Count)
		st.charged = c.Count
	case c.Count > st.charged && st.bucket.PK != "":
		d, err := g.leases.Take(ctx, g.store, st.bucket, st.limit, st.now, c.Count-st.charged)
		if err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		if !d.Allowed {
			return mcp.ErrRateExceeded
		}
		st.charged = c.Count
	}
	var index []store.Item
	for i := range c.Audit {
		c.Audit[i].ExpiresAt = c.Audit[i].At.Add(g.retention)
		index = append(index, c.Audit[i].IndexItems()...)
	}
	var ops []store.Op
	counterAt, deleteAt := -1, -1
	for i := range c.Audit {
		ops = append(ops, store.PutOp(c.Audit[i].Item(), store.NotExists()))
	}
	if c.CreateSession != nil {
		ops = append(ops, store.PutOp(c.CreateSession.Item(), store.NotExists()))
		counterAt = len(ops)
		ops = append(ops, g.countSession(st))
	}
	if c.DeleteSession != nil {
		deleteAt = len(ops)
		ops = append(ops, store.DeleteOp(mcp.SessionKey(c.DeleteSession.ID), store.Exists()))
		ops = append(ops, g.uncountSession(st.keyHash, c.DeleteSession))
	}
	if len(index) > 0 {
		room := store.MaxTransactItems - len(ops) - len(c.Ops)
		room = max(0, min(room, len(index)))
		if err := putAll(ctx, g.store, index[room:]); err != nil {
			return fmt.Errorf("commit: audit index: %w", err)
		}
		for _, it := range index[:room] {
			ops = append(ops, store.PutOp(it))
		}
	}
	own := len(ops)
	ops = append(ops, c.Ops...)
	if len(ops) == 0 {
		return nil
	}
	err := write(ctx, g.store, ops)
	if err == nil {
		return nil
	}
	failed, isCondition := failedOp(err, len(ops))
	switch {
	case !isCondition:
		return fmt.Errorf("commit: %w", err)
	case failed >= own:
		return &mcp.OpsConflictError{Index: failed - own, Err: err}
	case failed == counterAt:
		return mcp.ErrSessionLimit
	case failed == deleteAt:
		return mcp.ErrSessionGone
	}
	return fmt.Errorf("commit: %w", err)
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

// failedOp returns the index of the operation whose condition failed, and
// whether err is a failed condition at all (a single operation's failure is
// its index 0).
func failedOp(err error, n int) (int, bool) {
	var tx *store.TxCanceledError
	if errors.As(err, &tx) {
		return tx.Index, true
	}
	if n == 1 && (errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrExists)) {
		return 0, true
	}
	return -1, false
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
