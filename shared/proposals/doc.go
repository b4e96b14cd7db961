// Package proposals is the action registry and the proposal ledger of
// governed writes (docs/contracts.md §4, §6; issue 13): what an agent may
// ask a person at the firm to approve, and the rows that hold what it
// asked until a person decides.
//
// # Actions
//
// An action is a Go input type (its args schema is inferred from it as a
// tool's input is, strict), a deliverable noun, an impact (its external
// effect class: none or external; an action without one is "unavailable",
// never taken for none), a supervision floor (routine, always-confirm,
// independent), whether its approval needs a second confirmation, whether
// it conflicts with the record's own standing, what basis it must carry,
// its target and a renderer of what_will_happen over validated args. An
// action has no executor here: nothing in this package, nor in anything
// the request path imports, can carry one out (package approvals, issue
// 14, is the only place that can). A firm may disable an action or raise
// its floor (the action configuration row), never lower it.
//
// # Rows
//
//	proposal      T#<t>#M#<m>          PROP#<id>                 the proposal (immutable args; status)
//	inbox row     T#<t>#M#<m>          PENDING#<created>#<id>    while pending: the approval page's inbox
//	pointer       T#<t>#CRED#<cred>    PROP#<created>#<id>       the requester's view (list_my_proposals)
//	counter       T#<t>#M#<m>          PROPCOUNT                 pending proposals of the matter
//	action config T#<t>                ACTION#<action>           disabled, raised floor
//
// A proposal is filed in one transaction with its inbox row, its pointer
// and the counter, which only increments under AttrBelow("pending",
// MaxPending): the 26th concurrent proposal of a matter fails its
// condition whatever process files it (the caller adds its rate count and
// audit row to the same transaction). Its id is derived from (credential
// id, matter, idempotency key), so a retry names the same row. A pending
// proposal carries a sweeper index entry at its expiry (ExpiryKind); the
// expiry duty (Expiry) moves it to expired with conditional writes, and
// every reader treats a pending row past its expiry as expired before the
// sweeper gets to it (Proposal.StatusAt).
package proposals
