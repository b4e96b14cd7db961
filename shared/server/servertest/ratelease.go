package servertest

import (
	"testing"

	"github.com/custodymcp/custody/shared/ratelimit"
)

// LeasesAcrossInstances races n concurrent calls of tool with args, in one
// session of the attorney's key, over two instances of the endpoint on
// env's store (Env.Instance: two gates, each with its own leases of the
// credential's one bucket), and holds the bound docs/decisions.md
// "Pipeline choices" states for rate leases (issue 19, item 6): no
// overshoot — at most limit − pre served, where pre is what the session's
// initialize already took from the lane — and an undershoot of at most
// 2 × (ratelimit.SliceFor(limit) − 1), the slices the two instances may
// still hold unserved; every other answer RATE_LIMITED. env must be made
// with the lane's limit and a clock that stands still, so the race stays
// in one rate window. It returns what was served and refused.
func LeasesAcrossInstances(t *testing.T, env *Env, limit, pre, n int, tool string, args any) (served, limited int) {
	t.Helper()
	s := env.Initialize(t, Attorney, "2025-11-25")
	_, second := env.Instance(t)
	served, limited, other := s.BarrierAcross(t, []string{env.URL, second}, n, tool, args)
	under := 2 * (int(ratelimit.SliceFor(limit)) - 1)
	t.Logf("%d-way barrier over two instances, limit %d (%d taken before), slice %d: %d served, %d rate-limited, %d other (overshoot %d, undershoot %d of at most %d)",
		n, limit, pre, ratelimit.SliceFor(limit), served, limited, other, served-(limit-pre), (limit-pre)-served, under)
	if served > limit-pre || served < limit-pre-under || served+limited != n || other != 0 {
		t.Errorf("served %d, limited %d, other %d; want between %d and %d served and the rest RATE_LIMITED",
			served, limited, other, limit-pre-under, limit-pre)
	}
	return served, limited
}
