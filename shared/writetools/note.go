package writetools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/attest"
	"github.com/custodymcp/custody/shared/autonomy"
	"github.com/custodymcp/custody/shared/keyspace"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/tools"
)

// NoteInput is add_case_note's input.
type NoteInput struct {
	CaseID         string `json:"case_id" jsonschema:"The matter's case_id (from list_matters)." schema:"minLength=1;maxLength=128"`
	Body           string `json:"body" jsonschema:"The note's text (work product)." schema:"minLength=1;maxLength=20000;pattern=\\S"`
	IdempotencyKey string `json:"idempotency_key" jsonschema:"A key of your choice naming this note: repeat it to retry safely (1 to 128 printable ASCII characters)." schema:"minLength=1;maxLength=128;pattern=^[ -~]+$"`
	DocumentID     string `json:"document_id,omitempty" jsonschema:"A document of the matter the note cites." schema:"minLength=1;maxLength=128"`

	note *notePlan
}

// MatterID implements tools.MatterScoped.
func (in NoteInput) MatterID() string { return in.CaseID }

// notePlan is what add_case_note reads before its handler: its idempotency
// row, the document it cites, and the rows an L1 proposal would read.
type notePlan struct {
	idem    store.Key
	content string
	// indexes into Call.Prefetched (-1: not read)
	idemAt, docAt int
	// propose is the add_case_note proposal of the same key (nil when the
	// registry has no add_case_note action: then there is none to file).
	propose *plan
}

// NoteReceipt is add_case_note's receipt (the executed decision's data).
type NoteReceipt struct {
	NoteID       string      `json:"note_id"`
	CaseID       string      `json:"case_id"`
	Author       string      `json:"author"`
	Privilege    string      `json:"privilege"`
	DocumentID   string      `json:"document_id,omitempty"`
	CreatedAt    attest.Time `json:"created_at"`
	ProvenanceID string      `json:"provenance_id"`
	Replayed     bool        `json:"replayed"`
}

// idemKey is the note idempotency row of (credential id, key) in a matter:
// `IDEM#NOTE#<sha256 of the JSON array [credential id, key]>` (the matter
// is the partition), so neither value is stored in a key.
func idemKey(tenant, matter, credentialID, key string) store.Key {
	b, _ := json.Marshal([]string{credentialID, key})
	sum := sha256.Sum256(b)
	return store.Key{PK: keyspace.MatterPK(tenant, matter), SK: "IDEM#NOTE#" + hex.EncodeToString(sum[:])}
}

// noteID is the id of the note of (matter, credential id, key): "note_" +
// 24 hex characters of the SHA-256 of the JSON array of the three, so a
// replay names the note it wrote and ids stay unique across matters.
func noteID(matter, credentialID, key string) string {
	b, _ := json.Marshal([]string{matter, credentialID, key})
	sum := sha256.Sum256(b)
	return "note_" + hex.EncodeToString(sum[:12])
}

// noteContent is the digest of a note's content: SHA-256 of the JSON
// object {body, document_id}.
func noteContent(body, documentID string) string {
	b, _ := json.Marshal(struct {
		Body       string `json:"body"`
		DocumentID string `json:"document_id"`
	}{body, documentID})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// prefetchNote names add_case_note's rows: the idempotency row, the cited
// document, and — so that the L1 path (a proposal) reads in the same batch
// — the rows of an add_case_note proposal with the same key.
func (wt *writeTools) prefetchNote(c *tools.Call, in any) ([]store.Key, error) {
	n := in.(*NoteInput)
	tenant := c.Who.Tenant
	np := &notePlan{idem: idemKey(tenant, n.CaseID, c.Credential.ID, n.IdempotencyKey),
		content: noteContent(n.Body, n.DocumentID), docAt: -1}
	var keys []store.Key
	if _, ok := wt.actions.Action(proposals.ActionAddCaseNote); ok {
		args := map[string]any{"body": n.Body}
		if n.DocumentID != "" {
			args["document_id"] = n.DocumentID
		}
		pl, err := wt.plan(c, n.CaseID, proposals.ActionAddCaseNote, args, n.IdempotencyKey, ToolAddCaseNote)
		if err != nil {
			return nil, err
		}
		np.propose = pl
		keys = pl.keys(tenant, n.CaseID)
		if i, ok := pl.refAt[proposals.Ref{Kind: proposals.TargetDocument, ID: n.DocumentID}]; ok {
			np.docAt = i
		}
	}
	if n.DocumentID != "" && np.docAt < 0 {
		np.docAt = len(keys)
		keys = append(keys, records.DocumentKey(tenant, n.CaseID, n.DocumentID))
	}
	np.idemAt = len(keys)
	n.note = np
	return append(keys, np.idem), nil
}

// addCaseNote writes one work-product note authored by the key's owner
// (docs/contracts.md §4), or at autonomy L1 files it as an add_case_note
// proposal. Idempotent per (credential id, matter, key): the idempotency
// row is written beside the note in the one transaction, both NotExists;
// a repeat with the same content answers the original receipt (replayed),
// other content CONFLICT.
func (wt *writeTools) addCaseNote(ctx context.Context, c *tools.Call, in NoteInput) (tools.Decision, error) {
	np := in.note
	if np == nil {
		return tools.Decision{}, fmt.Errorf("writetools: the note was not planned")
	}
	rows := c.Prefetched
	if it := rows[np.idemAt]; it != nil {
		if it.String("content_sha256") != np.content {
			return tools.Denied(conflictRefusal()), nil
		}
		c.Write(tools.Write{Replay: true})
		return noteReplay(*it)
	}
	filed := np.propose != nil && rows[np.propose.proposal] != nil
	if c.Autonomy == autonomy.L1 || filed {
		// Every write is a proposal at L1; and a key that already filed
		// one (at L1 before) answers that proposal, not a second effect.
		if np.propose == nil {
			return tools.Denied(tools.Refuse(tools.ClassKillSwitch, "Notes cannot be filed as proposals for this firm right now; nothing was written.")), nil
		}
		return wt.file(ctx, c, np.propose, "")
	}
	if np.docAt >= 0 {
		if ref := visibleRef(c, proposals.Ref{Kind: proposals.TargetDocument, ID: in.DocumentID}, rows[np.docAt]); ref != nil {
			return tools.Denied(ref), nil
		}
	}
	now := c.Now.UTC()
	note := records.Note{ID: noteID(c.Matter.ID, c.Credential.ID, in.IdempotencyKey), Matter: c.Matter.ID, Author: c.Credential.Owner,
		Body: in.Body, Privilege: records.PrivilegeWorkProduct, DocumentID: in.DocumentID,
		ViaCredential: c.Credential.ID, CreatedAt: now, UpdatedAt: now}
	noteItem, err := records.NoteItem(c.Who.Tenant, note)
	if err != nil {
		return tools.Decision{}, err
	}
	r := NoteReceipt{NoteID: note.ID, CaseID: note.Matter, Author: note.Author, Privilege: string(note.Privilege),
		DocumentID: note.DocumentID, CreatedAt: attest.At(now), ProvenanceID: urn(c, "note", note.ID)}
	receipt, err := json.Marshal(r)
	if err != nil {
		return tools.Decision{}, err
	}
	idem := store.Item{PK: np.idem.PK, SK: np.idem.SK, Version: 1, Attrs: map[string]any{
		"content_sha256": np.content, "receipt": receipt, "note_sk": noteItem.SK,
		"created_at": now.Format(time.RFC3339Nano),
	}}
	c.Write(tools.Write{
		Ops: []store.Op{store.PutOp(idem, store.NotExists()), store.PutOp(noteItem, store.NotExists())},
		Conflict: func(ctx context.Context, failed int) (any, bool, error) {
			// A concurrent call with the same key wrote first: the same
			// content is a replay of its note.
			it, err := wt.store.Get(ctx, np.idem)
			if err != nil {
				return nil, false, err
			}
			if it.String("content_sha256") != np.content {
				return tools.Denied(conflictRefusal()), false, nil
			}
			d, err := noteReplay(it)
			return d, err == nil, err
		},
	})
	return tools.Executed(r), nil
}

// noteReplay is the original receipt an idempotency row holds, replayed.
func noteReplay(it store.Item) (tools.Decision, error) {
	var r NoteReceipt
	if err := json.Unmarshal(it.Bytes("receipt"), &r); err != nil {
		return tools.Decision{}, fmt.Errorf("note idempotency row %s: %w", it.Key(), err)
	}
	r.Replayed = true
	return tools.Executed(r), nil
}
