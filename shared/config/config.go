// Package config reads a Lambda function's environment at cold start: the
// variables template.yaml sets, each checked, every problem collected, so
// that a misconfigured function fails its cold start with one log line
// naming each offending variable (Exit) instead of serving half-built.
//
// Each function's own config.go calls its getenv with string literals (the
// template tests derive the function's variables from those calls and hold
// the template to them) and checks the values with the parsers here, which
// the functions share: table names, emulator endpoints, queue URLs, the
// upload lane's buckets, the cursor sealing key, log levels and retention
// days. functions/mcp keeps
// its own equivalents, which came first.
package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/lambdaio"
	"github.com/custodymcp/custody/shared/queue/sqsqueue"
	"github.com/custodymcp/custody/shared/store/dynamostore"
)

// VarError is one environment variable that is missing or invalid. Its
// Problem never quotes the value (a key or an ARN may be secret).
type VarError struct {
	Name    string
	Problem string
}

func (e *VarError) Error() string { return e.Name + " " + e.Problem }

// Error lists every variable that is missing or invalid, in the order they
// were checked. Its Error names them all on one line.
type Error struct{ Vars []*VarError }

func (e *Error) Error() string {
	parts := make([]string, len(e.Vars))
	for i, v := range e.Vars {
		parts[i] = v.Error()
	}
	return "invalid configuration: " + strings.Join(parts, "; ")
}

// Names returns the names of the offending variables.
func (e *Error) Names() []string {
	names := make([]string, len(e.Vars))
	for i, v := range e.Vars {
		names[i] = v.Name
	}
	return names
}

// Problems collects VarErrors while a configuration is read.
type Problems struct{ vars []*VarError }

// Bad records that variable name is missing or invalid.
func (p *Problems) Bad(name, format string, args ...any) {
	p.vars = append(p.vars, &VarError{Name: name, Problem: fmt.Sprintf(format, args...)})
}

// Err returns the problems as an *Error, or nil when there were none.
func (p *Problems) Err() error {
	if len(p.vars) == 0 {
		return nil
	}
	return &Error{Vars: p.vars}
}

// Table checks DYNAMODB_TABLE's value: required, and a DynamoDB table name.
func (p *Problems) Table(name, v string) string {
	switch {
	case v == "":
		p.Bad(name, "is required")
	case !dynamostore.ValidTableName(v):
		p.Bad(name, "is not a DynamoDB table name (3-255 of a-z A-Z 0-9 _ . -)")
	}
	return v
}

// Endpoint checks an emulator's base URL (DYNAMODB_ENDPOINT,
// SQS_ENDPOINT): empty, or an http(s) URL with a host.
func (p *Problems) Endpoint(name, v string) string {
	if v == "" {
		return ""
	}
	if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.Bad(name, "is not an http(s) URL")
	}
	return v
}

// QueueURL checks an SQS queue URL (sqsqueue.ValidQueueURL; an emulator's
// only when emulated). required says whether it may be empty.
func (p *Problems) QueueURL(name, v string, required, emulated bool) string {
	switch {
	case v == "" && required:
		p.Bad(name, "is required")
	case v != "" && !sqsqueue.ValidQueueURL(v, emulated):
		p.Bad(name, "is not an SQS queue URL (https://sqs.<region>.amazonaws.com/<account>/<name>)")
	}
	return v
}

// Buckets checks the upload lane's two buckets (STAGING_BUCKET,
// RECORD_BUCKET): S3 bucket names (BucketName), distinct, set together or
// not at all; required says whether both may be empty.
func (p *Problems) Buckets(stagingVar, staging, recordVar, record string, required bool) (string, string) {
	switch {
	case staging == "" && record == "":
		if required {
			p.Bad(stagingVar, "is required")
			p.Bad(recordVar, "is required")
		}
		return "", ""
	case staging == "" || record == "":
		p.Bad(stagingVar, "and %s are set together or not at all", recordVar)
		return staging, record
	}
	for _, v := range [][2]string{{stagingVar, staging}, {recordVar, record}} {
		if !BucketName(v[1]) {
			p.Bad(v[0], "is not an S3 bucket name (3-63 of a-z 0-9 . -)")
		}
	}
	if staging == record {
		p.Bad(recordVar, "must differ from %s", stagingVar)
	}
	return staging, record
}

// BucketName holds s to S3's general-purpose bucket naming rule (S3 User
// Guide, "Bucket naming rules"): 3 to 63 lowercase letters, digits, dots
// and hyphens, beginning and ending with a letter or digit.
func BucketName(s string) bool {
	if len(s) < 3 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
		if !alnum && (i == 0 || i == len(s)-1 || (c != '.' && c != '-')) {
			return false
		}
	}
	return true
}

// LogLevel checks LOG_LEVEL: DEBUG, INFO, WARN or ERROR in any case;
// empty is INFO.
func (p *Problems) LogLevel(name, v string) slog.Level {
	switch strings.ToUpper(v) {
	case "", "INFO":
		return slog.LevelInfo
	case "DEBUG":
		return slog.LevelDebug
	case "WARN":
		return slog.LevelWarn
	case "ERROR":
		return slog.LevelError
	}
	p.Bad(name, "must be DEBUG, INFO, WARN or ERROR")
	return slog.LevelInfo
}

// RetentionDays checks AUDIT_RETENTION_DAYS: empty (0: the default) or an
// integer from 1 to 36500 days.
func (p *Problems) RetentionDays(name, v string) time.Duration {
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 36500 {
		p.Bad(name, "must be an integer from 1 to 36500")
		return 0
	}
	return time.Duration(n) * 24 * time.Hour
}

// MinKeyBytes is the shortest sealing key accepted (mcp.NewCursorSealer's
// floor).
const MinKeyBytes = 32

// DecodeKey decodes a hex-encoded sealing key of at least MinKeyBytes; the
// cursor key secret's SecretString and LOCAL_CURSOR_KEY_HEX have that form.
// Surrounding white space is ignored. Its error never quotes the key.
func DecodeKey(s string) ([]byte, error) {
	key, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, errors.New("is not hex")
	}
	if len(key) < MinKeyBytes {
		return nil, fmt.Errorf("holds %d bytes, fewer than %d", len(key), MinKeyBytes)
	}
	return key, nil
}

// SecretARN reports whether s has the shape of a Secrets Manager secret
// ARN (IAM User Guide, "Resource types defined by AWS Secrets Manager").
func SecretARN(s string) bool {
	parts := strings.SplitN(s, ":", 7)
	return len(parts) == 7 && parts[0] == "arn" && parts[1] != "" && parts[2] == "secretsmanager" &&
		parts[3] != "" && parts[4] != "" && parts[5] == "secret" && parts[6] != ""
}

// Exit logs one JSON line on standard error naming what failed and, for a
// configuration error, the offending variables ("variables"), then exits
// with status 1: Lambda reports an init error.
func Exit(what string, err error) {
	attrs := []any{"err", err.Error()}
	var ce *Error
	var ve *VarError
	switch {
	case errors.As(err, &ce):
		attrs = append(attrs, "variables", ce.Names())
	case errors.As(err, &ve):
		attrs = append(attrs, "variables", []string{ve.Name})
	}
	slog.New(lambdaio.NewLogHandler(os.Stderr, slog.LevelError)).Error("cold start failed: "+what, attrs...)
	os.Exit(1)
}
