package datadir_test

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"testing"

	"github.com/custodymcp/custody/scripts/internal/datadir"
)

func TestSecretIsSharedByProcessesRacingToCreateIt(t *testing.T) {
	dir := datadir.Dir(t.TempDir())
	const n = 16
	got := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := dir.Secret(datadir.CursorKeyFile, 32)
			if err != nil {
				t.Error(err)
			}
			got[i] = s
		})
	}
	wg.Wait()
	for i, s := range got {
		if len(s) != 64 || s != got[0] {
			t.Fatalf("Secret #%d = %q, #0 = %q; want one 32-byte hex secret for all", i, s, got[0])
		}
	}
	info, err := os.Stat(dir.Path(datadir.CursorKeyFile))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("secret file mode = %v, %v; want 0600", info.Mode(), err)
	}
	if again, _ := dir.Secret(datadir.CursorKeyFile, 32); again != got[0] {
		t.Errorf("a later Secret = %q, want the stored %q", again, got[0])
	}
}

func TestCreateNeverReplaces(t *testing.T) {
	dir := datadir.Dir(t.TempDir())
	if err := dir.Create("f", "first"); err != nil {
		t.Fatal(err)
	}
	if err := dir.Create("f", "second"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second Create = %v, want fs.ErrExist", err)
	}
	if s, _ := dir.Read("f"); s != "first" {
		t.Errorf("content = %q, want first", s)
	}
	if err := dir.Write("f", "third"); err != nil {
		t.Fatal(err)
	}
	if s, _ := dir.Read("f"); s != "third" {
		t.Errorf("after Write = %q, want third", s)
	}
}

func TestMalformedSecretIsReplaced(t *testing.T) {
	dir := datadir.Dir(t.TempDir())
	if err := dir.Write(datadir.AdminTokenFile, "not hex"); err != nil {
		t.Fatal(err)
	}
	s, err := dir.Secret(datadir.AdminTokenFile, 32)
	if err != nil || len(s) != 64 {
		t.Errorf("Secret over a malformed file = %q, %v", s, err)
	}
}
