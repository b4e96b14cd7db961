package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/custodymcp/custody/shared/handoff"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// TestHandOffAcrossTwoProcesses (issue 15): two dev servers on one
// DynamoDB emulator table. A session on A declares URL elicitation and
// holds its GET stream on A; propose_action on A sends the hand-off; the
// client's accept reaches B; the owner signs in on B, opens the link's
// path there and approves; notifications/elicitation/complete arrives on
// A's GET stream — nothing held in either process carried it.
func TestHandOffAcrossTwoProcesses(t *testing.T) {
	pair := startPair(t)
	urlA, urlB, ctl := pair.urlA, pair.urlB, pair.ctl
	baseA, baseB := strings.TrimSuffix(urlA, "/mcp"), strings.TrimSuffix(urlB, "/mcp")
	key := ctl("keys", "mint", "--owner", seed.DemoAttorney, "--scopes", "read write")
	status, h, _ := mcpPost(t, urlA, key, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"url":{}}},"clientInfo":{"name":"handoff","version":"0"}}}`)
	sid := h.Get("Mcp-Session-Id")
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d", status)
	}
	headers := []string{"Authorization: Bearer " + key, "Mcp-Session-Id: " + sid, "MCP-Protocol-Version: 2025-11-25"}
	get := servertest.OpenStream(t, http.MethodGet, urlA, nil, append(headers, "Accept: text/event-stream")...)
	defer get.Close()

	call := toolCall("propose_action", map[string]any{"case_id": seed.Alvarez, "action": "create_deadline",
		"args":   map[string]any{"title": "Handed off", "due_date": "2027-03-01", "kind": "filing"},
		"reason": "Across processes.", "idempotency_key": "handoff-1"})
	es := servertest.OpenStream(t, http.MethodPost, urlA, []byte(call), headers...)
	elicit := es.NextMessage(t)
	receipt := es.NextMessage(t)
	es.Close()
	params, _ := elicit["params"].(map[string]any)
	id, _ := params["elicitationId"].(string)
	link, _ := params["url"].(string)
	if elicit["method"] != handoff.Method || link != baseA+"/approvals/h/"+id {
		t.Fatalf("first message %v, want elicitation/create with a link below A's base", elicit)
	}
	res, _ := receipt["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	approval, _ := sc["approval_id"].(string)
	if sc["status"] != "pending_approval" {
		t.Fatalf("receipt %v", receipt)
	}

	// The client's accept, on B.
	ans, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": elicit["id"], "result": map[string]any{"action": "accept"}})
	if r := servertest.DoURL(t, urlB, http.MethodPost, ans, headers...); r.Status != http.StatusAccepted {
		t.Fatalf("accept on B: %d %s", r.Status, r.Body)
	}

	// The owner opens the link's path on B and approves there.
	dana := signInOver(t, baseB, ctl("signin-link", "--principal", seed.DemoAttorney, "--base", baseB))
	req, _ := http.NewRequest(http.MethodGet, baseB+"/approvals/h/"+id, nil)
	req.Header.Set("Cookie", "__Host-custody-approvals="+dana.cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `id="proposal-`+approval+`"`) {
		t.Fatalf("the link on B: %d\n%s", resp.StatusCode, page)
	}
	if got := dana.review(t, dana.reviewCSRF(t), approval); got != "approved/" {
		t.Fatalf("approve on B: %s", got)
	}

	// The completion arrives on A's GET stream.
	m := get.NextMessage(t)
	p, _ := m["params"].(map[string]any)
	if m["method"] != handoff.CompleteMethod || p["elicitationId"] != id {
		t.Errorf("A's GET stream delivered %v, want notifications/elicitation/complete for %s", m, id)
	}
}
