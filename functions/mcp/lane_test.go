package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/blob/s3local"
	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/server/servertest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/uploads"
)

// The function's upload lane as main wires it (config → newLane →
// newServer), against the local S3 server: its tools are served to a
// write key; with SCANNER_ENGINE empty (off) the spending tools refuse
// SCANNER_UNAVAILABLE with the grant unspent; a download link minted
// through the function redirects to the record bucket.
func TestTheFunctionServesTheLaneFromItsConfiguration(t *testing.T) {
	emu := startEmulator(t)
	s3srv := s3local.Start(t, s3local.Options{})
	env := emu.env(false)
	env["STAGING_BUCKET"], env["RECORD_BUCKET"], env["S3_ENDPOINT"] = s3local.Buckets.Staging, s3local.Buckets.Record, s3srv.URL
	cfg, err := LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	awsCfg := testAWSConfig()
	awsCfg.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return s3local.TestCredentials, nil })
	lane, err := newLane(awsCfg, cfg)
	if err != nil || lane == nil {
		t.Fatalf("newLane() = %v, %v", lane, err)
	}
	key, err := cfg.CursorKey(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(nil)
	cfg.PublicBaseURL = "http://" + hs.Listener.Addr().String()
	lane.PublicBaseURL = cfg.PublicBaseURL
	srv, err := newServer(cfg, emu.Store, key, slog.New(slog.NewTextHandler(io.Discard, nil)), lane)
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = srv.Handler()
	hs.Start()
	t.Cleanup(hs.Close)

	ctx := context.Background()
	writer, cred, err := auth.Mint(ctx, emu.Store, auth.MintRequest{Tenant: seed.DemoTenant, Owner: seed.DemoAttorney,
		Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeWrite, auth.ScopeDocsRead}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	grant, _, err := uploads.MintGrant(ctx, emu.Store, uploads.MintRequest{Tenant: seed.DemoTenant, CredentialID: cred.ID,
		Matter: seed.Alvarez, By: seed.DemoAdmin}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	url := hs.URL + "/mcp"
	init := servertest.DoURL(t, url, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`),
		"Authorization: Bearer "+writer)
	sid := init.Header.Get("Mcp-Session-Id")
	call := func(name string, args string) map[string]any {
		t.Helper()
		r := servertest.DoURL(t, url, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+name+`","arguments":`+args+`}}`),
			"Authorization: Bearer "+writer, "Mcp-Session-Id: "+sid, "MCP-Protocol-Version: 2025-11-25")
		res, ok := r.JSON(t)["result"].(map[string]any)
		if !ok {
			t.Fatalf("%s: %s", name, r.Body)
		}
		return res
	}
	sum := sha256.Sum256([]byte("x"))
	res := call(uploads.ToolBegin, `{"grant_token":"`+grant+`","case_id":"m_alvarez","filename":"x.txt","size_bytes":1,"sha256":"`+
		hex.EncodeToString(sum[:])+`","part_sha256":["LHSGKT98c/uEkIzTxDvLEGCW7gMdgE4ayiBa4I7yL4c="]}`)
	e, _ := servertest.Structured(t, res)["error"].(map[string]any)
	if e["class"] != "SCANNER_UNAVAILABLE" || e["spent"] != false {
		t.Errorf("begin_upload_session without a scanner = %v, want SCANNER_UNAVAILABLE spent false", e)
	}

	body := []byte("%PDF-1.7 stored")
	ref := blob.Stored(blob.NewID())
	if err := lane.Blob.PutObject(ctx, ref, bytes.NewReader(body), blob.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	ds := sha256.Sum256(body)
	at := time.Now().Add(-time.Hour)
	di, _ := records.DocumentItem(seed.DemoTenant, records.Document{ID: "d_alv_stored", Matter: seed.Alvarez, Title: "Stored",
		Kind: "declaration", Privilege: records.PrivilegeNone, CurrentVersion: 1, PageCount: 1, SHA256: hex.EncodeToString(ds[:]), CreatedAt: at, UpdatedAt: at})
	vi, _ := records.VersionItem(seed.DemoTenant, records.Version{DocumentID: "d_alv_stored", Matter: seed.Alvarez, Number: 1,
		SHA256: hex.EncodeToString(ds[:]), PageCount: 1, SizeBytes: int64(len(body)), ObjectKey: ref.Key, CreatedAt: at, UpdatedAt: at})
	if err := emu.Store.Transact(ctx, []store.Op{store.PutOp(di), store.PutOp(vi)}); err != nil {
		t.Fatal(err)
	}
	link, _ := servertest.Structured(t, call("get_document_download", `{"case_id":"m_alvarez","document_id":"d_alv_stored","version":1}`))["url"].(string)
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), s3srv.URL+"/"+s3local.Buckets.Record+"/obj/") {
		t.Errorf("GET %s = %d to %q, want 303 to the record bucket", link, resp.StatusCode, resp.Header.Get("Location"))
	}
}
