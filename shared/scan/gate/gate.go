// Package gate is the scan gate (issue 17; docs/contracts.md §5): every
// object copied to the staging bucket's verified/ prefix gets exactly one
// verdict, and only a clean one goes on to intake.
//
// Verdicts arrive by two inputs, both delivered at least once and in no
// particular order:
//
//   - S3 ObjectCreated events (events.S3Event), for the byte-scanning
//     engines (clamd, signature): the gate reads the object from S3 and
//     streams it to the engine. The key is the record's URLDecodedKey,
//     which aws-lambda-go sets only when it decodes the event from JSON (S3
//     sends keys form-encoded: "verified%2F…" and "+" for a space), so the
//     gate takes raw JSON (Handle) and never reads the still-encoded Key.
//     On AWS no bucket notifies a function (the deployed engine is
//     GuardDuty); the dev server marshals a real S3 event for each object
//     its local S3 creates and hands the JSON to Handle, so the same path
//     runs there.
//   - EventBridge "GuardDuty Malware Protection Object Scan Result" events
//     (events.CloudWatchEvent), for the guardduty engine: GuardDuty scanned
//     the object where it is stored and the event carries its result.
//
// Only objects of the staging bucket under verified/ whose key is the
// lane's (verified/ and 32 lowercase hex digits) are taken; anything else
// — another bucket, incoming/ or quarantine/, a key outside the alphabet, a
// removal, an event of another engine than the configured one — is logged
// and ignored, and nothing is scanned.
//
// # One verdict
//
// The upload is found by its key (its id is "upl_" and the key's hex) and
// read strongly. Only a scan_pending upload is judged, and the judgement is
// committed with one conditional write (uploads.Decide: scan_pending →
// clean | infected | scan_failed, with the engine, the threats or reason,
// the time, and the ETag and size scanned). A duplicate or late event
// meets another state, or loses the write, and changes nothing. What was
// scanned must be the verified object: the object's size must be the
// upload's, every read of it (an engine may retry) must carry the ETag its
// HEAD had, and the bytes the engine read must hash to the upload's
// SHA-256; GuardDuty's event must name the ETag the object has. Anything
// else is scan_failed, "object changed".
//
// A failing engine never yields a pass: the engine's failed verdict
// (clamd down or without signatures: BROKEN) is committed as scan_failed.
// What is not the engine's or the object's fault — the store or S3
// unavailable, the invocation out of time — commits nothing and is
// returned, so Lambda retries the event (twice, asynchronously) and then
// sends it to the function's on-failure queue; the sweeper's no-verdict
// duty decides an upload nothing decided within 30 minutes of its copy.
//
// # After the verdict
//
// Infected: the object is copied to quarantine/<id>, tagged, and deleted
// from verified/; it never reaches the record bucket and nothing serves it.
// A redelivered event for an infected upload finishes a quarantine left
// half done. scan_failed: the object stays in verified/, never served;
// only a firm administrator's rescan (uploads.Rescan) returns it to
// scan_pending. Clean: the intake hook (Intake; issue 18) takes the upload
// on, run by the delivery whose write decided it, which holds the upload's
// intake claim; when intake fails the claim is released and the error
// returned, and the redelivered event claims and runs it again.
package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/lambdaio/s3event"
	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/clamd"
	"github.com/custodymcp/custody/shared/scan/guardduty"
	"github.com/custodymcp/custody/shared/scan/signature"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/uploads"
)

// Blob is what the gate needs of the object store: whole objects and their
// tags (package blob's engine, or a decorator over it in tests).
type Blob interface {
	blob.Objects
	blob.Tagging
}

// Intake takes a clean upload on (issue 18: into pending privilege review).
type Intake interface {
	// Take is called with the upload once it is clean, by the delivery
	// that decided it or by a later one that claimed its intake after
	// Take failed. It must be idempotent: a claim outlived (a process that
	// died while running Take) is claimed again. An error is returned by
	// the gate's handler, so Lambda redelivers the event.
	Take(ctx context.Context, u uploads.Upload) error
}

// IntakeFunc is an Intake of a function.
type IntakeFunc func(ctx context.Context, u uploads.Upload) error

// Take calls f.
func (f IntakeFunc) Take(ctx context.Context, u uploads.Upload) error { return f(ctx, u) }

// NoIntake is the default Intake until issue 18: it does nothing, and a
// clean upload stays clean.
var NoIntake Intake = IntakeFunc(func(context.Context, uploads.Upload) error { return nil })

// Tags the gate puts on a quarantined object, beside those it had (the
// GuardDuty scan status tag is copied with it).
const (
	TagVerdict = "custody-verdict"
	TagUpload  = "custody-upload"
)

// Reasons of scan_failed verdicts the gate gives itself (the engines'
// reasons are theirs).
const (
	ReasonObjectChanged = "object changed"
	ReasonNoVerdict     = "no verdict"
)

// Options configure a Gate.
type Options struct {
	Store store.Store
	Blob  Blob
	// Buckets are the lane's bucket names: an event of any other bucket
	// than Buckets.Staging is ignored.
	Buckets blob.Buckets
	// Scanner is the engine: a byte-scanning one (clamd, signature) judges
	// S3 events, the guardduty engine its scan result events; nil is OFF,
	// whose verdicts are scan_failed.
	Scanner scan.Scanner
	// Intake takes clean uploads on; nil is NoIntake.
	Intake Intake
	Logger *slog.Logger
	// Now is the clock of verdicts and claims (time.Now if nil).
	Now func() time.Time
}

// Gate judges verified objects. Safe for concurrent use.
type Gate struct {
	store       store.Store
	blob        Blob
	buckets     blob.Buckets
	scanner     scan.Scanner
	eventDriven bool
	intake      Intake
	log         *slog.Logger
	now         func() time.Time
}

// New returns the gate. Store, Blob and the staging bucket's name are
// required.
func New(o Options) (*Gate, error) {
	if o.Store == nil || o.Blob == nil || o.Buckets.Staging == "" {
		return nil, errors.New("scan gate: a store, a blob store and the staging bucket's name are required")
	}
	if o.Scanner == nil {
		o.Scanner = scan.OffScanner
	}
	if o.Intake == nil {
		o.Intake = NoIntake
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	_, eventDriven := o.Scanner.(*guardduty.Engine)
	return &Gate{store: o.Store, blob: o.Blob, buckets: o.Buckets, scanner: o.Scanner, eventDriven: eventDriven,
		intake: o.Intake, log: o.Logger, now: o.Now}, nil
}

// Posture is the engine's posture.
func (g *Gate) Posture(ctx context.Context) scan.Posture { return g.scanner.Posture(ctx) }

// Action is what the gate did with one object of an event.
type Action string

// The actions.
const (
	// Decided: this delivery committed the verdict.
	Decided Action = "decided"
	// Ignored: not the gate's to judge (another bucket or prefix, a key
	// outside the alphabet, no such upload, another engine's event), or
	// already decided (a duplicate or late event).
	Ignored Action = "ignored"
	// Finished: a redelivery finished what a decided verdict leaves to do
	// (a quarantine, or intake after it failed).
	Finished Action = "finished"
)

// Outcome is the gate's answer for one object of an event.
type Outcome struct {
	// Upload is the upload's id ("" when the object names none).
	Upload string `json:"upload,omitempty"`
	Action Action `json:"action"`
	// State is the verdict (Decided) or the state found (Ignored).
	State uploads.State `json:"state,omitempty"`
	// Why says why it was ignored, or the verdict's reason.
	Why string `json:"why,omitempty"`
}

func ignored(upload, why string) Outcome { return Outcome{Upload: upload, Action: Ignored, Why: why} }

// ScheduledEvent is the detail-type of an EventBridge schedule's event
// (the function's intake sweep; template.yaml ScanGateFunction's
// IntakeSweep, every 5 minutes).
const ScheduledEvent = "Scheduled Event"

// Handle is the Lambda handler (functions/scangate): raw is an S3 event, an
// EventBridge event (a GuardDuty scan result), or the function's schedule
// (ScheduledEvent: one pass of IntakeDuty), decoded here from JSON so that
// S3 keys are read URL-decoded. Any other payload is logged and ignored. It logs one
// "invocation" line with each object's outcome, and returns an error only
// for a failure worth a retry (see the package doc).
func (g *Gate) Handle(ctx context.Context, raw json.RawMessage) error {
	start := time.Now()
	var probe struct {
		Records    json.RawMessage `json:"Records"`
		DetailType string          `json:"detail-type"`
	}
	var (
		source   string
		outcomes []Outcome
		err      error
	)
	switch jerr := json.Unmarshal(raw, &probe); {
	case jerr != nil:
		source, outcomes = "unknown", []Outcome{ignored("", "not a JSON object")}
	case probe.Records != nil:
		source = "aws:s3"
		var ev events.S3Event
		if jerr := json.Unmarshal(raw, &ev); jerr != nil {
			// A key S3 would never send (an invalid escape): no retry can
			// read it.
			outcomes = []Outcome{ignored("", "an S3 event that does not decode")}
			break
		}
		outcomes, err = g.HandleS3(ctx, ev)
	case probe.DetailType == ScheduledEvent:
		// The function's own schedule (template.yaml): resume the intakes
		// whose delivery died after Lambda's retries (IntakeDuty). Only
		// this function links the PDF engine, so only it can finish them.
		// A failed pass is logged, not retried: the next pass sweeps again
		// (and a retry's failure would land on the on-failure queue, whose
		// depth means a lost verdict).
		source = "aws.events:schedule"
		rep, serr := (&IntakeDuty{Gate: g}).Sweep(ctx, g.now())
		if serr != nil {
			g.log.ErrorContext(ctx, "intake sweep", "err", serr.Error())
		}
		for action, n := range rep.Actions {
			outcomes = append(outcomes, Outcome{Action: Finished, Why: fmt.Sprintf("%s: %d", action, n)})
		}
	case probe.DetailType != "":
		source = "aws.events"
		var ev events.CloudWatchEvent
		if jerr := json.Unmarshal(raw, &ev); jerr != nil {
			outcomes = []Outcome{ignored("", "an EventBridge event that does not decode")}
			break
		}
		source = ev.Source
		var o Outcome
		o, err = g.HandleScanResult(ctx, ev)
		outcomes = []Outcome{o}
	default:
		source, outcomes = "unknown", []Outcome{ignored("", "neither an S3 nor an EventBridge event")}
	}
	attrs := []any{"source", source, "outcomes", outcomes, "durationMs", time.Since(start).Milliseconds()}
	if err != nil {
		g.log.ErrorContext(ctx, "invocation", append(attrs, "err", err.Error())...)
		return err
	}
	g.log.InfoContext(ctx, "invocation", attrs...)
	return nil
}

// HandleS3 judges the objects of an S3 event's ObjectCreated records, in
// order; other records are ignored. ev must have been decoded from JSON
// (see the package doc). The error joins the failures worth a retry; the
// objects already judged are not judged again by the retry.
func (g *Gate) HandleS3(ctx context.Context, ev events.S3Event) ([]Outcome, error) {
	created, other := s3event.Created(ev)
	var out []Outcome
	for _, name := range other {
		out = append(out, ignored("", "an S3 "+name+" record, not an object creation"))
	}
	var errs []error
	for _, obj := range created {
		o, err := g.onObjectCreated(ctx, obj)
		out = append(out, o)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

func (g *Gate) onObjectCreated(ctx context.Context, obj s3event.Object) (Outcome, error) {
	id, why := g.verifiedID(obj.Bucket, obj.Key)
	if why != "" {
		g.log.DebugContext(ctx, "scan gate: object ignored", "why", why, "key", printable(obj.Key))
		return ignored("", why), nil
	}
	uploadID := uploads.UploadID(id)
	if g.eventDriven {
		return ignored(uploadID, "the engine is GuardDuty: its scan result event gives the verdict"), nil
	}
	return g.judge(ctx, id, g.scanBytes)
}

// HandleScanResult judges the object of a GuardDuty Malware Protection
// Object Scan Result event. Any other event, one of another bucket or key,
// or any event while GuardDuty is not the engine is ignored.
func (g *Gate) HandleScanResult(ctx context.Context, ev events.CloudWatchEvent) (Outcome, error) {
	r, err := guardduty.ParseEvent(ev)
	switch {
	case errors.Is(err, guardduty.ErrNotScanResult):
		return ignored("", "not a GuardDuty S3 object scan result"), nil
	case err != nil:
		g.log.WarnContext(ctx, "scan gate: malformed GuardDuty event", "err", err)
		return ignored("", "a malformed GuardDuty scan result"), nil
	}
	id, why := g.verifiedID(r.Bucket, r.Key)
	if why != "" {
		return ignored("", why), nil
	}
	if !g.eventDriven {
		return ignored(uploads.UploadID(id), "GuardDuty is not this gate's engine"), nil
	}
	return g.judge(ctx, id, func(ctx context.Context, u uploads.Upload, head blob.ObjectInfo) (uploads.Verdict, error) {
		at := g.now()
		if head.Size != u.Size || (r.ETag != "" && strings.Trim(head.ETag, `"`) != r.ETag) {
			return failedVerdict(guardduty.Name, ReasonObjectChanged, head, at), nil
		}
		v, _ := r.Verdict() // the error repeats the failed verdict's reason
		return verdictOf(v, head, at), nil
	})
}

// verifiedID returns the object id of a key of the staging bucket under
// verified/, or why the object is not the gate's.
func (g *Gate) verifiedID(bucket, key string) (blob.ID, string) {
	if bucket != g.buckets.Staging {
		return "", "not the staging bucket"
	}
	ref, err := g.buckets.Parse(bucket, key)
	if err != nil {
		return "", "a key outside the lane's alphabet"
	}
	if !strings.HasPrefix(ref.Key, blob.PrefixVerified) {
		return "", "not under verified/"
	}
	return ref.ID(), ""
}

// judgement reads an upload's verified object and gives its verdict; an
// error is a failure worth a retry (nothing is committed).
type judgement func(ctx context.Context, u uploads.Upload, head blob.ObjectInfo) (uploads.Verdict, error)

// judge runs one event for the upload of object id: a scan_pending upload
// is judged and the verdict committed; a clean one's intake is resumed
// when its claim has lapsed; an infected one's quarantine is finished;
// anything else is ignored.
func (g *Gate) judge(ctx context.Context, id blob.ID, j judgement) (Outcome, error) {
	uploadID := uploads.UploadID(id)
	u, err := g.read(ctx, uploadID)
	if errors.Is(err, store.ErrNotFound) {
		g.log.WarnContext(ctx, "scan gate: an object in verified/ has no upload", "upload", uploadID)
		return ignored(uploadID, "no such upload"), nil
	}
	if err != nil {
		return Outcome{Upload: uploadID}, err
	}
	switch u.State {
	case uploads.StateScanPending:
	case uploads.StateClean:
		return g.resumeIntake(ctx, u)
	case uploads.StateInfected:
		return g.finishQuarantine(ctx, u)
	default:
		return Outcome{Upload: u.ID, Action: Ignored, State: u.State, Why: "already " + string(u.State)}, nil
	}
	head, err := g.blob.HeadObject(ctx, blob.Verified(id))
	if errors.Is(err, blob.ErrNotFound) {
		// Not yet, or no longer, there: the copy duty and the no-verdict
		// duty decide from the row.
		return Outcome{Upload: u.ID, Action: Ignored, State: u.State, Why: "no object in verified/"}, nil
	}
	if err != nil {
		return Outcome{Upload: u.ID}, fmt.Errorf("find the verified object of %s: %w", u.ID, err)
	}
	v, err := j(ctx, u, head)
	if err != nil {
		return Outcome{Upload: u.ID}, err
	}
	return g.Commit(ctx, u, v, g.now())
}

func (g *Gate) read(ctx context.Context, uploadID string) (uploads.Upload, error) {
	it, err := g.store.Get(ctx, uploads.UploadKey(uploadID))
	if err != nil {
		return uploads.Upload{}, fmt.Errorf("read upload %s: %w", uploadID, err)
	}
	return uploads.DecodeUpload(it)
}

// Commit writes the verdict v on the scan_pending upload u at now with one
// conditional write (uploads.Decide) and, when it decided, quarantines an
// infected object or runs intake for a clean one. A write that loses to
// another delivery's is an Ignored outcome without error. The sweeper's
// no-verdict duty commits through it too.
func (g *Gate) Commit(ctx context.Context, u uploads.Upload, v uploads.Verdict, now time.Time) (Outcome, error) {
	op, err := uploads.Decide(u, v, now)
	if err != nil {
		return Outcome{Upload: u.ID}, err
	}
	_, err = g.store.Update(ctx, op.Key, op.Update, op.Conditions...)
	switch {
	case errors.Is(err, store.ErrConflict):
		return Outcome{Upload: u.ID, Action: Ignored, Why: "decided by another delivery"}, nil
	case err != nil:
		return Outcome{Upload: u.ID}, fmt.Errorf("commit the verdict on %s: %w", u.ID, err)
	}
	// The invocation's one outcome line carries the verdict; this is the
	// detail (the threat names) for DEBUG.
	g.log.DebugContext(ctx, "scan verdict", "upload", u.ID, "state", string(v.State), "engine", v.Engine,
		"threats", v.Threats, "reason", v.Reason)
	out := Outcome{Upload: u.ID, Action: Decided, State: v.State, Why: v.Reason}
	u.State, u.UpdatedAt = v.State, now
	u.ScanEngine, u.Threats, u.ScanReason, u.ScannedAt, u.ScannedETag, u.ScannedSize = v.Engine, v.Threats, v.Reason, v.At, v.ETag, v.Size
	switch v.State {
	case uploads.StateInfected:
		if err := g.quarantine(ctx, u); err != nil {
			return out, err
		}
	case uploads.StateClean:
		u.IntakeClaimedAt = now
		if err := g.runIntake(ctx, u, now); err != nil {
			return out, err
		}
	}
	return out, nil
}

// quarantine moves an infected upload's object out of verified/: copied to
// quarantine/<id> (its tags go with it), tagged with the verdict and the
// upload, then deleted from verified/. Each step is idempotent, and the
// delete comes last, so a redelivery finishes what a failure left.
func (g *Gate) quarantine(ctx context.Context, u uploads.Upload) error {
	src, dst := blob.Verified(u.Object), blob.Quarantined(u.Object)
	switch err := g.blob.CopyObject(ctx, src, dst); {
	case errors.Is(err, blob.ErrNotFound):
		if _, herr := g.blob.HeadObject(ctx, dst); herr != nil {
			return fmt.Errorf("quarantine %s: neither verified/ nor quarantine/ holds its object: %w", u.ID, herr)
		}
	case err != nil:
		return fmt.Errorf("quarantine %s: %w", u.ID, err)
	}
	tags, err := g.blob.GetObjectTagging(ctx, dst)
	if err != nil {
		return fmt.Errorf("quarantine %s: read its tags: %w", u.ID, err)
	}
	tags[TagVerdict], tags[TagUpload] = string(uploads.StateInfected), u.ID
	if err := g.blob.PutObjectTagging(ctx, dst, tags); err != nil {
		return fmt.Errorf("quarantine %s: tag it: %w", u.ID, err)
	}
	if err := g.blob.DeleteObject(ctx, src); err != nil {
		return fmt.Errorf("quarantine %s: delete it from verified/: %w", u.ID, err)
	}
	return nil
}

// finishQuarantine answers an event for an infected upload: its quarantine
// is finished when its object is still in verified/ (a failure after the
// verdict), else the event is a duplicate.
func (g *Gate) finishQuarantine(ctx context.Context, u uploads.Upload) (Outcome, error) {
	_, err := g.blob.HeadObject(ctx, blob.Verified(u.Object))
	switch {
	case errors.Is(err, blob.ErrNotFound):
		return Outcome{Upload: u.ID, Action: Ignored, State: u.State, Why: "already infected"}, nil
	case err != nil:
		return Outcome{Upload: u.ID}, fmt.Errorf("find the verified object of %s: %w", u.ID, err)
	}
	if err := g.quarantine(ctx, u); err != nil {
		return Outcome{Upload: u.ID}, err
	}
	return Outcome{Upload: u.ID, Action: Finished, State: u.State, Why: "quarantined"}, nil
}

// resumeIntake answers an event for a clean upload: while another
// delivery's claim on its intake lives, the event is a duplicate;
// otherwise (intake failed and released it, or its holder died) this
// delivery claims it and runs intake.
func (g *Gate) resumeIntake(ctx context.Context, u uploads.Upload) (Outcome, error) {
	return g.resumeIntakeAt(ctx, u, g.now())
}

func (g *Gate) resumeIntakeAt(ctx context.Context, u uploads.Upload, now time.Time) (Outcome, error) {
	if u.IntakeClaimLive(now) {
		return Outcome{Upload: u.ID, Action: Ignored, State: u.State, Why: "already clean"}, nil
	}
	op := uploads.ClaimIntake(u, now)
	_, err := g.store.Update(ctx, op.Key, op.Update, op.Conditions...)
	switch {
	case errors.Is(err, store.ErrConflict):
		return Outcome{Upload: u.ID, Action: Ignored, State: u.State, Why: "claimed by another delivery"}, nil
	case err != nil:
		return Outcome{Upload: u.ID}, fmt.Errorf("claim the intake of %s: %w", u.ID, err)
	}
	u.IntakeClaimedAt = now
	if err := g.runIntake(ctx, u, now); err != nil {
		return Outcome{Upload: u.ID}, err
	}
	return Outcome{Upload: u.ID, Action: Finished, State: u.State, Why: "intake"}, nil
}

// runIntake runs the intake hook for a clean upload whose claim was taken
// at claimedAt; when it fails, the claim is released so the redelivery can
// take it, and the error returned.
func (g *Gate) runIntake(ctx context.Context, u uploads.Upload, claimedAt time.Time) error {
	err := g.intake.Take(ctx, u)
	if err == nil {
		return nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	op := uploads.ReleaseIntake(u.ID, claimedAt)
	if _, rerr := g.store.Update(rctx, op.Key, op.Update, op.Conditions...); rerr != nil && !errors.Is(rerr, store.ErrConflict) {
		g.log.WarnContext(ctx, "scan gate: release an intake claim", "upload", u.ID, "err", rerr)
	}
	return fmt.Errorf("intake of %s: %w", u.ID, err)
}

// scanBytes streams the verified object to the byte-scanning engine. Every
// read must carry the ETag of head, and the bytes read must hash to the
// upload's SHA-256; a failure of S3 or of the invocation's time is
// returned for a retry, never turned into a verdict.
func (g *Gate) scanBytes(ctx context.Context, u uploads.Upload, head blob.ObjectInfo) (uploads.Verdict, error) {
	engine := engineName(g.scanner)
	if head.Size != u.Size {
		return failedVerdict(engine, ReasonObjectChanged, head, g.now()), nil
	}
	src := &source{blob: g.blob, ref: blob.Verified(u.Object), etag: head.ETag}
	v, err := g.scanner.Scan(ctx, src.open, u.Size)
	at := g.now()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return uploads.Verdict{}, fmt.Errorf("scan %s: %w", u.ID, ctxErr)
	}
	if serr := src.unavailable(); serr != nil {
		return uploads.Verdict{}, fmt.Errorf("read %s for its scan: %w", u.ID, serr)
	}
	if v.Engine == "" {
		v.Engine = engine
	}
	if src.changedSince() || (v.Result != scan.Failed && src.digest() != u.SHA256) {
		return failedVerdict(v.Engine, ReasonObjectChanged, head, at), nil
	}
	if err != nil && v.Result != scan.Failed {
		// The port's rule: an error is a failed verdict, whatever else came.
		v = scan.Verdict{Result: scan.Failed, Engine: v.Engine, Reason: "engine answered an error"}
	}
	return verdictOf(v, head, at), nil
}

// source opens the verified object for an engine, once per attempt,
// holding each read to the ETag the gate saw and hashing what is read.
type source struct {
	blob Blob
	ref  blob.Ref
	etag string

	mu      sync.Mutex
	changed bool
	unavail error
	last    *hashing
}

var errChanged = errors.New("the object changed while it was scanned")

func (s *source) open(ctx context.Context) (io.ReadCloser, error) {
	obj, err := s.blob.GetObject(ctx, s.ref)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil:
		if !errors.Is(err, blob.ErrNotFound) {
			s.unavail = err
		} else {
			s.changed = true
		}
		return nil, err
	case obj.ETag != s.etag:
		obj.Body.Close()
		s.changed = true
		return nil, errChanged
	}
	h := &hashing{rc: obj.Body, h: sha256.New(), src: s}
	s.last = h
	return h, nil
}

func (s *source) unavailable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unavail
}

func (s *source) changedSince() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// digest is the hex SHA-256 of the last attempt's bytes when it read the
// object to its end, else "".
func (s *source) digest() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil || !s.last.eof {
		return ""
	}
	return hex.EncodeToString(s.last.h.Sum(nil))
}

// hashing hashes what is read and records whether the end was reached
// and whether S3 failed the read.
type hashing struct {
	rc  io.ReadCloser
	h   hash.Hash
	eof bool
	src *source
}

func (r *hashing) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	r.h.Write(p[:n])
	switch {
	case err == io.EOF:
		r.src.mu.Lock()
		r.eof = true
		r.src.mu.Unlock()
	case err != nil && errors.Is(err, blob.ErrUnavailable):
		r.src.mu.Lock()
		r.src.unavail = err
		r.src.mu.Unlock()
	}
	return n, err
}

func (r *hashing) Close() error { return r.rc.Close() }

// verdictOf is the upload's verdict of the engine's.
func verdictOf(v scan.Verdict, head blob.ObjectInfo, at time.Time) uploads.Verdict {
	out := uploads.Verdict{Engine: v.Engine, At: at, ETag: head.ETag, Size: head.Size}
	switch v.Result {
	case scan.Clean:
		out.State = uploads.StateClean
	case scan.Infected:
		out.State, out.Threats = uploads.StateInfected, v.Threats
	default:
		out.State, out.Reason = uploads.StateScanFailed, v.Reason
		if out.Reason == "" {
			out.Reason = "engine gave no verdict"
		}
	}
	return out
}

func failedVerdict(engine, reason string, head blob.ObjectInfo, at time.Time) uploads.Verdict {
	return uploads.Verdict{State: uploads.StateScanFailed, Engine: engine, Reason: reason, At: at, ETag: head.ETag, Size: head.Size}
}

// engineName names the configured engine in a verdict the gate reaches
// before the engine answers (an object whose size is not the upload's).
func engineName(s scan.Scanner) string {
	switch s.(type) {
	case *clamd.Engine:
		return clamd.Name
	case signature.Engine, *signature.Engine:
		return signature.Name
	case *guardduty.Engine:
		return guardduty.Name
	}
	if s == scan.OffScanner {
		return "off"
	}
	return "scanner"
}

// printable shortens a key for a log line.
func printable(key string) string {
	if len(key) > 200 {
		return key[:200] + "…"
	}
	return key
}

// ErrEventDriven: Judge was asked of a gate whose engine is GuardDuty,
// whose verdict only its scan result event gives.
var ErrEventDriven = errors.New("scan gate: the engine is GuardDuty: its scan result event gives the verdict")

// Judge runs the gate on the verified object id as an S3 ObjectCreated
// event of it would (custodyctl import, which stages the object itself and
// wants the verdict at once): a byte-scanning engine judges it, and a
// clean upload goes on to intake in this call. With GuardDuty as the engine
// it is ErrEventDriven: the caller waits for the row instead.
func (g *Gate) Judge(ctx context.Context, id blob.ID) (Outcome, error) {
	if g.eventDriven {
		return ignored(uploads.UploadID(id), "GuardDuty gives the verdict"), ErrEventDriven
	}
	return g.judge(ctx, id, g.scanBytes)
}

// MaxBytes is the largest object the engine judges (scan.Scanner.MaxBytes).
func (g *Gate) MaxBytes() int64 { return g.scanner.MaxBytes() }
