// Package executors carries out approved proposals: for each action of the
// registry (shared/proposals) one executor turns an approved proposal into
// the writes of the approval's one transaction — a deadline row, an
// exhibit row, a note, a fact's new posture or check — or, for an external
// action, a message in the firm's outbox (shared/approvals/outbox), which
// Custody never carries out itself.
//
// # Why internal
//
// Go's internal rule: only shared/approvals and the packages below it can
// import this one, so nothing on the request path of /mcp (shared/tools,
// shared/writetools, shared/proposals) can build an executor or call one.
// An approval page decision is the only way an action is executed, and the
// approval page decides only for a signed-in person (package approvals). A
// test holds it with `go list -deps`.
//
// An executor decides nothing about who may approve: the caller (package
// approvals) re-reads the proposal, the requester, the decider and the
// target and refuses before it asks. An executor checks only what its own
// rows say (the label is free, the cited documents exist and both people
// may see them) and answers ErrPrecondition when the record no longer
// admits the act as proposed.
package executors

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
)

// Errors of Execute.
var (
	// ErrPrecondition: the record no longer admits the act as proposed (a
	// cited document is gone, the label is taken, the fact moved).
	ErrPrecondition = errors.New("executors: the record no longer admits the proposed act")
	// ErrArgs: the args are not of the executor's action.
	ErrArgs = errors.New("executors: the args are not the action's")
)

// Input is an approved proposal as the executor gets it: everything
// re-read from the store by the caller, never from a form.
type Input struct {
	Proposal *proposals.Proposal
	// Args are the proposal's stored args decoded by the live action.
	Args   proposals.Args
	Matter records.Matter
	// Decider is the approving principal; Requester the requesting
	// credential's reference (its owner and credential id).
	Decider   string
	Requester auth.Reference
	Now       time.Time
	// Rows are the rows the caller read for the decision, by key: at least
	// the proposal's target and every row it cites (nil where absent). A
	// row an executor needs that is not there fails closed.
	Rows map[store.Key]*store.Item
	// Sees reports whether both the requester and the decider may see
	// material of a privilege: the approval executes with the intersection
	// of their rights (docs/contracts.md §4).
	Sees func(records.Privilege) bool
}

// Result is what an approval writes: the operations for its transaction and
// the names of what they write, for the ledger ("deadline:dl_…").
type Result struct {
	Ops     []store.Op
	Effects []string
}

// Executor carries out one action.
type Executor interface {
	// Action is the action's name.
	Action() string
	// Execute returns the writes of the approved act, or ErrPrecondition,
	// or ErrArgs.
	Execute(in Input) (Result, error)
}

// All returns one executor per action of proposals.Actions, in the
// registry's order.
func All() []Executor {
	return []Executor{
		deadline{}, exhibit{}, note{}, posture{}, check{},
		external{action: proposals.ActionServeProduction}, external{action: proposals.ActionSetLitigationHold},
	}
}

// For returns the executor of action.
func For(action string) (Executor, bool) {
	for _, e := range All() {
		if e.Action() == action {
			return e, true
		}
	}
	return nil, false
}

// derivedID is prefix + 24 hex of the SHA-256 of the proposal id under a
// label: the row an approval writes is named by its proposal, so carrying
// one approval out twice can only ever write one row (NotExists).
func derivedID(prefix, label, proposal string) string {
	sum := sha256.Sum256([]byte("custody " + label + "\x00" + proposal))
	return prefix + hex.EncodeToString(sum[:12])
}

// document checks a cited document row: present, of the matter and
// visible to both people.
func document(in Input, id string) error {
	row := in.Rows[records.DocumentKey(in.Proposal.Tenant, in.Matter.ID, id)]
	var d records.Document
	if row == nil || records.DecodeRow(*row, &d) != nil || d.ID != id || !in.Sees(d.Privilege) || !d.Reviewed() {
		return fmt.Errorf("document %s: %w", id, ErrPrecondition)
	}
	return nil
}

// deadline carries out create_deadline: a deadline row.
type deadline struct{}

func (deadline) Action() string { return proposals.ActionCreateDeadline }

func (deadline) Execute(in Input) (Result, error) {
	a, ok := in.Args.(*proposals.CreateDeadline)
	if !ok {
		return Result{}, ErrArgs
	}
	if a.SourceDocumentID != "" {
		if err := document(in, a.SourceDocumentID); err != nil {
			return Result{}, err
		}
	}
	d := records.Deadline{ID: derivedID("dl_", "deadline", in.Proposal.ID), Matter: in.Matter.ID, Title: a.Title,
		Due: a.DueDate, Kind: a.Kind, Rule: a.Rule, SourceDocumentID: a.SourceDocumentID, SourcePage: a.SourcePage,
		Status: records.DeadlineOpen, CreatedAt: in.Now, UpdatedAt: in.Now}
	it, err := records.DeadlineItem(in.Proposal.Tenant, d)
	if err != nil {
		return Result{}, fmt.Errorf("deadline of %s: %w", in.Proposal.ID, err)
	}
	return Result{Ops: []store.Op{store.PutOp(it, store.NotExists())}, Effects: []string{"deadline:" + d.ID}}, nil
}

// exhibit carries out add_exhibit: an exhibit row under a label unique in
// the matter.
type exhibit struct{}

func (exhibit) Action() string { return proposals.ActionAddExhibit }

func (exhibit) Execute(in Input) (Result, error) {
	a, ok := in.Args.(*proposals.AddExhibit)
	if !ok {
		return Result{}, ErrArgs
	}
	if err := document(in, a.DocumentID); err != nil {
		return Result{}, err
	}
	e := records.Exhibit{Label: a.Label, Matter: in.Matter.ID, DocumentID: a.DocumentID, Description: a.Description,
		MarkedBy: in.Decider, Proposal: in.Proposal.ID, CreatedAt: in.Now, UpdatedAt: in.Now}
	it, err := records.ExhibitItem(in.Proposal.Tenant, e)
	if err != nil {
		return Result{}, fmt.Errorf("exhibit of %s: %w", in.Proposal.ID, err)
	}
	// NotExists: a label taken (before or by a racing approval) cancels the
	// transaction at this write, which the caller answers as the record
	// having moved.
	return Result{Ops: []store.Op{store.PutOp(it, store.NotExists())}, Effects: []string{"exhibit:" + a.Label}}, nil
}

// note carries out add_case_note: a work-product note authored by the
// requesting credential's owner, as add_case_note itself writes it.
type note struct{}

func (note) Action() string { return proposals.ActionAddCaseNote }

func (note) Execute(in Input) (Result, error) {
	a, ok := in.Args.(*proposals.AddCaseNote)
	if !ok {
		return Result{}, ErrArgs
	}
	if a.DocumentID != "" {
		if err := document(in, a.DocumentID); err != nil {
			return Result{}, err
		}
	}
	n := records.Note{ID: derivedID("note_", "note", in.Proposal.ID), Matter: in.Matter.ID, Author: in.Requester.Owner,
		Body: a.Body, Privilege: records.PrivilegeWorkProduct, DocumentID: a.DocumentID,
		ViaCredential: in.Requester.CredentialID, CreatedAt: in.Now, UpdatedAt: in.Now}
	it, err := records.NoteItem(in.Proposal.Tenant, n)
	if err != nil {
		return Result{}, fmt.Errorf("note of %s: %w", in.Proposal.ID, err)
	}
	return Result{Ops: []store.Op{store.PutOp(it, store.NotExists())}, Effects: []string{"note:" + n.ID}}, nil
}

// fact reads the target fact row for posture and check: present, visible
// to both, at the version the proposal was filed against.
func fact(in Input, id string) (records.Fact, *store.Item, error) {
	row := in.Rows[records.FactKey(in.Proposal.Tenant, in.Matter.ID, id)]
	var f records.Fact
	if row == nil || records.DecodeRow(*row, &f) != nil || f.ID != id || !in.Sees(f.Privilege) {
		return records.Fact{}, nil, fmt.Errorf("fact %s: %w", id, ErrPrecondition)
	}
	if row.Version != in.Proposal.Target.Version {
		return records.Fact{}, nil, fmt.Errorf("fact %s moved: %w", id, ErrPrecondition)
	}
	return f, row, nil
}

// rewrite is the write of f over row: Version+1 under VersionEquals of
// the version read, so nothing written since is overwritten.
func rewrite(in Input, f records.Fact, row *store.Item) (store.Op, error) {
	f.UpdatedAt = in.Now
	it, err := records.FactItem(in.Proposal.Tenant, f)
	if err != nil {
		return store.Op{}, fmt.Errorf("fact %s of %s: %w", f.ID, in.Proposal.ID, err)
	}
	it.Version = row.Version + 1
	return store.PutOp(it, store.VersionEquals(row.Version)), nil
}

// posture carries out set_fact_posture: the fact's posture, recorded by the
// approver, with its basis.
type posture struct{}

func (posture) Action() string { return proposals.ActionSetFactPosture }

func (posture) Execute(in Input) (Result, error) {
	a, ok := in.Args.(*proposals.SetFactPosture)
	if !ok || !records.Posture(a.Posture).Valid() {
		return Result{}, ErrArgs
	}
	f, row, err := fact(in, a.FactID)
	if err != nil {
		return Result{}, err
	}
	f.Posture, f.RecordedBy = records.Posture(a.Posture), in.Decider
	f.PostureBasis = &records.PostureBasis{Note: a.Note, Proposal: in.Proposal.ID, Requester: in.Requester.Owner, Approver: in.Decider}
	op, err := rewrite(in, f, row)
	if err != nil {
		return Result{}, err
	}
	return Result{Ops: []store.Op{op}, Effects: []string{"fact:" + f.ID}}, nil
}

// check carries out record_fact_check: a check of the fact, by the
// approver, citing the authority.
type check struct{}

func (check) Action() string { return proposals.ActionRecordFactCheck }

func (check) Execute(in Input) (Result, error) {
	a, ok := in.Args.(*proposals.RecordFactCheck)
	if !ok {
		return Result{}, ErrArgs
	}
	result := records.CheckResult(a.Result)
	if result != records.CheckConfirmed && result != records.CheckRefuted {
		return Result{}, ErrArgs
	}
	f, row, err := fact(in, a.FactID)
	if err != nil {
		return Result{}, err
	}
	f.Checks = append(f.Checks, records.Check{Method: a.Method, CheckedBy: in.Decider, CheckedAt: in.Now,
		Result: result, Citation: a.AuthorityCitation})
	op, err := rewrite(in, f, row)
	if err != nil {
		return Result{}, err
	}
	return Result{Ops: []store.Op{op}, Effects: []string{"fact:" + f.ID}}, nil
}
