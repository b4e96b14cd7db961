package lanetools_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/blobtest"
	"github.com/custodymcp/custody/shared/blob/s3local"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/signature"
	"github.com/custodymcp/custody/shared/server"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/uploads"
)

const rev = "2025-11-25"

// laneEnv is a servertest.Env serving the upload lane over s3local (in
// memory, behind the fault decorator), with the signature engine, one
// clock for the server, the file engine, the S3 client and s3local, and a
// write key of the demo attorney.
type laneEnv struct {
	*servertest.Env
	Blob     *blobtest.Faulty
	S3       *s3local.Server
	Engine   *blob.S3
	Writer   string // the write key
	WriterID string
	Session  *servertest.Session
}

type laneOptions struct {
	scanner scan.Scanner // nil: the signature engine; use off for none
	off     bool
	// partCredsExpire, when set, signs part URLs with s3local's test
	// credentials reported as expiring at that time, as an STS session's
	// are.
	partCredsExpire time.Time
	servertest.Options
}

func newLaneEnv(t *testing.T, o laneOptions) *laneEnv {
	t.Helper()
	clock := o.Clock
	if clock == nil {
		clock = servertest.NewClock(servertest.Epoch)
		o.Clock = clock
	}
	srv := s3local.Start(t, s3local.Options{Now: clock.Now})
	bopts := blob.Options{Now: clock.Now}
	if !o.partCredsExpire.IsZero() {
		creds := s3local.TestCredentials
		creds.CanExpire, creds.Expires = true, o.partCredsExpire
		bopts.UploadPartCredentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return creds, nil })
	}
	eng, err := blob.New(s3local.NewClient(srv.URL, blob.WithClock(clock.Now)), s3local.Buckets, bopts)
	if err != nil {
		t.Fatal(err)
	}
	faulty := blobtest.NewFaulty(eng)
	var sc scan.Scanner = signature.New()
	switch {
	case o.off:
		sc = nil
	case o.scanner != nil:
		sc = o.scanner
	}
	o.Lane = &server.LaneConfig{Blob: faulty, Buckets: s3local.Buckets, Scanner: sc}
	env := servertest.New(t, o.Options)
	key, cred, err := auth.Mint(context.Background(), env.Store, auth.MintRequest{
		Tenant: seed.DemoTenant, Owner: seed.DemoAttorney, Label: "lane writer",
		Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite, auth.ScopeDocsRead},
	}, servertest.Epoch.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	env.Keys["writer"], env.Creds["writer"] = key, cred
	le := &laneEnv{Env: env, Blob: faulty, S3: srv, Engine: eng, Writer: key, WriterID: cred.ID}
	le.Session = env.Initialize(t, "writer", rev)
	return le
}

// grant mints a grant for the writer key on matter with the demo admin.
func (e *laneEnv) grant(t *testing.T, matter string, opts ...func(*uploads.MintRequest)) string {
	t.Helper()
	req := uploads.MintRequest{Tenant: seed.DemoTenant, CredentialID: e.WriterID, Matter: matter, By: seed.DemoAdmin}
	for _, o := range opts {
		o(&req)
	}
	token, _, err := uploads.MintGrant(context.Background(), e.Store, req, e.Clock.Now())
	if err != nil {
		t.Fatalf("MintGrant = %v", err)
	}
	return token
}

// grantOf is grant returning the grant too.
func (e *laneEnv) grantOf(t *testing.T, matter string) (string, uploads.Grant) {
	t.Helper()
	token, g, err := uploads.MintGrant(context.Background(), e.Store, uploads.MintRequest{
		Tenant: seed.DemoTenant, CredentialID: e.WriterID, Matter: matter, By: seed.DemoAdmin}, e.Clock.Now())
	if err != nil {
		t.Fatalf("MintGrant = %v", err)
	}
	return token, g
}

// file is a file to upload: its bytes, digests and layout.
type file struct {
	body  []byte
	sha   string
	parts [][]byte
	sums  []string
}

func newFile(body []byte) file {
	f := file{body: body}
	sum := sha256.Sum256(body)
	f.sha = hex.EncodeToString(sum[:])
	for off := 0; off < len(body); off += uploads.PartSize {
		p := body[off:min(off+uploads.PartSize, len(body))]
		f.parts = append(f.parts, p)
		s := sha256.Sum256(p)
		f.sums = append(f.sums, base64.StdEncoding.EncodeToString(s[:]))
	}
	return f
}

func (f file) beginArgs(grant, matter string) map[string]any {
	return map[string]any{"grant_token": grant, "case_id": matter, "filename": "deposition of R. Alvarez.pdf",
		"size_bytes": len(f.body), "sha256": f.sha, "part_sha256": f.sums, "media_type": "application/pdf"}
}

// session is begin_upload_session's executed data.
type session struct {
	UploadID  string    `json:"upload_id"`
	ExpiresAt time.Time `json:"expires_at"`
	Parts     []struct {
		PartNumber int               `json:"part_number"`
		URL        string            `json:"url"`
		Method     string            `json:"method"`
		Headers    map[string]string `json:"headers"`
		SizeBytes  int64             `json:"size_bytes"`
	} `json:"parts"`
}

// decision decodes a write tool's structuredContent.
type decision struct {
	Status   string          `json:"status"`
	Executed bool            `json:"executed"`
	Data     json.RawMessage `json:"data"`
	Error    *struct {
		Class   string `json:"class"`
		Message string `json:"message"`
		Field   string `json:"field"`
		Spent   *bool  `json:"spent"`
	} `json:"error"`
}

func decisionOf(t *testing.T, res map[string]any) decision {
	t.Helper()
	b, err := json.Marshal(servertest.Structured(t, res))
	if err != nil {
		t.Fatal(err)
	}
	var d decision
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("decode the decision %s: %v", b, err)
	}
	if (d.Status == "denied") != (res["isError"] == true) {
		t.Fatalf("isError = %v for status %q", res["isError"], d.Status)
	}
	return d
}

// refused returns a denied decision's class and spent (spent must be
// present on every refusal of the two spending tools).
func (d decision) refused(t *testing.T) (class string, spent bool) {
	t.Helper()
	if d.Error == nil {
		t.Fatalf("decision %s %s is not denied", d.Status, d.Data)
	}
	if d.Error.Spent == nil {
		t.Fatalf("refusal %s (%s) carries no spent", d.Error.Class, d.Error.Message)
	}
	return d.Error.Class, *d.Error.Spent
}

func (e *laneEnv) begin(t *testing.T, args map[string]any) decision {
	t.Helper()
	return decisionOf(t, e.Session.Tool(t, uploads.ToolBegin, args))
}

func (e *laneEnv) complete(t *testing.T, grant, uploadID string) decision {
	t.Helper()
	return decisionOf(t, e.Session.Tool(t, uploads.ToolComplete, map[string]any{"grant_token": grant, "upload_id": uploadID}))
}

// completeConcurrently is complete for concurrent goroutines: Session.Call
// numbers its requests without a lock, so each goroutine posts its own
// JSON-RPC id.
func (e *laneEnv) completeConcurrently(t *testing.T, rpcID int, grant, uploadID string) decision {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"grant_token": grant, "upload_id": uploadID})
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, rpcID, uploads.ToolComplete, args)
	r := e.Session.Post(t, []byte(body))
	if r.Status != http.StatusOK {
		t.Errorf("complete_upload: HTTP %d %s", r.Status, r.Body)
		return decision{}
	}
	var msg struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(r.Body, &msg); err != nil || msg.Result == nil {
		t.Errorf("complete_upload: no result in %s", r.Body)
		return decision{}
	}
	return decisionOf(t, msg.Result)
}

// mustBegin begins an upload of f and returns its session.
func (e *laneEnv) mustBegin(t *testing.T, grant, matter string, f file) session {
	t.Helper()
	d := e.begin(t, f.beginArgs(grant, matter))
	if d.Status != "executed" {
		t.Fatalf("begin_upload_session = %s %+v", d.Status, d.Error)
	}
	var s session
	if err := json.Unmarshal(d.Data, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// put PUTs every part of f with net/http alone, as curl does.
func put(t *testing.T, s session, f file) {
	t.Helper()
	for i, p := range s.Parts {
		if status, code := send(t, p.Method, p.URL, p.Headers, f.parts[i]); status != http.StatusOK {
			t.Fatalf("PUT part %d = %d %s", p.PartNumber, status, code)
		}
	}
}

func send(t *testing.T, method, url string, headers map[string]string, body []byte) (int, string) {
	t.Helper()
	h := http.Header{}
	for k, v := range headers {
		h.Set(k, v)
	}
	return blobtest.Send(t, method, url, h, body)
}

// receiptOf decodes an executed complete_upload.
type receiptData struct {
	UploadID       string `json:"upload_id"`
	State          string `json:"state"`
	Spent          bool   `json:"spent"`
	SHA256         string `json:"sha256"`
	ScannerPosture string `json:"scanner_posture"`
	CompletedAt    string `json:"completed_at"`
}

func receiptOf(t *testing.T, d decision) receiptData {
	t.Helper()
	if d.Status != "executed" {
		t.Fatalf("complete_upload = %s %+v", d.Status, d.Error)
	}
	var r receiptData
	if err := json.Unmarshal(d.Data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// exists reports whether the object is stored.
func (e *laneEnv) exists(t *testing.T, ref blob.Ref) bool {
	t.Helper()
	_, err := e.Engine.HeadObject(context.Background(), ref)
	if err != nil && !isNotFound(err) {
		t.Fatalf("HeadObject(%s) = %v", ref, err)
	}
	return err == nil
}

func isNotFound(err error) bool { return errors.Is(err, blob.ErrNotFound) }

// objectOf is the object id of an upload id.
func objectOf(t *testing.T, uploadID string) blob.ID {
	t.Helper()
	id, ok := uploads.ParseUploadID(uploadID)
	if !ok {
		t.Fatalf("upload id %q is not upl_<hex>", uploadID)
	}
	return id
}

// grantRow reads the grant row of a token.
func (e *laneEnv) grantState(t *testing.T, token string) (state string, open int64) {
	t.Helper()
	it, err := e.Store.Get(context.Background(), uploads.GrantKey(uploads.HashToken(token)))
	if err != nil {
		t.Fatalf("read the grant: %v", err)
	}
	return it.String("state"), it.Int("open_uploads")
}

// uploadState reads an upload row's state.
func (e *laneEnv) uploadState(t *testing.T, uploadID string) uploads.Upload {
	t.Helper()
	it, err := e.Store.Get(context.Background(), uploads.UploadKey(uploadID))
	if err != nil {
		t.Fatalf("read the upload: %v", err)
	}
	u, err := uploads.DecodeUpload(it)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// pattern is n bytes unlike any other seed's.
func pattern(n int, seed byte) []byte { return blobtest.Pattern(n, seed) }
