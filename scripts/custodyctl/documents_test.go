package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// import DIR sends regular files only, at most 8 folders deep: a symbolic
// link (to a file or a folder), a named pipe and a deeper folder are
// skipped and reported, never followed.
func TestImportCollectsRegularFilesOnly(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(rel), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.pdf")
	write("sub/b.txt")
	deep7 := filepath.Join("1", "2", "3", "4", "5", "6", "7")
	write(filepath.Join(deep7, "c.md"))              // depth 8: taken
	write(filepath.Join(deep7, "8", "too-deep.pdf")) // depth 9: its folder skipped
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.pdf"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.pdf"), filepath.Join(dir, "link.pdf")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "linked-folder")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, skipped, err := collectFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.pdf", filepath.Join(deep7, "c.md"), filepath.Join("sub", "b.txt")}
	slices.Sort(files)
	slices.Sort(want)
	if !slices.Equal(files, want) {
		t.Errorf("files = %v, want %v", files, want)
	}
	why := map[string]string{}
	for _, s := range skipped {
		why[s.path] = s.why
	}
	for path, reason := range map[string]string{"link.pdf": "symbolic link", "linked-folder": "symbolic link",
		"pipe": "not a regular file", filepath.Join(deep7, "8"): "deeper than 8"} {
		if !strings.Contains(why[path], reason) {
			t.Errorf("%s skipped for %q, want %q (skipped: %v)", path, why[path], reason, skipped)
		}
	}
	if _, _, err := collectFiles(filepath.Join(dir, "link.pdf")); err == nil {
		t.Error("a symbolic link as the folder itself was walked")
	}
}
