//go:build dynamodb

package main

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/custodymcp/custody/scripts/internal/engine"
	"github.com/custodymcp/custody/scripts/internal/engine/dynamoengine"
	"github.com/custodymcp/custody/shared/queue"
	"github.com/custodymcp/custody/shared/queue/sqsqueue"
)

// dynamoOpener opens STORE_ENGINE=dynamodb: this build has the DynamoDB
// engine (-tags dynamodb; `make run` adds it when STORE_ENGINE=dynamodb).
var dynamoOpener = dynamoengine.Open

// sqsOpener opens an SQS task queue (TASK_QUEUE_URL): this build has the
// AWS SDK.
var sqsOpener = openSQS

// openSQS is the SQS engine of the queue at url: against an emulator
// (endpoint set) with static dummy credentials in engine.EmulatorRegion, as
// the DynamoDB engine's emulator runs are; on AWS from the SDK's default
// configuration.
func openSQS(ctx context.Context, url, endpoint string) (queue.Queue, error) {
	if !sqsqueue.ValidQueueURL(url, endpoint != "") {
		return nil, fmt.Errorf("%q is not an SQS queue URL", url)
	}
	var client *sqs.Client
	if endpoint != "" {
		client = sqs.New(sqs.Options{
			Region: engine.EmulatorRegion,
			Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: "emulator", SecretAccessKey: "emulator", Source: "SQS_ENDPOINT"}, nil
			}),
		}, sqsqueue.ClientOptions(endpoint))
	} else {
		cfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("load the AWS configuration: %w", err)
		}
		client = sqs.NewFromConfig(cfg)
	}
	return sqsqueue.New(sqsqueue.Options{Client: client, QueueURL: url})
}
