package records_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
)

// TestBothEnginesServeTheSameRecord imports the demo into the DynamoDB
// engine (over the in-process emulator) and into the file engine, and reads
// every collection of every matter back from both: the layout relies only
// on the port's contract.
func TestBothEnginesServeTheSameRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("imports the demo through the DynamoDB emulator")
	}
	ctx := context.Background()
	f := demo(t)
	dyn, _ := dynamotest.NewStore(t, nil)
	file := newStore(t)
	for _, s := range []store.Store{dyn, file} {
		if _, err := records.Import(ctx, s, f, importedAt); err != nil {
			t.Fatalf("Import = %v", err)
		}
	}
	if st, err := records.Import(ctx, dyn, f, importedAt); err != nil || !st.AlreadyImported {
		t.Fatalf("second Import on DynamoDB = %+v, %v; want already imported", st, err)
	}
	a, b := records.NewRepo(dyn), records.NewRepo(file)
	read := func(r *records.Repo, matter string) (any, error) {
		type all struct {
			Docs      []records.Document
			Facts     []records.Fact
			Deadlines []records.Deadline
			Notes     []records.Note
			Chunks    []records.Chunk
		}
		var out all
		var err error
		if out.Docs, err = r.Documents(ctx, "demo", matter); err != nil {
			return nil, err
		}
		if out.Facts, err = r.Facts(ctx, "demo", matter); err != nil {
			return nil, err
		}
		if out.Deadlines, err = r.Deadlines(ctx, "demo", matter); err != nil {
			return nil, err
		}
		if out.Notes, err = r.Notes(ctx, "demo", matter); err != nil {
			return nil, err
		}
		for c, err := range r.AllChunks(ctx, "demo", matter) {
			if err != nil {
				return nil, err
			}
			out.Chunks = append(out.Chunks, c)
		}
		return out, nil
	}
	for _, m := range seed.DemoMatters {
		got, err := read(a, m)
		if err != nil {
			t.Fatalf("DynamoDB read of %s: %v", m, err)
		}
		want, err := read(b, m)
		if err != nil {
			t.Fatalf("file read of %s: %v", m, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: DynamoDB and file engines differ (-file +dynamodb):\n%s", m, diff)
		}
	}
}
