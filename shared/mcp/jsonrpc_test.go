package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDecodeBody(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     string
		wantCode int // 0: accepted
		batch    bool
		kind     string // request, notification, response
		id       string
	}{
		{name: "request with integer id echoes the integer", body: `{"jsonrpc":"2.0","id":7,"method":"ping"}`, kind: "request", id: `7`},
		{name: "request with string id echoes the string", body: `{"jsonrpc":"2.0","id":"7","method":"ping"}`, kind: "request", id: `"7"`},
		{name: "negative integer id", body: `{"jsonrpc":"2.0","id":-3,"method":"ping"}`, kind: "request", id: `-3`},
		{name: "notification has no id", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, kind: "notification"},
		{name: "client response", body: `{"jsonrpc":"2.0","id":"s-1","result":{"action":"accept"}}`, kind: "response", id: `"s-1"`},
		{name: "client error response", body: `{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"no"}}`, kind: "response", id: `4`},
		{name: "batch of two", body: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]`, batch: true, kind: "request", id: `1`},
		{name: "null id is -32600 not a notification (FB-10)", body: `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, wantCode: CodeInvalidRequest},
		{name: "object id is -32600", body: `{"jsonrpc":"2.0","id":{},"method":"tools/list"}`, wantCode: CodeInvalidRequest},
		{name: "fractional id is -32600", body: `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, wantCode: CodeInvalidRequest},
		{name: "exponent id is -32600", body: `{"jsonrpc":"2.0","id":1e3,"method":"tools/list"}`, wantCode: CodeInvalidRequest},
		{name: "boolean id is -32600", body: `{"jsonrpc":"2.0","id":true,"method":"tools/list"}`, wantCode: CodeInvalidRequest},
		{name: "missing jsonrpc is -32600", body: `{"id":1,"method":"ping"}`, wantCode: CodeInvalidRequest},
		{name: "wrong jsonrpc is -32600", body: `{"jsonrpc":"2","id":1,"method":"ping"}`, wantCode: CodeInvalidRequest},
		{name: "empty method is -32600", body: `{"jsonrpc":"2.0","id":1,"method":""}`, wantCode: CodeInvalidRequest},
		{name: "numeric method is -32600", body: `{"jsonrpc":"2.0","id":1,"method":5}`, wantCode: CodeInvalidRequest},
		{name: "request with result is -32600", body: `{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`, wantCode: CodeInvalidRequest},
		{name: "response with both result and error is -32600", body: `{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, wantCode: CodeInvalidRequest},
		{name: "response without id is -32600", body: `{"jsonrpc":"2.0","result":{}}`, wantCode: CodeInvalidRequest},
		{name: "empty batch is -32600 (FB-12)", body: `[]`, wantCode: CodeInvalidRequest},
		{name: "batch with a non-object is -32600", body: `[1]`, wantCode: CodeInvalidRequest},
		{name: "scalar body is -32600", body: `"ping"`, wantCode: CodeInvalidRequest},
		{name: "null body is -32600", body: `null`, wantCode: CodeInvalidRequest},
		{name: "truncated JSON is -32700", body: `{"jsonrpc":"2.0",`, wantCode: CodeParseError},
		{name: "trailing garbage is -32700", body: `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, wantCode: CodeParseError},
		{name: "empty body is -32700", body: ``, wantCode: CodeParseError},
		{name: "invalid UTF-8 is -32700", body: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}", wantCode: CodeParseError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := DecodeBody([]byte(tc.body))
			if tc.wantCode != 0 {
				if err == nil {
					t.Fatalf("DecodeBody(%s) = %+v, want error %d", tc.body, b, tc.wantCode)
				}
				if err.Code != tc.wantCode {
					t.Fatalf("DecodeBody(%s) code = %d, want %d", tc.body, err.Code, tc.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeBody(%s) = %v, want success", tc.body, err)
			}
			if b.Batch != tc.batch {
				t.Errorf("Batch = %v, want %v", b.Batch, tc.batch)
			}
			m := b.Messages[0]
			kind := map[bool]string{true: "request"}[m.IsRequest()]
			if m.IsNotification() {
				kind = "notification"
			} else if m.IsResponse() {
				kind = "response"
			}
			if kind != tc.kind {
				t.Errorf("kind = %q, want %q", kind, tc.kind)
			}
			if got, _ := json.Marshal(m.ID); tc.id != "" && string(got) != tc.id {
				t.Errorf("id = %s, want %s", got, tc.id)
			}
		})
	}
}

func TestEncodeResponseOmitsAbsentID(t *testing.T) {
	got := string(encodeResponse(ID{}, nil, &Error{Code: CodeParseError, Message: "x"}))
	want := `{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}`
	if got != want {
		t.Errorf("encodeResponse = %s, want %s", got, want)
	}
	got = string(encodeResponse(StringID("a"), struct{}{}, nil))
	if want := `{"jsonrpc":"2.0","id":"a","result":{}}`; got != want {
		t.Errorf("encodeResponse = %s, want %s", got, want)
	}
}

func TestDecodeBodySaysWhyItIsNotJSON(t *testing.T) {
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	for body, want := range map[string]string{
		deep:       "Parse error: the body nests arrays or objects more than 10000 levels deep.",
		`{"a":`:    "Parse error: the body is not valid JSON.",
		`{"a":1}x`: "Parse error: the body is not valid JSON.",
	} {
		if _, err := DecodeBody([]byte(body)); err == nil || err.Code != CodeParseError || err.Message != want {
			t.Errorf("DecodeBody(%.20s…) = %v, want -32700 %q", body, err, want)
		}
	}
}
