package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/tools"
)

// The task fixtures. test_slow_task is the fixture of Custody's own task
// tests against the dev server (the TypeScript SDK interop and the
// two-process tests of scripts/dev). The others are those the suite's
// tasks-* scenarios of the 2026-07-28 tasks extension call by name (its
// src/scenarios/server/tasks/*.ts descriptions: greet, slow_compute,
// failing_job, protocol_error_job, confirm_delete, multi_input and
// test_tool_with_task), each answering as the scenarios' checks read it.
// Like every fixture they are Custody's own registrations, run by the
// governed pipeline: as a task, in the worker, with the creating
// credential re-admitted. Their taskSupport decides what the server does
// with a call: a client that declared the extension gets a task for every
// optional and required fixture; without it an optional one runs at once
// and a required one is refused -32021 (tasks-required-task-error).

// SlowTaskTool is test_slow_task's name.
const SlowTaskTool = "test_slow_task"

// SlowTaskInput is test_slow_task's input.
type SlowTaskInput struct {
	Seconds int `json:"seconds" jsonschema:"How long to run, in seconds." schema:"minimum=0;maximum=600"`
}

// GreetInput is greet's input.
type GreetInput struct {
	Name string `json:"name" jsonschema:"Who to greet."`
}

// SlowComputeInput is slow_compute's input.
type SlowComputeInput struct {
	Seconds int    `json:"seconds" jsonschema:"How long the computation takes, in seconds (0: at once)." schema:"minimum=0;maximum=600"`
	Label   string `json:"label,omitempty" jsonschema:"A label the result repeats."`
}

// ConfirmDeleteInput is confirm_delete's input.
type ConfirmDeleteInput struct {
	Filename string `json:"filename" jsonschema:"The file the user is asked to confirm deleting (nothing is deleted)."`
}

// userNameQuestion is test_tool_with_task's question: asked before its
// task is created (tools.Spec.BeforeTask), answered again in the worker.
func userNameQuestion() question {
	return formQuestion("user_name", "What is your name?", "name", "string")
}

// registerTasks adds the task fixtures.
func registerTasks(reg *tools.Registry) error {
	slowTask := spec(SlowTaskTool, "Slow task",
		"Runs for the given number of seconds, reporting progress each second, then answers; runs synchronously or as a task (taskSupport optional). A cancelled task stops at once.")
	slowTask.TaskSupport = tools.TaskOptional

	slowCompute := spec("slow_compute", "Slow compute",
		"Computes for the given number of seconds, reporting progress each second (a task's statusMessage), then answers with its label; runs as a task for a client that declared the tasks extension, else at once. A cancelled task stops within a second.")
	slowCompute.TaskSupport = tools.TaskOptional

	failing := spec("failing_job", "Failing job",
		"Runs only as a task; after about a second it answers with a tool execution error (isError), so its task completes with result.isError true.")
	failing.TaskSupport = tools.TaskRequired

	protocolError := spec("protocol_error_job", "Protocol error job",
		"Fails inside the server (the tool panics): the call answers a JSON-RPC error, -32603, and as a task fails with that error.")
	protocolError.TaskSupport = tools.TaskOptional

	confirm := requires(spec("confirm_delete", "Confirm delete",
		"Asks the user to confirm deleting a file (one form elicitation keyed confirm) and answers whether it would be deleted; it deletes nothing. As a task it waits input_required for the answer."), "elicitation")
	confirm.TaskSupport = tools.TaskOptional

	multi := requires(spec("multi_input", "Multiple inputs",
		"Asks two form elicitations at once (keys name and confirm), so a task waits for both; answers with both answers."), "elicitation")
	multi.TaskSupport = tools.TaskOptional

	withTask := requires(spec("test_tool_with_task", "Input, then a task",
		"Runs only as a task, after asking the user's name before the task is created (2026-07-28: a multi-round-trip input_required answer first, then the task); the task's result greets that name."), "elicitation")
	withTask.TaskSupport = tools.TaskRequired
	withTask.BeforeTask = func(ctx context.Context, p mcp.Peer, _ json.RawMessage) error {
		_, err := userName(ctx, p)
		if bad := (*errAnswer)(nil); errors.As(err, &bad) {
			return tools.Refuse(tools.ClassValidation, bad.Error())
		}
		return err
	}

	return errors.Join(
		tools.Register(reg, slowTask, func(ctx context.Context, c *tools.Call, in SlowTaskInput) (tools.Raw, error) {
			if err := steps(ctx, c.Peer, in.Seconds); err != nil {
				return tools.Raw{}, err
			}
			return text(fmt.Sprintf("Ran for %d seconds.", in.Seconds)), nil
		}),
		tools.Register(reg, spec("greet", "Greet", "Answers at once with a greeting; never runs as a task."),
			func(_ context.Context, _ *tools.Call, in GreetInput) (tools.Raw, error) {
				return text("Hello, " + in.Name + "!"), nil
			}),
		tools.Register(reg, slowCompute, func(ctx context.Context, c *tools.Call, in SlowComputeInput) (tools.Raw, error) {
			if err := steps(ctx, c.Peer, in.Seconds); err != nil {
				return tools.Raw{}, err
			}
			return text(fmt.Sprintf("Computed %q in %d seconds.", in.Label, in.Seconds)), nil
		}),
		tools.Register(reg, failing, func(ctx context.Context, _ *tools.Call, _ NoInput) (tools.Raw, error) {
			if err := pause(ctx, time.Second); err != nil {
				return tools.Raw{}, err
			}
			return tools.Raw{IsError: true, Content: []mcp.Content{mcp.TextContent("The job failed: this fixture always does.")}}, nil
		}),
		tools.Register(reg, protocolError, func(context.Context, *tools.Call, NoInput) (tools.Raw, error) {
			panic("protocol_error_job: this fixture fails inside the server")
		}),
		tools.Register(reg, confirm, mrtrInput(func(ctx context.Context, p mcp.Peer, in ConfirmDeleteInput) (string, error) {
			q := formQuestion("confirm", fmt.Sprintf("Delete %s?", in.Filename), "confirm", "boolean")
			a, err := askAll(ctx, p, q)
			if err != nil {
				return "", err
			}
			yes, accepted, err := formField[bool](q.key, a[q.key], "confirm")
			if err != nil {
				return "", err
			}
			if accepted && yes {
				return fmt.Sprintf("Deleted %s (nothing was deleted: this is a fixture).", in.Filename), nil
			}
			return fmt.Sprintf("Kept %s.", in.Filename), nil
		})),
		tools.Register(reg, multi, mrtrInput(func(ctx context.Context, p mcp.Peer, _ NoInput) (string, error) {
			name := formQuestion("name", "What is your name?", "name", "string")
			confirm := formQuestion("confirm", "Shall I go on?", "confirm", "boolean")
			a, err := askAll(ctx, p, name, confirm)
			if err != nil {
				return "", err
			}
			who, _, err := formField[string](name.key, a[name.key], "name")
			if err != nil {
				return "", err
			}
			yes, _, err := formField[bool](confirm.key, a[confirm.key], "confirm")
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Received both answers: name %q, confirm %t.", who, yes), nil
		})),
		tools.Register(reg, withTask, mrtrInput(func(ctx context.Context, p mcp.Peer, _ NoInput) (string, error) {
			who, err := userName(ctx, p)
			if err != nil {
				return "", err
			}
			return "Hello, " + who + "! This greeting was made by a task.", nil
		})),
	)
}

// userName asks test_tool_with_task's question and returns the name.
func userName(ctx context.Context, p mcp.Peer) (string, error) {
	q := userNameQuestion()
	a, err := askAll(ctx, p, q)
	if err != nil {
		return "", err
	}
	who, accepted, err := formField[string](q.key, a[q.key], "name")
	if err == nil && !accepted {
		err = &errAnswer{key: q.key, want: "an accepted answer"}
	}
	return who, err
}

// steps takes n seconds, reporting progress before each: a task's lease
// renewal writes it (so a cancellation stops the tool within a second),
// and in the 2026 era it is the task's statusMessage.
func steps(ctx context.Context, p mcp.Peer, n int) error {
	for i := range n {
		p.Progress(float64(i), float64(n), fmt.Sprintf("%d of %d seconds", i, n))
		if err := pause(ctx, time.Second); err != nil {
			return err
		}
	}
	return nil
}
