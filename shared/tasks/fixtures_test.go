package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/auth"
	custodygate "github.com/custodymcp/custody/shared/gate"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/queue/memqueue"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/sweep"
	"github.com/custodymcp/custody/shared/tasks"
	"github.com/custodymcp/custody/shared/tools"
)

const rev = "2025-11-25"

// gate is the channel-gated side-effect counter fixture: a tool that
// counts each execution as it starts (a side effect a second run would
// repeat), says so on entered, and waits on release (or its context).
type gate struct {
	runs    atomic.Int64
	asks    atomic.Int64 // runs of the asking fixtures (fixture_ask_many, fixture_before)
	entered chan struct{}
	release chan struct{}
	once    *sync.Once
	// onStop, when set, hears of a run whose context ended before the
	// release (set before the run starts).
	onStop func(error)
}

func newGate() *gate {
	g := &gate{}
	g.reset()
	return g
}

// reset closes the gate again, for the next run (between runs only).
func (g *gate) reset() {
	g.entered, g.release, g.once = make(chan struct{}, 64), make(chan struct{}), &sync.Once{}
}

// open lets every waiting and future run go on.
func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

// wait blocks until a run has entered the tool.
func (g *gate) wait(t *testing.T) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(time.Minute):
		t.Fatal("the tool never ran")
	}
}

func (g *gate) pass(ctx context.Context) error {
	g.runs.Add(1)
	g.entered <- struct{}{}
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		if g.onStop != nil {
			g.onStop(ctx.Err())
		}
		return ctx.Err()
	}
}

// EmptyInput is the input of fixtures that take none.
type EmptyInput struct{}

// AskInput asks the elicitation fixture a question.
type AskInput struct {
	Question string `json:"question"`
}

// Fixture tool names.
const (
	gatedTool    = "fixture_gated"
	failingTool  = "fixture_failing"
	bigTool      = "fixture_big"
	askTool      = "fixture_ask"
	progressTool = "fixture_progress"
	syncTool     = "fixture_sync"
	panicTool    = "fixture_panics"
	askManyTool  = "fixture_ask_many"
	beforeTool   = "fixture_before"
)

// askMany is how many questions fixture_ask_many asks at once.
const askMany = 8

// elicitText is a form question for one text field "answer".
func elicitText(message string) map[string]any {
	return map[string]any{"message": message, "requestedSchema": map[string]any{"type": "object",
		"properties": map[string]any{"answer": map[string]any{"type": "string"}}}}
}

// bigText is fixture_big's answer: well over the store's 400 KB item limit.
var bigText = strings.Repeat("All work and no play makes a long result. ", 11_000)

// fixtures registers the fixtures, each behind the read scope.
func fixtures(g *gate) func(*tools.Registry) error {
	spec := func(name string, support tools.TaskSupport) tools.Spec {
		return tools.Spec{Name: name, Title: name, Description: "A task test fixture.", Scope: auth.ScopeRead, TaskSupport: support}
	}
	return func(reg *tools.Registry) error {
		for _, err := range []error{
			tools.Register(reg, spec(gatedTool, tools.TaskOptional), func(ctx context.Context, _ *tools.Call, _ EmptyInput) (tools.Raw, error) {
				if err := g.pass(ctx); err != nil {
					return tools.Raw{}, err
				}
				return tools.Raw{Content: []mcp.Content{mcp.TextContent(fmt.Sprintf("released after run %d", g.runs.Load()))}}, nil
			}),
			tools.Register(reg, spec(failingTool, tools.TaskOptional), func(ctx context.Context, _ *tools.Call, _ EmptyInput) (tools.Raw, error) {
				if err := g.pass(ctx); err != nil {
					return tools.Raw{}, err
				}
				return tools.Raw{}, tools.Refuse(tools.ClassNotFound, "No such record exists for this fixture.")
			}),
			tools.Register(reg, spec(bigTool, tools.TaskRequired), func(context.Context, *tools.Call, EmptyInput) (tools.Raw, error) {
				return tools.Raw{Content: []mcp.Content{mcp.TextContent(bigText)}}, nil
			}),
			tools.Register(reg, spec(askTool, tools.TaskOptional), func(ctx context.Context, c *tools.Call, in AskInput) (tools.Raw, error) {
				ans, err := c.Peer.Ask(ctx, "confirm", "elicitation/create", map[string]any{
					"message": in.Question, "requestedSchema": map[string]any{"type": "object",
						"properties": map[string]any{"answer": map[string]any{"type": "string"}}}})
				if err != nil {
					return tools.Raw{}, err
				}
				return tools.Raw{Content: []mcp.Content{mcp.TextContent("answer: " + string(ans))}}, nil
			}),
			tools.Register(reg, spec(progressTool, tools.TaskOptional), func(ctx context.Context, c *tools.Call, _ EmptyInput) (tools.Raw, error) {
				for i := 1; i <= 3; i++ {
					c.Peer.Progress(float64(i), 3, fmt.Sprintf("step %d", i))
					if i == 2 {
						c.Peer.Progress(1, 3, "a step back, which is never sent")
					}
					time.Sleep(60 * time.Millisecond) // longer than a progress write's spacing
				}
				if err := g.pass(ctx); err != nil {
					return tools.Raw{}, err
				}
				return tools.Raw{Content: []mcp.Content{mcp.TextContent("done")}}, nil
			}),
			tools.Register(reg, spec(syncTool, ""), func(context.Context, *tools.Call, EmptyInput) (tools.Raw, error) {
				return tools.Raw{Content: []mcp.Content{mcp.TextContent("sync")}}, nil
			}),
			tools.Register(reg, spec(panicTool, tools.TaskOptional), func(context.Context, *tools.Call, EmptyInput) (tools.Raw, error) {
				panic("fixture_panics panics")
			}),
			// Asks askMany questions at once (q0 … q7), and answers with
			// every answer in order.
			tools.Register(reg, spec(askManyTool, tools.TaskOptional), func(ctx context.Context, c *tools.Call, _ EmptyInput) (tools.Raw, error) {
				g.asks.Add(1)
				var answers []string
				pending := false
				for i := range askMany {
					raw, err := c.Peer.Ask(ctx, fmt.Sprintf("q%d", i), "elicitation/create", elicitText(fmt.Sprintf("Question %d?", i)))
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
				return tools.Raw{Content: []mcp.Content{mcp.TextContent(strings.Join(answers, "\n"))}}, nil
			}),
			tools.Register(reg, before(spec(beforeTool, tools.TaskRequired)), func(ctx context.Context, c *tools.Call, _ EmptyInput) (tools.Raw, error) {
				g.asks.Add(1)
				ans, err := c.Peer.Ask(ctx, "name", "elicitation/create", elicitText("Your name?"))
				if err != nil {
					return tools.Raw{}, err
				}
				return tools.Raw{Content: []mcp.Content{mcp.TextContent("hello " + string(ans))}}, nil
			}),
		} {
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// before makes a fixture ask for "name" before its task is created
// (tools.Spec.BeforeTask).
func before(s tools.Spec) tools.Spec {
	s.BeforeTask = func(ctx context.Context, p mcp.Peer, _ json.RawMessage) error {
		_, err := p.Ask(ctx, "name", "elicitation/create", elicitText("Your name?"))
		return err
	}
	return s
}

// taskEnv is an Env that serves tasks, with the fixtures and a queue.
type taskEnv struct {
	*servertest.Env
	q    *memqueue.Queue
	gate *gate
}

// newTaskEnv starts an Env serving tasks. worker starts a dispatcher;
// without it the test delivers messages itself.
func newTaskEnv(t *testing.T, worker bool, tune func(*tasks.Options)) *taskEnv {
	t.Helper()
	return newTaskEnvLimited(t, worker, tune, nil)
}

// newTaskEnvLimited is newTaskEnv with the gate's rate limits (nil: the
// defaults).
func newTaskEnvLimited(t *testing.T, worker bool, tune func(*tasks.Options), limits ratelimit.Limits) *taskEnv {
	t.Helper()
	g := newGate()
	q := servertest.TaskQueue(t)
	to := servertest.FastTasks()
	if tune != nil {
		tune(&to)
	}
	env := servertest.New(t, servertest.Options{TaskQueue: q, TaskOptions: to, RegisterExtra: fixtures(g), Limits: limits})
	if worker {
		env.StartWorker(t, q, 4)
	}
	t.Cleanup(func() { g.open() }) // first of the cleanups: a gated run ends before the worker stops
	return &taskEnv{Env: env, q: q, gate: g}
}

// receive takes the next task message off the queue (without deleting it).
func (e *taskEnv) receive(t *testing.T) events.SQSMessage {
	t.Helper()
	recs, err := e.q.Receive(context.Background(), 1, time.Second)
	if err != nil || len(recs) != 1 {
		t.Fatalf("receive a task message: %d records, %v", len(recs), err)
	}
	return recs[0]
}

// eventOf is an SQS event of one record.
func eventOf(rec events.SQSMessage) events.SQSEvent {
	return events.SQSEvent{Records: []events.SQSMessage{rec}}
}

// deliver runs the worker on one record, as a dispatcher would.
func (e *taskEnv) deliver(ctx context.Context, t *testing.T, rec events.SQSMessage) events.SQSEventResponse {
	t.Helper()
	resp, err := e.Server.Tasks.Handle(ctx, eventOf(rec))
	if err != nil {
		t.Errorf("Handle: %v", err)
	}
	return resp
}

// row reads a task's row as the worker would.
func (e *taskEnv) row(t *testing.T, role, id string) store.Item {
	t.Helper()
	c := e.Creds[role]
	it, err := e.Store.Get(context.Background(), tasks.Key(c.Tenant, c.ID, id))
	if err != nil {
		t.Fatalf("read task %s: %v", id, err)
	}
	return it
}

// errorOf returns a JSON-RPC answer's error code (0 without an error).
func errorOf(msg map[string]any) (code int, data map[string]any) {
	e, ok := msg["error"].(map[string]any)
	if !ok {
		return 0, nil
	}
	c, _ := e["code"].(float64)
	d, _ := e["data"].(map[string]any)
	return int(c), d
}

// resultOf returns a JSON-RPC answer's result, failing without one.
func resultOf(t *testing.T, msg map[string]any) map[string]any {
	t.Helper()
	res, ok := msg["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result in %v", msg)
	}
	return res
}

// taskAudit returns the demo tenant's audit rows of a task, by outcome.
func taskAudit(t *testing.T, env *servertest.Env, id string) map[string][]audit.Record {
	t.Helper()
	rows, err := audit.Day(context.Background(), env.Store, seed.DemoTenant, env.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]audit.Record{}
	for _, r := range rows {
		if r.TaskID == id {
			out[r.Method+" "+r.Outcome] = append(out[r.Method+" "+r.Outcome], r)
		}
	}
	return out
}

// messageFor is the queue message of a task, as the worker receives it.
func messageFor(t *testing.T, env *servertest.Env, role, id string) events.SQSMessage {
	t.Helper()
	c := env.Creds[role]
	body, err := queue.Message{Tenant: c.Tenant, TaskID: id, CredentialID: c.ID}.Body()
	if err != nil {
		t.Fatal(err)
	}
	return events.SQSMessage{MessageId: "m-" + id, Body: body}
}

// bucketKey is the read lane's rate bucket of a credential.
func bucketKey(c *auth.Credential) store.Key {
	return ratelimit.Key(c.KeyHash, custodygate.Surface, ratelimit.LaneRead)
}

// actions collects sweep reports by duty.
func actions(reps []sweep.Report) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, r := range reps {
		if len(r.Actions) > 0 {
			out[r.Duty] = r.Actions
		}
	}
	return out
}
