package main

import (
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/custodymcp/custody/shared/scan/clamd"
	"github.com/custodymcp/custody/shared/store/dynamostore"
)

// The environment of the function. template.yaml sets every one of them
// (functions/mcp's template test derives this list from the getenv calls
// below and holds ScanGateFunction to it).
//
//	DYNAMODB_TABLE     required. The DynamoDB table.
//	STAGING_BUCKET     required. The staging bucket (incoming/, verified/, quarantine/): the
//	                   gate takes events of this bucket's verified/ objects only.
//	RECORD_BUCKET      required. The record bucket (obj/), where intake stores a clean file.
//	SCANNER_ENGINE     required. The engine whose verdicts the gate takes:
//	                     guardduty   GuardDuty Malware Protection for S3's scan result events
//	                                 (the deployed stack's; template parameter ScannerEngine)
//	                     off         no engine: the lane is OFF; a stray event's verdict is
//	                                 scan_failed
//	                   and, in emulator runs only (DYNAMODB_ENDPOINT set), a byte-scanning engine
//	                   judging S3 ObjectCreated events:
//	                     signature   the EICAR test file by content (the dev default)
//	                     clamd=HOST:PORT[,max=SIZE]  clamd over TCP (AlertExceedsMax yes;
//	                                 SIZE its StreamMaxLength, default 100M)
//	LOG_LEVEL          optional. DEBUG, INFO, WARN or ERROR; default INFO.
//	DYNAMODB_ENDPOINT  emulator runs only: the DynamoDB emulator's base URL. Empty on AWS.
//	S3_ENDPOINT        emulator runs only: the local S3 server's base URL (path-style).
//	                   Refused unless DYNAMODB_ENDPOINT is set.

// Engines of SCANNER_ENGINE.
const (
	EngineGuardDuty = "guardduty"
	EngineOff       = "off"
	EngineSignature = "signature"
	enginePrefix    = "clamd="
)

// Config is the function's configuration, read once at cold start.
type Config struct {
	TableName                   string
	StagingBucket, RecordBucket string
	// Engine is EngineGuardDuty, EngineOff, EngineSignature or "clamd".
	Engine string
	// Clamd configures the clamd engine (Engine "clamd").
	Clamd    clamd.Options
	LogLevel slog.Level
	// DynamoDBEndpoint and S3Endpoint are "" on AWS.
	DynamoDBEndpoint, S3Endpoint string
}

// VarError is one environment variable that is missing or invalid.
type VarError struct {
	Name    string
	Problem string
}

func (e *VarError) Error() string { return e.Name + " " + e.Problem }

// ConfigError lists every variable that is missing or invalid, in the order
// they were checked.
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
// map in tests). A non-nil error is a *ConfigError naming each offending
// variable.
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
	if c.DynamoDBEndpoint != "" && !httpURL(c.DynamoDBEndpoint) {
		bad("DYNAMODB_ENDPOINT", "is not an http(s) URL")
	}
	emulated := c.DynamoDBEndpoint != ""

	c.StagingBucket, c.RecordBucket = getenv("STAGING_BUCKET"), getenv("RECORD_BUCKET")
	for _, v := range [][2]string{{"STAGING_BUCKET", c.StagingBucket}, {"RECORD_BUCKET", c.RecordBucket}} {
		switch {
		case v[1] == "":
			bad(v[0], "is required")
		case !validBucketName(v[1]):
			bad(v[0], "is not an S3 bucket name (3-63 of a-z 0-9 . -)")
		}
	}
	if c.StagingBucket != "" && c.StagingBucket == c.RecordBucket {
		bad("RECORD_BUCKET", "must differ from STAGING_BUCKET")
	}

	switch e := getenv("SCANNER_ENGINE"); {
	case e == EngineGuardDuty, e == EngineOff:
		c.Engine = e
	case e == "":
		bad("SCANNER_ENGINE", "is required: guardduty or off")
	case !emulated && (e == EngineSignature || strings.HasPrefix(e, enginePrefix)):
		bad("SCANNER_ENGINE", "%s is refused unless DYNAMODB_ENDPOINT is set (emulator runs only): on AWS it is guardduty or off", e)
	case e == EngineSignature:
		c.Engine = e
	case strings.HasPrefix(e, enginePrefix):
		addr, opt, _ := strings.Cut(strings.TrimPrefix(e, enginePrefix), ",")
		c.Engine, c.Clamd.Addr = "clamd", addr
		if size, ok := strings.CutPrefix(opt, "max="); ok {
			max, err := clamd.ParseSize(size)
			if err != nil {
				bad("SCANNER_ENGINE", "has a max that is not a size such as 100M")
			}
			c.Clamd.Max = max
		} else if opt != "" {
			bad("SCANNER_ENGINE", "allows only max=SIZE after clamd's address")
		}
		if _, err := clamd.New(c.Clamd); err != nil {
			bad("SCANNER_ENGINE", "names no clamd address HOST:PORT")
		}
	default:
		bad("SCANNER_ENGINE", "must be guardduty or off")
	}

	c.S3Endpoint = getenv("S3_ENDPOINT")
	if c.S3Endpoint != "" {
		if !emulated {
			bad("S3_ENDPOINT", "is refused unless DYNAMODB_ENDPOINT is set (emulator runs only)")
		} else if !httpURL(c.S3Endpoint) {
			bad("S3_ENDPOINT", "is not an http(s) URL")
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
	if len(errs) > 0 {
		return Config{}, &ConfigError{Vars: errs}
	}
	return c, nil
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// validBucketName holds s to S3's general-purpose bucket naming rule (S3
// User Guide, "Bucket naming rules").
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
