package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/writetools"
)

// BenchmarkGovernedWrites measures the governed writes as the dev server
// serves them: the composed handler over the file engine (every commit
// synced), called over real HTTP on loopback, one call at a time. It
// reports the median and the 99th percentile of a call's latency besides
// ns/op. Filing is capped at 25 pending proposals a matter, so every 25
// filings the benchmark resets the matter's counter outside the clock (the
// approval page's decisions would do that); the inbox rows stay.
//
//	go test -run '^$' -bench GovernedWrites -benchtime 400x ./shared/server/
func BenchmarkGovernedWrites(b *testing.B) {
	env := servertest.New(b, servertest.Options{Limits: ratelimit.Limits{ratelimit.LaneRead: 1 << 30, ratelimit.LaneWrite: 1 << 30}})
	s := env.Initialize(b, servertest.Paralegal, "2025-11-25")
	post := func(b *testing.B, id int, tool string, args map[string]any) {
		r := s.Post(b, []byte(toolCall(id, tool, args)))
		if r.Status != http.StatusOK {
			b.Fatalf("%s: %d %s", tool, r.Status, r.Body)
		}
	}
	resetCounter := func(b *testing.B) {
		k := proposals.CounterKey(seed.DemoTenant, seed.Alvarez)
		if err := env.Store.Put(b.Context(), store.Item{PK: k.PK, SK: k.SK, Version: 1, Attrs: map[string]any{proposals.CounterAttr: int64(0)}}); err != nil {
			b.Fatal(err)
		}
	}
	run := func(b *testing.B, call func(b *testing.B, i int)) {
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			call(b, i)
			lat = append(lat, time.Since(t0))
		}
		b.StopTimer()
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
		b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)])/1e6, "p99-ms")
	}
	round := 0
	b.Run("propose_action filed", func(b *testing.B) {
		round++
		run(b, func(b *testing.B, i int) {
			if i%proposals.MaxPending == 0 {
				b.StopTimer()
				resetCounter(b)
				b.StartTimer()
			}
			post(b, i, writetools.ToolProposeAction, servertest.ProposeArgs(seed.Alvarez, fmt.Sprintf("bench-%d-%d", round, i),
				"create_deadline", servertest.DeadlineArgs()))
		})
	})
	b.Run("propose_action replay", func(b *testing.B) {
		resetCounter(b)
		args := servertest.ProposeArgs(seed.Alvarez, fmt.Sprint("bench-replay-", round), "create_deadline", servertest.DeadlineArgs())
		post(b, 0, writetools.ToolProposeAction, args)
		run(b, func(b *testing.B, i int) { post(b, i, writetools.ToolProposeAction, args) })
	})
	b.Run("add_case_note first", func(b *testing.B) {
		round++
		run(b, func(b *testing.B, i int) {
			post(b, i, writetools.ToolAddCaseNote, map[string]any{"case_id": seed.Alvarez, "body": "Benchmark note.",
				"idempotency_key": fmt.Sprintf("bench-%d-%d", round, i)})
		})
	})
	b.Run("add_case_note replay", func(b *testing.B) {
		args := map[string]any{"case_id": seed.Alvarez, "body": "Benchmark note.", "idempotency_key": fmt.Sprint("bench-note-replay-", round)}
		post(b, 0, writetools.ToolAddCaseNote, args)
		run(b, func(b *testing.B, i int) { post(b, i, writetools.ToolAddCaseNote, args) })
	})
}

func toolCall(id int, name string, args map[string]any) string {
	a, _ := json.Marshal(args)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, a)
}
