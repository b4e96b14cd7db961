// Package keyspace is Custody's one key-space table (issue 9): every kind
// of row of the one table, its partition and sort key shapes, and the
// package that owns it — builds its keys and writes it. It sits below every
// package that keeps rows (it imports nothing of Custody's), so the shared
// rules of keys live here too: what an id may be (ValidID) and the
// fixed-width time layout of sort keys (SortableTimeLayout).
//
// A key is segments joined by '#'. A literal segment is spelled in capitals
// ("T", "M", "SESS"); a variable segment is an id (ValidID: never a '#'), a
// digest, a number or a time in SortableTimeLayout. The tests hold the table
// to two rules:
//
//   - no two kinds can share a key: for any two, some literal segment
//     differs, or their segment counts do (a trailing variable that may hold
//     '#', such as a URI, matches one or more segments);
//   - each kind's key fragments appear as string literals only in its
//     owner's source, so no other package can build its keys, and the
//     partitions shared by several owners are built by the functions below.
//
// Adding a kind of row: add it to Kinds with its owner, build its keys in
// the owner package from the fragments named there, and run the tests.
package keyspace

import (
	"unicode"
	"unicode/utf8"
)

// MaxIDLen is the longest id ValidID accepts, in bytes.
const MaxIDLen = 128

// ValidID reports whether s can be an id of a tenant, principal, matter,
// document, fact, deadline, note or any other row a key names: 1 to
// MaxIDLen bytes of valid UTF-8 without '#' (the key separator), white
// space (a key's matter allow-list is stored space-separated) or control
// characters (NUL included). An id it refuses names nothing, so readers
// answer "not found".
func ValidID(s string) bool {
	if s == "" || len(s) > MaxIDLen || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r == '#' || unicode.IsSpace(r) || unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// SortableTimeLayout is the fixed-width UTC layout of a time in a sort key
// (a note's creation, an audit row in the matter index), so byte order is
// time order (RFC 3339 with trimmed trailing zeros is not).
const SortableTimeLayout = "2006-01-02T15:04:05.000000000Z"

// The partitions several owners share, built only here.

// TenantPK is the partition of a tenant's own rows: the tenant, its
// principals, matters, credential listing and prompt overrides.
func TenantPK(tenant string) string { return "T#" + tenant }

// MatterPK is the partition of one matter's rows.
func MatterPK(tenant, matter string) string { return TenantPK(tenant) + "#M#" + matter }

// CredentialPK is the partition of one API key's rows (by the key's
// SHA-256, or an OAuth credential's digest): the credential row, its rate
// buckets and its live-session counters.
func CredentialPK(keyHash string) string { return "CRED#" + keyHash }

// TenantCredentialPK is the partition of a credential's durable work,
// under its tenant: what the credential started and may list again with a
// strongly consistent query (its proposals' pointers; tasks). It is keyed
// by the credential id, never the key hash, so the id alone addresses it.
func TenantCredentialPK(tenant, credentialID string) string {
	return TenantPK(tenant) + "#CRED#" + credentialID
}

// SessionPK is the partition of a 2025-era session: its row, its parked
// questions, its outbox, its GET stream slots and its subscriptions.
func SessionPK(id string) string { return "SESS#" + id }

// Kind is one kind of row.
type Kind struct {
	// Name says what the row is.
	Name string
	// PK and SK are the key's shape: segments joined by '#', literals in
	// capitals, variables in braces; a trailing "{name...}" may hold '#'.
	PK, SK string
	// Owner is the package that builds the row's keys and writes it, as
	// its path below the module ("shared/mcp").
	Owner string
	// Index marks an index entry (GSI1PK / GSI1SK), a key space of its own.
	Index bool
}

// Kinds is the table: every kind of row and index entry Custody keeps.
func Kinds() []Kind {
	return []Kind{
		// The matter record (shared/records).
		{Name: "tenant", PK: "T#{tenant}", SK: "TENANT", Owner: "shared/records"},
		{Name: "principal", PK: "T#{tenant}", SK: "PRINCIPAL#{principal}", Owner: "shared/records"},
		{Name: "matter", PK: "T#{tenant}", SK: "MATTER#{matter}", Owner: "shared/records"},
		{Name: "seed import marker", PK: "T#{tenant}", SK: "SEED#{digest}", Owner: "shared/records"},
		{Name: "document", PK: "T#{tenant}#M#{matter}", SK: "DOC#{document}", Owner: "shared/records"},
		{Name: "document version", PK: "T#{tenant}#M#{matter}", SK: "DOCV#{document}#{version}", Owner: "shared/records"},
		{Name: "chunk", PK: "T#{tenant}#M#{matter}", SK: "CHUNK#{document}#{version}#{seq}", Owner: "shared/records"},
		{Name: "fact", PK: "T#{tenant}#M#{matter}", SK: "FACT#{fact}", Owner: "shared/records"},
		{Name: "deadline", PK: "T#{tenant}#M#{matter}", SK: "DL#{due}#{deadline}", Owner: "shared/records"},
		{Name: "case note", PK: "T#{tenant}#M#{matter}", SK: "NOTE#{time}#{note}", Owner: "shared/records"},
		{Name: "exhibit", PK: "T#{tenant}#M#{matter}", SK: "EXH#{label}", Owner: "shared/records"},

		// Credentials (shared/auth), their rate buckets and session counts.
		{Name: "credential", PK: "CRED#{key hash}", SK: "CRED", Owner: "shared/auth"},
		{Name: "credential listing", PK: "T#{tenant}", SK: "CRED#{credential}", Owner: "shared/auth"},
		{Name: "rate bucket", PK: "CRED#{key hash}", SK: "RATE#{surface}#{lane}", Owner: "shared/ratelimit"},
		{Name: "live-session count", PK: "CRED#{key hash}", SK: "SESSIONS#{window}", Owner: "shared/gate"},

		// Sessions and what lives in them (shared/mcp, shared/subscriptions).
		{Name: "session", PK: "SESS#{session}", SK: "SESS", Owner: "shared/mcp"},
		{Name: "parked request", PK: "SESS#{session}", SK: "REQ#{request}", Owner: "shared/mcp"},
		{Name: "outbox message", PK: "SESS#{session}", SK: "OUT#{time}#{nonce}", Owner: "shared/mcp"},
		{Name: "GET stream slot", PK: "SESS#{session}", SK: "STREAM#{n}", Owner: "shared/mcp"},
		{Name: "MRTR round claim", PK: "MRTR#{nonce}", SK: "ROUND#{round}", Owner: "shared/mcp"},
		{Name: "subscription", PK: "SESS#{session}", SK: "SUB#{uri...}", Owner: "shared/subscriptions"},
		{Name: "subscription fan-out", PK: "T#{tenant}#SUBS#{uri...}", SK: "{session}", Owner: "shared/subscriptions"},

		// Durable work under its credential (shared/tasks, shared/readtools).
		{Name: "task", PK: "T#{tenant}#CRED#{credential}", SK: "TASK#{task}", Owner: "shared/tasks"},
		{Name: "task payload part", PK: "T#{tenant}#CRED#{credential}", SK: "TASKPART#{task}#{payload}#{seq}", Owner: "shared/tasks"},
		{Name: "task question", PK: "T#{tenant}#CRED#{credential}", SK: "TASKREQ#{task}#{round}#{n}", Owner: "shared/tasks"},
		{Name: "fact-record export part", PK: "T#{tenant}#CRED#{credential}", SK: "EXPORT#{export}#{seq}", Owner: "shared/readtools"},
		// The upload lane (shared/uploads) and download links (shared/downloads).
		{Name: "grant", PK: "CGT#{grant hash}", SK: "GRANT", Owner: "shared/uploads"},
		{Name: "grant listing", PK: "T#{tenant}", SK: "GRANT#{grant}", Owner: "shared/uploads"},
		{Name: "upload", PK: "UPLOAD#{upload}", SK: "UPLOAD", Owner: "shared/uploads"},
		{Name: "download token", PK: "DLT#{token hash}", SK: "DLT", Owner: "shared/downloads"},
		// An infected or scan_failed upload is held in its tenant's
		// listing (custodyctl uploads list --state); an upload waiting for
		// a verdict, an open one and an unspent grant's listing row are in
		// the sweeper index through sweep.IndexKeys.
		{Name: "held upload listing", PK: "T#{tenant}#UPLOADS#{state}", SK: "{time}#{upload}", Owner: "shared/uploads", Index: true},
		// Governed writes (issue 13): proposals and their inbox rows,
		// pointers and counter (shared/proposals), the firm's action
		// configuration (shared/proposals), autonomy settings
		// (shared/autonomy) and the note idempotency row (shared/writetools).
		// A pending proposal is in the sweeper index (its expiry) through
		// sweep.IndexKeys.
		{Name: "proposal", PK: "T#{tenant}#M#{matter}", SK: "PROP#{proposal}", Owner: "shared/proposals"},
		{Name: "proposal inbox row", PK: "T#{tenant}#M#{matter}", SK: "PENDING#{time}#{proposal}", Owner: "shared/proposals"},
		{Name: "pending proposal counter", PK: "T#{tenant}#M#{matter}", SK: "PROPCOUNT", Owner: "shared/proposals"},
		{Name: "proposal pointer", PK: "T#{tenant}#CRED#{credential}", SK: "PROP#{time}#{proposal}", Owner: "shared/proposals"},
		{Name: "action configuration", PK: "T#{tenant}", SK: "ACTION#{action}", Owner: "shared/proposals"},
		{Name: "autonomy setting", PK: "T#{tenant}", SK: "AUTONOMY#{tool or action or *}", Owner: "shared/autonomy"},
		{Name: "note idempotency row", PK: "T#{tenant}#M#{matter}", SK: "IDEM#NOTE#{digest}", Owner: "shared/writetools"},

		// Prompts, audit.
		{Name: "prompt override", PK: "T#{tenant}", SK: "PROMPT#{prompt}", Owner: "shared/prompts"},
		// An audit row lives in the audit partition of the first matter its
		// answer contains, else in its tenant's day partition (indexed under
		// the matter it named); further matters get index items.
		{Name: "audit row of a matter's answer, or audit index item", PK: "T#{tenant}#M#{matter}#AUDIT", SK: "{time}#{request}", Owner: "shared/audit"},
		{Name: "audit row of the day", PK: "T#{tenant}#AUDIT#{day}", SK: "{time}#{request}", Owner: "shared/audit"},
		{Name: "audit row in the matter index", PK: "T#{tenant}#M#{matter}#AUDIT", SK: "{time}#{request}", Owner: "shared/audit", Index: true},
		{Name: "sweeper index entry", PK: "SWEEP#{kind}#{shard}", SK: "{due}#{id}", Owner: "shared/sweep", Index: true},

		// The approval page's sign-in (shared/approvals): one-time sign-in
		// links, cookie sessions and OIDC flows in flight, each keyed by the
		// SHA-256 of its secret, never the secret.
		{Name: "sign-in link", PK: "SIGNIN#{sha256}", SK: "SIGNIN", Owner: "shared/approvals"},
		{Name: "approval session", PK: "APPSESS#{sha256}", SK: "APPSESS", Owner: "shared/approvals"},
		{Name: "OIDC sign-in state", PK: "OIDC#{sha256}", SK: "OIDC", Owner: "shared/approvals"},

		// The approval page's decisions (issue 14): confirmation nonces
		// (shared/approvals, by the SHA-256 of the nonce), each matter's
		// hash-chained decision ledger (shared/approvals/ledger) and the
		// firm's outbox of approved external acts
		// (shared/approvals/outbox).
		{Name: "confirmation nonce", PK: "NONCE#{sha256}", SK: "NONCE", Owner: "shared/approvals"},
		{Name: "decision ledger entry", PK: "T#{tenant}#M#{matter}", SK: "LEDGER#{seq}", Owner: "shared/approvals/ledger"},
		{Name: "decision ledger head", PK: "T#{tenant}#M#{matter}", SK: "LEDGERHEAD", Owner: "shared/approvals/ledger"},
		{Name: "firm outbox message", PK: "T#{tenant}#OUTBOX", SK: "{time}#{message}", Owner: "shared/approvals/outbox"},

		// The URL-mode hand-off of a filed proposal (issue 15): its binding,
		// by the SHA-256 of the elicitation id.
		{Name: "hand-off binding", PK: "HANDOFF#{sha256}", SK: "HANDOFF", Owner: "shared/handoff"},
	}
}
