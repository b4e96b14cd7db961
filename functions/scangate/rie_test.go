package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/s3local"
	"github.com/custodymcp/custody/shared/lambdaio/rietest"
	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/uploads"
)

// The bootstrap under the Lambda Runtime Interface Emulator, as Lambda
// runs it (scangate's template: 5 min, 2048 MB), against the DynamoDB
// emulator and the local S3 server over loopback: an S3 sample judged by
// the signature engine, and a GuardDuty sample with GuardDuty the engine,
// each naming a real upload; one outcome line per invocation carrying the
// Lambda request id. (What the RIE cannot show: Lambda's asynchronous
// retries and the on-failure queue; the template test holds those.)
func TestRuntimeEmulatorJudgesAnS3AndAGuardDutySample(t *testing.T) {
	rie, boot := rietest.Binary(t), rietest.Build(t, scangatePkg)
	creds := s3local.TestCredentials
	for _, tc := range []struct {
		engine, sample string
		body           []byte
		want           uploads.State
	}{
		{EngineSignature, "s3-object-created.json", memo, uploads.StateInReview},
		{EngineSignature, "s3-escaped-key.json", scan.EICAR(), uploads.StateInfected},
		{EngineGuardDuty, "guardduty-threats-found.json", memo, uploads.StateInfected},
		{EngineGuardDuty, "guardduty-no-threats.json", memo, uploads.StateInReview},
	} {
		t.Run(tc.sample+" with the "+tc.engine+" engine", func(t *testing.T) {
			emu := startEmulators(t, tc.engine)
			env := emu.env(tc.engine)
			env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"] = creds.AccessKeyID, creds.SecretAccessKey
			p := rietest.Start(t, rie, boot, "ScanGateFunction", 5*time.Minute, env)
			u := emu.deposit(t, "memo.txt", tc.body)
			etag := ""
			if tc.engine == EngineGuardDuty {
				etag = emu.etag(t, u)
			}
			answer := p.Invoke(t, sample(t, tc.sample, sampleCases[tc.sample].sampleID, u, etag), "rie-"+tc.sample)
			if strings.TrimSpace(string(answer)) != "null" {
				t.Fatalf("the function answered %s, want null (no error)\nRIE output:\n%s", answer, p.Output())
			}
			if got := emu.upload(t, u.ID); got.State != tc.want {
				t.Errorf("upload = %s, want %s\nRIE output:\n%s", got.State, tc.want, p.Output())
			}
			if tc.want == uploads.StateInfected {
				if _, err := emu.Blob.HeadObject(context.Background(), blob.Quarantined(u.Object)); err != nil {
					t.Errorf("the infected object is not in quarantine/: %v", err)
				}
			}
			p.Stop()
			lines := logLines(t, p.Output(), "invocation")
			if len(lines) != 1 || lines[0]["requestId"] != "rie-"+tc.sample {
				t.Errorf("invocation lines = %v, want one with the request id\nRIE output:\n%s", lines, p.Output())
			}
			// A clean upload's intake (issue 18) logs one line of its own.
			intakes := len(logLines(t, p.Output(), "intake"))
			if want := map[bool]int{true: 1}[tc.want == uploads.StateInReview]; intakes != want {
				t.Errorf("%d intake lines, want %d\nRIE output:\n%s", intakes, want, p.Output())
			}
			if other := len(logLines(t, p.Output(), "")) - len(lines) - intakes - len(logLines(t, p.Output(), "cold start")); other != 0 {
				t.Errorf("%d log lines at INFO besides the cold start, the intake and the outcome line\nRIE output:\n%s", other, p.Output())
			}
		})
	}
}

// A handler error is the function's error, for Lambda's retries: here the
// staging bucket is unreachable while the event names a real upload.
func TestRuntimeEmulatorAnswersAFunctionErrorWhenS3IsUnreachable(t *testing.T) {
	rie, boot := rietest.Binary(t), rietest.Build(t, scangatePkg)
	emu := startEmulators(t, EngineSignature)
	env := emu.env(EngineSignature)
	env["S3_ENDPOINT"] = "http://127.0.0.1:1" // nothing listens there
	p := rietest.Start(t, rie, boot, "ScanGateFunction", 5*time.Minute, env)
	u := emu.deposit(t, "memo.txt", memo)
	answer := p.Invoke(t, sample(t, "s3-object-created.json", sampleCases["s3-object-created.json"].sampleID, u, ""), "rie-unreachable")
	var fnErr struct {
		ErrorMessage string `json:"errorMessage"`
		ErrorType    string `json:"errorType"`
	}
	if err := json.Unmarshal(answer, &fnErr); err != nil || fnErr.ErrorMessage == "" {
		t.Fatalf("the function answered %s, want a function error", answer)
	}
	if got := emu.upload(t, u.ID); got.State != uploads.StateScanPending {
		t.Errorf("upload = %s, want scan_pending (nothing decided)", got.State)
	}
	if strings.Contains(fnErr.ErrorMessage, "s3local") || strings.Contains(fnErr.ErrorMessage, creds()) {
		t.Errorf("the error names credentials: %s", fnErr.ErrorMessage)
	}
}

func creds() string { return s3local.TestCredentials.SecretAccessKey }

// The bootstrap's size as make build-ScanGateFunction ships it
// (linux/arm64, stripped), logged, never asserted.
func TestBootstrapSize(t *testing.T) {
	if os.Getenv(rietest.SkipVar) != "" {
		t.Skipf("%s is set", rietest.SkipVar)
	}
	arm := filepath.Join(t.TempDir(), "bootstrap")
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", arm, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build for linux/arm64: %v\n%s", err, out)
	}
	fi, err := os.Stat(arm)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bootstrap size: %.1f MiB for linux/arm64, stripped (what make build-ScanGateFunction ships)", float64(fi.Size())/(1<<20))
}

// scangatePkg is the function's package, as rietest.Build builds it.
const scangatePkg = "github.com/custodymcp/custody/functions/scangate"

func TestMain(m *testing.M) {
	code := m.Run()
	rietest.Cleanup()
	os.Exit(code)
}

// logLines returns the function's JSON log lines whose message is msg
// (every one for "").
func logLines(t *testing.T, out, msg string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && (msg == "" || m["message"] == msg) {
			lines = append(lines, m)
		}
	}
	return lines
}
