package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/scripts/internal/engine"
	"github.com/custodymcp/custody/scripts/internal/engine/dynamoengine"
	"github.com/custodymcp/custody/shared/proposals"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
)

// TestGovernedWritesRaceAcrossTwoProcesses runs the emulator and two dev
// servers on one table (one data folder) and races the governed writes
// across them, which nothing held in a process could decide:
//
//   - 40 proposals on one matter, alternating between the processes: exactly
//     25 are filed and 15 refused BACKPRESSURE, and the matter's counter is
//     25 (count-then-insert passes in one process and fails here; the
//     counter's AttrBelow condition holds);
//   - 50 add_case_note calls with one key, alternating: one note row and 50
//     receipts naming it (a mutex passes in one process and fails here; the
//     idempotency row's NotExists holds).
func TestGovernedWritesRaceAcrossTwoProcesses(t *testing.T) {
	devBin, ctlBin, minidynBin := buildTools(t)
	emu := start(t, "minidyn", minidynBin, nil, "-addr", "127.0.0.1:0", "-table", "custody")
	endpoint := emu.await(t, minidynURL, 30*time.Second)
	data := t.TempDir()
	env := []string{"STORE_ENGINE=dynamodb", "DYNAMODB_TABLE=custody", "DYNAMODB_ENDPOINT=" + endpoint}
	a := start(t, "dev A", devBin, env, "-addr", "127.0.0.1:0", "-data", data)
	urlA := a.await(t, serving, 2*time.Minute)
	b := start(t, "dev B", devBin, env, "-addr", "127.0.0.1:0", "-data", data)
	urlB := b.await(t, serving, time.Minute)
	urls := []string{urlA, urlB}

	// A paralegal's key with room in the write budget for the races.
	cmd := exec.Command(ctlBin, "--data", data, "keys", "mint", "--owner", seed.DemoParalegal, "--scopes", "read write", "--rate-write", "1000")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("custodyctl keys mint: %v", err)
	}
	key := strings.TrimSpace(string(out))
	status, h, _ := mcpPost(t, urlA, key, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"races","version":"0"}}}`)
	sid := h.Get("Mcp-Session-Id")
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d", status)
	}
	race := func(n int, call func(i int) string) []map[string]any {
		answers := make([]map[string]any, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				_, _, msg := mcpPost(t, urls[i%2], key, sid, call(i))
				res, _ := msg["result"].(map[string]any)
				answers[i], _ = res["structuredContent"].(map[string]any)
			})
		}
		close(start)
		wg.Wait()
		return answers
	}

	proposed := race(40, func(i int) string {
		return toolCall("propose_action", map[string]any{"case_id": seed.Alvarez, "action": "create_deadline",
			"args":   map[string]any{"title": fmt.Sprint("Deadline ", i), "due_date": "2026-12-14", "kind": "filing"},
			"reason": "The order sets it.", "idempotency_key": fmt.Sprint("race-", i)})
	})
	got := map[string]int{}
	for _, d := range proposed {
		e, _ := d["error"].(map[string]any)
		if c, _ := e["class"].(string); c != "" {
			got[c]++
		} else {
			got[fmt.Sprint(d["status"])]++
		}
	}
	if diff := cmp.Diff(map[string]int{"pending_approval": 25, "BACKPRESSURE": 15}, got); diff != "" {
		t.Errorf("40 proposals racing across two processes (-want +got):\n%s", diff)
	}

	notes := race(50, func(int) string {
		return toolCall("add_case_note", map[string]any{"case_id": seed.Alvarez, "body": "One note, many callers.", "idempotency_key": "raced-note"})
	})
	var ids []string
	for _, d := range notes {
		r, _ := d["data"].(map[string]any)
		id, _ := r["note_id"].(string)
		ids = append(ids, id)
	}
	for _, id := range ids {
		if id == "" || id != ids[0] {
			t.Fatalf("the 50 receipts name %v, want one note", ids)
		}
	}

	// The table itself: the counter and the note rows.
	eng, err := engine.FromEnv(func(k string) string {
		return map[string]string{"STORE_ENGINE": "dynamodb", "DYNAMODB_TABLE": "custody", "DYNAMODB_ENDPOINT": endpoint}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := eng.Open(context.Background(), datadir.Dir(data), dynamoengine.Open)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	counter, err := st.Get(context.Background(), proposals.CounterKey(seed.DemoTenant, seed.Alvarez))
	if err != nil || proposals.Pending(&counter) != 25 {
		t.Errorf("the matter's counter = %d (%v), want 25", proposals.Pending(&counter), err)
	}
	all, err := records.NewRepo(st).Notes(context.Background(), seed.DemoTenant, seed.Alvarez)
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, n := range all {
		if n.Body == "One note, many callers." {
			rows++
		}
	}
	if rows != 1 {
		t.Errorf("%d note rows, want 1", rows)
	}
}
