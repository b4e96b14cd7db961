package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/scripts/internal/engine"
	"github.com/custodymcp/custody/scripts/internal/engine/dynamoengine"
	"github.com/custodymcp/custody/shared/admin"
	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/conformance"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/tasks"
)

// TestAWorkerProcessKilledMidToolIsReEnqueuedByTheSweeperAndCompletesOnce
// runs the emulator and two dev-server processes with the fixture profile
// on one table: a task created through A is claimed by A's worker, which
// is killed (SIGKILL) while the tool runs. Nothing of A survives but its
// rows: the task stays running under A's lease. B's sweeper, moved past
// the lease (POST /admin/sweep?at=…), re-enqueues it; B's worker runs it to
// the end; the task is completed once — one terminal audit row, two
// attempts — and its result is read through B.
func TestAWorkerProcessKilledMidToolIsReEnqueuedByTheSweeperAndCompletesOnce(t *testing.T) {
	devBin, _, minidynBin := buildTools(t)
	emu := start(t, "minidyn", minidynBin, nil, "-addr", "127.0.0.1:0", "-table", "custody")
	endpoint := emu.await(t, minidynURL, 30*time.Second)
	data := t.TempDir()
	env := []string{"STORE_ENGINE=dynamodb", "DYNAMODB_TABLE=custody", "DYNAMODB_ENDPOINT=" + endpoint}
	a := start(t, "dev A", devBin, env, "-conformance", "-addr", "127.0.0.1:0", "-data", data)
	urlA := a.await(t, serving, 2*time.Minute)
	b := start(t, "dev B", devBin, env, "-conformance", "-addr", "127.0.0.1:0", "-data", data)
	urlB := b.await(t, serving, time.Minute)

	// No credential: the fixture profile authenticates as its fixture key.
	r := servertest.DoURL(t, urlA, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"kill-a-worker","version":"0"}}}`))
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Status != http.StatusOK || sid == "" {
		t.Fatalf("initialize on A: %d %s", r.Status, r.Body)
	}
	session := []string{"Mcp-Session-Id: " + sid, "MCP-Protocol-Version: 2025-11-25"}
	call := func(url string, id int, method string, params any) map[string]any {
		t.Helper()
		p, _ := json.Marshal(params)
		r := servertest.DoURL(t, url, http.MethodPost, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p)), session...)
		var msg map[string]any
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &msg) != nil {
			t.Fatalf("%s: %d %s", method, r.Status, r.Body)
		}
		return msg
	}
	msg := call(urlA, 2, "tools/call", map[string]any{"name": conformance.SlowTaskTool,
		"arguments": map[string]any{"seconds": 3}, "task": map[string]any{"ttl": 600_000}})
	task, _ := msg["result"].(map[string]any)["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if id == "" {
		t.Fatalf("no task: %v", msg)
	}
	status := func(url string) (string, string) {
		res, _ := call(url, 3, "tasks/get", map[string]any{"taskId": id})["result"].(map[string]any)
		s, _ := res["status"].(string)
		m, _ := res["statusMessage"].(string)
		return s, m
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, m := status(urlB); m == "The task is running." {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("A's worker never claimed the task")
		}
	}
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-a.done

	// Within the lease the sweeper leaves it; past it, B re-enqueues it.
	token, err := datadir.Dir(data).Read(datadir.AdminTokenFile)
	if err != nil {
		t.Fatal(err)
	}
	adminB, err := admin.NewClient(strings.TrimSuffix(strings.TrimPrefix(urlB, "http://"), "/mcp"), token, nil)
	if err != nil {
		t.Fatal(err)
	}
	sweep := func(at time.Time) string {
		t.Helper()
		code, body, err := adminB.Do(context.Background(), http.MethodPost, "/admin/sweep?at="+at.UTC().Format(time.RFC3339Nano), nil)
		if err != nil || code != http.StatusOK {
			t.Fatalf("sweep through B's admin endpoint: %d %v", code, err)
		}
		return string(body)
	}
	if got := sweep(time.Now()); strings.Contains(got, "re-enqueued") {
		t.Errorf("a sweep within the lease re-enqueued the task: %s", got)
	}
	if got := sweep(time.Now().Add(tasks.DefaultLease + 5*time.Second)); !strings.Contains(got, `"task lease","Actions":{"re-enqueued":1}`) {
		t.Fatalf("the sweep past the lease: %s, want the task lease re-enqueued once", got)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if s, _ := status(urlB); s == "completed" {
			break
		} else if s != "working" || time.Now().After(deadline) {
			t.Fatalf("task %s, want it completed by B's worker", s)
		}
	}
	res, _ := call(urlB, 4, "tasks/result", map[string]any{"taskId": id})["result"].(map[string]any)
	if text := res["content"].([]any)[0].(map[string]any)["text"]; text != "Ran for 3 seconds." {
		t.Errorf("tasks/result through B = %v", res)
	}

	// Completed once: two claims, one terminal row.
	cfg, err := engine.FromEnv(func(k string) string {
		return map[string]string{"STORE_ENGINE": "dynamodb", "DYNAMODB_TABLE": "custody", "DYNAMODB_ENDPOINT": endpoint}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := cfg.Open(context.Background(), datadir.Dir(t.TempDir()), dynamoengine.Open)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := auditSinceYesterday(context.Background(), st, conformanceTenant)
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]int{}
	credentialID := ""
	for _, row := range rows {
		if row.TaskID == id && row.Method == "tools/call" {
			outcomes[row.Outcome]++
			credentialID = row.CredentialID
		}
	}
	if outcomes[audit.OutcomeTaskCreated] != 1 || outcomes[audit.OutcomeOK] != 1 || len(outcomes) != 2 {
		t.Errorf("the task's tools/call audit rows by outcome = %v, want one creation and one completion", outcomes)
	}
	row, err := st.Get(context.Background(), tasks.Key(conformanceTenant, credentialID, id))
	if err != nil || row.Int("attempts") != 2 {
		t.Errorf("the task row has %d attempts (%v), want two: A's, killed, and B's", row.Int("attempts"), err)
	}
}

// auditSinceYesterday returns the tenant's audit records of yesterday and
// today (UTC), so a run that crosses midnight still finds its rows.
func auditSinceYesterday(ctx context.Context, st store.Store, tenant string) ([]audit.Record, error) {
	now := time.Now()
	var out []audit.Record
	for _, day := range []time.Time{now.Add(-24 * time.Hour), now} {
		rows, err := audit.Day(ctx, st, tenant, day)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}
