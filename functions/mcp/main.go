// Command mcp is Custody's /mcp Lambda function: the same http.Handler the
// local dev server runs (shared/server), over the DynamoDB engine, behind
// the front door the template's FrontDoor parameter chose (FRONT_DOOR;
// docs/decisions.md "Front doors"): an API Gateway REST API whose Lambda
// proxy integration streams its response, an HTTP API (payload format 2.0,
// buffered) or a function URL with InvokeMode RESPONSE_STREAM. shared/lambdaio
// adapts each door's events; handler picks the adapter's method for it.
//
// Cold start reads the configuration once (config.go), builds the AWS
// clients, fetches the cursor sealing key from Secrets Manager and composes
// the handler; any failure is one JSON log line naming what is wrong, then
// exit 1, so Lambda reports an init error instead of serving half-built.
// The read tools are registered, the upload lane's when its buckets are
// configured, and the task tools with the task methods when the task queue
// is (TASK_QUEUE_URL: a task's message is sent there after its row commits,
// and functions/worker runs it): the test fixtures (and the conformance profile built on
// them) never exist in this binary.
//
// Build it as template.yaml does (make build-McpFunction):
//
//	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o bootstrap ./functions/mcp
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/custodymcp/custody/shared/approvals"
	"github.com/custodymcp/custody/shared/audit"
	"github.com/custodymcp/custody/shared/auth/oauth"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/lambdaio"
	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/queue/sqsqueue"
	"github.com/custodymcp/custody/shared/scan/guardduty"
	"github.com/custodymcp/custody/shared/scan/signature"
	"github.com/custodymcp/custody/shared/server"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
)

// coldStartTimeout bounds the cold start's calls (AWS config, the secret).
const coldStartTimeout = 10 * time.Second

func main() {
	cfg, err := LoadConfig(os.Getenv)
	if err != nil {
		fail("invalid configuration", err)
	}
	logger := slog.New(lambdaio.NewLogHandler(os.Stdout, cfg.LogLevel))

	ctx, cancel := context.WithTimeout(context.Background(), coldStartTimeout)
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		fail("load the AWS configuration", err)
	}
	key, err := cfg.CursorKey(ctx, func(ctx context.Context, arn string) (string, error) {
		return lambdaio.SecretString(ctx, secretsmanager.NewFromConfig(awsCfg), arn)
	})
	if err != nil {
		cancel()
		fail("fetch the cursor sealing key", err)
	}
	err = cfg.LoadOIDCSecret(ctx, func(ctx context.Context, arn string) (string, error) {
		return lambdaio.SecretString(ctx, secretsmanager.NewFromConfig(awsCfg), arn)
	})
	cancel()
	if err != nil {
		fail("fetch the OIDC client secret", err)
	}
	st := dynamostore.New(newDynamoDB(awsCfg, cfg), cfg.TableName, dynamostore.Options{})
	lane, err := newLane(awsCfg, cfg)
	if err != nil {
		fail("build the upload lane's S3 engine", err)
	}
	taskQueue, err := newTaskQueue(awsCfg, cfg)
	if err != nil {
		fail("build the task queue", err)
	}
	serverLog := slog.New(requestLines(lambdaio.NewLogHandler(os.Stdout, cfg.LogLevel), cfg.ServerLogLevel()))
	h, err := handler(cfg, func(cfg Config) (*lambdaio.Adapter, error) {
		srv, err := newServer(cfg, st, key, serverLog, lane, withTaskQueue(taskQueue))
		if err != nil {
			return nil, err
		}
		return newAdapter(cfg, srv, logger), nil
	}, logger)
	if err != nil {
		fail("compose the /mcp handler", err)
	}
	issuer := ""
	if cfg.OAuth != nil {
		issuer = cfg.OAuth.Issuer
	}
	logger.Info("cold start", "table", cfg.TableName, "front", string(cfg.Front), "streaming", cfg.Streaming,
		"resourceUrl", cfg.ResourceURL, "emulated", cfg.DynamoDBEndpoint != "", "oauthIssuer", issuer,
		"uploadLane", cfg.LaneEnabled(), "tasks", cfg.TaskQueueURL != "")
	lambda.Start(h)
}

// newAdapter adapts the composed endpoint to the front door's events: each
// request's context ends before a buffered front gives up on it.
func newAdapter(cfg Config, srv *server.Server, logger *slog.Logger) *lambdaio.Adapter {
	return lambdaio.New(srv.Handler(), lambdaio.Options{Logger: logger, RequestTimeout: cfg.RequestTimeout()})
}

// handler returns what lambda.Start serves for the configured front door:
// the method of the adapter compose builds whose event and response types
// are that door's (REST: Stream or Buffer by RESPONSE_STREAMING; HTTP API:
// BufferHTTPAPI; function URL: StreamFunctionURL). Behind a function URL
// without PUBLIC_BASE_URL the composition waits for the first event, whose
// requestContext.domainName is the URL's own (firstURLEvent).
func handler(cfg Config, compose func(Config) (*lambdaio.Adapter, error), logger *slog.Logger) (any, error) {
	if cfg.Front == FrontURL && cfg.PublicBaseURL == "" {
		return (&firstURLEvent{cfg: cfg, compose: compose, log: logger}).serve, nil
	}
	a, err := compose(cfg)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.Front == FrontHTTP:
		return a.BufferHTTPAPI, nil
	case cfg.Front == FrontURL:
		return a.StreamFunctionURL, nil
	case cfg.Streaming:
		return a.Stream, nil
	}
	return a.Buffer, nil
}

// firstURLEvent composes the endpoint behind a function URL at the first
// event: the template cannot give a function its own URL (the URL resource
// names the function, so the function's environment cannot name the URL),
// and the event's requestContext.domainName, set by Lambda, is that URL's
// domain. Every later event reuses the composition. A composition that
// fails fails the invocation and is tried again at the next one.
type firstURLEvent struct {
	cfg     Config
	compose func(Config) (*lambdaio.Adapter, error)
	log     *slog.Logger

	mu      sync.Mutex
	adapter *lambdaio.Adapter
}

func (f *firstURLEvent) serve(ctx context.Context, ev events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error) {
	f.mu.Lock()
	if f.adapter == nil {
		cfg, err := f.cfg.WithPublicBaseURL("https://" + ev.RequestContext.DomainName)
		if err == nil {
			f.adapter, err = f.compose(cfg)
		}
		if err != nil {
			f.mu.Unlock()
			f.log.ErrorContext(ctx, "compose the /mcp handler at the first function URL event", "err", err.Error())
			return nil, fmt.Errorf("compose the /mcp handler: %w", err)
		}
		f.log.InfoContext(ctx, "public base URL from the function URL", "resourceUrl", cfg.ResourceURL)
	}
	a := f.adapter
	f.mu.Unlock()
	return a.StreamFunctionURL(ctx, ev)
}

// newDynamoDB returns the DynamoDB client, built once per cold start: the
// regional endpoint on AWS, or DYNAMODB_ENDPOINT for an emulator (which
// sends no CRC32 response header), with the engine's settings
// (dynamostore.ClientOptions: the endpoint resolved once, connections kept)
// and any extra options (a test's meter).
func newDynamoDB(awsCfg aws.Config, cfg Config, extra ...func(*dynamodb.Options)) *dynamodb.Client {
	opts := append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
		if cfg.DynamoDBEndpoint != "" {
			o.DisableValidateResponseChecksum = true
		}
	}, dynamostore.ClientOptions(cfg.DynamoDBEndpoint)}, extra...)
	return dynamodb.NewFromConfig(awsCfg, opts...)
}

// newLane builds the upload lane's configuration (nil when its buckets are
// not configured): the S3 engine over the staging and record buckets, with
// part URLs signed by the UploadSigner role's sessions, and the scanner of
// SCANNER_ENGINE — GuardDuty on the staging bucket (its verdicts reach the
// scangate function, not this one), or none, when the lane's two spending
// tools refuse SCANNER_UNAVAILABLE while downloads work. The S3
// client computes and checks checksums only where an operation requires
// them, as the local one does (blob.LocalClientOptions), so the presigned
// requests are the ones the tests send through s3local.
func newLane(awsCfg aws.Config, cfg Config) (*server.LaneConfig, error) {
	if !cfg.LaneEnabled() {
		return nil, nil
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		if cfg.S3Endpoint != "" {
			blob.LocalClientOptions(cfg.S3Endpoint)(o)
		}
	})
	var opts blob.Options
	if cfg.UploadSignerRoleARN != "" {
		opts.UploadPartCredentials = blob.UploadSignerCredentials(sts.NewFromConfig(awsCfg), cfg.UploadSignerRoleARN, time.Now)
	}
	buckets := blob.Buckets{Staging: cfg.StagingBucket, Record: cfg.RecordBucket}
	eng, err := blob.New(client, buckets, opts)
	if err != nil {
		return nil, err
	}
	lane := &server.LaneConfig{Blob: eng, Buckets: buckets} // newServer sets its PublicBaseURL
	switch cfg.ScannerEngine {
	case "guardduty":
		if lane.Scanner, err = guardduty.New(cfg.StagingBucket); err != nil {
			return nil, err
		}
	case "signature":
		lane.Scanner = signature.New()
	}
	return lane, nil
}

// newServer composes the /mcp endpoint exactly as the function serves it:
// the read tools (no extra registrations), the upload lane when lane is
// set (its links from PUBLIC_BASE_URL), the 1 MiB body limit of AWS, the
// answers of a buffered front door when the front buffers (no SSE, no
// waiting questions; server.Config.Buffered), the configured browser origins, the
// OAuth resource server when an issuer is configured (its JWKS is fetched
// at the first token, not at cold start), and the approval page under
// /approvals, its links from PUBLIC_BASE_URL and, with an OIDC client,
// sign-in at the issuer. Tests build their handler through it too.
func newServer(cfg Config, st store.Store, cursorKey []byte, logger *slog.Logger, lane *server.LaneConfig, opts ...func(*server.Config)) (*server.Server, error) {
	var verifier *oauth.Verifier
	if cfg.OAuth != nil {
		oc := *cfg.OAuth
		oc.Logger = logger
		v, err := oauth.New(oc)
		if err != nil {
			return nil, err
		}
		verifier = v
	}
	var oidc *approvals.OIDCClient
	if cfg.OIDC != nil {
		oidc = &cfg.OIDC.OIDCClient
	}
	if lane != nil {
		l := *lane
		l.PublicBaseURL = cfg.PublicBaseURL
		lane = &l
	}
	sc := server.Config{
		Store:          st,
		CursorKey:      cursorKey,
		AllowedOrigins: cfg.AllowedOrigins,
		MaxBodyBytes:   cfg.MaxBodyBytes,
		Buffered:       cfg.Buffered(),
		// GET_STREAM (the template's GetStream parameter), off by default.
		GETStream:      cfg.HeldStream,
		AuditRetention: cfg.AuditRetention,
		Logger:         logger,
		OAuth:          verifier,
		PublicBaseURL:  cfg.PublicBaseURL,
		AllowHTTPBase:  cfg.DynamoDBEndpoint != "",
		OIDC:           oidc,
		Lane:           lane,
	}
	for _, o := range opts {
		o(&sc)
	}
	return server.New(sc)
}

// withTaskQueue serves tasks (server.Config.TaskQueue) with q; a nil q
// serves none.
func withTaskQueue(q queue.Sender) func(*server.Config) {
	return func(c *server.Config) {
		if q != nil {
			c.TaskQueue = q
		}
	}
}

// newTaskQueue builds the SQS engine of the task queue (nil when
// TASK_QUEUE_URL is empty): the client built once, SQS_ENDPOINT for an
// emulator. Sending is all /mcp does with it.
func newTaskQueue(awsCfg aws.Config, cfg Config) (queue.Sender, error) {
	if cfg.TaskQueueURL == "" {
		return nil, nil
	}
	client := sqs.NewFromConfig(awsCfg, sqsqueue.ClientOptions(cfg.SQSEndpoint))
	return sqsqueue.New(sqsqueue.Options{Client: client, QueueURL: cfg.TaskQueueURL})
}

// requestLines is the handler of the MCP transport's logger. Below floor
// (ServerLogLevel: WARN at INFO) it keeps only the transport's per-request
// line ("mcp request") of a request whose outcome was not a plain success —
// a refusal class, a JSON-RPC error, a created task, a replay — so the
// logs carry what the dashboard counts by class (infra/operations.yaml)
// without a second line for every successful request.
func requestLines(h slog.Handler, floor slog.Level) slog.Handler {
	return &requestLineHandler{inner: h, floor: floor}
}

type requestLineHandler struct {
	inner slog.Handler
	floor slog.Level
}

func (h *requestLineHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *requestLineHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < h.floor && !(r.Message == "mcp request" && notPlain(r)) {
		return nil
	}
	return h.inner.Handle(ctx, r)
}

// notPlain reports whether a request line carries an outcome other than
// ok or accepted.
func notPlain(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "outcome" {
			if o := a.Value.String(); o != audit.OutcomeOK && o != audit.OutcomeAccepted {
				found = true
			}
		}
		return !found
	})
	return found
}

func (h *requestLineHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &requestLineHandler{inner: h.inner.WithAttrs(attrs), floor: h.floor}
}

func (h *requestLineHandler) WithGroup(name string) slog.Handler {
	return &requestLineHandler{inner: h.inner.WithGroup(name), floor: h.floor}
}

// fail logs one JSON line naming what is wrong (the variables, for a
// configuration error) and exits 1.
func fail(what string, err error) {
	attrs := []any{"err", err.Error()}
	var ce *ConfigError
	var ve *VarError
	switch {
	case errors.As(err, &ce):
		attrs = append(attrs, "variables", ce.Names())
	case errors.As(err, &ve):
		attrs = append(attrs, "variables", []string{ve.Name})
	}
	slog.New(lambdaio.NewLogHandler(os.Stderr, slog.LevelError)).Error("cold start failed: "+what, attrs...)
	os.Exit(1)
}
