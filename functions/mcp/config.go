package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/approvals"
	"github.com/custodymcp/custody/shared/auth/oauth"
	"github.com/custodymcp/custody/shared/queue/sqsqueue"
	"github.com/custodymcp/custody/shared/store/dynamostore"
)

// The environment of the function. template.yaml sets every one of them
// (a test derives this list from the getenv calls below and holds the
// template to it); `sam local invoke --env-vars` can only override variables
// the template declares, which is why the emulator-only ones are declared
// there too, empty.
//
//	DYNAMODB_TABLE          required. The DynamoDB table (dynamostore.CreateTableInput's shape);
//	                        the name scripts/internal/engine uses too.
//	FRONT_DOOR              optional, "rest" (default), "http" or "url": the front door the template
//	                        put before the function (docs/decisions.md "Front doors"), whose event
//	                        shape the function reads: an API Gateway REST API (proxy events), an
//	                        HTTP API (payload format 2.0, buffered) or a function URL (payload
//	                        format 2.0, InvokeMode RESPONSE_STREAM).
//	RESPONSE_STREAMING      required, "true" or "false". Whether the front door streams. For the REST
//	                        API it says whether the integration streams (transfer mode STREAM, the
//	                        response-streaming-invocations URI) or buffers; it must say what the
//	                        template configured, since the two integrations send the same event and
//	                        want different answers. An HTTP API only buffers ("false"); the function
//	                        URL is configured to stream ("true").
//	PUBLIC_BASE_URL         required (behind a function URL, optional). The https origin (optionally
//	                        with a path) clients reach the API at, e.g. the custom domain; the
//	                        canonical resource URL of /mcp is derived from it (MCP authorization
//	                        §Canonical Server URI; RFC 8707). Empty behind a function URL: the
//	                        URL's own https://<requestContext.domainName>, learnt from the first
//	                        event (the template cannot name the URL to its own function).
//	CURSOR_KEY_SECRET_ARN   the ARN of the Secrets Manager secret whose SecretString is the cursor
//	                        sealing key, hex-encoded, at least 32 bytes. Required unless
//	                        LOCAL_CURSOR_KEY_HEX is set.
//	LOCAL_CURSOR_KEY_HEX    emulator runs only: the cursor sealing key itself, hex, at least 32
//	                        bytes. Refused unless DYNAMODB_ENDPOINT is set, and refused together
//	                        with CURSOR_KEY_SECRET_ARN.
//	DYNAMODB_ENDPOINT       emulator runs only: an http(s) base URL replacing DynamoDB's regional
//	                        endpoint (e.g. the minidyn emulator). Empty on AWS.
//	ALLOWED_ORIGINS         optional. Comma-separated exact Origin values browsers may send; any
//	                        other Origin is refused with 403. Empty: none.
//	MAX_BODY_BYTES          optional. The POST body limit in bytes, 1024 to 1048576; default
//	                        1048576 (1 MiB on AWS, docs/decisions.md "Time and size constants": a
//	                        JSON-escaped body grows inside the proxy event, and Lambda refuses
//	                        invoke payloads over 6 MB).
//	AUDIT_RETENTION_DAYS    optional. How long audit rows are kept (their TTL), 1 to 36500 days;
//	                        default 2555 (seven years, gate.DefaultAuditRetention).
//	LOG_LEVEL               optional. DEBUG, INFO, WARN or ERROR; default INFO. The template
//	                        sets it from the same parameter as LoggingConfig.ApplicationLogLevel.
//	GET_STREAM              optional, "true" or "false" (default): offer the held GET /mcp stream
//	                        (resource subscriptions, the hand-off's notifications/elicitation/complete,
//	                        issue 15). A held stream is a held Lambda, so it is off unless the
//	                        template's GetStream parameter turns it on; refused with a door that
//	                        buffers (RESPONSE_STREAMING=false).
//
// The upload lane (shared/uploads, docs/contracts.md §5; all optional: empty, the lane's tools
// and /downloads do not exist). The template sets them from its buckets, the UploadSigner role
// and its ScannerEngine parameter.
//
//	STAGING_BUCKET          the staging bucket (incoming/, verified/, quarantine/). With
//	                        RECORD_BUCKET, or neither.
//	RECORD_BUCKET           the record bucket (obj/): the stored files downloads redirect to.
//	UPLOAD_SIGNER_ROLE_ARN  the IAM role whose sessions sign part URLs (blob.UploadSignerCredentials:
//	                        1 h STS sessions, renewed under 35 min left), allowed only s3:PutObject on
//	                        incoming/*. Required with the buckets on AWS; in emulator runs, empty signs
//	                        with the function's own credentials.
//	SCANNER_ENGINE          the scanner whose posture the lane reports and obeys: guardduty (GuardDuty
//	                        Malware Protection for S3 on the staging bucket, whose verdicts the
//	                        scangate function takes: ARMED, 1 GiB) or off (the two spending tools
//	                        refuse SCANNER_UNAVAILABLE and spend nothing); empty is off. In emulator
//	                        runs also signature. Refused without the buckets unless off or empty.
//	S3_ENDPOINT             emulator runs only: the local S3 server's base URL (path-style). Refused
//	                        unless DYNAMODB_ENDPOINT is set.
//
// Tasks (shared/tasks; docs/decisions.md "Tasks on AWS"):
//
//	TASK_QUEUE_URL          optional. The task queue (its QueueUrl): a task-augmented tools/call
//	                        sends its task's message there after the row commits, and the task
//	                        methods and task tools are served. Empty: no tasks (emulator runs).
//	SQS_ENDPOINT            emulator runs only: SQS's endpoint replaced (e.g. fauxqs). Refused
//	                        unless DYNAMODB_ENDPOINT and TASK_QUEUE_URL are set.
//
// OAuth (shared/auth/oauth; all optional, read only when OAUTH_ISSUER is set):
//
//	OAUTH_ISSUER            the authorization server's issuer identifier, the exact "iss" of its
//	                        access tokens (https; http only in emulator runs). Set, /mcp accepts its
//	                        tokens beside API keys, 401s challenge with resource_metadata and the
//	                        RFC 9728 metadata is served; empty, API keys only (Bearer realm="custody").
//	OAUTH_JWKS_URL          required with OAUTH_ISSUER, refused without it: the issuer's JWK Set (its
//	                        metadata's jwks_uri; not discovered), https (http only in emulator runs).
//	OAUTH_REQUIRED_SCOPE    the token scope /mcp itself requires; default custody:mcp.
//	OAUTH_SCOPE_MAP         token scopes to Custody scopes, entries token-scope=scope[,scope…]
//	                        separated by white space; default (oauth.DefaultScopeMap)
//	                        custody:read=read custody:docs=docs:read custody:tasks=tasks:read
//	                        custody:analysis=analysis:read custody:write=write.
//	OAUTH_TENANT_CLAIM      the claim naming the tenant; default custody_tenant.
//	OAUTH_TENANT            the one tenant of every token (a single-firm deployment whose issuer
//	                        cannot add a tenant claim); a token naming another tenant is refused.
//	OAUTH_USER_CLAIM        the claim naming the user (the principal); default sub.
//	OAUTH_CLASS_CLAIM       the claim that may say client_safe; default custody_class.
//
// The approval page under /approvals (shared/approvals) builds its links from PUBLIC_BASE_URL.
// Its sign-in with the firm's accounts (all optional; shared/approvals.OIDCFromEnv, read with
// OAUTH_ISSUER only):
//
//	OIDC_CLIENT_ID               the page's client at OAUTH_ISSUER; set, people may sign in there
//	                             (OIDC code flow with PKCE S256), besides one-time sign-in links.
//	OIDC_AUTHORIZATION_ENDPOINT  required with OIDC_CLIENT_ID: the issuer's authorization_endpoint.
//	OIDC_TOKEN_ENDPOINT          required with OIDC_CLIENT_ID: the issuer's token_endpoint.
//	OIDC_CLIENT_SECRET_ARN       the Secrets Manager secret whose SecretString is the client secret,
//	                             read at cold start; empty: a public client.
//	OIDC_SCOPES                  scopes requested besides openid, space-separated.

// Front is a front door the function can serve (FRONT_DOOR).
type Front string

// The front doors (template.yaml's FrontDoor parameter).
const (
	// FrontREST is an API Gateway REST API (lambdaio.Adapter.Stream or Buffer).
	FrontREST Front = "rest"
	// FrontHTTP is an API Gateway HTTP API, payload format 2.0, buffered
	// (lambdaio.Adapter.BufferHTTPAPI).
	FrontHTTP Front = "http"
	// FrontURL is a Lambda function URL with InvokeMode RESPONSE_STREAM
	// (lambdaio.Adapter.StreamFunctionURL).
	FrontURL Front = "url"
)

// bufferedRequestTimeout is how long a request may take behind a front door
// that buffers: a REST integration in BUFFERED mode gives up after 29 s
// (its default maximum) and an HTTP API integration after at most 30 s,
// while the function may run 15 min. Ending the request first lets a
// handler that waits answer in time (tasks/result answers "retry").
const bufferedRequestTimeout = 29 * time.Second

// Config is the function's configuration, read once at cold start.
type Config struct {
	TableName string
	// DynamoDBEndpoint is "" on AWS.
	DynamoDBEndpoint string
	// Front is the front door whose events the function reads.
	Front Front
	// Streaming says whether the front door streams: behind the REST API it
	// selects lambdaio.Adapter.Stream (true) or Buffer; it is false behind an
	// HTTP API and true behind a function URL.
	Streaming bool
	// PublicBaseURL is the validated base URL without a trailing slash. ""
	// only behind a function URL, until WithPublicBaseURL is given its own.
	PublicBaseURL string
	// ResourceURL is the canonical URL of the MCP endpoint: PublicBaseURL + "/mcp".
	ResourceURL string
	// CursorKeySecretARN names the secret holding the cursor key ("" when
	// LocalCursorKey is set).
	CursorKeySecretARN string
	// LocalCursorKey is the cursor key of an emulator run (nil on AWS).
	LocalCursorKey []byte
	AllowedOrigins []string
	MaxBodyBytes   int64
	// AuditRetention is the audit rows' TTL (0: the gate's default).
	AuditRetention time.Duration
	// HeldStream offers the held GET /mcp stream (GET_STREAM; off by
	// default: a held stream is a held Lambda).
	HeldStream bool
	LogLevel   slog.Level
	// StagingBucket and RecordBucket name the upload lane's buckets; both
	// "" when the lane is off.
	StagingBucket, RecordBucket string
	// UploadSignerRoleARN is the role whose sessions sign part URLs ("":
	// the function's own credentials, emulator runs only).
	UploadSignerRoleARN string
	// S3Endpoint is the local S3 server of an emulator run ("" on AWS).
	S3Endpoint string
	// ScannerEngine is "guardduty", "signature" (emulator runs) or "" (off).
	ScannerEngine string
	// TaskQueueURL is the task queue ("": no tasks); SQSEndpoint the SQS
	// emulator of an emulator run ("" on AWS).
	TaskQueueURL, SQSEndpoint string
	// OAuth configures the OAuth resource server; nil means API keys only.
	// Its PublicBaseURL is PublicBaseURL; main adds the logger.
	OAuth *oauth.Config
	// OIDC is the approval page's client at the OAuth issuer; nil means
	// sign-in links only. Its ClientSecret is filled by LoadOIDCSecret.
	OIDC *approvals.OIDCSettings
}

// Limits of MAX_BODY_BYTES.
const (
	defaultMaxBodyBytes = 1 << 20
	minBodyBytes        = 1 << 10
)

// minKeyBytes is the shortest cursor sealing key accepted (mcp.NewCursorSealer's floor).
const minKeyBytes = 32

// VarError is one environment variable that is missing or invalid.
type VarError struct {
	Name    string
	Problem string
}

func (e *VarError) Error() string { return e.Name + " " + e.Problem }

// ConfigError lists every variable that is missing or invalid, in the order
// they were checked. Its Error names them all on one line.
type ConfigError struct{ Vars []*VarError }

func (e *ConfigError) Error() string {
	parts := make([]string, len(e.Vars))
	for i, v := range e.Vars {
		parts[i] = v.Error()
	}
	return "invalid configuration: " + strings.Join(parts, "; ")
}

// Names returns the names of the offending variables.
func (e *ConfigError) Names() []string {
	names := make([]string, len(e.Vars))
	for i, v := range e.Vars {
		names[i] = v.Name
	}
	return names
}

// LoadConfig reads the configuration through getenv (os.Getenv in main, a
// map in tests). Every problem is collected; a non-nil error is a
// *ConfigError naming each offending variable.
func LoadConfig(getenv func(string) string) (Config, error) {
	var c Config
	var errs []*VarError
	bad := func(name, format string, args ...any) {
		errs = append(errs, &VarError{Name: name, Problem: fmt.Sprintf(format, args...)})
	}

	switch c.TableName = getenv("DYNAMODB_TABLE"); {
	case c.TableName == "":
		bad("DYNAMODB_TABLE", "is required")
	case !dynamostore.ValidTableName(c.TableName):
		bad("DYNAMODB_TABLE", "is not a DynamoDB table name (3-255 of a-z A-Z 0-9 _ . -)")
	}

	c.DynamoDBEndpoint = getenv("DYNAMODB_ENDPOINT")
	if c.DynamoDBEndpoint != "" {
		if u, err := url.Parse(c.DynamoDBEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("DYNAMODB_ENDPOINT", "is not an http(s) URL")
		}
	}
	emulated := c.DynamoDBEndpoint != ""

	switch c.Front = Front(getenv("FRONT_DOOR")); c.Front {
	case "":
		c.Front = FrontREST
	case FrontREST, FrontHTTP, FrontURL:
	default:
		bad("FRONT_DOOR", "must be rest, http or url")
	}

	switch s := getenv("RESPONSE_STREAMING"); {
	case s == "":
		bad("RESPONSE_STREAMING", "is required (true when the API Gateway integration streams, false when it buffers)")
	case s != "true" && s != "false":
		bad("RESPONSE_STREAMING", "must be true or false")
	case c.Front == FrontHTTP && s != "false":
		bad("RESPONSE_STREAMING", "must be false with FRONT_DOOR=http (an HTTP API does not stream)")
	case c.Front == FrontURL && s != "true":
		bad("RESPONSE_STREAMING", "must be true with FRONT_DOOR=url (the function URL's InvokeMode is RESPONSE_STREAM)")
	default:
		c.Streaming = s == "true"
	}

	switch s := getenv("GET_STREAM"); s {
	case "", "false":
	case "true":
		if getenv("RESPONSE_STREAMING") == "false" {
			bad("GET_STREAM", "must be false with RESPONSE_STREAMING=false (a buffered door cannot hold a stream)")
		}
		c.HeldStream = true
	default:
		bad("GET_STREAM", "must be true or false")
	}

	if raw := getenv("PUBLIC_BASE_URL"); raw != "" || c.Front != FrontURL {
		if base, err := publicBaseURL(raw, emulated); err != nil {
			bad("PUBLIC_BASE_URL", "%s", err)
		} else {
			c.PublicBaseURL, c.ResourceURL = base, base+"/mcp"
		}
	}

	arn, local := getenv("CURSOR_KEY_SECRET_ARN"), getenv("LOCAL_CURSOR_KEY_HEX")
	switch {
	case arn != "" && local != "":
		bad("LOCAL_CURSOR_KEY_HEX", "is refused together with CURSOR_KEY_SECRET_ARN: set one")
	case arn != "":
		if !isSecretARN(arn) {
			bad("CURSOR_KEY_SECRET_ARN", "is not a Secrets Manager secret ARN (arn:<partition>:secretsmanager:<region>:<account>:secret:<name>)")
		}
		c.CursorKeySecretARN = arn
	case local != "":
		if !emulated {
			bad("LOCAL_CURSOR_KEY_HEX", "is refused unless DYNAMODB_ENDPOINT is set (emulator runs only)")
		} else if key, err := DecodeKey(local); err != nil {
			bad("LOCAL_CURSOR_KEY_HEX", "%s", err)
		} else {
			c.LocalCursorKey = key
		}
	default:
		bad("CURSOR_KEY_SECRET_ARN", "is required")
	}

	c.AllowedOrigins = nil
	for _, o := range strings.Split(getenv("ALLOWED_ORIGINS"), ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		if u, err := url.Parse(o); err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" || u.RawQuery != "" {
			bad("ALLOWED_ORIGINS", "has an entry that is not an origin (scheme://host[:port])")
			break
		}
		c.AllowedOrigins = append(c.AllowedOrigins, o)
	}

	c.MaxBodyBytes = defaultMaxBodyBytes
	if s := getenv("MAX_BODY_BYTES"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < minBodyBytes || n > defaultMaxBodyBytes {
			bad("MAX_BODY_BYTES", "must be an integer from %d to %d", minBodyBytes, defaultMaxBodyBytes)
		} else {
			c.MaxBodyBytes = n
		}
	}

	if s := getenv("AUDIT_RETENTION_DAYS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 36500 {
			bad("AUDIT_RETENTION_DAYS", "must be an integer from 1 to 36500")
		} else {
			c.AuditRetention = time.Duration(n) * 24 * time.Hour
		}
	}

	switch s := strings.ToUpper(getenv("LOG_LEVEL")); s {
	case "", "INFO":
		c.LogLevel = slog.LevelInfo
	case "DEBUG":
		c.LogLevel = slog.LevelDebug
	case "WARN":
		c.LogLevel = slog.LevelWarn
	case "ERROR":
		c.LogLevel = slog.LevelError
	default:
		bad("LOG_LEVEL", "must be DEBUG, INFO, WARN or ERROR")
	}

	c.StagingBucket, c.RecordBucket = getenv("STAGING_BUCKET"), getenv("RECORD_BUCKET")
	c.UploadSignerRoleARN, c.S3Endpoint = getenv("UPLOAD_SIGNER_ROLE_ARN"), getenv("S3_ENDPOINT")
	switch lane := c.StagingBucket != "" || c.RecordBucket != ""; {
	case lane && (c.StagingBucket == "" || c.RecordBucket == ""):
		bad("STAGING_BUCKET", "and RECORD_BUCKET are set together or not at all")
	case lane:
		for _, v := range [][2]string{{"STAGING_BUCKET", c.StagingBucket}, {"RECORD_BUCKET", c.RecordBucket}} {
			if !validBucketName(v[1]) {
				bad(v[0], "is not an S3 bucket name (3-63 of a-z 0-9 . -)")
			}
		}
		if c.StagingBucket == c.RecordBucket {
			bad("RECORD_BUCKET", "must differ from STAGING_BUCKET")
		}
		if c.UploadSignerRoleARN == "" && !emulated {
			bad("UPLOAD_SIGNER_ROLE_ARN", "is required with the upload lane's buckets (part URLs are signed by that role only)")
		}
	case c.UploadSignerRoleARN != "" || c.S3Endpoint != "":
		bad("STAGING_BUCKET", "is required when UPLOAD_SIGNER_ROLE_ARN or S3_ENDPOINT is set")
	}
	switch e := getenv("SCANNER_ENGINE"); e {
	case "", "off":
	case "guardduty":
		c.ScannerEngine = e
	case "signature":
		if !emulated {
			bad("SCANNER_ENGINE", "signature is refused unless DYNAMODB_ENDPOINT is set (emulator runs only): on AWS it is guardduty or off")
		}
		c.ScannerEngine = e
	default:
		bad("SCANNER_ENGINE", "must be guardduty or off")
	}
	if c.ScannerEngine != "" && c.StagingBucket == "" {
		bad("SCANNER_ENGINE", "needs the upload lane's buckets (STAGING_BUCKET, RECORD_BUCKET)")
	}
	if c.UploadSignerRoleARN != "" && !validRoleARN(c.UploadSignerRoleARN) {
		bad("UPLOAD_SIGNER_ROLE_ARN", "is not an IAM role ARN (arn:<partition>:iam::<account>:role/<name>)")
	}
	if c.S3Endpoint != "" {
		if !emulated {
			bad("S3_ENDPOINT", "is refused unless DYNAMODB_ENDPOINT is set (emulator runs only)")
		} else if u, err := url.Parse(c.S3Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("S3_ENDPOINT", "is not an http(s) URL")
		}
	}

	c.TaskQueueURL, c.SQSEndpoint = getenv("TASK_QUEUE_URL"), getenv("SQS_ENDPOINT")
	if c.TaskQueueURL != "" && !sqsqueue.ValidQueueURL(c.TaskQueueURL, emulated) {
		bad("TASK_QUEUE_URL", "is not an SQS queue URL (https://sqs.<region>.amazonaws.com/<account>/<name>)")
	}
	if c.SQSEndpoint != "" {
		switch u, err := url.Parse(c.SQSEndpoint); {
		case !emulated:
			bad("SQS_ENDPOINT", "is refused unless DYNAMODB_ENDPOINT is set (emulator runs only)")
		case c.TaskQueueURL == "":
			bad("SQS_ENDPOINT", "is refused without TASK_QUEUE_URL")
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			bad("SQS_ENDPOINT", "is not an http(s) URL")
		}
	}

	c.OAuth = oauth.ConfigFromEnv(getenv, c.PublicBaseURL, emulated, func(name, problem string) { bad(name, "%s", problem) })
	c.OIDC = approvals.OIDCFromEnv(getenv, c.OAuth != nil, emulated, func(name, problem string) { bad(name, "%s", problem) })

	if len(errs) > 0 {
		return Config{}, &ConfigError{Vars: errs}
	}
	return c, nil
}

// WithPublicBaseURL returns the configuration with the public base URL
// base (validated as PUBLIC_BASE_URL is) in PublicBaseURL, ResourceURL and
// the OAuth resource server's configuration: behind a function URL without
// PUBLIC_BASE_URL, main gives it the URL's own https://<domainName> from the
// first event. Its error is a *VarError naming PUBLIC_BASE_URL.
func (c Config) WithPublicBaseURL(base string) (Config, error) {
	b, err := publicBaseURL(base, c.DynamoDBEndpoint != "")
	if err != nil {
		return Config{}, &VarError{Name: "PUBLIC_BASE_URL", Problem: "(from the function URL's domain) " + err.Error()}
	}
	c.PublicBaseURL, c.ResourceURL = b, b+"/mcp"
	if c.OAuth != nil {
		oc := *c.OAuth
		oc.PublicBaseURL = b
		c.OAuth = &oc
	}
	return c, nil
}

// Buffered reports whether the front door answers only once the handler
// returns (server.Config.Buffered): an HTTP API, or a REST integration in
// BUFFERED mode.
func (c Config) Buffered() bool { return !c.Streaming }

// RequestTimeout is the lambdaio.Options.RequestTimeout of the front door:
// bufferedRequestTimeout where it buffers, none where it streams.
func (c Config) RequestTimeout() time.Duration {
	if c.Buffered() {
		return bufferedRequestTimeout
	}
	return 0
}

// LaneEnabled reports whether the upload lane's buckets are configured.
func (c Config) LaneEnabled() bool { return c.StagingBucket != "" }

// validBucketName holds s to S3's general-purpose bucket naming rule (S3
// User Guide, "Bucket naming rules"): 3 to 63 lowercase letters, digits,
// dots and hyphens, beginning and ending with a letter or digit.
func validBucketName(s string) bool {
	if len(s) < 3 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
		if !alnum && (i == 0 || i == len(s)-1 || (c != '.' && c != '-')) {
			return false
		}
	}
	return true
}

// validRoleARN holds s to the shape of an IAM role ARN (IAM User Guide,
// "IAM identifiers"): arn:<partition>:iam::<12-digit account>:role/<path and name>.
func validRoleARN(s string) bool {
	parts := strings.SplitN(s, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || !strings.HasPrefix(parts[1], "aws") || parts[2] != "iam" || parts[3] != "" {
		return false
	}
	if len(parts[4]) != 12 || strings.Trim(parts[4], "0123456789") != "" {
		return false
	}
	name, ok := strings.CutPrefix(parts[5], "role/")
	if !ok || name == "" || len(name) > 512 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_+=,.@/-", r)) {
			return false
		}
	}
	return true
}

// ServerLogLevel is the level of the MCP transport's own logger. Its
// per-request INFO line would be a second line per invocation beside the
// adapter's outcome line, so it is shown only at DEBUG; its warnings and
// errors always are.
func (c Config) ServerLogLevel() slog.Level {
	if c.LogLevel <= slog.LevelDebug {
		return c.LogLevel
	}
	return max(c.LogLevel, slog.LevelWarn)
}

// publicBaseURL validates PUBLIC_BASE_URL: an absolute https URL (http only
// in emulator runs) without query, fragment or user info. It returns it
// without a trailing slash.
func publicBaseURL(s string, emulated bool) (string, error) {
	if s == "" {
		return "", fmt.Errorf("is required")
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("must be an absolute URL without query, fragment or user info")
	}
	if u.Scheme != "https" && !(emulated && u.Scheme == "http") {
		return "", fmt.Errorf("must be https (http only with DYNAMODB_ENDPOINT, in emulator runs)")
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// isSecretARN reports whether s has the shape of a Secrets Manager secret
// ARN (IAM User Guide, "Resource types defined by AWS Secrets Manager").
func isSecretARN(s string) bool {
	parts := strings.SplitN(s, ":", 7)
	return len(parts) == 7 && parts[0] == "arn" && parts[1] != "" && parts[2] == "secretsmanager" &&
		parts[3] != "" && parts[4] != "" && parts[5] == "secret" && parts[6] != ""
}

// DecodeKey decodes a hex-encoded sealing key of at least 32 bytes; the
// secret's SecretString and LOCAL_CURSOR_KEY_HEX have that form. Surrounding
// white space is ignored. Its error never quotes the key.
func DecodeKey(s string) ([]byte, error) {
	key, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("is not hex")
	}
	if len(key) < minKeyBytes {
		return nil, fmt.Errorf("holds %d bytes, fewer than %d", len(key), minKeyBytes)
	}
	return key, nil
}

// CursorKey returns the cursor sealing key: LocalCursorKey in an emulator
// run, else the SecretString of CursorKeySecretARN fetched with fetch
// (lambdaio.SecretString in main) and decoded with DecodeKey. Its error is a
// *VarError naming the variable the key came from.
func (c Config) CursorKey(ctx context.Context, fetch func(ctx context.Context, arn string) (string, error)) ([]byte, error) {
	if c.LocalCursorKey != nil {
		return c.LocalCursorKey, nil
	}
	s, err := fetch(ctx, c.CursorKeySecretARN)
	if err != nil {
		return nil, &VarError{Name: "CURSOR_KEY_SECRET_ARN", Problem: "names a secret that could not be read: " + err.Error()}
	}
	key, err := DecodeKey(s)
	if err != nil {
		return nil, &VarError{Name: "CURSOR_KEY_SECRET_ARN", Problem: "names a secret whose value " + err.Error()}
	}
	return key, nil
}

// LoadOIDCSecret reads the approval page's OIDC client secret from the
// secret OIDC_CLIENT_SECRET_ARN names (fetch is lambdaio.SecretString in
// main) into OIDC.ClientSecret; with no OIDC client or no ARN (a public
// client) it does nothing. Its error is a *VarError naming the variable.
func (c *Config) LoadOIDCSecret(ctx context.Context, fetch func(ctx context.Context, arn string) (string, error)) error {
	if c.OIDC == nil || c.OIDC.ClientSecretARN == "" {
		return nil
	}
	s, err := fetch(ctx, c.OIDC.ClientSecretARN)
	if err != nil {
		return &VarError{Name: "OIDC_CLIENT_SECRET_ARN", Problem: "names a secret that could not be read: " + err.Error()}
	}
	if s = strings.TrimSpace(s); s == "" {
		return &VarError{Name: "OIDC_CLIENT_SECRET_ARN", Problem: "names an empty secret"}
	}
	c.OIDC.ClientSecret = s
	return nil
}
