package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/approvals/outbox"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/filestore"
)

func newStore(t *testing.T) store.Store {
	t.Helper()
	fs, err := filestore.Open(filepath.Join(t.TempDir(), "store.db"), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	return fs
}

func message(proposal string, at time.Time) outbox.Message {
	return outbox.Message{ID: outbox.IDFor(proposal), Tenant: "demo", CaseID: "m_alvarez", Proposal: proposal,
		Action: "serve_production", Args: []byte(`{}`), ApprovedBy: "p_dana_whitfield", ApprovedAt: at}
}

// One proposal makes at most one message, however often its approval is
// written: the message is named by the proposal and put under NotExists.
func TestOneProposalMakesOneMessage(t *testing.T) {
	st := newStore(t)
	op, err := outbox.Put(message("prp_1", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Transact(context.Background(), []store.Op{op}); err != nil {
		t.Fatal(err)
	}
	var tx *store.TxCanceledError
	if err := st.Transact(context.Background(), []store.Op{op}); !errors.As(err, &tx) {
		t.Errorf("writing the same message again = %v, want the transaction cancelled", err)
	}
}

// Twenty operators acknowledging one message at once record one
// acknowledgement; the others are told it was acknowledged already.
func TestTwentyAcknowledgementsOfOneMessageRecordOne(t *testing.T) {
	st := newStore(t)
	ctx := context.Background()
	m := message("prp_2", time.Now())
	op, err := outbox.Put(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Transact(ctx, []store.Op{op}); err != nil {
		t.Fatal(err)
	}
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			_, errs[i] = outbox.Acknowledge(ctx, st, "demo", m.ID, fmt.Sprint("p_op_", i), "", time.Now())
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, outbox.ErrAcknowledged):
			t.Errorf("Acknowledge = %v, want nil or ErrAcknowledged", err)
		}
	}
	if won != 1 {
		t.Errorf("%d acknowledgements recorded, want 1", won)
	}
	pending, err := outbox.List(ctx, st, "demo", false)
	if err != nil || len(pending) != 0 {
		t.Errorf("pending after the ack = %v, %v; want none", pending, err)
	}
	if _, err := outbox.Acknowledge(ctx, st, "demo", "obx_nothing", "p_op", "", time.Now()); !errors.Is(err, outbox.ErrUnknown) {
		t.Errorf("Acknowledge(unknown) = %v, want ErrUnknown", err)
	}
	if _, err := outbox.Acknowledge(ctx, st, "other", m.ID, "p_op", "", time.Now()); !errors.Is(err, outbox.ErrUnknown) {
		t.Errorf("Acknowledge(another tenant's) = %v, want ErrUnknown", err)
	}
}
