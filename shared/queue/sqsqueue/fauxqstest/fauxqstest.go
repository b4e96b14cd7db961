// Package fauxqstest runs fauxqs, an SQS emulator (npm fauxqs@1.9.2,
// docs/decisions.md "Versions"), for the tests of the SQS engine and of
// anything built on it: a real server speaking SQS's wire protocol, so the
// engine's SDK calls, its error translation and the queue's visibility
// timeout and redrive policy are exercised as on AWS, no mock in between.
//
// Start installs Node 22 and fauxqs into the checkout's .tools/ (package
// nodetest; npm/package.json and npm/package-lock.json beside this file
// pin the whole tree) and starts npm/launch.mjs, which binds fauxqs to
// 127.0.0.1 on a free port and prints its endpoint. The process stops when
// the test ends (its standard input closes) and, on Linux, dies with the
// test binary. Without npm the test is skipped, naming what is missing,
// except when CI=true, where it fails.
//
// fauxqs keeps its own clock, so visibility timeouts pass in real time (in
// whole seconds); its queue state is in memory and per process.
package fauxqstest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/custodymcp/custody/shared/nodetest"
)

// Version is the fauxqs release the lockfile pins.
const Version = "1.9.2"

// Region is the region of the queues tests create (fauxqs takes it from
// the request's SigV4 scope).
const Region = "us-east-1"

// Start-up and shut-down limits.
const (
	startTimeout = 60 * time.Second
	stopGrace    = 10 * time.Second
)

// Server is a running fauxqs.
type Server struct {
	// Endpoint is its base URL, http://127.0.0.1:PORT.
	Endpoint string
}

// npmDir is the npm project beside this file (package.json, lockfile,
// launch.mjs), found from the checkout's root so Start works from any
// package's test.
func npmDir(t testing.TB) string {
	t.Helper()
	root, err := nodetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "shared", "queue", "sqsqueue", "fauxqstest", "npm")
}

// Start installs and starts fauxqs for t, stopping it when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	src := npmDir(t)
	node, dir := nodetest.Require(t, src, "fauxqs")
	if err := nodetest.CopyFile(filepath.Join(src, "launch.mjs"), filepath.Join(dir, "launch.mjs")); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cmd := nodetest.Command(ctx, node, dir, "launch.mjs")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start fauxqs: %v", err)
	}
	done := make(chan struct{})
	var once sync.Once
	stop := func() {
		once.Do(func() {
			stdin.Close() // launch.mjs stops when its input closes
			select {
			case <-done:
			case <-time.After(stopGrace):
				cancel() // kills it
				<-done
			}
			cancel()
		})
	}

	lines := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, r)
		_ = cmd.Wait()
		close(done)
	}()
	t.Cleanup(stop)

	var line string
	select {
	case line = <-lines:
	case <-time.After(startTimeout):
		stop()
		t.Fatalf("fauxqs printed no endpoint within %v; stderr:\n%s", startTimeout, stderr.String())
	}
	var banner struct {
		Endpoint string `json:"endpoint"`
	}
	if err := json.Unmarshal([]byte(line), &banner); err != nil || !strings.HasPrefix(banner.Endpoint, "http://127.0.0.1:") {
		stop()
		t.Fatalf("fauxqs started with %q, want {\"endpoint\":\"http://127.0.0.1:PORT\"}; stderr:\n%s", line, stderr.String())
	}
	return &Server{Endpoint: banner.Endpoint}
}

// Client returns an SQS client of the server: static test credentials
// (fauxqs checks none), Region, and no retries, so a test sees each
// failure.
func (s *Server) Client() *sqs.Client {
	return sqs.New(sqs.Options{
		Region:           Region,
		BaseEndpoint:     aws.String(s.Endpoint),
		Credentials:      credentials.NewStaticCredentialsProvider("test", "test", ""),
		RetryMaxAttempts: 1,
	})
}

// CreateQueue creates a standard queue with the given attributes
// (VisibilityTimeout, RedrivePolicy, …) and returns its URL and ARN.
func (s *Server) CreateQueue(t testing.TB, name string, attributes map[string]string) (url, arn string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := s.Client()
	out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &name, Attributes: attributes})
	if err != nil {
		t.Fatalf("CreateQueue(%s): %v", name, err)
	}
	attrs, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       out.QueueUrl,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	if err != nil {
		t.Fatalf("GetQueueAttributes(%s): %v", name, err)
	}
	return *out.QueueUrl, attrs.Attributes[string(types.QueueAttributeNameQueueArn)]
}

// RedrivePolicy is the RedrivePolicy attribute sending a message received
// maxReceiveCount times to the queue deadLetterARN.
func RedrivePolicy(deadLetterARN string, maxReceiveCount int) string {
	b, _ := json.Marshal(map[string]string{
		"deadLetterTargetArn": deadLetterARN,
		"maxReceiveCount":     fmt.Sprint(maxReceiveCount),
	})
	return string(b)
}

// lockedBuffer collects a process's stderr for failure messages.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
