package handoff_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/handoff"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/store"
)

func TestIDsAndLinks(t *testing.T) {
	id := handoff.NewID()
	if !handoff.ValidID(id) || handoff.NewID() == id {
		t.Fatalf("NewID() = %q: not valid or not fresh", id)
	}
	for _, bad := range []string{"", "eli_", "eli_" + strings.Repeat("A", 32), "eli_" + strings.Repeat("a", 31), "prp_" + strings.Repeat("a", 32), id + "/x"} {
		if handoff.ValidID(bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
	if got := handoff.URL("https://custody.example/prod/", id); got != "https://custody.example/prod/approvals/h/"+id {
		t.Errorf("URL = %q", got)
	}
	if k := handoff.Key(id); !strings.HasPrefix(k.PK, "HANDOFF#") || len(k.PK) != len("HANDOFF#")+64 || strings.Contains(k.PK, id) {
		t.Errorf("Key = %v, want HANDOFF#<sha256 hex> naming no id", k)
	}
}

func TestOpenableBy(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	b := handoff.Binding{Tenant: "demo", Owner: "p_a", State: handoff.StateSent, ExpiresAt: now.Add(time.Hour)}
	for _, c := range []struct {
		name              string
		tenant, principal string
		state             handoff.State
		at                time.Time
		want              bool
	}{
		{"owner, sent", "demo", "p_a", handoff.StateSent, now, true},
		{"owner, accepted", "demo", "p_a", handoff.StateAccepted, now, true},
		{"owner, completed", "demo", "p_a", handoff.StateCompleted, now, true},
		{"owner, declined", "demo", "p_a", handoff.StateDeclined, now, false},
		{"owner, cancelled", "demo", "p_a", handoff.StateCancelled, now, false},
		{"owner, expired", "demo", "p_a", handoff.StateSent, now.Add(time.Hour), false},
		{"another principal", "demo", "p_b", handoff.StateSent, now, false},
		{"another tenant", "other", "p_a", handoff.StateSent, now, false},
	} {
		bb := b
		bb.State = c.state
		if got := bb.OpenableBy(c.tenant, c.principal, c.at); got != c.want {
			t.Errorf("%s: OpenableBy = %v, want %v", c.name, got, c.want)
		}
	}
	var none *handoff.Binding
	if none.OpenableBy("demo", "p_a", now) {
		t.Error("a missing binding opens")
	}
}

func TestAnswerOps(t *testing.T) {
	parked := store.Item{Attrs: map[string]any{handoff.ParkedAttr: handoff.Key(handoff.NewID()).PK}}
	for action, want := range map[string]string{"accept": "accepted", "decline": "declined", "cancel": "cancelled"} {
		ops := handoff.AnswerOps(parked, json.RawMessage(`{"action":"`+action+`"}`), false)
		if len(ops) != 1 || ops[0].Update.Set["state"] != want || len(ops[0].Conditions) != 1 {
			t.Errorf("%s: %+v, want one conditional move to %s", action, ops, want)
		}
	}
	if ops := handoff.AnswerOps(parked, nil, true); ops != nil {
		t.Errorf("an error answer moves %+v", ops)
	}
	if ops := handoff.AnswerOps(store.Item{Attrs: map[string]any{}}, json.RawMessage(`{"action":"accept"}`), false); ops != nil {
		t.Errorf("another question's answer moves %+v", ops)
	}
}

func TestCompletionOnlyFromSentOrAccepted(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	id := handoff.NewID()
	p := &proposals.Proposal{ID: "prp_1", Tenant: "demo", Handoff: &proposals.HandoffRef{ID: id, Session: "s1"}}
	posted := 0
	c := &handoff.Completion{Outbox: func(sid string, _ time.Time, method string, _ any, _ time.Time) (store.Op, error) {
		posted++
		if sid != "s1" || method != handoff.CompleteMethod {
			t.Errorf("posted %s to %s", method, sid)
		}
		return store.PutOp(store.Item{PK: "SESS#s1", SK: "OUT#x"}), nil
	}}
	row := func(state handoff.State) *store.Item {
		it := (&handoff.Binding{ID: id, Tenant: "demo", Owner: "p_a", ApprovalID: "prp_1", SessionID: "s1", ExpiresAt: now.Add(time.Hour)}).Item()
		it.Attrs["state"] = string(state)
		return &it
	}
	sess := &store.Item{ExpiresAt: now.Add(time.Hour).Unix()}
	for state, want := range map[handoff.State]int{handoff.StateSent: 2, handoff.StateAccepted: 2, handoff.StateDeclined: 0, handoff.StateCancelled: 0, handoff.StateCompleted: 0} {
		ops, err := c.Ops(p, proposals.StatusApproved, []*store.Item{row(state), sess}, now)
		if err != nil || len(ops) != want {
			t.Errorf("from %s: %d ops (%v), want %d", state, len(ops), err, want)
		}
	}
	if ops, _ := c.Ops(p, proposals.StatusApproved, []*store.Item{row(handoff.StateSent), nil}, now); len(ops) != 1 {
		t.Errorf("an ended session: %d ops, want the binding's move alone", len(ops))
	}
	if ops, _ := c.Ops(p, proposals.StatusPending, []*store.Item{row(handoff.StateSent), sess}, now); len(ops) != 0 {
		t.Errorf("not yet terminal: %d ops", len(ops))
	}
	other := *p
	other.ID = "prp_2"
	if ops, _ := c.Ops(&other, proposals.StatusApproved, []*store.Item{row(handoff.StateSent), sess}, now); len(ops) != 0 {
		t.Errorf("another proposal's binding: %d ops", len(ops))
	}
}
