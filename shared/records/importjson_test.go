package records_test

import (
	"context"
	"testing"

	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/store/storetest"
)

func TestImportJSONTwiceReadsOneMarkerTheSecondTime(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	first, err := records.ImportJSON(ctx, st, seed.DemoJSON(), importedAt)
	if err != nil || first.AlreadyImported || first.Written == 0 {
		t.Fatalf("first ImportJSON = %+v, %v; want rows written", first, err)
	}
	before := st.Calls(storetest.MethodGet) + st.Calls(storetest.MethodQuery) + st.Calls(storetest.MethodTransact) + st.Calls(storetest.MethodPut)
	again, err := records.ImportJSON(ctx, st, seed.DemoJSON(), importedAt)
	if err != nil || !again.AlreadyImported {
		t.Fatalf("second ImportJSON = %+v, %v; want AlreadyImported", again, err)
	}
	after := st.Calls(storetest.MethodGet) + st.Calls(storetest.MethodQuery) + st.Calls(storetest.MethodTransact) + st.Calls(storetest.MethodPut)
	if after-before != 1 {
		t.Errorf("the second import made %d store calls, want 1 (the marker read)", after-before)
	}
	if _, err := records.NewRepo(st).Matter(ctx, seed.DemoTenant, seed.Harbor); err != nil {
		t.Errorf("the imported record lacks %s: %v", seed.Harbor, err)
	}
}
