package servertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/records/seed"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/tools"
)

// ReceiptTool is the name of the receipt fixture (RegisterReceiptFixture).
const ReceiptTool = "fixture_receipt"

// ReceiptInput names the receipt to write: one per (credential, key).
type ReceiptInput struct {
	Key  string `json:"key"`
	Text string `json:"text"`
}

// Receipt is the fixture's answer: the receipt's id and text, and whether
// this call found it already written (a replay).
type Receipt struct {
	ID       string `json:"receipt_id"`
	Text     string `json:"text"`
	Replayed bool   `json:"replayed"`
}

// ReceiptKey is the row of a credential's receipt under key.
func ReceiptKey(credentialID, key string) store.Key {
	return store.Key{PK: "FIXTURE#RECEIPT#" + credentialID, SK: key}
}

// RegisterReceiptFixture registers the test-only write tool of issue 9's
// fault tests: its one write carries a not-exists condition. The first call
// writes the row and answers its receipt; a replay — the row exists — meets
// the failed condition, and the conflict path reads the row and answers the
// original receipt (replayed), or CONFLICT for other text. It reads nothing
// before it writes, so every replay goes through the conflict path.
// st is the store the conflict path reads (Options.RegisterExtraOn).
func RegisterReceiptFixture(reg *tools.Registry, st store.Store) error {
	return tools.Register(reg, tools.Spec{Name: ReceiptTool, Title: "Receipt (test fixture)", Scope: auth.ScopeRead,
		Description: "Writes one receipt per key, once."},
		func(_ context.Context, c *tools.Call, in ReceiptInput) (Receipt, error) {
			k := ReceiptKey(c.Credential.ID, in.Key)
			var b [8]byte
			_, _ = rand.Read(b[:])
			r := Receipt{ID: "rcp_" + hex.EncodeToString(b[:]), Text: in.Text}
			c.Write(tools.Write{
				Ops: []store.Op{store.PutOp(store.Item{PK: k.PK, SK: k.SK, Version: 1,
					Attrs: map[string]any{"receipt_id": r.ID, "text": in.Text}}, store.NotExists())},
				Conflict: func(ctx context.Context, _ int) (any, bool, error) {
					it, err := st.Get(ctx, k)
					if err != nil {
						return nil, false, err
					}
					if it.String("text") != in.Text {
						return nil, false, tools.Refuse(tools.ClassConflict, "That key already names another receipt.")
					}
					return Receipt{ID: it.String("receipt_id"), Text: it.String("text"), Replayed: true}, true, nil
				},
			})
			return r, nil
		})
}

// RaceReceipts is the 20-way race of issue 9 on env's engine.
func RaceReceipts(t testing.TB, env *Env, n int) {
	t.Helper()
	s := env.Initialize(t, Attorney, "2025-11-25")
	args := map[string]any{"key": "raced", "text": "same"}
	ids := make([]string, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ids[i] = receiptOf(t, s.Tool(t, ReceiptTool, args)).ID
		}()
	}
	close(start)
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("receipts differ: %v", ids)
		}
	}
	page, err := env.Store.Query(context.Background(), store.Query{PK: ReceiptKey(env.Creds[Attorney].ID, "raced").PK})
	if err != nil || len(page.Items) != 1 {
		t.Errorf("receipt rows = %d (%v), want 1", len(page.Items), err)
	}
	got := map[string]int{}
	for _, r := range auditRowsOf(t, env) {
		if r.Tool == ReceiptTool {
			got[r.Outcome]++
		}
	}
	if diff := cmp.Diff(map[string]int{"ok": 1, "ok:replay": n - 1}, got); diff != "" {
		t.Errorf("audit outcomes (-want +got):\n%s", diff)
	}
}

func receiptOf(t testing.TB, res map[string]any) Receipt {
	t.Helper()
	b, _ := json.Marshal(Structured(t, res))
	var r Receipt
	if err := json.Unmarshal(b, &r); err != nil || r.ID == "" {
		t.Fatalf("no receipt in %v", res)
	}
	return r
}

func auditRowsOf(t testing.TB, env *Env) []audit.Record {
	t.Helper()
	rows, err := audit.Day(context.Background(), env.Store, seed.DemoTenant, env.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
