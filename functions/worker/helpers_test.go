package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/lambdaio/rietest"
	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/queue/memqueue"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
	"github.com/custodymcp/custody/shared/tasks"
)

func TestMain(m *testing.M) {
	code := m.Run()
	rietest.Cleanup()
	os.Exit(code)
}

const rev = "2025-11-25"

// wire stands in front of the DynamoDB emulator and fails or holds the
// requests that touch chosen tasks, as a throttled partition or a slow
// write would: the engine, the SDK's retries and the worker's handling run
// as in production.
type wire struct {
	mu sync.Mutex
	// throttled tasks: every UpdateItem and TransactWriteItems naming one
	// is answered ProvisionedThroughputExceededException.
	throttled map[string]bool
	// held tasks: a TransactWriteItems naming one (the outcome) waits until
	// its channel closes; entered hears of it.
	held    map[string]chan struct{}
	entered chan string
}

func newWire() *wire {
	return &wire{throttled: map[string]bool{}, held: map[string]chan struct{}{}, entered: make(chan string, 16)}
}

func (w *wire) throttle(id string) { w.mu.Lock(); w.throttled[id] = true; w.mu.Unlock() }

// hold makes the outcome of task id wait; the returned func releases it.
func (w *wire) hold(id string) (release func()) {
	ch := make(chan struct{})
	w.mu.Lock()
	w.held[id] = ch
	w.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

func (w *wire) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		target := r.Header.Get("X-Amz-Target")
		write := strings.HasSuffix(target, ".UpdateItem") || strings.HasSuffix(target, ".TransactWriteItems")
		w.mu.Lock()
		var throttled bool
		var wait chan struct{}
		var waitID string
		for id := range w.throttled {
			throttled = throttled || (write && bytes.Contains(body, []byte(id)))
		}
		for id, ch := range w.held {
			if strings.HasSuffix(target, ".TransactWriteItems") && bytes.Contains(body, []byte(id)) {
				wait, waitID = ch, id
			}
		}
		w.mu.Unlock()
		switch {
		case throttled:
			rw.Header().Set("Content-Type", "application/x-amz-json-1.0")
			rw.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(rw, `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"throttled by the test"}`)
			return
		case wait != nil:
			w.entered <- waitID
			<-wait
		}
		next.ServeHTTP(rw, r)
	})
}

// workerEnv is a DynamoDB emulator on loopback (reachable from other
// processes) behind a wire, with Custody's table, the demo firm and its
// keys, and a front: the /mcp composition over the same table, whose task
// queue is in process, so a test takes the messages /mcp sent and hands
// them to the worker as Lambda's event source mapping would.
type workerEnv struct {
	*servertest.Env
	URL   string // the emulator's
	Table string
	Wire  *wire
	Q     *memqueue.Queue
	S     *servertest.Session
}

func newWorkerEnv(t *testing.T) *workerEnv {
	t.Helper()
	w := newWire()
	emu := dynamotest.NewServer(t, w.middleware)
	client := emu.Client()
	table := dynamotest.CreateTable(t, client)
	q := servertest.TaskQueue(t)
	env := servertest.New(t, servertest.Options{Store: dynamostore.New(client, table, dynamostore.Options{}),
		Clock: servertest.NewClock(time.Now()), TaskQueue: q})
	return &workerEnv{Env: env, URL: emu.URL, Table: table, Wire: w, Q: q, S: env.Initialize(t, servertest.Attorney, rev)}
}

// cursorKeyHex is the front's cursor key (servertest's), which the worker
// is given too: one composition.
var cursorKeyHex = hex.EncodeToString(bytes.Repeat([]byte{7}, 32))

// env is the worker's environment for an emulator run.
func (e *workerEnv) env() map[string]string {
	return map[string]string{
		"DYNAMODB_TABLE": e.Table, "DYNAMODB_ENDPOINT": e.URL, "LOCAL_CURSOR_KEY_HEX": cursorKeyHex,
		"CURSOR_KEY_SECRET_ARN": "", "AUDIT_RETENTION_DAYS": "", "LOG_LEVEL": "INFO",
	}
}

// createTask creates an export of a demo matter as a task through /mcp and
// returns its id and the message /mcp sent for it (received, not deleted).
func (e *workerEnv) createTask(t *testing.T) (string, events.SQSMessage) {
	t.Helper()
	id := e.S.CreateTask(t, "export_fact_record", map[string]any{"case_id": seed.DemoMatters[0]}, 600_000)
	recs, err := e.Q.Receive(context.Background(), 1, time.Second)
	if err != nil || len(recs) != 1 {
		t.Fatalf("the task's message: %v %v", recs, err)
	}
	if m, err := queue.ParseMessage(recs[0].Body); err != nil || m.TaskID != id {
		t.Fatalf("the message %q names %+v (%v), want task %s", recs[0].Body, m, err, id)
	}
	return id, recs[0]
}

// row reads a task's row.
func (e *workerEnv) row(t *testing.T, id string) store.Item {
	t.Helper()
	c := e.Creds[servertest.Attorney]
	it, err := e.Store.Get(context.Background(), tasks.Key(c.Tenant, c.ID, id))
	if err != nil {
		t.Fatalf("read task %s: %v", id, err)
	}
	return it
}

// terminalRows counts a task's terminal audit rows (tools/call rows other
// than its creation).
func (e *workerEnv) terminalRows(t *testing.T, id string) int {
	t.Helper()
	rows, err := auditSinceYesterday(context.Background(), e.Store, seed.DemoTenant)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		if r.TaskID == id && r.Method == "tools/call" && r.Outcome != audit.OutcomeTaskCreated {
			n++
		}
	}
	return n
}

// sampleDir holds the sample events.
var sampleDir = filepath.Join("..", "..", "events", "worker")

// sample returns a sample event with its placeholders replaced.
func sample(t *testing.T, file string, kv ...string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(sampleDir, file))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.NewReplacer(kv...).Replace(string(raw)))
}

// placeholders fills a sample's message of the attorney's task id under
// the names {{<name>_TASK_ID}}, with the tenant and credential.
func (e *workerEnv) placeholders(ids map[string]string) []string {
	c := e.Creds[servertest.Attorney]
	kv := []string{"{{TENANT}}", c.Tenant, "{{CREDENTIAL_ID}}", c.ID}
	for name, id := range ids {
		kv = append(kv, "{{"+name+"_TASK_ID}}", id)
	}
	return kv
}

// run runs a binary with env and returns its combined output and exit
// status.
func run(t *testing.T, bin string, env []string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return string(out), 0
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
