package executors

import (
	"slices"
	"testing"

	"github.com/custodymcp/custody/shared/proposals"
)

// Every action of the registry propose_action files against has exactly
// one executor, and no executor carries out an action the registry does
// not define: an approvable proposal can always be carried out, and
// nothing else can.
func TestEveryActionHasExactlyOneExecutor(t *testing.T) {
	names := proposals.Default().Names()
	count := map[string]int{}
	for _, e := range All() {
		count[e.Action()]++
	}
	for _, n := range names {
		if count[n] != 1 {
			t.Errorf("action %s has %d executors, want 1", n, count[n])
		}
		if e, ok := For(n); !ok || e.Action() != n {
			t.Errorf("For(%s) = %v, %v", n, e, ok)
		}
	}
	for a := range count {
		if !slices.Contains(names, a) {
			t.Errorf("an executor carries out %q, which the registry does not define", a)
		}
	}
	if _, ok := For("teleport"); ok {
		t.Error("For(teleport) found an executor")
	}
}
