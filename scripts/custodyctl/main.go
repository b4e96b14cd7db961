// Command custodyctl operates Custody on either storage engine: it creates
// the DynamoDB table, creates tenants, imports records in the seed format,
// mints, lists and revokes API keys, and puts principals behind (or takes
// them out of) a matter's ethical wall.
//
//	custodyctl table create
//	custodyctl tenant create --tenant ID --name NAME
//	custodyctl import FILE
//	custodyctl keys mint   --owner p_dana_whitfield --scopes "read docs:read" [--tenant demo] [--class client_safe] [--allow m_a,m_b] [--label …] [--rate-read N] [--rate-expensive N]
//	custodyctl keys list   [--tenant demo]
//	custodyctl keys revoke [--tenant demo] CREDENTIAL_ID
//	custodyctl screen add|remove --case CASE_ID --principal P [--tenant demo] [--reason TEXT]
//
// The engine comes from the environment, as for the dev server
// (scripts/internal/engine): STORE_ENGINE=file|dynamodb, DYNAMODB_TABLE,
// DYNAMODB_ENDPOINT (emulators only). With the file engine, a running dev
// server holds the store's lock, so custodyctl goes through its
// loopback-only admin endpoint (address and token in the data folder);
// against a stopped one it opens the store file directly. With DynamoDB it
// acts on the table directly, and every server on the table sees the change
// on its next request: a revoked key fails, a screened principal is refused.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/scripts/internal/engine"
	"github.com/custodymcp/custody/shared/admin"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
)

const usage = `usage: custodyctl [--data DIR] COMMAND

commands:
  table create
  tenant create --tenant ID --name NAME
  import FILE                      a record in the seed format; a second import is a no-op
  keys mint --owner PRINCIPAL --scopes "read docs:read" [--tenant demo]
            [--class standard|client_safe] [--allow CASE_ID,...] [--label TEXT]
            [--rate-read N] [--rate-expensive N]
  keys list [--tenant demo]
  keys revoke [--tenant demo] CREDENTIAL_ID
  screen add|remove --case CASE_ID --principal PRINCIPAL [--tenant demo] [--reason TEXT]

environment:
  STORE_ENGINE       file (default) or dynamodb
  DYNAMODB_TABLE     the table (dynamodb)
  DYNAMODB_ENDPOINT  an emulator's base URL (emulators only)
`

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "custodyctl:", err)
		os.Exit(1)
	}
}

// errUsage is a command line custodyctl does not understand (the usage has
// been printed).
var errUsage = errors.New("see the usage above")

// run executes one command. Configuration comes from args and getenv only;
// results go to stdout, notes to stderr.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	global := flag.NewFlagSet("custodyctl", flag.ContinueOnError)
	global.SetOutput(stderr)
	data := global.String("data", datadir.Default, "the data folder (file engine; secrets)")
	global.Usage = func() { fmt.Fprint(stderr, usage) }
	if err := global.Parse(args); err != nil {
		return err
	}
	eng, err := engine.FromEnv(getenv)
	if err != nil {
		return err
	}
	rest := global.Args()
	if len(rest) < 1 {
		global.Usage()
		return errUsage
	}
	cmd, sub := rest[0], ""
	if len(rest) > 1 {
		sub = rest[1]
	}
	switch {
	case cmd == "table" && sub == "create":
		if len(rest) != 2 {
			global.Usage()
			return errUsage
		}
		return createTable(ctx, eng, stdout)
	case cmd == "tenant" && sub == "create", cmd == "import",
		cmd == "keys" && (sub == "mint" || sub == "list" || sub == "revoke"),
		cmd == "screen" && (sub == "add" || sub == "remove"):
	default:
		global.Usage()
		return fmt.Errorf("unknown command %q", strings.TrimSpace(cmd+" "+sub))
	}

	op, err := connect(ctx, eng, datadir.Dir(*data))
	if err != nil {
		return err
	}
	defer op.Close()
	if cmd == "import" {
		return importFile(ctx, op, rest[1:], stdout)
	}
	fl := flag.NewFlagSet(cmd+" "+sub, flag.ContinueOnError)
	fl.SetOutput(stderr)
	tenant := fl.String("tenant", "demo", "tenant id")
	switch cmd + " " + sub {
	case "tenant create":
		name := fl.String("name", "", "the firm's name (required)")
		if err := fl.Parse(rest[2:]); err != nil {
			return err
		}
		t, err := op.CreateTenant(ctx, admin.TenantRequest{ID: *tenant, Name: *name})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created tenant %s (%s)\n", t.ID, t.Name)
		return nil
	case "keys mint":
		return mintKey(ctx, op, fl, tenant, rest[2:], stdout, stderr)
	case "keys list":
		if err := fl.Parse(rest[2:]); err != nil {
			return err
		}
		return listKeys(ctx, op, *tenant, stdout)
	case "keys revoke":
		if err := fl.Parse(rest[2:]); err != nil {
			return err
		}
		if fl.NArg() != 1 {
			return errors.New("keys revoke: name one credential id")
		}
		if err := op.Revoke(ctx, *tenant, fl.Arg(0)); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s\n", fl.Arg(0))
		return nil
	case "screen add", "screen remove":
		caseID := fl.String("case", "", "the matter's case_id (required)")
		principal := fl.String("principal", "", "the principal id (required)")
		reason := fl.String("reason", "", "why the wall exists, without naming the principal (add only)")
		if err := fl.Parse(rest[2:]); err != nil {
			return err
		}
		if *caseID == "" || *principal == "" || fl.NArg() != 0 {
			return fmt.Errorf("screen %s: --case and --principal are required", sub)
		}
		res, err := op.Screen(ctx, admin.ScreenRequest{Tenant: *tenant, CaseID: *caseID, Principal: *principal,
			Screened: sub == "add", Reason: *reason})
		if err != nil {
			return err
		}
		verb := map[bool]string{true: "screened", false: "no longer screened"}[sub == "add"]
		if !res.Changed {
			verb = "already " + verb
		}
		fmt.Fprintf(stdout, "%s %s from %s (screened now: %s)\n", verb, *principal, res.CaseID, strings.Join(res.Screened, ", "))
		return nil
	}
	global.Usage()
	return fmt.Errorf("unknown command %q", cmd+" "+sub)
}

// createTable creates the DynamoDB table (dynamostore.CreateTable, the one
// definition the SAM template is held to) and, on AWS, turns on its TTL.
func createTable(ctx context.Context, eng engine.Config, stdout io.Writer) error {
	if eng.Engine != engine.DynamoDB {
		return errors.New("table create needs STORE_ENGINE=dynamodb and DYNAMODB_TABLE (the file engine has no table to create)")
	}
	client, err := eng.Client(ctx)
	if err != nil {
		return err
	}
	err = dynamostore.CreateTable(ctx, client, eng.Table)
	if errors.Is(err, store.ErrExists) {
		return fmt.Errorf("table %q already exists", eng.Table)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created table %s\n", eng.Table)
	if eng.Endpoint != "" {
		// Emulators have no TTL API (minidyn); the engine filters expired
		// items itself, so TTL only saves storage.
		fmt.Fprintf(stdout, "TTL on %s not enabled (emulator)\n", dynamostore.TTLAttribute)
		return nil
	}
	if err := dynamostore.EnableTTL(ctx, client, eng.Table); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "TTL enabled on %s\n", dynamostore.TTLAttribute)
	return nil
}

func importFile(ctx context.Context, op operator, args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("import: name one fixture file (the seed format, shared/records)")
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	res, err := op.Import(ctx, data)
	if err != nil {
		return fmt.Errorf("import %s: %w", args[0], err)
	}
	if res.AlreadyImported {
		fmt.Fprintf(stdout, "tenant %s: fixture %s already imported; nothing written\n", res.Tenant, res.Digest)
		return nil
	}
	fmt.Fprintf(stdout, "tenant %s: fixture %s imported: %d of %d rows written, %d already there\n",
		res.Tenant, res.Digest, res.Written, res.Rows, res.Skipped)
	return nil
}

func mintKey(ctx context.Context, op operator, fl *flag.FlagSet, tenant *string, args []string, stdout, stderr io.Writer) error {
	owner := fl.String("owner", "", "owner principal id (required)")
	scopes := fl.String("scopes", "read docs:read", "scopes, space- or comma-separated")
	class := fl.String("class", "standard", "credential class: standard or client_safe")
	allow := fl.String("allow", "", "matter allow-list, comma-separated (default: unrestricted)")
	label := fl.String("label", "", "a label for the key")
	rateRead := fl.Int("rate-read", 0, "requests per minute in the read lane (default: configured)")
	rateExp := fl.Int("rate-expensive", 0, "requests per minute in the expensive lane (default: configured)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *owner == "" {
		return errors.New("keys mint: --owner is required")
	}
	req := admin.MintRequest{Tenant: *tenant, Owner: *owner, Scopes: *scopes, Class: *class, Label: *label}
	if *allow != "" {
		req.AllowList = strings.Split(*allow, ",")
	}
	if *rateRead > 0 || *rateExp > 0 {
		req.RateLimits = map[string]int{}
		if *rateRead > 0 {
			req.RateLimits["read"] = *rateRead
		}
		if *rateExp > 0 {
			req.RateLimits["expensive"] = *rateExp
		}
	}
	m, err := op.Mint(ctx, req)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", m.Key)
	fmt.Fprintf(stderr, "minted %s for %s (%s); the key is shown once\n", m.CredentialID, m.Owner, strings.Join(m.Scopes, " "))
	return nil
}

func listKeys(ctx context.Context, op operator, tenant string, stdout io.Writer) error {
	keys, err := op.List(ctx, tenant)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CREDENTIAL\tOWNER\tSCOPES\tCLASS\tALLOW\tREVOKED\tLABEL")
	for _, k := range keys {
		allowList := "*"
		if k.AllowList != nil {
			allowList = strings.Join(k.AllowList, ",")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\t%s\n", k.CredentialID, k.Owner,
			strings.Join(k.Scopes, " "), k.Class, allowList, k.Revoked, k.Label)
	}
	return tw.Flush()
}

// operator is what custodyctl does, on a store it opened or through a
// running dev server's admin endpoint.
type operator interface {
	Mint(ctx context.Context, req admin.MintRequest) (admin.Minted, error)
	List(ctx context.Context, tenant string) ([]admin.KeyInfo, error)
	Revoke(ctx context.Context, tenant, id string) error
	CreateTenant(ctx context.Context, req admin.TenantRequest) (admin.TenantInfo, error)
	Import(ctx context.Context, fixture []byte) (admin.ImportResult, error)
	Screen(ctx context.Context, req admin.ScreenRequest) (admin.ScreenResult, error)
	Close() error
}

// connect reaches the engine: a running file-engine dev server's admin
// endpoint when there is one, else the store itself (the file of a stopped
// server, or the DynamoDB table).
func connect(ctx context.Context, eng engine.Config, dir datadir.Dir) (operator, error) {
	if eng.Engine == engine.File {
		addr, err := dir.Read(datadir.AdminAddrFile)
		switch {
		case err == nil:
			token, terr := dir.Read(datadir.AdminTokenFile)
			if terr != nil {
				return nil, fmt.Errorf("read the admin token: %w", terr)
			}
			c := &remote{base: "http://" + addr, token: token, http: &http.Client{Timeout: 2 * time.Minute}}
			if c.alive(ctx) {
				return c, nil
			}
			// A server that died without removing its address: the file is free.
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
		if _, err := os.Stat(dir.StorePath()); err != nil {
			return nil, fmt.Errorf("no store at %s: start the server once with `make run`", dir.StorePath())
		}
	}
	st, err := eng.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	return &direct{st: st, now: time.Now}, nil
}

// direct operates on an open store.
type direct struct {
	st  *engine.Store
	now func() time.Time
}

func (d *direct) Mint(ctx context.Context, req admin.MintRequest) (admin.Minted, error) {
	key, cred, err := admin.Mint(ctx, d.st, req, d.now())
	if err != nil {
		return admin.Minted{}, err
	}
	return admin.Minted{Key: key, KeyInfo: admin.Info(cred)}, nil
}

func (d *direct) List(ctx context.Context, tenant string) ([]admin.KeyInfo, error) {
	creds, err := auth.List(ctx, d.st, tenant)
	if err != nil {
		return nil, err
	}
	out := make([]admin.KeyInfo, len(creds))
	for i, c := range creds {
		out[i] = admin.Info(c)
	}
	return out, nil
}

func (d *direct) Revoke(ctx context.Context, tenant, id string) error {
	return auth.Revoke(ctx, d.st, tenant, id)
}

func (d *direct) CreateTenant(ctx context.Context, req admin.TenantRequest) (admin.TenantInfo, error) {
	return admin.CreateTenant(ctx, d.st, req, d.now())
}

func (d *direct) Import(ctx context.Context, fixture []byte) (admin.ImportResult, error) {
	return admin.Import(ctx, d.st, fixture, d.now())
}

func (d *direct) Screen(ctx context.Context, req admin.ScreenRequest) (admin.ScreenResult, error) {
	return admin.Screen(ctx, d.st, req, d.now())
}

func (d *direct) Close() error { return d.st.Close() }

// remote operates through the running dev server's admin endpoint.
type remote struct {
	base, token string
	http        *http.Client
}

// alive reports whether a Custody dev server answers at the recorded
// address. It asks without the admin token and wants the admin endpoint's
// own challenge back, so a stale address now held by another process is
// never sent the token (and custodyctl opens the store instead).
func (r *remote) alive(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+"/admin/keys", nil)
	if err != nil {
		return false
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusUnauthorized &&
		resp.Header.Get("WWW-Authenticate") == `Bearer realm="custody-admin"`
}

func (r *remote) do(ctx context.Context, method, path, ctype string, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Content-Type", ctype)
	return r.http.Do(req)
}

// call sends body (JSON-encoded unless it is raw bytes) and decodes a 2xx
// answer into out (nil: drop it); any other answer is an error with the
// server's sentence.
func (r *remote) call(ctx context.Context, method, path string, body, out any) error {
	var raw []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			return err
		}
	}
	resp, err := r.do(ctx, method, path, "application/json", raw)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return fmt.Errorf("server answered %s: %s", resp.Status, e.Error)
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}

func (r *remote) Mint(ctx context.Context, req admin.MintRequest) (admin.Minted, error) {
	var m admin.Minted
	return m, r.call(ctx, http.MethodPost, "/admin/keys", req, &m)
}

func (r *remote) List(ctx context.Context, tenant string) ([]admin.KeyInfo, error) {
	var keys []admin.KeyInfo
	return keys, r.call(ctx, http.MethodGet, "/admin/keys?tenant="+url.QueryEscape(tenant), nil, &keys)
}

func (r *remote) Revoke(ctx context.Context, tenant, id string) error {
	return r.call(ctx, http.MethodPost, "/admin/keys/"+url.PathEscape(id)+"/revoke?tenant="+url.QueryEscape(tenant), nil, nil)
}

func (r *remote) CreateTenant(ctx context.Context, req admin.TenantRequest) (admin.TenantInfo, error) {
	var t admin.TenantInfo
	return t, r.call(ctx, http.MethodPost, "/admin/tenants", req, &t)
}

func (r *remote) Import(ctx context.Context, fixture []byte) (admin.ImportResult, error) {
	var res admin.ImportResult
	return res, r.call(ctx, http.MethodPost, "/admin/import", fixture, &res)
}

func (r *remote) Screen(ctx context.Context, req admin.ScreenRequest) (admin.ScreenResult, error) {
	var res admin.ScreenResult
	return res, r.call(ctx, http.MethodPost, "/admin/screens", req, &res)
}

func (r *remote) Close() error { return nil }
