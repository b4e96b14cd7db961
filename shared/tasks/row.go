package tasks

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/sweep"
)

// Stored statuses (package doc). The wire statuses of 2025-11-25 are
// derived from them (Row.WireStatus).
const (
	StatusQueued        = "queued"
	StatusRunning       = "running"
	StatusInputRequired = "input_required"
	StatusCompleted     = "completed"
	StatusFailed        = "failed"
	StatusCancelled     = "cancelled"
)

// Outcome kinds.
const (
	KindResult   = "result"
	KindRPCError = "rpc_error"
)

// The sweeper index kinds a task row is filed under, one at a time: while
// queued (the unclaimed rule), while running (its lease) and while it
// waits for input or is terminal (its ttl).
const (
	indexQueued  = "taskqueue"
	indexLease   = "tasklease"
	indexExpires = "taskexpiry"
)

// Attribute names of a task row.
const (
	aStatus        = "status"
	aTenant        = "tenant"
	aOpen          = "open" // true until terminal: tasks/cancel's condition
	aTool          = "tool"
	aMatter        = "matter"
	aRevision      = "revision"
	aCredentialID  = "credential_id"
	aCredential    = "credential" // auth.Reference, JSON
	aClientCaps    = "client_caps"
	aProgressToken = "progress_token"
	aCreated       = "created_ms"
	aUpdated       = "updated_ms"
	aTTL           = "ttl_ms"
	aPoll          = "poll_ms"
	aAttempts      = "attempts"
	aLeaseHolder   = "lease_holder"
	aLeaseUntil    = "lease_until_ms"
	aQueued        = "queued_ms"
	aMessage       = "status_message"
	aArgs          = "args"
	aArgsParts     = "args_parts"
	aArgsSHA256    = "args_sha256"
	aOutcomeKind   = "outcome_kind"
	aOutcome       = "outcome"
	aOutcomeParts  = "outcome_parts"
	aIsError       = "is_error"
	aProgress      = "progress"
	aInputRequests = "input_requests"
	aInputRound    = "input_round"
	aInputAnswers  = "input_responses"
)

// Key is the row of task id created by credentialID of tenant.
func Key(tenant, credentialID, id string) store.Key {
	return store.Key{PK: keyspace.TenantCredentialPK(tenant, credentialID), SK: "TASK#" + id}
}

// taskPrefix is the sort-key prefix of a credential's task rows.
const taskPrefix = "TASK#"

// partKey is part seq of the payload name ("args", "outcome") of a task.
func partKey(tenant, credentialID, id, payload string, seq int) store.Key {
	return store.Key{PK: keyspace.TenantCredentialPK(tenant, credentialID),
		SK: "TASKPART#" + id + "#" + payload + "#" + fmt.Sprintf("%03d", seq)}
}

// partPrefix is the sort-key prefix of every part of a task.
func partPrefix(id string) string { return "TASKPART#" + id + "#" }

// questionKey is question n of input round of a task.
func questionKey(tenant, credentialID, id string, round, n int) store.Key {
	return store.Key{PK: keyspace.TenantCredentialPK(tenant, credentialID),
		SK: questionPrefix(id) + fmt.Sprintf("%04d#%03d", round, n)}
}

// questionPrefix is the sort-key prefix of every question of a task.
func questionPrefix(id string) string { return "TASKREQ#" + id + "#" }

// newID returns a task id: "tk", the creation time in milliseconds as 12
// hex digits (so a credential's tasks list in creation order) and 128 bits
// from crypto/rand (so an id cannot be guessed).
func newID(now time.Time) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return fmt.Sprintf("tk%012x%s", now.UnixMilli()&(1<<48-1), hex.EncodeToString(b[:]))
}

// validID reports whether s has the shape of a task id; anything else
// names no task.
func validID(s string) bool {
	if len(s) != 46 || !strings.HasPrefix(s, "tk") {
		return false
	}
	_, err := hex.DecodeString(s[2:])
	return err == nil && s == strings.ToLower(s)
}

// Row is a task row decoded.
type Row struct {
	Tenant, CredentialID, ID string
	Version                  int64

	Status        string
	Tool, Matter  string
	Revision      mcp.Revision
	Ref           auth.Reference
	ClientCaps    json.RawMessage
	ProgressToken json.RawMessage
	Created       time.Time
	Updated       time.Time
	TTL           time.Duration
	Poll          time.Duration
	Attempts      int
	LeaseHolder   string
	LeaseUntil    time.Time
	Queued        time.Time
	Message       string
	Args          []byte // inline; nil when in parts
	ArgsParts     int
	OutcomeKind   string
	Outcome       []byte // inline; nil when in parts
	OutcomeParts  int
	IsError       bool
	Progress      *Progress
	InputRequests map[string]Question
	InputRound    int
	InputAnswers  map[string]Answer
}

// Progress is a running task's last reported progress.
type Progress struct {
	Progress float64 `json:"p"`
	Total    float64 `json:"t,omitempty"`
	Message  string  `json:"m,omitempty"`
}

// Question is one server-to-client request a task waits on.
type Question struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// Answer is the client's answer to a Question: its result, or its error.
type Answer struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// Key is the row's key.
func (r *Row) Key() store.Key { return Key(r.Tenant, r.CredentialID, r.ID) }

// Expires is when the task's ttl ends: past it the task is purged and
// every method answers as for an unknown id.
func (r *Row) Expires() time.Time { return r.Created.Add(r.TTL) }

// Open reports whether the task is not terminal.
func (r *Row) Open() bool {
	switch r.Status {
	case StatusCompleted, StatusFailed, StatusCancelled:
		return false
	}
	return true
}

// WireStatus is the task's status in the 2025-11-25 dialect: queued and
// running are working, and a result with isError is failed (MCP
// basic/utilities/tasks §Task Status: failed includes an isError result).
func (r *Row) WireStatus() string {
	switch r.Status {
	case StatusQueued, StatusRunning:
		return "working"
	case StatusCompleted:
		if r.IsError {
			return "failed"
		}
	}
	return r.Status
}

// Dialect2026 reports whether the task was created in the 2026-07-28 era:
// it is served by the tasks extension's methods alone (ext2026.go).
func (r *Row) Dialect2026() bool { return r.Revision == mcp.Rev20260728 }

// WireStatus2026 is the task's status in the tasks extension: queued and
// running are working, a result is completed whether or not it is an
// isError result, and failed is only a JSON-RPC error
// (modelcontextprotocol/ext-tasks, "Task Status": failed MUST NOT be used
// for an isError result).
func (r *Row) WireStatus2026() string {
	switch r.Status {
	case StatusQueued, StatusRunning:
		return "working"
	case StatusCompleted, StatusFailed:
		if r.OutcomeKind == KindRPCError {
			return StatusFailed
		}
		return StatusCompleted
	}
	return r.Status
}

// Task is the Task object of 2025-11-25 (MCP schema Task).
type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

// timeLayout is the tasks' ISO 8601 timestamps: UTC with milliseconds.
const timeLayout = "2006-01-02T15:04:05.000Z"

// Wire is the row as a Task.
func (r *Row) Wire() Task {
	return Task{TaskID: r.ID, Status: r.WireStatus(), StatusMessage: r.Message,
		CreatedAt: r.Created.UTC().Format(timeLayout), LastUpdatedAt: r.Updated.UTC().Format(timeLayout),
		TTL: r.TTL.Milliseconds(), PollInterval: r.Poll.Milliseconds()}
}

// decodeRow decodes a task row. Its tenant and credential id are
// attributes too, so a row found through the sweeper index describes
// itself; they must give its own key.
func decodeRow(it store.Item) (*Row, error) {
	tenant, cred := it.String(aTenant), it.String(aCredentialID)
	if !strings.HasPrefix(it.SK, taskPrefix) || Key(tenant, cred, strings.TrimPrefix(it.SK, taskPrefix)) != it.Key() {
		return nil, fmt.Errorf("decode task row %s: its tenant and credential are not its key's", it.Key())
	}
	r := &Row{
		Tenant: tenant, CredentialID: cred, ID: strings.TrimPrefix(it.SK, taskPrefix), Version: it.Version,
		Status: it.String(aStatus), Tool: it.String(aTool), Matter: it.String(aMatter),
		Revision: mcp.Revision(it.String(aRevision)), ClientCaps: it.Bytes(aClientCaps),
		ProgressToken: it.Bytes(aProgressToken),
		Created:       time.UnixMilli(it.Int(aCreated)), Updated: time.UnixMilli(it.Int(aUpdated)),
		TTL: time.Duration(it.Int(aTTL)) * time.Millisecond, Poll: time.Duration(it.Int(aPoll)) * time.Millisecond,
		Attempts: int(it.Int(aAttempts)), LeaseHolder: it.String(aLeaseHolder),
		Message: it.String(aMessage), Args: it.Bytes(aArgs), ArgsParts: int(it.Int(aArgsParts)),
		OutcomeKind: it.String(aOutcomeKind), Outcome: it.Bytes(aOutcome), OutcomeParts: int(it.Int(aOutcomeParts)),
		IsError: it.Bool(aIsError), InputRound: int(it.Int(aInputRound)),
	}
	if n := it.Int(aLeaseUntil); n > 0 {
		r.LeaseUntil = time.UnixMilli(n)
	}
	if n := it.Int(aQueued); n > 0 {
		r.Queued = time.UnixMilli(n)
	}
	for _, f := range []struct {
		name string
		v    any
		ok   bool
	}{
		{aCredential, &r.Ref, true}, {aProgress, &r.Progress, it.Bytes(aProgress) != nil},
		{aInputRequests, &r.InputRequests, it.Bytes(aInputRequests) != nil},
		{aInputAnswers, &r.InputAnswers, it.Bytes(aInputAnswers) != nil},
	} {
		if !f.ok {
			continue
		}
		if err := json.Unmarshal(it.Bytes(f.name), f.v); err != nil {
			return nil, fmt.Errorf("decode task row %s: %s: %w", it.Key(), f.name, err)
		}
	}
	return r, nil
}

// ms is t in epoch milliseconds.
func ms(t time.Time) int64 { return t.UnixMilli() }

// index sets the row's sweeper index entry: kind, due at due.
func index(u *store.Update, kind, id string, due time.Time) {
	pk, sk := sweep.IndexKeys(kind, id, due)
	u.GSI1PK, u.GSI1SK = &pk, &sk
}

// leaseAttrs are the attributes of a claim, removed when it ends, with
// the others named.
func leaseAttrs(others ...string) []string {
	return append([]string{aLeaseHolder, aLeaseUntil}, others...)
}

// running is the condition of a write by the worker holding the lease.
func running(holder string) []store.Condition {
	return []store.Condition{store.AttrEquals(aStatus, StatusRunning), store.AttrEquals(aLeaseHolder, holder)}
}

// attemptText is "attempt n of limit".
func attemptText(n, limit int) string {
	return "attempt " + strconv.Itoa(n) + " of " + strconv.Itoa(limit)
}

// indexEntry is the sweeper index entry of a new row: kind, due at due.
func indexEntry(kind, id string, due time.Time) (gsi1pk, gsi1sk string) {
	return sweep.IndexKeys(kind, id, due)
}
