package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/shared/admin"
	"github.com/custodymcp/custody/shared/records/seed"
)

// impostor is a local process that took over the port a crashed dev server
// left in the data folder's admin-addr. It records everything it is sent.
type impostor struct {
	mu       sync.Mutex
	requests []string // each request's header lines and body
}

func (i *impostor) record(r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var b bytes.Buffer
	_ = r.Header.Write(&b)
	i.mu.Lock()
	i.requests = append(i.requests, r.Method+" "+r.RequestURI+"\n"+b.String()+"\n"+string(body))
	i.mu.Unlock()
}

// leaked reports the requests that carried secret.
func (i *impostor) leaked(secret string) []string {
	i.mu.Lock()
	defer i.mu.Unlock()
	var out []string
	for _, r := range i.requests {
		if strings.Contains(r, secret) {
			out = append(out, r)
		}
	}
	return out
}

// The ways an impostor answers.
var impostors = []struct {
	name  string
	serve func(w http.ResponseWriter, r *http.Request)
}{
	{"imitates the admin endpoint's 401 challenge, then answers success", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="custody-admin"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		succeed(w, r)
	}},
	{"answers the challenge with a made-up proof", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/challenge") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"server_nonce":"`+randomB64()+`","proof":"`+randomB64()+`"}`)
			return
		}
		succeed(w, r)
	}},
	{"answers every request with success", succeed},
}

// succeed answers as a working admin endpoint would, with nothing done.
func succeed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodGet:
		_, _ = io.WriteString(w, `[]`)
	case strings.HasSuffix(r.URL.Path, "/revoke"):
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"key":"ck_made_up","credential_id":"cred_made_up","tenant":"demo","owner":"p_dana_whitfield","scopes":["read"]}`)
	}
}

func randomB64() string { return base64.RawURLEncoding.EncodeToString([]byte(rand.Text())) }

// After a crash the admin-addr file outlives the server; whatever process
// holds that port next must not receive the admin token, however well it
// imitates the endpoint, and custodyctl must not report work it did not do.
func TestAnImpostorOnTheRecordedAdminAddressNeverReceivesTheToken(t *testing.T) {
	for _, imp := range impostors {
		t.Run(imp.name, func(t *testing.T) {
			b := stoppedFile(t)
			token, err := b.data.Secret(datadir.AdminTokenFile, 32)
			if err != nil {
				t.Fatal(err)
			}
			rec := &impostor{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec.record(r)
				imp.serve(w, r)
			}))
			defer srv.Close()
			if err := b.data.Write(datadir.AdminAddrFile, strings.TrimPrefix(srv.URL, "http://")); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"keys", "list"},
				{"keys", "revoke", "cred_doesnotexist"},
				{"keys", "mint", "--owner", "p_dana_whitfield", "--scopes", "read"},
			} {
				out, err := ctl(t, b.env, b.args(args...)...)
				if !errors.Is(err, admin.ErrUnauthenticatedServer) {
					t.Errorf("custodyctl %s through the impostor = %q, %v; want admin.ErrUnauthenticatedServer", strings.Join(args, " "), out, err)
				}
			}
			if got := rec.leaked(token); len(got) > 0 {
				t.Errorf("the impostor received the admin token in %d requests, first:\n%s", len(got), got[0])
			}
		})
	}
}

// A server that died leaves its address with nothing listening there:
// custodyctl opens the store itself, as for a stopped server.
func TestAnAdminAddressWithNothingListeningFallsBackToTheStore(t *testing.T) {
	b := stoppedFile(t)
	if _, err := b.data.Secret(datadir.AdminTokenFile, 32); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if err := b.data.Write(datadir.AdminAddrFile, addr); err != nil {
		t.Fatal(err)
	}
	mustCtl(t, b.env, b.args("import", demoFixture)...)
	if out := mustCtl(t, b.env, b.args("keys", "mint", "--owner", seed.DemoAttorney, "--scopes", "read")...); !strings.HasPrefix(out, "ck_") {
		t.Errorf("keys mint with a dead address recorded = %q, want a key", out)
	}
}
