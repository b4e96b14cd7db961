// Package audit records one row per authenticated request, refusals included
// (docs/decisions.md "Pipeline choices"): who (principal, credential id), what
// (method, tool, prompt, resource URI, matter), the outcome, and the query
// as SHA-256 + length — never its text, never tool or prompt arguments.
//
// Rows live in a per-tenant, per-day partition `T#<tenant>#AUDIT#<yyyy-mm-dd>`
// sorted by time and request id, and are indexed by matter for "who touched
// this matter" (ForMatter). A request is indexed under every matter it
// touched: the matter it named (Record.Matter, even when refused) and every
// matter whose rows its answer contains (Record.Matters, which the handlers
// report: list_matters, search_documents across matters, resources/list and
// completion answer from several). The first of them is the row's own
// index entry (`GSI1PK = T#<tenant>#M#<matter>#AUDIT`, `GSI1SK = <time>#<request
// id>`, keyspace.SortableTimeLayout); each further one is a small index item
// of its own in the table under the same keys (`PK = T#<tenant>#M#<matter>#AUDIT`,
// `SK = <time>#<request id>`, pointing at the row), expiring with the row.
// A matter id no matter can have (keyspace.ValidID: control characters, '#',
// over 128 bytes) is kept in the row but not indexed: a caller's malformed
// id must never stop its request from being recorded.
//
// The write rule (package gate): the row and its index items are written
// in the request's one transaction with its rate count, before the answer
// is sent. A transaction holds at most store.MaxTransactItems items, and a
// request's own items (a batch of 20 messages already uses 21) leave room
// for only so many index items; the index items that do not fit are
// written first, as plain puts, before the transaction. An index entry
// whose request then failed to commit points at no row — an
// over-approximation, which is safe for "who may have read this matter" and
// which ForMatter skips — while an answer sent without its index entries
// would not be: so none is ever written after.
package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/store"
)

// Outcome values besides a refusal class (docs/contracts.md §3) or "rpc:<code>".
const (
	OutcomeOK       = "ok"
	OutcomeAccepted = "accepted" // a notification or client response
	// OutcomeReplay is a governed write answered with its original
	// receipt: the same call was carried out before.
	OutcomeReplay = "ok:replay"
	// OutcomeTaskCreated is a task-augmented tools/call that created its
	// task: the tool runs later, and the task's terminal row records how
	// it ended (package tasks).
	OutcomeTaskCreated = "task:created"
)

// Record is one audited request.
type Record struct {
	RequestID    string    `json:"request_id"`
	At           time.Time `json:"at"`
	Tenant       string    `json:"tenant"`
	Principal    string    `json:"principal"`
	CredentialID string    `json:"credential_id"`
	SessionID    string    `json:"session_id,omitempty"`
	Revision     string    `json:"revision,omitempty"`
	Method       string    `json:"method"`
	Tool         string    `json:"tool,omitempty"`
	// Prompt is the prompt a prompts/get (or a completion of one of its
	// arguments) named.
	Prompt string `json:"prompt,omitempty"`
	// Resource is the URI a resources/read, subscribe or unsubscribe named,
	// or the URI template a completion named.
	Resource string `json:"resource,omitempty"`
	// TaskID is the task the row belongs to: its creation (tools/call), its
	// terminal state (the worker's or the sweeper's row, or tasks/cancel)
	// and the task methods that name it.
	TaskID string `json:"task_id,omitempty"`
	// Matter is the matter the request named (its case_id), whether or not
	// it was reached.
	Matter string `json:"matter,omitempty"`
	// Matters are the matters whose rows the answer contains, as the
	// handlers report them (AddMatter), in the order reported.
	Matters []string `json:"matters,omitempty"`
	// Outcome is "ok", "accepted", a refusal class such as "VALIDATION", or
	// "rpc:<code>" for a JSON-RPC error.
	Outcome     string `json:"outcome"`
	QuerySHA256 string `json:"query_sha256,omitempty"`
	QueryLen    int    `json:"query_len,omitempty"`
	DurationMs  int64  `json:"duration_ms"`
	// ExpiresAt is when the row and its index items expire (the gate sets
	// it from the configured retention, issue 8 item 4); zero never.
	ExpiresAt time.Time `json:"-"`
}

// SetQuery records a query's digest and length, never its text.
func (r *Record) SetQuery(q string) {
	sum := sha256.Sum256([]byte(q))
	r.QuerySHA256 = hex.EncodeToString(sum[:])
	r.QueryLen = len(q)
}

// AddMatter records that the answer contains rows of the matters ids; a
// repeated id is kept once.
func (r *Record) AddMatter(ids ...string) {
	for _, id := range ids {
		if id != "" && !slices.Contains(r.Matters, id) {
			r.Matters = append(r.Matters, id)
		}
	}
}

// Partition is the audit partition of a tenant's day.
func Partition(tenant string, day time.Time) string {
	return keyspace.TenantPK(tenant) + "#AUDIT#" + day.UTC().Format("2006-01-02")
}

// MatterIndexPK is the partition of a matter's audit index: the GSI1PK of
// the rows indexed under it and the PK of its index items.
func MatterIndexPK(tenant, matter string) string { return keyspace.MatterPK(tenant, matter) + "#AUDIT" }

// indexSK orders a matter's index by time, then request id.
func (r *Record) indexSK() string {
	return r.At.UTC().Format(keyspace.SortableTimeLayout) + "#" + r.RequestID
}

// indexed returns the matters the record is indexed under: Matter, then
// Matters, each once, ids keyspace.ValidID refuses left out.
func (r *Record) indexed() []string {
	if !keyspace.ValidID(r.Tenant) {
		return nil
	}
	var out []string
	for _, m := range append([]string{r.Matter}, r.Matters...) {
		if keyspace.ValidID(m) && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// Attributes of an index item: the key of the row it points at.
const (
	attrRowPK = "row_pk"
	attrRowSK = "row_sk"
)

// Item encodes the record as its row, indexed (GSI1) under the first matter
// it touched.
func (r *Record) Item() store.Item {
	data, _ := json.Marshal(r) // a struct of strings, ints and a time: cannot fail
	it := store.Item{
		PK:      Partition(r.Tenant, r.At),
		SK:      r.At.UTC().Format("15:04:05.000000000") + "#" + r.RequestID,
		Version: 1,
		Attrs:   map[string]any{"data": data},
	}
	if !r.ExpiresAt.IsZero() {
		it.ExpiresAt = r.ExpiresAt.Unix()
	}
	if ms := r.indexed(); len(ms) > 0 {
		it.GSI1PK = MatterIndexPK(r.Tenant, ms[0])
		it.GSI1SK = r.indexSK()
	}
	return it
}

// IndexItems encodes one index item per further matter the record touched
// (none for a record of at most one matter): under MatterIndexPK, sorted as
// the row's own index entry, pointing at the row and expiring with it. They
// are written unconditionally, so writing one twice is harmless.
func (r *Record) IndexItems() []store.Item {
	ms := r.indexed()
	if len(ms) < 2 {
		return nil
	}
	row := r.Item()
	out := make([]store.Item, 0, len(ms)-1)
	for _, m := range ms[1:] {
		out = append(out, store.Item{
			PK: MatterIndexPK(r.Tenant, m), SK: r.indexSK(), Version: 1, ExpiresAt: row.ExpiresAt,
			Attrs: map[string]any{attrRowPK: row.PK, attrRowSK: row.SK},
		})
	}
	return out
}

// ForMatter returns the audit records of every request that touched a
// matter of tenant — named it, or answered with its rows — in time order
// (then request id): the rows the index (GSI1) holds under the matter and
// the rows its index items point at, read in batches. An index item whose
// row does not exist (its request failed to commit after the item was
// written, or the row expired) is skipped. An id keyspace.ValidID refuses
// has no records. Index reads may lag writes on DynamoDB (store package
// doc); store failures are returned wrapped.
func ForMatter(ctx context.Context, st store.Store, tenant, matter string) ([]Record, error) {
	if !keyspace.ValidID(tenant) || !keyspace.ValidID(matter) {
		return nil, nil
	}
	type entry struct {
		sk  string
		rec Record
	}
	var entries []entry
	seen := map[string]bool{}
	add := func(it store.Item) error {
		var r Record
		if err := json.Unmarshal(it.Bytes("data"), &r); err != nil {
			return fmt.Errorf("decode audit row %s: %w", it.Key(), err)
		}
		if !seen[r.RequestID] {
			seen[r.RequestID] = true
			entries = append(entries, entry{sk: r.indexSK(), rec: r})
		}
		return nil
	}
	pk := MatterIndexPK(tenant, matter)
	if err := scan(ctx, st, store.Query{Index: store.IndexGSI1, PK: pk}, add); err != nil {
		return nil, fmt.Errorf("read audit index of %s: %w", matter, err)
	}
	var rows []store.Key
	if err := scan(ctx, st, store.Query{PK: pk}, func(it store.Item) error {
		rows = append(rows, store.Key{PK: it.String(attrRowPK), SK: it.String(attrRowSK)})
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read audit index items of %s: %w", matter, err)
	}
	for start := 0; start < len(rows); start += store.MaxBatchGetKeys {
		got, err := st.BatchGet(ctx, rows[start:min(start+store.MaxBatchGetKeys, len(rows))])
		if err != nil {
			return nil, fmt.Errorf("read audit rows of %s: %w", matter, err)
		}
		for _, it := range got {
			if it == nil {
				continue // dangling: its request never committed
			}
			if err := add(*it); err != nil {
				return nil, err
			}
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.sk, b.sk) })
	out := make([]Record, len(entries))
	for i, e := range entries {
		out[i] = e.rec
	}
	return out, nil
}

// scan calls f on every item of q, page by page.
func scan(ctx context.Context, st store.Store, q store.Query, f func(store.Item) error) error {
	for {
		page, err := st.Query(ctx, q)
		if err != nil {
			return err
		}
		for _, it := range page.Items {
			if err := f(it); err != nil {
				return err
			}
		}
		if page.NextToken == "" {
			return nil
		}
		q.PageToken = page.NextToken
	}
}

// Day returns the audit records of a tenant's day in time order.
func Day(ctx context.Context, st store.Store, tenant string, day time.Time) ([]Record, error) {
	var out []Record
	q := store.Query{PK: Partition(tenant, day)}
	for {
		page, err := st.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("read audit of %s: %w", tenant, err)
		}
		for _, it := range page.Items {
			var r Record
			if err := json.Unmarshal(it.Bytes("data"), &r); err != nil {
				return nil, fmt.Errorf("decode audit row %s: %w", it.Key(), err)
			}
			out = append(out, r)
		}
		if page.NextToken == "" {
			return out, nil
		}
		q.PageToken = page.NextToken
	}
}
