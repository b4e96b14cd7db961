// Package lanetools registers the tools of the upload lane and of
// downloads (docs/contracts.md §5) on the tool registry, over package
// uploads and package downloads: begin_upload_session and complete_upload
// (governed writes: scope write, the write lane, answered as decisions,
// every refusal carrying spent), get_upload_status (scope read) and
// get_document_download (scope docs:read). The packages below decide;
// this one only shapes their answers for the wire and hands their writes
// to the invocation core, so each call's writes commit in its one
// transaction with the rate count and the audit row.
package lanetools

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/custodymcp/custody/shared/attest"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/downloads"
	"github.com/custodymcp/custody/shared/mcp"
	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/tools"
	"github.com/custodymcp/custody/shared/uploads"
)

// Options are what the tools run on.
type Options struct {
	Lane  *uploads.Lane
	Store store.Store
	// PublicBaseURL is the origin (and path) clients reach the server at,
	// without a trailing slash: download links are PublicBaseURL +
	// "/downloads/<token>".
	PublicBaseURL string
}

// Register adds the four tools to reg.
func Register(reg *tools.Registry, opts Options) error {
	lt := &laneTools{lane: opts.Lane, store: opts.Store, base: strings.TrimSuffix(opts.PublicBaseURL, "/")}
	noEffects := mcp.ToolAnnotations{OpenWorldHint: false}
	if err := tools.Register(reg, tools.Spec{
		Name: uploads.ToolBegin, Title: "Begin an upload session", Scope: auth.ScopeWrite,
		Write: true, ReportsSpent: true, Annotations: noEffects,
		Prefetch: func(_ *tools.Call, in any) ([]store.Key, error) {
			b := in.(*BeginInput)
			return uploads.PrefetchKeys(uploads.ToolBegin, b.GrantToken, ""), nil
		},
		Description: "Starts depositing one file into a matter with a single-use grant token a firm administrator gave you. " +
			"Hash the file first: sha256 of the whole file (hex), and part_sha256, the SHA-256 (standard base64) of each 16 MiB part, the last part the remainder. " +
			"Answers upload_id and one presigned URL per part: PUT each part's exact bytes to its url with exactly its headers (e.g. curl -X PUT -H … --data-binary @part), before expires_at, then call complete_upload. " +
			"Spends nothing: the grant is spent only once complete_upload has verified the bytes.",
	}, lt.begin); err != nil {
		return err
	}
	if err := tools.Register(reg, tools.Spec{
		Name: uploads.ToolComplete, Title: "Complete an upload", Scope: auth.ScopeWrite,
		Write: true, ReportsSpent: true, Annotations: mcp.ToolAnnotations{IdempotentHint: true},
		Prefetch: func(_ *tools.Call, in any) ([]store.Key, error) {
			c := in.(*CompleteInput)
			return uploads.PrefetchKeys(uploads.ToolComplete, c.GrantToken, c.UploadID), nil
		},
		Description: "Completes an upload begun with begin_upload_session once every part is PUT: checks the parts S3 holds against the declared layout and digests, assembles them, verifies the whole file's size and SHA-256, and only then spends the grant. " +
			"The file then waits for its malware scan (state scan_pending; poll get_upload_status). A repeat call answers the original receipt. Every refusal says in spent whether the grant is spent.",
	}, lt.complete); err != nil {
		return err
	}
	if err := tools.Register(reg, tools.Spec{
		Name: "get_upload_status", Title: "Upload status", Scope: auth.ScopeRead,
		Annotations: mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		Description: "Reports an upload of this credential: its state (open, rejected, scan_pending, clean, infected, scan_failed, in_review, abandoned), whether it spent its grant, the scanner's posture, and the document made of it once intake has made one.",
	}, lt.status); err != nil {
		return err
	}
	return tools.Register(reg, tools.Spec{
		Name: "get_document_download", Title: "Download a document's file", Scope: auth.ScopeDocsRead,
		Annotations: mcp.ToolAnnotations{ReadOnlyHint: true},
		Description: "Returns a link to a document version's stored file, valid for 5 minutes: fetching it needs no key, re-checks this credential's access and redirects to a 60-second download. " +
			"Only reviewed documents with a stored file can be downloaded.",
	}, lt.download)
}

type laneTools struct {
	lane  *uploads.Lane
	store store.Store
	base  string
}

// caller is the lane's view of a call: for the two write tools, with the
// rows the invocation core's write step read for them (Spec.Prefetch).
func caller(c *tools.Call) uploads.Caller {
	pre := c.Prefetched
	if pre == nil {
		pre = []*store.Item{}
	}
	return uploads.Caller{Credential: c.Credential, Who: c.Who, Now: c.Now, Pre: pre}
}

// refusal turns the lane's refusal into the pipeline's; spent says whether
// the tool reports the grant's state.
func refusal(err error, spent bool) error {
	var r *uploads.Refusal
	if !errors.As(err, &r) {
		return err
	}
	out := &tools.Refusal{Class: r.Class, Message: r.Message, Field: r.Field}
	if spent {
		s := r.Spent
		out.Spent = &s
	}
	return out
}

// write hands a step's writes to the invocation core; answer shapes the
// result its conflict path settles on.
func write[T any](c *tools.Call, step uploads.Step[T], answer func(T) any) {
	if len(step.Ops) == 0 && len(step.After) == 0 {
		return
	}
	w := tools.Write{Ops: step.Ops}
	if step.Conflict != nil {
		w.Conflict = func(ctx context.Context, failed int) (any, bool, error) {
			res, replay, err := step.Conflict(ctx, failed)
			if err != nil {
				return nil, false, refusal(err, true)
			}
			return tools.Executed(answer(res)), replay, nil
		}
	}
	for _, e := range step.After {
		w.After = append(w.After, mcp.Effect{Name: e.Name, Recovery: e.Recovery, Run: e.Run})
	}
	c.Write(w)
}

// BeginInput is begin_upload_session's input (docs/contracts.md §5).
type BeginInput struct {
	GrantToken string   `json:"grant_token" jsonschema:"The single-use grant token (cgt_ and 48 hex digits) a firm administrator minted for this key and matter." schema:"minLength=1;maxLength=128"`
	CaseID     string   `json:"case_id" jsonschema:"The matter's case_id: the one the grant names." schema:"minLength=1;maxLength=128"`
	Filename   string   `json:"filename" jsonschema:"The file's name: 1 to 255 bytes, no slashes, no control characters. Kept as data, never used as a path." schema:"minLength=1;maxLength=255"`
	SizeBytes  int64    `json:"size_bytes" jsonschema:"The file's exact size in bytes: at most 1 GiB and at most what the firm's scanner accepts." schema:"minimum=1;maximum=1073741824"`
	SHA256     string   `json:"sha256" jsonschema:"The whole file's SHA-256 as 64 lowercase hex digits (sha256sum)." schema:"pattern=^[0-9a-f]{64}$"`
	PartSHA256 []string `json:"part_sha256" jsonschema:"The SHA-256 of each part, standard base64 (openssl dgst -sha256 -binary part | base64), in part order: exactly ceil(size_bytes / 16777216) of them. Parts are 16 MiB (16777216 bytes), the last the remainder."`
	MediaType  string   `json:"media_type,omitempty" jsonschema:"The file's media type if known (application/pdf); kept as data." schema:"maxLength=255"`
	// ChecksumAlgorithm is SHA256 or absent; other values are VALIDATION.
	ChecksumAlgorithm string `json:"checksum_algorithm,omitempty" jsonschema:"SHA256, or leave it out: the only algorithm parts are checked with." schema:"enum=SHA256"`
}

// PartOutput is one part to PUT.
type PartOutput struct {
	PartNumber int32             `json:"part_number"`
	URL        string            `json:"url"`
	Method     string            `json:"method"`
	Headers    map[string]string `json:"headers"`
	SizeBytes  int64             `json:"size_bytes"`
}

// BeginOutput is the executed decision's data of begin_upload_session.
type BeginOutput struct {
	UploadID          string       `json:"upload_id"`
	CaseID            string       `json:"case_id"`
	Filename          string       `json:"filename"`
	SizeBytes         int64        `json:"size_bytes"`
	PartSizeBytes     int64        `json:"part_size_bytes"`
	ChecksumAlgorithm string       `json:"checksum_algorithm"`
	Parts             []PartOutput `json:"parts"`
	ExpiresAt         attest.Time  `json:"expires_at"`
	Spent             bool         `json:"spent"`
	NextStep          string       `json:"next_step"`
}

func beginOutput(s uploads.Session) any {
	parts := make([]PartOutput, len(s.Parts))
	for i, p := range s.Parts {
		parts[i] = PartOutput{PartNumber: p.PartNumber, URL: p.URL, Method: p.Method, Headers: p.Headers, SizeBytes: p.Size}
	}
	return BeginOutput{
		UploadID: s.Upload.ID, CaseID: s.Upload.Matter, Filename: s.Upload.Filename, SizeBytes: s.Upload.Size,
		PartSizeBytes: uploads.PartSize, ChecksumAlgorithm: uploads.ChecksumAlgorithm, Parts: parts,
		ExpiresAt: attest.At(s.ExpiresAt),
		NextStep: "PUT each part's bytes to its url with exactly its headers before expires_at, " +
			"then call complete_upload with this upload_id and the same grant_token. Nothing has been spent yet.",
	}
}

func (lt *laneTools) begin(ctx context.Context, c *tools.Call, in BeginInput) (tools.Decision, error) {
	step, err := lt.lane.Begin(ctx, caller(c), uploads.BeginRequest{
		GrantToken: in.GrantToken, CaseID: in.CaseID, Filename: in.Filename, Size: in.SizeBytes,
		SHA256: in.SHA256, PartSHA256: in.PartSHA256, MediaType: in.MediaType, ChecksumAlgorithm: in.ChecksumAlgorithm,
	})
	if err != nil {
		return tools.Decision{}, refusal(err, true)
	}
	write(c, step, beginOutput)
	c.ReportMatter(in.CaseID)
	return tools.Executed(beginOutput(step.Result)), nil
}

// CompleteInput is complete_upload's input.
type CompleteInput struct {
	GrantToken string `json:"grant_token" jsonschema:"The grant token the upload was begun with." schema:"minLength=1;maxLength=128"`
	UploadID   string `json:"upload_id" jsonschema:"The upload_id begin_upload_session answered." schema:"minLength=1;maxLength=128"`
}

// Receipt is complete_upload's executed data.
type Receipt struct {
	UploadID       string      `json:"upload_id"`
	CaseID         string      `json:"case_id"`
	Filename       string      `json:"filename"`
	SizeBytes      int64       `json:"size_bytes"`
	SHA256         string      `json:"sha256"`
	State          string      `json:"state"`
	Spent          bool        `json:"spent"`
	ScannerPosture string      `json:"scanner_posture"`
	CompletedAt    attest.Time `json:"completed_at"`
	NextStep       string      `json:"next_step"`
}

func receipt(done uploads.Completed) any {
	u := done.Upload
	return Receipt{
		UploadID: u.ID, CaseID: u.Matter, Filename: u.Filename, SizeBytes: u.Size, SHA256: u.SHA256,
		State: string(u.State), Spent: u.State.Spent(), ScannerPosture: string(done.Posture),
		CompletedAt: attest.At(u.SpentAt),
		NextStep: "The file was verified and the grant spent. It is scanned for malware, then waits for an attorney's privilege review; " +
			"poll get_upload_status with this upload_id to follow it.",
	}
}

func (lt *laneTools) complete(ctx context.Context, c *tools.Call, in CompleteInput) (tools.Decision, error) {
	step, err := lt.lane.Complete(ctx, caller(c), in.GrantToken, in.UploadID)
	if err != nil {
		return tools.Decision{}, refusal(err, true)
	}
	if step.Result.Posture == "" {
		step.Result.Posture = lt.lane.Posture(ctx)
	}
	write(c, step, func(done uploads.Completed) any {
		if done.Posture == "" {
			done.Posture = lt.lane.Posture(ctx)
		}
		return receipt(done)
	})
	if step.Refused != nil {
		return tools.Denied(refusal(step.Refused, true).(*tools.Refusal)), nil
	}
	if step.Replay {
		c.Replayed()
	}
	c.ReportMatter(step.Result.Upload.Matter)
	return tools.Executed(receipt(step.Result)), nil
}

// StatusInput is get_upload_status's input.
type StatusInput struct {
	UploadID string `json:"upload_id" jsonschema:"The upload_id begin_upload_session answered." schema:"minLength=1;maxLength=128"`
}

// StatusOutput is get_upload_status's answer.
type StatusOutput struct {
	attest.Envelope
	UploadID       string       `json:"upload_id"`
	Filename       string       `json:"filename"`
	SizeBytes      int64        `json:"size_bytes"`
	SHA256         string       `json:"sha256"`
	State          string       `json:"state"`
	Spent          bool         `json:"spent"`
	Reason         *string      `json:"reason"`
	ScannerPosture string       `json:"scanner_posture"`
	DocumentID     *string      `json:"document_id"`
	CreatedAt      attest.Time  `json:"created_at"`
	UpdatedAt      attest.Time  `json:"updated_at"`
	OpenUntil      *attest.Time `json:"open_until"`
}

func (lt *laneTools) status(ctx context.Context, c *tools.Call, in StatusInput) (StatusOutput, error) {
	u, err := lt.lane.Status(ctx, caller(c), in.UploadID)
	if err != nil {
		return StatusOutput{}, refusal(err, false)
	}
	b := attest.New(c.Now, u.Matter, "Read the upload's own row: its state is as the lane, the scan gate and intake last wrote it.")
	b.Row(attest.URN(u.Tenant, "upload", u.ID), u.UpdatedAt)
	b.Add(attest.Item{ProvenanceIDs: []string{attest.URN(u.Tenant, "upload", u.ID)}, VerificationStatus: attest.Grounded})
	posture := lt.lane.Posture(ctx)
	out := StatusOutput{
		Envelope: b.Envelope(), UploadID: u.ID, Filename: u.Filename, SizeBytes: u.Size, SHA256: u.SHA256,
		State: string(u.State), Spent: u.State.Spent(), ScannerPosture: string(posture),
		CreatedAt: attest.At(u.CreatedAt), UpdatedAt: attest.At(u.UpdatedAt),
	}
	if u.Reason != "" {
		out.Reason = &u.Reason
	}
	if u.DocumentID != "" {
		out.DocumentID = &u.DocumentID
	}
	if u.State == uploads.StateOpen {
		t := attest.At(u.ExpiresAt)
		out.OpenUntil = &t
	}
	if u.State == uploads.StateScanPending && posture == scan.Broken {
		out.Envelope.Verification.Notes = append(out.Envelope.Verification.Notes,
			"The scanner is BROKEN: uploads are accepted, but their verdicts will be scan_failed until it is repaired.")
	}
	c.ReportMatter(u.Matter)
	return out, nil
}

// DownloadInput is get_document_download's input.
type DownloadInput struct {
	CaseID     string `json:"case_id" jsonschema:"The matter's case_id (from list_matters)." schema:"minLength=1;maxLength=128"`
	DocumentID string `json:"document_id" jsonschema:"The document's id (from list_documents)." schema:"minLength=1;maxLength=128"`
	Version    int    `json:"version,omitempty" jsonschema:"The version to download; default the document's current version." schema:"minimum=1;maximum=9999"`
}

// DownloadOutput is get_document_download's answer.
type DownloadOutput struct {
	attest.Envelope
	URL        string      `json:"url"`
	ExpiresAt  attest.Time `json:"expires_at"`
	DocumentID string      `json:"document_id"`
	Version    int         `json:"version"`
	Filename   string      `json:"filename"`
	MediaType  string      `json:"media_type"`
	SizeBytes  int64       `json:"size_bytes"`
	SHA256     string      `json:"sha256"`
}

func (lt *laneTools) download(ctx context.Context, c *tools.Call, in DownloadInput) (DownloadOutput, error) {
	rows, err := downloads.Resolve(ctx, lt.store, c.Who, in.CaseID, in.DocumentID, in.Version)
	switch {
	case errors.Is(err, downloads.ErrNotProvisioned):
		return DownloadOutput{}, tools.Refuse(tools.ClassNotProvisioned, "This document version has no stored file to download; its text is available through the read tools.")
	case err != nil:
		return DownloadOutput{}, err // the funnel's NOT_FOUND, or UNAVAILABLE
	}
	v := rows.Version
	token := downloads.NewToken()
	link := downloads.Link{
		Requester: c.Credential.Reference(), KeyHash: c.Credential.KeyHash, Tenant: c.Credential.Tenant,
		Matter: in.CaseID, Document: in.DocumentID, Version: v.Number, ObjectKey: v.ObjectKey,
		Filename: v.Filename, MediaType: v.MediaType, SHA256: v.SHA256, Size: v.SizeBytes,
		CreatedAt: c.Now, ExpiresAt: c.Now.Add(downloads.LinkLife).Truncate(time.Second),
	}
	item, err := link.Item(downloads.HashToken(token))
	if err != nil {
		return DownloadOutput{}, err
	}
	c.Write(tools.Write{Ops: []store.Op{store.PutOp(item, store.NotExists())}})

	b := attest.New(c.Now, in.CaseID, "Read the matter, the document and the version rows; the file is the version's stored object, checked against its SHA-256 when it was stored.")
	b.Row(attest.URN(c.Credential.Tenant, "matter", rows.Matter.ID), rows.Matter.UpdatedAt)
	b.Row(attest.URN(c.Credential.Tenant, "document", rows.Document.ID), rows.Document.UpdatedAt)
	status := attest.Grounded
	if rows.Document.ChecksumVerifiedAt != nil && rows.Document.SHA256 == v.SHA256 {
		status = attest.Verified
	}
	version := attest.URN(c.Credential.Tenant, "version", rows.Document.ID+"/v"+strconv.Itoa(v.Number))
	b.Row(version, v.UpdatedAt)
	b.Add(attest.Item{ProvenanceIDs: []string{version}, VerificationStatus: status})
	return DownloadOutput{
		Envelope: b.Envelope(), URL: lt.base + downloads.PathPrefix + token, ExpiresAt: attest.At(link.ExpiresAt),
		DocumentID: in.DocumentID, Version: v.Number, Filename: v.Filename, MediaType: v.MediaType,
		SizeBytes: v.SizeBytes, SHA256: v.SHA256,
	}, nil
}
