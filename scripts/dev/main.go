// Command dev is Custody's local all-in-one server (`make run`): /mcp on
// 127.0.0.1:8080 over the embedded file store in a git-ignored data folder,
// or over a DynamoDB table. The first start seeds the demo firm; every start
// prints the dev key (kept in a 0600 file in the data folder) and a
// ready-to-paste MCP client configuration. Ctrl-C shuts it down cleanly.
//
// The engine comes from the environment (scripts/internal/engine):
//
//	STORE_ENGINE=file|dynamodb (default file), DYNAMODB_TABLE,
//	DYNAMODB_ENDPOINT (emulators only: static dummy credentials, us-east-1)
//
// The DynamoDB engine is linked only with -tags dynamodb (`make run` adds
// it when STORE_ENGINE=dynamodb): without it the server links no AWS SDK,
// whose package initialisation would cost every start milliseconds, and
// STORE_ENGINE=dynamodb is refused with a message naming the tag.
//
// With the file engine the server is one process (bbolt locks the store)
// and custodyctl administers it through its loopback-only admin endpoint,
// whose address it leaves in the data folder. With DynamoDB any number of
// servers may share one table: given the same data folder they share its
// secrets (cursor key, admin token, dev key) and behave as one service — a
// session minted by one is served by another, a key revoked through one
// fails at once on all (nothing lives in a process's memory). Each still
// mounts the admin endpoint; custodyctl talks to the table directly.
//
// -conformance adds the fixture profile the official MCP conformance suite
// runs against (shared/conformance; `make conformance`): its tools (and
// prompts and resources) behind the conformance scope, the held GET stream,
// and a fixture key (tenant "conformance", principal "p_conformance", scope
// conformance only, a rate limit the suite cannot reach) minted once into
// the data folder, as which every request that presents no credential is
// authenticated — the suite sends none. Such requests are authenticated,
// rate-counted and audited like any; they see the fixtures and nothing of
// the record. The profile is refused on any address but loopback. Custody's
// own keys keep working beside it and never see a fixture.
//
// The upload lane (issue 16) runs against a local S3 server started in
// process (package s3local: gofakes3 behind a strict front), its staging and
// record buckets kept under <data>/blobs/ (s3afero), on a loopback port of
// its own that the presigned part URLs name (-s3-addr). -s3 URL uses a local
// S3 server started elsewhere instead (go run ./shared/blob/s3local/cmd/s3local),
// as several dev servers on one DynamoDB table must, since s3local keeps
// multipart uploads in progress in its memory: after a restart an upload
// begun before it cannot be completed (complete_upload answers VALIDATION,
// spent false, "begin a new upload session", and the upload is abandoned),
// while finished objects persist. -scanner signature (the default: the
// EICAR test file by content), clamd=HOST:PORT[,max=SIZE] (a running
// clamd over TCP, which must run with AlertExceedsMax yes; SIZE, in
// clamd.conf's notation, its StreamMaxLength and MaxFileSize, default
// 100M) or off (no engine: the lane refuses SCANNER_UNAVAILABLE and spends
// nothing). The scan gate (shared/scan/gate) judges each object copied to
// verified/: the local S3 server sends no notifications, so the server
// marshals the S3 event S3 would send and hands the JSON to the gate, as
// Lambda hands it to the scangate function (notify.go).
//
// Tasks (2025-11-25, package tasks) run in process: a task-augmented
// tools/call sends its message to an in-memory queue (memqueue), a
// dispatcher delivers it to the worker as Lambda's SQS event source would
// (queue.Dispatch; a failed record comes back after a one-minute
// visibility timeout), and a sweeper ticker runs the recovery duties every
// 15 s — lapsed leases, unclaimed and expired tasks, proposals past
// their expiry, the upload lane's copies to verified/, and on the file
// engine the expired rows. The queue's messages are hints: a process that
// dies loses those it held, and any server's sweeper, on the same table,
// sends them again. POST /admin/sweep?at=<time> runs one sweep at a chosen
// time (for tests that cannot wait out a lease).
//
// On DynamoDB the tasks may travel on SQS instead, as on AWS:
// TASK_QUEUE_URL names the queue (SQS_ENDPOINT an emulator's, such as
// fauxqs), and TASK_DEAD_LETTER_QUEUE_URL, when set, its dead-letter queue,
// which the sweeper then reads (the dead-letter duty). Every server on the
// table sends to that queue and, unless started with -task-worker=false,
// polls it: a task created through one is run by whichever polls first,
// another process included.
//
// -oauth-issuer and -oauth-jwks-url (default $OAUTH_ISSUER, $OAUTH_JWKS_URL)
// make /mcp an OAuth resource server beside its keys, as the Lambda's
// OAUTH_* variables do (shared/auth/oauth; OAUTH_REQUIRED_SCOPE,
// OAUTH_SCOPE_MAP, OAUTH_TENANT_CLAIM, OAUTH_TENANT, OAUTH_USER_CLAIM and
// OAUTH_CLASS_CLAIM are read too). The resource, every token's audience, is
// http://<the bound address>/mcp; http issuers are allowed here.
//
// The approval page is served at http://<the bound address>/approvals, its
// public base the bound address; `custodyctl signin-link --principal P`
// prints a one-time sign-in link to it. With OAuth, OIDC_CLIENT_ID,
// OIDC_AUTHORIZATION_ENDPOINT and OIDC_TOKEN_ENDPOINT (shared/approvals,
// OIDCFromEnv) add sign-in with the issuer's accounts, as a public client.
package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/scripts/internal/engine"
	"github.com/custodymcp/custody/shared/admin"
	"github.com/custodymcp/custody/shared/approvals"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/auth/oauth"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/s3local"
	"github.com/custodymcp/custody/shared/conformance"
	"github.com/custodymcp/custody/shared/intake"
	"github.com/custodymcp/custody/shared/intake/extract"
	"github.com/custodymcp/custody/shared/intake/importer"
	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/queue/memqueue"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	scanpkg "github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/clamd"
	"github.com/custodymcp/custody/shared/scan/signature"
	"github.com/custodymcp/custody/shared/server"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/filestore"
	"github.com/custodymcp/custody/shared/sweep"
	"github.com/custodymcp/custody/shared/tasks"
	"github.com/custodymcp/custody/shared/tools"
)

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	// The file engine's writer blocks in fdatasync on every commit. With one
	// runtime thread (a one-core machine, or a server pinned to one core) a
	// blocked commit stalls every request until the scheduler hands its
	// processor off, which under load turns into second-long tail latencies;
	// a second processor lets requests run while a commit syncs. An explicit
	// GOMAXPROCS in the environment is the operator's choice and is kept.
	if os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "custody dev:", err)
		os.Exit(1)
	}
}

// usageEnvironment is the part of -h about the environment.
const usageEnvironment = `Serves /mcp (and the loopback admin endpoint custodyctl uses) until Ctrl-C.

environment:
  STORE_ENGINE       file (default) or dynamodb
  DYNAMODB_TABLE     the table (dynamodb)
  DYNAMODB_ENDPOINT  an emulator's base URL (emulators only)
  TASK_QUEUE_URL     tasks on this SQS queue instead of in process (dynamodb); SQS_ENDPOINT an
                     emulator's base URL; TASK_DEAD_LETTER_QUEUE_URL its dead-letter queue
  OAUTH_ISSUER, OAUTH_JWKS_URL and the other OAUTH_* variables: see -oauth-issuer
  OIDC_CLIENT_ID, OIDC_AUTHORIZATION_ENDPOINT, OIDC_TOKEN_ENDPOINT, OIDC_SCOPES: the approval
                     page's sign-in at the OAuth issuer (a public client)
`

// run serves until ctx ends (or, for -h, prints the usage and returns nil).
// Configuration comes from args and getenv only.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("dev", flag.ContinueOnError)
	flags.SetOutput(stderr)
	addr := flags.String("addr", "127.0.0.1:8080", "listen address (loopback)")
	data := flags.String("data", datadir.Default, "data folder (store, dev key, secrets)")
	origins := stringList{"http://localhost:6274", "http://127.0.0.1:6274"}
	flags.Var(&origins, "allow-origin", "an Origin browsers may send (repeatable; the MCP Inspector's is allowed by default)")
	verbose := flags.Bool("v", false, "log every request")
	fixtures := flags.Bool("conformance", false, "serve the conformance suite's fixture profile: unauthenticated requests act as the fixture key (loopback only)")
	oauthIssuer := flags.String("oauth-issuer", getenv("OAUTH_ISSUER"), "accept OAuth access tokens of this issuer beside API keys (default $OAUTH_ISSUER)")
	oauthJWKS := flags.String("oauth-jwks-url", getenv("OAUTH_JWKS_URL"), "the OAuth issuer's JWK Set URL (default $OAUTH_JWKS_URL)")
	pageSize := flags.Int("page-size", 0, "page size of every list: tools, prompts, resources, resource templates (0: the defaults)")
	scanner := flags.String("scanner", "signature", "the upload lane's malware scanner: signature (EICAR by content), clamd=HOST:PORT[,max=SIZE] (clamd with AlertExceedsMax yes; SIZE its StreamMaxLength, default 100M) or off (the lane refuses)")
	s3Addr := flags.String("s3-addr", "127.0.0.1:0", "listen address of the in-process local S3 server (loopback; its URL is in part URLs)")
	s3URL := flags.String("s3", "", "use the local S3 server at this URL instead of starting one (e.g. one shared by several dev servers)")
	getStream := flags.Bool("get-stream", true, "offer the held GET /mcp stream (resource subscriptions, the hand-off's notifications/elicitation/complete); false answers GET /mcp 405")
	taskWorker := flags.Bool("task-worker", true, "run the task worker in this process (false: tasks are only created here, and another process on the same SQS queue runs them)")
	usage := func() {
		fmt.Fprintf(flags.Output(), "usage: go run ./scripts/dev [flags]   (or: make run ARGS=\"flags\")\n\n%s\nflags:\n", usageEnvironment)
		flags.PrintDefaults()
	}
	flags.Usage = func() {} // printed below, to stdout when asked for
	switch err := flags.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		flags.SetOutput(stdout)
		usage()
		return nil
	case err != nil:
		usage()
		return err
	}
	if *fixtures {
		if err := loopbackOnly(*addr); err != nil {
			return err
		}
	}
	if *pageSize < 0 {
		return fmt.Errorf("-page-size %d: want 0 (the default) or more", *pageSize)
	}
	eng, err := engine.FromEnv(getenv)
	if err != nil {
		return err
	}
	sc, err := devScanner(*scanner)
	if err != nil {
		return err
	}

	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	dir := datadir.Dir(*data)
	if err := dir.Ensure(); err != nil {
		return err
	}
	st, err := eng.Open(ctx, dir, dynamoOpener)
	if err != nil {
		return err
	}
	defer st.Close()
	if eng.Engine == engine.File {
		// This process holds the store's lock, so an admin address in the
		// folder is a crashed server's, and its port may be anyone's by now.
		// Until this server writes its own below, custodyctl finds none and
		// tries the store file, whose lock tells it a server is running.
		if err := os.Remove(dir.Path(datadir.AdminAddrFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove the stale %s: %w", dir.Path(datadir.AdminAddrFile), err)
		}
	}
	if err := seedDemo(ctx, st); err != nil {
		return err
	}
	key, err := devKey(ctx, dir, st)
	if err != nil {
		return err
	}
	cursorHex, err := dir.Secret(datadir.CursorKeyFile, 32)
	if err != nil {
		return err
	}
	cursorKey, _ := hex.DecodeString(cursorHex)
	adminToken, err := dir.Secret(datadir.AdminTokenFile, 32)
	if err != nil {
		return err
	}

	blobs, blobURL, stopBlobs, err := devBlobs(*s3URL, *s3Addr, dir)
	if err != nil {
		return err
	}
	defer stopBlobs()
	// S3's notifications to the scan gate: those in flight when the server
	// stops may finish (briefly) before the store closes.
	notifyCtx, stopNotify := context.WithCancel(context.WithoutCancel(ctx))
	notify := newNotifier(notifyCtx, blobs, s3local.Buckets, logger)
	defer notify.drain(stopNotify)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	bound := ln.Addr().(*net.TCPAddr)
	// Tasks: the in-process queue, delivered to the worker by a dispatcher
	// as Lambda's event source delivers SQS (issue 11 brings SQS and the
	// worker and sweeper Lambdas).
	taskQueue, deadLetter, queueName, err := devTaskQueue(ctx, getenv, eng)
	if err != nil {
		ln.Close()
		return err
	}
	// Intake (issue 18) runs in this process's scan gate, as in the
	// scangate function: the PDF engine is compiled at the first clean
	// upload (kept in the user's cache between runs), never at start.
	in, err := intake.New(intake.Options{Store: st, Blob: notify, Logger: logger, ExtractOptions: devExtractOptions()})
	if err != nil {
		ln.Close()
		return err
	}
	defer in.Close()
	cfg := server.Config{
		Store: st, CursorKey: cursorKey, AllowedOrigins: origins,
		AllowedHosts: loopbackHosts(bound), Logger: logger, ToolPageSize: *pageSize,
		Lane:      &server.LaneConfig{Blob: notify, Buckets: s3local.Buckets, Scanner: sc, PublicBaseURL: "http://" + bound.String(), Intake: in},
		TaskQueue: taskQueue, TaskDeadLetter: deadLetter,
		// The held GET stream, on by default here (-get-stream=false to stop;
		// docs/decisions.md "Time and size constants"): the hand-off's
		// completion arrives on it (issue 15).
		GETStream: *getStream,
	}
	if *fixtures {
		// A name such as localhost may still have resolved elsewhere.
		if !bound.IP.IsLoopback() {
			ln.Close()
			return fmt.Errorf("-conformance: %s is not a loopback address", bound)
		}
		if cfg.AnonymousToken, err = conformanceKey(ctx, dir, st); err != nil {
			ln.Close()
			return err
		}
		cfg.GETStream = true
		cfg.RegisterExtra = func(reg *tools.Registry) error {
			return conformance.Register(reg, conformance.Options{})
		}
		cfg.RegisterExtraPrompts = conformance.RegisterPrompts
		cfg.RegisterExtraResources = conformance.RegisterResources
	}
	if cfg.OAuth, err = devOAuth(*oauthIssuer, *oauthJWKS, "http://"+bound.String(), getenv, logger); err != nil {
		ln.Close()
		return err
	}
	// The approval page is served where /mcp is: its links, redirects and
	// the Origin its forms must carry are this address (a loopback http
	// base keeps its Secure, __Host- cookie in browsers: shared/approvals).
	cfg.PublicBaseURL = "http://" + bound.String()
	if cfg.OIDC, err = devOIDC(getenv, cfg.OAuth != nil); err != nil {
		ln.Close()
		return err
	}
	srv, err := server.New(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	notify.start(srv.ScanGate.Handle)
	duties := srv.Duties // the tasks', proposal expiry and the upload lane's
	if fs, ok := st.Store.(*filestore.Store); ok {
		duties = append(duties, &sweep.Expired{Engine: fs, Every: purgeEvery})
	}
	if *taskWorker {
		dispatcher, err := queue.Dispatch(taskQueue, srv.Tasks.Handle, &queue.DispatchOptions{
			MaximumConcurrency: taskConcurrency, Timeout: tasks.DefaultExecutionCap + tasks.ExecutionMargin, Logger: logger})
		if err != nil {
			ln.Close()
			return err
		}
		defer stopDispatcher(dispatcher, stderr) // before the store closes (defers run last-in first-out)
	}
	sweepCtx, stopSweeper := context.WithCancel(ctx)
	sweeperDone := make(chan struct{})
	go func() { defer close(sweeperDone); runSweeper(sweepCtx, duties, logger, sweepInterval) }()
	defer func() { stopSweeper(); <-sweeperDone }()
	// custodyctl import streams each file here; it goes through the same
	// gate and intake (staged with the raw blob engine: the gate is called
	// at once, so no notification doubles it).
	imp, err := importer.New(importer.Options{Store: st, Blob: blobs, Gate: srv.ScanGate})
	if err != nil {
		ln.Close()
		return err
	}
	adminH := admin.Handler(st, adminToken, time.Now, admin.Route{Pattern: "POST /admin/sweep", Handler: sweepHandler(duties)},
		admin.ImportRoute(imp))
	mcpH := srv.Handler()
	route := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/admin/") {
			adminH.ServeHTTP(w, r)
			return
		}
		mcpH.ServeHTTP(w, r) // its own JSON 404 for every other path
	})
	httpSrv := &http.Server{Handler: route, ReadHeaderTimeout: 10 * time.Second}

	errc := make(chan error, 1)
	go func() { errc <- httpSrv.Serve(ln) }()
	// custodyctl finds a running file-engine server here. A DynamoDB server
	// leaves no address: custodyctl goes to the table, and several servers
	// may share the folder. The file is written once requests are served, so
	// its synced write does not delay the first answer.
	if eng.Engine == engine.File {
		if err := dir.Write(datadir.AdminAddrFile, ln.Addr().String()); err != nil {
			_ = httpSrv.Close()
			return fmt.Errorf("write %s: %w", dir.Path(datadir.AdminAddrFile), err)
		}
		defer os.Remove(dir.Path(datadir.AdminAddrFile))
	}
	// The banner comes last: whoever reads it may use custodyctl at once.
	lane := fmt.Sprintf("Uploads: staging and record buckets on the local S3 server at %s; scanner %s (%s).",
		blobURL, *scanner, scanpkg.PostureOf(ctx, sc))
	printBanner(stdout, bound, key, eng, dir, lane)
	worker := "run by this process's worker"
	if !*taskWorker {
		worker = "run by another process (-task-worker=false)"
	}
	fmt.Fprintf(stdout, "Tasks: on %s, %s.\n", queueName, worker)
	fmt.Fprintf(stdout, "Approval page: %s/approvals (sign in with a link: custodyctl signin-link --principal %s)\n",
		cfg.PublicBaseURL, seed.DemoAttorney)
	if *fixtures {
		fmt.Fprintf(stdout, "Conformance fixture profile: requests without a credential act as %s of tenant %q (scope %s: the fixtures only).\n",
			conformancePrincipal, conformanceTenant, auth.ScopeConformance)
	}
	if cfg.OAuth != nil {
		fmt.Fprintf(stdout, "OAuth: access tokens of %s for %s (scope %s) are accepted; metadata at %s\n",
			cfg.OAuth.Issuer(), cfg.OAuth.Resource(), cfg.OAuth.RequiredScope(), cfg.OAuth.MetadataURL())
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(stderr, "\nshutting down…")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := httpSrv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// The dev server's task constants (docs/decisions.md "Time and size
// constants").
const (
	// purgeEvery is how often the embedded store drops expired rows (the
	// sweeper's expired-rows duty, sweep.Expired).
	purgeEvery = 10 * time.Minute
	// sweepInterval is the sweeper's ticker: the recovery duties of what is
	// composed — tasks, the upload lane's copy to verified/, and on the file
	// engine the expired rows — run this often (the sweeper Lambda's
	// schedule on AWS, issue 11).
	sweepInterval = 15 * time.Second
	// taskVisibility is how long a delivered task message stays invisible:
	// a failed record is delivered again after it, as SQS does. A longer
	// task meanwhile gets duplicate deliveries, whose claims fail.
	taskVisibility = time.Minute
	// taskConcurrency is how many tasks the in-process worker runs at once.
	taskConcurrency = 4
)

// devScanner is the -scanner engine: the signature engine, clamd at an
// address (with its max), or none (OFF).
func devScanner(spec string) (scanpkg.Scanner, error) {
	switch {
	case spec == "signature":
		return signature.New(), nil
	case spec == "off":
		return nil, nil
	case strings.HasPrefix(spec, "clamd="):
		addr, opt, _ := strings.Cut(strings.TrimPrefix(spec, "clamd="), ",")
		o := clamd.Options{Addr: addr}
		if opt != "" {
			size, ok := strings.CutPrefix(opt, "max=")
			if !ok {
				return nil, fmt.Errorf("-scanner %q: after the address only max=SIZE may follow", spec)
			}
			max, err := clamd.ParseSize(size)
			if err != nil {
				return nil, fmt.Errorf("-scanner %q: %w", spec, err)
			}
			o.Max = max
		}
		e, err := clamd.New(o)
		if err != nil {
			return nil, fmt.Errorf("-scanner %q: %w", spec, err)
		}
		return e, nil
	}
	return nil, fmt.Errorf("-scanner %q: want signature, clamd=HOST:PORT[,max=SIZE] or off", spec)
}

// devBlobs returns the blob engine: over the local S3 server at url, or
// over one started here on addr (loopback) keeping its objects under
// <data>/blobs/. stop shuts a started one down.
func devBlobs(url, addr string, dir datadir.Dir) (blob.Store, string, func(), error) {
	stop := func() {}
	if url == "" {
		if err := loopbackOnly(addr); err != nil {
			return nil, "", nil, fmt.Errorf("-s3-addr: %w", err)
		}
		s3srv, err := s3local.New(s3local.Options{Dir: dir.Path("blobs")})
		if err != nil {
			return nil, "", nil, err
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, "", nil, fmt.Errorf("listen on %s (-s3-addr): %w", addr, err)
		}
		hs := &http.Server{Handler: s3srv, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = hs.Serve(ln) }()
		url = "http://" + ln.Addr().String()
		stop = func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = hs.Shutdown(ctx)
		}
	}
	e, err := blob.New(s3local.NewClient(url), s3local.Buckets, blob.Options{})
	if err != nil {
		stop()
		return nil, "", nil, err
	}
	return e, url, stop, nil
}

// runSweeper runs the sweeper's duties every interval at the wall clock
// until ctx ends, logging what each did (sweep.Run: every action is a
// conditional write, so it is safe beside other processes' sweepers).
func runSweeper(ctx context.Context, duties []sweep.Duty, log *slog.Logger, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			reports, err := sweep.Run(ctx, duties, now)
			if err != nil && ctx.Err() == nil {
				log.Warn("sweep", "err", err)
			}
			for _, r := range reports {
				if len(r.Actions) > 0 {
					log.Info("sweep", "duty", r.Duty, "actions", r.Actions)
				}
			}
		}
	}
}

// sweepHandler serves POST /admin/sweep?at=<RFC 3339 time>: one sweep of
// this process's duties at that time (now when absent), answered with the
// reports. It is how a test moves the sweeper's clock past a lease without
// waiting for it (scripts/dev's two-process tests).
func sweepHandler(duties []sweep.Duty) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		if v := r.URL.Query().Get("at"); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(`{"error":"at must be an RFC 3339 time"}` + "\n"))
				return
			}
			at = t
		}
		reports, err := sweep.Run(r.Context(), duties, at)
		body, _ := json.Marshal(map[string]any{"reports": reports, "error": errText(err)})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(append(body, '\n'))
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// devTaskQueue is the task queue: in process (memqueue) by default; on SQS
// when TASK_QUEUE_URL is set (the DynamoDB build only: a file engine's
// tasks cannot be run by another process), with its dead-letter queue when
// TASK_DEAD_LETTER_QUEUE_URL is. name says which, for the banner.
func devTaskQueue(ctx context.Context, getenv func(string) string, eng engine.Config) (q queue.Queue, deadLetter queue.Consumer, name string, err error) {
	url, dlq, endpoint := getenv("TASK_QUEUE_URL"), getenv("TASK_DEAD_LETTER_QUEUE_URL"), getenv("SQS_ENDPOINT")
	if url == "" {
		if dlq != "" || endpoint != "" {
			return nil, nil, "", errors.New("TASK_DEAD_LETTER_QUEUE_URL and SQS_ENDPOINT need TASK_QUEUE_URL")
		}
		mq, err := memqueue.New(memqueue.Options{VisibilityTimeout: taskVisibility})
		return mq, nil, "the in-process queue", err
	}
	if eng.Engine != engine.DynamoDB || sqsOpener == nil {
		return nil, nil, "", errors.New("TASK_QUEUE_URL needs STORE_ENGINE=dynamodb and the DynamoDB build (-tags dynamodb): the file engine's tasks are this process's alone")
	}
	if q, err = sqsOpener(ctx, url, endpoint); err != nil {
		return nil, nil, "", err
	}
	if dlq != "" {
		dq, err := sqsOpener(ctx, dlq, endpoint)
		if err != nil {
			return nil, nil, "", err
		}
		return q, dq, "SQS " + url + " (dead letters: " + dlq + ")", nil
	}
	return q, nil, "SQS " + url, nil
}

// stopDispatcher stops the task dispatcher, giving running tasks a few
// seconds to finish; one that does not is recovered by a sweeper (its
// lease lapses).
func stopDispatcher(d *queue.Dispatcher, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.Stop(ctx); err != nil {
		fmt.Fprintln(stderr, "tasks still running at shutdown are left to the sweeper:", err)
	}
}

// seedDemo imports the demo firm; the import is keyed by the fixture's
// bytes, so later starts cost one read and parse nothing.
func seedDemo(ctx context.Context, st store.Store) error {
	if _, err := records.ImportJSON(ctx, st, seed.DemoJSON(), time.Now()); err != nil {
		return fmt.Errorf("seed the demo firm: %w", err)
	}
	return nil
}

// devKey returns the dev key from the data folder, minting one for the demo
// attorney when there is none or it no longer works (revoked, or the store
// was reset).
func devKey(ctx context.Context, dir datadir.Dir, st store.Store) (string, error) {
	key, err := dir.Read(datadir.DevKeyFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if auth.WellFormedKey(key) {
		it, err := st.Get(ctx, auth.CredentialKey(auth.HashKey(key)))
		if err == nil {
			if c, err := auth.DecodeCredential(it); err == nil && !c.Revoked {
				return key, nil
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return "", err
		}
	}
	key, _, err = auth.Mint(ctx, st, auth.MintRequest{
		Tenant: seed.DemoTenant, Owner: seed.DemoAttorney, Label: "dev key (make run)",
		Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite, auth.ScopeDocsRead, auth.ScopeTasksRead, auth.ScopeAnalysisRead},
	}, time.Now())
	if err != nil {
		return "", fmt.Errorf("mint the dev key: %w", err)
	}
	return key, dir.Write(datadir.DevKeyFile, key)
}

// The fixture profile's principal (docs/decisions.md "Identity and binding": a
// principal of its own tenant, so nothing of a firm is in reach).
const (
	conformanceTenant    = "conformance"
	conformancePrincipal = "p_conformance"
	// conformanceRateLimit is per minute and lane: the suite's few hundred
	// requests a run, from many sessions, never meet it.
	conformanceRateLimit = 1_000_000
)

// loopbackOnly refuses an address the fixture profile must not listen on:
// it answers requests without credentials, so only this machine may reach it.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-addr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return fmt.Errorf("-conformance answers requests without credentials and binds only to loopback (127.0.0.1, [::1], localhost), not %q", addr)
}

// conformanceKey returns the fixture key from the data folder, minting one
// when there is none or it no longer works (revoked, the store reset, or
// not the fixture principal's). The key never leaves the folder: the server
// uses it for requests that present no credential.
func conformanceKey(ctx context.Context, dir datadir.Dir, st store.Store) (string, error) {
	// The fixture principal is a row of its own tenant, like any key's
	// owner: work that outlives its request (a task) re-admits the key by
	// re-reading its owner (gate.Readmit). One import, keyed by its bytes.
	if _, err := records.Import(ctx, st, records.Fixture{
		Tenant:     records.Tenant{ID: conformanceTenant, Name: "Conformance fixture profile"},
		Principals: []records.Principal{{ID: conformancePrincipal, Name: "The conformance suite", Role: records.RoleParalegal}},
	}, time.Now()); err != nil {
		return "", fmt.Errorf("create the fixture principal: %w", err)
	}
	key, err := dir.Read(datadir.ConformanceKeyFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if auth.WellFormedKey(key) {
		it, err := st.Get(ctx, auth.CredentialKey(auth.HashKey(key)))
		if err == nil {
			c, err := auth.DecodeCredential(it)
			if err == nil && !c.Revoked && c.Tenant == conformanceTenant && c.Owner == conformancePrincipal &&
				slices.Equal(c.Scopes, []auth.Scope{auth.ScopeConformance}) {
				return key, nil
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return "", err
		}
	}
	key, _, err = auth.Mint(ctx, st, auth.MintRequest{
		Tenant: conformanceTenant, Owner: conformancePrincipal, Label: "conformance fixture profile (dev -conformance)",
		Scopes: []auth.Scope{auth.ScopeConformance}, Class: auth.ClassStandard,
		RateLimits: map[string]int{
			string(ratelimit.LaneRead): conformanceRateLimit, string(ratelimit.LaneExpensive): conformanceRateLimit,
		},
	}, time.Now())
	if err != nil {
		return "", fmt.Errorf("mint the conformance fixture key: %w", err)
	}
	return key, dir.Write(datadir.ConformanceKeyFile, key)
}

func loopbackHosts(a *net.TCPAddr) []string {
	port := fmt.Sprint(a.Port)
	if !a.IP.IsLoopback() {
		return nil
	}
	return []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port}
}

func printBanner(w io.Writer, a *net.TCPAddr, key string, eng engine.Config, dir datadir.Dir, lane string) {
	url := fmt.Sprintf("http://%s/mcp", a.String())
	cfg, _ := json.MarshalIndent(map[string]any{
		"mcpServers": map[string]any{
			"custody": map[string]any{
				"type":    "http",
				"url":     url,
				"headers": map[string]string{"Authorization": "Bearer " + key},
			},
		},
	}, "", "  ")
	fmt.Fprintf(w, `Custody is serving MCP at %s on %s (the demo firm %q is seeded).

Dev key (also in %s):
  %s

MCP client configuration:
%s

%s

Press Ctrl-C to stop.
`, url, eng, seed.DemoTenant, dir.Path(datadir.DevKeyFile), key, cfg, lane)
}

// devOAuth builds the OAuth verifier of -oauth-issuer (nil without one)
// for the resource base+"/mcp", reading the other OAUTH_* variables with
// the Lambda's own parser (oauth.ConfigFromEnv); the flags stand for
// OAUTH_ISSUER and OAUTH_JWKS_URL, and http is allowed on loopback.
func devOAuth(issuer, jwks, base string, getenv func(string) string, logger *slog.Logger) (*oauth.Verifier, error) {
	env := func(name string) string {
		switch name {
		case "OAUTH_ISSUER":
			return issuer
		case "OAUTH_JWKS_URL":
			return jwks
		}
		return getenv(name)
	}
	var problems []string
	c := oauth.ConfigFromEnv(env, base, true, func(name, problem string) {
		flag := map[string]string{"OAUTH_ISSUER": "-oauth-issuer", "OAUTH_JWKS_URL": "-oauth-jwks-url"}[name]
		if flag == "" {
			flag = name
		}
		problems = append(problems, flag+" "+problem)
	})
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	if c == nil {
		return nil, nil
	}
	c.Logger = logger
	return oauth.New(*c)
}

// devOIDC reads the approval page's OIDC client (OIDC_CLIENT_ID and the
// other OIDC_* variables) with the Lambda's own parser
// (approvals.OIDCFromEnv), http endpoints allowed. The dev server reads no
// Secrets Manager: its client is a public one (PKCE alone), and
// OIDC_CLIENT_SECRET_ARN is refused.
func devOIDC(getenv func(string) string, oauthConfigured bool) (*approvals.OIDCClient, error) {
	var problems []string
	s := approvals.OIDCFromEnv(getenv, oauthConfigured, true, func(name, problem string) {
		problems = append(problems, name+" "+problem)
	})
	if s != nil && s.ClientSecretARN != "" {
		problems = append(problems, "OIDC_CLIENT_SECRET_ARN is refused by the dev server (it reads no Secrets Manager): register a public client")
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	if s == nil {
		return nil, nil
	}
	return &s.OIDCClient, nil
}

// devExtractOptions keeps the compiled PDF engine in the user's cache
// directory (extract.Options.CacheDir: writable by this user alone), so a
// restarted dev server reads its first PDF in a fraction of the compile.
func devExtractOptions() *extract.Options {
	dir, err := os.UserCacheDir()
	if err != nil {
		return nil
	}
	return &extract.Options{CacheDir: filepath.Join(dir, "custody", "pdfium")}
}
