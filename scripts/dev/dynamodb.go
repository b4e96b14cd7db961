//go:build dynamodb

package main

import "github.com/custodymcp/custody/scripts/internal/engine/dynamoengine"

// dynamoOpener opens STORE_ENGINE=dynamodb: this build has the DynamoDB
// engine (-tags dynamodb; `make run` adds it when STORE_ENGINE=dynamodb).
var dynamoOpener = dynamoengine.Open
