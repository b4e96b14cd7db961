// Package guardduty is the scanner port's engine for the deployed stack:
// Amazon GuardDuty Malware Protection for S3. A zip Lambda cannot host
// clamd and its signature updates; GuardDuty scans with managed signatures
// and no host (docs/decisions.md "Scanning").
//
// GuardDuty does not take bytes. A protection plan on the staging bucket's
// verified/ prefix scans each object where it is stored, tags it with
// GuardDutyMalwareScanStatus (tagging on) and publishes a "GuardDuty
// Malware Protection Object Scan Result" event to the account's default
// EventBridge bus (GuardDuty User Guide, "Monitoring S3 object scans with
// Amazon EventBridge"). So this engine gives the scan gate what it needs
// instead of a Scan: ParseEvent reads the event's object and status,
// ScanResult.Verdict and VerdictOfTag map a status to the port's verdict,
// and Engine answers the lane's Posture (ARMED once configured) and
// MaxBytes (the lane's 1 GiB cap: anything beyond GuardDuty's own quotas
// comes back UNSUPPORTED, which is failed). Engine.Scan is always failed
// with scan.ErrEventDriven.
//
// The mapping (GuardDuty User Guide, "S3 object potential scan status and
// result status"):
//
//	NO_THREATS_FOUND (scan status COMPLETED) → clean
//	THREATS_FOUND                            → infected, threat names kept
//	UNSUPPORTED (SKIPPED)                    → failed, scan.ErrLimits
//	ACCESS_DENIED (SKIPPED)                  → failed, scan.ErrUnavailable
//	FAILED (FAILED)                          → failed, scan.ErrUnavailable
//	anything else, or NO_THREATS_FOUND with a
//	scan status other than COMPLETED         → failed, scan.ErrUnavailable
package guardduty

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/custodymcp/custody/shared/scan"
)

// Name is the engine's name in verdicts.
const Name = "guardduty"

// The event's source and detail-type, as an EventBridge rule matches them.
const (
	Source     = "aws.guardduty"
	DetailType = "GuardDuty Malware Protection Object Scan Result"
	// ResourceType is detail.resourceType for an S3 object scan.
	ResourceType = "S3_OBJECT"
)

// TagKey is the object tag GuardDuty writes with the scan result status
// (the sweeper's fallback when no event came).
const TagKey = "GuardDutyMalwareScanStatus"

// MaxBytes is the engine's size limit: the lane's own cap, 1 GiB.
const MaxBytes int64 = 1 << 30

// Scan result statuses: detail.scanResultDetails.scanResultStatus and the
// values of the TagKey tag.
const (
	NoThreatsFound = "NO_THREATS_FOUND"
	ThreatsFound   = "THREATS_FOUND"
	Unsupported    = "UNSUPPORTED"
	AccessDenied   = "ACCESS_DENIED"
	Failed         = "FAILED"
)

// ScanStatusCompleted is detail.scanStatus of a scan that ran to its end
// (the others: SKIPPED, FAILED).
const ScanStatusCompleted = "COMPLETED"

// Errors of ParseEvent.
var (
	// ErrNotScanResult: the event is not an S3 object scan result of
	// GuardDuty (another source, detail-type or resource type). The gate
	// ignores it.
	ErrNotScanResult = errors.New("guardduty: not an S3 object scan result event")
	// ErrMalformed: the event claims to be a scan result but its detail
	// cannot be read or names no bucket, key or status.
	ErrMalformed = errors.New("guardduty: malformed scan result event")
)

// ScanResult is what a scan result event says about one object.
type ScanResult struct {
	// Bucket and Key name the object (detail.s3ObjectDetails bucketName,
	// objectKey); ETag and VersionID are the scanned object's ("" when the
	// event gives none: an unversioned bucket has no version id).
	Bucket, Key, ETag, VersionID string
	// ScanStatus is detail.scanStatus: COMPLETED, SKIPPED or FAILED.
	ScanStatus string
	// ResultStatus is detail.scanResultDetails.scanResultStatus.
	ResultStatus string
	// Threats are the names in detail.scanResultDetails.threats.
	Threats []string
}

// detail is the event's detail as GuardDuty writes it. Fields it may add
// later are ignored.
type detail struct {
	SchemaVersion   string `json:"schemaVersion"`
	ScanStatus      string `json:"scanStatus"`
	ResourceType    string `json:"resourceType"`
	S3ObjectDetails struct {
		BucketName string  `json:"bucketName"`
		ObjectKey  string  `json:"objectKey"`
		ETag       string  `json:"eTag"`
		VersionID  *string `json:"versionId"`
	} `json:"s3ObjectDetails"`
	ScanResultDetails struct {
		ScanResultStatus string `json:"scanResultStatus"`
		Threats          []struct {
			Name string `json:"name"`
		} `json:"threats"`
	} `json:"scanResultDetails"`
}

// ParseEvent reads a scan result event (events.CloudWatchEvent is
// aws-lambda-go's EventBridge envelope). It returns ErrNotScanResult for any
// other event and ErrMalformed for one it cannot read. It checks no bucket:
// the gate compares Bucket with its staging bucket.
func ParseEvent(ev events.CloudWatchEvent) (ScanResult, error) {
	if ev.Source != Source || ev.DetailType != DetailType {
		return ScanResult{}, fmt.Errorf("%w: source %q, detail-type %q", ErrNotScanResult, ev.Source, ev.DetailType)
	}
	var d detail
	if err := json.Unmarshal(ev.Detail, &d); err != nil {
		return ScanResult{}, fmt.Errorf("%w: detail: %w", ErrMalformed, err)
	}
	if d.ResourceType != ResourceType {
		return ScanResult{}, fmt.Errorf("%w: resource type %q", ErrNotScanResult, d.ResourceType)
	}
	o := d.S3ObjectDetails
	if o.BucketName == "" || o.ObjectKey == "" || d.ScanResultDetails.ScanResultStatus == "" {
		return ScanResult{}, fmt.Errorf("%w: no bucket, key or scan result status", ErrMalformed)
	}
	r := ScanResult{
		Bucket:       o.BucketName,
		Key:          o.ObjectKey,
		ETag:         o.ETag,
		ScanStatus:   d.ScanStatus,
		ResultStatus: d.ScanResultDetails.ScanResultStatus,
	}
	if o.VersionID != nil {
		r.VersionID = *o.VersionID
	}
	for _, th := range d.ScanResultDetails.Threats {
		if name := strings.TrimSpace(th.Name); name != "" {
			r.Threats = append(r.Threats, name)
		}
	}
	return r, nil
}

// Verdict maps the result to the port's verdict (the table in the package
// doc). A clean verdict needs both NO_THREATS_FOUND and scan status
// COMPLETED.
func (r ScanResult) Verdict() (scan.Verdict, error) {
	if r.ResultStatus == NoThreatsFound && r.ScanStatus != ScanStatusCompleted {
		return scan.Fail(Name, "GuardDuty reported "+NoThreatsFound+" for a scan that did not complete",
			fmt.Errorf("%w: result %s with scan status %q", scan.ErrUnavailable, r.ResultStatus, r.ScanStatus))
	}
	return verdictOf(r.ResultStatus, r.Threats)
}

// VerdictOfTag maps the value of an object's GuardDutyMalwareScanStatus tag
// to the port's verdict, as the package doc's table does (a tag names no
// threats: an infected verdict is named THREATS_FOUND).
func VerdictOfTag(value string) (scan.Verdict, error) {
	return verdictOf(value, nil)
}

func verdictOf(status string, threats []string) (scan.Verdict, error) {
	switch status {
	case NoThreatsFound:
		return scan.Verdict{Result: scan.Clean, Engine: Name}, nil
	case ThreatsFound:
		if len(threats) == 0 {
			// The port wants a name for every infected verdict; GuardDuty
			// gave none (or this is a tag), so the status stands for it.
			threats = []string{ThreatsFound}
		}
		return scan.Verdict{Result: scan.Infected, Engine: Name, Threats: threats}, nil
	case Unsupported:
		return scan.Fail(Name, "GuardDuty could not scan the object: "+Unsupported,
			fmt.Errorf("%w: GuardDuty answered %s (over its quotas, encrypted, or of a kind it does not scan)", scan.ErrLimits, status))
	case AccessDenied, Failed:
		return scan.Fail(Name, "GuardDuty could not scan the object: "+status,
			fmt.Errorf("%w: GuardDuty answered %s", scan.ErrUnavailable, status))
	}
	return scan.Fail(Name, "GuardDuty answered an unknown status",
		fmt.Errorf("%w: GuardDuty answered %q", scan.ErrUnavailable, status))
}

// Engine is the GuardDuty engine as the lane sees it. Safe for concurrent
// use.
type Engine struct {
	bucket string
}

var _ scan.Scanner = (*Engine)(nil)

// New returns the engine for the protection plan on bucket (the staging
// bucket). An empty bucket is an error: GuardDuty unconfigured is the lane
// OFF, not an engine.
func New(bucket string) (*Engine, error) {
	if bucket == "" {
		return nil, errors.New("guardduty engine: no staging bucket")
	}
	return &Engine{bucket: bucket}, nil
}

// Bucket is the protected bucket: the gate takes scan results only for it.
func (e *Engine) Bucket() string { return e.bucket }

// Scan is always failed with scan.ErrEventDriven: GuardDuty scans the
// object in S3 and its verdict comes from the scan result event (or the
// object's tag). The gate does not call it; a caller that does gets no
// pass.
func (e *Engine) Scan(context.Context, scan.Opener, int64) (scan.Verdict, error) {
	return scan.Fail(Name, "GuardDuty reports by event", scan.ErrEventDriven)
}

// Posture is ARMED: the engine exists only once a protection plan is
// configured, and GuardDuty offers no probe a Lambda could ask cheaply.
// Its failures surface as failed verdicts and the sweeper's no-verdict
// timeout.
func (e *Engine) Posture(context.Context) scan.Posture { return scan.Armed }

// MaxBytes returns MaxBytes.
func (e *Engine) MaxBytes() int64 { return MaxBytes }
