package server_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// BenchmarkGovernedGetMatter measures one governed tools/call of get_matter
// through the real handler (authentication, rate limit, funnel, attestation
// and the audit commit on the file engine), without an HTTP client.
func BenchmarkGovernedGetMatter(b *testing.B) {
	env := servertest.New(b, servertest.Options{Limits: ratelimit.Limits{ratelimit.LaneRead: 1 << 30}})
	s := env.Initialize(b, servertest.Attorney, "2025-11-25")
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_matter","arguments":{"case_id":"m_meridian"}}}`)
	benchCalls(b, env, body, s.Headers())
}

// BenchmarkGovernedGetMatter2026 is the same call in the stateless
// 2026-07-28 era: the revision, capabilities and Mcp-* headers on every
// request instead of a session (issue 9's target: within 3 % of the 2025
// era).
func BenchmarkGovernedGetMatter2026(b *testing.B) {
	env := servertest.New(b, servertest.Options{Limits: ratelimit.Limits{ratelimit.LaneRead: 1 << 30}})
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_matter","arguments":{"case_id":"m_meridian"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	benchCalls(b, env, body, []string{"Authorization: Bearer " + env.Keys[servertest.Attorney],
		"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: get_matter", "Mcp-Param-Case-Id: m_meridian"})
}

func benchCalls(b *testing.B, env *servertest.Env, body []byte, headers []string) {
	h := env.Server.Handler()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	defer func() { b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op") }()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for _, kv := range headers {
			k, v, _ := bytes.Cut([]byte(kv), []byte(":"))
			req.Header.Set(string(k), string(bytes.TrimSpace(v)))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body.Bytes())
		}
	}
}

// processCPU is the process's user+system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
