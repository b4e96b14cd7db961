package mcp

import (
	"encoding/json"
	"strings"
)

// member is one member of a JSON object: its key, unescaped, and its value
// as raw JSON text.
type member struct {
	key   string
	value json.RawMessage
}

// objectMembers splits a JSON object into its members, in order, without
// decoding any value: one pass over the bytes, no reflection. raw must be
// valid JSON (the body was checked with json.Valid); ok is false when it is
// not an object.
func objectMembers(raw []byte) (members []member, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return nil, true
	}
	for i < len(raw) {
		if raw[i] != '"' {
			return nil, false
		}
		end := stringEnd(raw, i)
		if end < 0 {
			return nil, false
		}
		key, ok := unquote(raw[i : end+1])
		if !ok {
			return nil, false
		}
		i = skipSpace(raw, end+1)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		start := skipSpace(raw, i+1)
		stop := valueEnd(raw, start)
		if stop < 0 {
			return nil, false
		}
		members = append(members, member{key: key, value: raw[start:stop]})
		i = skipSpace(raw, stop)
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return members, true
		default:
			return nil, false
		}
	}
	return nil, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index of the quote closing the string that starts
// at b[i], or -1.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}

// unquote returns a JSON string literal's value; the common case (no
// escapes) costs no decoding.
func unquote(lit []byte) (string, bool) {
	inner := lit[1 : len(lit)-1]
	if !strings.ContainsRune(string(inner), '\\') {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return "", false
	}
	return s, true
}

// valueEnd returns the index just past the JSON value starting at b[i], or
// -1. Nested objects and arrays are skipped by depth, minding strings.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end := stringEnd(b, i)
		if end < 0 {
			return -1
		}
		return end + 1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := stringEnd(b, j)
				if end < 0 {
					return -1
				}
				j = end
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default: // a number, true, false or null: up to the next delimiter
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return j
			}
			j++
		}
		return j
	}
}
