// Package engine picks the storage engine of the local tools (scripts/dev
// and scripts/custodyctl) from their environment and opens it:
//
//	STORE_ENGINE       "file" (the default) or "dynamodb".
//	DYNAMODB_TABLE     the table, required with dynamodb (dynamostore.CreateTableInput's
//	                   shape; `custodyctl table create` makes one).
//	DYNAMODB_ENDPOINT  an emulator's base URL, e.g. http://127.0.0.1:8000 — for emulators
//	                   only. With it the client uses static dummy credentials and the fixed
//	                   region us-east-1 and reads nothing of the AWS environment; without it,
//	                   the SDK's default chain (AWS_REGION, AWS_PROFILE, SSO, …) reaches AWS.
//
// The file engine is one process's: it lives in the data folder and bbolt
// locks it. The DynamoDB engine is shared: any number of processes on one
// table behave as one service when they also share the data folder's
// secrets (cursor key, admin token).
package engine

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/store/filestore"
)

// Engine names.
const (
	File     = "file"
	DynamoDB = "dynamodb"
)

// EmulatorRegion is the region of a client pointed at DYNAMODB_ENDPOINT.
const EmulatorRegion = "us-east-1"

// Config is the engine chosen by the environment.
type Config struct {
	// Engine is File or DynamoDB.
	Engine string
	// Table is the DynamoDB table ("" with the file engine).
	Table string
	// Endpoint is the emulator's base URL ("" on AWS and with the file engine).
	Endpoint string
}

// FromEnv reads STORE_ENGINE, DYNAMODB_TABLE and DYNAMODB_ENDPOINT through
// getenv (os.Getenv in main, a map in tests). A value that cannot be right
// is an error naming the variable: an unknown engine, a missing or
// malformed table, an endpoint that is not an http(s) URL, DynamoDB
// variables with the file engine.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{Engine: getenv("STORE_ENGINE"), Table: getenv("DYNAMODB_TABLE"), Endpoint: getenv("DYNAMODB_ENDPOINT")}
	if c.Engine == "" {
		c.Engine = File
	}
	switch c.Engine {
	case File:
		if c.Table != "" || c.Endpoint != "" {
			return Config{}, errors.New("DYNAMODB_TABLE and DYNAMODB_ENDPOINT need STORE_ENGINE=dynamodb")
		}
	case DynamoDB:
		if !dynamostore.ValidTableName(c.Table) {
			return Config{}, fmt.Errorf("DYNAMODB_TABLE %q is not a DynamoDB table name (3-255 of a-z A-Z 0-9 _ . -); STORE_ENGINE=dynamodb needs one", c.Table)
		}
		if c.Endpoint != "" {
			u, err := url.Parse(c.Endpoint)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return Config{}, fmt.Errorf("DYNAMODB_ENDPOINT %q is not an http(s) base URL", c.Endpoint)
			}
		}
	default:
		return Config{}, fmt.Errorf("STORE_ENGINE %q is neither %q nor %q", c.Engine, File, DynamoDB)
	}
	return c, nil
}

// String describes the engine for a banner or a log line.
func (c Config) String() string {
	switch {
	case c.Engine == File:
		return "the file engine"
	case c.Endpoint != "":
		return fmt.Sprintf("DynamoDB table %q at %s", c.Table, c.Endpoint)
	}
	return fmt.Sprintf("DynamoDB table %q", c.Table)
}

// Client returns a DynamoDB client for c (DynamoDB engine only): against
// the emulator with static dummy credentials, EmulatorRegion and no response
// checksum check (emulators may send none); on AWS from the SDK's default
// configuration. Build it once per process.
func (c Config) Client(ctx context.Context) (*dynamodb.Client, error) {
	if c.Engine != DynamoDB {
		return nil, fmt.Errorf("STORE_ENGINE is %q: there is no DynamoDB client to make", c.Engine)
	}
	if c.Endpoint != "" {
		return dynamodb.New(dynamodb.Options{
			Region:       EmulatorRegion,
			BaseEndpoint: aws.String(c.Endpoint),
			Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: "emulator", SecretAccessKey: "emulator", Source: "DYNAMODB_ENDPOINT"}, nil
			}),
			DisableValidateResponseChecksum: true,
		}), nil
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, errors.New("no AWS region: set AWS_REGION (or DYNAMODB_ENDPOINT for an emulator)")
	}
	return dynamodb.NewFromConfig(cfg), nil
}

// Store is an open engine.
type Store struct {
	store.Store
	close func() error
}

// Close releases the engine (the file engine's lock).
func (s *Store) Close() error {
	if s.close == nil {
		return nil
	}
	return s.close()
}

// ErrNoTable: the DynamoDB table does not exist.
var ErrNoTable = errors.New("the DynamoDB table does not exist")

// Open opens the engine: the file engine's store in dir (which waits a
// second for another process's lock, then fails), or the DynamoDB table,
// checked with DescribeTable so that a missing table is ErrNoTable at once
// rather than a failed first request.
func (c Config) Open(ctx context.Context, dir datadir.Dir) (*Store, error) {
	if c.Engine == File {
		fs, err := filestore.Open(dir.StorePath(), filestore.Options{})
		if err != nil {
			return nil, fmt.Errorf("open the store in %s (is a server running on it?): %w", dir, err)
		}
		return &Store{Store: fs, close: fs.Close}, nil
	}
	client, err := c.Client(ctx)
	if err != nil {
		return nil, err
	}
	if err := CheckTable(ctx, client, c.Table); err != nil {
		return nil, err
	}
	return &Store{Store: dynamostore.New(client, c.Table, dynamostore.Options{})}, nil
}

// CheckTable describes the table: nil when it exists, ErrNoTable (naming
// `custodyctl table create`) when it does not, a wrapped error when DynamoDB
// cannot be reached.
func CheckTable(ctx context.Context, client *dynamodb.Client, table string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	var notFound *types.ResourceNotFoundException
	switch {
	case errors.As(err, &notFound):
		return fmt.Errorf("table %q: %w (create it with `custodyctl table create`)", table, ErrNoTable)
	case err != nil:
		return fmt.Errorf("describe table %q: %w", table, err)
	}
	return nil
}
