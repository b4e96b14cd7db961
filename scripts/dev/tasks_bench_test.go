package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/shared/admin"
	"github.com/custodymcp/custody/shared/conformance"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// BenchmarkTaskCreationToCompleted measures, on a real dev server (its own
// process, the file engine, the in-process queue and worker), the time
// from a task's creation to its completion as the task itself records
// them (tasks/get's createdAt and lastUpdatedAt, milliseconds), over 200
// tasks per iteration, and reports the median and the 99th percentile:
//
//   - machinery: the fixture test_slow_task with seconds 0 (the tool does
//     nothing), so the time is the queue, the claim, the re-admission and
//     the outcome's commit;
//   - audit_citations: Custody's own task tool on the Meridian matter
//     (every assertion's cited pages read and compared);
//
// each created one after the other's completion ("sequential"), and all
// 200 created at once ("burst", four at a time in the worker).
//
//	go test -run '^$' -bench TaskCreationToCompleted -benchtime 1x ./scripts/dev/
func BenchmarkTaskCreationToCompleted(b *testing.B) {
	devBin, _, _ := buildTools(b)
	data := b.TempDir()
	p := start(b, "dev", devBin, nil, "-conformance", "-addr", "127.0.0.1:0", "-data", data)
	url := p.await(b, regexp.MustCompile(`serving MCP at (http://\S+/mcp) `), time.Minute)
	// A key of the demo attorney whose limits 400 calls a minute never meet
	// (audit_citations is in the expensive lane, 60 a minute by default).
	token, err := datadir.Dir(data).Read(datadir.AdminTokenFile)
	if err != nil {
		b.Fatal(err)
	}
	addr, err := datadir.Dir(data).Read(datadir.AdminAddrFile)
	if err != nil {
		b.Fatal(err)
	}
	ac, err := admin.NewClient(addr, token, nil)
	if err != nil {
		b.Fatal(err)
	}
	req, _ := json.Marshal(admin.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney, Scopes: "read analysis:read",
		Label: "bench", RateLimits: map[string]int{"read": 1_000_000, "expensive": 1_000_000}})
	code, body, err := ac.Do(context.Background(), http.MethodPost, "/admin/keys", req)
	var minted admin.Minted
	if err != nil || code != http.StatusCreated || json.Unmarshal(body, &minted) != nil {
		b.Fatalf("mint the bench key: %d %s %v", code, body, err)
	}
	key := minted.Key
	for _, c := range []struct {
		name, key, tool string
		args            map[string]any
	}{
		{"machinery", "", conformance.SlowTaskTool, map[string]any{"seconds": 0}},
		{"audit_citations", key, "audit_citations", map[string]any{"case_id": seed.Meridian}},
	} {
		for _, burst := range []bool{false, true} {
			name := c.name + "/sequential"
			if burst {
				name = c.name + "/burst"
			}
			b.Run(name, func(b *testing.B) {
				s := newBenchSession(b, url, c.key)
				var lat []time.Duration
				for b.Loop() {
					lat = append(lat, s.run(b, c.tool, c.args, 200, burst)...)
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			})
		}
	}
}

// benchSession is a 2025-11-25 session with the dev server.
type benchSession struct {
	url     string
	headers []string
	id      int
}

func newBenchSession(b *testing.B, url, key string) *benchSession {
	var h []string
	if key != "" {
		h = append(h, "Authorization: Bearer "+key)
	}
	r := servertest.DoURL(b, url, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`), h...)
	if r.Status != http.StatusOK {
		b.Fatalf("initialize: %d %s", r.Status, r.Body)
	}
	h = append(h, "Mcp-Session-Id: "+r.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version: 2025-11-25")
	return &benchSession{url: url, headers: h}
}

func (s *benchSession) call(b *testing.B, method string, params any) map[string]any {
	s.id++
	p, _ := json.Marshal(params)
	r := servertest.DoURL(b, s.url, http.MethodPost, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, s.id, method, p)), s.headers...)
	var msg map[string]any
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &msg) != nil || msg["result"] == nil {
		b.Fatalf("%s: %d %s", method, r.Status, r.Body)
	}
	return msg["result"].(map[string]any)
}

// run creates n tasks of tool and returns each one's creation-to-completed
// time as the task recorded it.
func (s *benchSession) run(b *testing.B, tool string, args map[string]any, n int, burst bool) []time.Duration {
	create := func() string {
		return s.call(b, "tools/call", map[string]any{"name": tool, "arguments": args, "task": map[string]any{}})["task"].(map[string]any)["taskId"].(string)
	}
	await := func(id string) time.Duration {
		for {
			t := s.call(b, "tasks/get", map[string]any{"taskId": id})
			switch t["status"] {
			case "working":
				time.Sleep(2 * time.Millisecond)
				continue
			case "completed":
			default:
				b.Fatalf("task %s: %v", id, t)
			}
			created, err1 := time.Parse(time.RFC3339Nano, t["createdAt"].(string))
			updated, err2 := time.Parse(time.RFC3339Nano, t["lastUpdatedAt"].(string))
			if err1 != nil || err2 != nil {
				b.Fatalf("task times: %v %v", err1, err2)
			}
			return updated.Sub(created)
		}
	}
	var out []time.Duration
	if burst {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = create()
		}
		for _, id := range ids {
			out = append(out, await(id))
		}
		return out
	}
	for range n {
		out = append(out, await(create()))
	}
	return out
}
