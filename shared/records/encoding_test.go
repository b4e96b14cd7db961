package records_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/records"
	"github.com/custodymcp/custody/shared/store/storetest"
)

// marker stands for the invalid bytes until the fixture is encoded:
// encoding/json would replace invalid UTF-8 itself.
const marker = "\u2603MARKER\u2603"

// withInvalidUTF8 returns the demo fixture in the seed format with the
// string edit picks ending in the bytes 0xff 0xfe (never UTF-8).
func withInvalidUTF8(t *testing.T, edit func(f *records.Fixture)) []byte {
	t.Helper()
	f := demo(t)
	edit(&f)
	raw, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(raw, []byte(marker)) != 1 {
		t.Fatal("the edit did not place the marker once")
	}
	return bytes.Replace(raw, []byte(marker), []byte("\xff\xfe"), 1)
}

// TestAFixtureWithInvalidUTF8IsRefusedNamingTheRecordAndField: text the
// record keeps verbatim is never silently rewritten to U+FFFD: the import
// in the seed format (custodyctl import, the admin route) and the import of
// a fixture built in Go both refuse the whole fixture with an
// EncodingError naming the record and the field, and write nothing.
func TestAFixtureWithInvalidUTF8IsRefusedNamingTheRecordAndField(t *testing.T) {
	fx := demo(t)
	d := fx.Documents[0]
	withQuote, withProposal := -1, -1
	for i, x := range fx.Facts {
		if withQuote < 0 && len(x.Assertions) > 1 {
			withQuote = i
		}
		if withProposal < 0 && x.ModelProposal != nil {
			withProposal = i
		}
	}
	if withQuote < 0 || withProposal < 0 || len(d.Versions[0].Chunks) < 2 {
		t.Fatal("the demo fixture lacks a fact with two assertions, a model proposal or a document of two chunks")
	}
	for _, tc := range []struct {
		name string
		edit func(f *records.Fixture)
		want records.EncodingError
	}{
		{"a chunk's text", func(f *records.Fixture) { f.Documents[0].Versions[0].Chunks[1].Text += marker },
			records.EncodingError{Record: "document " + d.ID + " version 1 chunk 2", Field: "text"}},
		{"a quote of a fact's second assertion", func(f *records.Fixture) { f.Facts[withQuote].Assertions[1].Quote += marker },
			records.EncodingError{Record: "fact " + fx.Facts[withQuote].ID + " assertion 2", Field: "quote"}},
		{"a model proposal's rationale", func(f *records.Fixture) {
			p := *f.Facts[withProposal].ModelProposal
			p.Rationale += marker
			f.Facts[withProposal].ModelProposal = &p
		}, records.EncodingError{Record: "fact " + fx.Facts[withProposal].ID, Field: "model_proposal.rationale"}},
		{"a matter's caption", func(f *records.Fixture) { f.Matters[1].Caption += marker },
			records.EncodingError{Record: "matter " + fx.Matters[1].ID, Field: "caption"}},
		{"a note's body", func(f *records.Fixture) { f.Notes[2].Body += marker },
			records.EncodingError{Record: "note " + fx.Notes[2].ID, Field: "body"}},
		{"a document's title", func(f *records.Fixture) { f.Documents[3].Title += marker },
			records.EncodingError{Record: "document " + fx.Documents[3].ID, Field: "title"}},
		{"a document's own id: named by position", func(f *records.Fixture) { f.Documents[3].ID += marker },
			records.EncodingError{Record: "document #4", Field: "id"}},
		{"the tenant's name", func(f *records.Fixture) { f.Tenant.Name += marker },
			records.EncodingError{Record: "tenant " + fx.Tenant.ID, Field: "name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			data := withInvalidUTF8(t, tc.edit)
			st := newStore(t)
			_, err := records.ImportJSON(ctx, st, data, importedAt)
			var got *records.EncodingError
			if !errors.As(err, &got) || !errors.Is(err, records.ErrInvalid) {
				t.Fatalf("ImportJSON = %v, want an EncodingError wrapping ErrInvalid", err)
			}
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("EncodingError (-want +got):\n%s", diff)
			}
			if n := st.Calls(storetest.MethodTransact) + st.Calls(storetest.MethodPut); n != 0 {
				t.Errorf("the refused import made %d writes, want 0", n)
			}

			// The same fixture built in Go, its string still invalid.
			f := demo(t)
			tc.edit(&f)
			replaceMarker(&f)
			_, err = records.Import(ctx, st, f, importedAt)
			if !errors.As(err, &got) {
				t.Fatalf("Import = %v, want an EncodingError", err)
			}
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("Import's EncodingError (-want +got):\n%s", diff)
			}
		})
	}
}

// replaceMarker puts the invalid bytes in place of the marker in every
// string of f the edits touch.
func replaceMarker(f *records.Fixture) {
	fix := func(s *string) { *s = string(bytes.Replace([]byte(*s), []byte(marker), []byte("\xff\xfe"), 1)) }
	fix(&f.Tenant.Name)
	for i := range f.Matters {
		fix(&f.Matters[i].Caption)
	}
	for i := range f.Notes {
		fix(&f.Notes[i].Body)
	}
	for i := range f.Documents {
		fix(&f.Documents[i].ID)
		fix(&f.Documents[i].Title)
		for j := range f.Documents[i].Versions {
			for k := range f.Documents[i].Versions[j].Chunks {
				fix(&f.Documents[i].Versions[j].Chunks[k].Text)
			}
		}
	}
	for i := range f.Facts {
		for j := range f.Facts[i].Assertions {
			fix(&f.Facts[i].Assertions[j].Quote)
		}
		if p := f.Facts[i].ModelProposal; p != nil {
			fix(&p.Rationale)
		}
	}
}
