// Package audit records one row per authenticated request, refusals included
// (docs/decisions.md "Pipeline choices"): who (principal, credential id), what
// (method, tool, prompt, resource URI, matter), the outcome, and the query
// as SHA-256 + length — never its text, never tool or prompt arguments.
//
// A request is indexed under every matter it touched: the matter it named
// (Record.Matter, even when refused) and every matter whose rows its answer
// contains (Record.Matters, which the handlers report: get_matter and the
// other matter tools, list_matters, search_documents across matters,
// resources/list and completion answer from several). Where the row itself
// lives (docs/decisions.md "Storage keys", issue 19 item 6):
//
//   - A record whose answer contains rows of a matter — the first valid id of
//     Record.Matters, its home — is stored IN that matter's audit partition:
//     `PK = T#<tenant>#M#<matter>#AUDIT`, `SK = <time>#<request id>`
//     (keyspace.SortableTimeLayout), with no index (GSI1) attributes. An
//     answered get_matter is thus one item and no index entry: one write unit.
//   - Any other record (a refusal, a request that reached no matter) is
//     stored in its tenant's day partition `T#<tenant>#AUDIT#<yyyy-mm-dd>`,
//     SK `<hh:mm:ss.nnnnnnnnn>#<request id>`, and indexed (GSI1) under the
//     first matter it named, if any, under the same matter keys as above.
//   - Each further matter gets a small index item of its own in the table
//     under the same keys (`PK = T#<tenant>#M#<matter>#AUDIT`,
//     `SK = <time>#<request id>`, pointing at the row's key), expiring with
//     the row.
//
// A home is always a matter that exists (its rows are in the answer), so
// Day finds every record of a day from the day partition and the tenant's
// matter rows (package records); a named id that is no matter never becomes
// a partition Day would have to guess. A matter id no matter can have
// (keyspace.ValidID: control characters, '#', over 128 bytes) is kept in
// the row but not indexed: a caller's malformed id must never stop its
// request from being recorded.
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
	"github.com/custodymcp/custody/shared/records"
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

// Partition is the audit partition of a tenant's day: the home of the
// records that reached no matter (package doc).
func Partition(tenant string, day time.Time) string {
	return keyspace.TenantPK(tenant) + "#AUDIT#" + day.UTC().Format("2006-01-02")
}

// MatterIndexPK is the audit partition of a matter: the home of the rows of
// the requests whose answers contain its rows, the PK of its index items
// and the GSI1PK of the day-partition rows indexed under it.
func MatterIndexPK(tenant, matter string) string { return keyspace.MatterPK(tenant, matter) + "#AUDIT" }

// indexSK orders a matter's audit partition by time, then request id.
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

// home returns the matter whose audit partition holds the row: the first
// valid id of Matters (the answer contains its rows, so it exists), or ""
// for a row of the day partition.
func (r *Record) home() string {
	if !keyspace.ValidID(r.Tenant) {
		return ""
	}
	for _, m := range r.Matters {
		if keyspace.ValidID(m) {
			return m
		}
	}
	return ""
}

// Attributes of an index item: the key of the row it points at.
const (
	attrRowPK = "row_pk"
	attrRowSK = "row_sk"
)

// Item encodes the record as its row: in its home matter's audit partition
// with no index attributes, or else in the tenant's day partition indexed
// (GSI1) under the first matter it named (package doc).
func (r *Record) Item() store.Item {
	data, _ := json.Marshal(r) // a struct of strings, ints and a time: cannot fail
	it := store.Item{Version: 1, Attrs: map[string]any{"data": data}}
	if !r.ExpiresAt.IsZero() {
		it.ExpiresAt = r.ExpiresAt.Unix()
	}
	if h := r.home(); h != "" {
		it.PK, it.SK = MatterIndexPK(r.Tenant, h), r.indexSK()
		return it
	}
	it.PK = Partition(r.Tenant, r.At)
	it.SK = r.At.UTC().Format("15:04:05.000000000") + "#" + r.RequestID
	if ms := r.indexed(); len(ms) > 0 {
		it.GSI1PK = MatterIndexPK(r.Tenant, ms[0])
		it.GSI1SK = r.indexSK()
	}
	return it
}

// IndexItems encodes one index item per matter the record touched beyond
// the one its row already answers for (its home, or its GSI1 entry): under
// MatterIndexPK, sorted by time then request id, pointing at the row's key
// and expiring with it. A get_matter answer has none. They are written
// unconditionally, so writing one twice is harmless.
func (r *Record) IndexItems() []store.Item {
	ms := r.indexed()
	covered := r.home()
	if covered == "" && len(ms) > 0 {
		covered = ms[0]
	}
	row := r.Item()
	var out []store.Item
	for _, m := range ms {
		if m == covered {
			continue
		}
		out = append(out, store.Item{
			PK: MatterIndexPK(r.Tenant, m), SK: r.indexSK(), Version: 1, ExpiresAt: row.ExpiresAt,
			Attrs: map[string]any{attrRowPK: row.PK, attrRowSK: row.SK},
		})
	}
	return out
}

// ForMatter returns the audit records of every request that touched a
// matter of tenant — named it, or answered with its rows — in time order
// (then request id), each once. It reads the matter's audit partition (one
// paged query: items carrying "data" are the rows homed there, items
// carrying row_pk/row_sk point at rows elsewhere, which are read in
// batches) and the index (GSI1) under the same key, which holds the
// day-partition rows that named the matter (refusals; and every row
// written before the rows moved into matter partitions, issue 19 item 6,
// until those expire). A pointer whose row does not exist (its request
// failed to commit after the item was written, or the row expired) is
// skipped. An id keyspace.ValidID refuses has no records. Index reads may
// lag writes on DynamoDB (store package doc); store failures are returned
// wrapped.
func ForMatter(ctx context.Context, st store.Store, tenant, matter string) ([]Record, error) {
	if !keyspace.ValidID(tenant) || !keyspace.ValidID(matter) {
		return nil, nil
	}
	var out []Record
	seen := map[string]bool{}
	add := func(it store.Item) error {
		r, err := decode(it)
		if err != nil {
			return err
		}
		if !seen[r.RequestID] {
			seen[r.RequestID] = true
			out = append(out, r)
		}
		return nil
	}
	pk := MatterIndexPK(tenant, matter)
	var rows []store.Key
	if err := scan(ctx, st, store.Query{PK: pk}, func(it store.Item) error {
		if _, ok := it.Attrs["data"]; ok {
			return add(it)
		}
		rows = append(rows, store.Key{PK: it.String(attrRowPK), SK: it.String(attrRowSK)})
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read audit partition of %s: %w", matter, err)
	}
	if err := scan(ctx, st, store.Query{Index: store.IndexGSI1, PK: pk}, add); err != nil {
		return nil, fmt.Errorf("read audit index of %s: %w", matter, err)
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
	sortRecords(out)
	return out, nil
}

// decode reads a row's record.
func decode(it store.Item) (Record, error) {
	var r Record
	if err := json.Unmarshal(it.Bytes("data"), &r); err != nil {
		return Record{}, fmt.Errorf("decode audit row %s: %w", it.Key(), err)
	}
	return r, nil
}

// sortRecords orders records by time, then request id.
func sortRecords(rs []Record) {
	slices.SortStableFunc(rs, func(a, b Record) int { return strings.Compare(a.indexSK(), b.indexSK()) })
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

// Day returns every audit record of a tenant's day (UTC) in time order
// (then request id): the rows of the day partition, and the rows homed in
// matter partitions, found by listing the tenant's matters (their rows in
// the tenant partition, package records) and reading each matter's audit
// partition for the day's time prefix (a row's home is a matter whose rows
// its answer contained, and matter rows are never deleted, so none is
// missed). Listing a day across matters thus
// costs one query per matter of the tenant (plus the pages of the matter
// listing): it is an operator and test path, never a per-call read, and
// the price of an answered request's audit row being one item with no
// index entry (docs/decisions.md "Cost model"). Store failures are
// returned wrapped.
func Day(ctx context.Context, st store.Store, tenant string, day time.Time) ([]Record, error) {
	var out []Record
	addRow := func(it store.Item) error {
		if _, ok := it.Attrs["data"]; !ok {
			return nil // an index item: its row is read from its own home
		}
		r, err := decode(it)
		if err == nil {
			out = append(out, r)
		}
		return err
	}
	if err := scan(ctx, st, store.Query{PK: Partition(tenant, day)}, addRow); err != nil {
		return nil, fmt.Errorf("read audit of %s: %w", tenant, err)
	}
	if !keyspace.ValidID(tenant) {
		return out, nil
	}
	var matters []string
	prefix := records.MatterKey(tenant, "").SK
	if err := scan(ctx, st, store.Query{PK: records.TenantPK(tenant), SK: store.SortKeyCondition{Prefix: prefix}},
		func(it store.Item) error {
			matters = append(matters, strings.TrimPrefix(it.SK, prefix))
			return nil
		}); err != nil {
		return nil, fmt.Errorf("list matters of %s: %w", tenant, err)
	}
	sk := store.SortKeyCondition{Prefix: day.UTC().Format("2006-01-02") + "T"}
	for _, m := range matters {
		if !keyspace.ValidID(m) {
			continue
		}
		if err := scan(ctx, st, store.Query{PK: MatterIndexPK(tenant, m), SK: sk}, addRow); err != nil {
			return nil, fmt.Errorf("read audit of %s in %s: %w", tenant, m, err)
		}
	}
	sortRecords(out)
	return out, nil
}
