// Package intake takes a clean upload into the matter record, pending
// privilege review (issue 18; docs/contracts.md §5): the scan gate
// (shared/scan/gate) calls Intake.Take for each upload it found clean, so
// the PDF engine (package extract) runs in the scangate function and the
// dev server's in-process gate, never in /mcp.
//
// # Take, step by step
//
//  1. The verified object (staging verified/<id>) is copied to the record
//     bucket under obj/<id>, the key of the upload's own object id, so a
//     repeat copies onto itself.
//  2. Its bytes are read back from the record bucket, held to the
//     upload's size and SHA-256, and their text extracted page by page
//     (extract.Extractor: media type sniffed from the bytes, text state
//     and reason).
//  3. The chunks are written in transactions of store.MaxTransactItems
//     under NotExists on keys derived from the upload (document
//     DocumentID(upload), version 1, seq 1..n), pending review and
//     privileged: a repeat skips the rows already there.
//  4. One transaction writes the document (kind "upload", review_state
//     pending_review, privilege "privileged" as the fail-closed
//     placeholder, title from the filename, the source upload and
//     credential), version 1 (SHA-256, size, sniffed media type, record
//     key, text state and reason) and moves the upload clean → in_review
//     with the document's id.
//
// A failure before step 4 leaves chunk rows that no read reaches (package
// records serves no chunk pending review) and returns the error: the gate
// releases its intake claim and the redelivered event (or the sweeper's
// intake duty, gate.IntakeDuty) runs Take again, which finds what was done
// and finishes. Once step 4 committed the upload is in_review, which the
// gate never hands to intake again: a later delivery makes no second
// document.
package intake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/intake/extract"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/scan/gate"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/uploads"
)

// Kind is the kind of a document intake makes (records.DocumentKinds);
// privilege review may set another.
const Kind = "upload"

// DocumentIDPrefix starts the id of a document made of an upload: the
// upload's object id follows (DocumentID).
const DocumentIDPrefix = "d_up_"

// DocumentID is the id of the document made of upload u: derived from the
// upload, so every delivery of its event names the same rows.
func DocumentID(u uploads.Upload) string { return DocumentIDPrefix + string(u.Object) }

// maxTitle bounds a title taken from a filename, in runes.
const maxTitle = 200

// Title is a document's title taken from its upload's filename: the base
// name without its extension ("Lease.final.pdf" → "Lease.final"), or the
// whole name when that leaves nothing, at most 200 characters.
func Title(filename string) string {
	base := path.Base(strings.ReplaceAll(filename, "\\", "/"))
	t := strings.TrimSpace(strings.TrimSuffix(base, path.Ext(base)))
	if t == "" || t == "." {
		t = strings.TrimSpace(base)
	}
	if t == "" || t == "." || t == "/" {
		t = "Untitled upload"
	}
	if utf8.RuneCountInString(t) > maxTitle {
		t = string([]rune(t)[:maxTitle])
	}
	return t
}

// Options configure an Intake.
type Options struct {
	Store store.Store
	// Blob holds the staging and record buckets.
	Blob blob.Objects
	// Extractor reads the text (built once per process; the caller closes
	// it). When nil, one is built with ExtractOptions at the first Take
	// (the dev server's, so it starts without compiling the PDF engine)
	// and closed by Close.
	Extractor      *extract.Extractor
	ExtractOptions *extract.Options
	Logger         *slog.Logger
	// Now is the clock of the rows (time.Now if nil).
	Now func() time.Time
	// TempDir is where a file is held while its text is read ("" is
	// os.TempDir: /tmp on Lambda).
	TempDir string
}

// Intake is the scan gate's gate.Intake. Safe for concurrent use.
type Intake struct {
	o Options

	once  sync.Once
	ext   *extract.Extractor
	exErr error
	owned bool
}

var _ gate.Intake = (*Intake)(nil)

// New returns the intake. Store and Blob are required.
func New(o Options) (*Intake, error) {
	if o.Store == nil || o.Blob == nil {
		return nil, errors.New("intake: a store and a blob store are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Intake{o: o, ext: o.Extractor}, nil
}

// extractor is Options.Extractor, or the one built at first use.
func (in *Intake) extractor() (*extract.Extractor, error) {
	if in.o.Extractor != nil {
		return in.o.Extractor, nil
	}
	in.once.Do(func() {
		in.ext, in.exErr = extract.New(in.o.ExtractOptions)
		in.owned = in.exErr == nil
	})
	return in.ext, in.exErr
}

// Close closes an extractor Take built (not Options.Extractor).
func (in *Intake) Close() error {
	in.once.Do(func() {}) // no build after Close
	if in.owned {
		return in.ext.Close()
	}
	return nil
}

// ErrObjectChanged: the record bucket's copy is not the upload's bytes
// (size or SHA-256). Nothing is written; the error is returned for a retry.
var ErrObjectChanged = errors.New("intake: the stored object is not the upload's bytes")

// Take implements gate.Intake (see the package doc). An upload that is not
// clean, or already names its document, is left alone.
func (in *Intake) Take(ctx context.Context, u uploads.Upload) error {
	if u.State != uploads.StateClean || u.DocumentID != "" {
		return nil
	}
	stored := blob.Stored(u.Object)
	if err := in.copy(ctx, u, stored); err != nil {
		return err
	}
	res, err := in.extract(ctx, u, stored)
	if err != nil {
		return err
	}
	now := in.o.Now().UTC()
	doc, ver, chunks, err := Rows(u, res, stored.Key, now)
	if err != nil {
		return err
	}
	if err := in.putChunks(ctx, u.Tenant, chunks, ver.PageCount); err != nil {
		return err
	}
	return in.commit(ctx, u, doc, ver, now)
}

// copy puts the verified object in the record bucket; a repeat copies onto
// itself, and when verified/ no longer holds it the record's copy must.
func (in *Intake) copy(ctx context.Context, u uploads.Upload, stored blob.Ref) error {
	err := in.o.Blob.CopyObject(ctx, blob.Verified(u.Object), stored)
	if errors.Is(err, blob.ErrNotFound) {
		if _, herr := in.o.Blob.HeadObject(ctx, stored); herr == nil {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("copy %s to the record bucket: %w", u.ID, err)
	}
	return nil
}

// extract reads the record's copy into a temporary file (a PDF is read at
// random), holds it to the upload's size and digest, and extracts its text.
func (in *Intake) extract(ctx context.Context, u uploads.Upload, stored blob.Ref) (*extract.Result, error) {
	obj, err := in.o.Blob.GetObject(ctx, stored)
	if err != nil {
		return nil, fmt.Errorf("read %s from the record bucket: %w", u.ID, err)
	}
	defer obj.Body.Close()
	f, err := os.CreateTemp(in.o.TempDir, "intake-*")
	if err != nil {
		return nil, fmt.Errorf("intake %s: %w", u.ID, err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(obj.Body, u.Size+1))
	if err != nil {
		return nil, fmt.Errorf("read %s from the record bucket: %w", u.ID, err)
	}
	if n != u.Size || hex.EncodeToString(h.Sum(nil)) != u.SHA256 {
		return nil, fmt.Errorf("%s: %w", u.ID, ErrObjectChanged)
	}
	ex, err := in.extractor()
	if err != nil {
		return nil, fmt.Errorf("intake %s: start the text extractor: %w", u.ID, err)
	}
	res, err := ex.Extract(ctx, f, n, extract.Hint{Filename: u.Filename, MediaType: u.MediaType})
	if err != nil {
		return nil, fmt.Errorf("intake %s: %w", u.ID, err)
	}
	return res, nil
}

// Rows are the record rows of upload u with text res at now: the document
// (pending review, privileged), version 1 and its chunks (pending review,
// privileged, one page each). A chunk of white space alone is left out (a
// chunk row holds text).
func Rows(u uploads.Upload, res *extract.Result, objectKey string, now time.Time) (records.Document, records.Version, []records.Chunk, error) {
	id := DocumentID(u)
	pages := max(res.Pages, 1)
	for _, c := range res.Chunks {
		pages = max(pages, c.Page)
	}
	doc := records.Document{ID: id, Matter: u.Matter, Title: Title(u.Filename), Kind: Kind,
		Privilege: records.PrivilegePrivileged, CurrentVersion: 1, PageCount: pages, SHA256: u.SHA256,
		ReviewState: records.ReviewPending, SourceUpload: u.ID, SourceCredential: u.CredentialID,
		TextState: records.TextState(res.TextState), TextReason: res.Reason, CreatedAt: now, UpdatedAt: now}
	ver := records.Version{DocumentID: id, Matter: u.Matter, Number: 1, SHA256: u.SHA256, PageCount: pages,
		SizeBytes: u.Size, MediaType: res.MediaType, Filename: u.Filename, ObjectKey: objectKey,
		TextState: records.TextState(res.TextState), TextReason: res.Reason, ReviewState: records.ReviewPending,
		CreatedAt: now, UpdatedAt: now}
	var chunks []records.Chunk
	for _, c := range res.Chunks {
		if strings.TrimSpace(c.Text) == "" {
			continue
		}
		chunks = append(chunks, records.Chunk{DocumentID: id, Matter: u.Matter, Version: 1, Seq: len(chunks) + 1,
			PageStart: c.Page, PageEnd: c.Page, Text: c.Text, Privilege: records.PrivilegePrivileged,
			ReviewState: records.ReviewPending, CreatedAt: now, UpdatedAt: now})
	}
	if len(chunks) > 99999 {
		return doc, ver, nil, fmt.Errorf("intake %s: %d chunks, over a version's 99,999", u.ID, len(chunks))
	}
	return doc, ver, chunks, nil
}

// putChunks writes the chunk rows in transactions of store.MaxTransactItems,
// each row NotExists; a batch cancelled because rows of an earlier delivery
// are there is written row by row, skipping those.
func (in *Intake) putChunks(ctx context.Context, tenant string, chunks []records.Chunk, pages int) error {
	for start := 0; start < len(chunks); start += store.MaxTransactItems {
		batch := chunks[start:min(start+store.MaxTransactItems, len(chunks))]
		ops := make([]store.Op, len(batch))
		items := make([]store.Item, len(batch))
		for i, c := range batch {
			it, err := records.ChunkItem(tenant, c, pages)
			if err != nil {
				return fmt.Errorf("intake chunk %d of %s: %w", c.Seq, c.DocumentID, err)
			}
			items[i], ops[i] = it, store.PutOp(it, store.NotExists())
		}
		err := in.o.Store.Transact(ctx, ops)
		var canceled *store.TxCanceledError
		if errors.As(err, &canceled) {
			for _, it := range items {
				if perr := in.o.Store.Put(ctx, it, store.NotExists()); perr != nil && !errors.Is(perr, store.ErrExists) {
					return fmt.Errorf("intake chunks of %s: %w", batch[0].DocumentID, perr)
				}
			}
			err = nil
		}
		if err != nil {
			return fmt.Errorf("intake chunks of %s: %w", batch[0].DocumentID, err)
		}
	}
	return nil
}

// commit is step 4: the document, its version and the upload's move to
// in_review, in one transaction. A transaction cancelled because the
// upload moved on already (another delivery committed it) is done.
func (in *Intake) commit(ctx context.Context, u uploads.Upload, doc records.Document, ver records.Version, now time.Time) error {
	di, err := records.DocumentItem(u.Tenant, doc)
	if err != nil {
		return fmt.Errorf("intake %s: %w", u.ID, err)
	}
	vi, err := records.VersionItem(u.Tenant, ver)
	if err != nil {
		return fmt.Errorf("intake %s: %w", u.ID, err)
	}
	err = in.o.Store.Transact(ctx, []store.Op{
		store.PutOp(di, store.NotExists()),
		store.PutOp(vi, store.NotExists()),
		uploads.Transition(u.ID, uploads.StateClean, uploads.StateInReview, uploads.InReviewSet(doc.ID), now),
	})
	var canceled *store.TxCanceledError
	if errors.As(err, &canceled) {
		it, gerr := in.o.Store.Get(ctx, uploads.UploadKey(u.ID))
		if gerr == nil {
			if cur, derr := uploads.DecodeUpload(it); derr == nil && cur.State == uploads.StateInReview && cur.DocumentID == doc.ID {
				return nil
			}
		}
	}
	if err != nil {
		return fmt.Errorf("intake %s: commit the document: %w", u.ID, err)
	}
	in.o.Logger.InfoContext(ctx, "intake", "upload", u.ID, "document", doc.ID, "matter", u.Matter,
		"media_type", ver.MediaType, "text_state", string(ver.TextState), "pages", ver.PageCount)
	return nil
}
