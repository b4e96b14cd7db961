package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/admin"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
	"github.com/custodymcp/custody/shared/store/filestore"
	"github.com/custodymcp/custody/shared/uploads"
)

// demoFixture is the demo firm in the seed format, as a file an operator
// would import.
var demoFixture = filepath.Join("..", "..", "shared", "records", "seed", "demo.json")

// ctl runs custodyctl in process with env as its whole environment.
func ctl(t *testing.T, env map[string]string, args ...string) (stdout string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = run(ctx, args, func(k string) string { return env[k] }, &out, &errOut)
	if err != nil {
		t.Logf("custodyctl %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), err
}

// mustCtl runs custodyctl and fails the test when it fails.
func mustCtl(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	out, err := ctl(t, env, args...)
	if err != nil {
		t.Fatalf("custodyctl %s = %v", strings.Join(args, " "), err)
	}
	return out
}

// opCounter counts DynamoDB requests that reach the emulator, by operation.
type opCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *opCounter) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target := r.Header.Get("X-Amz-Target")
		c.mu.Lock()
		c.n[target[strings.LastIndexByte(target, '.')+1:]]++
		c.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (c *opCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

func writes(n map[string]int) int {
	return n["PutItem"] + n["UpdateItem"] + n["DeleteItem"] + n["BatchWriteItem"] + n["TransactWriteItems"]
}

// backend is one way custodyctl reaches an engine.
type backend struct {
	name string
	env  map[string]string
	data datadir.Dir
	// mcp is an /mcp endpoint serving the same data while custodyctl runs
	// ("" for a stopped file server: its store is custodyctl's alone).
	mcp string
	// withStore runs f on the engine with custodyctl not running.
	withStore func(t *testing.T, f func(store.Store))
	// requests counts DynamoDB requests (nil for the file engine).
	requests *opCounter
}

// stoppedFile is a data folder whose dev server is not running: custodyctl
// opens the store file itself.
func stoppedFile(t *testing.T) backend {
	dir := datadir.Dir(t.TempDir())
	fs, err := filestore.Open(dir.StorePath(), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs.Close()
	return backend{
		name: "file, server stopped",
		env:  map[string]string{"STORE_ENGINE": "file"},
		withStore: func(t *testing.T, f func(store.Store)) {
			fs, err := filestore.Open(dir.StorePath(), filestore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer fs.Close()
			f(fs)
		},
		data: dir,
	}
}

// runningFile is a data folder with a dev server running on it, composed as
// scripts/dev composes it (the admin endpoint beside /mcp, the address and
// token in the folder): custodyctl must go through the admin endpoint.
func runningFile(t *testing.T) backend {
	dir := datadir.Dir(t.TempDir())
	fs, err := filestore.Open(dir.StorePath(), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	token, err := dir.Secret(datadir.AdminTokenFile, 32)
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, fs, func(mux *http.ServeMux) { mux.Handle("/admin/", admin.Handler(fs, token, time.Now)) })
	if err := dir.Write(datadir.AdminAddrFile, strings.TrimPrefix(srv, "http://")); err != nil {
		t.Fatal(err)
	}
	return backend{
		name: "file, server running", env: map[string]string{}, mcp: srv + "/mcp",
		withStore: func(t *testing.T, f func(store.Store)) { f(fs) },
		data:      dir,
	}
}

// dynamoDB is a fresh emulator with no table: custodyctl creates it.
func dynamoDB(t *testing.T) backend {
	counter := &opCounter{n: map[string]int{}}
	emu := dynamotest.NewServer(t, counter.middleware)
	table := "custody-ctl"
	b := backend{
		name:     "dynamodb",
		env:      map[string]string{"STORE_ENGINE": "dynamodb", "DYNAMODB_TABLE": table, "DYNAMODB_ENDPOINT": emu.URL},
		requests: counter,
		withStore: func(t *testing.T, f func(store.Store)) {
			f(dynamostore.New(emu.Client(), table, dynamostore.Options{}))
		},
		data: datadir.Dir(t.TempDir()),
	}
	return b
}

// args prefixes the data folder flag.
func (b backend) args(args ...string) []string {
	return append([]string{"--data", string(b.data)}, args...)
}

// serve starts the composed /mcp endpoint over st (plus extra routes) on
// loopback, as scripts/dev does.
func serve(t *testing.T, st store.Store, extra func(*http.ServeMux)) string {
	t.Helper()
	srv, err := server.New(server.Config{Store: st, CursorKey: bytes.Repeat([]byte{9}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	if extra != nil {
		extra(mux)
	}
	mux.Handle("/", srv.Handler())
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs.URL
}

// mcpTool initializes a session with key at url and calls one tool; it
// returns the HTTP status and, on 200, the CallToolResult.
func mcpTool(t *testing.T, url, key, tool string, args map[string]any) (int, map[string]any) {
	t.Helper()
	init := servertest.DoURL(t, url, http.MethodPost,
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"custodyctl-test","version":"0"}}}`),
		"Authorization: Bearer "+key)
	if init.Status != http.StatusOK {
		return init.Status, nil
	}
	a, _ := json.Marshal(args)
	resp := servertest.DoURL(t, url, http.MethodPost,
		fmt.Appendf(nil, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, tool, a),
		"Authorization: Bearer "+key, "Mcp-Session-Id: "+init.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version: 2025-11-25")
	if resp.Status != http.StatusOK {
		return resp.Status, nil
	}
	res, ok := resp.JSON(t)["result"].(map[string]any)
	if !ok {
		t.Fatalf("tools/call %s: %s", tool, resp.Body)
	}
	return resp.Status, res
}

// TestEveryCommandOnEveryEngine runs custodyctl's commands in the order an
// operator would — table, tenant, import (twice), keys, screens, revocation
// — on the file engine with the dev server stopped, the file engine with
// the dev server running (through its admin endpoint), and DynamoDB (the
// in-process emulator). Where a server runs beside custodyctl, the effect is
// checked on its next call: a screened principal is refused NOT_FOUND at
// once, a revoked key 401.
func TestEveryCommandOnEveryEngine(t *testing.T) {
	for _, b := range []backend{stoppedFile(t), runningFile(t), dynamoDB(t)} {
		t.Run(b.name, func(t *testing.T) {
			env, outer := b.env, t
			t.Run("table create", func(t *testing.T) {
				out, err := ctl(t, env, b.args("table", "create")...)
				if b.requests == nil {
					if err == nil || !strings.Contains(err.Error(), "STORE_ENGINE=dynamodb") {
						t.Errorf("table create on the file engine = %q, %v; want an error naming STORE_ENGINE=dynamodb", out, err)
					}
					return
				}
				if err != nil || !strings.Contains(out, "created table custody-ctl") {
					t.Fatalf("table create = %q, %v", out, err)
				}
				if _, err := ctl(t, env, b.args("table", "create")...); err == nil || !strings.Contains(err.Error(), "already exists") {
					t.Errorf("second table create = %v, want already exists", err)
				}
				// From now on a server runs on the table beside custodyctl.
				b.withStore(t, func(st store.Store) { b.mcp = serve(outer, st, nil) + "/mcp" })
			})

			t.Run("tenant create", func(t *testing.T) {
				out := mustCtl(t, env, b.args("tenant", "create", "--tenant", "acme", "--name", "Acme & Partners LLP")...)
				if !strings.Contains(out, "created tenant acme (Acme & Partners LLP)") {
					t.Errorf("tenant create = %q", out)
				}
				if _, err := ctl(t, env, b.args("tenant", "create", "--tenant", "acme", "--name", "Other")...); err == nil {
					t.Error("a second tenant create of acme succeeded")
				}
				if _, err := ctl(t, env, b.args("tenant", "create", "--tenant", "no#pe", "--name", "x")...); err == nil {
					t.Error("tenant create of an impossible id succeeded")
				}
				b.withStore(t, func(st store.Store) {
					if tn, err := records.NewRepo(st).Tenant(context.Background(), "acme"); err != nil || tn.Name != "Acme & Partners LLP" {
						t.Errorf("tenant row = %+v, %v", tn, err)
					}
				})
			})

			t.Run("import twice is a no-op the second time", func(t *testing.T) {
				out := mustCtl(t, env, b.args("import", demoFixture)...)
				if !strings.Contains(out, "tenant demo: fixture") || !strings.Contains(out, "imported:") {
					t.Errorf("first import = %q", out)
				}
				if b.requests != nil {
					b.requests.take()
				}
				out = mustCtl(t, env, b.args("import", demoFixture)...)
				if !strings.Contains(out, "already imported; nothing written") {
					t.Errorf("second import = %q, want already imported", out)
				}
				if b.requests != nil {
					if n := b.requests.take(); writes(n) != 0 {
						t.Errorf("the second import wrote: %v", n)
					}
				}
				if _, err := ctl(t, env, b.args("import", filepath.Join(t.TempDir(), "missing.json"))...); err == nil {
					t.Error("importing a missing file succeeded")
				}
			})

			t.Run("keys mint refuses names the record does not have", func(t *testing.T) {
				for _, tc := range []struct {
					args []string
					want string
				}{
					{[]string{"--tenant", "nosuchtenant", "--owner", seed.DemoAttorney}, `tenant "nosuchtenant" does not exist`},
					{[]string{"--owner", "p_nobody"}, `has no principal "p_nobody"`},
					{[]string{"--owner", seed.DemoAttorney, "--allow", "m_nope"}, `has no matter "m_nope"`},
				} {
					out, err := ctl(t, env, b.args(append([]string{"keys", "mint", "--scopes", "read"}, tc.args...)...)...)
					if err == nil || !strings.Contains(err.Error(), tc.want) {
						t.Errorf("keys mint %v = %q, %v; want an error saying %s", tc.args, out, err, tc.want)
					}
				}
			})

			var key, credentialID string
			t.Run("keys mint and list", func(t *testing.T) {
				key = strings.TrimSpace(mustCtl(t, env, b.args("keys", "mint", "--owner", seed.DemoAttorney, "--scopes", "read docs:read", "--label", "ops test", "--rate-read", "500")...))
				if !strings.HasPrefix(key, "ck_") {
					t.Fatalf("keys mint printed %q, want a key", key)
				}
				out := mustCtl(t, env, b.args("keys", "list")...)
				var line string
				for _, l := range strings.Split(out, "\n") {
					if strings.Contains(l, "ops test") {
						line = l
					}
				}
				if f := strings.Fields(line); len(f) < 6 || f[1] != seed.DemoAttorney || !strings.Contains(line, "false") {
					t.Fatalf("keys list has no live row for the minted key:\n%s", out)
				} else {
					credentialID = f[0]
				}
				if b.mcp != "" {
					if status, res := mcpTool(t, b.mcp, key, "get_matter", map[string]any{"case_id": seed.Meridian}); status != 200 || servertest.RefusalClass(res) != "" {
						t.Errorf("the minted key: %d %v", status, res)
					}
				}
			})

			t.Run("grant mint, list and revoke", func(t *testing.T) {
				mustCtl(t, env, b.args("keys", "mint", "--owner", seed.DemoAttorney, "--scopes", "read write", "--label", "upload agent")...)
				var writer string
				for _, l := range strings.Split(mustCtl(t, env, b.args("keys", "list")...), "\n") {
					if strings.Contains(l, "upload agent") {
						writer = strings.Fields(l)[0]
					}
				}
				for _, tc := range []struct {
					args []string
					want string
				}{
					{[]string{"--key", writer, "--case", seed.Alvarez, "--by", seed.DemoAttorney}, "not a firm administrator"},
					{[]string{"--key", writer, "--case", seed.Alvarez, "--by", seed.DemoAdmin, "--ttl", "30s"}, "a grant lives from"},
					{[]string{"--key", "cred_nope", "--case", seed.Alvarez, "--by", seed.DemoAdmin}, "has no API key"},
					{[]string{"--key", writer, "--case", "m_nope", "--by", seed.DemoAdmin}, "does not reach matter"},
				} {
					out, err := ctl(t, env, b.args(append([]string{"grant", "mint"}, tc.args...)...)...)
					if err == nil || !strings.Contains(err.Error(), tc.want) {
						t.Errorf("grant mint %v = %q, %v; want an error saying %s", tc.args, out, err, tc.want)
					}
				}
				token := strings.TrimSpace(mustCtl(t, env, b.args("grant", "mint", "--key", writer, "--case", seed.Alvarez, "--by", seed.DemoAdmin, "--ttl", "2h")...))
				if !uploads.WellFormedToken(token) {
					t.Fatalf("grant mint printed %q, want a cgt_ token alone", token)
				}
				out := mustCtl(t, env, b.args("grant", "list")...)
				if strings.Contains(out, token[4:]) {
					t.Errorf("grant list shows the token:\n%s", out)
				}
				var id string
				for _, l := range strings.Split(out, "\n") {
					if f := strings.Fields(l); len(f) > 4 && f[1] == writer {
						id = f[0]
						if f[2] != seed.Alvarez || f[3] != "unspent" || f[4] != "0/3" {
							t.Errorf("grant list row = %q, want %s unspent 0/3", l, seed.Alvarez)
						}
					}
				}
				if id == "" {
					t.Fatalf("grant list has no row of the grant:\n%s", out)
				}
				if out := mustCtl(t, env, b.args("grant", "revoke", id)...); !strings.Contains(out, "revoked "+id) {
					t.Errorf("grant revoke = %q", out)
				}
				if out := mustCtl(t, env, b.args("grant", "list")...); !strings.Contains(out, "revoked") {
					t.Errorf("grant list after the revocation:\n%s", out)
				}
				if _, err := ctl(t, env, b.args("grant", "revoke", "gnt_0000000000000000")...); err == nil || !strings.Contains(err.Error(), "no such grant") {
					t.Errorf("revoking an unknown grant = %v, want no such grant", err)
				}
			})
			t.Run("autonomy set and list govern the next write; a client_safe key never holds write", func(t *testing.T) {
				if out, err := ctl(t, env, b.args("keys", "mint", "--owner", seed.DemoAttorney, "--scopes", "read write", "--class", "client_safe")...); err == nil || !errors.Is(err, auth.ErrClientSafeWrite) {
					t.Errorf("keys mint client_safe with write = %q, %v; want ErrClientSafeWrite", out, err)
				}
				writer := strings.TrimSpace(mustCtl(t, env, b.args("keys", "mint", "--owner", seed.DemoAttorney, "--scopes", "read write", "--rate-write", "100")...))
				note := func(key string) map[string]any {
					return map[string]any{"case_id": seed.Alvarez, "body": "Called the client.", "idempotency_key": key}
				}
				mustCtl(t, env, b.args("autonomy", "set", "--name", "add_case_note", "--level", "L0")...)
				mustCtl(t, env, b.args("autonomy", "set", "--name", "*", "--level", "l1")...)
				out := mustCtl(t, env, b.args("autonomy", "list")...)
				for _, want := range [][]string{{"*", "L1"}, {"add_case_note", "L0"}} {
					found := false
					for _, l := range strings.Split(out, "\n") {
						if f := strings.Fields(l); len(f) >= 2 && f[0] == want[0] && f[1] == want[1] {
							found = true
						}
					}
					if !found {
						t.Errorf("autonomy list has no %s %s:\n%s", want[0], want[1], out)
					}
				}
				if b.mcp != "" {
					if status, res := mcpTool(t, b.mcp, writer, "add_case_note", note("a1")); status != 200 || servertest.RefusalClass(res) != "AUTONOMY_DENIED" {
						t.Errorf("add_case_note at L0: %d %v, want denied AUTONOMY_DENIED", status, res)
					}
				}
				for _, bad := range [][]string{{"--name", "delete_everything", "--level", "L1"}, {"--name", "add_case_note", "--level", "L7"}, {"--name", "add_case_note"}} {
					if _, err := ctl(t, env, b.args(append([]string{"autonomy", "set"}, bad...)...)...); err == nil {
						t.Errorf("autonomy set %v succeeded", bad)
					}
				}
				mustCtl(t, env, b.args("autonomy", "set", "--name", "add_case_note", "--level", "clear")...)
				mustCtl(t, env, b.args("autonomy", "set", "--name", "*", "--level", "clear")...)
				if out := mustCtl(t, env, b.args("autonomy", "list")...); !strings.Contains(out, "runs at L2") {
					t.Errorf("autonomy list after clearing = %q, want none", out)
				}
				if b.mcp != "" {
					if status, res := mcpTool(t, b.mcp, writer, "add_case_note", note("a2")); status != 200 || res["structuredContent"].(map[string]any)["status"] != "executed" {
						t.Errorf("add_case_note with no setting (L2): %d %v, want executed", status, res)
					}
				}
			})

			t.Run("screen add refuses the next call, remove lets it in", func(t *testing.T) {
				if _, err := ctl(t, env, b.args("screen", "add", "--case", seed.Meridian, "--principal", "p_dana_whitfeld")...); err == nil {
					t.Error("screening an unknown principal (a typo) succeeded")
				}
				out := mustCtl(t, env, b.args("screen", "add", "--case", seed.Meridian, "--principal", seed.DemoAttorney, "--reason", "conflict check 2026-118")...)
				if !strings.Contains(out, "screened "+seed.DemoAttorney+" from "+seed.Meridian) {
					t.Errorf("screen add = %q", out)
				}
				if out := mustCtl(t, env, b.args("screen", "add", "--case", seed.Meridian, "--principal", seed.DemoAttorney)...); !strings.Contains(out, "already screened") {
					t.Errorf("second screen add = %q, want already screened", out)
				}
				if b.mcp != "" {
					if status, res := mcpTool(t, b.mcp, key, "get_matter", map[string]any{"case_id": seed.Meridian}); status != 200 || servertest.RefusalClass(res) != "NOT_FOUND" {
						t.Errorf("the screened attorney's next call: %d %v, want NOT_FOUND", status, res)
					}
				}
				b.withStore(t, func(st store.Store) {
					who := access.Who{Tenant: seed.DemoTenant, Principal: seed.DemoAttorney}
					if _, err := access.New(records.NewRepo(st)).Matter(context.Background(), who, seed.Meridian); err != access.ErrNoMatter {
						t.Errorf("funnel after the screen = %v, want ErrNoMatter", err)
					}
				})
				out = mustCtl(t, env, b.args("screen", "remove", "--case", seed.Meridian, "--principal", seed.DemoAttorney)...)
				if !strings.Contains(out, "no longer screened") {
					t.Errorf("screen remove = %q", out)
				}
				if b.mcp != "" {
					if status, res := mcpTool(t, b.mcp, key, "get_matter", map[string]any{"case_id": seed.Meridian}); status != 200 || servertest.RefusalClass(res) != "" {
						t.Errorf("after the screen's removal: %d %v, want the matter", status, res)
					}
				}
				if _, err := ctl(t, env, b.args("screen", "add", "--case", "m_nope", "--principal", seed.DemoAttorney)...); err == nil {
					t.Error("screening on an unknown matter succeeded")
				}
			})

			t.Run("keys revoke fails the next call", func(t *testing.T) {
				if credentialID == "" {
					t.Skip("no key was minted (see keys mint and list)")
				}
				if out := mustCtl(t, env, b.args("keys", "revoke", credentialID)...); !strings.Contains(out, "revoked "+credentialID) {
					t.Errorf("keys revoke = %q", out)
				}
				if b.mcp != "" {
					if status, _ := mcpTool(t, b.mcp, key, "list_matters", nil); status != http.StatusUnauthorized {
						t.Errorf("the revoked key's next call: %d, want 401", status)
					}
				}
				out := mustCtl(t, env, b.args("keys", "list")...)
				listed := false
				for _, l := range strings.Split(out, "\n") {
					if strings.HasPrefix(l, credentialID) {
						listed = true
						if !strings.Contains(l, "true") {
							t.Errorf("keys list does not show the revocation: %s", l)
						}
					}
				}
				if !listed {
					t.Errorf("keys list no longer lists the revoked %s:\n%s", credentialID, out)
				}
				if _, err := ctl(t, env, b.args("keys", "revoke", "cred_doesnotexist")...); err == nil {
					t.Error("revoking an unknown credential succeeded")
				}
			})
		})
	}
}

func TestUnknownCommandsAreRefusedBeforeAnythingIsOpened(t *testing.T) {
	data := t.TempDir() // no store: opening one would fail differently
	for _, args := range [][]string{{}, {"keys"}, {"keys", "frob"}, {"screen", "toggle"}, {"table", "drop"}, {"tenant", "delete"}} {
		_, err := ctl(t, map[string]string{}, append([]string{"--data", data}, args...)...)
		if err == nil || strings.Contains(err.Error(), "no store") {
			t.Errorf("custodyctl %v = %v, want a usage error", args, err)
		}
	}
	if _, err := ctl(t, map[string]string{"STORE_ENGINE": "dynamodb"}, "--data", data, "keys", "list"); err == nil || !strings.Contains(err.Error(), "DYNAMODB_TABLE") {
		t.Errorf("dynamodb without a table = %v, want DYNAMODB_TABLE named", err)
	}
}

func TestImportingTheDemoIntoADevSeededStoreWritesNothing(t *testing.T) {
	b := stoppedFile(t)
	b.withStore(t, func(st store.Store) {
		// What scripts/dev does at every start.
		if _, err := records.ImportJSON(context.Background(), st, seed.DemoJSON(), time.Now()); err != nil {
			t.Fatal(err)
		}
	})
	if out := mustCtl(t, b.env, b.args("import", demoFixture)...); !strings.Contains(out, "tenant demo: fixture") || !strings.Contains(out, "already imported; nothing written") {
		t.Errorf("import of the seeded demo = %q, want already imported", out)
	}
}

// TestImportRefusesAFixtureWhoseTextIsNotUTF8: a quote the record must keep
// verbatim is never rewritten to U+FFFD; the file is refused, the record
// and field named, and nothing is written.
func TestImportRefusesAFixtureWhoseTextIsNotUTF8(t *testing.T) {
	b := stoppedFile(t)
	raw := bytes.Replace(seed.DemoJSON(), []byte(`"text": "`), []byte("\"text\": \"\xff"), 1)
	if bytes.Equal(raw, seed.DemoJSON()) {
		t.Fatal("the demo fixture has no chunk text to spoil")
	}
	path := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ctl(t, b.env, b.args("import", path)...)
	var enc *records.EncodingError
	if !errors.As(err, &enc) || enc.Field != "text" || !strings.HasPrefix(enc.Record, "document ") {
		t.Fatalf("import of a fixture with invalid UTF-8 = %v, want an EncodingError naming a document's text", err)
	}
	b.withStore(t, func(st store.Store) {
		if _, err := records.NewRepo(st).Tenant(context.Background(), seed.DemoTenant); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("after the refused import the tenant reads %v, want not found", err)
		}
	})
}
