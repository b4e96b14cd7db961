package conformance

import (
	"context"
	"fmt"
	"time"

	"github.com/custodymcp/custody/shared/tools"
)

// SlowTaskTool is the fixture of Custody's own task tests against the dev
// server (the TypeScript SDK interop and the two-process tests of
// scripts/dev): a tool that may run as a task and takes its time. The
// 2025-era suite calls no task fixture; the 2026 extension's fixtures
// (slow_compute and the rest) come with issue 12.
const SlowTaskTool = "test_slow_task"

// SlowTaskInput is test_slow_task's input.
type SlowTaskInput struct {
	Seconds int `json:"seconds" jsonschema:"How long to run, in seconds." schema:"minimum=0;maximum=600"`
}

// registerTasks adds the task fixtures.
func registerTasks(reg *tools.Registry) error {
	s := spec(SlowTaskTool, "Slow task",
		"Runs for the given number of seconds, reporting progress each second, then answers; runs synchronously or as a task (taskSupport optional). A cancelled task stops at once.")
	s.TaskSupport = tools.TaskOptional
	return tools.Register(reg, s, func(ctx context.Context, c *tools.Call, in SlowTaskInput) (tools.Raw, error) {
		for i := range in.Seconds {
			c.Peer.Progress(float64(i), float64(in.Seconds), fmt.Sprintf("%d of %d seconds", i, in.Seconds))
			if err := pause(ctx, time.Second); err != nil {
				return tools.Raw{}, err
			}
		}
		return text(fmt.Sprintf("Ran for %d seconds.", in.Seconds)), nil
	})
}
