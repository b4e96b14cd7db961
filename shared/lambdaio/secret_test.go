package lambdaio_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/custodymcp/custody/shared/lambdaio"
)

// secretsEndpoint answers GetSecretValue in the Secrets Manager wire
// protocol (awsJson1.1): the request's X-Amz-Target and SecretId are checked,
// so the test holds SecretString to the call the real service receives.
// It stands in for AWS, not for any Custody store.
func secretsEndpoint(t *testing.T, answers map[string]map[string]any) *secretsmanager.Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("X-Amz-Target"); got != "secretsmanager.GetSecretValue" {
			t.Errorf("X-Amz-Target = %q, want secretsmanager.GetSecretValue", got)
		}
		var in struct{ SecretId string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			t.Errorf("request body: %v", err)
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		out, ok := answers[in.SecretId]
		if !ok {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{
				"__type": "ResourceNotFoundException", "message": "Secrets Manager can't find the specified secret."})
			return
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return secretsmanager.New(secretsmanager.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
}

func TestSecretString(t *testing.T) {
	const arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:cursor-AbCdEf"
	const binary = "arn:aws:secretsmanager:us-east-1:123456789012:secret:binary-AbCdEf"
	client := secretsEndpoint(t, map[string]map[string]any{
		arn:    {"ARN": arn, "Name": "cursor", "SecretString": "00ff", "VersionStages": []string{"AWSCURRENT"}},
		binary: {"ARN": binary, "Name": "binary", "SecretBinary": "AAE="},
	})
	ctx := context.Background()
	if got, err := lambdaio.SecretString(ctx, client, arn); err != nil || got != "00ff" {
		t.Errorf("SecretString() = %q, %v; want 00ff", got, err)
	}
	if _, err := lambdaio.SecretString(ctx, client, binary); !errors.Is(err, lambdaio.ErrNoSecretString) {
		t.Errorf("SecretString(binary) error = %v, want ErrNoSecretString", err)
	}
	_, err := lambdaio.SecretString(ctx, client, arn+"-gone")
	var nf interface{ ErrorCode() string }
	if !errors.As(err, &nf) || nf.ErrorCode() != "ResourceNotFoundException" {
		t.Errorf("SecretString(missing) error = %v, want the service's ResourceNotFoundException", err)
	}
}
