package tasks_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	validator "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/storetest"
)

// strict compiles a tool's strict envelope schema (tools.Registry.StrictSchema).
func strict(t *testing.T, env *servertest.Env, tool string) *validator.Schema {
	t.Helper()
	doc, err := validator.UnmarshalJSON(bytes.NewReader(env.Server.Registry.StrictSchema(tool)))
	if err != nil {
		t.Fatal(err)
	}
	c := validator.NewCompiler()
	if err := c.AddResource("urn:strict", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("urn:strict")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// validates checks a structuredContent against the tool's strict schema.
func validates(t *testing.T, env *servertest.Env, tool string, sc any) {
	t.Helper()
	b, _ := json.Marshal(sc)
	v, err := validator.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := strict(t, env, tool).Validate(v); err != nil {
		t.Errorf("%s: the result violates its strict envelope schema: %v", tool, err)
	}
}

func TestTheTaskToolsAnswerTheirStrictEnvelopesSynchronouslyAndAsTasks(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	s := env.Initialize(t, servertest.Attorney, rev)
	for _, matter := range seed.DemoMatters {
		t.Run(matter, func(t *testing.T) {
			export := s.Tool(t, "export_fact_record", map[string]any{"case_id": matter}) // optional: synchronous too
			sc := servertest.Structured(t, export)
			validates(t, env.Env, "export_fact_record", sc)
			got := s.Tool(t, "get_fact_export", map[string]any{"case_id": matter, "export_id": sc["export_id"]})
			validates(t, env.Env, "get_fact_export", servertest.Structured(t, got))
			if other := s.Tool(t, "get_fact_export", map[string]any{"case_id": seed.DemoMatters[0], "export_id": "fx" + strings.Repeat("0", 32)}); servertest.RefusalClass(other) != "NOT_FOUND" {
				t.Errorf("an export of nothing: %v, want NOT_FOUND", other["content"])
			}
			id := s.CreateTask(t, "audit_citations", map[string]any{"case_id": matter}, 0)
			s.AwaitTask(t, id, "completed")
			validates(t, env.Env, "audit_citations", resultOf(t, s.TaskResult(t, id))["structuredContent"])
		})
	}
}

func TestAuditCitationsReportsMatchMismatchAndUnreadablePerAssertionAndRecordsNothing(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	ctx := context.Background()
	repo := records.NewRepo(env.Store)
	facts, err := repo.Facts(ctx, seed.DemoTenant, seed.Meridian)
	if err != nil {
		t.Fatal(err)
	}
	// The audit reads the facts (the matter partition's first query), then
	// the chunks of each cited version in fact order: the first of those
	// queries, of the first fact's first citation, fails (the store is
	// unavailable just then). Two other facts are edited so that the audit
	// has more to find: a quote that is not on its pages, and a citation of
	// a version the record does not hold.
	var faulty, mismatch, missing records.Fact
	for _, f := range facts {
		if len(f.Assertions) == 0 {
			continue
		}
		doc := f.Assertions[0].DocumentID
		switch {
		case faulty.ID == "":
			faulty = f
		case mismatch.ID == "" && doc != faulty.Assertions[0].DocumentID:
			mismatch = f
			mismatch.Assertions = []records.Assertion{f.Assertions[0]}
			mismatch.Assertions[0].Quote = "Words no page of the record holds."
		case missing.ID == "" && mismatch.ID != "" && doc != faulty.Assertions[0].DocumentID:
			missing = f
			missing.Assertions = []records.Assertion{f.Assertions[0]}
			missing.Assertions[0].Version = 99
		}
	}
	for _, f := range []records.Fact{mismatch, missing} {
		it, err := records.FactItem(seed.DemoTenant, f)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.Store.Put(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	before, err := repo.Facts(ctx, seed.DemoTenant, seed.Meridian)
	if err != nil {
		t.Fatal(err)
	}
	env.Faulty.Add(storetest.Rule{Method: storetest.MethodQuery, Nth: 2, Err: store.ErrUnavailable,
		Key: storetest.Prefix(records.MatterPK(seed.DemoTenant, seed.Meridian), "")})

	s := env.Initialize(t, servertest.Attorney, rev)
	msg := s.Call(t, "tools/call", map[string]any{"name": "audit_citations", "arguments": map[string]any{"case_id": seed.Meridian},
		"task": map[string]any{}, "_meta": map[string]any{"progressToken": 41}})
	id := resultOf(t, msg)["task"].(map[string]any)["taskId"].(string)
	msgs := s.Exchange(t, "tasks/result", map[string]any{"taskId": id})
	out := resultOf(t, msgs[len(msgs)-1])["structuredContent"].(map[string]any)
	results := map[string]string{}
	reasons := map[string]string{}
	for _, c := range out["checks"].([]any) {
		c := c.(map[string]any)
		key := fmt.Sprintf("%s/%v", c["fact_id"], c["assertion"])
		results[key] = c["result"].(string)
		reasons[key], _ = c["reason"].(string)
	}
	for _, c := range []struct {
		name, key, want string
	}{
		{"a quote not on its cited pages is a mismatch", mismatch.ID + "/0", "mismatch"},
		{"a citation of a version the record lacks is unreadable", missing.ID + "/0", "unreadable"},
		{"a citation whose pages cannot be read now is unreadable, not a mismatch", faulty.ID + "/0", "unreadable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if results[c.key] != c.want || (c.want == "unreadable" && reasons[c.key] == "") {
				t.Errorf("%s: %q (%q), want %s with a reason", c.key, results[c.key], reasons[c.key], c.want)
			}
		})
	}
	counts := out["counts"].(map[string]any)
	if counts["mismatch"] != float64(1) || counts["unreadable"].(float64) < 2 || counts["match"].(float64) < 50 {
		t.Errorf("counts = %v", counts)
	}
	if out["verification_status"] != "unknown" {
		t.Errorf("roll-up %v: an unreadable citation makes it unknown", out["verification_status"])
	}
	after, err := repo.Facts(ctx, seed.DemoTenant, seed.Meridian)
	if err != nil {
		t.Fatal(err)
	}
	for i := range before {
		if !before[i].UpdatedAt.Equal(after[i].UpdatedAt) || len(before[i].Checks) != len(after[i].Checks) {
			t.Errorf("fact %s changed: the audit must record nothing", before[i].ID)
		}
	}
}

func TestAHeartbeatCommentKeepsAWaitingTasksResultStreamAlive(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	s := env.Initialize(t, servertest.Attorney, rev)
	id := s.CreateTask(t, gatedTool, map[string]any{}, 0)
	env.gate.wait(t)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":%q}}`, id)
	req, _ := http.NewRequest(http.MethodPost, env.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for _, h := range s.Headers() {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(k, strings.TrimSpace(v))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") || resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("Content-Type %q, X-Accel-Buffering %q: want an unbuffered event stream", ct, resp.Header.Get("X-Accel-Buffering"))
	}
	rd := bufio.NewReader(resp.Body)
	for beats := 0; beats < 2; {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before two heartbeats: %v", err)
		}
		if strings.HasPrefix(line, ":") {
			beats++
		}
		if strings.HasPrefix(line, "data: {") {
			t.Fatalf("a message before the release: %s", line)
		}
	}
	env.gate.open()
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal("the stream ended without the result")
		}
		if strings.HasPrefix(line, "data: {") {
			if !strings.Contains(line, "released after run") {
				t.Errorf("last message %s, want the result", line)
			}
			return
		}
	}
}

func TestCancellingARunningTaskStopsItsToolAtTheNextLeaseRenewal(t *testing.T) {
	env := newTaskEnv(t, true, nil)
	s := env.Initialize(t, servertest.Attorney, rev)
	stopped := make(chan error, 1)
	env.gate.onStop = func(err error) { stopped <- err }
	id := s.CreateTask(t, gatedTool, map[string]any{}, 0)
	env.gate.wait(t)
	if got := resultOf(t, s.Call(t, "tasks/cancel", map[string]any{"taskId": id})); got["status"] != "cancelled" {
		t.Fatalf("tasks/cancel = %v", got)
	}
	select {
	case err := <-stopped:
		if err == nil {
			t.Errorf("the tool ended without its context ending")
		}
	case <-time.After(time.Minute):
		t.Fatal("the cancelled task's tool kept running")
	}
	if st := env.row(t, servertest.Attorney, id).String("status"); st != "cancelled" {
		t.Errorf("after the tool stopped the task is %s, want still cancelled", st)
	}
	if code, data := errorOf(s.TaskResult(t, id)); code != mcp.CodeInternalError || data["status"] != "cancelled" {
		t.Errorf("tasks/result: %d %v", code, data)
	}
}
