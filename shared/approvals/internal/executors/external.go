package executors

import (
	"github.com/custodymcp/custody/shared/approvals/outbox"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/store"
)

// external carries out an external action by recording it in the firm's
// outbox: Custody never serves a production or sends a hold notice; the
// firm's own systems take the message (docs/contracts.md §6: approved =
// "external ones recorded in the outbox").
type external struct{ action string }

func (e external) Action() string { return e.action }

// documents are the documents an external act sends (serve_production's),
// each of which must still exist and be visible to both people.
func documents(args proposals.Args) []string {
	if a, ok := args.(*proposals.ServeProduction); ok {
		return a.DocumentIDs
	}
	return nil
}

func (e external) Execute(in Input) (Result, error) {
	switch in.Args.(type) {
	case *proposals.ServeProduction:
		if e.action != proposals.ActionServeProduction {
			return Result{}, ErrArgs
		}
	case *proposals.SetLitigationHold:
		if e.action != proposals.ActionSetLitigationHold {
			return Result{}, ErrArgs
		}
	default:
		return Result{}, ErrArgs
	}
	for _, id := range documents(in.Args) {
		if err := document(in, id); err != nil {
			return Result{}, err
		}
	}
	m := outbox.Message{ID: outbox.IDFor(in.Proposal.ID), Tenant: in.Proposal.Tenant, CaseID: in.Matter.ID,
		Proposal: in.Proposal.ID, Action: e.action, Args: in.Proposal.Args, WhatWillHappen: in.Proposal.WhatWillHappen,
		Requester: in.Requester.Owner, RequesterCredential: in.Requester.CredentialID, ApprovedBy: in.Decider, ApprovedAt: in.Now}
	op, err := outbox.Put(m)
	if err != nil {
		return Result{}, err
	}
	return Result{Ops: []store.Op{op}, Effects: []string{"outbox:" + m.ID}}, nil
}
