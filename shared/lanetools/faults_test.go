package lanetools_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/blobtest"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/signature"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/store/storetest"
	"github.com/custodymcp/custody/shared/uploads"
)

// Through the strict front (issue 16): a part URL used other than as
// signed is refused 403 (a changed header, an extra unsigned x-amz-meta-*
// header, an edited query, past its expiry), the genuine headers with one
// body byte flipped are 400 BadDigest, and a plain PUT with the returned
// headers is 200. (A middle part under 5 MiB cannot come from the lane:
// sizes are signed; blobtest's "A 4 MiB middle part makes
// CompleteMultipartUpload ErrInvalid (EntityTooSmall)" holds s3local to it.)
func TestAPartURLIsRefusedUnlessUsedExactlyAsSigned(t *testing.T) {
	e := newLaneEnv(t, laneOptions{})
	f := newFile(pattern(100_000, 3))
	s := e.mustBegin(t, e.grant(t, seed.Alvarez, func(r *uploads.MintRequest) { r.MaxOpen = 1 }), seed.Alvarez, f)
	p := s.Parts[0]
	with := func(k, v string) map[string]string {
		h := map[string]string{}
		for hk, hv := range p.Headers {
			h[hk] = hv
		}
		h[k] = v
		return h
	}
	flipped := append([]byte(nil), f.body...)
	flipped[500] ^= 1
	for _, c := range []struct {
		name         string
		url          string
		headers      map[string]string
		body         []byte
		status       int
		code         string
		advanceClock time.Duration
	}{
		{"a changed checksum header is 403", p.URL, with("X-Amz-Checksum-Sha256", f.sums[0][:43]+"A"), f.body, 403, "", 0},
		{"an extra unsigned x-amz-meta-* header is 403", p.URL, with("X-Amz-Meta-Note", "hello"), f.body, 403, "AccessDenied", 0},
		{"an edited query is 403", strings.Replace(p.URL, "partNumber=1", "partNumber=2", 1), p.Headers, f.body, 403, "SignatureDoesNotMatch", 0},
		{"the genuine headers with one body byte flipped are 400 BadDigest", p.URL, p.Headers, flipped, 400, "BadDigest", 0},
		{"a plain PUT with the returned headers is 200", p.URL, p.Headers, f.body, 200, "", 0},
		{"the same PUT past the URL's expiry is 403", p.URL, p.Headers, f.body, 403, "AccessDenied", 31 * time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.Clock.Advance(c.advanceClock)
			status, code := send(t, http.MethodPut, c.url, c.headers, c.body)
			if status != c.status || (c.code != "" && code != c.code) {
				t.Errorf("PUT = %d %s, want %d %s", status, code, c.status, c.code)
			}
		})
	}
}

// Bad input is a VALIDATION refusal with isError, in the denied decision's
// shape with spent false, never a protocol error (issue 16): a checksum
// algorithm other than SHA256, a wrong count of part digests, a digest that
// is not base64 SHA-256, a size over the cap, a filename with a slash or a
// control character.
func TestBadBeginArgumentsAreValidationRefusalsNeverProtocolErrors(t *testing.T) {
	e := newLaneEnv(t, laneOptions{})
	grant := e.grant(t, seed.Alvarez)
	f := newFile(pattern(uploads.PartSize+1, 4))
	for _, c := range []struct {
		name  string
		edit  func(map[string]any)
		field string
	}{
		{"checksum_algorithm CRC32C", func(a map[string]any) { a["checksum_algorithm"] = "CRC32C" }, "checksum_algorithm"},
		{"checksum_algorithm MD5", func(a map[string]any) { a["checksum_algorithm"] = "MD5" }, "checksum_algorithm"},
		{"one part digest for two parts", func(a map[string]any) { a["part_sha256"] = f.sums[:1] }, "part_sha256"},
		{"three part digests for two parts", func(a map[string]any) { a["part_sha256"] = append(f.sums, f.sums[0]) }, "part_sha256"},
		{"a part digest that is hex, not base64", func(a map[string]any) { a["part_sha256"] = []string{f.sha, f.sums[1]} }, "part_sha256.0"},
		{"a file over 1 GiB", func(a map[string]any) { a["size_bytes"] = uploads.MaxUploadBytes + 1 }, "size_bytes"},
		{"a sha256 in upper case", func(a map[string]any) { a["sha256"] = strings.ToUpper(f.sha) }, "sha256"},
		{"a filename with a slash", func(a map[string]any) { a["filename"] = "../etc/passwd" }, "filename"},
		{"a filename with a control character", func(a map[string]any) { a["filename"] = "memo\x07.pdf" }, "filename"},
		{"a filename of 256 bytes", func(a map[string]any) { a["filename"] = strings.Repeat("é", 128) }, "filename"},
		{"a media type that is not one", func(a map[string]any) { a["media_type"] = "not a media type" }, "media_type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := f.beginArgs(grant, seed.Alvarez)
			c.edit(args)
			msg := e.Session.Call(t, "tools/call", map[string]any{"name": uploads.ToolBegin, "arguments": args})
			if msg["error"] != nil {
				t.Fatalf("a protocol error %v, want an isError result", msg["error"])
			}
			d := decisionOf(t, msg["result"].(map[string]any))
			class, spent := d.refused(t)
			if class != "VALIDATION" || spent || d.Error.Field != c.field {
				t.Errorf("refusal = %s (field %q), spent %v; want VALIDATION on %q, spent false", class, d.Error.Field, spent, c.field)
			}
		})
	}
	if state, open := e.grantState(t, grant); state != "unspent" || open != 0 {
		t.Errorf("grant = %s, %d open; want unspent, none open: bad input writes nothing", state, open)
	}
}

// Grants that are not the caller's to use (issue 16): another key's,
// another matter's, another tenant's, expired, revoked or malformed are
// GRANT_INVALID with spent false, all in one sentence naming none of them;
// an already spent one is GRANT_INVALID with spent true.
func TestGrantsNotTheCallersToUseAreOneGrantInvalidSentence(t *testing.T) {
	e := newLaneEnv(t, laneOptions{})
	ctx := context.Background()
	f := newFile(pattern(50_000, 5))
	// Another write key of the same attorney.
	_, other, err := auth.Mint(ctx, e.Store, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney,
		Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite}}, servertest.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	otherKey := e.grant(t, seed.Alvarez, func(r *uploads.MintRequest) { r.CredentialID = other.ID })
	otherMatter := e.grant(t, seed.Meridian)
	expired := e.grant(t, seed.Alvarez, func(r *uploads.MintRequest) { r.TTL = uploads.MinGrantTTL })
	revoked, g := e.grantOf(t, seed.Alvarez)
	if err := uploads.RevokeGrant(ctx, e.Store, seed.DemoTenant, g.ID, e.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	// Another firm's grant, for its own write key and matter, minted by an
	// administrator of that firm.
	admin, err := records.PrincipalItem(seed.OtherTenant, records.Principal{ID: "p_other_admin", Name: "Other Admin",
		Role: records.RoleAdmin, CreatedAt: servertest.Epoch, UpdatedAt: servertest.Epoch})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.Put(ctx, admin); err != nil {
		t.Fatal(err)
	}
	_, otherFirmKey, err := auth.Mint(ctx, e.Store, auth.MintRequest{Tenant: seed.OtherTenant, Owner: seed.OtherPrincipal,
		Scopes: []auth.Scope{auth.ScopeWrite}}, servertest.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	otherTenant, _, err := uploads.MintGrant(ctx, e.Store, uploads.MintRequest{Tenant: seed.OtherTenant,
		CredentialID: otherFirmKey.ID, Matter: seed.Northwind, By: "p_other_admin"}, e.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	spent := e.grant(t, seed.Alvarez)
	sp := e.mustBegin(t, spent, seed.Alvarez, f)
	put(t, sp, f)
	receiptOf(t, e.complete(t, spent, sp.UploadID))

	e.Clock.Advance(2 * time.Minute) // past the short grant's life
	first := ""
	for _, c := range []struct {
		name  string
		token string
		spent bool
	}{
		{"another key's grant", otherKey, false},
		{"another matter's grant", otherMatter, false},
		{"another firm's grant", otherTenant, false},
		{"an expired grant", expired, false},
		{"a revoked grant", revoked, false},
		{"a malformed token", "cgt_not-a-token", false},
		{"an unknown token", uploads.NewToken(), false},
		{"an already spent grant", spent, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := e.begin(t, f.beginArgs(c.token, seed.Alvarez))
			class, gotSpent := d.refused(t)
			if class != "GRANT_INVALID" || gotSpent != c.spent {
				t.Errorf("refusal = %s spent %v, want GRANT_INVALID spent %v", class, gotSpent, c.spent)
			}
			if first == "" {
				first = d.Error.Message
			} else if d.Error.Message != first {
				t.Errorf("message %q differs from %q: every GRANT_INVALID is one sentence", d.Error.Message, first)
			}
			if strings.Contains(d.Error.Message, c.token) || strings.Contains(d.Error.Message, seed.Alvarez) {
				t.Errorf("message %q quotes an argument", d.Error.Message)
			}
		})
	}
}

// offSwitch is the signature engine behind a switch that unregisters it:
// off, its posture is OFF and it accepts nothing, as a lane with no engine.
type offSwitch struct {
	scan.Scanner
	off atomic.Bool
}

func (o *offSwitch) Posture(ctx context.Context) scan.Posture {
	if o.off.Load() {
		return scan.Off
	}
	return o.Scanner.Posture(ctx)
}

func (o *offSwitch) MaxBytes() int64 {
	if o.off.Load() {
		return 0
	}
	return o.Scanner.MaxBytes()
}

// With the scanner OFF both spending tools refuse SCANNER_UNAVAILABLE and
// the grant stays unspent (docs/contracts.md §5); once it is back, the
// same upload completes.
func TestWithTheScannerOffBothToolsRefuseAndTheGrantStaysUnspent(t *testing.T) {
	sw := &offSwitch{Scanner: signature.New()}
	e := newLaneEnv(t, laneOptions{scanner: sw})
	grant := e.grant(t, seed.Alvarez)
	f := newFile(pattern(10_000, 6))
	s := e.mustBegin(t, grant, seed.Alvarez, f)
	put(t, s, f)

	sw.off.Store(true)
	for name, d := range map[string]decision{
		"begin_upload_session": e.begin(t, f.beginArgs(grant, seed.Alvarez)),
		"complete_upload":      e.complete(t, grant, s.UploadID),
	} {
		if class, spent := d.refused(t); class != "SCANNER_UNAVAILABLE" || spent {
			t.Errorf("%s with the scanner OFF = %s spent %v, want SCANNER_UNAVAILABLE spent false", name, class, spent)
		}
	}
	if state, _ := e.grantState(t, grant); state != "unspent" {
		t.Errorf("grant = %s, want unspent", state)
	}
	st := servertest.Structured(t, e.Session.Tool(t, "get_upload_status", map[string]any{"upload_id": s.UploadID}))
	if st["scanner_posture"] != "OFF" || st["state"] != "open" {
		t.Errorf("get_upload_status = %v, want open with the scanner OFF", st)
	}
	sw.off.Store(false)
	if r := receiptOf(t, e.complete(t, grant, s.UploadID)); r.State != "scan_pending" {
		t.Errorf("after the scanner is back: %+v, want scan_pending", r)
	}
}

// A grant allows three open uploads: the fourth begin is BACKPRESSURE with
// the grant unspent, and nothing of it is written (issue 16).
func TestTheFourthOpenUploadOfAGrantIsBackpressure(t *testing.T) {
	e := newLaneEnv(t, laneOptions{})
	grant := e.grant(t, seed.Alvarez)
	f := newFile(pattern(1000, 7))
	for range uploads.DefaultMaxOpen {
		e.mustBegin(t, grant, seed.Alvarez, f)
	}
	creates := e.Blob.Calls(blobtest.OpCreateMultipartUpload)
	if class, spent := e.begin(t, f.beginArgs(grant, seed.Alvarez)).refused(t); class != "BACKPRESSURE" || spent {
		t.Errorf("the fourth begin = %s spent %v, want BACKPRESSURE spent false", class, spent)
	}
	if got := e.Blob.Calls(blobtest.OpCreateMultipartUpload); got != creates {
		t.Errorf("the refused begin made %d S3 uploads, want none", got-creates)
	}
	if state, open := e.grantState(t, grant); state != "unspent" || open != 3 {
		t.Errorf("grant = %s with %d open, want unspent with 3", state, open)
	}
}

// Bytes that are not the declared file (issue 16): the object is deleted,
// the upload rejected, its slot freed, VALIDATION with spent false — and
// the grant is still usable for the right bytes.
func TestAMismatchRejectsTheUploadFreesItsSlotAndLeavesTheGrantUsable(t *testing.T) {
	e := newLaneEnv(t, laneOptions{})
	grant := e.grant(t, seed.Alvarez, func(r *uploads.MintRequest) { r.MaxOpen = 1 })
	f := newFile(pattern(40_000, 8))
	wrong := f
	wrong.sha = newFile(pattern(40_000, 9)).sha // the parts are right, the whole is declared wrongly
	s := e.mustBegin(t, grant, seed.Alvarez, wrong)
	put(t, s, f)

	d := e.complete(t, grant, s.UploadID)
	if class, spent := d.refused(t); class != "VALIDATION" || spent {
		t.Fatalf("complete of a mismatch = %s spent %v, want VALIDATION spent false", class, spent)
	}
	id := objectOf(t, s.UploadID)
	if e.exists(t, blob.Incoming(id)) || e.exists(t, blob.Verified(id)) {
		t.Error("the mismatched object is still stored")
	}
	if u := e.uploadState(t, s.UploadID); u.State != uploads.StateRejected {
		t.Errorf("upload state = %s, want rejected", u.State)
	}
	if state, open := e.grantState(t, grant); state != "unspent" || open != 0 {
		t.Errorf("grant = %s with %d open, want unspent with its slot free", state, open)
	}
	if class, spent := e.complete(t, grant, s.UploadID).refused(t); class != "VALIDATION" || spent {
		t.Errorf("completing the rejected upload again = %s spent %v, want VALIDATION spent false", class, spent)
	}
	s2 := e.mustBegin(t, grant, seed.Alvarez, f)
	put(t, s2, f)
	if r := receiptOf(t, e.complete(t, grant, s2.UploadID)); !r.Spent {
		t.Errorf("the grant used again: %+v, want spent", r)
	}
}

// Parts not yet PUT are VALIDATION with spent false and change nothing;
// once they are, the same upload completes.
func TestMissingPartsAreNamedAndTheUploadStaysOpen(t *testing.T) {
	e := newLaneEnv(t, laneOptions{})
	grant := e.grant(t, seed.Alvarez)
	f := newFile(pattern(uploads.PartSize+5, 10))
	s := e.mustBegin(t, grant, seed.Alvarez, f)
	p := s.Parts[1]
	if status, code := send(t, p.Method, p.URL, p.Headers, f.parts[1]); status != 200 {
		t.Fatalf("PUT part 2 = %d %s", status, code)
	}
	d := e.complete(t, grant, s.UploadID)
	if class, spent := d.refused(t); class != "VALIDATION" || spent || !strings.Contains(d.Error.Message, "Parts 1 of 2") {
		t.Fatalf("complete with part 1 missing = %s spent %v %q; want VALIDATION naming part 1, spent false", class, spent, d.Error.Message)
	}
	if u := e.uploadState(t, s.UploadID); u.State != uploads.StateOpen {
		t.Errorf("upload = %s, want still open", u.State)
	}
	put(t, s, f)
	if r := receiptOf(t, e.complete(t, grant, s.UploadID)); r.State != "scan_pending" {
		t.Errorf("after the missing part: %+v", r)
	}
}

// Parts lost before completion (s3local keeps multipart uploads in memory:
// a dev-server restart loses them; here the upload is aborted behind the
// lane's back) answer VALIDATION "begin again" with spent false, and the
// upload is abandoned with its slot freed.
func TestAnUploadWhosePartsWereLostIsAbandonedAndTheGrantNotSpent(t *testing.T) {
	e := newLaneEnv(t, laneOptions{})
	grant := e.grant(t, seed.Alvarez)
	f := newFile(pattern(3000, 11))
	s := e.mustBegin(t, grant, seed.Alvarez, f)
	put(t, s, f)
	u := e.uploadState(t, s.UploadID)
	if err := e.Engine.AbortMultipartUpload(context.Background(), blob.Upload{Ref: blob.Incoming(u.Object), UploadID: u.Multipart}); err != nil {
		t.Fatal(err)
	}
	d := e.complete(t, grant, s.UploadID)
	if class, spent := d.refused(t); class != "VALIDATION" || spent || !strings.Contains(d.Error.Message, "Begin a new upload session") {
		t.Fatalf("complete of a lost upload = %s spent %v %q; want VALIDATION begin again, spent false", class, spent, d.Error.Message)
	}
	if got := e.uploadState(t, s.UploadID).State; got != uploads.StateAbandoned {
		t.Errorf("upload = %s, want abandoned", got)
	}
	if state, open := e.grantState(t, grant); state != "unspent" || open != 0 {
		t.Errorf("grant = %s with %d open, want unspent with its slot free", state, open)
	}
}

// Decorators over the real engines (issue 16): the store down before the
// spend answers UNAVAILABLE with spent false and a retry succeeds; the
// spend's own transaction failing answers 503 with nothing spent and a
// retry succeeds; S3's GET failing, or its stream cut short, is
// UNAVAILABLE with spent false and never a mismatch.
func TestFaultsBeforeTheSpendSpendNothingAndARetrySucceeds(t *testing.T) {
	e := newLaneEnv(t, laneOptions{})
	f := newFile(pattern(20_000, 12))
	ready := func(t *testing.T) (string, session) {
		grant := e.grant(t, seed.Alvarez)
		s := e.mustBegin(t, grant, seed.Alvarez, f)
		put(t, s, f)
		return grant, s
	}
	retrySucceeds := func(t *testing.T, grant string, s session) {
		t.Helper()
		e.Faulty.Reset()
		e.Blob.Reset()
		if state, _ := e.grantState(t, grant); state != "unspent" {
			t.Fatalf("after the fault: grant %s, want unspent", state)
		}
		if r := receiptOf(t, e.complete(t, grant, s.UploadID)); r.State != "scan_pending" || !r.Spent {
			t.Errorf("the retry = %+v, want scan_pending spent", r)
		}
	}

	t.Run("the store down before the spend is UNAVAILABLE, spent false; a retry succeeds", func(t *testing.T) {
		grant, s := ready(t)
		e.Faulty.Add(storetest.Rule{Method: storetest.MethodBatchGet, Key: storetest.Prefix("UPLOAD#", ""), Err: store.ErrUnavailable})
		if class, spent := e.complete(t, grant, s.UploadID).refused(t); class != "UNAVAILABLE" || spent {
			t.Errorf("= %s spent %v, want UNAVAILABLE spent false", class, spent)
		}
		retrySucceeds(t, grant, s)
	})
	t.Run("the spend's transaction failing is 503 with nothing spent; a retry succeeds", func(t *testing.T) {
		grant, s := ready(t)
		e.Faulty.Add(storetest.Rule{Method: storetest.MethodTransact, Key: storetest.Prefix("CGT#", ""), Err: store.ErrUnavailable})
		body := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"complete_upload","arguments":{"grant_token":"` + grant + `","upload_id":"` + s.UploadID + `"}}}`
		if r := e.Session.Post(t, []byte(body)); r.Status != http.StatusServiceUnavailable {
			t.Errorf("status = %d %s, want 503", r.Status, r.Body)
		}
		if id := objectOf(t, s.UploadID); !e.exists(t, blob.Incoming(id)) {
			t.Error("the verified object was deleted although nothing was spent")
		}
		retrySucceeds(t, grant, s)
	})
	t.Run("S3's GET failing is UNAVAILABLE, spent false; a retry succeeds", func(t *testing.T) {
		grant, s := ready(t)
		e.Blob.Add(blobtest.Rule{Op: blobtest.OpGetObject, Err: blob.ErrUnavailable})
		if class, spent := e.complete(t, grant, s.UploadID).refused(t); class != "UNAVAILABLE" || spent {
			t.Errorf("= %s spent %v, want UNAVAILABLE spent false", class, spent)
		}
		retrySucceeds(t, grant, s)
	})
	t.Run("S3's stream cut short is UNAVAILABLE, never a mismatch; a retry succeeds", func(t *testing.T) {
		grant, s := ready(t)
		e.Blob.Add(blobtest.Rule{Op: blobtest.OpGetObject, CutAfter: 5000})
		if class, spent := e.complete(t, grant, s.UploadID).refused(t); class != "UNAVAILABLE" || spent {
			t.Errorf("= %s spent %v, want UNAVAILABLE spent false", class, spent)
		}
		if got := e.uploadState(t, s.UploadID).State; got != uploads.StateOpen {
			t.Errorf("upload = %s, want still open", got)
		}
		retrySucceeds(t, grant, s)
	})
}

// A copy failing after the spend still answers scan_pending with spent
// true (the answer stands once the spend is committed), and the sweeper's
// copy duty finishes it: copied to verified/, the copy recorded once
// however many sweeps overlap.
func TestACopyFailingAfterTheSpendIsFinishedByTheSweeperOnce(t *testing.T) {
	e := newLaneEnv(t, laneOptions{})
	f := newFile(pattern(20_000, 15))
	grant := e.grant(t, seed.Alvarez)
	s := e.mustBegin(t, grant, seed.Alvarez, f)
	put(t, s, f)
	e.Blob.Add(blobtest.Rule{Op: blobtest.OpCopyObject, Err: blob.ErrUnavailable})
	if r := receiptOf(t, e.complete(t, grant, s.UploadID)); r.State != "scan_pending" || !r.Spent {
		t.Errorf("= %+v, want scan_pending spent", r)
	}
	e.Blob.Reset()
	id := objectOf(t, s.UploadID)
	if e.exists(t, blob.Verified(id)) || !e.exists(t, blob.Incoming(id)) {
		t.Fatal("the copy happened although it failed")
	}
	duty := &uploads.CopyDuty{Store: e.Store, Blob: e.Engine}
	if rep, err := duty.Sweep(context.Background(), e.Clock.Now()); err != nil || len(rep.Actions) != 0 {
		t.Errorf("a sweep before the copy grace = %v, %v; want nothing done", rep.Actions, err)
	}
	later := e.Clock.Now().Add(uploads.CopyGrace)
	reports := make([]map[string]int, 4)
	var wg sync.WaitGroup
	for i := range reports {
		wg.Go(func() {
			rep, err := duty.Sweep(context.Background(), later)
			if err != nil {
				t.Errorf("sweep %d: %v", i, err)
			}
			reports[i] = rep.Actions
		})
	}
	wg.Wait()
	recorded := 0
	for _, r := range reports {
		recorded += r[uploads.ActionRecorded]
	}
	if recorded != 1 {
		t.Errorf("four overlapping sweeps recorded the copy %d times (%v), want once", recorded, reports)
	}
	if !e.exists(t, blob.Verified(id)) || e.exists(t, blob.Incoming(id)) {
		t.Error("after the sweep: want the object in verified/ only")
	}
	if u := e.uploadState(t, s.UploadID); u.CopiedAt.IsZero() || u.State != uploads.StateScanPending {
		t.Errorf("upload = %s, copied at %v; want scan_pending with the copy recorded", u.State, u.CopiedAt)
	}
	if rep, _ := duty.Sweep(context.Background(), later.Add(time.Minute)); len(rep.Actions) != 0 {
		t.Errorf("a later sweep = %v, want nothing (the entry waits for the no-verdict deadline)", rep.Actions)
	}
}

// Part URLs never outlive what signs them (docs/contracts.md §5): with
// signing credentials that expire in 10 minutes, expires_at and every URL
// end within them, and the URL is refused after.
func TestPartURLsExpireWithTheirSigningCredentials(t *testing.T) {
	clock := servertest.NewClock(servertest.Epoch)
	credsExpire := servertest.Epoch.Add(10 * time.Minute)
	e := newLaneEnv(t, laneOptions{partCredsExpire: credsExpire, Options: servertest.Options{Clock: clock}})
	f := newFile(pattern(2000, 13))
	s := e.mustBegin(t, e.grant(t, seed.Alvarez), seed.Alvarez, f)
	if s.ExpiresAt.After(credsExpire) || s.ExpiresAt.Before(servertest.Epoch.Add(9*time.Minute)) {
		t.Errorf("expires_at = %v, want within the credentials' %v", s.ExpiresAt, credsExpire)
	}
	for _, p := range s.Parts {
		if got := queryInt(t, p.URL, "X-Amz-Expires"); time.Duration(got)*time.Second > 10*time.Minute {
			t.Errorf("part %d: X-Amz-Expires %d s, beyond the credentials' 600", p.PartNumber, got)
		}
	}
	clock.Advance(10*time.Minute + time.Second)
	if status, _ := send(t, http.MethodPut, s.Parts[0].URL, s.Parts[0].Headers, f.parts[0]); status != http.StatusForbidden {
		t.Errorf("PUT after the credentials expired = %d, want 403", status)
	}
}

// Another credential's upload id is NOT_FOUND, exactly as an unknown one.
func TestAnotherCredentialsUploadIsNotFound(t *testing.T) {
	e := newLaneEnv(t, laneOptions{})
	s := e.mustBegin(t, e.grant(t, seed.Alvarez), seed.Alvarez, newFile(pattern(100, 14)))
	other := e.Initialize(t, servertest.Attorney2, rev)
	for name, id := range map[string]string{"another credential's": s.UploadID, "an unknown": uploads.UploadID(blob.NewID()), "a malformed": "upl_nope"} {
		res := other.Tool(t, "get_upload_status", map[string]any{"upload_id": id})
		if got := servertest.RefusalClass(res); got != "NOT_FOUND" {
			t.Errorf("%s upload id = %q, want NOT_FOUND", name, got)
		}
	}
}

func queryInt(t *testing.T, raw, name string) int {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(u.Query().Get(name))
	if err != nil {
		t.Fatalf("%s of %s: %v", name, raw, err)
	}
	return n
}

// An open upload lives 24 hours: completed after that (the grant living
// longer), it is abandoned with its slot freed and the grant unspent.
func TestAnUploadCompletedAfterItsTwentyFourHoursIsAbandoned(t *testing.T) {
	e := newLaneEnv(t, laneOptions{})
	grant := e.grant(t, seed.Alvarez, func(r *uploads.MintRequest) { r.TTL = 3 * 24 * time.Hour })
	f := newFile(pattern(1000, 17))
	s := e.mustBegin(t, grant, seed.Alvarez, f)
	put(t, s, f)
	e.Clock.Advance(uploads.UploadLife)
	e.Session = e.Initialize(t, "writer", rev) // the first session has expired with the day
	if class, spent := e.complete(t, grant, s.UploadID).refused(t); class != "VALIDATION" || spent {
		t.Errorf("= %s spent %v, want VALIDATION spent false", class, spent)
	}
	if got := e.uploadState(t, s.UploadID).State; got != uploads.StateAbandoned {
		t.Errorf("upload = %s, want abandoned", got)
	}
	if state, open := e.grantState(t, grant); state != "unspent" || open != 0 {
		t.Errorf("grant = %s with %d open, want unspent with its slot free", state, open)
	}
}
