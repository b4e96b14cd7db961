// Package uploadstest deposits files through the upload lane's real steps
// for the tests of what comes after it (the scan gate, intake): a grant
// minted by a firm administrator, begin_upload_session's step, each part
// PUT to its presigned URL over HTTP as an agent would, complete_upload's
// step, each step's writes committed in one transaction as the invocation
// core commits them (without the call's rate count and audit row, which
// are the tool layer's), and the copy to verified/ that follows the spend.
package uploadstest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/access"
	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/blob/blobtest"
	"github.com/custodymcp/custody/shared/store"
	"github.com/custodymcp/custody/shared/uploads"
)

// Depositor deposits files into one tenant's matters with one write key.
type Depositor struct {
	Lane  *uploads.Lane
	Store store.Store
	// Credential is the depositing API key (standard class, scope write).
	Credential *auth.Credential
	// Admin is the firm administrator who mints the grants.
	Admin string
	// Now is the clock of every step.
	Now func() time.Time
	// GrantTTL is the life of the grants it mints (0: the default 24 h).
	GrantTTL time.Duration
}

// Digests returns the whole file's SHA-256 (hex) and each part's (base64)
// in the lane's fixed layout.
func Digests(body []byte) (whole string, parts []string) {
	sum := sha256.Sum256(body)
	for off := 0; off < len(body); off += uploads.PartSize {
		p := sha256.Sum256(body[off:min(off+uploads.PartSize, len(body))])
		parts = append(parts, base64.StdEncoding.EncodeToString(p[:]))
	}
	return hex.EncodeToString(sum[:]), parts
}

func (d Depositor) caller() uploads.Caller {
	return uploads.Caller{Credential: d.Credential, Who: access.WhoOf(d.Credential), Now: d.Now()}
}

// Begin mints a grant for matter, begins an upload of body named filename
// and PUTs every part to its URL with exactly its headers. It returns the
// grant token and the open upload.
func (d Depositor) Begin(t testing.TB, matter, filename string, body []byte) (string, uploads.Upload) {
	t.Helper()
	ctx := context.Background()
	token, _, err := uploads.MintGrant(ctx, d.Store, uploads.MintRequest{Tenant: d.Credential.Tenant,
		CredentialID: d.Credential.ID, Matter: matter, By: d.Admin, TTL: d.GrantTTL}, d.Now())
	if err != nil {
		t.Fatalf("mint a grant: %v", err)
	}
	whole, parts := Digests(body)
	step, err := d.Lane.Begin(ctx, d.caller(), uploads.BeginRequest{GrantToken: token, CaseID: matter,
		Filename: filename, Size: int64(len(body)), SHA256: whole, PartSHA256: parts})
	if err != nil {
		t.Fatalf("begin an upload of %s: %v", filename, err)
	}
	d.commit(t, step.Ops)
	s := step.Result
	for i, p := range s.Parts {
		h := http.Header{}
		for k, v := range p.Headers {
			h.Set(k, v)
		}
		off := i * uploads.PartSize
		if status, code := blobtest.Send(t, p.Method, p.URL, h, body[off:off+int(p.Size)]); status != http.StatusOK {
			t.Fatalf("PUT part %d of %s: %d %s", p.PartNumber, filename, status, code)
		}
	}
	return token, s.Upload
}

// Complete completes the upload and commits the spend; it returns the
// upload, now scan_pending, and the effects that follow the spend (the
// copy to verified/), not yet run.
func (d Depositor) Complete(t testing.TB, token string, u uploads.Upload) (uploads.Upload, []uploads.Effect) {
	t.Helper()
	step, err := d.Lane.Complete(context.Background(), d.caller(), token, u.ID)
	if err != nil {
		t.Fatalf("complete upload %s: %v", u.ID, err)
	}
	if step.Refused != nil {
		t.Fatalf("complete upload %s refused: %v", u.ID, step.Refused)
	}
	d.commit(t, step.Ops)
	return step.Result.Upload, step.After
}

// Deposit begins, PUTs and completes an upload of body named filename into
// matter and runs the copy to verified/: the upload is scan_pending with
// its object in verified/, where the scan gate looks.
func (d Depositor) Deposit(t testing.TB, matter, filename string, body []byte) uploads.Upload {
	t.Helper()
	token, u := d.Begin(t, matter, filename, body)
	u, after := d.Complete(t, token, u)
	for _, e := range after {
		if err := e.Run(context.Background()); err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
	}
	return u
}

func (d Depositor) commit(t testing.TB, ops []store.Op) {
	t.Helper()
	if len(ops) == 0 {
		return
	}
	if err := d.Store.Transact(context.Background(), ops); err != nil {
		var tx *store.TxCanceledError
		if errors.As(err, &tx) {
			t.Fatalf("a step's writes were cancelled by condition %d: %v", tx.Index, err)
		}
		t.Fatalf("commit a step's writes: %v", err)
	}
}
