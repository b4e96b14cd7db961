package sweep_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/filestore"
	"github.com/custodymcp/custody/shared/sweep"
)

func TestDueListsExactlyTheEntriesDueByNowAcrossShards(t *testing.T) {
	st, err := filestore.Open(filepath.Join(t.TempDir(), "s.db"), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	want := map[string]bool{}
	for i := range 40 {
		id := fmt.Sprintf("id%02d", i)
		due := now.Add(time.Duration(i-20) * time.Minute) // 20 past, one at now, 19 ahead
		pk, sk := sweep.IndexKeys("test", id, due)
		if err := st.Put(t.Context(), store.Item{PK: "ROW#" + id, SK: "ROW", Version: 1, GSI1PK: pk, GSI1SK: sk}); err != nil {
			t.Fatal(err)
		}
		if !due.After(now) {
			want["ROW#"+id] = true
		}
	}
	got, err := sweep.Due(t.Context(), st, "test", now, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("Due returned %d rows, want %d", len(got), len(want))
	}
	shards := map[string]bool{}
	for _, it := range got {
		if !want[it.PK] {
			t.Errorf("Due returned %s, not due", it.PK)
		}
		shards[it.GSI1PK] = true
	}
	if len(shards) < 4 {
		t.Errorf("21 entries fell in %d shards: the ids are not spread", len(shards))
	}
}

type duty struct {
	name string
	err  error
	n    int
}

func (d *duty) Name() string { return d.name }
func (d *duty) Sweep(context.Context, time.Time) (sweep.Report, error) {
	d.n++
	var r sweep.Report
	r.Add("acted")
	return r, d.err
}

func TestRunRunsEveryDutyEvenAfterOneFails(t *testing.T) {
	boom := errors.New("boom")
	a, b := &duty{name: "a", err: boom}, &duty{name: "b"}
	reports, err := sweep.Run(t.Context(), []sweep.Duty{a, b}, time.Now())
	if !errors.Is(err, boom) || a.n != 1 || b.n != 1 || len(reports) != 2 || reports[1].Duty != "b" || reports[1].Actions["acted"] != 1 {
		t.Errorf("Run = %v, %v; a ran %d, b %d", reports, err, a.n, b.n)
	}
}

func TestTheExpiredRowsDutyDeletesExpiredRowsAtMostOncePerInterval(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clock := now
	st, err := filestore.Open(filepath.Join(t.TempDir(), "s.db"), filestore.Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, exp := range []time.Time{now.Add(-time.Minute), now.Add(-time.Second), now.Add(time.Hour)} {
		if err := st.Put(t.Context(), store.Item{PK: fmt.Sprintf("ROW#%d", i), SK: "ROW", Version: 1, ExpiresAt: exp.Unix()}); err != nil {
			t.Fatal(err)
		}
	}
	d := &sweep.Expired{Engine: st, Every: 10 * time.Minute}
	for _, c := range []struct {
		name string
		at   time.Time
		want int
	}{
		{"the first sweep deletes the two expired rows", now, 2},
		{"a sweep within the interval does nothing", now.Add(5 * time.Minute), 0},
		{"a sweep after the interval deletes what expired since", now.Add(2 * time.Hour), 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock = c.at
			rep, err := d.Sweep(t.Context(), c.at)
			if err != nil || rep.Actions["deleted"] != c.want {
				t.Errorf("Sweep = %v, %v; want %d deleted", rep.Actions, err, c.want)
			}
		})
	}
}
