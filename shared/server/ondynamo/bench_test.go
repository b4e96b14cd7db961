package ondynamo

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
)

// BenchmarkGovernedGetMatterOnDynamoDB is BenchmarkGovernedGetMatter of
// package server on the DynamoDB engine, against the in-process emulator:
// its figures include the emulator's work, so it is for profiles (where the
// SDK's and the emulator's functions are told apart), not for the CPU per
// call, which `make bench` measures with the emulator in a process of its
// own (target custody-dynamodb).
func BenchmarkGovernedGetMatterOnDynamoDB(b *testing.B) {
	clock := servertest.NewClock(servertest.Epoch)
	emu := dynamotest.NewServer(b)
	client := emu.Client()
	st := dynamostore.New(client, dynamotest.CreateTable(b, client), dynamostore.Options{Now: clock.Now})
	env := servertest.New(b, servertest.Options{Store: st, Clock: clock, Limits: ratelimit.Limits{ratelimit.LaneRead: 1 << 30}})
	s := env.Initialize(b, servertest.Attorney, "2025-11-25")
	h := env.Server.Handler()
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_matter","arguments":{"case_id":"m_meridian"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for _, kv := range s.Headers() {
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
