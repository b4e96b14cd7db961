package ondynamo_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/tools"
)

// registerAskingTaskFixture adds fixture_ask_two: a task tool that asks two
// questions at once, then answers with both answers.
func registerAskingTaskFixture(reg *tools.Registry) error {
	return tools.Register(reg, tools.Spec{Name: "fixture_ask_two", Title: "Two questions (test fixture)", Scope: auth.ScopeRead,
		Description: "Asks two questions at once and answers with both answers.", TaskSupport: tools.TaskOptional},
		func(ctx context.Context, c *tools.Call, _ struct{}) (tools.Raw, error) {
			var answers []string
			pending := false
			for _, key := range []string{"first", "second"} {
				raw, err := c.Peer.Ask(ctx, key, "elicitation/create", map[string]any{"message": key + "?",
					"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}}})
				switch {
				case errors.Is(err, mcp.ErrInputRequired):
					pending = true
				case err != nil:
					return tools.Raw{}, err
				default:
					answers = append(answers, string(raw))
				}
			}
			if pending {
				return tools.Raw{}, mcp.ErrInputRequired
			}
			return tools.Raw{Content: []mcp.Content{mcp.TextContent(fmt.Sprint(answers))}}, nil
		})
}

// The 2026-07-28 extension's round trips on DynamoDB, pinned like the
// 2025-11-25 dialect's: creation is the request's one transaction; each
// task method is the request's batch read, the row's strongly consistent
// read and the one write (tasks/update's answers and tasks/cancel's
// cancellation join it); answers racing on the one row all land through its
// version condition on the real engine.
func TestTaskRoundTripsOfThe2026ExtensionOnDynamoDBArePinned(t *testing.T) {
	q := servertest.TaskQueue(t)
	env := newDynEnv(t, servertest.Options{TaskQueue: q, RegisterExtra: registerAskingTaskFixture})
	c := env.Stateless(servertest.Attorney, `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`)
	deliver := func() {
		t.Helper()
		recs, err := q.Receive(context.Background(), 1, time.Second)
		if err != nil || len(recs) != 1 {
			t.Fatalf("receive: %v %v", recs, err)
		}
		if resp, err := env.Server.Tasks.Handle(context.Background(), events.SQSEvent{Records: recs}); err != nil || len(resp.BatchItemFailures) > 0 {
			t.Fatalf("worker: %v %v", resp, err)
		}
	}
	call := func(method string, params map[string]any) map[string]any {
		t.Helper()
		r := c.Post(t, method, params)
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", method, r.Status, r.Body)
		}
		res, _ := r.JSON(t)["result"].(map[string]any)
		if res == nil {
			t.Fatalf("%s: %s", method, r.Body)
		}
		return res
	}
	answer := func(text string) map[string]any {
		return map[string]any{"action": "accept", "content": map[string]any{"answer": text}}
	}
	read := cost{"BatchGetItem": 1, "GetItem": 1, "PutItem": 1} // the task row; the audit row alone (issue 19, item 6)
	env.ops.take()

	id, _ := call("tools/call", map[string]any{"name": "fixture_ask_two", "arguments": map[string]any{}})["taskId"].(string)
	if diff := cmp.Diff(cost{"BatchGetItem": 1, "TransactWriteItems": 1}, cost(env.ops.take())); diff != "" || id == "" {
		t.Fatalf("tools/call (task %q): DynamoDB requests (-want +got):\n%s", id, diff)
	}
	deliver() // the tool asks: the task waits for input
	env.ops.take()
	for _, st := range []struct {
		name   string
		method string
		params map[string]any
		want   cost
	}{
		{"tasks/get", "tasks/get", map[string]any{"taskId": id}, read},
		// The answer's conditional write with the audit row: a transaction.
		{"tasks/update with one of the two answers", "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"first": answer("one")}},
			cost{"BatchGetItem": 1, "GetItem": 1, "TransactWriteItems": 1}},
	} {
		call(st.method, st.params)
		if diff := cmp.Diff(st.want, cost(env.ops.take())); diff != "" {
			t.Errorf("%s: DynamoDB requests (-want +got):\n%s", st.name, diff)
		}
	}
	if got := call("tasks/get", map[string]any{"taskId": id}); got["status"] != "input_required" || len(got["inputRequests"].(map[string]any)) != 1 {
		t.Fatalf("after a partial update: %v, want input_required asking one question", got)
	}

	// Racing answers to the same open question: the first lands, the rest
	// are ignored; the task is queued once.
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() { // only Errorf off the test's goroutine
			r := c.Post(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"second": answer(fmt.Sprint("two-", i))}})
			if r.Status != http.StatusOK {
				t.Errorf("tasks/update: HTTP %d %s", r.Status, r.Body)
			}
		})
	}
	wg.Wait()
	deliver()
	done := call("tasks/get", map[string]any{"taskId": id})
	if done["status"] != "completed" {
		t.Fatalf("the task = %v, want completed", done)
	}
	if recs, _ := q.Receive(context.Background(), 1, 10*time.Millisecond); len(recs) != 0 {
		t.Errorf("the task was queued more than once: %d more messages", len(recs))
	}
	env.ops.take()
	call("tasks/cancel", map[string]any{"taskId": id})
	if diff := cmp.Diff(read, cost(env.ops.take())); diff != "" {
		t.Errorf("tasks/cancel of a terminal task (the acknowledgement): DynamoDB requests (-want +got):\n%s", diff)
	}
}
