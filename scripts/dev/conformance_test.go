package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store/filestore"
)

// serveDev runs the dev server in process with args (on 127.0.0.1:0 over
// the file engine in data) and returns its /mcp URL and a stop function
// (called at the latest when the test ends).
func serveDev(t *testing.T, data string, args ...string) (url string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0", "-data", data}, args...),
			func(string) string { return "" }, &out, io.Discard)
	}()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	t.Cleanup(stop)
	re := regexp.MustCompile(`serving MCP at (http://\S+/mcp) `)
	for deadline := time.Now().Add(time.Minute); ; {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m[1], stop
		}
		select {
		case err := <-done:
			t.Fatalf("the server stopped: %v\n%s", err, out.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no banner after a minute")
		}
	}
}

// listToolNames initializes a session at url (with key, or with no
// credential when key is "") and returns its tools/list names; status is
// the initialize's HTTP status (the names are nil unless it is 200).
func listToolNames(t *testing.T, url, key string) (status int, names []string) {
	t.Helper()
	var creds []string
	if key != "" {
		creds = append(creds, "Authorization: Bearer "+key)
	}
	r := servertest.DoURL(t, url, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`), creds...)
	if r.Status != http.StatusOK {
		return r.Status, nil
	}
	headers := append(creds, "Mcp-Session-Id: "+r.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version: 2025-11-25")
	r = servertest.DoURL(t, url, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), headers...)
	var msg struct {
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.Body, &msg); err != nil || r.Status != http.StatusOK {
		t.Fatalf("tools/list: %d %s", r.Status, r.Body)
	}
	for _, tl := range msg.Result.Tools {
		names = append(names, tl.Name)
	}
	return http.StatusOK, names
}

func TestConformanceIsRefusedOnAnyAddressButLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.10:8080", "example.com:8080"} {
		t.Run(addr, func(t *testing.T) {
			data := t.TempDir()
			err := run(context.Background(), []string{"-conformance", "-addr", addr, "-data", data},
				func(string) string { return "" }, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), "loopback") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("run -conformance -addr %s = %v, want one line naming loopback", addr, err)
			}
			// Refused before anything is opened or written.
			if entries, _ := os.ReadDir(data); len(entries) != 0 {
				t.Errorf("the data folder holds %d entries after the refusal", len(entries))
			}
		})
	}
}

func TestConformanceProfileServesUnauthenticatedRequestsAsTheFixtureKeyOnly(t *testing.T) {
	data := t.TempDir()
	dir := datadir.Dir(data)
	func() {
		url, stop := serveDev(t, data, "-conformance")
		defer stop()
		status, fixtures := listToolNames(t, url, "")
		if status != http.StatusOK || !slices.Contains(fixtures, "test_simple_text") || slices.Contains(fixtures, "list_matters") {
			t.Errorf("without a credential: %d %v, want the fixtures and nothing else", status, fixtures)
		}
		devKey, err := dir.Read(datadir.DevKeyFile)
		if err != nil {
			t.Fatal(err)
		}
		_, custody := listToolNames(t, url, devKey)
		if !slices.Contains(custody, "list_matters") || slices.ContainsFunc(custody, func(n string) bool { return slices.Contains(fixtures, n) }) {
			t.Errorf("the dev key sees %v, want Custody's tools and no fixture", custody)
		}
		// A presented credential is never replaced by the fixture key.
		if status, _ := listToolNames(t, url, "ck_notakey"); status != http.StatusUnauthorized {
			t.Errorf("an invalid key: %d, want 401", status)
		}
	}()
	key, err := dir.Read(datadir.ConformanceKeyFile)
	if err != nil || !auth.WellFormedKey(key) {
		t.Fatalf("fixture key %q, %v", key, err)
	}
	if fi, err := os.Stat(dir.Path(datadir.ConformanceKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("fixture key file: %v, %v; want mode 0600", fi.Mode(), err)
	}
	cred := storedCredential(t, dir, key)
	if cred.Tenant != conformanceTenant || cred.Owner != conformancePrincipal || cred.Class != auth.ClassStandard ||
		!slices.Equal(cred.Scopes, []auth.Scope{auth.ScopeConformance}) || cred.RateLimits["read"] != conformanceRateLimit {
		t.Errorf("fixture credential %+v", cred)
	}

	// A restart reuses the key; without -conformance a request without a
	// credential is 401 again.
	func() {
		url, stop := serveDev(t, data, "-conformance")
		defer stop()
		if again, _ := dir.Read(datadir.ConformanceKeyFile); again != key {
			t.Errorf("restart minted %q, want the stored key reused", again)
		}
		if status, _ := listToolNames(t, url, ""); status != http.StatusOK {
			t.Errorf("after a restart: %d", status)
		}
	}()
	func() {
		url, stop := serveDev(t, data)
		defer stop()
		if status, _ := listToolNames(t, url, ""); status != http.StatusUnauthorized {
			t.Errorf("without -conformance, no credential: %d, want 401", status)
		}
	}()
}

// storedCredential reads a key's credential from the (stopped) server's store.
func storedCredential(t *testing.T, dir datadir.Dir, key string) *auth.Credential {
	t.Helper()
	st, err := filestore.Open(dir.StorePath(), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	it, err := st.Get(context.Background(), auth.CredentialKey(auth.HashKey(key)))
	if err != nil {
		t.Fatal(err)
	}
	c, err := auth.DecodeCredential(it)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestARevokedOrMissingFixtureKeyIsReplaced(t *testing.T) {
	dir := datadir.Dir(t.TempDir())
	if err := dir.Ensure(); err != nil {
		t.Fatal(err)
	}
	st, err := filestore.Open(dir.StorePath(), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	first, err := conformanceKey(ctx, dir, st)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := conformanceKey(ctx, dir, st); err != nil || again != first {
		t.Fatalf("second call = %q, %v; want the first key reused", again, err)
	}
	c, err := st.Get(ctx, auth.CredentialKey(auth.HashKey(first)))
	if err != nil {
		t.Fatal(err)
	}
	cred, _ := auth.DecodeCredential(c)
	if err := auth.Revoke(ctx, st, cred.Tenant, cred.ID); err != nil {
		t.Fatal(err)
	}
	replaced, err := conformanceKey(ctx, dir, st)
	if err != nil || replaced == first || !auth.WellFormedKey(replaced) {
		t.Fatalf("after revocation = %q, %v; want a new key", replaced, err)
	}
	if err := os.Remove(dir.Path(datadir.ConformanceKeyFile)); err != nil {
		t.Fatal(err)
	}
	if k, err := conformanceKey(ctx, dir, st); err != nil || k == replaced {
		t.Errorf("with the file gone = %q, %v; want a new key", k, err)
	}
	if _, err := dir.Read(datadir.ConformanceKeyFile); errors.Is(err, fs.ErrNotExist) {
		t.Error("the new key was not written to the folder")
	}
}
