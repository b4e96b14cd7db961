package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/shared/admin"
	"github.com/custodymcp/custody/shared/handoff"
	"github.com/custodymcp/custody/shared/records/seed"
)

// BenchmarkHandOffElicitation measures, on a real dev server (its own
// process, the file engine), the time from sending a propose_action call
// in a 2025-11-25 session that declared elicitation.url to reading its
// elicitation/create event on the call's stream (issue 15), over 200
// calls per iteration, and reports the median and the 99th percentile.
// Each proposal is withdrawn on the approval page after its call (the
// matter holds at most 25 pending), outside the measured time.
//
//	go test -run '^$' -bench HandOffElicitation -benchtime 1x ./scripts/dev/
func BenchmarkHandOffElicitation(b *testing.B) {
	devBin, ctlBin, _ := buildTools(b)
	data := b.TempDir()
	p := start(b, "dev", devBin, nil, "-addr", "127.0.0.1:0", "-data", data)
	mcpURL := p.await(b, regexp.MustCompile(`serving MCP at (http://\S+/mcp) `), time.Minute)
	base := strings.TrimSuffix(mcpURL, "/mcp")
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
	req, _ := json.Marshal(admin.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney, Scopes: "read write",
		Label: "bench", RateLimits: map[string]int{"read": 1_000_000, "expensive": 1_000_000, "write": 1_000_000}})
	code, body, err := ac.Do(context.Background(), http.MethodPost, "/admin/keys", req)
	var minted admin.Minted
	if err != nil || code != http.StatusCreated || json.Unmarshal(body, &minted) != nil {
		b.Fatalf("mint the bench key: %d %s %v", code, body, err)
	}
	r := mcpInit(b, mcpURL, minted.Key, `{"elicitation":{"url":{}}}`)
	headers := map[string]string{"Authorization": "Bearer " + minted.Key, "Mcp-Session-Id": r, "MCP-Protocol-Version": "2025-11-25",
		"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
	ctl := ctlOf(b, ctlBin, data, nil)
	link, _ := ctl("signin-link", "--principal", seed.DemoAttorney, "--base", base)
	page := signInOver(b, base, strings.TrimSpace(link))
	n := 0
	var lat []time.Duration
	for b.Loop() {
		for range 200 {
			n++
			call := toolCall("propose_action", map[string]any{"case_id": seed.Meridian, "action": "create_deadline",
				"args":   map[string]any{"title": fmt.Sprint("Bench ", n), "due_date": "2027-03-01", "kind": "filing"},
				"reason": "Bench.", "idempotency_key": fmt.Sprint("bench-", n)})
			hr, _ := http.NewRequest(http.MethodPost, mcpURL, bytes.NewReader([]byte(call)))
			for k, v := range headers {
				hr.Header.Set(k, v)
			}
			sent := time.Now()
			resp, err := http.DefaultClient.Do(hr)
			if err != nil {
				b.Fatal(err)
			}
			rd := bufio.NewReader(resp.Body)
			var id, approval string
			for approval == "" {
				line, err := rd.ReadString('\n')
				if err != nil {
					b.Fatalf("call %d: the stream ended (%v)", n, err)
				}
				data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
				if !ok || data == "" {
					continue
				}
				var msg map[string]any
				_ = json.Unmarshal([]byte(data), &msg)
				if msg["method"] == handoff.Method {
					lat = append(lat, time.Since(sent))
					id = "seen"
					continue
				}
				res, _ := msg["result"].(map[string]any)
				sc, _ := res["structuredContent"].(map[string]any)
				approval, _ = sc["approval_id"].(string)
				if approval == "" {
					b.Fatalf("call %d answered %s", n, data)
				}
			}
			resp.Body.Close()
			if id == "" {
				b.Fatalf("call %d: no elicitation/create", n)
			}
			b.StopTimer()
			withdraw(b, page, approval)
			b.StartTimer()
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// mcpInit starts a 2025-11-25 session declaring caps and returns its id.
func mcpInit(b *testing.B, mcpURL, key, caps string) string {
	status, h, _ := mcpPost(b, mcpURL, key, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"bench","version":"0"}}}`)
	if status != http.StatusOK || h.Get("Mcp-Session-Id") == "" {
		b.Fatalf("initialize: %d", status)
	}
	return h.Get("Mcp-Session-Id")
}

var declineCSRF = regexp.MustCompile(`action="[^"]*/decline"[^>]*>\s*<input type="hidden" name="csrf" value="([^"]+)"`)

// withdraw declines id on the page (the owner is an approver).
func withdraw(b *testing.B, s *pageSession, id string) {
	req, _ := http.NewRequest(http.MethodGet, s.base+"/approvals/p/"+id, nil)
	req.Header.Set("Cookie", "__Host-custody-approvals="+s.cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	m := declineCSRF.FindStringSubmatch(buf.String())
	if m == nil {
		b.Fatalf("no decline form for %s", id)
	}
	form := url.Values{"csrf": {m[1]}}
	fr, _ := http.NewRequest(http.MethodPost, s.base+"/approvals/p/"+id+"/decline", strings.NewReader(form.Encode()))
	fr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	fr.Header.Set("Origin", s.base)
	fr.Header.Set("Cookie", "__Host-custody-approvals="+s.cookie)
	dr, err := http.DefaultClient.Do(fr)
	if err != nil {
		b.Fatal(err)
	}
	dr.Body.Close()
}
