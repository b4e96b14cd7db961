package mcp

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCursorRefusals(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s, err := NewCursorSealer(bytes.Repeat([]byte{1}, 32), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"a", "b", "c", "d", "e"}
	scope := CursorScope{Method: "tools/list", CredentialID: "cred_1", Keys: keys, Era: "legacy"}
	c := s.Seal(scope, 3, now)
	if off, err := s.Open(c, scope, now); err != nil || off != 3 {
		t.Fatalf("Open(own cursor) = %d, %v; want 3, nil", off, err)
	}
	other, _ := NewCursorSealer(bytes.Repeat([]byte{2}, 32), time.Hour)
	payload, sig, _ := strings.Cut(c, ".")
	edited := payload[:len(payload)-2] + "AA." + sig
	for _, tc := range []struct {
		name   string
		cursor string
		scope  CursorScope
		at     time.Time
	}{
		{"never issued", "cursor-never-issued-42", scope, now},
		{"empty string", "", scope, now},
		{"edited payload", edited, scope, now},
		{"sealed under another key", other.Seal(scope, 3, now), scope, now},
		{"another credential", c, CursorScope{Method: "tools/list", CredentialID: "cred_2", Keys: keys, Era: "legacy"}, now},
		{"another method", c, CursorScope{Method: "prompts/list", CredentialID: "cred_1", Keys: keys, Era: "legacy"}, now},
		{"the list changed", c, CursorScope{Method: "tools/list", CredentialID: "cred_1", Keys: keys[:4], Era: "legacy"}, now},
		{"another era", c, CursorScope{Method: "tools/list", CredentialID: "cred_1", Keys: keys, Era: "2026"}, now},
		{"expired", c, scope, now.Add(time.Hour)},
		{"offset past the end", s.Seal(scope, 5, now), scope, now},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.Open(tc.cursor, tc.scope, tc.at); !errors.Is(err, ErrBadCursor) {
				t.Errorf("Open = %v, want ErrBadCursor", err)
			}
		})
	}
}

func TestPageOfNeverIssuesEmptyCursor(t *testing.T) {
	now := time.Now()
	s, _ := NewCursorSealer(bytes.Repeat([]byte{1}, 32), time.Hour)
	keys := []string{"a", "b", "c", "d", "e", "f"}
	scope := CursorScope{Method: "tools/list", CredentialID: "c", Keys: keys, Era: "legacy"}
	var seen []string
	var cursor *string
	for pages := 0; ; pages++ {
		start, end, next, err := s.PageOf(cursor, scope, 3, now)
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, keys[start:end]...)
		if next == "" {
			if pages != 1 {
				t.Errorf("pages = %d, want 2 (exactly full last page has no cursor)", pages+1)
			}
			break
		}
		cursor = &next
	}
	if strings.Join(seen, "") != "abcdef" {
		t.Errorf("paged %v, want every key once", seen)
	}
}

func TestAPositionCursorOpensOnlyAsOneAndOnlyForItsScope(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s, err := NewCursorSealer(bytes.Repeat([]byte{1}, 32), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	scope := CursorScope{Method: "tasks/list", CredentialID: "cred_1", Era: "legacy"}
	c := s.SealAfter(scope, "tk42", now)
	if after, err := s.OpenAfter(c, scope, now); err != nil || after != "tk42" {
		t.Fatalf("OpenAfter(own cursor) = %q, %v; want tk42", after, err)
	}
	offset := s.Seal(CursorScope{Method: "tasks/list", CredentialID: "cred_1", Keys: []string{"a", "b"}, Era: "legacy"}, 1, now)
	for _, tc := range []struct {
		name   string
		cursor string
		scope  CursorScope
		at     time.Time
	}{
		{"another credential", c, CursorScope{Method: "tasks/list", CredentialID: "cred_2", Era: "legacy"}, now},
		{"another method", c, CursorScope{Method: "tools/list", CredentialID: "cred_1", Era: "legacy"}, now},
		{"another era", c, CursorScope{Method: "tasks/list", CredentialID: "cred_1", Era: "2026"}, now},
		{"expired", c, scope, now.Add(time.Hour)},
		{"an offset cursor", offset, scope, now},
		{"never issued", "cursor-never-issued", scope, now},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.OpenAfter(tc.cursor, tc.scope, tc.at); !errors.Is(err, ErrBadCursor) {
				t.Errorf("OpenAfter = %v, want ErrBadCursor", err)
			}
		})
	}
	if _, err := s.Open(c, CursorScope{Method: "tasks/list", CredentialID: "cred_1", Keys: []string{"a", "b"}, Era: "legacy"}, now); !errors.Is(err, ErrBadCursor) {
		t.Errorf("Open(a position cursor) = %v, want ErrBadCursor", err)
	}
}
