package main

import (
	"context"
	"errors"
	"testing"

	"github.com/custodymcp/custody/shared/blob/s3local"
	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/guardduty"
)

// SCANNER_ENGINE decides the posture the lane reports and obeys: guardduty
// is ARMED with the lane's 1 GiB cap (its verdicts go to the scangate
// function); off or empty is OFF; signature only in emulator runs; an
// engine without the lane's buckets is refused.
func TestScannerEngineSetsTheLanesPosture(t *testing.T) {
	emu := map[string]string{"DYNAMODB_ENDPOINT": "http://127.0.0.1:8000", "LOCAL_CURSOR_KEY_HEX": testCursorKeyHex,
		"CURSOR_KEY_SECRET_ARN": "", "PUBLIC_BASE_URL": "http://127.0.0.1", "S3_ENDPOINT": "http://127.0.0.1:9000",
		"STAGING_BUCKET": s3local.Buckets.Staging, "RECORD_BUCKET": s3local.Buckets.Record}
	tests := []struct {
		name, engine string
		want         scan.Posture
		max          int64
	}{
		{"guardduty is ARMED with the lane's 1 GiB", "guardduty", scan.Armed, guardduty.MaxBytes},
		{"off is OFF", "off", scan.Off, 0},
		{"empty is OFF", "", scan.Off, 0},
		{"signature (emulator runs) is ARMED", "signature", scan.Armed, 1 << 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := LoadConfig(func(k string) string {
				if k == "SCANNER_ENGINE" {
					return tc.engine
				}
				if v, ok := emu[k]; ok {
					return v
				}
				return awsEnv()[k]
			})
			if err != nil {
				t.Fatal(err)
			}
			lane, err := newLane(testAWSConfig(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if p := scan.PostureOf(context.Background(), lane.Scanner); p != tc.want {
				t.Errorf("posture = %s, want %s", p, tc.want)
			}
			if lane.Scanner != nil && lane.Scanner.MaxBytes() != tc.max {
				t.Errorf("MaxBytes = %d, want %d", lane.Scanner.MaxBytes(), tc.max)
			}
		})
	}
	for _, tc := range []struct {
		name string
		env  func(string) string
	}{
		{"signature on AWS", with(awsEnv(), "SCANNER_ENGINE", "signature", "STAGING_BUCKET", "custody-staging", "RECORD_BUCKET", "custody-record", "UPLOAD_SIGNER_ROLE_ARN", testRoleARN)},
		{"guardduty without the buckets", with(awsEnv(), "SCANNER_ENGINE", "guardduty")},
		{"an unknown engine", with(awsEnv(), "SCANNER_ENGINE", "clamd", "STAGING_BUCKET", "custody-staging", "RECORD_BUCKET", "custody-record", "UPLOAD_SIGNER_ROLE_ARN", testRoleARN)},
	} {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			_, err := LoadConfig(tc.env)
			var ce *ConfigError
			if !errors.As(err, &ce) || len(ce.Names()) != 1 || ce.Names()[0] != "SCANNER_ENGINE" {
				t.Errorf("LoadConfig = %v, want SCANNER_ENGINE named alone", err)
			}
		})
	}
}
