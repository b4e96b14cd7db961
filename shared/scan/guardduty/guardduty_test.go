package guardduty_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/guardduty"
	"github.com/custodymcp/custody/shared/scan/scantest"
)

const sampleDir = "../../../events/scangate"

// Every GuardDuty sample decodes as aws-lambda-go's EventBridge envelope
// (unknown fields refused, re-encoded byte for byte) and maps to the
// verdict the README's table gives it.
func TestSampleEvents(t *testing.T) {
	const bucket = "custody-staging-111122223333-eu-west-1"
	want := map[string]struct {
		result  guardduty.ScanResult
		verdict scan.Verdict
		err     error
	}{
		"guardduty-no-threats.json": {
			guardduty.ScanResult{Bucket: bucket, Key: "verified/3f9a1c7e5b2d4e6f8a0b1c2d3e4f5a6b", ETag: "9b2cf535f27731c974343645a3985328",
				ScanStatus: "COMPLETED", ResultStatus: guardduty.NoThreatsFound},
			scan.Verdict{Result: scan.Clean, Engine: guardduty.Name}, nil,
		},
		"guardduty-threats-found.json": {
			guardduty.ScanResult{Bucket: bucket, Key: "verified/a1b2c3d4e5f60718293a4b5c6d7e8f90", ETag: "44d88612fea8a8f36de82e1278abb02f",
				ScanStatus: "COMPLETED", ResultStatus: guardduty.ThreatsFound, Threats: []string{"EICAR-Test-File (not a virus)"}},
			scan.Verdict{Result: scan.Infected, Engine: guardduty.Name, Threats: []string{"EICAR-Test-File (not a virus)"}}, nil,
		},
		"guardduty-unsupported.json": {
			guardduty.ScanResult{Bucket: bucket, Key: "verified/0f1e2d3c4b5a69788796a5b4c3d2e1f0", ETag: "c8e1b4a7d0f3e6a9b2c5d8e1f4a7b0c3-4",
				ScanStatus: "SKIPPED", ResultStatus: guardduty.Unsupported},
			scan.Verdict{Result: scan.Failed, Engine: guardduty.Name, Reason: "GuardDuty could not scan the object: UNSUPPORTED"}, scan.ErrLimits,
		},
	}
	files, err := filepath.Glob(filepath.Join(sampleDir, "guardduty-*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no GuardDuty samples in %s (%v)", sampleDir, err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		name := filepath.Base(f)
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("%s has no expected verdict: add it to this test", name)
			}
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			var ev events.CloudWatchEvent
			if err := dec.Decode(&ev); err != nil {
				t.Fatalf("decode: %v", err)
			}
			out, err := json.MarshalIndent(ev, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if got := append(out, '\n'); !bytes.Equal(got, raw) {
				t.Errorf("re-encoded sample differs from the file:\n%s", got)
			}
			r, err := guardduty.ParseEvent(ev)
			if err != nil {
				t.Fatalf("ParseEvent() error = %v", err)
			}
			if diff := cmp.Diff(w.result, r); diff != "" {
				t.Errorf("ParseEvent() (-want +got):\n%s", diff)
			}
			v, err := r.Verdict()
			scantest.Agree(t, v, err)
			if diff := cmp.Diff(w.verdict, v); diff != "" {
				t.Errorf("Verdict() (-want +got):\n%s", diff)
			}
			if w.err != nil && !errors.Is(err, w.err) {
				t.Errorf("Verdict() error = %v, want %v", err, w.err)
			}
		})
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("%s is missing from %s", name, sampleDir)
		}
	}
}

// Every result status GuardDuty documents, as an event's and as a tag's
// value: only NO_THREATS_FOUND is clean, and only after a completed scan.
func TestVerdicts(t *testing.T) {
	tests := []struct {
		name       string
		scanStatus string
		status     string
		threats    []string
		want       scan.Result
		wantErr    error
	}{
		{"NO_THREATS_FOUND after a completed scan is clean", "COMPLETED", guardduty.NoThreatsFound, nil, scan.Clean, nil},
		{"THREATS_FOUND is infected with the threat names", "COMPLETED", guardduty.ThreatsFound, []string{"Trojan.A", "Worm.B"}, scan.Infected, nil},
		{"THREATS_FOUND naming nothing is still infected", "COMPLETED", guardduty.ThreatsFound, nil, scan.Infected, nil},
		{"UNSUPPORTED is failed at the engine's limits", "SKIPPED", guardduty.Unsupported, nil, scan.Failed, scan.ErrLimits},
		{"ACCESS_DENIED is failed", "SKIPPED", guardduty.AccessDenied, nil, scan.Failed, scan.ErrUnavailable},
		{"FAILED is failed", "FAILED", guardduty.Failed, nil, scan.Failed, scan.ErrUnavailable},
		{"an unknown status is failed", "COMPLETED", "PROBABLY_FINE", nil, scan.Failed, scan.ErrUnavailable},
		{"NO_THREATS_FOUND from a skipped scan is failed, not clean", "SKIPPED", guardduty.NoThreatsFound, nil, scan.Failed, scan.ErrUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := guardduty.ScanResult{Bucket: "b", Key: "verified/k", ScanStatus: tc.scanStatus, ResultStatus: tc.status, Threats: tc.threats}
			v, err := r.Verdict()
			scantest.Agree(t, v, err)
			if v.Result != tc.want || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
				t.Errorf("Verdict() = %+v, %v; want %s, %v", v, err, tc.want, tc.wantErr)
			}
			if tc.want == scan.Infected && len(tc.threats) > 0 && !cmp.Equal(v.Threats, tc.threats) {
				t.Errorf("Threats = %v, want %v", v.Threats, tc.threats)
			}
		})
	}
	tags := []struct {
		value   string
		want    scan.Result
		wantErr error
	}{
		{guardduty.NoThreatsFound, scan.Clean, nil},
		{guardduty.ThreatsFound, scan.Infected, nil},
		{guardduty.Unsupported, scan.Failed, scan.ErrLimits},
		{guardduty.AccessDenied, scan.Failed, scan.ErrUnavailable},
		{guardduty.Failed, scan.Failed, scan.ErrUnavailable},
		{"", scan.Failed, scan.ErrUnavailable},
		{"no_threats_found", scan.Failed, scan.ErrUnavailable},
	}
	for _, tc := range tags {
		t.Run("the tag "+tc.value, func(t *testing.T) {
			v, err := guardduty.VerdictOfTag(tc.value)
			scantest.Agree(t, v, err)
			if v.Result != tc.want || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
				t.Errorf("VerdictOfTag(%q) = %+v, %v; want %s, %v", tc.value, v, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestParseEventRefusals(t *testing.T) {
	good := func() events.CloudWatchEvent {
		return events.CloudWatchEvent{
			Version: "0", ID: "id", DetailType: guardduty.DetailType, Source: guardduty.Source,
			AccountID: "111122223333", Time: time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC), Region: "eu-west-1",
			Detail: json.RawMessage(`{"schemaVersion":"1.0","scanStatus":"COMPLETED","resourceType":"S3_OBJECT",` +
				`"s3ObjectDetails":{"bucketName":"b","objectKey":"verified/k","eTag":"e","versionId":"v1","s3Throttled":false},` +
				`"scanResultDetails":{"scanResultStatus":"NO_THREATS_FOUND","threats":null},"statusReasons":["a field added later"]}`),
		}
	}
	if r, err := guardduty.ParseEvent(good()); err != nil || r.VersionID != "v1" {
		t.Fatalf("ParseEvent(good) = %+v, %v; want version v1, no error (fields added later ignored)", r, err)
	}
	tests := []struct {
		name   string
		change func(*events.CloudWatchEvent)
		want   error
	}{
		{"another source", func(e *events.CloudWatchEvent) { e.Source = "aws.s3" }, guardduty.ErrNotScanResult},
		{"another detail-type", func(e *events.CloudWatchEvent) { e.DetailType = "GuardDuty Finding" }, guardduty.ErrNotScanResult},
		{"another resource type", func(e *events.CloudWatchEvent) {
			e.Detail = json.RawMessage(bytes.Replace(e.Detail, []byte(`"S3_OBJECT"`), []byte(`"EBS_VOLUME"`), 1))
		}, guardduty.ErrNotScanResult},
		{"a detail that is not JSON", func(e *events.CloudWatchEvent) { e.Detail = json.RawMessage(`"nope"`) }, guardduty.ErrMalformed},
		{"no object key", func(e *events.CloudWatchEvent) {
			e.Detail = json.RawMessage(bytes.Replace(e.Detail, []byte(`"verified/k"`), []byte(`""`), 1))
		}, guardduty.ErrMalformed},
		{"no result status", func(e *events.CloudWatchEvent) {
			e.Detail = json.RawMessage(bytes.Replace(e.Detail, []byte(`"NO_THREATS_FOUND"`), []byte(`""`), 1))
		}, guardduty.ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			ev := good()
			tc.change(&ev)
			if _, err := guardduty.ParseEvent(ev); !errors.Is(err, tc.want) {
				t.Errorf("ParseEvent() error = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestEngine(t *testing.T) {
	if _, err := guardduty.New(""); err == nil {
		t.Error("New(\"\") = nil error, want one: an unconfigured plan is the lane OFF")
	}
	e, err := guardduty.New("custody-staging")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if p := e.Posture(ctx); p != scan.Armed {
		t.Errorf("Posture() = %s, want ARMED", p)
	}
	if got := e.MaxBytes(); got != 1<<30 {
		t.Errorf("MaxBytes() = %d, want 1 GiB", got)
	}
	b := scan.EICAR()
	v, err := e.Scan(ctx, scan.Bytes(b), int64(len(b)))
	scantest.Agree(t, v, err)
	if v.Result != scan.Failed || !errors.Is(err, scan.ErrEventDriven) {
		t.Errorf("Scan() = %+v, %v; want failed wrapping ErrEventDriven", v, err)
	}
}
