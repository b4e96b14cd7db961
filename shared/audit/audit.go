// Package audit records one row per authenticated request, refusals included
// (DECISIONS.md "Pipeline choices"): who (principal, credential id), what
// (method, tool, prompt, resource URI, matter), the outcome, and the query
// as SHA-256 + length — never its text, never tool or prompt arguments.
//
// Rows live in a per-tenant, per-day partition `T#<tenant>#AUDIT#<yyyy-mm-dd>`
// sorted by time and request id, and are indexed by matter
// (`GSI1PK = T#<tenant>#M#<matter>#AUDIT`) for "who touched this matter".
// A matter id no matter can have (records.ValidID: control characters,
// '#', over 128 bytes) is kept in the row but not indexed: a caller's
// malformed id must never stop its request from being recorded.
package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
)

// Outcome values besides a refusal class (CONTRACTS.md §3) or "rpc:<code>".
const (
	OutcomeOK       = "ok"
	OutcomeAccepted = "accepted" // a notification or client response
	// OutcomeReplay is a governed write answered with its original
	// receipt: the same call was carried out before.
	OutcomeReplay = "ok:replay"
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
	Matter   string `json:"matter,omitempty"`
	// Outcome is "ok", "accepted", a refusal class such as "VALIDATION", or
	// "rpc:<code>" for a JSON-RPC error.
	Outcome     string `json:"outcome"`
	QuerySHA256 string `json:"query_sha256,omitempty"`
	QueryLen    int    `json:"query_len,omitempty"`
	DurationMs  int64  `json:"duration_ms"`
}

// SetQuery records a query's digest and length, never its text.
func (r *Record) SetQuery(q string) {
	sum := sha256.Sum256([]byte(q))
	r.QuerySHA256 = hex.EncodeToString(sum[:])
	r.QueryLen = len(q)
}

// Partition is the audit partition of a tenant's day.
func Partition(tenant string, day time.Time) string {
	return "T#" + tenant + "#AUDIT#" + day.UTC().Format("2006-01-02")
}

// Item encodes the record as its row.
func (r *Record) Item() store.Item {
	data, _ := json.Marshal(r) // a struct of strings, ints and a time: cannot fail
	it := store.Item{
		PK:      Partition(r.Tenant, r.At),
		SK:      r.At.UTC().Format("15:04:05.000000000") + "#" + r.RequestID,
		Version: 1,
		Attrs:   map[string]any{"data": data},
	}
	if records.ValidID(r.Matter) && records.ValidID(r.Tenant) {
		it.GSI1PK = "T#" + r.Tenant + "#M#" + r.Matter + "#AUDIT"
		it.GSI1SK = r.At.UTC().Format(records.SortableTimeLayout) + "#" + r.RequestID
	}
	return it
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
