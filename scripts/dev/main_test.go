package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custodymcp/custody/scripts/internal/datadir"
)

// syncBuffer is an io.Writer safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTheFileEngineIsOneProcess starts the dev server on the file engine
// and a second one on the same data folder: the second fails at start,
// naming the lock, while the first serves /mcp with the dev key and tells
// custodyctl where its admin endpoint is (removed again at shutdown).
func TestTheFileEngineIsOneProcess(t *testing.T) {
	data := t.TempDir()
	dir := datadir.Dir(data)
	env := func(string) string { return "" }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-data", data}, env, &out, io.Discard) }()

	var addr string
	for deadline := time.Now().Add(time.Minute); addr == ""; {
		select {
		case err := <-done:
			t.Fatalf("the server stopped: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		addr, _ = dir.Read(datadir.AdminAddrFile)
		if time.Now().After(deadline) {
			t.Fatal("no admin address after a minute")
		}
	}
	for !strings.Contains(out.String(), "serving MCP") {
		time.Sleep(10 * time.Millisecond)
	}
	key, err := dir.Read(datadir.DevKeyFile)
	if err != nil || !strings.Contains(out.String(), key) {
		t.Fatalf("dev key %q (%v) not in the banner:\n%s", key, err, out.String())
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("initialize with the dev key: %d", resp.StatusCode)
	}

	var second bytes.Buffer
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-data", data}, env, io.Discard, &second)
	if err == nil || !strings.Contains(err.Error(), "is a server running on it?") {
		t.Errorf("second server on the same folder = %v, want the lock named", err)
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("shutdown = %v", err)
	}
	if _, err := os.Stat(dir.Path(datadir.AdminAddrFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("admin address left behind after shutdown: %v", err)
	}
}

func TestAnInvalidEnvironmentStopsTheStart(t *testing.T) {
	for names, env := range map[string]map[string]string{
		"STORE_ENGINE":      {"STORE_ENGINE": "sqlite"},
		"DYNAMODB_TABLE":    {"STORE_ENGINE": "dynamodb"},
		"DYNAMODB_ENDPOINT": {"STORE_ENGINE": "dynamodb", "DYNAMODB_TABLE": "custody", "DYNAMODB_ENDPOINT": "not a url"},
		// The file engine's tasks are its process's alone.
		"TASK_QUEUE_URL": {"TASK_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/tasks"},
	} {
		err := run(context.Background(), []string{"-data", t.TempDir()}, func(k string) string { return env[k] }, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), names) {
			t.Errorf("run with %v = %v, want an error naming %s", env, err, names)
		}
	}
}

// -h and --help print the usage to stdout and succeed (exit 0) without
// starting anything.
func TestHelpPrintsTheUsageToStdoutAndSucceeds(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-help"}, {"-addr", "127.0.0.1:0", "-h"}} {
		data := t.TempDir()
		var out, errOut bytes.Buffer
		err := run(context.Background(), append([]string{"-data", data}, args...), func(string) string { return "" }, &out, &errOut)
		if err != nil || !strings.HasPrefix(out.String(), "usage: ") || !strings.Contains(out.String(), "-addr") || errOut.Len() != 0 {
			t.Errorf("run(%v) = %v, stdout %q, stderr %q; want nil (exit 0) and the usage on stdout only", args, err, out.String(), errOut.String())
		}
		if _, err := os.Stat(datadir.Dir(data).StorePath()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("run(%v) created a store (%v)", args, err)
		}
	}
	var errOut bytes.Buffer
	if err := run(context.Background(), []string{"-nope"}, func(string) string { return "" }, io.Discard, &errOut); err == nil || !strings.Contains(errOut.String(), "usage: ") {
		t.Errorf("run(-nope) = %v, stderr %q; want an error and the usage on stderr", err, errOut.String())
	}
}

// A crashed server leaves its admin address behind, and by the next start
// the port may be anyone's. The next server on the folder removes the file
// as soon as it holds the store, before anything can fail or take long: here
// the impostor holds the very port the server asks for, so the start fails
// at listen, and the stale address must be gone all the same.
func TestAStaleAdminAddressIsRemovedAtStart(t *testing.T) {
	data := t.TempDir()
	dir := datadir.Dir(data)
	impostor, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer impostor.Close()
	if err := dir.Ensure(); err != nil {
		t.Fatal(err)
	}
	if err := dir.Write(datadir.AdminAddrFile, impostor.Addr().String()); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), []string{"-addr", impostor.Addr().String(), "-data", data}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil {
		t.Fatal("run() on a port another process holds = nil, want a listen error")
	}
	if _, err := os.Stat(dir.Path(datadir.AdminAddrFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale admin address is still there after the start (%v)", err)
	}
}
