package autonomy_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/autonomy"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/filestore"
)

func row(level string) *store.Item { return &store.Item{Attrs: map[string]any{"level": level}} }

// A call obeys the lowest of its names' settings, each falling back to
// the tenant default, then L2; an unreadable level fails closed at L0.
func TestACallObeysTheLowestOfItsSettingsEachFallingBackToTheDefault(t *testing.T) {
	names := []string{"propose_action", "serve_production"}
	for _, c := range []struct {
		name string
		rows []*store.Item // tool, action, default
		want autonomy.Level
	}{
		{"nothing set: L2", []*store.Item{nil, nil, nil}, autonomy.L2},
		{"the tenant default applies to both", []*store.Item{nil, nil, row("L1")}, autonomy.L1},
		{"the action's own setting, lower than the tool's", []*store.Item{row("L4"), row("L0"), nil}, autonomy.L0},
		{"the tool's own setting, lower than the default", []*store.Item{row("L1"), nil, row("L3")}, autonomy.L1},
		{"an own setting above the default still meets the other name's default", []*store.Item{row("L4"), nil, row("L3")}, autonomy.L3},
		{"an unreadable level is L0", []*store.Item{row("L9"), nil, nil}, autonomy.L0},
	} {
		if got := autonomy.Resolve(names, c.rows); got != c.want {
			t.Errorf("%s: Resolve = %s, want %s", c.name, got, c.want)
		}
	}
}

func TestSettingsAreSetListedAndCleared(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	fs, err := filestore.Open(filepath.Join(t.TempDir(), "c.db"), filestore.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	ctx := context.Background()
	for name, l := range map[string]autonomy.Level{"*": autonomy.L1, "add_case_note": autonomy.L0, "serve_production": autonomy.L4} {
		if err := autonomy.Set(ctx, fs, "demo", name, l, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := autonomy.Set(ctx, fs, "demo", "bad#name", autonomy.L1, now); !errors.Is(err, autonomy.ErrInvalid) {
		t.Errorf("Set of a name with '#' = %v, want ErrInvalid", err)
	}
	if err := autonomy.Clear(ctx, fs, "demo", "serve_production"); err != nil {
		t.Fatal(err)
	}
	got, err := autonomy.List(ctx, fs, "demo")
	if err != nil {
		t.Fatal(err)
	}
	var levels []string
	for _, s := range got {
		levels = append(levels, s.Name+"="+s.Level.String())
	}
	if diff := cmp.Diff([]string{"*=L1", "add_case_note=L0"}, levels); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	for _, s := range []string{"l3", " L2 ", "L4"} {
		if _, err := autonomy.ParseLevel(s); err != nil {
			t.Errorf("ParseLevel(%q) = %v", s, err)
		}
	}
	if _, err := autonomy.ParseLevel("L5"); !errors.Is(err, autonomy.ErrInvalid) {
		t.Errorf("ParseLevel(L5) = %v, want ErrInvalid", err)
	}
}
