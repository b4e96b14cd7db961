package proposals_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/filestore"
	"github.com/custodymcp/custody/shared/sweep"
)

// The registry test of docs/decisions.md "Pipeline choices": no action may
// declare a reserved args key, at any depth of its input type.
func TestNoActionDeclaresAReservedKey(t *testing.T) {
	if _, err := proposals.NewRegistry(proposals.Actions()...); err != nil {
		t.Fatalf("the built-in actions: %v", err)
	}
	for _, a := range proposals.Actions() {
		walkFields(t, a.Input(), a.Name, func(path, name string) {
			if proposals.Reserved(name) {
				t.Errorf("action %s declares the reserved key %s", a.Name, path)
			}
		})
	}
	type options struct {
		CaseID string `json:"Case-Id"`
	}
	type planted struct {
		Title   string  `json:"title"`
		Options options `json:"options"`
	}
	bad := proposals.Define(proposals.Spec[planted]{Name: "bad", DeliverableNoun: "x", SupervisionFloor: proposals.FloorRoutine,
		Target:         func(*planted) proposals.Ref { return proposals.Ref{Kind: proposals.TargetMatter} },
		WhatWillHappen: func(*planted, records.Matter) string { return "" }})
	if _, err := proposals.NewRegistry(bad); !errors.Is(err, proposals.ErrReservedKey) {
		t.Errorf("NewRegistry of an action with a nested reserved key = %v, want ErrReservedKey", err)
	}
}

func walkFields(t *testing.T, typ reflect.Type, at string, visit func(path, name string)) {
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct {
		return
	}
	for _, f := range reflect.VisibleFields(typ) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		visit(at+"."+name, name)
		walkFields(t, f.Type, at+"."+name, visit)
	}
}

func TestReservedKeysAreComparedLowerCasedWithDashesFolded(t *testing.T) {
	for key, want := range map[string]bool{
		"force": true, "FORCE": true, "Force": true, "case_id": true, "Case-ID": true, "tenant-id": true,
		"_meta": true, "-meta": true, "confirm": true, "confirm_token": true, "Confirmation": true,
		"skip_review": true, "Skip-Approval": true, "auto_approve": true, "auto-approve-all": true,
		"matter": true, "matter_id": true, "MatterID": true, "approval_id": true, "approved": true,
		"nonce": true, "override": true, "overrides": true, "bypass": true, "autonomy": true,
		"cnf_0123456789abcdef0123456789ABCDEF": true,
		"title":                                false, "due_date": false, "case": false, "tenancy": false, "skip": false, "forced": false,
		"document_id": false, "note": false, "approve": false,
	} {
		if got := proposals.Reserved(key); got != want {
			t.Errorf("Reserved(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestStripRemovesReservedKeysAndNonceShapedValuesAtAnyDepthAndListsOnlyPaths(t *testing.T) {
	nonce := "cnf_00112233445566778899aabbccddeeff"
	args := map[string]any{
		"title":         "Expert disclosures",
		"confirm_token": "yes-please",
		"force":         true,
		"options":       map[string]any{"case_id": "m_other"},
		"nested":        map[string]any{"keep": 1, "Tenant": "other", "deep": map[string]any{"Skip-Review": true}},
		"list":          []any{"a", nonce, map[string]any{"override": 1, "x": 2}},
		"rule":          nonce,
	}
	clean, paths := proposals.Strip(args)
	wantClean := map[string]any{
		"title":  "Expert disclosures",
		"nested": map[string]any{"keep": 1},
		"list":   []any{"a", map[string]any{"x": 2}},
	}
	if diff := cmp.Diff(wantClean, clean); diff != "" {
		t.Errorf("clean args (-want +got):\n%s", diff)
	}
	wantPaths := []string{"args.confirm_token", "args.force", "args.list.1", "args.list.2.override",
		"args.nested.Tenant", "args.nested.deep.Skip-Review", "args.options.case_id", "args.rule"}
	if diff := cmp.Diff(wantPaths, paths); diff != "" {
		t.Errorf("stripped paths (-want +got):\n%s", diff)
	}
	b, _ := json.Marshal(paths)
	for _, v := range []string{"yes-please", "m_other", nonce} {
		if strings.Contains(string(b), v) {
			t.Errorf("the stripped paths quote the value %q", v)
		}
	}
	if _, ok := args["force"]; !ok {
		t.Error("Strip modified its input")
	}
}

func openStore(t *testing.T, now func() time.Time) store.Store {
	t.Helper()
	fs, err := filestore.Open(filepath.Join(t.TempDir(), "custody.db"), filestore.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	return fs
}

func TestAFirmMayDisableAnActionOrRaiseItsFloorButNeverLowerIt(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := openStore(t, func() time.Time { return now })
	reg := proposals.Default()
	ctx := context.Background()
	cases := []struct {
		name    string
		cfg     proposals.Config
		wantErr error
		want    proposals.Effective
	}{
		{"raise a routine action to always-confirm", proposals.Config{Action: proposals.ActionCreateDeadline, Floor: proposals.FloorAlwaysConfirm}, nil,
			proposals.Effective{Enabled: true, Floor: proposals.FloorAlwaysConfirm}},
		{"disable an action", proposals.Config{Action: proposals.ActionAddExhibit, Disabled: true}, nil,
			proposals.Effective{Enabled: false, Floor: proposals.FloorRoutine}},
		{"lower an independent action to routine", proposals.Config{Action: proposals.ActionServeProduction, Floor: proposals.FloorRoutine},
			proposals.ErrFloorLowered, proposals.Effective{Enabled: true, Floor: proposals.FloorIndependent}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := proposals.SetConfig(ctx, st, reg, "demo", c.cfg, now)
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("SetConfig = %v, want %v", err, c.wantErr)
			}
			it, err := st.Get(ctx, proposals.ConfigKey("demo", c.cfg.Action))
			var row *store.Item
			if err == nil {
				row = &it
			}
			a, _ := reg.Action(c.cfg.Action)
			if got := a.Effective(proposals.DecodeConfig(row)); got != c.want {
				t.Errorf("effective = %+v, want %+v", got, c.want)
			}
		})
	}
	// A configuration row that cannot be read fails closed: disabled.
	if got := proposals.DecodeConfig(&store.Item{Attrs: map[string]any{proposals.AttrData: []byte("{")}}); !got.Disabled {
		t.Errorf("an unreadable configuration = %+v, want disabled", got)
	}
}

// file files a create_deadline proposal at now through FileOps, as the
// write tool's transaction would.
func file(t *testing.T, st store.Store, id string, now time.Time) *proposals.Proposal {
	t.Helper()
	p := &proposals.Proposal{ID: id, Tenant: "demo", CaseID: "m_alvarez", Action: proposals.ActionCreateDeadline,
		Args: json.RawMessage(`{}`), ArgsDigest: "d", WhatWillHappen: "w", DeliverableNoun: "deadline",
		SupervisionFloor: proposals.FloorRoutine, StrippedFields: []string{},
		RequestedBy: proposals.RequestedBy{Kind: "principal", Ref: auth.Reference{Type: auth.RefAPIKey, Tenant: "demo", CredentialID: "cred_x", Owner: "p_x"}},
		CreatedAt:   now, ExpiresAt: now.Add(proposals.Life), Status: proposals.StatusPending}
	ops, err := p.FileOps()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Transact(context.Background(), ops); err != nil {
		t.Fatal(err)
	}
	return p
}

// Expiry: a pending proposal past its expiry becomes expired in one
// conditional transaction (inbox row gone, pointer updated, counter −1),
// once; one not yet due and one decided meanwhile are left alone.
func TestTheExpiryDutyEndsPendingProposalsPastTheirExpiryOnce(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := start
	st := openStore(t, func() time.Time { return clock })
	ctx := context.Background()
	old := file(t, st, "prp_old", start)
	young := file(t, st, "prp_young", start.Add(3*24*time.Hour))
	clock = start.Add(proposals.Life + time.Minute)
	duty := proposals.NewExpiry(st, 0)
	var _ sweep.Duty = duty
	rep, err := duty.Sweep(ctx, clock)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{proposals.ReportExpired: 1}, rep.Actions); diff != "" {
		t.Errorf("first pass (-want +got):\n%s", diff)
	}
	it, err := st.Get(ctx, proposals.Key("demo", "m_alvarez", old.ID))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := proposals.Decode(it)
	if got.Status != proposals.StatusExpired || got.Decision == nil || got.Decision.Code != "PROPOSAL_EXPIRED" || it.GSI1PK != "" {
		t.Errorf("the swept proposal = status %s, decision %+v, index %q; want expired, PROPOSAL_EXPIRED, out of the index", got.Status, got.Decision, it.GSI1PK)
	}
	if _, err := st.Get(ctx, proposals.InboxKey("demo", "m_alvarez", old.CreatedAt, old.ID)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the inbox row after expiry: %v, want gone", err)
	}
	ptr, err := st.Get(ctx, proposals.PointerKey("demo", "cred_x", old.CreatedAt, old.ID))
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := proposals.DecodePointer(ptr); p.Status != proposals.StatusExpired {
		t.Errorf("pointer status = %s, want expired", p.Status)
	}
	counter, _ := st.Get(ctx, proposals.CounterKey("demo", "m_alvarez"))
	if n := proposals.Pending(&counter); n != 1 {
		t.Errorf("counter = %d, want 1 (the young one)", n)
	}
	// A second pass finds nothing due (the index entry is gone).
	rep, err = duty.Sweep(ctx, clock)
	if err != nil || len(rep.Actions) != 0 {
		t.Errorf("second pass = %+v, %v; want nothing done", rep.Actions, err)
	}
	// Readers do not wait for the sweeper: the young one is expired to a
	// reader past its expiry before any pass.
	later := young.ExpiresAt
	it, _ = st.Get(ctx, proposals.Key("demo", "m_alvarez", young.ID))
	p, _ := proposals.Decode(it)
	if p.StatusAt(later) != proposals.StatusExpired || p.StatusAt(later.Add(-time.Second)) != proposals.StatusPending {
		t.Errorf("StatusAt around the expiry = %s, %s; want expired at it, pending before", p.StatusAt(later), p.StatusAt(later.Add(-time.Second)))
	}
	// A pass racing a decision: the row changed since it was read, so the
	// expiry's transaction is cancelled and nothing of it is written.
	p.Version++ // as if read before a decision bumped it
	if err := st.Transact(ctx, proposals.ExpireOps(p, later)); err == nil {
		t.Error("an expiry over a proposal read at an older version was written")
	}
}

func TestProposalIDsDeriveFromTheCredentialTheMatterAndTheKey(t *testing.T) {
	a := proposals.ID("cred_1", "m_a", "k")
	for name, other := range map[string]string{
		"another key":        proposals.ID("cred_1", "m_a", "k2"),
		"another matter":     proposals.ID("cred_1", "m_b", "k"),
		"another credential": proposals.ID("cred_2", "m_a", "k"),
		"a shifted boundary": proposals.ID("cred_1m", "_a", "k"),
	} {
		if other == a {
			t.Errorf("%s names the same proposal", name)
		}
	}
	if proposals.ID("cred_1", "m_a", "k") != a || len(a) != len("prp_")+32 {
		t.Errorf("ID = %q, want a stable prp_ + 32 hex", a)
	}
}
