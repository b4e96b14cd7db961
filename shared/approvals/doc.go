// Package approvals is the firm's approval page: server-rendered HTML under
// /approvals of the /mcp function, where a signed-in person decides what
// agents proposed (docs/decisions.md "Approvers"; docs/contracts.md §6):
// who is signed in, how they got there, that each form they send is
// theirs, and every decision — who may approve, what may be approved in a
// selection, the second confirmation, and the one transaction that ends a
// proposal and carries it out (internal/executors), with its entry in the
// matter's decision ledger (ledger) or, for an act outside the firm, its
// message in the firm's outbox (outbox).
//
// # Why a page of its own
//
// An agent's credential never decides: an API key or an OAuth bearer token
// can file a proposal, and only a person signed in here can approve it. So
// the page ignores Authorization entirely (a request carrying a valid key
// and no cookie is sent to sign in), and it never imports shared/mcp or
// shared/tools: no request that came in through /mcp can reach what runs
// here, and nothing here can be called as a tool.
//
// # Signing in
//
// Two ways, both ending in the same cookie session:
//
//   - A one-time sign-in link (`custodyctl signin-link`, MintLink):
//     <public base>/approvals/signin?t=csl_<48 hex>. Only its SHA-256 is
//     stored (SIGNIN#<sha256> / SIGNIN), it lives 15 min by default
//     ([1 min, 24 h]) and works once. Opening it (GET) shows a button and
//     changes nothing, so a mail scanner or a link preview that fetches it
//     cannot spend it; pressing the button (POST, from the page's own
//     origin) spends it with a conditional update in the same transaction
//     that creates the session, so two presses of one link make one
//     session.
//   - With OAuth configured and an OIDC client registered, the firm's
//     identity provider (oidc.go): the authorization code flow with PKCE
//     S256, its state, nonce and verifier in a 10-minute row
//     (OIDC#<sha256(state)> / OIDC) bound to the browser that started it by
//     a cookie of its own, the ID token verified against the issuer's key
//     set (shared/auth/oauth), its user claim mapped to a principal.
//
// Either way the principal must exist in the tenant when the session is
// made, and must still exist on every page (one strongly consistent read),
// so a principal removed from the firm is signed out by that alone.
//
// # Sessions
//
// The cookie is `__Host-custody-approvals=cas_<64 hex>` with `HttpOnly;
// Secure; SameSite=Lax; Path=/` (Lax: the hand-off link of issue 15 is a
// cross-site top-level GET, which Strict would send without the cookie).
// The row (APPSESS#<sha256 of the cookie value> / APPSESS) names the tenant,
// the principal and how they signed in; it lives 8 h from sign-in,
// absolute, and is never extended, so a page view writes nothing. Signing
// out deletes it.
//
// On a loopback http base (the dev server's http://127.0.0.1:<port>) the
// same cookie is set: Chromium (checked with 156) and Firefox treat
// http://127.0.0.1 and http://localhost as potentially trustworthy origins
// and store and send a `Secure`, `__Host-` cookie there, and curl does the
// same for localhost. Nothing is relaxed for development; a plain-http base
// that is not loopback cannot keep a session, which is why the Lambda
// accepts only an https PUBLIC_BASE_URL outside emulator runs.
//
// # Forms
//
// Every POST must come from the page itself, twice over:
//
//   - its Origin is the public base's origin, or — because every page
//     sends `Referrer-Policy: no-referrer`, under which browsers serialize
//     a form's Origin as "null" (Fetch, "append a request Origin header";
//     Chromium 156 does) — it is "null" and the browser's
//     `Sec-Fetch-Site` says same-origin. Sec-Fetch-* headers cannot be set
//     by a page, and a cross-site form, a sandboxed frame or a cross-site
//     redirect carries cross-site there. Anything else is 403;
//   - a session's forms carry csrf = HMAC-SHA256(the session key, the
//     form's name): a token of another session or of another form is 403.
//
// Refused POSTs write nothing. A page without a session answers 303 to the
// sign-in page carrying only a relative next (a path below /approvals).
//
// # Pages
//
// html/template, no JavaScript, and on every answer the security headers of
// docs/decisions.md "Approvers" (SecurityHeaders). Every link and redirect
// is built from the configured public base URL (the API stage included),
// never from Host or X-Forwarded-*. The review page (GET /approvals) lists
// what an Inbox returns — by default the page's own, over the proposal rows
// of shared/proposals — and a list that could not be read says so instead
// of looking empty. Routine proposals carry one unticked box each; the
// rest are listed apart with every reason they must be decided on their
// own, and their own actions; there is no approve-all control.
//
// # Decisions
//
// Nothing a form carries is believed beyond the ids it names. Every
// decision reloads the principal's set from the store (the matters they
// reach and those matters' pending proposals), then, per proposal, reads
// everything it judges in one batch read — predicted from the proposal's
// inbox row, a pointer, and completed from the proposal row itself — and
// writes in one transaction: the proposal pending → approved at the
// version read, its inbox row, its pointer, the counter, the nonce, what
// the executor writes, the ledger entry and head, the audit row (decide.go
// has the order of the checks and the codes, docs/contracts.md §6 their
// effects). A selection (POST /approvals/review) re-derives each id's
// eligibility (eligibility.go) and decides each on its own; a proposal
// that needs a second confirmation is approved only with a nonce minted by
// its confirmation page (nonce.go) for this decider and this proposal as it
// stands. A decision that loses a race to another reads again, so two
// deciders in two processes approve a proposal once, and a matter's ledger
// stays one chain. DecisionHook lets a later feature (issue 15's hand-off)
// add writes to the transaction that ends a proposal.
package approvals
