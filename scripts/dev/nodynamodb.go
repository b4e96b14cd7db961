//go:build !dynamodb

package main

import "github.com/custodymcp/custody/scripts/internal/engine"

// dynamoOpener is nil: this build serves the file engine alone and links
// no AWS SDK, whose package initialisation would cost every start
// milliseconds (scripts/internal/engine). STORE_ENGINE=dynamodb then fails
// with engine.ErrNoDynamoDB, naming -tags dynamodb.
var dynamoOpener engine.DynamoOpener
