package readtools_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/readtools"
	"github.com/custodymcp/custody/shared/records"
)

// TestTheKindEnumIsTheRecordsVocabulary: list_documents advertises (and
// validates) exactly the kinds a document may have.
func TestTheKindEnumIsTheRecordsVocabulary(t *testing.T) {
	f, ok := reflect.TypeFor[readtools.ListDocumentsInput]().FieldByName("Kind")
	if !ok {
		t.Fatal("ListDocumentsInput has no Kind")
	}
	enum, ok := strings.CutPrefix(f.Tag.Get("schema"), "enum=")
	if !ok {
		t.Fatalf("kind's schema tag %q is not an enum", f.Tag.Get("schema"))
	}
	if diff := cmp.Diff(records.DocumentKinds, strings.Split(enum, "|")); diff != "" {
		t.Errorf("kind enum (-records.DocumentKinds +tag):\n%s", diff)
	}
}
