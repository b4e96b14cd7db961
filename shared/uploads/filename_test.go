package uploads_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custodymcp/custody/shared/blob"
	"github.com/custodymcp/custody/shared/store/filestore"
	"github.com/custodymcp/custody/shared/uploads"
)

// A filename is data shown to the reviewing attorney: a name of dots
// alone, or one carrying a format character that makes it read as another
// (U+202E turns "invoice\u202efdp.exe" into "invoiceexe.pdf" on screen),
// is refused with a sentence saying why, before any row is written; an
// ordinary name, accents and all, is taken.
func TestAnImportedFilenameOfDotsOrInvisibleFormattingIsRefused(t *testing.T) {
	st, err := filestore.Open(filepath.Join(t.TempDir(), "custody.db"), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	digest := strings.Repeat("ab", 32)
	for name, want := range map[string]string{
		".":                       "not '.' or '..'",
		"..":                      "not '.' or '..'",
		"...":                     "not '.' or '..'",
		"invoice\u202efdp.exe":    "invisible formatting",
		"memo\u200b.txt":          "invisible formatting",
		"evil\nname.txt":          "control characters",
		"Déposition — 3 mars.pdf": "",
	} {
		_, err := uploads.StageImport(context.Background(), st, uploads.ImportRequest{Object: blob.NewID(), Tenant: "demo",
			Matter: "m_alvarez", By: "p_dana_whitfield", Filename: name, Size: 1, SHA256: digest}, time.Now())
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v, want it taken", name, err)
		case want != "" && (!errors.Is(err, uploads.ErrInvalidImport) || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: %v, want ErrInvalidImport saying %q", name, err, want)
		}
	}
}
