package intake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/blobtest"
	"github.com/custodymcp/custody/shared/blob/s3local"
	"github.com/custodymcp/custody/shared/intake"
	"github.com/custodymcp/custody/shared/intake/extract"
	"github.com/custodymcp/custody/shared/intake/intaketest"
	"github.com/custodymcp/custody/shared/lambdaio/s3event"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/scan/gate"
	"github.com/custodymcp/custody/shared/scan/signature"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/filestore"
	"github.com/custodymcp/custody/shared/store/storetest"
	"github.com/custodymcp/custody/shared/uploads"
	"github.com/custodymcp/custody/shared/uploads/uploadstest"
)

var epoch = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// One extractor for the package's tests: the engine compiles once per
// process.
var (
	extOnce sync.Once
	ext     *extract.Extractor
	extErr  error
)

func extractor(t testing.TB) *extract.Extractor {
	t.Helper()
	extOnce.Do(func() { ext, extErr = extract.New(nil) })
	if extErr != nil {
		t.Fatal(extErr)
	}
	return ext
}

// env is the demo firm on the file engine behind the store's fault
// decorator, the local S3 server, the lane, and the scan gate with the
// real intake over them.
type env struct {
	clock  *clock
	store  *storetest.Faulty
	blob   *blobtest.Faulty
	gate   *gate.Gate
	intake *intake.Intake
	dep    uploadstest.Depositor
}

func newEnv(t testing.TB) *env {
	t.Helper()
	c := &clock{now: epoch}
	fs, err := filestore.Open(filepath.Join(t.TempDir(), "custody.db"), filestore.Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	ctx := context.Background()
	fx, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := records.Import(ctx, fs, fx, epoch.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	_, cred, err := auth.Mint(ctx, fs, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney,
		Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite}, Label: "intake depositor"}, epoch.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	srv := s3local.Start(t, s3local.Options{Now: c.Now})
	eng, err := blob.New(s3local.NewClient(srv.URL, blob.WithClock(c.Now)), s3local.Buckets, blob.Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	st, bl := storetest.NewFaulty(fs), blobtest.NewFaulty(eng)
	lane := uploads.New(uploads.Options{Store: st, Blob: bl, Scanner: signature.New()})
	in, err := intake.New(intake.Options{Store: st, Blob: bl, Extractor: extractor(t), Now: c.Now, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(gate.Options{Store: st, Blob: bl, Buckets: s3local.Buckets, Scanner: signature.New(), Intake: in, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return &env{clock: c, store: st, blob: bl, gate: g, intake: in,
		dep: uploadstest.Depositor{Lane: lane, Store: st, Credential: cred, Admin: seed.DemoAdmin, Now: c.Now}}
}

func (e *env) deposit(t testing.TB, filename string, body []byte) uploads.Upload {
	t.Helper()
	return e.dep.Deposit(t, seed.Alvarez, filename, body)
}

// deliver hands the gate the S3 event of u's verified/ object, as Lambda
// would (decoded from JSON).
func (e *env) deliver(t testing.TB, u uploads.Upload) (gate.Outcome, error) {
	t.Helper()
	raw, err := json.Marshal(s3event.ObjectCreated("Copy", "us-east-1", s3local.Buckets.Staging, blob.Verified(u.Object).Key, 1, "etag", epoch))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.S3Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	out, err := e.gate.HandleS3(context.Background(), ev)
	if len(out) != 1 {
		t.Fatalf("HandleS3 = %v, want one outcome", out)
	}
	return out[0], err
}

func (e *env) upload(t testing.TB, id string) uploads.Upload {
	t.Helper()
	it, err := e.store.Unwrap().Get(context.Background(), uploads.UploadKey(id))
	if err != nil {
		t.Fatal(err)
	}
	u, err := uploads.DecodeUpload(it)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// raw reads a row past the decorator and the record's read funnel.
func (e *env) raw(t *testing.T, k store.Key, v any) bool {
	t.Helper()
	it, err := e.store.Unwrap().Get(context.Background(), k)
	if errors.Is(err, store.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := records.DecodeRow(it, v); err != nil {
		t.Fatal(err)
	}
	return true
}

// rawRows counts the rows of the Alvarez partition under prefix.
func (e *env) rawRows(t *testing.T, prefix string) []store.Item {
	t.Helper()
	p, err := e.store.Unwrap().Query(context.Background(), store.Query{PK: records.MatterPK(seed.DemoTenant, seed.Alvarez),
		SK: store.SortKeyCondition{Prefix: prefix}, Limit: store.MaxQueryLimit})
	if err != nil {
		t.Fatal(err)
	}
	return p.Items
}

// served reports what the record's read funnel serves of document id: the
// document, its versions, its chunks (by Chunks and by AllChunks).
func served(t *testing.T, st store.Store, id string) (doc bool, versions, chunks, matterChunks int) {
	t.Helper()
	ctx := context.Background()
	repo := records.NewRepo(st)
	_, err := repo.Document(ctx, seed.DemoTenant, seed.Alvarez, id)
	switch {
	case err == nil:
		doc = true
	case !errors.Is(err, store.ErrNotFound):
		t.Fatal(err)
	}
	if docs, err := repo.DocumentsByID(ctx, seed.DemoTenant, seed.Alvarez, []string{id}); err != nil {
		t.Fatal(err)
	} else if _, ok := docs[id]; ok != doc {
		t.Errorf("DocumentsByID serves %s: %v, Document: %v", id, ok, doc)
	}
	all, err := repo.Documents(ctx, seed.DemoTenant, seed.Alvarez)
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, d := range all {
		listed = listed || d.ID == id
	}
	if listed != doc {
		t.Errorf("Documents lists %s: %v, Document: %v", id, listed, doc)
	}
	vs, err := repo.Versions(ctx, seed.DemoTenant, seed.Alvarez, id)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := repo.Chunks(ctx, seed.DemoTenant, seed.Alvarez, id, 1, 1, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for c, err := range repo.AllChunks(ctx, seed.DemoTenant, seed.Alvarez) {
		if err != nil {
			t.Fatal(err)
		}
		if c.DocumentID == id {
			matterChunks++
		}
	}
	return doc, len(vs), len(cp.Chunks), matterChunks
}

// A clean three-page PDF becomes a document of its matter pending review:
// its bytes in the record bucket under the upload's key, one chunk per
// page (pending, privileged), the document (kind upload, privileged, title
// from the filename, the source upload and credential), version 1 (digest,
// size, the sniffed media type, the record key, text complete) and the
// upload in_review naming it — and the record's reads serve none of it.
func TestACleanPDFBecomesADocumentPendingReviewThatNothingServes(t *testing.T) {
	e := newEnv(t)
	pdf := intaketest.ThreePages(t)
	u := e.deposit(t, "Site inspection.final.pdf", pdf)
	// The declared media type is a lie: the bytes decide.
	out, err := e.deliver(t, u)
	if err != nil || out.Action != gate.Decided || out.State != uploads.StateClean {
		t.Fatalf("delivery = %+v, %v; want decided clean", out, err)
	}
	got := e.upload(t, u.ID)
	id := intake.DocumentID(u)
	if got.State != uploads.StateInReview || got.DocumentID != id {
		t.Fatalf("upload after intake = %s naming %q, want in_review naming %s", got.State, got.DocumentID, id)
	}
	var d records.Document
	if !e.raw(t, records.DocumentKey(seed.DemoTenant, seed.Alvarez, id), &d) {
		t.Fatal("no document row")
	}
	if d.ReviewState != records.ReviewPending || d.Privilege != records.PrivilegePrivileged || d.Kind != intake.Kind ||
		d.Title != "Site inspection.final" || d.SourceUpload != u.ID || d.SourceCredential != u.CredentialID ||
		d.SHA256 != u.SHA256 || d.PageCount != 3 || d.CurrentVersion != 1 || d.TextState != records.TextComplete {
		t.Errorf("document = %+v", d)
	}
	var v records.Version
	if !e.raw(t, records.VersionKey(seed.DemoTenant, seed.Alvarez, id, 1), &v) {
		t.Fatal("no version row")
	}
	if v.MediaType != "application/pdf" || v.SizeBytes != int64(len(pdf)) || v.SHA256 != u.SHA256 ||
		v.ObjectKey != blob.Stored(u.Object).Key || v.TextState != records.TextComplete || v.TextReason != "" ||
		v.ReviewState != records.ReviewPending || v.Filename != "Site inspection.final.pdf" {
		t.Errorf("version = %+v", v)
	}
	obj, err := e.blob.Unwrap().GetObject(context.Background(), blob.Stored(u.Object))
	if err != nil {
		t.Fatalf("the record bucket holds no obj/%s: %v", u.Object, err)
	}
	stored, _ := io.ReadAll(obj.Body)
	obj.Body.Close()
	if !bytes.Equal(stored, pdf) {
		t.Error("the record bucket's copy is not the upload's bytes")
	}
	chunks := e.rawRows(t, "CHUNK#"+id+"#")
	if len(chunks) != 3 {
		t.Fatalf("%d chunk rows, want one per page (3)", len(chunks))
	}
	for i, it := range chunks {
		var c records.Chunk
		if err := records.DecodeRow(it, &c); err != nil {
			t.Fatal(err)
		}
		if c.PageStart != i+1 || c.PageEnd != i+1 || c.Privilege != records.PrivilegePrivileged || c.ReviewState != records.ReviewPending ||
			!strings.Contains(c.Text, intaketest.ThreePagePhrases[i]) {
			t.Errorf("chunk %d = %+v", i+1, c)
		}
	}
	if doc, vs, cs, all := served(t, e.store, id); doc || vs != 0 || cs != 0 || all != 0 {
		t.Errorf("the record serves the pending document: doc %v, %d versions, %d chunks, %d in the matter's", doc, vs, cs, all)
	}
}

// Text files and files of no text kind: invalid UTF-8 is unavailable "not
// UTF-8" with no chunks; an image is stored, reviewable and downloadable,
// unavailable "unsupported type", no chunks; a text file with CRLF lines
// and a 5,000-character line is split as specified (a page ends at the
// last line break within 3,000 characters; the long line is cut at 3,000).
func TestTextAndOtherFilesTakeTheirTextState(t *testing.T) {
	e := newEnv(t)
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0}, 64)...)
	long := strings.Repeat("x", 5000)
	text := "First line\r\nSecond line\r\n" + long + "\r\nlast\r\n"
	cases := []struct {
		name      string
		body      []byte
		state     records.TextState
		reason    string
		chunks    int
		mediaType string
	}{
		{"notes.txt", []byte("caf\xe9 au lait\n"), records.TextUnavailable, extract.ReasonNotUTF8, 0, "text/plain"},
		{"photo.png", png, records.TextUnavailable, extract.ReasonUnsupportedType, 0, "image/png"},
		{"minutes.md", []byte(text), records.TextComplete, "", 3, "text/markdown; charset=utf-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := e.deposit(t, c.name, c.body)
			if _, err := e.deliver(t, u); err != nil {
				t.Fatal(err)
			}
			id := intake.DocumentID(u)
			var v records.Version
			if !e.raw(t, records.VersionKey(seed.DemoTenant, seed.Alvarez, id, 1), &v) {
				t.Fatal("no version: intake made no document")
			}
			if v.TextState != c.state || v.TextReason != c.reason || v.MediaType != c.mediaType {
				t.Errorf("version text %s %q media %q, want %s %q %q", v.TextState, v.TextReason, v.MediaType, c.state, c.reason, c.mediaType)
			}
			rows := e.rawRows(t, "CHUNK#"+id+"#")
			if len(rows) != c.chunks {
				t.Fatalf("%d chunks, want %d", len(rows), c.chunks)
			}
			if c.name == "minutes.md" {
				var joined string
				for _, it := range rows {
					var ch records.Chunk
					_ = records.DecodeRow(it, &ch)
					if n := len([]rune(ch.Text)); n > extract.DefaultPageChars {
						t.Errorf("chunk %d has %d characters, over a text page's %d", ch.Seq, n, extract.DefaultPageChars)
					}
					joined += ch.Text
				}
				if joined != text {
					t.Error("the text pages do not join to the file as written")
				}
			}
		})
	}
}

// A store fault after the chunk rows, before the document transaction:
// no document is visible and the chunk rows reach no read; the redelivered
// event completes it; after three deliveries there is one document.
func TestAFaultBeforeTheDocumentTransactionLeavesNothingServedAndTheRedeliveryCompletesIt(t *testing.T) {
	e := newEnv(t)
	u := e.deposit(t, "brief.pdf", intaketest.ThreePages(t))
	id := intake.DocumentID(u)
	e.store.Add(storetest.Rule{Method: storetest.MethodTransact, Key: storetest.Prefix("UPLOAD#", ""), Nth: 1, Err: store.ErrUnavailable})

	if _, err := e.deliver(t, u); err == nil {
		t.Fatal("the first delivery succeeded past a failed document transaction")
	}
	if n := len(e.rawRows(t, "CHUNK#"+id+"#")); n != 3 {
		t.Fatalf("%d chunk rows after the fault, want the 3 written before it", n)
	}
	var d records.Document
	if e.raw(t, records.DocumentKey(seed.DemoTenant, seed.Alvarez, id), &d) {
		t.Fatal("a document row survived the failed transaction")
	}
	if doc, vs, cs, all := served(t, e.store.Unwrap(), id); doc || vs != 0 || cs != 0 || all != 0 {
		t.Errorf("after the fault the record serves: doc %v, %d versions, %d chunks, %d in the matter's", doc, vs, cs, all)
	}
	if got := e.upload(t, u.ID); got.State != uploads.StateClean || !got.IntakeClaimedAt.IsZero() {
		t.Errorf("upload after the failed intake = %s, claim %v; want clean with the claim released", got.State, got.IntakeClaimedAt)
	}

	out, err := e.deliver(t, u)
	if err != nil || out.Action != gate.Finished {
		t.Fatalf("redelivery = %+v, %v; want finished", out, err)
	}
	out, err = e.deliver(t, u)
	if err != nil || out.Action != gate.Ignored {
		t.Fatalf("third delivery = %+v, %v; want ignored", out, err)
	}
	docs := 0
	for _, it := range e.rawRows(t, "DOC#") {
		var d records.Document
		_ = records.DecodeRow(it, &d)
		if d.SourceUpload == u.ID {
			docs++
		}
	}
	if docs != 1 || len(e.rawRows(t, "CHUNK#"+id+"#")) != 3 || len(e.rawRows(t, "DOCV#"+id+"#")) != 1 {
		t.Errorf("after three deliveries: %d documents, want 1 (with 3 chunks and 1 version)", docs)
	}
	if got := e.upload(t, u.ID); got.State != uploads.StateInReview || got.DocumentID != id {
		t.Errorf("upload = %s naming %q, want in_review naming %s", got.State, got.DocumentID, id)
	}
}

// A delivery that dies while running intake, after Lambda's retries: the
// upload stays clean with its claim, in the sweeper index under
// uploads.KindIntake; once the claim lapses the gate's intake duty claims
// it and finishes, and a second pass does nothing.
func TestTheIntakeDutyResumesAnIntakeWhoseClaimLapsed(t *testing.T) {
	e := newEnv(t)
	u := e.deposit(t, "memo.txt", []byte("The periwinkle scaffolding buckled.\n"))
	// The document transaction fails and so does the claim's release: as
	// if the process died with the claim held.
	e.store.Add(storetest.Rule{Method: storetest.MethodTransact, Key: storetest.Prefix("UPLOAD#", ""), Nth: 1, Err: store.ErrUnavailable})
	e.store.Add(storetest.Rule{Method: storetest.MethodUpdate, Key: storetest.Prefix("UPLOAD#", ""), Nth: 2, Err: store.ErrUnavailable})
	if _, err := e.deliver(t, u); err == nil {
		t.Fatal("the delivery succeeded")
	}
	if got := e.upload(t, u.ID); got.State != uploads.StateClean || got.IntakeClaimedAt.IsZero() {
		t.Fatalf("upload = %s, claim %v; want clean with its claim held", got.State, got.IntakeClaimedAt)
	}
	duty := &gate.IntakeDuty{Gate: e.gate}
	if rep, err := duty.Sweep(context.Background(), e.clock.Now()); err != nil || rep.Actions[gate.ActionIntakeResumed] != 0 {
		t.Fatalf("a sweep while the claim lives = %v, %v; want nothing done", rep, err)
	}
	e.clock.Advance(uploads.IntakeClaimTTL + time.Second)
	rep, err := duty.Sweep(context.Background(), e.clock.Now())
	if err != nil || rep.Actions[gate.ActionIntakeResumed] != 1 {
		t.Fatalf("the sweep after the claim lapsed = %v, %v; want one intake resumed", rep, err)
	}
	if got := e.upload(t, u.ID); got.State != uploads.StateInReview || got.DocumentID != intake.DocumentID(u) {
		t.Errorf("upload = %s naming %q, want in_review", got.State, got.DocumentID)
	}
	e.clock.Advance(uploads.IntakeClaimTTL + time.Second)
	if rep, err := duty.Sweep(context.Background(), e.clock.Now()); err != nil || rep.Actions[gate.ActionIntakeResumed] != 0 {
		t.Errorf("a later sweep = %v, %v; want nothing (in_review left the index)", rep, err)
	}
}

// A damaged PDF (its cross-reference table and trailer cut off) is taken
// in with its text partial or unavailable and the reason said, and the
// gate goes on to serve the next event.
func TestADamagedPDFIsTakenInWithItsReasonAndTheNextUploadFollows(t *testing.T) {
	e := newEnv(t)
	pdf := intaketest.ThreePages(t)
	cut := pdf[:bytes.LastIndex(pdf, []byte("xref"))]
	bad := e.deposit(t, "damaged.pdf", cut)
	if out, err := e.deliver(t, bad); err != nil || out.Action != gate.Decided {
		t.Fatalf("the damaged PDF's delivery = %+v, %v", out, err)
	}
	var v records.Version
	if !e.raw(t, records.VersionKey(seed.DemoTenant, seed.Alvarez, intake.DocumentID(bad), 1), &v) {
		t.Fatal("the damaged PDF made no document")
	}
	if v.TextState == records.TextComplete || v.TextReason == "" {
		t.Errorf("the damaged PDF's text is %s %q, want partial or unavailable with a reason", v.TextState, v.TextReason)
	}
	good := e.deposit(t, "next.pdf", intaketest.PDF(t, []string{"The next file."}))
	if _, err := e.deliver(t, good); err != nil {
		t.Fatal(err)
	}
	if got := e.upload(t, good.ID); got.State != uploads.StateInReview {
		t.Errorf("the next upload is %s, want in_review", got.State)
	}
}

// On AWS the intake duty runs in the scan gate's own function, on its
// schedule: a "Scheduled Event" through Handle resumes an intake whose
// claim lapsed, as the dev server's sweeper does.
func TestTheGatesScheduleResumesAnIntakeWhoseClaimLapsed(t *testing.T) {
	e := newEnv(t)
	u := e.deposit(t, "memo.txt", []byte("The periwinkle scaffolding buckled.\n"))
	e.store.Add(storetest.Rule{Method: storetest.MethodTransact, Key: storetest.Prefix("UPLOAD#", ""), Nth: 1, Err: store.ErrUnavailable})
	e.store.Add(storetest.Rule{Method: storetest.MethodUpdate, Key: storetest.Prefix("UPLOAD#", ""), Nth: 2, Err: store.ErrUnavailable})
	if _, err := e.deliver(t, u); err == nil {
		t.Fatal("the delivery succeeded")
	}
	scheduled := []byte(`{"version":"0","id":"5b3f2c1e","detail-type":"Scheduled Event","source":"aws.events",` +
		`"account":"111122223333","time":"2026-12-01T10:05:00Z","region":"eu-west-1","resources":[],"detail":{}}`)
	if err := e.gate.Handle(context.Background(), scheduled); err != nil {
		t.Fatal(err)
	}
	if got := e.upload(t, u.ID); got.State != uploads.StateClean {
		t.Fatalf("upload after a pass while the claim lives = %s, want clean", got.State)
	}
	e.clock.Advance(uploads.IntakeClaimTTL + time.Second)
	if err := e.gate.Handle(context.Background(), scheduled); err != nil {
		t.Fatal(err)
	}
	if got := e.upload(t, u.ID); got.State != uploads.StateInReview || got.DocumentID != intake.DocumentID(u) {
		t.Errorf("upload after the scheduled pass = %s naming %q, want in_review", got.State, got.DocumentID)
	}
}
