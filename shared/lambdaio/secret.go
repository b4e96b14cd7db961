package lambdaio

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// SecretTimeout bounds SecretString's one GetSecretValue call.
const SecretTimeout = 5 * time.Second

// ErrNoSecretString: the secret holds only binary data (SecretBinary).
var ErrNoSecretString = errors.New("lambdaio: the secret has no SecretString")

// SecretString returns the SecretString of the secret's current version
// (stage AWSCURRENT) with one GetSecretValue call bounded by SecretTimeout.
// Functions call it at cold start only: a rotated secret reaches them with
// their next execution environment. Errors wrap the SDK's, so errors.As
// finds e.g. *types.ResourceNotFoundException; the value is never part of
// an error.
func SecretString(ctx context.Context, client *secretsmanager.Client, arn string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, SecretTimeout)
	defer cancel()
	out, err := client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if err != nil {
		return "", fmt.Errorf("get secret %s: %w", arn, err)
	}
	if out.SecretString == nil {
		return "", fmt.Errorf("get secret %s: %w", arn, ErrNoSecretString)
	}
	return *out.SecretString, nil
}
