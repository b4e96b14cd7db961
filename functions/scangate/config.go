package main

import (
	"log/slog"
	"strings"

	"github.com/custodymcp/custody/shared/config"
	"github.com/custodymcp/custody/shared/scan/clamd"
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

// LoadConfig reads the configuration through getenv (os.Getenv in main, a
// map in tests). Every problem is collected; a non-nil error is a
// *config.Error naming each offending variable.
func LoadConfig(getenv func(string) string) (Config, error) {
	var c Config
	var p config.Problems
	c.TableName = p.Table("DYNAMODB_TABLE", getenv("DYNAMODB_TABLE"))
	c.DynamoDBEndpoint = p.Endpoint("DYNAMODB_ENDPOINT", getenv("DYNAMODB_ENDPOINT"))
	emulated := c.DynamoDBEndpoint != ""
	c.StagingBucket, c.RecordBucket = p.Buckets("STAGING_BUCKET", getenv("STAGING_BUCKET"), "RECORD_BUCKET", getenv("RECORD_BUCKET"), true)

	switch e := getenv("SCANNER_ENGINE"); {
	case e == EngineGuardDuty, e == EngineOff:
		c.Engine = e
	case e == "":
		p.Bad("SCANNER_ENGINE", "is required: guardduty or off")
	case !emulated && (e == EngineSignature || strings.HasPrefix(e, enginePrefix)):
		p.Bad("SCANNER_ENGINE", "%s is refused unless DYNAMODB_ENDPOINT is set (emulator runs only): on AWS it is guardduty or off", e)
	case e == EngineSignature:
		c.Engine = e
	case strings.HasPrefix(e, enginePrefix):
		addr, opt, _ := strings.Cut(strings.TrimPrefix(e, enginePrefix), ",")
		c.Engine, c.Clamd.Addr = "clamd", addr
		if size, ok := strings.CutPrefix(opt, "max="); ok {
			max, err := clamd.ParseSize(size)
			if err != nil {
				p.Bad("SCANNER_ENGINE", "has a max that is not a size such as 100M")
			}
			c.Clamd.Max = max
		} else if opt != "" {
			p.Bad("SCANNER_ENGINE", "allows only max=SIZE after clamd's address")
		}
		if _, err := clamd.New(c.Clamd); err != nil {
			p.Bad("SCANNER_ENGINE", "names no clamd address HOST:PORT")
		}
	default:
		p.Bad("SCANNER_ENGINE", "must be guardduty or off")
	}

	c.S3Endpoint = p.Endpoint("S3_ENDPOINT", getenv("S3_ENDPOINT"))
	if c.S3Endpoint != "" && !emulated {
		p.Bad("S3_ENDPOINT", "is refused unless DYNAMODB_ENDPOINT is set (emulator runs only)")
	}
	c.LogLevel = p.LogLevel("LOG_LEVEL", getenv("LOG_LEVEL"))
	if err := p.Err(); err != nil {
		return Config{}, err
	}
	return c, nil
}
