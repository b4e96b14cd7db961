package mcp

import (
	"bytes"
	"encoding/json"
)

// Params are one message's params, decoded once per message (issue 9,
// "params parsed once"): the body decoder splits them into members in one
// pass over their bytes, and params._meta into its members, and that one
// value is carried to the transport's checks, the method table and the
// handler. Nothing below re-reads the params text: the era, the Mcp-Name
// check, the rate lane, the MRTR state, the progress token and a tool's
// arguments are all read from it. A method with a shape of its own
// (initialize, completion/complete) decodes it once more into its own type
// with Decode, which is counted too.
//
// Absent or null params are an empty object. Member names are matched
// exactly (MCP's schema is case-sensitive); a repeated member's last value
// wins, as encoding/json would decide.
type Params struct {
	raw     json.RawMessage
	object  bool
	members []member
	meta    []member
	decodes int
}

// parseParams splits raw (nil, null or any valid JSON value) into members.
func parseParams(raw json.RawMessage) *Params {
	p := &Params{raw: raw, object: true, decodes: 1}
	if len(raw) == 0 {
		return p
	}
	p.members, p.object = objectMembers(raw)
	if mv := p.Get("_meta"); mv != nil {
		p.meta, _ = objectMembers(mv)
	}
	return p
}

// Raw returns the params as the client sent them (nil when absent).
func (p *Params) Raw() json.RawMessage { return p.raw }

// IsObject reports whether the params are an object (absent params are).
func (p *Params) IsObject() bool { return p.object }

// Get returns a member's raw value, nil when absent. A null value is
// returned as null.
func (p *Params) Get(name string) json.RawMessage { return lookup(p.members, name) }

// String returns a string member's value; ok is false when the member is
// absent or not a JSON string.
func (p *Params) String(name string) (s string, ok bool) { return stringOf(p.Get(name)) }

// Meta returns a member of params._meta, nil when absent.
func (p *Params) Meta(name string) json.RawMessage { return lookup(p.meta, name) }

// HasMeta reports whether params carry a _meta object.
func (p *Params) HasMeta() bool { return p.Get("_meta") != nil }

// Decode decodes the whole params into v, for a method whose params have a
// shape of their own (absent params decode as {}). Errors are the -32602
// every method answers alike.
func (p *Params) Decode(v any) *Error {
	p.decodes++
	return DecodeParams(p.raw, v)
}

// Decodes is how many times the params were decoded: once when the body
// was read, plus each Decode (the counting hook of issue 9's test).
func (p *Params) Decodes() int { return p.decodes }

// ProgressToken is params._meta.progressToken, nil when absent or null.
func (p *Params) ProgressToken() json.RawMessage {
	t := p.Meta("progressToken")
	if len(t) == 0 || string(t) == "null" {
		return nil
	}
	return t
}

func lookup(ms []member, name string) json.RawMessage {
	var v json.RawMessage
	for i := range ms {
		if ms[i].key == name {
			v = ms[i].value // the last of repeated members wins
		}
	}
	return v
}

func stringOf(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	return unquote(raw)
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}
