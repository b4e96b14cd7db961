package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/blobtest"
	"github.com/custodymcp/custody/shared/blob/s3local"
	"github.com/custodymcp/custody/shared/lambdaio/s3event"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/gate"
	"github.com/custodymcp/custody/shared/scan/scantest"
	"github.com/custodymcp/custody/shared/scan/signature"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/storetest"
	"github.com/custodymcp/custody/shared/uploads"
)

// memo is a clean file.
var memo = []byte("Minutes of the 3 March hearing: the motion to compel is set for argument.\n")

// By content, never by name: the EICAR file named brief.pdf is infected
// and quarantined — copied to quarantine/, tagged, gone from verified/,
// listed as held, never in the record bucket — and a clean file named
// eicar.com is clean and goes on to intake. A filename check would pass
// the first and fail the second.
func TestVerdictsAreByContentNeverByName(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	bad := e.deposit(t, "brief.pdf", scan.EICAR())
	good := e.deposit(t, "eicar.com", memo)

	for _, u := range []uploads.Upload{bad, good} {
		out, err := e.created(t, u)
		if err != nil || out.Action != gate.Decided {
			t.Fatalf("the event of %s (%s) = %+v, %v; want decided", u.ID, u.Filename, out, err)
		}
	}

	t.Run("the EICAR file named brief.pdf is infected and quarantined", func(t *testing.T) {
		got := e.upload(t, bad.ID)
		want := struct {
			State   uploads.State
			Engine  string
			Threats []string
			Size    int64
		}{uploads.StateInfected, signature.Name, []string{scan.EICARThreat}, int64(scan.EICARLen)}
		if diff := cmp.Diff(want, struct {
			State   uploads.State
			Engine  string
			Threats []string
			Size    int64
		}{got.State, got.ScanEngine, got.Threats, got.ScannedSize}); diff != "" {
			t.Errorf("verdict (-want +got):\n%s", diff)
		}
		if got.ScannedETag == "" || !got.ScannedAt.Equal(epoch) {
			t.Errorf("scanned ETag %q at %v, want the object's ETag at %v", got.ScannedETag, got.ScannedAt, epoch)
		}
		if e.exists(t, blob.Verified(bad.Object)) || !e.exists(t, blob.Quarantined(bad.Object)) || e.exists(t, blob.Stored(bad.Object)) {
			t.Errorf("verified/ %v, quarantine/ %v, record %v; want only quarantine/",
				e.exists(t, blob.Verified(bad.Object)), e.exists(t, blob.Quarantined(bad.Object)), e.exists(t, blob.Stored(bad.Object)))
		}
		tags, err := e.blob.Unwrap().GetObjectTagging(ctx, blob.Quarantined(bad.Object))
		if err != nil {
			t.Fatal(err)
		}
		if tags[gate.TagVerdict] != "infected" || tags[gate.TagUpload] != bad.ID {
			t.Errorf("quarantine tags = %v, want the verdict and the upload", tags)
		}
		held, err := uploads.ListHeld(ctx, e.store, seed.DemoTenant, uploads.StateInfected)
		if err != nil {
			t.Fatal(err)
		}
		if len(held) != 1 || held[0].UploadID != bad.ID || held[0].Filename != "brief.pdf" {
			t.Errorf("ListHeld(infected) = %+v, want brief.pdf's upload alone", held)
		}
	})
	t.Run("a clean file named eicar.com is clean and goes on to intake", func(t *testing.T) {
		got := e.upload(t, good.ID)
		if got.State != uploads.StateClean || got.ScanEngine != signature.Name || got.Threats != nil || got.ScannedSize != int64(len(memo)) {
			t.Errorf("verdict = %s by %q, threats %v, size %d; want clean by signature of %d bytes",
				got.State, got.ScanEngine, got.Threats, got.ScannedSize, len(memo))
		}
		if !e.exists(t, blob.Verified(good.Object)) {
			t.Error("the clean object left verified/ (intake copies it to the record, issue 18)")
		}
		if n := e.intake.n.Load(); n != 1 {
			t.Errorf("intake ran %d times, want once (for the clean upload alone)", n)
		}
	})
}

// S3 delivers at least once: the same event twice, and sixteen copies of
// it racing, each make one transition and one intake, on both engines.
func TestDuplicateAndRacingEventsDecideOnce(t *testing.T) {
	for _, dynamo := range []bool{false, true} {
		name := map[bool]string{false: "file", true: "dynamodb"}[dynamo]
		t.Run(name+": one event delivered twice makes one transition and one intake", func(t *testing.T) {
			e := newEnv(t, envOptions{dynamo: dynamo})
			u := e.deposit(t, "memo.txt", memo)
			var actions []gate.Action
			for range 2 {
				out, err := e.created(t, u)
				if err != nil {
					t.Fatal(err)
				}
				actions = append(actions, out.Action)
			}
			if want := []gate.Action{gate.Decided, gate.Ignored}; !cmp.Equal(actions, want) {
				t.Errorf("actions = %v, want %v", actions, want)
			}
			if got := e.upload(t, u.ID); got.State != uploads.StateClean || e.intake.n.Load() != 1 {
				t.Errorf("state %s, %d intakes; want clean, 1", got.State, e.intake.n.Load())
			}
		})
		t.Run(name+": sixteen copies racing make one transition and one intake", func(t *testing.T) {
			e := newEnv(t, envOptions{dynamo: dynamo})
			u := e.deposit(t, "memo.txt", memo)
			ev := s3Event(t, s3local.Buckets.Staging, blob.Verified(u.Object).Key)
			var (
				wg      sync.WaitGroup
				mu      sync.Mutex
				decided int
			)
			for range 16 {
				wg.Go(func() {
					out, err := e.gate.HandleS3(context.Background(), ev)
					if err != nil {
						t.Errorf("HandleS3 = %v", err)
						return
					}
					mu.Lock()
					defer mu.Unlock()
					if out[0].Action == gate.Decided {
						decided++
					}
				})
			}
			wg.Wait()
			if decided != 1 || e.intake.n.Load() != 1 {
				t.Errorf("%d deliveries decided, %d intakes; want 1 and 1", decided, e.intake.n.Load())
			}
		})
	}
}

// Only the staging bucket's verified/ objects in the lane's alphabet are
// the gate's: events for incoming/, quarantine/, the record bucket,
// another bucket, a key outside the alphabet and a non-creation record are
// ignored and nothing is scanned.
func TestEventsForOtherObjectsAreIgnoredAndNothingIsScanned(t *testing.T) {
	sc := scantest.NewFaulty(signature.New(), signature.Name)
	e := newEnv(t, envOptions{scanner: sc})
	u := e.deposit(t, "memo.txt", memo)
	id := string(u.Object)
	tests := []struct {
		name, bucket, key string
	}{
		{"an incoming/ key", s3local.Buckets.Staging, "incoming/" + id},
		{"a quarantine/ key", s3local.Buckets.Staging, "quarantine/" + id},
		{"the record bucket", s3local.Buckets.Record, "obj/" + id},
		{"another bucket", "somebody-elses-bucket", "verified/" + id},
		{"a key with a space (a '+' in the event)", s3local.Buckets.Staging, "verified/" + id + " x"},
		{"a key with a plus (a '%2B' in the event)", s3local.Buckets.Staging, "verified/" + id[:31] + "+"},
		{"an upper-case id", s3local.Buckets.Staging, "verified/" + fmt.Sprintf("%X", id)},
		{"a key under verified/ with a deeper path", s3local.Buckets.Staging, "verified/" + id + "/x"},
	}
	for _, tc := range tests {
		t.Run(tc.name+" is ignored", func(t *testing.T) {
			out, err := e.gate.HandleS3(context.Background(), s3Event(t, tc.bucket, tc.key))
			if err != nil || len(out) != 1 || out[0].Action != gate.Ignored {
				t.Errorf("HandleS3 = %+v, %v; want one ignored", out, err)
			}
		})
	}
	t.Run("a removal record is ignored", func(t *testing.T) {
		ev := s3Event(t, s3local.Buckets.Staging, blob.Verified(u.Object).Key)
		ev.Records[0].EventName = "ObjectRemoved:Delete"
		out, err := e.gate.HandleS3(context.Background(), ev)
		if err != nil || len(out) != 1 || out[0].Action != gate.Ignored {
			t.Errorf("HandleS3 = %+v, %v; want one ignored", out, err)
		}
	})
	if n := sc.Scans(); n != 0 {
		t.Errorf("%d scans, want none", n)
	}
	if got := e.upload(t, u.ID); got.State != uploads.StateScanPending {
		t.Errorf("state = %s, want scan_pending", got.State)
	}
}

// What is scanned must be the verified object: a verified/ object of
// another size, or other bytes of the same size, is scan_failed "object
// changed" — never clean.
func TestAnObjectThatIsNotTheVerifiedOneIsScanFailedObjectChanged(t *testing.T) {
	tests := []struct {
		name string
		body []byte
	}{
		{"another size", append(append([]byte{}, memo...), '!')},
		{"other bytes of the same size", []byte(string(memo[:len(memo)-2]) + "?\n")},
	}
	for _, tc := range tests {
		t.Run("an object of "+tc.name+" is scan_failed", func(t *testing.T) {
			e := newEnv(t, envOptions{})
			u := e.deposit(t, "memo.txt", memo)
			ctx := context.Background()
			ref := blob.Verified(u.Object)
			if err := e.blob.Unwrap().DeleteObject(ctx, ref); err != nil {
				t.Fatal(err)
			}
			if err := e.blob.Unwrap().PutObject(ctx, ref, bytesReader(tc.body), blob.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			out, err := e.created(t, u)
			if err != nil || out.State != uploads.StateScanFailed || out.Why != gate.ReasonObjectChanged {
				t.Errorf("outcome = %+v, %v; want scan_failed %q", out, err, gate.ReasonObjectChanged)
			}
			if e.intake.n.Load() != 0 {
				t.Error("intake ran for an object that was not the verified one")
			}
		})
	}
}

// What is not the engine's or the object's fault commits nothing and is
// returned for Lambda to retry; the retry decides.
func TestFailuresOutsideTheEngineAreRetriedNeverDecided(t *testing.T) {
	tests := []struct {
		name  string
		fault func(e *env)
	}{
		{"the store failing the verdict's write", func(e *env) {
			e.store.Add(storetest.Rule{Method: storetest.MethodUpdate, Key: storetest.Prefix("UPLOAD#", ""), Nth: 1, Err: store.ErrUnavailable})
		}},
		{"the store failing the upload's read", func(e *env) {
			e.store.Add(storetest.Rule{Method: storetest.MethodGet, Key: storetest.Prefix("UPLOAD#", ""), Nth: 1, Err: store.ErrUnavailable})
		}},
		{"S3 failing the object's HEAD", func(e *env) {
			e.blob.Add(blobtest.Rule{Op: blobtest.OpHeadObject, Nth: 1, Err: blob.ErrUnavailable})
		}},
		{"S3 breaking the object's stream", func(e *env) {
			e.blob.Add(blobtest.Rule{Op: blobtest.OpGetObject, Nth: 1, CutAfter: 10})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name+" is an error, and the retry decides", func(t *testing.T) {
			e := newEnv(t, envOptions{})
			u := e.deposit(t, "memo.txt", memo)
			tc.fault(e)
			if _, err := e.created(t, u); err == nil {
				t.Fatal("the first delivery succeeded, want an error for a retry")
			}
			if got := e.upload(t, u.ID); got.State != uploads.StateScanPending {
				t.Fatalf("state after the failure = %s, want scan_pending", got.State)
			}
			out, err := e.created(t, u)
			if err != nil || out.Action != gate.Decided || out.State != uploads.StateClean {
				t.Errorf("the retry = %+v, %v; want decided clean", out, err)
			}
		})
	}
}

// Intake that fails releases its claim and returns the error; the
// redelivered event claims it and runs intake again, and a third delivery
// finds the claim live and does nothing.
func TestAFailedIntakeIsRunAgainByTheRedelivery(t *testing.T) {
	var fail = true
	e := newEnv(t, envOptions{intake: func(context.Context, uploads.Upload) error {
		if fail {
			fail = false
			return errors.New("intake: the record bucket is unavailable")
		}
		return nil
	}})
	u := e.deposit(t, "memo.txt", memo)
	if _, err := e.created(t, u); err == nil {
		t.Fatal("the delivery whose intake failed succeeded, want its error")
	}
	if got := e.upload(t, u.ID); got.State != uploads.StateClean || !got.IntakeClaimedAt.IsZero() {
		t.Fatalf("after the failure: %s, claim %v; want clean with no claim", got.State, got.IntakeClaimedAt)
	}
	out, err := e.created(t, u)
	if err != nil || out.Action != gate.Finished {
		t.Fatalf("the redelivery = %+v, %v; want intake finished", out, err)
	}
	if out, err := e.created(t, u); err != nil || out.Action != gate.Ignored {
		t.Errorf("a third delivery = %+v, %v; want ignored", out, err)
	}
	if n := e.intake.n.Load(); n != 2 {
		t.Errorf("intake ran %d times, want 2 (the failure, the redelivery)", n)
	}
}

// A quarantine cut short after the verdict is finished by the redelivery.
func TestAQuarantineCutShortIsFinishedByTheRedelivery(t *testing.T) {
	e := newEnv(t, envOptions{})
	u := e.deposit(t, "brief.pdf", scan.EICAR())
	e.blob.Add(blobtest.Rule{Op: blobtest.OpDeleteObject, Ref: blobtest.Prefix(blob.Staging, blob.PrefixVerified), Nth: 1, Err: blob.ErrUnavailable})
	if out, err := e.created(t, u); err == nil || out.State != uploads.StateInfected {
		t.Fatalf("the first delivery = %+v, %v; want infected and an error", out, err)
	}
	if !e.exists(t, blob.Verified(u.Object)) {
		t.Fatal("the fault did not keep the object in verified/")
	}
	out, err := e.created(t, u)
	if err != nil || out.Action != gate.Finished {
		t.Fatalf("the redelivery = %+v, %v; want the quarantine finished", out, err)
	}
	if e.exists(t, blob.Verified(u.Object)) || !e.exists(t, blob.Quarantined(u.Object)) {
		t.Error("the object is not in quarantine/ alone")
	}
}

// The lane's posture is the gate's engine's: OFF refuses before anything
// is spent; a broken engine (stopped) leaves the lane accepting uploads
// and its verdicts scan_failed, never clean.
func TestOffRefusesAndBrokenFailsEveryVerdict(t *testing.T) {
	t.Run("with no scanner the lane refuses and the grant stays unspent", func(t *testing.T) {
		e := newEnv(t, envOptions{off: true})
		if p := e.gate.Posture(context.Background()); p != scan.Off {
			t.Errorf("Posture() = %s, want OFF", p)
		}
		token, _, err := uploads.MintGrant(context.Background(), e.store, uploads.MintRequest{Tenant: seed.DemoTenant,
			CredentialID: e.dep.Credential.ID, Matter: seed.Alvarez, By: seed.DemoAdmin}, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.lane.Begin(context.Background(), uploadsCaller(e), beginRequest(token, memo))
		var r *uploads.Refusal
		if !errors.As(err, &r) || r.Class != uploads.ClassScanner || r.Spent {
			t.Errorf("Begin = %v, want SCANNER_UNAVAILABLE, spent false", err)
		}
	})
	t.Run("a broken engine accepts uploads and fails their verdicts", func(t *testing.T) {
		sc := scantest.NewFaulty(signature.New(), signature.Name)
		e := newEnv(t, envOptions{scanner: sc})
		sc.Break(nil)
		if p := e.gate.Posture(context.Background()); p != scan.Broken {
			t.Errorf("Posture() = %s, want BROKEN", p)
		}
		for _, body := range [][]byte{memo, scan.EICAR()} {
			u := e.deposit(t, "file.bin", body)
			out, err := e.created(t, u)
			if err != nil || out.State != uploads.StateScanFailed {
				t.Errorf("verdict = %+v, %v; want scan_failed", out, err)
			}
		}
		held, err := uploads.ListHeld(context.Background(), e.store, seed.DemoTenant, uploads.StateScanFailed)
		if err != nil || len(held) != 2 {
			t.Errorf("ListHeld(scan_failed) = %d uploads, %v; want both", len(held), err)
		}
	})
}

// The gate reads URLDecodedKey alone, which aws-lambda-go sets only when it
// decodes an event from JSON: an S3Event built in Go names no object (so
// no test hands the gate one), and a payload that does not decode — a key
// with an escape S3 never sends, or not an event at all — is ignored,
// never retried.
func TestOnlyEventsDecodedFromJSONNameObjects(t *testing.T) {
	sc := scantest.NewFaulty(signature.New(), signature.Name)
	e := newEnv(t, envOptions{scanner: sc})
	u := e.deposit(t, "memo.txt", memo)
	built := s3event.ObjectCreated("Copy", "us-east-1", s3local.Buckets.Staging, blob.Verified(u.Object).Key, 1, "etag", epoch)
	out, err := e.gate.HandleS3(context.Background(), built)
	if err != nil || len(out) != 1 || out[0].Action != gate.Ignored {
		t.Errorf("HandleS3(an event built in Go) = %+v, %v; want ignored", out, err)
	}
	for name, raw := range map[string]string{
		"a key with an invalid escape": `{"Records":[{"eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"custody-staging"},"object":{"key":"verified%ZZ"}}}]}`,
		"a JSON array":                 `[1,2,3]`,
		"an object of neither source":  `{"hello":"world"}`,
	} {
		if err := e.gate.Handle(context.Background(), json.RawMessage(raw)); err != nil {
			t.Errorf("Handle(%s) = %v, want nil (ignored)", name, err)
		}
	}
	if sc.Scans() != 0 || e.upload(t, u.ID).State != uploads.StateScanPending {
		t.Errorf("%d scans, state %s; want none, scan_pending", sc.Scans(), e.upload(t, u.ID).State)
	}
}
