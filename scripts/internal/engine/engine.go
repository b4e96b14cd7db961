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
//
// This package links no AWS SDK: Go runs every linked package's
// initialisation before main, and the SDK's (the DynamoDB client's
// operation schemas and endpoint tables, the credential chain's STS, SSO
// and sign-in clients) costs a process milliseconds of every start whether
// or not it ever talks to DynamoDB. The DynamoDB engine is opened by
// package dynamoengine, which a program passes to Open (custodyctl always;
// the dev server only when built with -tags dynamodb).
package engine

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/shared/store"
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
		if !ValidTableName(c.Table) {
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

// NewStore returns an open engine over st, released by close (nil: nothing
// to release).
func NewStore(st store.Store, close func() error) *Store { return &Store{Store: st, close: close} }

// ErrNoTable: the DynamoDB table does not exist.
var ErrNoTable = errors.New("the DynamoDB table does not exist")

// ErrNoDynamoDB: the program was built without the DynamoDB engine.
var ErrNoDynamoDB = errors.New("this build has no DynamoDB engine (build the dev server with -tags dynamodb; `make run` does when STORE_ENGINE=dynamodb)")

// DynamoOpener opens the DynamoDB engine of c (dynamoengine.Open).
type DynamoOpener func(ctx context.Context, c Config) (*Store, error)

// Open opens the engine: the file engine's store in dir (which waits a
// second for another process's lock, then fails), or the DynamoDB table
// through dynamo (nil: ErrNoDynamoDB).
func (c Config) Open(ctx context.Context, dir datadir.Dir, dynamo DynamoOpener) (*Store, error) {
	if c.Engine == File {
		fs, err := filestore.Open(dir.StorePath(), filestore.Options{})
		if err != nil {
			return nil, fmt.Errorf("open the store in %s (is a server running on it?): %w", dir, err)
		}
		return &Store{Store: fs, close: fs.Close}, nil
	}
	if dynamo == nil {
		return nil, ErrNoDynamoDB
	}
	return dynamo(ctx, c)
}

// ValidTableName is dynamostore.ValidTableName, DynamoDB's rule for table
// names (3 to 255 of a-z A-Z 0-9 _ . -), here so that checking the
// environment links no SDK; a test holds the two to one answer.
func ValidTableName(name string) bool {
	if len(name) < 3 || len(name) > 255 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}
