// Package ledger is the record-decision ledger of a matter: every approval
// the approval page carries out appends one entry, and the entries form a
// hash chain (docs/decisions.md "Approvers", the ledger), so an entry
// edited, removed or inserted in the store afterwards is found by Verify.
//
// # Rows
//
//	entry  T#<t>#M#<m>  LEDGER#<10-digit seq>   the entry's canonical JSON and its SHA-256
//	head   T#<t>#M#<m>  LEDGERHEAD              the last seq and its hash
//
// An entry's body is canonical JSON (encoding/json of Body: its fields in
// a fixed order, no insignificant white space, strings escaped one way)
// holding its seq and the previous entry's hash (64 zeros before the
// first); its hash is the lowercase hex SHA-256 of exactly those bytes.
//
// # Appends are serialized by the head
//
// Append returns two writes for the caller's transaction (the decision's):
// the entry, put under NotExists, and the head, moved from the version the
// caller read to the new seq and hash (created under NotExists for the
// first entry). Two decisions that read one head cannot both commit: the
// second's head condition fails and its whole transaction is cancelled, and
// it re-reads the head and tries again. So seqs are dense, each entry names
// its real predecessor, and no process-local lock is involved.
package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/store"
)

// Genesis is the previous hash of a matter's first entry: 64 zeros.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// Sort keys of the ledger's rows.
const (
	skEntry = "LEDGER#"
	skHead  = "LEDGERHEAD"
)

// Attributes of the rows.
const (
	attrBody = "body"
	attrHash = "hash"
	attrSeq  = "seq"
)

// seqWidth is the fixed width of a seq in a sort key, so byte order is
// numeric order (up to 9,999,999,999 entries per matter).
const seqWidth = 10

// EntryKey is the key of entry seq of a matter.
func EntryKey(tenant, matter string, seq int64) store.Key {
	return store.Key{PK: keyspace.MatterPK(tenant, matter), SK: fmt.Sprintf("%s%0*d", skEntry, seqWidth, seq)}
}

// HeadKey is the key of a matter's head row.
func HeadKey(tenant, matter string) store.Key {
	return store.Key{PK: keyspace.MatterPK(tenant, matter), SK: skHead}
}

// Requester names who asked for what was approved: the requesting
// credential and its owner (docs/contracts.md §6 requested_by).
type Requester struct {
	Type         string `json:"type"`
	CredentialID string `json:"credential_id"`
	Owner        string `json:"owner"`
}

// Body is one entry as it is hashed. Field order is the canonical order.
type Body struct {
	Seq      int64     `json:"seq"`
	Previous string    `json:"previous_hash"`
	At       time.Time `json:"at"`
	Tenant   string    `json:"tenant"`
	CaseID   string    `json:"case_id"`
	Proposal string    `json:"proposal"`
	Action   string    `json:"action"`
	// ArgsSHA256 is the lowercase hex SHA-256 of the proposal's stored args
	// (canonical JSON), as executed.
	ArgsSHA256 string    `json:"args_sha256"`
	Requester  Requester `json:"requested_by"`
	ApprovedBy string    `json:"approved_by"`
	// Effects name what the approval wrote: "deadline:dl_…", "exhibit:PX-1",
	// "note:note_…", "fact:f_…", "outbox:obx_…".
	Effects []string `json:"effects"`
}

// Canonical is the body's canonical JSON: the bytes that are hashed.
func (b Body) Canonical() ([]byte, error) {
	b.At = b.At.UTC()
	if b.Effects == nil {
		b.Effects = []string{}
	}
	return json.Marshal(b)
}

// Hash is the lowercase hex SHA-256 of canonical bytes.
func Hash(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}

// Head is where a matter's chain ends: its last seq (0: no entry yet), that
// entry's hash (Genesis before the first), and the head row's version (0:
// no head row).
type Head struct {
	Seq     int64
	Hash    string
	Version int64
}

// DecodeHead reads a head row (nil: a matter without entries).
func DecodeHead(it *store.Item) (Head, error) {
	if it == nil {
		return Head{Hash: Genesis}, nil
	}
	h := Head{Seq: it.Int(attrSeq), Hash: it.String(attrHash), Version: it.Version}
	if h.Seq < 1 || len(h.Hash) != 64 {
		return Head{}, fmt.Errorf("ledger head %s: %w", it.Key(), ErrCorrupt)
	}
	return h, nil
}

// ErrCorrupt reports a ledger row that cannot be read as one.
var ErrCorrupt = errors.New("ledger: corrupt row")

// Append returns the writes that append b after head h, for the caller's
// transaction: the entry (NotExists) and the head (VersionEquals of the
// version read, or NotExists for a matter's first entry). b's Seq and
// Previous are set from h. The entry's hash is returned too.
func Append(h Head, b Body) (ops []store.Op, hash string, err error) {
	b.Seq, b.Previous = h.Seq+1, h.Hash
	canon, err := b.Canonical()
	if err != nil {
		return nil, "", fmt.Errorf("encode ledger entry %d of %s: %w", b.Seq, b.CaseID, err)
	}
	hash = Hash(canon)
	ek := EntryKey(b.Tenant, b.CaseID, b.Seq)
	entry := store.Item{PK: ek.PK, SK: ek.SK, Version: 1, Attrs: map[string]any{attrBody: canon, attrHash: hash, attrSeq: b.Seq}}
	hk := HeadKey(b.Tenant, b.CaseID)
	var head store.Op
	if h.Version == 0 {
		head = store.PutOp(store.Item{PK: hk.PK, SK: hk.SK, Version: 1, Attrs: map[string]any{attrSeq: b.Seq, attrHash: hash}}, store.NotExists())
	} else {
		head = store.UpdateOp(hk, store.Update{Set: map[string]any{attrSeq: b.Seq, attrHash: hash}}, store.VersionEquals(h.Version))
	}
	return []store.Op{store.PutOp(entry, store.NotExists()), head}, hash, nil
}

// Entry is a stored entry: its body as decoded, the bytes stored, and the
// hash stored beside them.
type Entry struct {
	Body
	Canonical []byte
	Hash      string
	// StoredSeq is the seq its sort key names.
	StoredSeq int64
}

// Entries reads every entry of a matter, in seq order (one strongly
// consistent query of the matter's partition, paged by the store). A row
// whose body does not decode is returned with a zero Body, for Verify to
// name.
func Entries(ctx context.Context, st store.Store, tenant, matter string) ([]Entry, error) {
	q := store.Query{PK: keyspace.MatterPK(tenant, matter), SK: store.SortKeyCondition{Prefix: skEntry}}
	var out []Entry
	for {
		page, err := st.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("read the ledger of %s: %w", matter, err)
		}
		for _, it := range page.Items {
			e := Entry{Canonical: it.Bytes(attrBody), Hash: it.String(attrHash)}
			e.StoredSeq, _ = strconv.ParseInt(strings.TrimPrefix(it.SK, skEntry), 10, 64)
			if err := json.Unmarshal(e.Canonical, &e.Body); err != nil {
				e.Body = Body{}
			}
			out = append(out, e)
		}
		if page.NextToken == "" {
			return out, nil
		}
		q.PageToken = page.NextToken
	}
}

// Report is what Verify found.
type Report struct {
	// Entries is how many entries the matter has.
	Entries int
	// OK is true when the chain is intact: every entry's stored hash is the
	// SHA-256 of its stored bytes, which are its canonical form, its seq is
	// the next one, it names its predecessor's hash, and the head names the
	// last entry.
	OK bool
	// BrokenSeq is the first entry that breaks the chain (0 when OK, or
	// when only the head disagrees).
	BrokenSeq int64
	// Problem says what is wrong, in a sentence naming no content.
	Problem string
}

// Verify reads a matter's ledger and checks the chain from the first entry
// to the head. A store failure is returned as an error; a broken chain is
// a Report with OK false naming the first broken seq.
func Verify(ctx context.Context, st store.Store, tenant, matter string) (Report, error) {
	entries, err := Entries(ctx, st, tenant, matter)
	if err != nil {
		return Report{}, err
	}
	headRow, err := st.Get(ctx, HeadKey(tenant, matter))
	var head *store.Item
	switch {
	case err == nil:
		head = &headRow
	case !errors.Is(err, store.ErrNotFound):
		return Report{}, fmt.Errorf("read the ledger head of %s: %w", matter, err)
	}
	rep := Report{Entries: len(entries)}
	prev := Genesis
	for i, e := range entries {
		want := int64(i + 1)
		broken := func(problem string) (Report, error) {
			rep.BrokenSeq, rep.Problem = want, problem
			return rep, nil
		}
		switch {
		case e.StoredSeq != want:
			return broken(fmt.Sprintf("entry %d is missing (the next row is seq %d)", want, e.StoredSeq))
		case Hash(e.Canonical) != e.Hash:
			return broken(fmt.Sprintf("entry %d's stored hash is not the SHA-256 of its stored body: the row was edited", want))
		case e.Seq != want:
			return broken(fmt.Sprintf("entry %d's body names seq %d", want, e.Seq))
		case e.Previous != prev:
			return broken(fmt.Sprintf("entry %d does not name entry %d's hash: an entry before it was replaced", want, want-1))
		}
		if canon, err := e.Body.Canonical(); err != nil || string(canon) != string(e.Canonical) {
			return broken(fmt.Sprintf("entry %d's stored body is not in canonical form", want))
		}
		prev = e.Hash
	}
	h, err := DecodeHead(head)
	switch {
	case err != nil:
		rep.Problem = "the ledger head cannot be read"
		return rep, nil
	case h.Seq > int64(len(entries)):
		rep.BrokenSeq = int64(len(entries)) + 1
		rep.Problem = fmt.Sprintf("the head names entry %d, but the chain ends at entry %d: entries were removed", h.Seq, len(entries))
		return rep, nil
	case h.Seq != int64(len(entries)) || h.Hash != prev:
		// The last entry is not the one the head recorded: it (or the
		// head) was rewritten.
		rep.BrokenSeq = int64(len(entries))
		rep.Problem = fmt.Sprintf("the head names entry %d with another hash than the chain's last entry %d", h.Seq, len(entries))
		return rep, nil
	}
	rep.OK = true
	return rep, nil
}
