// Package dynamoengine opens the DynamoDB engine of the local tools
// (engine.Config with STORE_ENGINE=dynamodb): the client, the table check,
// the store. It is the only part of scripts/internal/engine that links the
// AWS SDK (see package engine for why that is kept apart).
package dynamoengine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/custodymcp/custody/scripts/internal/engine"
	"github.com/custodymcp/custody/shared/store/dynamostore"
)

var _ engine.DynamoOpener = Open

// Client returns a DynamoDB client for c (DynamoDB engine only): against
// the emulator with static dummy credentials, engine.EmulatorRegion and no
// response checksum check (emulators may send none); on AWS from the SDK's
// default configuration; either way with the engine's settings
// (dynamostore.ClientOptions: the endpoint resolved once, a connection pool
// for the process's concurrency). Build it once per process.
func Client(ctx context.Context, c engine.Config) (*dynamodb.Client, error) {
	if c.Engine != engine.DynamoDB {
		return nil, fmt.Errorf("STORE_ENGINE is %q: there is no DynamoDB client to make", c.Engine)
	}
	if c.Endpoint != "" {
		return dynamodb.New(dynamodb.Options{
			Region: engine.EmulatorRegion,
			Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: "emulator", SecretAccessKey: "emulator", Source: "DYNAMODB_ENDPOINT"}, nil
			}),
			DisableValidateResponseChecksum: true,
		}, dynamostore.ClientOptions(c.Endpoint)), nil
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, errors.New("no AWS region: set AWS_REGION (or DYNAMODB_ENDPOINT for an emulator)")
	}
	return dynamodb.NewFromConfig(cfg, dynamostore.ClientOptions("")), nil
}

// Open opens the DynamoDB table of c, checked with DescribeTable so that a
// missing table is engine.ErrNoTable at once rather than a failed first
// request.
func Open(ctx context.Context, c engine.Config) (*engine.Store, error) {
	client, err := Client(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := CheckTable(ctx, client, c.Table); err != nil {
		return nil, err
	}
	return engine.NewStore(dynamostore.New(client, c.Table, dynamostore.Options{}), nil), nil
}

// CheckTable describes the table: nil when it exists, engine.ErrNoTable
// (naming `custodyctl table create`) when it does not, a wrapped error when
// DynamoDB cannot be reached.
func CheckTable(ctx context.Context, client *dynamodb.Client, table string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	var notFound *types.ResourceNotFoundException
	switch {
	case errors.As(err, &notFound):
		return fmt.Errorf("table %q: %w (create it with `custodyctl table create`)", table, engine.ErrNoTable)
	case err != nil:
		return fmt.Errorf("describe table %q: %w", table, err)
	}
	return nil
}
