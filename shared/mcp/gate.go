package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/store"
)

// Gate authenticates, meters and audits requests over the store. The
// composition root provides it (package gate); tests use the same one over
// real engines.
type Gate interface {
	// Admit authenticates the presented token from scratch and, in the same
	// batch read, fetches the session; the rate decision is made before
	// anything executes (the gate's lease of the lane's budget). An
	// unknown or revoked credential is an Admission without Credential (and
	// no error; the Server answers it invalid_token, Admission.Denial); an
	// error means the store could not answer.
	Admit(ctx context.Context, req AdmitRequest) (*Admission, error)
	// Commit performs one write of the request: the audit rows, any
	// session change and the request's own conditional writes, atomically
	// (the rate count was taken at admission). It writes nothing and returns
	//   - an *OpsConflictError when a condition of Commitment.Ops failed;
	//   - ErrRateExceeded when Count is more than admission charged and
	//     the lane's budget has no room for the rest (ratelimit package
	//     doc);
	//   - ErrSessionLimit when CreateSession would pass the credential's
	//     cap of live sessions;
	//   - ErrSessionGone when DeleteSession's row is already gone;
	//   - store.ErrTooLarge (wrapped) when a row is over the item limit;
	// and any other error when the store could not write. The caller
	// decides what the request answers then and commits again
	// (Server.commit, and tools.Run outside HTTP).
	Commit(ctx context.Context, adm *Admission, c Commitment) error
}

// AdmitRequest is what Admit needs from the request.
type AdmitRequest struct {
	Token     string // the presented credential; "" when none
	SessionID string // "" when none or not wanted
	Lane      ratelimit.Lane
	// Cost is how many requests the body holds (a batch is charged per
	// message before any runs); 0 means 1.
	Cost int
	// StartsSession asks for what initialize needs: the credential's count
	// of live sessions, read in the same batch.
	StartsSession bool
	Now           time.Time
}

// Admission is the gate's verdict on who is calling.
type Admission struct {
	// Credential is nil when the request is not authenticated.
	Credential *auth.Credential
	// Session is the live session under the requested id, only when it is
	// bound to the credential's principal; nil otherwise (unknown, expired,
	// deleted and foreign sessions are alike).
	Session *Session
	// Rate is the lane's verdict, decided before anything executes.
	Rate ratelimit.Decision
	// State is the gate's own (what Commit needs from the read).
	State any
	// Denial explains a refused credential (nil Credential): the bearer
	// error for the challenge (RFC 6750 §3.1) and whether it is a 403. Zero
	// means refused for no reason the gate names: the server answers 401
	// invalid_token when the client presented the credential, and the bare
	// challenge when it presented none (Options.AnonymousToken).
	Denial Denial
	// Release ends the admission's hold on the credential's concurrency
	// slot in the expensive lane; nil when it holds none. The transport
	// calls it once the request is answered.
	Release func()
}

// Denial is why a presented credential was refused.
type Denial struct {
	// Error is the RFC 6750 error code: "invalid_token" (401) or
	// "insufficient_scope" (403); "" for a credential the gate does not
	// know (unknown, revoked, of no shape it takes).
	Error string
	// Scope is the scope the resource requires (for insufficient_scope).
	Scope string
}

// Commitment is one write of a request.
type Commitment struct {
	Audit []audit.Record
	// Count is how many requests to count in the rate bucket (0 for a
	// request refused by its rate limit, which is not counted).
	Count         int
	CreateSession *Session
	// DeleteSession is the session DELETE ends.
	DeleteSession *Session
	// Ops are the request's own conditional writes (a tool's receipt, a
	// parked request's answer, a session's log level), committed in the
	// same transaction.
	Ops []store.Op
}

// OpsConflictError is Gate.Commit's answer when a condition of one of
// Commitment.Ops failed: Index is that op's position in Ops. Nothing was
// written.
type OpsConflictError struct {
	Index int
	Err   error // the store's *TxCanceledError or sentinel
}

func (e *OpsConflictError) Error() string {
	return fmt.Sprintf("mcp: condition of request write %d failed: %v", e.Index, e.Err)
}

func (e *OpsConflictError) Unwrap() error { return e.Err }

var (
	// ErrRateExceeded: the rate-limit reservation failed at commit
	// (concurrent requests of the credential spent the budget after this
	// one was admitted). Nothing was written; the request is answered as
	// rate-limited and committed again, uncounted.
	ErrRateExceeded = errors.New("mcp: the rate limit was reached by concurrent requests")
	// ErrSessionLimit: the credential holds as many live sessions as its
	// cap allows. Nothing was written.
	ErrSessionLimit = errors.New("mcp: too many live sessions for this credential")
	// ErrSessionGone: the session Commitment.DeleteSession names was
	// already deleted (a concurrent DELETE won). Nothing was written.
	ErrSessionGone = errors.New("mcp: the session was already ended")
)

// Writes are a method's conditional writes: they join the request's one
// transaction with its rate count and audit row, and the answer is settled
// only after that write (issue 9, "answers after the write";
// docs/decisions.md "Pipeline choices").
type Writes struct {
	Ops []store.Op
	// OnConflict is called when a condition of Ops failed (failed is that
	// op's index in Ops): nothing was written. It returns the answer to
	// send instead — it may read, for instance the original receipt — or
	// an error answered as a protocol error; the request's rate count and
	// audit row are then committed in one more write, without Ops. Nil
	// answers -32603 "conflicted with a concurrent change".
	OnConflict func(ctx context.Context, failed int) (any, error)
	// OnCommit, when set, is called once the commit succeeded, before the
	// effects: the answer it returns replaces the method's (or, an error,
	// is answered as a protocol error). It is how a write answers from
	// what it reads back after the commit (propose_action, issue 13); the
	// audit row, already committed, is not changed by it. A Writes with
	// OnCommit and no Ops still waits for the request's commit.
	OnCommit func(ctx context.Context) (any, error)
	// After runs, in order, once the commit succeeded: effects that must
	// follow it, such as a queue send.
	After []Effect
}

// Effect is work that must follow a commit. If the process dies between
// the commit and the effect, Recovery says who finishes it (for a queue
// send: the sweeper's queued-unclaimed rule).
type Effect struct {
	Name     string
	Recovery string
	Run      func(ctx context.Context) error
}
