package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/shared/admin"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// buildTools builds scripts/dev (with its DynamoDB engine), scripts/custodyctl
// and the minidyn emulator into a temp dir with one `go build`. They are built without the
// race detector even under `go test -race`: instrumented, seeding the demo
// through two processes takes seconds instead of a fraction of one, and
// after `make vet` every package they need is already compiled this way
// (their code runs under -race in process in the other tests).
func buildTools(t testing.TB) (dev, ctl, minidyn string) {
	t.Helper()
	bin := t.TempDir()
	// -tags dynamodb: the dev server's DynamoDB engine (scripts/dev/dynamodb.go).
	args := []string{"build", "-tags", "dynamodb", "-o", bin + string(filepath.Separator),
		"github.com/custodymcp/custody/scripts/dev", "github.com/custodymcp/custody/scripts/custodyctl",
		"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest/cmd/minidyn"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	if out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("built dev, custodyctl and minidyn in %v", time.Since(start).Round(time.Millisecond))
	return filepath.Join(bin, "dev"), filepath.Join(bin, "custodyctl"), filepath.Join(bin, "minidyn")
}

// proc is a child process whose stdout lines are scanned as they come and
// whose output is logged if the test fails. It is stopped (SIGTERM, then
// SIGKILL after 5 s) when the test ends, pass or fail.
type proc struct {
	name string
	cmd  *exec.Cmd

	mu     sync.Mutex
	lines  []string
	notify chan struct{} // closed and replaced at every new line
	stderr bytes.Buffer
	done   chan struct{}
}

// start runs bin with args and env (added to a minimal environment).
func start(t testing.TB, name, bin string, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	setDeathSignal(cmd)
	p := &proc{name: name, cmd: cmd, notify: make(chan struct{}), done: make(chan struct{})}
	cmd.Stderr = &lockedWriter{mu: &p.mu, w: &p.stderr}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			close(p.notify)
			p.notify = make(chan struct{})
			p.mu.Unlock()
		}
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			p.mu.Lock()
			t.Logf("%s stdout:\n%s\n%s stderr:\n%s", name, strings.Join(p.lines, "\n"), name, p.stderr.String())
			p.mu.Unlock()
		}
	})
	return p
}

// await returns the first submatch of re in a stdout line, waiting up to
// timeout; it fails the test if the process exits or time runs out first.
func (p *proc) await(t testing.TB, re *regexp.Regexp, timeout time.Duration) string {
	t.Helper()
	deadline := time.After(timeout)
	seen := 0
	for {
		p.mu.Lock()
		for ; seen < len(p.lines); seen++ {
			if m := re.FindStringSubmatch(p.lines[seen]); m != nil {
				p.mu.Unlock()
				return m[1]
			}
		}
		next := p.notify
		p.mu.Unlock()
		select {
		case <-next:
		case <-p.done:
			p.mu.Lock()
			defer p.mu.Unlock()
			t.Fatalf("%s exited (%v) before printing %s:\n%s", p.name, p.cmd.ProcessState, re, p.stderr.String())
		case <-deadline:
			t.Fatalf("%s printed no %s within %v", p.name, re, timeout)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

var (
	minidynURL = regexp.MustCompile(`^(http://127\.0\.0\.1:\d+)$`)
	serving    = regexp.MustCompile(`serving MCP at (http://\S+/mcp) on DynamoDB`)
)

// mcpPost sends one JSON-RPC body to an /mcp URL, in session sid unless it
// is "", and returns the status, headers and decoded body (nil if not JSON).
func mcpPost(t testing.TB, url, key, sid, body string) (int, http.Header, map[string]any) {
	t.Helper()
	headers := []string{"Authorization: Bearer " + key}
	if sid != "" {
		headers = append(headers, "Mcp-Session-Id: "+sid, "MCP-Protocol-Version: 2025-11-25")
	}
	r := servertest.DoURL(t, url, http.MethodPost, []byte(body), headers...)
	var msg map[string]any
	_ = json.Unmarshal(r.Body, &msg)
	return r.Status, r.Header, msg
}

func toolCall(name string, args map[string]any) string {
	a, _ := json.Marshal(args)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, name, a)
}

// refusalOf returns a tools/call answer's refusal class ("" for a success).
func refusalOf(msg map[string]any) string {
	res, ok := msg["result"].(map[string]any)
	if !ok {
		return "no result"
	}
	return servertest.RefusalClass(res)
}

// TestTwoDevServersOnOneTableAreOneService runs the emulator and two dev
// servers as separate processes on loopback — one table, one data folder
// (so one cursor key, admin token and dev key) — and shows that nothing
// that matters lives in a process: a session minted through A serves
// tools/call through B; a key minted by custodyctl works at once on both;
// revoked through A's admin endpoint, it fails at once through B (401); a
// principal screened by custodyctl is refused on both on the next call; a
// session deleted through B is gone on A.
func TestTwoDevServersOnOneTableAreOneService(t *testing.T) {
	devBin, ctlBin, minidynBin := buildTools(t)
	emu := start(t, "minidyn", minidynBin, nil, "-addr", "127.0.0.1:0", "-table", "custody")
	endpoint := emu.await(t, minidynURL, 30*time.Second)

	data := t.TempDir()
	env := []string{"STORE_ENGINE=dynamodb", "DYNAMODB_TABLE=custody", "DYNAMODB_ENDPOINT=" + endpoint}
	// A seeds the demo firm and mints the dev key; B starts once A serves,
	// finds both and reads the same secrets.
	a := start(t, "dev A", devBin, env, "-addr", "127.0.0.1:0", "-data", data)
	urlA := a.await(t, serving, 2*time.Minute)
	b := start(t, "dev B", devBin, env, "-addr", "127.0.0.1:0", "-data", data)
	urlB := b.await(t, serving, time.Minute)
	if urlA == urlB {
		t.Fatalf("both servers at %s", urlA)
	}
	dir := datadir.Dir(data)
	devKey, err := dir.Read(datadir.DevKeyFile)
	if err != nil {
		t.Fatal(err)
	}

	// A session minted through A is used through B.
	status, h, _ := mcpPost(t, urlA, devKey, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"two-servers","version":"0"}}}`)
	sid := h.Get("Mcp-Session-Id")
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize through A: %d, session %q", status, sid)
	}
	if status, _, msg := mcpPost(t, urlB, devKey, sid, toolCall("get_matter", map[string]any{"case_id": seed.Meridian})); status != http.StatusOK || refusalOf(msg) != "" {
		t.Fatalf("tools/call through B in A's session: %d %v", status, msg)
	}

	// custodyctl on the same table: a key it mints works on both at once.
	ctl := func(args ...string) (stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(ctlBin, append([]string{"--data", data}, args...)...)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("custodyctl %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
		}
		return out.String(), errOut.String()
	}
	out, notes := ctl("keys", "mint", "--owner", seed.DemoAttorney, "--scopes", "read docs:read", "--label", "two servers")
	key := strings.TrimSpace(out)
	credID := regexp.MustCompile(`minted (cred_\w+)`).FindStringSubmatch(notes)
	if len(credID) != 2 {
		t.Fatalf("keys mint said %q / %q", out, notes)
	}
	for name, url := range map[string]string{"A": urlA, "B": urlB} {
		if status, _, msg := mcpPost(t, url, key, sid, toolCall("list_matters", nil)); status != http.StatusOK || refusalOf(msg) != "" {
			t.Fatalf("the minted key in the session through %s: %d %v", name, status, msg)
		}
	}

	// A principal screened through custodyctl is refused on both servers.
	ctl("screen", "add", "--case", seed.Meridian, "--principal", seed.DemoAttorney)
	for name, url := range map[string]string{"A": urlA, "B": urlB} {
		if _, _, msg := mcpPost(t, url, devKey, sid, toolCall("get_matter", map[string]any{"case_id": seed.Meridian})); refusalOf(msg) != "NOT_FOUND" {
			t.Errorf("the screened attorney through %s: %v, want NOT_FOUND", name, msg)
		}
	}
	ctl("screen", "remove", "--case", seed.Meridian, "--principal", seed.DemoAttorney)

	// Revoked through A's admin endpoint, the key fails through B at once.
	token, err := dir.Read(datadir.AdminTokenFile)
	if err != nil {
		t.Fatal(err)
	}
	adminA, err := admin.NewClient(strings.TrimSuffix(strings.TrimPrefix(urlA, "http://"), "/mcp"), token, nil)
	if err != nil {
		t.Fatal(err)
	}
	status, _, err = adminA.Do(context.Background(), http.MethodPost, "/admin/keys/"+credID[1]+"/revoke?tenant="+seed.DemoTenant, nil)
	if err != nil || status != http.StatusNoContent {
		t.Fatalf("revoke through A's admin endpoint: %d, %v; want 204", status, err)
	}
	if status, h, _ := mcpPost(t, urlB, key, sid, toolCall("list_matters", nil)); status != http.StatusUnauthorized || h.Get("WWW-Authenticate") == "" {
		t.Errorf("the revoked key through B: %d, want 401 with a challenge", status)
	}

	// A session deleted through B is gone on A.
	del, _ := http.NewRequest(http.MethodDelete, urlB, nil)
	del.Header.Set("Authorization", "Bearer "+devKey)
	del.Header.Set("Mcp-Session-Id", sid)
	del.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(del)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE through B: %d", resp.StatusCode)
	}
	if status, _, _ := mcpPost(t, urlA, devKey, sid, `{"jsonrpc":"2.0","id":9,"method":"ping"}`); status != http.StatusNotFound {
		t.Errorf("the deleted session through A: %d, want 404", status)
	}
}
