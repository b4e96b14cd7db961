//go:build !dynamodb

package main

import (
	"context"

	"github.com/custodymcp/custody/scripts/internal/engine"
	"github.com/custodymcp/custody/shared/queue"
)

// dynamoOpener is nil: this build serves the file engine alone and links
// no AWS SDK, whose package initialisation would cost every start
// milliseconds (scripts/internal/engine). STORE_ENGINE=dynamodb then fails
// with engine.ErrNoDynamoDB, naming -tags dynamodb.
var dynamoOpener engine.DynamoOpener

// sqsOpener is nil: without the AWS SDK there is no SQS engine, and
// TASK_QUEUE_URL is refused naming -tags dynamodb.
var sqsOpener func(ctx context.Context, url, endpoint string) (queue.Queue, error)
