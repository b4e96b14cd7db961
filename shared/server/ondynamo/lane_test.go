package ondynamo_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/blobtest"
	"github.com/custodymcp/custody/shared/blob/s3local"
	"github.com/custodymcp/custody/shared/ratelimit"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/scan/signature"
	"github.com/custodymcp/custody/shared/server"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/uploads"
)

// s3Count counts the S3 client's HTTP requests (the client's transport:
// what it sends, retries included).
type s3Count struct {
	next http.RoundTripper
	mu   sync.Mutex
	n    int
}

func (c *s3Count) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.next.RoundTrip(r)
}

func (c *s3Count) take() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = 0
	return n
}

// laneDyn is the endpoint on DynamoDB serving the lane over s3local, with
// DynamoDB and S3 requests counted and a write key for the demo attorney.
type laneDyn struct {
	*dynEnv
	s3     *s3Count
	blob   *blobtest.Faulty
	engine *blob.S3
	key    string
	cred   *auth.Credential
}

func newLaneDyn(t *testing.T) *laneDyn {
	t.Helper()
	clock := servertest.NewClock(servertest.Epoch)
	srv := s3local.Start(t, s3local.Options{Now: clock.Now})
	count := &s3Count{next: http.DefaultTransport.(*http.Transport).Clone()}
	eng, err := blob.New(s3local.NewClient(srv.URL, blob.WithClock(clock.Now), func(o *s3.Options) {
		o.HTTPClient = &http.Client{Transport: count}
	}), s3local.Buckets, blob.Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	faulty := blobtest.NewFaulty(eng)
	env := newDynEnv(t, servertest.Options{Clock: clock,
		Limits: ratelimit.Limits{ratelimit.LaneRead: 10_000, ratelimit.LaneWrite: 10_000, ratelimit.LaneExpensive: 10_000},
		Lane:   &server.LaneConfig{Blob: faulty, Buckets: s3local.Buckets, Scanner: signature.New()}})
	key, cred, err := auth.Mint(context.Background(), env.Store, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney,
		Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite, auth.ScopeDocsRead}}, servertest.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	return &laneDyn{dynEnv: env, s3: count, blob: faulty, engine: eng, key: key, cred: cred}
}

func (e *laneDyn) grant(t *testing.T, maxOpen int) string {
	t.Helper()
	token, _, err := uploads.MintGrant(context.Background(), e.Store, uploads.MintRequest{Tenant: seed.DemoTenant,
		CredentialID: e.cred.ID, Matter: seed.Alvarez, By: seed.DemoAdmin, MaxOpen: maxOpen}, e.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return token
}

type upfile struct {
	body []byte
	sha  string
	sums []string
}

func newUpfile(n int, seed byte) upfile {
	f := upfile{body: blobtest.Pattern(n, seed)}
	s := sha256.Sum256(f.body)
	f.sha = hex.EncodeToString(s[:])
	for off := 0; off < n; off += uploads.PartSize {
		p := sha256.Sum256(f.body[off:min(off+uploads.PartSize, n)])
		f.sums = append(f.sums, base64.StdEncoding.EncodeToString(p[:]))
	}
	return f
}

func (f upfile) begin(grant string) map[string]any {
	return map[string]any{"grant_token": grant, "case_id": seed.Alvarez, "filename": "exhibit.pdf",
		"size_bytes": len(f.body), "sha256": f.sha, "part_sha256": f.sums}
}

// data returns a tools/call answer's structuredContent.data (an executed
// decision) or fails.
func data(t *testing.T, r *servertest.Response) map[string]any {
	t.Helper()
	var msg struct {
		Result struct {
			StructuredContent struct {
				Status string         `json:"status"`
				Data   map[string]any `json:"data"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.Body, &msg); err != nil || msg.Result.StructuredContent.Status != "executed" {
		t.Fatalf("not executed: %d %s", r.Status, r.Body)
	}
	return msg.Result.StructuredContent.Data
}

// putParts PUTs the parts a begin answered, uncounted.
func (e *laneDyn) putParts(t *testing.T, begun map[string]any, f upfile) {
	t.Helper()
	for i, p := range begun["parts"].([]any) {
		part := p.(map[string]any)
		h := http.Header{}
		for k, v := range part["headers"].(map[string]any) {
			h.Set(k, v.(string))
		}
		body := f.body[i*uploads.PartSize : min((i+1)*uploads.PartSize, len(f.body))]
		if status, code := blobtest.Send(t, http.MethodPut, part["url"].(string), h, body); status != 200 {
			t.Fatalf("PUT part %d = %d %s", i+1, status, code)
		}
	}
}

// TestRoundTripsOfTheUploadLaneAreExactlyWhatDecisionsAllow pins the
// lane's requests per call (docs/decisions.md "Pipeline choices", the
// write, upload and approval paths): DynamoDB reads + writes, and S3
// requests. begin 2+1 and one S3 call (CreateMultipartUpload; presigning
// is local); complete 2+1 and five (ListParts, CompleteMultipartUpload,
// GetObject, CopyObject, DeleteObject); a mismatch 2+1; a lost spend 2+2;
// a replay 2+1; get_upload_status, get_document_download of a named
// version and a download fetch 2+1.
func TestRoundTripsOfTheUploadLaneAreExactlyWhatDecisionsAllow(t *testing.T) {
	e := newLaneDyn(t)
	sess := initLane(t, e)
	grant := e.grant(t, 3)
	f := newUpfile(30_000, 1)
	wrong := newUpfile(30_000, 2)
	wrong.sums = f.sums // right parts, a wrong whole
	call := func(id int, name string, args map[string]any) *servertest.Response {
		return post(t, e.URL, e.key, sess, toolCall(id, name, args))
	}
	type want struct {
		db cost
		s3 int
	}
	var table strings.Builder
	check := func(t *testing.T, name string, w want, r *servertest.Response, db cost, s3n int) {
		t.Helper()
		fmt.Fprintf(&table, "%-44s %2d+%d  S3 %d\n", name, sum(db, readOps), sum(db, writeOps), s3n)
		if r.Status != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", name, r.Status, r.Body)
		}
		if diff := cmp.Diff(w.db, db); diff != "" {
			t.Errorf("%s: DynamoDB requests (-want +got):\n%s", name, diff)
		}
		if s3n != w.s3 {
			t.Errorf("%s: %d S3 requests, want %d", name, s3n, w.s3)
		}
	}
	measure := func() (cost, int) { return cost(e.ops.take()), e.s3.take() }
	measure()

	// begin, then the parts (uncounted), then complete and its replay.
	r := call(10, uploads.ToolBegin, f.begin(grant))
	db, s3n := measure()
	check(t, "begin_upload_session", want{authed2(0), 1}, r, db, s3n)
	begun := data(t, r)
	e.putParts(t, begun, f)
	measure()
	r = call(11, uploads.ToolComplete, map[string]any{"grant_token": grant, "upload_id": begun["upload_id"]})
	db, s3n = measure()
	check(t, "complete_upload (verified, spent, copied)", want{authed2(0), 5}, r, db, s3n)
	data(t, r)
	r = call(12, uploads.ToolComplete, map[string]any{"grant_token": grant, "upload_id": begun["upload_id"]})
	db, s3n = measure()
	check(t, "complete_upload (replay)", want{audited2(), 0}, r, db, s3n)
	r = call(13, "get_upload_status", map[string]any{"upload_id": begun["upload_id"]})
	db, s3n = measure()
	check(t, "get_upload_status", want{authed(1, 0), 0}, r, db, s3n)

	// A mismatch: rejected, its slot freed, in the one write.
	g2 := e.grant(t, 3)
	r = call(14, uploads.ToolBegin, wrong.begin(g2))
	begunWrong := data(t, r)
	e.putParts(t, begunWrong, f)
	measure()
	r = call(15, uploads.ToolComplete, map[string]any{"grant_token": g2, "upload_id": begunWrong["upload_id"]})
	db, s3n = measure()
	check(t, "complete_upload (mismatch: rejected)", want{authed2(0), 4}, r, db, s3n)
	if class, _ := refusalClass(t, r); class != "VALIDATION" {
		t.Errorf("the mismatch = %q, want VALIDATION", class)
	}

	// A lost spend: two uploads of one grant; the loser read the grant
	// unspent, and the winner spends it before the loser's write.
	g3 := e.grant(t, 3)
	winner, loser := newUpfile(20_000, 3), newUpfile(20_000, 4)
	rw := data(t, call(16, uploads.ToolBegin, winner.begin(g3)))
	rl := data(t, call(17, uploads.ToolBegin, loser.begin(g3)))
	e.putParts(t, rw, winner)
	e.putParts(t, rl, loser)
	loserRef := blob.Incoming(blob.ID(strings.TrimPrefix(rl["upload_id"].(string), uploads.UploadIDPrefix)))
	var before cost
	var beforeS3 int
	e.blob.Add(blobtest.Rule{Op: blobtest.OpListParts, Nth: 1, Ref: func(r blob.Ref) bool { return r == loserRef }, Hook: func() {
		before, beforeS3 = measure() // the loser's reads so far
		if res := post(t, e.URL, e.key, sess, toolCall(18, uploads.ToolComplete, map[string]any{"grant_token": g3, "upload_id": rw["upload_id"]})); res.Status != 200 {
			t.Errorf("the winner: %d %s", res.Status, res.Body)
		}
		measure() // the winner's
	}})
	measure()
	r = call(19, uploads.ToolComplete, map[string]any{"grant_token": g3, "upload_id": rl["upload_id"]})
	db, s3n = measure()
	for op, n := range before {
		db[op] += n
	}
	check(t, "complete_upload (lost spend)", want{cost{"BatchGetItem": 2, "TransactWriteItems": 1, "PutItem": 1}, 4}, r, db, s3n+beforeS3)
	if class, _ := refusalClass(t, r); class != "GRANT_INVALID" {
		t.Errorf("the loser = %q, want GRANT_INVALID", class)
	}
	if _, err := e.engine.HeadObject(context.Background(), loserRef); err == nil {
		t.Error("the loser's object was not deleted")
	}

	// A fourth open upload: BACKPRESSURE before any S3 call.
	g4 := e.grant(t, 1)
	call(20, uploads.ToolBegin, newUpfile(10, 5).begin(g4))
	measure()
	r = call(21, uploads.ToolBegin, newUpfile(10, 6).begin(g4))
	db, s3n = measure()
	check(t, "begin_upload_session (BACKPRESSURE)", want{audited2(), 0}, r, db, s3n)

	// Downloads of a stored document.
	storeDocument(t, e)
	r = call(22, "get_document_download", map[string]any{"case_id": seed.Alvarez, "document_id": "d_alv_stored", "version": 1})
	db, s3n = measure()
	check(t, "get_document_download (version named)", want{authed2(0), 0}, r, db, s3n)
	r = call(23, "get_document_download", map[string]any{"case_id": seed.Alvarez, "document_id": "d_alv_stored"})
	db, s3n = measure()
	check(t, "get_document_download (current version: +1 read)", want{cost{"BatchGetItem": 2, "GetItem": 1, "TransactWriteItems": 1}, 0}, r, db, s3n)
	var link struct {
		Result struct {
			StructuredContent struct {
				URL string `json:"url"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.Body, &link); err != nil || link.Result.StructuredContent.URL == "" {
		t.Fatalf("no link in %s", r.Body)
	}
	measure()
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(link.Result.StructuredContent.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	db, s3n = measure()
	fetched := &servertest.Response{Status: http.StatusOK}
	if resp.StatusCode != http.StatusSeeOther {
		fetched.Status = resp.StatusCode
	}
	check(t, "GET /downloads/<token> (303)", want{cost{"GetItem": 1, "BatchGetItem": 1, "PutItem": 1}, 0}, fetched, db, s3n)
	t.Logf("the upload lane's round trips on DynamoDB (reads+writes) and S3 requests:\n%s", table.String())
}

// authed2 is an authenticated call whose tool reads one batch and writes in
// the call's one transaction.
func authed2(gets int) cost {
	c := cost{"BatchGetItem": 2, "TransactWriteItems": 1}
	if gets > 0 {
		c["GetItem"] = gets
	}
	return c
}

// audited2 is an authenticated call whose tool reads one batch and
// writes nothing of its own: its audit row alone, one PutItem (issue 19,
// item 6: the rate count is the lease's, not the call's).
func audited2() cost { return cost{"BatchGetItem": 2, "PutItem": 1} }

// initLane opens a session of the write key.
func initLane(t *testing.T, e *laneDyn) string {
	t.Helper()
	r := servertest.DoURL(t, e.URL, http.MethodPost, []byte(initBody(rev)), "Authorization: Bearer "+e.key)
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Status != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", r.Status, r.Body)
	}
	post(t, e.URL, e.key, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

// storeDocument writes a reviewed document of Alvarez whose version 1 has
// a stored file.
func storeDocument(t *testing.T, e *laneDyn) {
	t.Helper()
	ctx := context.Background()
	body := []byte("%PDF-1.7 a stored declaration")
	ref := blob.Stored(blob.NewID())
	if err := e.engine.PutObject(ctx, ref, bytes.NewReader(body), blob.PutOptions{ContentType: "application/pdf"}); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	at := servertest.Epoch.Add(-time.Hour)
	di, err := records.DocumentItem(seed.DemoTenant, records.Document{ID: "d_alv_stored", Matter: seed.Alvarez, Title: "Declaration",
		Kind: "declaration", Privilege: records.PrivilegeNone, CurrentVersion: 1, PageCount: 1, SHA256: hex.EncodeToString(sum[:]),
		CreatedAt: at, UpdatedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	vi, err := records.VersionItem(seed.DemoTenant, records.Version{DocumentID: "d_alv_stored", Matter: seed.Alvarez, Number: 1,
		SHA256: hex.EncodeToString(sum[:]), PageCount: 1, SizeBytes: int64(len(body)), MediaType: "application/pdf",
		Filename: "declaration.pdf", ObjectKey: ref.Key, CreatedAt: at, UpdatedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.Transact(ctx, []store.Op{store.PutOp(di), store.PutOp(vi)}); err != nil {
		t.Fatal(err)
	}
	e.ops.take()
	e.s3.take()
}
