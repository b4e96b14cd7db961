package approvals_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/records/seed"
)

// BenchmarkDecision measures one decision as the page serves it, over
// real HTTP on the file engine (servertest), from the POST to the
// results page: the session's reads, the set's reload (the tenant's
// matters and each reached matter's inbox rows), the decision's one batch
// read and its one transaction. Filing the proposal (through /mcp
// propose_action) and, for a confirmation, minting its nonce are outside
// the timer. It reports the p50 and p99 latencies in milliseconds.
//
//	go test -run '^$' -bench BenchmarkDecision ./shared/approvals/
func BenchmarkDecision(b *testing.B) {
	for _, c := range []struct {
		name    string
		propose func(d *desk, role string, i int) string
		decide  func(p *person, id string) page
		setup   func(p *person, id string) string
	}{
		{"a routine proposal in a selection", func(d *desk, role string, i int) string {
			return d.deadline(b, role, seed.Alvarez, fmt.Sprint("Benchmark ", i))
		}, nil, nil},
		{"a confirmed external act", func(d *desk, role string, i int) string {
			return d.production(b, role, seed.Alvarez, "d_alv_complaint")
		}, nil, func(p *person, id string) string { _, n := p.confirm(b, id); return n }},
	} {
		b.Run(c.name, func(b *testing.B) {
			d := newDesk(b)
			key, cred := d.mintBench(b)
			d.Keys["bench"], d.Creds["bench"] = key, cred
			dana := d.signIn(b, seed.DemoAttorney)
			var lat []time.Duration
			i := 0
			for b.Loop() {
				b.StopTimer()
				id := c.propose(d, "bench", i)
				nonce := ""
				if c.setup != nil {
					nonce = c.setup(dana, id)
				}
				i++
				b.StartTimer()
				start := time.Now()
				var a page
				if nonce == "" {
					a = dana.review(b, []string{id}, nil)
				} else {
					a = dana.decide(b, id, nonce)
				}
				lat = append(lat, time.Since(start))
				b.StopTimer()
				if got := outcomes(b, a)[id]; got != (outcome{Status: "approved"}) {
					b.Fatalf("decision %d = %+v", i, got)
				}
				b.StartTimer()
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
			b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)])/1e6, "p99-ms")
		})
	}
}

// mintBench mints a paralegal key whose write lane will not refuse a
// benchmark's proposals (the clock of servertest does not move).
func (d *desk) mintBench(t testing.TB) (string, *auth.Credential) {
	t.Helper()
	key, cred, err := auth.Mint(context.Background(), d.Store, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoParalegal,
		Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite}, RateLimits: map[string]int{"write": 1 << 30}}, d.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return key, cred
}
