// Package importer takes a firm's own files into a matter through the
// upload lane's scan gate and intake (issue 18 §5, custodyctl import): each
// file is staged as verified/<id> with an upload row of origin import (no
// grant), and the same gate judges it — the scanner is never bypassed —
// and the same intake makes its document, pending privilege review.
//
// Who may import is a licensed attorney on the matter (not screened) or a
// firm administrator (review.Importer), read from the store at the start.
// With the scanner OFF the import is refused before anything is written. A
// file whose SHA-256 is already a version in the matter, or that is over
// the lane's size limit, is skipped and reported.
package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/intake/review"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/gate"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/uploads"
)

// Options configure an Importer.
type Options struct {
	Store store.Store
	// Blob holds the staging bucket, where files are put at verified/<id>.
	Blob blob.Objects
	// Gate is the scan gate the files go through (its intake makes the
	// documents).
	Gate *gate.Gate
	// Now is the rows' clock (time.Now if nil).
	Now func() time.Time
	// Wait bounds how long a file waits for its verdict and intake when
	// the verdict comes by event (GuardDuty) (0: 10 minutes); Poll is the
	// interval of its reads (0: 2 s).
	Wait, Poll time.Duration
}

// Importer imports files. Safe for concurrent use.
type Importer struct{ o Options }

// New returns the importer.
func New(o Options) (*Importer, error) {
	if o.Store == nil || o.Blob == nil || o.Gate == nil {
		return nil, errors.New("importer: a store, a blob store and the scan gate are required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Wait == 0 {
		o.Wait = 10 * time.Minute
	}
	if o.Poll == 0 {
		o.Poll = 2 * time.Second
	}
	return &Importer{o: o}, nil
}

// Outcomes of a file besides an upload state (infected, scan_failed,
// in_review, clean).
const (
	Skipped = "skipped"
)

// File is one file to import.
type File struct {
	Name   string
	Size   int64
	SHA256 string // lowercase hex of the bytes
	Body   io.ReadSeeker
}

// Line is what became of one file: the verdict (or skipped), the document
// and its text state when intake made one, and why when it did not.
type Line struct {
	File       string            `json:"file"`
	Verdict    string            `json:"verdict"`
	Upload     string            `json:"upload,omitempty"`
	DocumentID string            `json:"document_id,omitempty"`
	TextState  records.TextState `json:"text_state,omitempty"`
	Reason     string            `json:"reason,omitempty"`
}

// Check refuses an import before anything is written: who may not import
// into the matter (*review.Refused), an unknown matter
// (store.ErrNotFound), or the scanner OFF (*review.Refused).
func (im *Importer) Check(ctx context.Context, tenant, matter, by string) error {
	if _, err := review.Importer(ctx, im.o.Store, tenant, matter, by); err != nil {
		return err
	}
	if im.o.Gate.Posture(ctx) == scan.Off {
		return &review.Refused{Reason: "the scanner is OFF: no file is imported unscanned, and nothing was written"}
	}
	return nil
}

// Import imports one file into matter for by, after Check. A file the gate
// held (infected, scan_failed) is a Line, not an error; an error is the
// store or the object store failing.
func (im *Importer) Import(ctx context.Context, tenant, matter, by string, f File) (Line, error) {
	line := Line{File: f.Name}
	if err := im.Check(ctx, tenant, matter, by); err != nil {
		return line, err
	}
	if doc, found, err := VersionOf(ctx, im.o.Store, tenant, matter, f.SHA256); err != nil {
		return line, err
	} else if found {
		line.Verdict, line.DocumentID, line.Reason = Skipped, doc, "its SHA-256 is already a version in the matter"
		return line, nil
	}
	if limit := min(uploads.MaxUploadBytes, im.o.Gate.MaxBytes()); f.Size > limit {
		line.Verdict, line.Reason = Skipped, fmt.Sprintf("%d bytes, over the lane's limit of %d", f.Size, limit)
		return line, nil
	}
	id := blob.NewID()
	u, err := uploads.StageImport(ctx, im.o.Store, uploads.ImportRequest{Object: id, Tenant: tenant, Matter: matter, By: by,
		Filename: f.Name, Size: f.Size, SHA256: f.SHA256}, im.o.Now())
	if err != nil {
		return line, err
	}
	line.Upload = u.ID
	if _, err := f.Body.Seek(0, io.SeekStart); err != nil {
		return line, err
	}
	if err := im.o.Blob.PutObject(ctx, blob.Verified(id), f.Body, blob.PutOptions{}); err != nil {
		return line, fmt.Errorf("stage %s: %w", f.Name, err)
	}
	_, jerr := im.o.Gate.Judge(ctx, id)
	if jerr != nil && !errors.Is(jerr, gate.ErrEventDriven) {
		line.Verdict, line.Reason = "error", jerr.Error()
	}
	return im.settle(ctx, u.ID, line, errors.Is(jerr, gate.ErrEventDriven))
}

// settle reads the upload row (polling while the verdict is to come by
// event) and fills the line from it.
func (im *Importer) settle(ctx context.Context, uploadID string, line Line, wait bool) (Line, error) {
	deadline := time.Now().Add(im.o.Wait)
	for {
		it, err := im.o.Store.Get(ctx, uploads.UploadKey(uploadID))
		if err != nil {
			return line, fmt.Errorf("read upload %s: %w", uploadID, err)
		}
		u, err := uploads.DecodeUpload(it)
		if err != nil {
			return line, err
		}
		done := u.State != uploads.StateScanPending && u.State != uploads.StateClean
		if done || !wait || time.Now().After(deadline) {
			line.Verdict = string(u.State)
			switch u.State {
			case uploads.StateInfected:
				line.Reason = fmt.Sprintf("%v", u.Threats)
			case uploads.StateScanFailed:
				line.Reason = u.ScanReason
			case uploads.StateClean:
				if line.Reason == "" {
					line.Reason = "clean; intake not finished (the gate's retry or the sweeper finishes it)"
				}
			case uploads.StateScanPending:
				line.Reason = "no verdict yet"
			case uploads.StateInReview:
				line.Verdict, line.Reason = string(uploads.StateClean), ""
				line.DocumentID = u.DocumentID
				line.TextState, line.Reason = textState(ctx, im.o.Store, u)
			}
			return line, nil
		}
		select {
		case <-ctx.Done():
			return line, ctx.Err()
		case <-time.After(im.o.Poll):
		}
	}
}

func textState(ctx context.Context, st store.Store, u uploads.Upload) (records.TextState, string) {
	it, err := st.Get(ctx, records.VersionKey(u.Tenant, u.Matter, u.DocumentID, 1))
	if err != nil {
		return "", ""
	}
	var v records.Version
	if records.DecodeRow(it, &v) != nil {
		return "", ""
	}
	return v.TextState, v.TextReason
}

// VersionOf reports the document of matter one of whose versions has the
// SHA-256 digest (lowercase hex), of any review state, from one query of
// the matter's version rows.
func VersionOf(ctx context.Context, st store.Store, tenant, matter, digest string) (string, bool, error) {
	q := store.Query{PK: records.MatterPK(tenant, matter), SK: store.SortKeyCondition{Prefix: records.VersionRowsPrefix()}, Limit: store.MaxQueryLimit}
	for {
		p, err := st.Query(ctx, q)
		if err != nil {
			return "", false, fmt.Errorf("read the versions of %s: %w", matter, err)
		}
		for _, it := range p.Items {
			var v records.Version
			if err := records.DecodeRow(it, &v); err != nil {
				return "", false, err
			}
			if v.SHA256 == digest {
				return v.DocumentID, true, nil
			}
		}
		if p.NextToken == "" {
			return "", false, nil
		}
		q.PageToken = p.NextToken
	}
}
