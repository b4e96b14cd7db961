package gate_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/s3local"
	"github.com/custodymcp/custody/shared/scan/gate"
	"github.com/custodymcp/custody/shared/scan/guardduty"
	"github.com/custodymcp/custody/shared/uploads"
)

// scanResult is the sample GuardDuty scan result event of events/scangate
// (guardduty-<name>.json), decoded from JSON, about object key of bucket
// with etag (unquoted; "" keeps the sample's).
func scanResult(t *testing.T, name, bucket, key, etag string) events.CloudWatchEvent {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "events", "scangate", "guardduty-"+name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.CloudWatchEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(ev.Detail, &d); err != nil {
		t.Fatal(err)
	}
	obj := d["s3ObjectDetails"].(map[string]any)
	obj["bucketName"], obj["objectKey"] = bucket, key
	if etag != "" {
		obj["eTag"] = etag
	}
	if ev.Detail, err = json.Marshal(d); err != nil {
		t.Fatal(err)
	}
	return ev
}

// guardEnv is the gate with GuardDuty as its engine.
func guardEnv(t *testing.T) *env {
	t.Helper()
	eng, err := guardduty.New(s3local.Buckets.Staging)
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, envOptions{scanner: eng})
}

// etagOf is the verified object's ETag as GuardDuty reports it (unquoted).
func (e *env) etagOf(t *testing.T, u uploads.Upload) string {
	t.Helper()
	info, err := e.blob.Unwrap().HeadObject(context.Background(), blob.Verified(u.Object))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Trim(info.ETag, `"`)
}

// The deployed engine: GuardDuty's result decides; a second result for an
// upload already clean (a late or contradicting event) is ignored; S3
// events give no verdict while GuardDuty is the engine.
func TestGuardDutyResultsDecideOnce(t *testing.T) {
	ctx := context.Background()
	t.Run("NO_THREATS_FOUND is clean, and a later result for the clean upload is ignored", func(t *testing.T) {
		e := guardEnv(t)
		u := e.deposit(t, "memo.txt", memo)
		if out, err := e.created(t, u); err != nil || out.Action != gate.Ignored {
			t.Errorf("an S3 event with GuardDuty the engine = %+v, %v; want ignored", out, err)
		}
		key, etag := blob.Verified(u.Object).Key, e.etagOf(t, u)
		out, err := e.gate.HandleScanResult(ctx, scanResult(t, "no-threats", s3local.Buckets.Staging, key, etag))
		if err != nil || out.Action != gate.Decided || out.State != uploads.StateClean {
			t.Fatalf("NO_THREATS_FOUND = %+v, %v; want decided clean", out, err)
		}
		out, err = e.gate.HandleScanResult(ctx, scanResult(t, "threats-found", s3local.Buckets.Staging, key, etag))
		if err != nil || out.Action != gate.Ignored {
			t.Errorf("THREATS_FOUND for the clean upload = %+v, %v; want ignored", out, err)
		}
		if got := e.upload(t, u.ID); got.State != uploads.StateClean || got.ScanEngine != guardduty.Name || e.intake.n.Load() != 1 {
			t.Errorf("upload %s by %s, %d intakes; want clean by guardduty, one intake", got.State, got.ScanEngine, e.intake.n.Load())
		}
	})
	t.Run("THREATS_FOUND is infected with GuardDuty's threat names and quarantined", func(t *testing.T) {
		e := guardEnv(t)
		u := e.deposit(t, "brief.pdf", memo)
		out, err := e.gate.HandleScanResult(ctx, scanResult(t, "threats-found", s3local.Buckets.Staging, blob.Verified(u.Object).Key, e.etagOf(t, u)))
		if err != nil || out.State != uploads.StateInfected {
			t.Fatalf("THREATS_FOUND = %+v, %v; want infected", out, err)
		}
		if got := e.upload(t, u.ID); !equalStrings(got.Threats, []string{"EICAR-Test-File (not a virus)"}) {
			t.Errorf("threats = %v, want GuardDuty's name", got.Threats)
		}
		if e.exists(t, blob.Verified(u.Object)) || !e.exists(t, blob.Quarantined(u.Object)) {
			t.Error("the object is not in quarantine/ alone")
		}
	})
	t.Run("UNSUPPORTED is scan_failed", func(t *testing.T) {
		e := guardEnv(t)
		u := e.deposit(t, "archive.7z", memo)
		out, err := e.gate.HandleScanResult(ctx, scanResult(t, "unsupported", s3local.Buckets.Staging, blob.Verified(u.Object).Key, e.etagOf(t, u)))
		if err != nil || out.State != uploads.StateScanFailed || out.Why != "GuardDuty could not scan the object: UNSUPPORTED" {
			t.Errorf("UNSUPPORTED = %+v, %v; want scan_failed", out, err)
		}
	})
	t.Run("a result for another ETag than the verified object's is scan_failed, object changed", func(t *testing.T) {
		e := guardEnv(t)
		u := e.deposit(t, "memo.txt", memo)
		out, err := e.gate.HandleScanResult(ctx, scanResult(t, "no-threats", s3local.Buckets.Staging, blob.Verified(u.Object).Key, "0123456789abcdef0123456789abcdef"))
		if err != nil || out.State != uploads.StateScanFailed || out.Why != gate.ReasonObjectChanged {
			t.Errorf("a result for another ETag = %+v, %v; want scan_failed, object changed", out, err)
		}
	})
	t.Run("results for another bucket, another prefix or while GuardDuty is not the engine are ignored", func(t *testing.T) {
		e := guardEnv(t)
		u := e.deposit(t, "memo.txt", memo)
		etag := e.etagOf(t, u)
		for _, ev := range []events.CloudWatchEvent{
			scanResult(t, "no-threats", "somebody-elses-bucket", blob.Verified(u.Object).Key, etag),
			scanResult(t, "no-threats", s3local.Buckets.Staging, blob.Incoming(u.Object).Key, etag),
			scanResult(t, "no-threats", s3local.Buckets.Staging, blob.Quarantined(u.Object).Key, etag),
		} {
			if out, err := e.gate.HandleScanResult(ctx, ev); err != nil || out.Action != gate.Ignored {
				t.Errorf("HandleScanResult = %+v, %v; want ignored", out, err)
			}
		}
		other := newEnv(t, envOptions{}) // the signature engine
		v := other.deposit(t, "memo.txt", memo)
		ev := scanResult(t, "no-threats", s3local.Buckets.Staging, blob.Verified(v.Object).Key, other.etagOf(t, v))
		if out, err := other.gate.HandleScanResult(ctx, ev); err != nil || out.Action != gate.Ignored {
			t.Errorf("a GuardDuty result at a signature gate = %+v, %v; want ignored", out, err)
		}
		if got := e.upload(t, u.ID); got.State != uploads.StateScanPending {
			t.Errorf("state = %s, want scan_pending", got.State)
		}
	})
}
