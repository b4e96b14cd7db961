package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/custodymcp/custody/shared/auth"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// How /mcp answers the credential a request presents (RFC 6750 §3.1;
// docs/decisions.md "Answers on the wire"): none at all is a bare challenge, one
// that fails is invalid_token, two at once are invalid_request.

// post sends body to url with headers added line by line, so a name may
// repeat (servertest.DoURL keeps one value per name).
func post(t *testing.T, url string, body []byte, headers http.Header) *servertest.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for name, values := range headers {
		for _, v := range values {
			req.Header.Add(name, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &servertest.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// jsonrpcError decodes a JSON-RPC error answer: its code, message and id.
func jsonrpcError(t *testing.T, r *servertest.Response) (code int, message string, id any) {
	t.Helper()
	var msg struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &msg); err != nil || msg.JSONRPC != "2.0" || msg.Error == nil {
		t.Fatalf("body %q is not a JSON-RPC error", r.Body)
	}
	return msg.Error.Code, msg.Error.Message, msg.ID
}

// A proxy or logger that reads the first Authorization, or only
// Authorization, would see another caller than the one Custody serves: a
// request carrying two credentials is refused before any is resolved, 400
// invalid_request ("uses more than one method for including an access
// token", RFC 6750 §3.1) with a JSON-RPC -32600 body.
func TestARequestWithTwoCredentialsIsRefused400InvalidRequest(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	attorney, paralegal := env.Keys[servertest.Attorney], env.Keys[servertest.Paralegal]
	for _, tc := range []struct {
		name    string
		headers http.Header
	}{
		{"two Authorization headers", http.Header{"Authorization": {"Bearer " + attorney, "Bearer " + paralegal}}},
		{"the same key in two Authorization headers", http.Header{"Authorization": {"Bearer " + attorney, "Bearer " + attorney}}},
		{"Authorization and a different X-API-Key", http.Header{"Authorization": {"Bearer " + attorney}, "X-Api-Key": {paralegal}}},
		{"two X-API-Key headers", http.Header{"X-Api-Key": {attorney, paralegal}}},
		{"a Basic Authorization and an X-API-Key", http.Header{"Authorization": {"Basic dXNlcjpwYXNz"}, "X-Api-Key": {attorney}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, env.URL, initBody(7), tc.headers)
			if r.Status != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400; body %s", r.Status, r.Body)
			}
			if _, params := parseChallenge(t, r.Header.Get("WWW-Authenticate")); params["error"] != "invalid_request" {
				t.Errorf("WWW-Authenticate = %q, want error=\"invalid_request\"", r.Header.Get("WWW-Authenticate"))
			}
			if code, _, id := jsonrpcError(t, r); code != -32600 || id != 7.0 {
				t.Errorf("JSON-RPC error code %d, id %v; want -32600 with the request's id 7", code, id)
			}
			if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
				t.Errorf("a session %s was created", sid)
			}
		})
	}
	t.Run("the same key as Authorization and X-API-Key is one credential", func(t *testing.T) {
		r := post(t, env.URL, initBody(8), http.Header{"Authorization": {"Bearer " + attorney}, "X-Api-Key": {attorney}})
		expectStatus(t, r, http.StatusOK)
	})
}

// A credential that is presented and fails is invalid_token (RFC 6750
// §3.1), with one message whatever the reason, so the answer never tells a
// revoked key from one that never existed; no credential at all is the bare
// challenge.
func TestAnUnknownAndARevokedKeyGetTheSameInvalidTokenAnswer(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	cred := env.Creds[servertest.Paralegal]
	if err := auth.Revoke(context.Background(), env.Store, cred.Tenant, cred.ID); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		Status    int
		Challenge string
		Code      int
		Message   string
	}
	answerTo := func(t *testing.T, h http.Header) answer {
		t.Helper()
		r := post(t, env.URL, initBody(1), h)
		code, msg, _ := jsonrpcError(t, r)
		return answer{r.Status, r.Header.Get("WWW-Authenticate"), code, msg}
	}
	unknown := answerTo(t, http.Header{"Authorization": {"Bearer " + auth.NewKey()}})
	if unknown.Status != http.StatusUnauthorized || unknown.Challenge != `Bearer realm="custody", error="invalid_token"` {
		t.Errorf("a well-formed unknown key: %d, WWW-Authenticate %q; want 401 with error=\"invalid_token\"", unknown.Status, unknown.Challenge)
	}
	for name, h := range map[string]http.Header{
		"a revoked key":               {"Authorization": {"Bearer " + env.Keys[servertest.Paralegal]}},
		"a revoked key as X-API-Key":  {"X-Api-Key": {env.Keys[servertest.Paralegal]}},
		"an unknown key as X-API-Key": {"X-Api-Key": {auth.NewKey()}},
		"a bearer that is not a key":  {"Authorization": {"Bearer ck_short"}},
		"a lower-case bearer scheme":  {"Authorization": {"bearer " + auth.NewKey()}},
	} {
		if got := answerTo(t, h); got != unknown {
			t.Errorf("%s: %+v, want the unknown key's %+v", name, got, unknown)
		}
	}
	for name, h := range map[string]http.Header{
		"no credential":      {},
		"a Basic credential": {"Authorization": {"Basic dXNlcjpwYXNz"}},
	} {
		if got := answerTo(t, h); got.Status != http.StatusUnauthorized || got.Challenge != `Bearer realm="custody"` {
			t.Errorf("%s: %d, WWW-Authenticate %q; want 401 with the bare challenge (no credential of this scheme was presented)", name, got.Status, got.Challenge)
		}
	}
}
