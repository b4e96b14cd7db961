package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	validator "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/custodymcp/custody/shared/admin"
	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/autonomy"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/storetest"
	"github.com/custodymcp/custody/shared/tools"
	"github.com/custodymcp/custody/shared/writetools"
)

// NewEnv starts an Env on one engine (New for the file engine;
// shared/server/ondynamo's for DynamoDB).
type NewEnv func(t testing.TB, opts Options) *Env

// WriteSuite is the governed writes' behaviour (issue 13;
// docs/contracts.md §4) through the composed endpoint, each case on a
// fresh Env of newEnv: shared/server runs it on the file engine and
// shared/server/ondynamo on DynamoDB, which also pins the round trips and
// runs the races; scripts/dev runs the races across two processes.
func WriteSuite(t *testing.T, newEnv NewEnv) {
	for _, c := range []struct {
		name string
		run  func(*testing.T, NewEnv)
	}{
		{"propose_action files once and a repeat answers the original receipt", writeProposeActionFilesOnceAndARepeatAnswersTheOriginalReceipt},
		{"planted overrides are stripped, listed by path and stored nowhere", writePlantedOverridesAreStrippedListedByPathAndStoredNowhere},
		{"a failed read-back is UNAVAILABLE and the retry answers the original receipt", writeAFailedReadBackIsUnavailableAndTheRetryAnswersTheOriginalReceipt},
		{"one key names one call per matter", writeOneKeyNamesOneCallPerMatter},
		{"a matter holds at most 25 pending proposals", writeAMatterHoldsAtMostTwentyFivePendingProposals},
		{"the autonomy table, tool by tool", writeTheAutonomyTableToolByTool},
		{"a client-safe credential is refused every write", writeAClientSafeCredentialIsRefusedEveryWrite},
		{"proposing any action writes no record row", writeProposingAnyActionWritesNoRecordRow},
		{"the target must be in the matter and args are validated by path", writeTheTargetMustBeInTheMatterAndArgsAreValidatedByPath},
		{"a note written twice with one key is one note", writeANoteWrittenTwiceWithOneKeyIsOneNote},
		{"an action without impact is filed and never batch-eligible", writeAnActionWithoutImpactIsFiledAndNeverBatchEligible},
		{"the decision shapes validate against both outputSchemas and no message quotes a value", writeTheDecisionShapesValidateAndNoMessageQuotesAValue},
		{"list_my_proposals shows only this credential's proposals as they stand", writeListMyProposalsShowsOnlyThisCredentialsProposalsAsTheyStand},
		{"write tools are refused in a batch", writeWriteToolsAreRefusedInABatch},
		{"list_actions shows the enabled actions and a disabled one cannot be proposed", writeListActionsShowsTheEnabledActionsAndADisabledOneCannotBeProposed},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, newEnv) })
	}
}

// DeadlineArgs are valid create_deadline args.
func DeadlineArgs() map[string]any {
	return map[string]any{"title": "Expert disclosures", "due_date": "2026-12-14", "kind": "expert",
		"rule": "Scheduling Order ¶ 4"}
}

// ProposeArgs are propose_action's arguments for action with args on
// matter under key.
func ProposeArgs(matter, key, action string, args map[string]any) map[string]any {
	return map[string]any{"case_id": matter, "action": action, "args": args,
		"reason": "The scheduling order sets it.", "idempotency_key": key}
}

// decisionOf is a write tool's decision, checking the shape's rule that
// isError is status == denied.
func decisionOf(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	sc := Structured(t, res)
	status, _ := sc["status"].(string)
	if (status == tools.StatusDenied) != (res["isError"] == true) {
		t.Errorf("isError %v with status %q: isError must equal status == denied", res["isError"], status)
	}
	if sc["executed"] != (status == tools.StatusExecuted) {
		t.Errorf("executed %v with status %q", sc["executed"], status)
	}
	return sc
}

func classOf(d map[string]any) string {
	e, _ := d["error"].(map[string]any)
	c, _ := e["class"].(string)
	return c
}

// rowsUnder returns every live row of a partition.
func rowsUnder(t *testing.T, st store.Store, pk, prefix string) []store.Item {
	t.Helper()
	page, err := st.Query(context.Background(), store.Query{PK: pk, SK: store.SortKeyCondition{Prefix: prefix}})
	if err != nil {
		t.Fatal(err)
	}
	return page.Items
}

func proposalRows(t *testing.T, env *Env, matter string) []store.Item {
	return rowsUnder(t, env.Store, records.MatterPK(seed.DemoTenant, matter), "PROP#")
}

func writeOutcomes(t *testing.T, env *Env, tool string) []string {
	t.Helper()
	var out []string
	for _, r := range auditRowsOf(t, env) {
		if r.Tool == tool {
			out = append(out, r.Outcome)
		}
	}
	slices.Sort(out)
	return out
}

// A paralegal's key files create_deadline on Alvarez: pending_approval with
// every field of the receipt, read back from the stored row; the same call
// again is the same receipt (ok:replay), one row; list_my_proposals shows
// it pending; nothing executes.
func writeProposeActionFilesOnceAndARepeatAnswersTheOriginalReceipt(t *testing.T, newEnv NewEnv) {
	env := newEnv(t, Options{})
	s := env.Initialize(t, Paralegal, "2025-11-25")
	args := ProposeArgs(seed.Alvarez, "dl-1", proposals.ActionCreateDeadline, DeadlineArgs())
	first := decisionOf(t, s.Tool(t, writetools.ToolProposeAction, args))
	id, _ := first["approval_id"].(string)
	wantID := proposals.ID(env.Creds[Paralegal].ID, seed.Alvarez, "dl-1")
	want := map[string]any{
		"status": "pending_approval", "executed": false, "approval_id": wantID, "action": "create_deadline",
		"case_id": seed.Alvarez, "deliverable_noun": "deadline", "supervision_floor": "routine",
		"confirm_required": false, "batch_eligible": true, "capped_at": "L1", "override_attempted": false,
		"stripped_fields": []any{}, "expires_at": Epoch.Add(proposals.Life).Format("2006-01-02T15:04:05.000Z"),
		"review_url": "/approvals", "next_step": writetools.NextStep,
	}
	got := map[string]any{}
	for k, v := range first {
		if k != "what_will_happen" {
			got[k] = v
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("receipt (-want +got):\n%s", diff)
	}
	if w, _ := first["what_will_happen"].(string); !strings.Contains(w, "“Expert disclosures”") || !strings.Contains(w, "2026-12-14") {
		t.Errorf("what_will_happen = %q, want the deadline rendered from the args", w)
	}
	again := decisionOf(t, s.Tool(t, writetools.ToolProposeAction, args))
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("the repeated call's receipt differs (-first +again):\n%s", diff)
	}
	if rows := proposalRows(t, env, seed.Alvarez); len(rows) != 1 || id == "" {
		t.Fatalf("%d proposal rows, want 1", len(rows))
	}
	if diff := cmp.Diff([]string{"ok", "ok:replay"}, writeOutcomes(t, env, writetools.ToolProposeAction)); diff != "" {
		t.Errorf("audit outcomes (-want +got):\n%s", diff)
	}
	mine := Structured(t, s.Tool(t, writetools.ToolListMyProposals, map[string]any{}))
	results, _ := mine["results"].([]any)
	if len(results) != 1 {
		t.Fatalf("list_my_proposals = %v, want the one proposal", mine)
	}
	item := results[0].(map[string]any)
	if item["approval_id"] != id || item["status"] != "pending" || item["decision"] != nil ||
		!slices.Contains(mine["provenance_ids"].([]any), any("urn:custody:demo:proposal:"+id)) {
		t.Errorf("list_my_proposals item = %v, want %s pending, undecided, cited by its row", item, id)
	}
	// Nothing executed: Alvarez has the deadlines it had.
	dls, err := records.NewRepo(env.Store).Deadlines(t.Context(), seed.DemoTenant, seed.Alvarez)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dls {
		if d.Title == "Expert disclosures" && d.Due == "2026-12-14" {
			t.Errorf("a proposal created the deadline %s", d.ID)
		}
	}
	// The stored row names the requester by reference, never by scopes.
	p, err := proposals.Decode(proposalRows(t, env, seed.Alvarez)[0])
	if err != nil {
		t.Fatal(err)
	}
	ref := p.RequestedBy
	if ref.Kind != "principal" || ref.Ref.Type != auth.RefAPIKey || ref.Ref.CredentialID != env.Creds[Paralegal].ID ||
		ref.Ref.Owner != seed.DemoParalegal || len(ref.Ref.Scopes) != 0 || p.Reason != "The scheduling order sets it." ||
		p.Target.Kind != proposals.TargetMatter || p.Target.Version < 1 {
		t.Errorf("stored requested_by %+v, reason %q, target %+v", ref, p.Reason, p.Target)
	}
}

// Planted override fields are stripped at any depth before validation,
// listed by path, and their values are in neither the rows nor the audit.
func writePlantedOverridesAreStrippedListedByPathAndStoredNowhere(t *testing.T, newEnv NewEnv) {
	env := newEnv(t, Options{})
	s := env.Initialize(t, Attorney, "2025-11-25")
	nonce := "cnf_0123456789abcdef0123456789abcdef"
	args := DeadlineArgs()
	args["confirm_token"] = "PLANTED-CONFIRM-VALUE"
	args["force"] = true
	args["options"] = map[string]any{"case_id": "PLANTED-MATTER-VALUE"}
	args["rule"] = nonce
	d := decisionOf(t, s.Tool(t, writetools.ToolProposeAction, ProposeArgs(seed.Alvarez, "planted", proposals.ActionCreateDeadline, args)))
	if d["status"] != "pending_approval" || d["override_attempted"] != true {
		t.Fatalf("decision = %v, want filed with override_attempted", d)
	}
	want := []any{"args.confirm_token", "args.force", "args.options.case_id", "args.rule"}
	if diff := cmp.Diff(want, d["stripped_fields"]); diff != "" {
		t.Errorf("stripped_fields (-want +got):\n%s", diff)
	}
	var stored bytes.Buffer
	for _, pk := range []string{records.MatterPK(seed.DemoTenant, seed.Alvarez),
		proposals.PointerPartition(seed.DemoTenant, env.Creds[Attorney].ID)} {
		for _, it := range rowsUnder(t, env.Store, pk, "") {
			b, _ := json.Marshal(it)
			stored.Write(b)
		}
	}
	for _, r := range auditRowsOf(t, env) {
		b, _ := json.Marshal(r)
		stored.Write(b)
	}
	for _, v := range []string{"PLANTED-CONFIRM-VALUE", "PLANTED-MATTER-VALUE", nonce} {
		if strings.Contains(stored.String(), v) {
			t.Errorf("the planted value %q is stored", v)
		}
	}
}

// A failed read-back answers UNAVAILABLE, saying a retry with the key is
// safe; the retry answers the original receipt, and there is one row.
func writeAFailedReadBackIsUnavailableAndTheRetryAnswersTheOriginalReceipt(t *testing.T, newEnv NewEnv) {
	env := newEnv(t, Options{})
	s := env.Initialize(t, Attorney, "2025-11-25")
	env.Faulty.Add(storetest.Rule{Method: storetest.MethodGet, Key: storetest.Prefix(records.MatterPK(seed.DemoTenant, seed.Alvarez), "PROP#"),
		Nth: 1, Err: store.ErrUnavailable})
	args := ProposeArgs(seed.Alvarez, "rb", proposals.ActionCreateDeadline, DeadlineArgs())
	d := decisionOf(t, s.Tool(t, writetools.ToolProposeAction, args))
	if classOf(d) != tools.ClassUnavailable {
		t.Fatalf("with the read-back failing: %v, want denied UNAVAILABLE", d)
	}
	if msg := d["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "same idempotency_key") {
		t.Errorf("the message %q does not say a retry with the key is safe", msg)
	}
	retry := decisionOf(t, s.Tool(t, writetools.ToolProposeAction, args))
	if retry["status"] != "pending_approval" || retry["approval_id"] != proposals.ID(env.Creds[Attorney].ID, seed.Alvarez, "rb") {
		t.Errorf("the retry = %v, want the original receipt", retry)
	}
	if n := len(proposalRows(t, env, seed.Alvarez)); n != 1 {
		t.Errorf("%d proposal rows, want 1", n)
	}
}

// The same key with other args is CONFLICT; the same key on another
// matter is another proposal.
func writeOneKeyNamesOneCallPerMatter(t *testing.T, newEnv NewEnv) {
	env := newEnv(t, Options{})
	s := env.Initialize(t, Attorney, "2025-11-25")
	first := decisionOf(t, s.Tool(t, writetools.ToolProposeAction, ProposeArgs(seed.Alvarez, "k", proposals.ActionCreateDeadline, DeadlineArgs())))
	other := DeadlineArgs()
	other["due_date"] = "2026-12-15"
	if d := decisionOf(t, s.Tool(t, writetools.ToolProposeAction, ProposeArgs(seed.Alvarez, "k", proposals.ActionCreateDeadline, other))); classOf(d) != tools.ClassConflict {
		t.Errorf("same key, other args = %v, want CONFLICT", d)
	}
	second := decisionOf(t, s.Tool(t, writetools.ToolProposeAction, ProposeArgs(seed.Meridian, "k", proposals.ActionCreateDeadline, DeadlineArgs())))
	if second["status"] != "pending_approval" || second["approval_id"] == first["approval_id"] {
		t.Errorf("same key, other matter = %v, want a second proposal", second)
	}
	if diff := cmp.Diff([]string{"CONFLICT", "ok", "ok"}, writeOutcomes(t, env, writetools.ToolProposeAction)); diff != "" {
		t.Errorf("audit outcomes (-want +got):\n%s", diff)
	}
}

// The 26th pending proposal of a matter is BACKPRESSURE; the counter
// holds 25.
func writeAMatterHoldsAtMostTwentyFivePendingProposals(t *testing.T, newEnv NewEnv) {
	env := newEnv(t, Options{Limits: ratelimit.Limits{ratelimit.LaneRead: 1000, ratelimit.LaneWrite: 1000}})
	s := env.Initialize(t, Attorney, "2025-11-25")
	for i := range proposals.MaxPending {
		if d := decisionOf(t, s.Tool(t, writetools.ToolProposeAction, ProposeArgs(seed.Alvarez, fmt.Sprint("bp-", i), proposals.ActionCreateDeadline, DeadlineArgs()))); d["status"] != "pending_approval" {
			t.Fatalf("proposal %d: %v", i, d)
		}
	}
	if d := decisionOf(t, s.Tool(t, writetools.ToolProposeAction, ProposeArgs(seed.Alvarez, "bp-26", proposals.ActionCreateDeadline, DeadlineArgs()))); classOf(d) != tools.ClassBackpressure {
		t.Errorf("the 26th = %v, want BACKPRESSURE", d)
	}
	it, err := env.Store.Get(t.Context(), proposals.CounterKey(seed.DemoTenant, seed.Alvarez))
	if err != nil || proposals.Pending(&it) != proposals.MaxPending {
		t.Errorf("counter = %d (%v), want %d", proposals.Pending(&it), err, proposals.MaxPending)
	}
	// A repeat of a filed call still answers its receipt: a replay is not
	// a new proposal.
	if d := decisionOf(t, s.Tool(t, writetools.ToolProposeAction, ProposeArgs(seed.Alvarez, "bp-0", proposals.ActionCreateDeadline, DeadlineArgs()))); d["status"] != "pending_approval" {
		t.Errorf("a replay at the cap = %v, want the original receipt", d)
	}
}

// The autonomy table (docs/decisions.md "Autonomy"), tool by tool: L0
// denies, L1 makes every write a proposal (add_case_note files an
// add_case_note proposal), L2 executes an internal write and files a
// proposal; an external action is a proposal even at L4.
func writeTheAutonomyTableToolByTool(t *testing.T, newEnv NewEnv) {
	env := newEnv(t, Options{Limits: ratelimit.Limits{ratelimit.LaneRead: 1000, ratelimit.LaneWrite: 1000}})
	s := env.Initialize(t, Attorney, "2025-11-25")
	n := 0
	note := func() map[string]any {
		n++
		return map[string]any{"case_id": seed.Alvarez, "body": "Called the client.", "idempotency_key": fmt.Sprint("note-", n)}
	}
	propose := func(action string, args map[string]any) map[string]any {
		n++
		return ProposeArgs(seed.Alvarez, fmt.Sprint("p-", n), action, args)
	}
	production := map[string]any{"document_ids": []any{"d_alv_complaint"}, "recipient": "Opposing counsel", "method": "email"}
	for _, c := range []struct {
		name, setting string
		level         autonomy.Level
		tool          string
		args          func() map[string]any
		status, class string
		action        string
	}{
		{"add_case_note at L0", "add_case_note", autonomy.L0, writetools.ToolAddCaseNote, note, "denied", tools.ClassAutonomyDenied, ""},
		{"add_case_note at L1", "add_case_note", autonomy.L1, writetools.ToolAddCaseNote, note, "pending_approval", "", "add_case_note"},
		{"add_case_note at L2", "add_case_note", autonomy.L2, writetools.ToolAddCaseNote, note, "executed", "", ""},
		{"propose_action at L0", "propose_action", autonomy.L0, writetools.ToolProposeAction, func() map[string]any { return propose("create_deadline", DeadlineArgs()) }, "denied", tools.ClassAutonomyDenied, ""},
		{"propose_action at L1", "propose_action", autonomy.L1, writetools.ToolProposeAction, func() map[string]any { return propose("create_deadline", DeadlineArgs()) }, "pending_approval", "", "create_deadline"},
		{"propose_action at L2", "propose_action", autonomy.L2, writetools.ToolProposeAction, func() map[string]any { return propose("create_deadline", DeadlineArgs()) }, "pending_approval", "", "create_deadline"},
		{"the tenant default at L0", "*", autonomy.L0, writetools.ToolAddCaseNote, note, "denied", tools.ClassAutonomyDenied, ""},
		{"an action of propose_action at L0", "create_deadline", autonomy.L0, writetools.ToolProposeAction, func() map[string]any { return propose("create_deadline", DeadlineArgs()) }, "denied", tools.ClassAutonomyDenied, ""},
		{"an external action at L4", "serve_production", autonomy.L4, writetools.ToolProposeAction, func() map[string]any { return propose("serve_production", production) }, "pending_approval", "", "serve_production"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := autonomy.Set(t.Context(), env.Store, seed.DemoTenant, c.setting, c.level, env.Clock.Now()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = autonomy.Clear(context.Background(), env.Store, seed.DemoTenant, c.setting) })
			d := decisionOf(t, s.Tool(t, c.tool, c.args()))
			if d["status"] != c.status || classOf(d) != c.class {
				t.Fatalf("decision = %v, want %s %s", d, c.status, c.class)
			}
			if c.action != "" && (d["action"] != c.action || d["capped_at"] != "L1") {
				t.Errorf("decision = %v, want a %s proposal capped at L1", d, c.action)
			}
		})
	}
}

// A client-safe credential never writes: a key cannot be minted with
// write, and one whose row says so anyway is refused CLIENT_SAFE_REFUSED.
func writeAClientSafeCredentialIsRefusedEveryWrite(t *testing.T, newEnv NewEnv) {
	env := newEnv(t, Options{})
	_, _, err := auth.Mint(t.Context(), env.Store, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney,
		Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite}, Class: auth.ClassClientSafe}, env.Clock.Now())
	if !errors.Is(err, auth.ErrClientSafeWrite) {
		t.Errorf("minting a client-safe key with write = %v, want ErrClientSafeWrite", err)
	}
	key, cred, err := auth.Mint(t.Context(), env.Store, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney,
		Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite}}, env.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The row is changed behind the minting rules' back.
	if _, err := env.Store.Update(t.Context(), auth.CredentialKey(cred.KeyHash), store.Update{Set: map[string]any{"class": string(auth.ClassClientSafe)}}); err != nil {
		t.Fatal(err)
	}
	env.Keys["forged"] = key
	s := env.Initialize(t, "forged", "2025-11-25")
	for tool, args := range map[string]map[string]any{
		writetools.ToolAddCaseNote:   {"case_id": seed.Alvarez, "body": "x", "idempotency_key": "k"},
		writetools.ToolProposeAction: ProposeArgs(seed.Alvarez, "k", proposals.ActionCreateDeadline, DeadlineArgs()),
	} {
		if d := decisionOf(t, s.Tool(t, tool, args)); classOf(d) != tools.ClassClientSafeRefused {
			t.Errorf("%s by a client-safe row holding write = %v, want CLIENT_SAFE_REFUSED", tool, d)
		}
	}
}

// Every action can be proposed, and proposing writes no record row: a
// decorator fails the test on any write to a deadline, fact, exhibit,
// ledger, outbox, document or note row.
func writeProposingAnyActionWritesNoRecordRow(t *testing.T, newEnv NewEnv) {
	env := newEnv(t, Options{Limits: ratelimit.Limits{ratelimit.LaneRead: 1000, ratelimit.LaneWrite: 1000}})
	var mu sync.Mutex
	var written []store.Key // record rows a write addressed
	recordRow := func(k store.Key) bool {
		for _, sk := range []string{"DL#", "FACT#", "EXH#", "LEDGER#", "LEDGERHEAD", "NOTE#", "DOC#", "DOCV#", "CHUNK#"} {
			if strings.HasPrefix(k.SK, sk) || strings.Contains(k.PK, "#OUTBOX") {
				mu.Lock()
				written = append(written, k)
				mu.Unlock()
				return true
			}
		}
		return false
	}
	for _, m := range []string{storetest.MethodPut, storetest.MethodUpdate, storetest.MethodDelete, storetest.MethodTransact} {
		env.Faulty.Add(storetest.Rule{Method: m, Key: recordRow, Err: store.ErrInvalid})
	}
	s := env.Initialize(t, Attorney, "2025-11-25")
	every := map[string]map[string]any{
		proposals.ActionCreateDeadline:    DeadlineArgs(),
		proposals.ActionAddExhibit:        {"document_id": "d_alv_complaint", "label": "PX-1", "description": "The complaint."},
		proposals.ActionAddCaseNote:       {"body": "Client called.", "document_id": "d_alv_answer"},
		proposals.ActionSetFactPosture:    {"fact_id": "f_alv_001", "posture": "disputed", "note": "The answer denies it."},
		proposals.ActionRecordFactCheck:   {"fact_id": "f_alv_001", "result": "confirmed", "method": "Compared with the offer letter.", "authority_citation": "Offer letter p. 1"},
		proposals.ActionServeProduction:   {"document_ids": []any{"d_alv_complaint", "d_alv_answer"}, "recipient": "Opposing counsel", "method": "electronic_service"},
		proposals.ActionSetLitigationHold: {"custodians": []any{"HR director", "Payroll"}, "scope": "Personnel file and payroll records."},
	}
	if len(every) != len(proposals.Default().Names()) {
		t.Fatalf("the table covers %d actions, the registry has %d", len(every), len(proposals.Default().Names()))
	}
	for action, args := range every {
		d := decisionOf(t, s.Tool(t, writetools.ToolProposeAction, ProposeArgs(seed.Alvarez, "every-"+action, action, args)))
		if d["status"] != "pending_approval" || d["action"] != action {
			t.Errorf("%s: %v, want filed", action, d)
		}
		a, _ := proposals.Default().Action(action)
		if d["confirm_required"] != a.Confirm || d["supervision_floor"] != string(a.SupervisionFloor) ||
			d["batch_eligible"] != (a.Internal() && a.SupervisionFloor == proposals.FloorRoutine && !a.Confirm && !a.Conflict) {
			t.Errorf("%s: %v does not carry the registry's floor, confirm and eligibility", action, d)
		}
	}
	mu.Lock()
	if len(written) != 0 {
		t.Errorf("proposing wrote the record rows %v", written)
	}
	mu.Unlock()
	// The basis is kept on the proposal.
	for _, it := range proposalRows(t, env, seed.Alvarez) {
		p, _ := proposals.Decode(it)
		want := map[string]*proposals.Basis{
			proposals.ActionSetFactPosture:  {Kind: proposals.BasisNote, Note: "The answer denies it."},
			proposals.ActionRecordFactCheck: {Kind: proposals.BasisAuthorityCitation, AuthorityCitation: "Offer letter p. 1", Method: "Compared with the offer letter."},
		}[p.Action]
		if diff := cmp.Diff(want, p.Basis); diff != "" {
			t.Errorf("%s basis (-want +got):\n%s", p.Action, diff)
		}
	}
	// The decorator sees record writes: the note a write tool executes is
	// one (refused by the decorator's rule, so the call answers 503 and
	// nothing is written).
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": map[string]any{
		"name": writetools.ToolAddCaseNote, "arguments": map[string]any{"case_id": seed.Alvarez, "body": "control", "idempotency_key": "control"}}})
	if r := s.Post(t, body); r.Status != http.StatusServiceUnavailable {
		t.Errorf("the control note: HTTP %d, want 503 (its write refused by the decorator)", r.Status)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(written) == 0 {
		t.Error("the decorator saw no write of the executed note: it could not have caught a proposal's")
	}
}

// A target or cited row must be in the matter: NOT_FOUND otherwise, and an
// args violation names args.<path>.
func writeTheTargetMustBeInTheMatterAndArgsAreValidatedByPath(t *testing.T, newEnv NewEnv) {
	env := newEnv(t, Options{})
	s := env.Initialize(t, Attorney, "2025-11-25")
	for _, c := range []struct {
		name, action string
		args         map[string]any
		class, field string
	}{
		{"a fact of another matter", proposals.ActionSetFactPosture, map[string]any{"fact_id": "f_mer_001", "posture": "disputed", "note": "n"}, tools.ClassNotFound, ""},
		{"a document that does not exist", proposals.ActionAddExhibit, map[string]any{"document_id": "d_alv_nothing", "label": "PX-2"}, tools.ClassNotFound, ""},
		{"a cited document of another matter", proposals.ActionServeProduction, map[string]any{"document_ids": []any{"d_mer_complaint"}, "recipient": "r", "method": "mail"}, tools.ClassNotFound, ""},
		{"a bad date", proposals.ActionCreateDeadline, map[string]any{"title": "t", "due_date": "14/12/2026", "kind": "expert"}, tools.ClassValidation, "args.due_date"},
		{"a missing basis", proposals.ActionSetFactPosture, map[string]any{"fact_id": "f_alv_001", "posture": "disputed"}, tools.ClassValidation, "args.note"},
		{"an unknown field", proposals.ActionCreateDeadline, map[string]any{"title": "t", "due_date": "2026-12-14", "kind": "expert", "colour": "red"}, tools.ClassValidation, "args.colour"},
		{"an unknown action", "delete_everything", map[string]any{}, tools.ClassValidation, "action"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := decisionOf(t, s.Tool(t, writetools.ToolProposeAction, ProposeArgs(seed.Alvarez, c.name, c.action, c.args)))
			e, _ := d["error"].(map[string]any)
			if classOf(d) != c.class || (c.field != "" && e["field"] != c.field) {
				t.Errorf("decision = %v, want %s on %q", d, c.class, c.field)
			}
		})
	}
	if n := len(proposalRows(t, env, seed.Alvarez)); n != 0 {
		t.Errorf("%d proposals filed by refused calls", n)
	}
}

// add_case_note: one note for one key and one content, however often it
// is called; the repeat is the original receipt with replayed: true;
// another body under the key is CONFLICT; a cited document must be in the
// matter; the note is work product, by the key's owner, via the key.
func writeANoteWrittenTwiceWithOneKeyIsOneNote(t *testing.T, newEnv NewEnv) {
	env := newEnv(t, Options{})
	s := env.Initialize(t, Paralegal, "2025-11-25")
	args := map[string]any{"case_id": seed.Alvarez, "body": "Client confirmed the termination date.", "idempotency_key": "n1", "document_id": "d_alv_termination"}
	first := decisionOf(t, s.Tool(t, writetools.ToolAddCaseNote, args))
	again := decisionOf(t, s.Tool(t, writetools.ToolAddCaseNote, args))
	r1, _ := first["data"].(map[string]any)
	r2, _ := again["data"].(map[string]any)
	if first["status"] != "executed" || r1["replayed"] != false || r2["replayed"] != true {
		t.Fatalf("first %v, again %v; want executed, then the replay", first, again)
	}
	delete(r2, "replayed")
	delete(r1, "replayed")
	if diff := cmp.Diff(r1, r2); diff != "" {
		t.Errorf("the replay's receipt differs (-first +replay):\n%s", diff)
	}
	other := map[string]any{"case_id": seed.Alvarez, "body": "Something else.", "idempotency_key": "n1"}
	if d := decisionOf(t, s.Tool(t, writetools.ToolAddCaseNote, other)); classOf(d) != tools.ClassConflict {
		t.Errorf("same key, other body = %v, want CONFLICT", d)
	}
	absent := map[string]any{"case_id": seed.Alvarez, "body": "x", "idempotency_key": "n2", "document_id": "d_mer_complaint"}
	if d := decisionOf(t, s.Tool(t, writetools.ToolAddCaseNote, absent)); classOf(d) != tools.ClassNotFound {
		t.Errorf("citing another matter's document = %v, want NOT_FOUND", d)
	}
	notes := Structured(t, s.Tool(t, "list_case_notes", map[string]any{"case_id": seed.Alvarez, "limit": 100}))
	count := 0
	for _, n := range notes["results"].([]any) {
		if n.(map[string]any)["body"] == args["body"] {
			count++
			if n.(map[string]any)["privilege"] != "work_product" || n.(map[string]any)["author"] != seed.DemoParalegal {
				t.Errorf("the note = %v, want work product by %s", n, seed.DemoParalegal)
			}
		}
	}
	if count != 1 {
		t.Errorf("list_case_notes shows the note %d times, want once", count)
	}
	stored, err := records.NewRepo(env.Store).Notes(t.Context(), seed.DemoTenant, seed.Alvarez)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range stored {
		if n.ID == r1["note_id"] && n.ViaCredential != env.Creds[Paralegal].ID {
			t.Errorf("via_credential = %q, want the key's credential id", n.ViaCredential)
		}
	}
	if diff := cmp.Diff([]string{"CONFLICT", "NOT_FOUND", "ok", "ok:replay"}, writeOutcomes(t, env, writetools.ToolAddCaseNote)); diff != "" {
		t.Errorf("audit outcomes (-want +got):\n%s", diff)
	}
}

// An action whose impact is unavailable (a test registry's) is filed and
// never batch-eligible: the invocation core run outside HTTP with its own
// registry.
func writeAnActionWithoutImpactIsFiledAndNeverBatchEligible(t *testing.T, newEnv NewEnv) {
	env := newEnv(t, Options{})
	type unrated struct {
		Title string `json:"title"`
	}
	actions, err := proposals.NewRegistry(proposals.Define(proposals.Spec[unrated]{
		Name: "unrated", DeliverableNoun: "thing", SupervisionFloor: proposals.FloorRoutine,
		Target:         func(*unrated) proposals.Ref { return proposals.Ref{Kind: proposals.TargetMatter} },
		WhatWillHappen: func(u *unrated, m records.Matter) string { return "Do " + u.Title },
	}))
	if err != nil {
		t.Fatal(err)
	}
	core := env.Server.Core
	reg := tools.NewRegistry(tools.Options{Funnel: core.Funnel, Store: env.Faulty})
	if err := writetools.Register(reg, writetools.Options{Store: env.Faulty, Repo: core.Repo, Actions: actions}); err != nil {
		t.Fatal(err)
	}
	cred := env.Creds[Attorney]
	adm, err := core.Gate.Readmit(t.Context(), cred.Reference(), env.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(ProposeArgs(seed.Alvarez, "u1", "unrated", map[string]any{"title": "it"}))
	out, err := reg.Run(t.Context(), core.Gate, adm, tools.Invocation{Name: writetools.ToolProposeAction, Arguments: raw,
		Credential: adm.Credential, Revision: mcp.Rev20251125, Rate: adm.Rate, Now: env.Clock.Now(), Arrived: time.Now(),
		Audit: &audit.Record{RequestID: "unrated", At: env.Clock.Now(), Tenant: cred.Tenant, Principal: cred.Owner, CredentialID: cred.ID, Method: "tools/call"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	b, _ := json.Marshal(out.Result.StructuredContent)
	_ = json.Unmarshal(b, &d)
	if d["status"] != "pending_approval" || d["batch_eligible"] != false {
		t.Errorf("decision = %v, want filed and not batch-eligible", d)
	}
	p, err := proposals.Decode(proposalRows(t, env, seed.Alvarez)[0])
	if err != nil || p.Impact != nil || p.BatchEligible {
		t.Errorf("stored impact %v, batch eligible %v (%v); want none recorded and false", p.Impact, p.BatchEligible, err)
	}
	// A registry without an add_case_note action still writes notes.
	raw, _ = json.Marshal(map[string]any{"case_id": seed.Alvarez, "body": "Still a note.", "idempotency_key": "n"})
	out, err = reg.Run(t.Context(), core.Gate, adm, tools.Invocation{Name: writetools.ToolAddCaseNote, Arguments: raw,
		Credential: adm.Credential, Revision: mcp.Rev20251125, Rate: adm.Rate, Now: env.Clock.Now(), Arrived: time.Now(),
		Audit: &audit.Record{RequestID: "note", At: env.Clock.Now(), Tenant: cred.Tenant, Principal: cred.Owner, CredentialID: cred.ID, Method: "tools/call"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(out.Result.StructuredContent)
	if d = nil; json.Unmarshal(b, &d) != nil || d["status"] != "executed" {
		t.Errorf("add_case_note with that registry = %s, want executed", b)
	}
}

// The decision's three shapes validate against both write tools'
// outputSchemas, and no refusal quotes the value it refuses.
func writeTheDecisionShapesValidateAndNoMessageQuotesAValue(t *testing.T, newEnv NewEnv) {
	env := newEnv(t, Options{})
	s := env.Initialize(t, Attorney, "2025-11-25")
	executed := s.Tool(t, writetools.ToolAddCaseNote, map[string]any{"case_id": seed.Alvarez, "body": "ok", "idempotency_key": "shape"})
	pending := s.Tool(t, writetools.ToolProposeAction, ProposeArgs(seed.Alvarez, "shape", proposals.ActionCreateDeadline, DeadlineArgs()))
	const secret = "SECRET-VALUE-7f3a"
	refusals := map[string]map[string]any{
		"a bad date":         ProposeArgs(seed.Alvarez, "r1", proposals.ActionCreateDeadline, map[string]any{"title": "t", "due_date": secret, "kind": "expert"}),
		"a bad kind":         ProposeArgs(seed.Alvarez, "r2", proposals.ActionCreateDeadline, map[string]any{"title": "t", "due_date": "2026-12-14", "kind": secret}),
		"a bad label":        ProposeArgs(seed.Alvarez, "r3", proposals.ActionAddExhibit, map[string]any{"document_id": "d_alv_answer", "label": secret + " !"}),
		"an absent document": ProposeArgs(seed.Alvarez, "r4", proposals.ActionAddExhibit, map[string]any{"document_id": secret, "label": "PX-9"}),
		"an absent matter":   ProposeArgs(secret, "r5", proposals.ActionCreateDeadline, DeadlineArgs()),
		"a bad key":          ProposeArgs(seed.Alvarez, secret+"\u0001", proposals.ActionCreateDeadline, DeadlineArgs()),
		"a too-long reason": func() map[string]any {
			a := ProposeArgs(seed.Alvarez, "r6", proposals.ActionCreateDeadline, DeadlineArgs())
			a["reason"] = strings.Repeat(secret, 200)
			return a
		}(),
		"an unknown args field": ProposeArgs(seed.Alvarez, "r7", proposals.ActionCreateDeadline, map[string]any{"title": "t", "due_date": "2026-12-14", "kind": "expert", "x": secret}),
	}
	var denied []map[string]any
	for name, args := range refusals {
		res := s.Tool(t, writetools.ToolProposeAction, args)
		if res["isError"] != true {
			t.Errorf("%s: not refused: %v", name, res)
			continue
		}
		if b, _ := json.Marshal(res); strings.Contains(string(b), secret) {
			t.Errorf("%s: the answer quotes the value: %s", name, b)
		}
		denied = append(denied, res)
	}
	noteDenied := s.Tool(t, writetools.ToolAddCaseNote, map[string]any{"case_id": seed.Alvarez, "body": strings.Repeat(secret, 2000), "idempotency_key": "long"})
	if b, _ := json.Marshal(noteDenied); noteDenied["isError"] != true || strings.Contains(string(b), secret) {
		t.Errorf("an over-long body: %s, want refused without quoting it", b)
	}
	denied = append(denied, noteDenied)
	listed := map[string]json.RawMessage{}
	for _, tl := range listAllTools(t, s) {
		m := tl.(map[string]any)
		if name := m["name"].(string); name == writetools.ToolAddCaseNote || name == writetools.ToolProposeAction {
			b, _ := json.Marshal(m["outputSchema"])
			listed[name] = b
			if exec, ok := m["execution"].(map[string]any); ok && exec["taskSupport"] != "forbidden" {
				t.Errorf("%s declares taskSupport %v, want forbidden (or absent, which is forbidden)", name, exec["taskSupport"])
			}
		}
	}
	if len(listed) != 2 {
		t.Fatalf("tools/list has %d of the two write tools", len(listed))
	}
	for name, schema := range listed {
		v := compileSchema(t, schema)
		for i, res := range append([]map[string]any{executed, pending}, denied...) {
			if err := v.Validate(jsonValue(t, Structured(t, res))); err != nil {
				t.Errorf("%s's outputSchema refuses answer %d (%v): %v", name, i, Structured(t, res)["status"], err)
			}
		}
	}
}

// list_my_proposals lists the calling credential's proposals only; a
// proposal on a matter its owner no longer reaches is left out with a
// note; a pending proposal past its expiry reads as expired before the
// sweeper runs, and the sweeper then ends it (counter −1, inbox row gone).
func writeListMyProposalsShowsOnlyThisCredentialsProposalsAsTheyStand(t *testing.T, newEnv NewEnv) {
	env := newEnv(t, Options{})
	para := env.Initialize(t, Paralegal, "2025-11-25")
	for _, m := range []string{seed.Alvarez, seed.Meridian} {
		if d := decisionOf(t, para.Tool(t, writetools.ToolProposeAction, ProposeArgs(m, "mine", proposals.ActionCreateDeadline, DeadlineArgs()))); d["status"] != "pending_approval" {
			t.Fatalf("propose on %s: %v", m, d)
		}
	}
	other := env.Initialize(t, Attorney, "2025-11-25")
	if res := Structured(t, other.Tool(t, writetools.ToolListMyProposals, map[string]any{})); len(res["results"].([]any)) != 0 {
		t.Errorf("another credential lists %v", res["results"])
	}
	if _, err := admin.Screen(t.Context(), env.Store, admin.ScreenRequest{Tenant: seed.DemoTenant, CaseID: seed.Meridian,
		Principal: seed.DemoParalegal, Screened: true}, env.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	res := Structured(t, para.Tool(t, writetools.ToolListMyProposals, map[string]any{}))
	items := res["results"].([]any)
	notes, _ := json.Marshal(res["verification"])
	if len(items) != 1 || items[0].(map[string]any)["case_id"] != seed.Alvarez || !strings.Contains(string(notes), "no longer reaches") {
		t.Errorf("after a screen: %v, notes %s; want only Alvarez's and a note", items, notes)
	}
	// Past its expiry, unswept: expired to the reader.
	env.Clock.Advance(proposals.Life + time.Minute)
	para = env.Initialize(t, Paralegal, "2025-11-25")
	res = Structured(t, para.Tool(t, writetools.ToolListMyProposals, map[string]any{"status": "expired"}))
	items = res["results"].([]any)
	if len(items) != 1 {
		t.Fatalf("expired proposals = %v, want the Alvarez one", items)
	}
	if dec, _ := items[0].(map[string]any)["decision"].(map[string]any); dec["code"] != "PROPOSAL_EXPIRED" {
		t.Errorf("decision = %v, want code PROPOSAL_EXPIRED", dec)
	}
	rep, err := proposals.NewExpiry(env.Store, 0).Sweep(t.Context(), env.Clock.Now())
	if err != nil || rep.Actions[proposals.ReportExpired] != 2 {
		t.Errorf("sweep = %+v, %v; want both expired", rep.Actions, err)
	}
	it, err := env.Store.Get(t.Context(), proposals.CounterKey(seed.DemoTenant, seed.Alvarez))
	if err != nil || proposals.Pending(&it) != 0 {
		t.Errorf("counter after expiry = %d (%v), want 0", proposals.Pending(&it), err)
	}
	if inbox := rowsUnder(t, env.Store, records.MatterPK(seed.DemoTenant, seed.Alvarez), proposals.InboxPrefix); len(inbox) != 0 {
		t.Errorf("%d inbox rows after expiry, want 0", len(inbox))
	}
}

// Write tools are refused inside a JSON-RPC batch.
func writeWriteToolsAreRefusedInABatch(t *testing.T, newEnv NewEnv) {
	env := newEnv(t, Options{})
	b := env.Initialize(t, Attorney, "2025-03-26")
	args, _ := json.Marshal(map[string]any{"name": writetools.ToolAddCaseNote, "arguments": map[string]any{"case_id": seed.Alvarez, "body": "x", "idempotency_key": "b"}})
	r := b.Post(t, []byte(`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+string(args)+`}]`))
	var out []map[string]any
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &out) != nil || len(out) != 1 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	res := out[0]["result"].(map[string]any)
	var sc map[string]any
	blocks := res["content"].([]any)
	_ = json.Unmarshal([]byte(blocks[len(blocks)-1].(map[string]any)["text"].(string)), &sc)
	if res["isError"] != true || classOf(sc) != tools.ClassValidation {
		t.Errorf("add_case_note in a batch = %v, want denied VALIDATION", res)
	}
}

// list_actions shows each enabled action with its schema; a disabled one
// is absent and proposing it is KILL_SWITCH.
func writeListActionsShowsTheEnabledActionsAndADisabledOneCannotBeProposed(t *testing.T, newEnv NewEnv) {
	env := newEnv(t, Options{})
	s := env.Initialize(t, Attorney, "2025-11-25")
	names := func() []string {
		var out []string
		for _, a := range Structured(t, s.Tool(t, writetools.ToolListActions, map[string]any{}))["actions"].([]any) {
			m := a.(map[string]any)
			if _, ok := m["args_schema"].(map[string]any)["properties"]; !ok {
				t.Errorf("%s has no args schema", m["name"])
			}
			out = append(out, m["name"].(string))
		}
		return out
	}
	if diff := cmp.Diff(proposals.Default().Names(), names()); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if err := proposals.SetConfig(t.Context(), env.Store, proposals.Default(), seed.DemoTenant,
		proposals.Config{Action: proposals.ActionAddExhibit, Disabled: true}, env.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names(), proposals.ActionAddExhibit) {
		t.Error("a disabled action is listed")
	}
	d := decisionOf(t, s.Tool(t, writetools.ToolProposeAction, ProposeArgs(seed.Alvarez, "x", proposals.ActionAddExhibit,
		map[string]any{"document_id": "d_alv_answer", "label": "PX-3"})))
	if classOf(d) != tools.ClassKillSwitch {
		t.Errorf("proposing a disabled action = %v, want KILL_SWITCH", d)
	}
}

// compileSchema compiles a JSON schema document for validation.
func compileSchema(t *testing.T, raw json.RawMessage) *validator.Schema {
	t.Helper()
	doc, err := validator.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := validator.NewCompiler()
	if err := c.AddResource("urn:write-suite", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("urn:write-suite")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// jsonValue is v as the validator decodes JSON.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, _ := json.Marshal(v)
	out, err := validator.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// listAllTools pages tools/list to the end.
func listAllTools(t *testing.T, s *Session) []any {
	t.Helper()
	var all []any
	params := map[string]any{}
	for range 100 {
		res := s.Call(t, "tools/list", params)["result"].(map[string]any)
		all = append(all, res["tools"].([]any)...)
		next, ok := res["nextCursor"].(string)
		if !ok {
			return all
		}
		params = map[string]any{"cursor": next}
	}
	t.Fatal("tools/list never ended")
	return nil
}
