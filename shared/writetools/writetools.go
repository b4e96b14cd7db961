// Package writetools holds Custody's governed writes (docs/contracts.md §4;
// issue 13), registered with the tool registry like the read tools:
//
//   - add_case_note writes one internal work-product note, idempotently;
//   - propose_action files a proposal that executes nothing until a person
//     at the firm approves it (shared/proposals holds the actions and the
//     rows; nothing here can execute one);
//   - list_actions shows what can be proposed, with each action's args
//     schema;
//   - list_my_proposals lists the calling credential's proposals.
//
// The two write tools (tools.Spec.Write) answer the one decision shape:
// executed, pending_approval or denied. They run the whole governed
// pipeline (docs/architecture.md "The request path", steps 3–10): kill
// switch, scope write, validation, the write lane's verdict (the write
// budget), the funnel, the class floor (a client-safe credential never
// writes), then, in the invocation core's write step, one batch read of
// the matter, the autonomy settings and the rows this package prefetches
// (an idempotency row, the pending counter, the proposal id's row, the
// target) and the autonomy refusal at L0. A handler never writes: it hands
// its operations and its conflict answer to the core (tools.Call.Write),
// which commits them in one transaction with the rate count and the audit
// row, and answers after the commit — propose_action from the proposal row
// read back.
//
// Round trips on DynamoDB (reads + writes; shared/server/ondynamo pins
// them): add_case_note first 2+1, replay and CONFLICT 2+1, lost race 3+2;
// propose_action filed 3+1 (with a URL-mode hand-off too: its binding and
// parked answer row join the one transaction, issue 15), replay 3+1, BACKPRESSURE 2+1 (2+2 when lost by
// race), AUTONOMY_DENIED 2+1; list_my_proposals 3+1; list_actions 2+1.
package writetools

import (
	"fmt"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/attest"
	"github.com/custodymcp/custody/shared/handoff"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/tools"
)

// The tools' names.
const (
	ToolAddCaseNote     = "add_case_note"
	ToolProposeAction   = "propose_action"
	ToolListActions     = "list_actions"
	ToolListMyProposals = "list_my_proposals"
)

// NextStep is the fixed sentence of every pending_approval decision
// (docs/contracts.md §4).
const NextStep = "A person at the firm must approve this. This API cannot approve it and returns no confirmation token."

// CappedAt is the autonomy level every proposal answers at: whatever the
// setting, a proposal is the L1 behaviour (docs/decisions.md "Autonomy").
const CappedAt = "L1"

// Options configure the write tools.
type Options struct {
	// Store is the store the tools read their rows back from (the one the
	// core commits to).
	Store store.Store
	// Repo reads the record (list_my_proposals' matters).
	Repo *records.Repo
	// Actions is the action registry; nil means proposals.Default().
	Actions *proposals.Registry
	// PublicBaseURL is the base the approval page is served under: the
	// receipts' review_url is PublicBaseURL + "/approvals", with no id.
	PublicBaseURL string
	// ProposalLife is a proposal's life; 0 means proposals.Life (7 d),
	// otherwise within [proposals.MinLife, proposals.MaxLife].
	ProposalLife time.Duration
	// HandoffAnswerTTL is how long a hand-off's elicitation waits for the
	// client's answer (HANDOFF_ANSWER_TTL); 0 means handoff.AnswerTTL (1 h).
	HandoffAnswerTTL time.Duration
}

// writeTools holds the tools' dependencies.
type writeTools struct {
	store     store.Store
	repo      *records.Repo
	actions   *proposals.Registry
	schemas   map[string]*tools.ArgsSchema
	reviewURL string
	life      time.Duration
	// publicBase is Options.PublicBaseURL without a trailing slash: the
	// hand-off's links are built from it ("": no hand-off).
	publicBase string
	answerTTL  time.Duration
}

// Register adds the governed write tools to reg.
func Register(reg *tools.Registry, opts Options) error {
	if opts.Store == nil || opts.Repo == nil {
		return fmt.Errorf("writetools: a store and a repo are required")
	}
	if opts.Actions == nil {
		opts.Actions = proposals.Default()
	}
	if opts.ProposalLife == 0 {
		opts.ProposalLife = proposals.Life
	}
	if opts.ProposalLife < proposals.MinLife || opts.ProposalLife > proposals.MaxLife {
		return fmt.Errorf("writetools: a proposal life of %v is outside [%v, %v]", opts.ProposalLife, proposals.MinLife, proposals.MaxLife)
	}
	wt := &writeTools{store: opts.Store, repo: opts.Repo, actions: opts.Actions, schemas: map[string]*tools.ArgsSchema{},
		reviewURL: strings.TrimSuffix(opts.PublicBaseURL, "/") + "/approvals", life: opts.ProposalLife,
		publicBase: strings.TrimSuffix(opts.PublicBaseURL, "/"), answerTTL: opts.HandoffAnswerTTL}
	if wt.answerTTL <= 0 {
		wt.answerTTL = handoff.AnswerTTL
	}
	for _, name := range opts.Actions.Names() {
		a, _ := opts.Actions.Action(name)
		s, err := tools.NewArgsSchema(name, a.Input())
		if err != nil {
			return fmt.Errorf("writetools: action %s: %w", name, err)
		}
		wt.schemas[name] = s
	}
	proposeSchema, err := wt.proposeInputSchema()
	if err != nil {
		return err
	}
	writeAnn := mcp.ToolAnnotations{IdempotentHint: true}
	readAnn := mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	for _, err := range []error{
		tools.Register(reg, tools.Spec{Name: ToolAddCaseNote, Title: "Add a case note", Scope: scopeWrite, Write: true,
			Annotations: writeAnn, Prefetch: wt.prefetchNote,
			Description: "Writes one work-product case note to a matter, authored by this key's owner. Idempotent: repeat a call with the same idempotency_key and the same body to get the original receipt (replayed: true); the same key with another body is CONFLICT. Answers a decision: executed, pending_approval (when the firm's autonomy setting makes every write a proposal) or denied."},
			wt.addCaseNote),
		tools.Register(reg, tools.Spec{Name: ToolProposeAction, Title: "Propose an action", Scope: scopeWrite, Write: true,
			Annotations: writeAnn, InputSchema: proposeSchema, Prefetch: wt.prefetchPropose, AutonomyNames: autonomyNames,
			Description: "Files a proposal that a person at the firm reviews and approves or declines; nothing is done until then, and this API cannot approve it. args follows the action's schema from list_actions. Idempotent per idempotency_key: the same key and args return the original receipt, other args CONFLICT. Answers pending_approval or denied; follow it with list_my_proposals."},
			wt.proposeAction),
		tools.Register(reg, tools.Spec{Name: ToolListActions, Title: "List proposable actions", Scope: scopeWrite,
			Annotations: readAnn,
			Description: "Lists the actions propose_action can file for this firm: each one's args schema, deliverable noun, external effect class, supervision floor and whether its approval needs a second confirmation."},
			wt.listActions),
		tools.Register(reg, tools.Spec{Name: ToolListMyProposals, Title: "List my proposals", Scope: scopeRead,
			Annotations: readAnn,
			Description: "Lists the proposals this credential filed, newest first, with their status (pending, approved, declined, denied, expired) and, once decided, the decision's code; filter by case_id and status. Read-only: it has no power over any proposal."},
			wt.listMyProposals),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// urn is a provenance id of the calling credential's tenant.
func urn(c *tools.Call, kind, id string) string { return attest.URN(c.Credential.Tenant, kind, id) }
