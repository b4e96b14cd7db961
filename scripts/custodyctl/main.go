// Command custodyctl operates Custody on either storage engine: it creates
// the DynamoDB table, creates tenants, imports records in the seed format,
// mints, lists and revokes API keys and upload grants, puts principals
// behind (or takes them out of) a matter's ethical wall, makes one-time
// sign-in links to the approval page, sets the firm's autonomy levels for
// governed writes (docs/decisions.md "Autonomy"), lists and acknowledges
// the firm's outbox of approved external acts, and verifies a matter's
// decision ledger.
//
//	custodyctl table create
//	custodyctl tenant create --tenant ID --name NAME
//	custodyctl import FILE
//	custodyctl import DIR --matter CASE_ID --by PRINCIPAL [--tenant demo]
//	custodyctl documents pending --case CASE_ID [--tenant demo]
//	custodyctl documents review DOC --case CASE_ID --by PRINCIPAL --privilege none|privileged|work_product [--title T] [--kind K] [--tenant demo]
//	custodyctl documents review DOC --case CASE_ID --by PRINCIPAL --withdraw [--tenant demo]
//	custodyctl keys mint   --owner p_dana_whitfield --scopes "read docs:read" [--tenant demo] [--class client_safe] [--allow m_a,m_b] [--label …] [--rate-read N] [--rate-expensive N] [--rate-write N]
//	custodyctl keys list   [--tenant demo]
//	custodyctl keys revoke [--tenant demo] CREDENTIAL_ID
//	custodyctl screen add|remove --case CASE_ID --principal P [--tenant demo] [--reason TEXT]
//	custodyctl signin-link --principal P [--tenant demo] [--ttl 15m] [--base URL]
//	custodyctl grant mint --key CRED_ID --case CASE_ID --by ADMIN [--ttl 24h] [--max-open 3] [--tenant demo]
//	custodyctl grant list   [--tenant demo]
//	custodyctl grant revoke [--tenant demo] GRANT_ID
//	custodyctl uploads list --state infected|scan_failed [--tenant demo]
//	custodyctl uploads rescan UPLOAD_ID --by ADMIN [--tenant demo]
//	custodyctl autonomy set  --name TOOL_OR_ACTION|'*' --level L0…L4|clear [--tenant demo]
//	custodyctl autonomy list [--tenant demo]
//	custodyctl outbox list [--tenant demo] [--all]
//	custodyctl outbox ack  --by PRINCIPAL [--note TEXT] [--tenant demo] MESSAGE_ID
//	custodyctl ledger verify --case CASE_ID [--tenant demo]
//
// The outbox holds the external acts a person at the firm approved on the
// approval page (a production to serve, a hold notice to send): Custody
// never carries them out; the firm's systems (or an operator) take each
// message and acknowledge it. ledger verify checks a matter's hash-chained
// record-decision ledger and exits 1 naming the first broken seq.
//
// A sign-in link is <public base>/approvals/signin?t=csl_<48 hex>, single
// use, for the TTL (1 min to 24 h). The public base is --base, else, through
// a running dev server, that server's own address, else $PUBLIC_BASE_URL,
// else (the file engine) make run's http://127.0.0.1:8080.
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
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/scripts/internal/engine"
	"github.com/custodymcp/custody/scripts/internal/engine/dynamoengine"
	"github.com/custodymcp/custody/shared/admin"
	"github.com/custodymcp/custody/shared/approvals"
	"github.com/custodymcp/custody/shared/approvals/ledger"
	"github.com/custodymcp/custody/shared/approvals/outbox"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/autonomy"
	"github.com/custodymcp/custody/shared/intake/importer"
	"github.com/custodymcp/custody/shared/intake/review"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/uploads"
)

const usage = `usage: custodyctl [--data DIR] COMMAND

  --data DIR   the dev server's data folder (default .custody): its admin token and
               address, or its store file when no server runs on it
  -h, --help   this text; after a command, that command's flags

commands:
  table create
  tenant create --tenant ID --name NAME
  import FILE                      a record in the seed format; a second import is a no-op
  import DIR --matter CASE_ID --by PRINCIPAL [--tenant demo]
                                   the folder's regular files (no symlinks, depth <= 8) through
                                   the scan gate and intake into the matter, pending review;
                                   one line per file: verdict, document, text state
  documents pending --case CASE_ID [--tenant demo]
                                   the documents intake made that no attorney reviewed yet
  documents review DOC --case CASE_ID --by PRINCIPAL --privilege none|privileged|work_product
            [--title T] [--kind K] [--tenant demo]  |  ... --withdraw
                                   a licensed attorney on the matter reviews it (served from
                                   then on) or withdraws it (kept, never served)
  keys mint --owner PRINCIPAL --scopes "read docs:read" [--tenant demo]
            [--class standard|client_safe] [--allow CASE_ID,...] [--label TEXT]
            [--rate-read N] [--rate-expensive N] [--rate-write N]
            (a client_safe key never holds write)
  keys list [--tenant demo]
  keys revoke [--tenant demo] CREDENTIAL_ID
  screen add|remove --case CASE_ID --principal PRINCIPAL [--tenant demo] [--reason TEXT]
  signin-link --principal PRINCIPAL [--tenant demo] [--ttl 15m] [--base URL]
                                   a one-time sign-in link to the approval page
  grant mint --key CREDENTIAL_ID --case CASE_ID --by ADMIN [--ttl 24h] [--max-open 3] [--tenant demo]
                                   a single-use upload grant; the token is printed once
  grant list [--tenant demo]
  grant revoke [--tenant demo] GRANT_ID
  uploads list --state infected|scan_failed [--tenant demo]
                                   the uploads the scan gate held: quarantined, or kept unserved
  uploads rescan UPLOAD_ID --by ADMIN [--tenant demo]
                                   send a scan_failed upload back to be scanned again
  autonomy set --name TOOL_OR_ACTION --level L0|L1|L2|L3|L4|clear [--tenant demo]
                                   '*' names the tenant default; an absent setting is L2
  autonomy list [--tenant demo]
  outbox list [--tenant demo] [--all]
                                   approved external acts waiting for the firm's systems
  outbox ack --by PRINCIPAL [--note TEXT] [--tenant demo] MESSAGE_ID
                                   record that the firm's systems took a message
  ledger verify --case CASE_ID [--tenant demo]
                                   check a matter's decision ledger; exit 1 naming the
                                   first broken seq

environment:
  STORE_ENGINE       file (default) or dynamodb
  DYNAMODB_TABLE     the table (dynamodb)
  DYNAMODB_ENDPOINT  an emulator's base URL (emulators only)
  PUBLIC_BASE_URL    the approval page's base for signin-link (default: the running dev
                     server's address, else http://127.0.0.1:8080 on the file engine)
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
	if cmd == "import" || cmd == "signin-link" {
		name = cmd // its argument is a file; its flags follow at once
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
		fl.Usage = subUsage(fl, "import FILE | import DIR --matter CASE_ID --by PRINCIPAL [--tenant ID]")
		tenant = fl.String("tenant", "demo", "tenant id (DIR)")
		matter := fl.String("matter", "", "the matter the folder's files go into (DIR; --case too)")
		fl.StringVar(matter, "case", "", "the same as --matter")
		by := fl.String("by", "", "the licensed attorney on the matter, or firm administrator, importing (DIR)")
		args, err := flagsAnywhere(fl, rest[1:], stdout, stderr)
		if err != nil {
			return err
		}
		if len(args) != 1 {
			return errors.New("import: name one fixture file (the seed format, shared/records) or one folder")
		}
		if info, err := os.Stat(args[0]); err == nil && info.IsDir() {
			if *matter == "" || *by == "" {
				return errors.New("import DIR: --matter (or --case) and --by are required")
			}
			dir := args[0]
			act = func(op operator) error { return importDir(ctx, op, *tenant, *matter, *by, dir, stdout) }
			break
		}
		fixture, err := os.ReadFile(args[0])
		if err != nil {
			return err
		}
		act = func(op operator) error { return importFile(ctx, op, args[0], fixture, stdout) }
	case "documents pending":
		fl.Usage = subUsage(fl, "documents pending --case CASE_ID [--tenant ID]")
		caseID := fl.String("case", "", "the matter's case_id (required)")
		if err := parse(fl, rest[2:], stdout, stderr); err != nil {
			return err
		}
		if *caseID == "" || fl.NArg() != 0 {
			return errors.New("documents pending: --case is required")
		}
		act = func(op operator) error { return listPending(ctx, op, *tenant, *caseID, stdout) }
	case "documents review":
		fl.Usage = subUsage(fl, "documents review DOC --case CASE_ID --by PRINCIPAL --privilege none|privileged|work_product [--title T] [--kind K] | --withdraw")
		caseID := fl.String("case", "", "the matter's case_id (required)")
		by := fl.String("by", "", "the licensed attorney on the matter reviewing it (required)")
		privilege := fl.String("privilege", "", "none, privileged or work_product (required unless --withdraw; no default)")
		title := fl.String("title", "", "a new title")
		kind := fl.String("kind", "", "a new kind, one of the record's document kinds")
		withdraw := fl.Bool("withdraw", false, "withdraw it: kept, never served")
		args, err := flagsAnywhere(fl, rest[2:], stdout, stderr)
		if err != nil {
			return err
		}
		if *caseID == "" || *by == "" || len(args) != 1 {
			return errors.New("documents review: name one document (custodyctl documents pending) with --case and --by")
		}
		if !*withdraw && *privilege == "" {
			return errors.New("documents review: --privilege none, privileged or work_product is required (or --withdraw)")
		}
		req := review.Request{Tenant: *tenant, Matter: *caseID, Document: args[0], By: *by,
			Privilege: records.Privilege(*privilege), Title: *title, Kind: *kind, Withdraw: *withdraw}
		act = func(op operator) error { return reviewDocument(ctx, op, req, stdout) }
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
	case "signin-link":
		fl.Usage = subUsage(fl, "signin-link --principal PRINCIPAL [--tenant ID] [--ttl 15m] [--base URL]")
		principal := fl.String("principal", "", "the principal the link signs in (required)")
		ttl := fl.Duration("ttl", approvals.DefaultLinkTTL, "how long the link works, 1m to 24h")
		base := fl.String("base", "", "the approval page's public base URL (default: see the usage)")
		if err := parse(fl, rest[1:], stdout, stderr); err != nil {
			return err
		}
		if *principal == "" || fl.NArg() != 0 {
			return errors.New("signin-link: --principal is required")
		}
		if *ttl < approvals.MinLinkTTL || *ttl > approvals.MaxLinkTTL {
			return fmt.Errorf("signin-link: --ttl %v: a link lives from 1m to 24h", *ttl)
		}
		act = func(op operator) error {
			b, err := op.PublicBase(*base, getenv("PUBLIC_BASE_URL"), eng)
			if err != nil {
				return err
			}
			l, err := op.SignIn(ctx, admin.SignInRequest{Tenant: *tenant, Principal: *principal, TTLSeconds: int64(*ttl / time.Second)})
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, approvals.LinkURL(b, l.Token))
			fmt.Fprintf(stderr, "sign-in link for %s (tenant %s): works once, until %s; opening it shows a button, pressing it signs in\n",
				l.Principal, l.Tenant, l.ExpiresAt.Local().Format(time.DateTime))
			return nil
		}
	case "grant mint":
		fl.Usage = subUsage(fl, "grant mint --key CREDENTIAL_ID --case CASE_ID --by ADMIN [flags]")
		key := fl.String("key", "", "the API key's credential id the grant binds (required; custodyctl keys list)")
		caseID := fl.String("case", "", "the one matter it deposits into (required)")
		by := fl.String("by", "", "the firm administrator minting it (required)")
		ttl := fl.Duration("ttl", uploads.DefaultGrantTTL, "how long the grant lives, 60s to 168h")
		maxOpen := fl.Int("max-open", uploads.DefaultMaxOpen, "how many uploads may be open at once")
		if err := parse(fl, rest[2:], stdout, stderr); err != nil {
			return err
		}
		if *key == "" || *caseID == "" || *by == "" || fl.NArg() != 0 {
			return errors.New("grant mint: --key, --case and --by are required")
		}
		req := admin.GrantRequest{Tenant: *tenant, CredentialID: *key, CaseID: *caseID, By: *by, TTL: ttl.String(), MaxOpen: *maxOpen}
		act = func(op operator) error { return mintGrant(ctx, op, req, stdout, stderr) }
	case "grant list":
		fl.Usage = subUsage(fl, "grant list [--tenant ID]")
		if err := parse(fl, rest[2:], stdout, stderr); err != nil {
			return err
		}
		act = func(op operator) error { return listGrants(ctx, op, *tenant, stdout) }
	case "grant revoke":
		fl.Usage = subUsage(fl, "grant revoke [--tenant ID] GRANT_ID")
		if err := parse(fl, rest[2:], stdout, stderr); err != nil {
			return err
		}
		if fl.NArg() != 1 {
			return errors.New("grant revoke: name one grant id (custodyctl grant list)")
		}
		act = func(op operator) error {
			if err := op.RevokeGrant(ctx, *tenant, fl.Arg(0)); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "revoked %s\n", fl.Arg(0))
			return nil
		}
	case "uploads list":
		fl.Usage = subUsage(fl, "uploads list --state infected|scan_failed [--tenant ID]")
		state := fl.String("state", "", "infected or scan_failed (required)")
		if err := parse(fl, rest[2:], stdout, stderr); err != nil {
			return err
		}
		if s := uploads.State(*state); !s.Held() || fl.NArg() != 0 {
			return errors.New("uploads list: --state infected or --state scan_failed is required")
		}
		act = func(op operator) error { return listHeld(ctx, op, *tenant, uploads.State(*state), stdout) }
	case "uploads rescan":
		fl.Usage = subUsage(fl, "uploads rescan UPLOAD_ID --by ADMIN [--tenant ID]")
		by := fl.String("by", "", "the firm administrator asking for the rescan (required)")
		if err := parse(fl, rest[2:], stdout, stderr); err != nil {
			return err
		}
		// The upload id may come before the flags, as the usage shows it.
		pos := fl.Args()
		if len(pos) > 1 {
			id := pos[0]
			if err := parse(fl, pos[1:], stdout, stderr); err != nil {
				return err
			}
			pos = append([]string{id}, fl.Args()...)
		}
		if *by == "" || len(pos) != 1 {
			return errors.New("uploads rescan: name one upload id (custodyctl uploads list --state scan_failed) and --by")
		}
		uploadID := pos[0]
		act = func(op operator) error {
			res, err := op.Rescan(ctx, uploadID, admin.RescanRequest{Tenant: *tenant, By: *by})
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s is %s again: the sweeper puts its object back in verified/ and the scanner judges it anew\n", res.UploadID, res.State)
			return nil
		}
	case "autonomy set":
		fl.Usage = subUsage(fl, "autonomy set --name TOOL_OR_ACTION --level L0|L1|L2|L3|L4|clear [--tenant ID]")
		name := fl.String("name", "", "a write tool, an action, or '*' for the tenant default (required)")
		level := fl.String("level", "", "L0 (no writes) … L4, or clear (required)")
		if err := parse(fl, rest[2:], stdout, stderr); err != nil {
			return err
		}
		if *name == "" || *level == "" || fl.NArg() != 0 {
			return errors.New("autonomy set: --name and --level are required")
		}
		act = func(op operator) error {
			if err := op.SetAutonomy(ctx, admin.AutonomyRequest{Tenant: *tenant, Name: *name, Level: *level}); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "autonomy of %s in %s: %s\n", *name, *tenant, *level)
			return nil
		}
	case "autonomy list":
		fl.Usage = subUsage(fl, "autonomy list [--tenant ID]")
		if err := parse(fl, rest[2:], stdout, stderr); err != nil {
			return err
		}
		act = func(op operator) error { return listAutonomy(ctx, op, *tenant, stdout) }
	case "outbox list":
		fl.Usage = subUsage(fl, "outbox list [--tenant ID] [--all]")
		all := fl.Bool("all", false, "also the acknowledged messages")
		if err := parse(fl, rest[2:], stdout, stderr); err != nil {
			return err
		}
		if fl.NArg() != 0 {
			return errors.New("outbox list takes no arguments")
		}
		act = func(op operator) error { return listOutbox(ctx, op, *tenant, *all, stdout) }
	case "outbox ack":
		fl.Usage = subUsage(fl, "outbox ack --by PRINCIPAL [--note TEXT] [--tenant ID] MESSAGE_ID")
		by := fl.String("by", "", "who took the message (required)")
		note := fl.String("note", "", "the firm's system's reference for it")
		if err := parse(fl, rest[2:], stdout, stderr); err != nil {
			return err
		}
		if *by == "" || fl.NArg() != 1 {
			return errors.New("outbox ack: --by and one message id (custodyctl outbox list) are required")
		}
		act = func(op operator) error {
			m, err := op.AckOutbox(ctx, *tenant, fl.Arg(0), admin.AckRequest{By: *by, Note: *note})
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "acknowledged %s (%s on %s) by %s\n", m.ID, m.Action, m.CaseID, m.AcknowledgedBy)
			return nil
		}
	case "ledger verify":
		fl.Usage = subUsage(fl, "ledger verify --case CASE_ID [--tenant ID]")
		caseID := fl.String("case", "", "the matter's case_id (required)")
		if err := parse(fl, rest[2:], stdout, stderr); err != nil {
			return err
		}
		if *caseID == "" || fl.NArg() != 0 {
			return errors.New("ledger verify: --case is required")
		}
		act = func(op operator) error { return verifyLedger(ctx, op, *tenant, *caseID, stdout) }
	default:
		if sub == "-h" || sub == "-help" || sub == "--help" {
			fmt.Fprint(stdout, usage)
			return flag.ErrHelp
		}
		global.Usage()
		return fmt.Errorf("unknown command %q", strings.TrimSpace(cmd+" "+sub))
	}

	op, err := connect(ctx, eng, datadir.Dir(*data), getenv)
	if err != nil {
		return err
	}
	defer op.Close()
	return act(op)
}

// flagsAnywhere parses fl over args whose positional arguments may come
// before, between or after the flags; it returns the positional ones.
func flagsAnywhere(fl *flag.FlagSet, args []string, stdout, stderr io.Writer) ([]string, error) {
	var pos []string
	for {
		if err := parse(fl, args, stdout, stderr); err != nil {
			return nil, err
		}
		if fl.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fl.Arg(0))
		args = fl.Args()[1:]
	}
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
	rateWrite := fl.Int("rate-write", 0, "governed writes per minute (the write lane; default: configured)")
	if err := parse(fl, args, stdout, stderr); err != nil {
		return admin.MintRequest{}, err
	}
	if *owner == "" {
		return admin.MintRequest{}, errors.New("keys mint: --owner is required")
	}
	if parsed, err := auth.ParseScopes(*scopes); err == nil && auth.Class(*class) == auth.ClassClientSafe && slices.Contains(parsed, auth.ScopeWrite) {
		return admin.MintRequest{}, fmt.Errorf("keys mint: %w", auth.ErrClientSafeWrite)
	}
	req := admin.MintRequest{Tenant: *tenant, Owner: *owner, Scopes: *scopes, Class: *class, Label: *label}
	if *allow != "" {
		req.AllowList = strings.Split(*allow, ",")
	}
	if *rateRead > 0 || *rateExp > 0 || *rateWrite > 0 {
		req.RateLimits = map[string]int{}
		if *rateWrite > 0 {
			req.RateLimits["write"] = *rateWrite
		}
		if *rateRead > 0 {
			req.RateLimits["read"] = *rateRead
		}
		if *rateExp > 0 {
			req.RateLimits["expensive"] = *rateExp
		}
		if *rateWrite > 0 {
			req.RateLimits["write"] = *rateWrite
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

// mintGrant mints an upload grant: the token alone on stdout, printed
// once, and what it binds on stderr.
func mintGrant(ctx context.Context, op operator, req admin.GrantRequest, stdout, stderr io.Writer) error {
	m, err := op.MintGrant(ctx, req)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", m.Token)
	fmt.Fprintf(stderr, "minted %s for key %s on %s by %s: single use, at most %d open uploads, until %s; the token is shown once\n",
		m.ID, m.CredentialID, m.Matter, m.MintedBy, m.MaxOpen, m.ExpiresAt.UTC().Format(time.RFC3339))
	return nil
}

func listGrants(ctx context.Context, op operator, tenant string, stdout io.Writer) error {
	grants, err := op.ListGrants(ctx, tenant)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GRANT\tKEY\tCASE\tSTATE\tOPEN\tEXPIRES\tBY\tSPENT BY")
	for _, g := range grants {
		open := "-"
		if g.OpenUploads != nil {
			open = fmt.Sprintf("%d/%d", *g.OpenUploads, g.MaxOpen)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.ID, g.CredentialID, g.Matter, g.State, open,
			g.ExpiresAt.UTC().Format(time.RFC3339), g.MintedBy, g.SpentBy)
	}
	return tw.Flush()
}

func listHeld(ctx context.Context, op operator, tenant string, state uploads.State, stdout io.Writer) error {
	held, err := op.ListHeld(ctx, tenant, state)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "UPLOAD\tCASE\tFILENAME\tSTATE\tENGINE\tTHREATS OR REASON\tSCANNED\tBYTES")
	for _, h := range held {
		why := h.Reason
		if h.State == uploads.StateInfected {
			why = strings.Join(h.Threats, ", ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%q\t%s\t%s\t%s\t%s\t%d\n", h.UploadID, h.Matter, h.Filename, h.State, h.Engine, why,
			h.ScannedAt.UTC().Format(time.RFC3339), h.Size)
	}
	if len(held) == 0 {
		fmt.Fprintf(tw, "(no %s uploads in %s)\n", state, tenant)
	}
	return tw.Flush()
}

func listAutonomy(ctx context.Context, op operator, tenant string, stdout io.Writer) error {
	settings, err := op.ListAutonomy(ctx, tenant)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tLEVEL\tUPDATED")
	for _, s := range settings {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, s.LevelText, s.UpdatedAt.UTC().Format(time.RFC3339))
	}
	if len(settings) == 0 {
		fmt.Fprintf(tw, "(none: every governed write of %s runs at L2)\n", tenant)
	}
	return tw.Flush()
}

func listOutbox(ctx context.Context, op operator, tenant string, all bool, stdout io.Writer) error {
	msgs, err := op.ListOutbox(ctx, tenant, all)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MESSAGE\tCASE\tACTION\tSTATE\tAPPROVED BY\tAPPROVED\tPROPOSAL")
	for _, m := range msgs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.ID, m.CaseID, m.Action, m.State, m.ApprovedBy,
			m.ApprovedAt.UTC().Format(time.RFC3339), m.Proposal)
	}
	if len(msgs) == 0 {
		fmt.Fprintf(tw, "(no message waits in %s's outbox)\n", tenant)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, m := range msgs {
		fmt.Fprintf(stdout, "\n%s: %s\n", m.ID, m.WhatWillHappen)
	}
	return nil
}

// errLedgerBroken: ledger verify found the chain broken (the report is on
// stdout); custodyctl exits 1.
var errLedgerBroken = errors.New("the decision ledger is broken")

func verifyLedger(ctx context.Context, op operator, tenant, matter string, stdout io.Writer) error {
	rep, err := op.VerifyLedger(ctx, tenant, matter)
	if err != nil {
		return err
	}
	if rep.OK {
		fmt.Fprintf(stdout, "ledger of %s: %d entries, intact\n", matter, rep.Entries)
		return nil
	}
	if rep.BrokenSeq > 0 {
		fmt.Fprintf(stdout, "ledger of %s: broken at seq %d: %s\n", matter, rep.BrokenSeq, rep.Problem)
	} else {
		fmt.Fprintf(stdout, "ledger of %s: broken: %s\n", matter, rep.Problem)
	}
	return fmt.Errorf("ledger of %s: %w", matter, errLedgerBroken)
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
	SignIn(ctx context.Context, req admin.SignInRequest) (admin.SignInLink, error)
	// PublicBase is the approval page's base URL for links: flag, else the
	// running server's own address (remote), else env, else the dev
	// server's default on the file engine.
	PublicBase(flag, env string, eng engine.Config) (string, error)
	MintGrant(ctx context.Context, req admin.GrantRequest) (admin.MintedGrant, error)
	ListGrants(ctx context.Context, tenant string) ([]uploads.GrantInfo, error)
	RevokeGrant(ctx context.Context, tenant, id string) error
	ListHeld(ctx context.Context, tenant string, state uploads.State) ([]uploads.HeldUpload, error)
	Rescan(ctx context.Context, uploadID string, req admin.RescanRequest) (admin.RescanResult, error)
	SetAutonomy(ctx context.Context, req admin.AutonomyRequest) error
	ListAutonomy(ctx context.Context, tenant string) ([]autonomy.Setting, error)
	ListOutbox(ctx context.Context, tenant string, all bool) ([]outbox.Message, error)
	AckOutbox(ctx context.Context, tenant, id string, req admin.AckRequest) (outbox.Message, error)
	VerifyLedger(ctx context.Context, tenant, matter string) (ledger.Report, error)
	PendingDocuments(ctx context.Context, tenant, matter string) ([]review.Pending, error)
	ReviewDocument(ctx context.Context, req review.Request) (review.Result, error)
	ImportFile(ctx context.Context, tenant, matter, by string, f importer.File) (importer.Line, error)
	Close() error
}

// connect reaches the engine: a running file-engine dev server's admin
// endpoint when there is one, else the store itself (the file of a stopped
// server, or the DynamoDB table). The server at the recorded address must
// first prove it holds the data folder's admin token (admin.Client), which
// is never sent: an address a crashed server left behind, now held by
// another process, fails here with nothing disclosed.
func connect(ctx context.Context, eng engine.Config, dir datadir.Dir, getenv func(string) string) (operator, error) {
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
	return &direct{st: st, now: time.Now, eng: eng, dir: dir, getenv: getenv}, nil
}

// direct operates on an open store.
type direct struct {
	st  *engine.Store
	now func() time.Time
	// eng, dir and getenv are what import opens its blob store and scan
	// gate from (documents.go); imp is that importer once opened, and
	// closers close what it opened.
	eng     engine.Config
	dir     datadir.Dir
	getenv  func(string) string
	imp     *importer.Importer
	closers []func()
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

func (d *direct) SignIn(ctx context.Context, req admin.SignInRequest) (admin.SignInLink, error) {
	return admin.MintSignIn(ctx, d.st, req, d.now())
}

// devBase is make run's address: the approval page of a stopped file-engine
// dev server is there once it starts again with the default -addr.
const devBase = "http://127.0.0.1:8080"

func (d *direct) PublicBase(flag, env string, eng engine.Config) (string, error) {
	switch {
	case flag != "":
		return flag, nil
	case env != "":
		return env, nil
	case eng.Engine == engine.File:
		return devBase, nil
	}
	return "", errors.New("signin-link: set --base or PUBLIC_BASE_URL to the approval page's public base URL (the API's, stage included)")
}

func (d *direct) MintGrant(ctx context.Context, req admin.GrantRequest) (admin.MintedGrant, error) {
	return admin.MintGrant(ctx, d.st, req, d.now())
}

func (d *direct) ListGrants(ctx context.Context, tenant string) ([]uploads.GrantInfo, error) {
	return uploads.ListGrants(ctx, d.st, tenant)
}

func (d *direct) RevokeGrant(ctx context.Context, tenant, id string) error {
	return revokeErr(uploads.RevokeGrant(ctx, d.st, tenant, id, d.now()))
}

// revokeErr words RevokeGrant's refusals for the operator.
func revokeErr(err error) error {
	switch {
	case errors.Is(err, uploads.ErrUnknownGrant):
		return errors.New("no such grant in that tenant (custodyctl grant list)")
	case errors.Is(err, uploads.ErrGrantSpent):
		return errors.New("that grant was already spent by an upload")
	case errors.Is(err, uploads.ErrGrantExpired):
		return errors.New("that grant has already expired")
	}
	return err
}

func (d *direct) ListHeld(ctx context.Context, tenant string, state uploads.State) ([]uploads.HeldUpload, error) {
	return uploads.ListHeld(ctx, d.st, tenant, state)
}

func (d *direct) Rescan(ctx context.Context, uploadID string, req admin.RescanRequest) (admin.RescanResult, error) {
	res, err := admin.Rescan(ctx, d.st, uploadID, req, d.now())
	if errors.Is(err, uploads.ErrUnknownUpload) {
		return res, errors.New("no such upload in that tenant (custodyctl uploads list --state scan_failed)")
	}
	return res, err
}

func (d *direct) SetAutonomy(ctx context.Context, req admin.AutonomyRequest) error {
	return admin.SetAutonomy(ctx, d.st, req, d.now())
}

func (d *direct) ListAutonomy(ctx context.Context, tenant string) ([]autonomy.Setting, error) {
	return autonomy.List(ctx, d.st, tenant)
}

func (d *direct) ListOutbox(ctx context.Context, tenant string, all bool) ([]outbox.Message, error) {
	return outbox.List(ctx, d.st, tenant, all)
}

func (d *direct) AckOutbox(ctx context.Context, tenant, id string, req admin.AckRequest) (outbox.Message, error) {
	m, err := outbox.Acknowledge(ctx, d.st, tenant, id, req.By, req.Note, d.now())
	switch {
	case errors.Is(err, outbox.ErrUnknown):
		return m, errors.New("no such message in that tenant's outbox (custodyctl outbox list)")
	case errors.Is(err, outbox.ErrAcknowledged):
		return m, errors.New("that message was already acknowledged")
	}
	return m, err
}

func (d *direct) VerifyLedger(ctx context.Context, tenant, matter string) (ledger.Report, error) {
	rep, err := admin.VerifyLedger(ctx, d.st, tenant, matter)
	if errors.Is(err, store.ErrNotFound) {
		return rep, fmt.Errorf("tenant %s has no matter %s", tenant, matter)
	}
	return rep, err
}

func (d *direct) Close() error {
	for _, c := range d.closers {
		c()
	}
	return d.st.Close()
}

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

func (r *remote) SignIn(ctx context.Context, req admin.SignInRequest) (admin.SignInLink, error) {
	var l admin.SignInLink
	return l, r.call(ctx, http.MethodPost, "/admin/signin-links", req, &l)
}

// PublicBase of a running dev server is its own address: it serves the
// approval page where it serves /mcp and the admin endpoint.
func (r *remote) PublicBase(flag, _ string, _ engine.Config) (string, error) {
	if flag != "" {
		return flag, nil
	}
	return "http://" + r.c.Addr(), nil
}

func (r *remote) MintGrant(ctx context.Context, req admin.GrantRequest) (admin.MintedGrant, error) {
	var m admin.MintedGrant
	return m, r.call(ctx, http.MethodPost, "/admin/grants", req, &m)
}

func (r *remote) ListGrants(ctx context.Context, tenant string) ([]uploads.GrantInfo, error) {
	var grants []uploads.GrantInfo
	return grants, r.call(ctx, http.MethodGet, "/admin/grants?tenant="+url.QueryEscape(tenant), nil, &grants)
}

func (r *remote) RevokeGrant(ctx context.Context, tenant, id string) error {
	return r.call(ctx, http.MethodPost, "/admin/grants/"+url.PathEscape(id)+"/revoke?tenant="+url.QueryEscape(tenant), nil, nil)
}

func (r *remote) ListHeld(ctx context.Context, tenant string, state uploads.State) ([]uploads.HeldUpload, error) {
	var held []uploads.HeldUpload
	return held, r.call(ctx, http.MethodGet, "/admin/uploads?tenant="+url.QueryEscape(tenant)+"&state="+url.QueryEscape(string(state)), nil, &held)
}

func (r *remote) Rescan(ctx context.Context, uploadID string, req admin.RescanRequest) (admin.RescanResult, error) {
	var res admin.RescanResult
	return res, r.call(ctx, http.MethodPost, "/admin/uploads/"+url.PathEscape(uploadID)+"/rescan", req, &res)
}

func (r *remote) SetAutonomy(ctx context.Context, req admin.AutonomyRequest) error {
	return r.call(ctx, http.MethodPost, "/admin/autonomy", req, nil)
}

func (r *remote) ListAutonomy(ctx context.Context, tenant string) ([]autonomy.Setting, error) {
	var out []autonomy.Setting
	return out, r.call(ctx, http.MethodGet, "/admin/autonomy?tenant="+url.QueryEscape(tenant), nil, &out)
}

func (r *remote) ListOutbox(ctx context.Context, tenant string, all bool) ([]outbox.Message, error) {
	var out []outbox.Message
	q := "/admin/outbox?tenant=" + url.QueryEscape(tenant)
	if all {
		q += "&all=1"
	}
	return out, r.call(ctx, http.MethodGet, q, nil, &out)
}

func (r *remote) AckOutbox(ctx context.Context, tenant, id string, req admin.AckRequest) (outbox.Message, error) {
	var m outbox.Message
	return m, r.call(ctx, http.MethodPost, "/admin/outbox/"+url.PathEscape(id)+"/ack?tenant="+url.QueryEscape(tenant), req, &m)
}

func (r *remote) VerifyLedger(ctx context.Context, tenant, matter string) (ledger.Report, error) {
	var rep ledger.Report
	return rep, r.call(ctx, http.MethodGet, "/admin/ledger/verify?tenant="+url.QueryEscape(tenant)+"&case="+url.QueryEscape(matter), nil, &rep)
}

func (r *remote) Close() error { return nil }
