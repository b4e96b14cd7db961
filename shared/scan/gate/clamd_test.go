package gate_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/blobtest"
	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/clamd"
	"github.com/custodymcp/custody/shared/scan/clamdtest"
	"github.com/custodymcp/custody/shared/scan/gate"
	"github.com/custodymcp/custody/shared/scan/scantest"
	"github.com/custodymcp/custody/shared/uploads"
)

// The gate over a real clamd (clamdtest: a private configuration and
// signature database, a free loopback port; installed by
// scripts/ci/install-clamav.sh, skipped locally when missing, failing
// when CI=true). Retries are quick; everything else is the engine's
// default.
var fastClamd = clamd.Options{Backoff: 10 * time.Millisecond}

func TestClamdVerdictsAreByContentNeverByName(t *testing.T) {
	srv := clamdtest.Start(t, clamdtest.Config{})
	e := newEnv(t, envOptions{scanner: srv.Engine(t, fastClamd)})
	bad, good := e.deposit(t, "brief.pdf", scan.EICAR()), e.deposit(t, "eicar.com", memo)
	tests := []struct {
		name    string
		u       uploads.Upload
		state   uploads.State
		threats []string
	}{
		{"the EICAR file named brief.pdf is infected", bad, uploads.StateInfected, []string{clamdtest.EICARThreat}},
		{"a clean file named eicar.com is clean", good, uploads.StateClean, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if out, err := e.created(t, tc.u); err != nil || out.Action != gate.Decided {
				t.Fatalf("the event = %+v, %v; want decided", out, err)
			}
			got := e.upload(t, tc.u.ID)
			if got.State != tc.state || got.ScanEngine != clamd.Name || !equalStrings(got.Threats, tc.threats) {
				t.Errorf("verdict = %s by %s, threats %v; want %s by clamd, threats %v", got.State, got.ScanEngine, got.Threats, tc.state, tc.threats)
			}
		})
	}
	if e.exists(t, blob.Verified(bad.Object)) || !e.exists(t, blob.Quarantined(bad.Object)) {
		t.Error("the infected object is not in quarantine/ alone")
	}
}

// clamd killed while the object streams to it: the attempt breaks, the
// retries find nothing answering PING, and the verdict is scan_failed,
// never clean.
func TestClamdKilledMidStreamIsScanFailed(t *testing.T) {
	srv := clamdtest.Start(t, clamdtest.Config{})
	e := newEnv(t, envOptions{scanner: srv.Engine(t, fastClamd)})
	u := e.deposit(t, "exhibits.zip", scantest.Noise(8<<20, 7))
	e.blob.Add(blobtest.Rule{Op: blobtest.OpGetObject, Ref: blobtest.Prefix(blob.Staging, blob.PrefixVerified), Nth: 1,
		StreamHookAfter: 1 << 20, StreamHook: srv.Kill})
	out, err := e.created(t, u)
	if err != nil || out.State != uploads.StateScanFailed {
		t.Fatalf("verdict = %+v, %v; want scan_failed", out, err)
	}
	if !srv.Exited() {
		t.Error("clamd was not killed: the stream never reached the hook")
	}
	if p := e.gate.Posture(context.Background()); p != scan.Broken {
		t.Errorf("Posture() = %s after the kill, want BROKEN", p)
	}
}

// A file over a small-limit clamd's MaxFileSize, with AlertExceedsMax yes,
// is answered Heuristics.Limits.Exceeded.MaxFileSize: scan_failed, not
// infected, the posture still ARMED (the limit is the object's).
func TestAFileOverClamdsMaxFileSizeIsScanFailedNotInfected(t *testing.T) {
	srv := clamdtest.Start(t, clamdtest.Config{MaxFileSize: "1M"})
	e := newEnv(t, envOptions{scanner: srv.Engine(t, clamd.Options{Max: 64 << 20, Backoff: 10 * time.Millisecond})})
	u := e.deposit(t, "production.bin", scantest.Noise(2<<20, 9))
	out, err := e.created(t, u)
	if err != nil || out.State != uploads.StateScanFailed || out.Why != "engine limit exceeded: Heuristics.Limits.Exceeded.MaxFileSize" {
		t.Errorf("verdict = %+v, %v; want scan_failed at MaxFileSize", out, err)
	}
	if p := e.gate.Posture(context.Background()); p != scan.Armed {
		t.Errorf("Posture() = %s, want ARMED", p)
	}
}

// A clamd that cannot detect EICAR is BROKEN: with an empty signature file
// it refuses to start (PING fails), with a database lacking EICAR it
// answers OK to everything (the self-test fails). Either way uploads are
// accepted and every verdict is scan_failed, never clean.
func TestAClamdWithoutTheEICARSignatureIsBrokenAndNeverClean(t *testing.T) {
	other := []byte("not the test file")
	sum := md5.Sum(other)
	for _, tc := range []struct {
		name       string
		signatures []string
	}{
		{"an empty signature file", []string{}},
		{"a signature file without EICAR", []string{hex.EncodeToString(sum[:]) + ":17:Custody.Test.Other"}},
	} {
		t.Run(tc.name+" is BROKEN, its verdicts scan_failed", func(t *testing.T) {
			srv, startErr := clamdtest.TryStart(t, clamdtest.Config{Signatures: tc.signatures})
			if startErr != nil {
				t.Logf("clamd did not start: %v", startErr)
			}
			e := newEnv(t, envOptions{scanner: srv.Engine(t, fastClamd)})
			if p := e.gate.Posture(context.Background()); p != scan.Broken {
				t.Errorf("Posture() = %s, want BROKEN", p)
			}
			for _, body := range [][]byte{memo, scan.EICAR()} {
				u := e.deposit(t, "file.bin", body)
				if out, err := e.created(t, u); err != nil || out.State != uploads.StateScanFailed {
					t.Errorf("verdict = %+v, %v; want scan_failed", out, err)
				}
			}
		})
	}
}

// clamd stopped: the posture turns BROKEN, uploads are still accepted, and
// their verdicts are scan_failed.
func TestAStoppedClamdIsBrokenUploadsAreAcceptedVerdictsFail(t *testing.T) {
	srv := clamdtest.Start(t, clamdtest.Config{})
	e := newEnv(t, envOptions{scanner: srv.Engine(t, fastClamd)})
	if p := e.gate.Posture(context.Background()); p != scan.Armed {
		t.Fatalf("Posture() = %s, want ARMED", p)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	u := e.deposit(t, "memo.txt", memo) // accepted: begin and complete succeed
	if out, err := e.created(t, u); err != nil || out.State != uploads.StateScanFailed {
		t.Errorf("verdict = %+v, %v; want scan_failed", out, err)
	}
	if p := e.gate.Posture(context.Background()); p != scan.Broken {
		t.Errorf("Posture() = %s, want BROKEN", p)
	}
	u2 := e.deposit(t, "memo 2.txt", memo) // still accepted while BROKEN
	if out, err := e.created(t, u2); err != nil || out.State != uploads.StateScanFailed {
		t.Errorf("verdict = %+v, %v; want scan_failed", out, err)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
