package tasks_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/nodetest"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// TestInteropTypeScriptV2ClientWithExtTasks runs the 2026-07-28 tasks
// extension against clients nobody here wrote: the official TypeScript v2
// client pinned to 2026-07-28 with @modelcontextprotocol/ext-tasks 0.2.2
// (scripts/interop/ts-tasks, pinned by its lockfile and installed into
// .tools by nodetest). It runs a Custody tool as a task end to end, a task
// that asks through one tasks/update round, and a cancellation. Locally it
// skips when Node and npm cannot be installed, naming what is missing; with
// CI=true it fails instead.
func TestInteropTypeScriptV2ClientWithExtTasks(t *testing.T) {
	src := filepath.Join("..", "..", "scripts", "interop", "ts-tasks")
	node, dir := nodetest.Require(t, src, "interop-ts-tasks")
	if err := nodetest.CopyFile(filepath.Join(src, "tasks.test.mjs"), filepath.Join(dir, "tasks.test.mjs")); err != nil {
		t.Fatal(err)
	}
	env := newTaskEnv(t, true, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := nodetest.Command(ctx, node, dir, "--test", "--test-reporter=spec", "tasks.test.mjs")
	cmd.Env = append(cmd.Env,
		"CUSTODY_MCP_URL="+env.URL, "CUSTODY_KEY="+env.Keys[servertest.Attorney], "CUSTODY_CASE_ID="+seed.Meridian,
		"CUSTODY_ASK_TOOL="+askTool, "CUSTODY_GATED_TOOL="+gatedTool)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test tasks.test.mjs: %v\n%s", err, out)
	}
	t.Logf("node --test tasks.test.mjs:\n%s", out)
}
