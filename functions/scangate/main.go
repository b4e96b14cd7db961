// Command scangate is Custody's scan gate Lambda function (issue 17;
// shared/scan/gate): every object copied to the staging bucket's verified/
// prefix gets exactly one verdict, and a clean one goes on to intake.
//
// On AWS its input is the EventBridge rule of template.yaml: GuardDuty
// Malware Protection for S3's "Object Scan Result" events for the staging
// bucket. No bucket notifies the function (the rule names the bucket and
// the bucket names nothing). In emulator runs a byte-scanning engine
// (SCANNER_ENGINE signature or clamd=…) judges S3 ObjectCreated events
// instead, the events the dev server marshals. The function is invoked
// asynchronously: an error return is retried by Lambda twice, then the
// event goes to the on-failure queue (EventInvokeConfig), whose depth
// raises an alarm.
//
// main.go is wiring: the configuration (config.go) is read once, the AWS
// clients and the gate are built outside the handler, and the handler is
// the gate's Handle, which decodes each payload from JSON itself (so an S3
// key is read URL-decoded) and logs one outcome line per invocation. A
// setup failure is one JSON log line naming what is wrong, then exit 1.
//
// Build it as template.yaml does (make build-ScanGateFunction):
//
//	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags="-s -w" -o bootstrap ./functions/scangate
package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/config"
	"github.com/custodymcp/custody/shared/intake"
	"github.com/custodymcp/custody/shared/lambdaio"
	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/clamd"
	"github.com/custodymcp/custody/shared/scan/gate"
	"github.com/custodymcp/custody/shared/scan/guardduty"
	"github.com/custodymcp/custody/shared/scan/signature"
	"github.com/custodymcp/custody/shared/store/dynamostore"
)

// coldStartTimeout bounds the cold start's calls (the AWS configuration,
// clamd's posture).
const coldStartTimeout = 10 * time.Second

func main() {
	cfg, err := LoadConfig(os.Getenv)
	if err != nil {
		config.Exit("invalid configuration", err)
	}
	logger := slog.New(lambdaio.NewLogHandler(os.Stdout, cfg.LogLevel))
	ctx, cancel := context.WithTimeout(context.Background(), coldStartTimeout)
	defer cancel()
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		config.Exit("load the AWS configuration", err)
	}
	g, err := newGate(awsCfg, cfg, logger)
	if err != nil {
		config.Exit("compose the scan gate", err)
	}
	logger.Info("cold start", "table", cfg.TableName, "engine", cfg.Engine, "posture", string(g.Posture(ctx)),
		"emulated", cfg.DynamoDBEndpoint != "")
	cancel()
	lambda.Start(g.Handle)
}

// newGate composes the gate exactly as the function runs it: the DynamoDB
// engine, the S3 engine over the lane's buckets (checksums only where an
// operation requires them, as /mcp's), the configured scanner, and the
// intake (issue 18: the PDF engine lives here, in this function, never in
// /mcp; its module is compiled once per cold start and each document gets
// its own instance). Tests build their gate through it too.
func newGate(awsCfg aws.Config, cfg Config, logger *slog.Logger) (*gate.Gate, error) {
	db := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		if cfg.DynamoDBEndpoint != "" {
			o.BaseEndpoint = aws.String(cfg.DynamoDBEndpoint)
			o.DisableValidateResponseChecksum = true
		}
	})
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		if cfg.S3Endpoint != "" {
			blob.LocalClientOptions(cfg.S3Endpoint)(o)
		}
	})
	buckets := blob.Buckets{Staging: cfg.StagingBucket, Record: cfg.RecordBucket}
	objects, err := blob.New(client, buckets, blob.Options{})
	if err != nil {
		return nil, err
	}
	sc, err := scanner(cfg)
	if err != nil {
		return nil, err
	}
	st := dynamostore.New(db, cfg.TableName, dynamostore.Options{})
	in, err := intake.New(intake.Options{Store: st, Blob: objects, Logger: logger})
	if err != nil {
		return nil, err
	}
	return gate.New(gate.Options{Store: st, Blob: objects, Buckets: buckets, Scanner: sc, Intake: in, Logger: logger})
}

// scanner is SCANNER_ENGINE's engine (nil for off).
func scanner(cfg Config) (scan.Scanner, error) {
	switch cfg.Engine {
	case EngineGuardDuty:
		return guardduty.New(cfg.StagingBucket)
	case EngineSignature:
		return signature.New(), nil
	case "clamd":
		return clamd.New(cfg.Clamd)
	}
	return nil, nil
}
