package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Fuzz targets for the parsers that face untrusted input. `make fuzz` runs
// each for a bounded time; crashers found are kept under testdata/fuzz as
// seeds, so every `go test` replays them.

func FuzzDecodeBody(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`[{"jsonrpc":"2.0","method":"x"}]`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":-99999999999999999999,"method":"x"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}",
		`[]`, `null`, `"x"`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		b, err := DecodeBody(body)
		if (b == nil) == (err == nil) {
			t.Fatalf("DecodeBody(%q) = %v, %v: exactly one must be set", body, b, err)
		}
		if err != nil {
			if err.Code != CodeParseError && err.Code != CodeInvalidRequest {
				t.Fatalf("DecodeBody(%q) code %d", body, err.Code)
			}
			return
		}
		for _, m := range b.Messages {
			if !m.ID.IsZero() && !validID(m.ID.raw) {
				t.Fatalf("accepted id %s", m.ID.raw)
			}
			// An accepted message's id echoes as valid JSON of the same text.
			out := encodeResponse(m.ID, struct{}{}, nil)
			if !json.Valid(out) {
				t.Fatalf("response %q is not JSON", out)
			}
		}
	})
}

func FuzzEraDetectionAndChecks(f *testing.F) {
	f.Add(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`, "2026-07-28", "tools/list", "", "")
	f.Add(`{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`, "2026-07-28", "tools/call", "=?base64?eA==?=", "")
	f.Add(`{}`, "v999", "server/discover", "", "s")
	f.Add(`{"_meta":null}`, "", "x", "", "")
	srv := NewServer(Options{})
	srv.Register("tools/call", Method{NameParam: "name"})
	f.Fuzz(func(t *testing.T, params, header, mcpName, method, session string) {
		if !json.Valid([]byte(params)) || !isJSONObject(json.RawMessage(params)) {
			return
		}
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if header != "" {
			r.Header.Set("MCP-Protocol-Version", header)
		}
		if session != "" {
			r.Header.Set("Mcp-Session-Id", session)
		}
		r.Header.Set("Mcp-Name", mcpName)
		m := &Message{ID: IntID(1), Method: "tools/call", Params: parseParams(json.RawMessage(params))}
		if method != "" {
			m.Method = method
		}
		b := &Body{Messages: []*Message{m}}
		if !isEra2026(r, b) {
			return
		}
		meta, serr := srv.check2026(r, m)
		if (meta == nil) == (serr == nil) {
			t.Fatalf("check2026 = %v, %v: exactly one must be set", meta, serr)
		}
		if serr != nil && (serr.Code != CodeHeaderMismatch && serr.Code != CodeInvalidParams && serr.Code != CodeUnsupportedProtocolVersion) {
			t.Fatalf("transport refusal with code %d, not one of the 2026 header/params codes", serr.Code)
		}
		if meta != nil && meta.ProtocolVersion != string(Rev20260728) {
			t.Fatalf("accepted _meta %+v", meta)
		}
	})
}

func FuzzCursorOpen(f *testing.F) {
	s, _ := NewCursorSealer(bytes.Repeat([]byte{3}, 32), time.Hour)
	now := time.Unix(1_800_000_000, 0)
	scope := CursorScope{Method: "tools/list", CredentialID: "cred_a", Keys: []string{"a", "b", "c"}, Era: "legacy"}
	valid := s.Seal(scope, 1, now)
	f.Add(valid)
	f.Add("cursor-never-issued-42")
	f.Add(valid + "x")
	f.Add("." + valid)
	f.Fuzz(func(t *testing.T, cursor string) {
		off, err := s.Open(cursor, scope, now)
		if err != nil {
			return
		}
		// Only what this sealer issued may open (a cursor's base64 may be
		// spelled another way, but its content is the one sealed).
		if off != 1 {
			t.Fatalf("Open(%q) = %d, nil: a forged cursor opened", cursor, off)
		}
	})
}

func FuzzRequestStateOpen(f *testing.F) {
	s, _ := NewStateSealer(bytes.Repeat([]byte{5}, 32), time.Minute)
	valid, _ := s.seal(mrtrState{Cred: "c", Method: "tools/call", Name: "t", Args: "d", Exp: 2e9, Round: 1, Nonce: "n"})
	f.Add(valid)
	f.Add(valid + "-TAMPERED")
	f.Add("")
	f.Add("AAAA")
	f.Fuzz(func(t *testing.T, token string) {
		st, ok := s.open(token)
		if !ok {
			return
		}
		// AES-GCM authenticates: only states this key sealed open, and the
		// only one sealed here says this.
		if st.Cred != "c" || st.Method != "tools/call" || st.Name != "t" || st.Round != 1 || st.Nonce != "n" {
			t.Fatalf("open(%q) = %+v: a forged state opened", token, st)
		}
	})
}
