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
// loopback-only admin endpoint (address and token in the data folder; the
// server proves it holds the token before custodyctl sends anything, and
// the token itself is never sent); against a stopped one it opens the
// store file directly. With DynamoDB it
// acts on the table directly, and every server on the table sees the change
// on its next request: a revoked key fails, a screened principal is refused.
package main

import (
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
	"github.com/custodymcp/custody/scripts/internal/engine/dynamoengine"
	"github.com/custodymcp/custody/shared/admin"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
)

const usage = `usage: custodyctl [--data DIR] COMMAND

  --data DIR   the dev server's data folder (default .custody): its admin token and
               address, or its store file when no server runs on it
  -h, --help   this text; after a command, that command's flags

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
// results go to stdout, notes to stderr. -h or --help, before or after a
// command, prints the usage to stdout and succeeds.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	err := runCommand(ctx, args, getenv, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil // -h or --help: the usage went to stdout
	}
	return err
}

// parse parses args into fl. -h or --help prints fl's usage to stdout and
// returns flag.ErrHelp (which run reports as success); another error
// prints it to stderr.
func parse(fl *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	usage := fl.Usage
	fl.Usage = func() {} // printed below, where it belongs
	fl.SetOutput(stderr)
	err := fl.Parse(args)
	fl.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		fl.SetOutput(stdout)
		usage()
	case err != nil:
		usage()
	}
	return err
}

// subUsage is a subcommand's usage: its line and its flags.
func subUsage(fl *flag.FlagSet, line string) func() {
	return func() {
		fmt.Fprintf(fl.Output(), "usage: custodyctl [--data DIR] %s\n", line)
		n := 0
		fl.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintf(fl.Output(), "\nflags:\n")
			fl.PrintDefaults()
		}
	}
}

func runCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	global := flag.NewFlagSet("custodyctl", flag.ContinueOnError)
	data := global.String("data", datadir.Default, "the data folder (file engine; secrets)")
	global.Usage = func() { fmt.Fprint(global.Output(), usage) }
	if err := parse(global, args, stdout, stderr); err != nil {
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
	// Each command parses and checks its arguments before anything is
	// opened, so -h, a typo or a missing flag touches no store.
	fl := flag.NewFlagSet(cmd+" "+sub, flag.ContinueOnError)
	tenant := fl.String("tenant", "demo", "tenant id")
	var act func(op operator) error
	name := cmd + " " + sub
	if cmd == "import" {
		name = cmd // its argument is a file
	}
	switch name {
	case "table create":
		fl = flag.NewFlagSet(cmd+" "+sub, flag.ContinueOnError)
		fl.Usage = subUsage(fl, "table create")
		if err := parse(fl, rest[2:], stdout, stderr); err != nil {
			return err
		}
		if fl.NArg() != 0 {
			return errors.New("table create takes no arguments")
		}
		return createTable(ctx, eng, stdout)
	case "tenant create":
		fl.Usage = subUsage(fl, "tenant create --tenant ID --name NAME")
		name := fl.String("name", "", "the firm's name (required)")
		if err := parse(fl, rest[2:], stdout, stderr); err != nil {
			return err
		}
		act = func(op operator) error {
			t, err := op.CreateTenant(ctx, admin.TenantRequest{ID: *tenant, Name: *name})
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "created tenant %s (%s)\n", t.ID, t.Name)
			return nil
		}
	case "import":
		fl = flag.NewFlagSet(cmd, flag.ContinueOnError)
		fl.Usage = subUsage(fl, "import FILE")
		if err := parse(fl, rest[1:], stdout, stderr); err != nil {
			return err
		}
		if fl.NArg() != 1 {
			return errors.New("import: name one fixture file (the seed format, shared/records)")
		}
		fixture, err := os.ReadFile(fl.Arg(0))
		if err != nil {
			return err
		}
		act = func(op operator) error { return importFile(ctx, op, fl.Arg(0), fixture, stdout) }
	case "keys mint":
		fl.Usage = subUsage(fl, "keys mint --owner PRINCIPAL --scopes \"read docs:read\" [flags]")
		mint, err := mintRequest(fl, tenant, rest[2:], stdout, stderr)
		if err != nil {
			return err
		}
		act = func(op operator) error { return mintKey(ctx, op, mint, stdout, stderr) }
	case "keys list":
		fl.Usage = subUsage(fl, "keys list [--tenant ID]")
		if err := parse(fl, rest[2:], stdout, stderr); err != nil {
			return err
		}
		act = func(op operator) error { return listKeys(ctx, op, *tenant, stdout) }
	case "keys revoke":
		fl.Usage = subUsage(fl, "keys revoke [--tenant ID] CREDENTIAL_ID")
		if err := parse(fl, rest[2:], stdout, stderr); err != nil {
			return err
		}
		if fl.NArg() != 1 {
			return errors.New("keys revoke: name one credential id")
		}
		act = func(op operator) error {
			if err := op.Revoke(ctx, *tenant, fl.Arg(0)); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "revoked %s\n", fl.Arg(0))
			return nil
		}
	case "screen add", "screen remove":
		fl.Usage = subUsage(fl, "screen "+sub+" --case CASE_ID --principal PRINCIPAL [flags]")
		caseID := fl.String("case", "", "the matter's case_id (required)")
		principal := fl.String("principal", "", "the principal id (required)")
		reason := fl.String("reason", "", "why the wall exists, without naming the principal (add only)")
		if err := parse(fl, rest[2:], stdout, stderr); err != nil {
			return err
		}
		if *caseID == "" || *principal == "" || fl.NArg() != 0 {
			return fmt.Errorf("screen %s: --case and --principal are required", sub)
		}
		act = func(op operator) error {
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
	default:
		if sub == "-h" || sub == "-help" || sub == "--help" {
			fmt.Fprint(stdout, usage)
			return flag.ErrHelp
		}
		global.Usage()
		return fmt.Errorf("unknown command %q", strings.TrimSpace(cmd+" "+sub))
	}

	op, err := connect(ctx, eng, datadir.Dir(*data))
	if err != nil {
		return err
	}
	defer op.Close()
	return act(op)
}

// createTable creates the DynamoDB table (dynamostore.CreateTable, the one
// definition the SAM template is held to) and, on AWS, turns on its TTL.
func createTable(ctx context.Context, eng engine.Config, stdout io.Writer) error {
	if eng.Engine != engine.DynamoDB {
		return errors.New("table create needs STORE_ENGINE=dynamodb and DYNAMODB_TABLE (the file engine has no table to create)")
	}
	client, err := dynamoengine.Client(ctx, eng)
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

func importFile(ctx context.Context, op operator, name string, fixture []byte, stdout io.Writer) error {
	res, err := op.Import(ctx, fixture)
	if err != nil {
		return fmt.Errorf("import %s: %w", name, err)
	}
	if res.AlreadyImported {
		fmt.Fprintf(stdout, "tenant %s: fixture %s already imported; nothing written\n", res.Tenant, res.Digest)
		return nil
	}
	fmt.Fprintf(stdout, "tenant %s: fixture %s imported: %d of %d rows written, %d already there\n",
		res.Tenant, res.Digest, res.Written, res.Rows, res.Skipped)
	return nil
}

// mintRequest parses the flags of keys mint.
func mintRequest(fl *flag.FlagSet, tenant *string, args []string, stdout, stderr io.Writer) (admin.MintRequest, error) {
	owner := fl.String("owner", "", "owner principal id (required)")
	scopes := fl.String("scopes", "read docs:read", "scopes, space- or comma-separated")
	class := fl.String("class", "standard", "credential class: standard or client_safe")
	allow := fl.String("allow", "", "matter allow-list, comma-separated (default: unrestricted)")
	label := fl.String("label", "", "a label for the key")
	rateRead := fl.Int("rate-read", 0, "requests per minute in the read lane (default: configured)")
	rateExp := fl.Int("rate-expensive", 0, "requests per minute in the expensive lane (default: configured)")
	if err := parse(fl, args, stdout, stderr); err != nil {
		return admin.MintRequest{}, err
	}
	if *owner == "" {
		return admin.MintRequest{}, errors.New("keys mint: --owner is required")
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
	return req, nil
}

func mintKey(ctx context.Context, op operator, req admin.MintRequest, stdout, stderr io.Writer) error {
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
// server, or the DynamoDB table). The server at the recorded address must
// first prove it holds the data folder's admin token (admin.Client), which
// is never sent: an address a crashed server left behind, now held by
// another process, fails here with nothing disclosed.
func connect(ctx context.Context, eng engine.Config, dir datadir.Dir) (operator, error) {
	if eng.Engine == engine.File {
		addr, err := dir.Read(datadir.AdminAddrFile)
		switch {
		case err == nil:
			token, terr := dir.Read(datadir.AdminTokenFile)
			if terr != nil {
				return nil, fmt.Errorf("read the admin token: %w", terr)
			}
			c, cerr := admin.NewClient(addr, token, &http.Client{Timeout: 2 * time.Minute})
			if cerr != nil {
				return nil, fmt.Errorf("%s: %w", dir.Path(datadir.AdminAddrFile), cerr)
			}
			switch verr := c.Verify(ctx); {
			case verr == nil:
				return &remote{c: c}, nil
			case errors.Is(verr, admin.ErrNoServer):
				// A server that died without removing its address: the
				// store file is free (its lock says so if not).
			default:
				return nil, fmt.Errorf("%s names %s, but the process listening there did not prove it is this data folder's dev server, "+
					"and it was sent nothing but a challenge; if no dev server runs on %s, delete that file (a dev server removes a stale one when it starts): %w",
					dir.Path(datadir.AdminAddrFile), addr, dir, verr)
			}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
		if _, err := os.Stat(dir.StorePath()); err != nil {
			return nil, fmt.Errorf("no store at %s: start the server once with `make run`", dir.StorePath())
		}
	}
	st, err := eng.Open(ctx, dir, dynamoengine.Open)
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
	c *admin.Client
}

// call sends body (JSON-encoded unless it is raw bytes) and decodes a 2xx
// answer into out (nil: drop it); any other answer is an error with the
// server's sentence. Only answers the server proved are read at all.
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
	status, answer, err := r.c.Do(ctx, method, path, raw)
	if err != nil {
		return err
	}
	if status >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(answer, &e)
		return fmt.Errorf("server answered %d %s: %s", status, http.StatusText(status), e.Error)
	}
	if out != nil {
		return json.Unmarshal(answer, out)
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
