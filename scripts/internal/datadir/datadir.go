// Package datadir is the local all-in-one server's data folder: the
// embedded store's file and the 0600 files beside it (the dev key, the admin
// token, the cursor sealing key, the running server's admin address). It is
// shared by scripts/dev and scripts/custodyctl and nothing else.
package datadir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Default is the data folder a clone uses (git-ignored).
const Default = ".custody"

// Dir is one data folder.
type Dir string

// Ensure creates the folder (0700) if it does not exist.
func (d Dir) Ensure() error { return os.MkdirAll(string(d), 0o700) }

// StorePath is the embedded store's file.
func (d Dir) StorePath() string { return filepath.Join(string(d), "custody.db") }

// Path returns the path of a file in the folder.
func (d Dir) Path(name string) string { return filepath.Join(string(d), name) }

// Files in the folder.
const (
	DevKeyFile     = "dev-key"
	AdminTokenFile = "admin-token"
	CursorKeyFile  = "cursor.key"
	AdminAddrFile  = "admin-addr"
)

// Read returns a file's trimmed content; fs.ErrNotExist when absent.
func (d Dir) Read(name string) (string, error) {
	b, err := os.ReadFile(d.Path(name))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// Write writes a file with mode 0600, replacing it atomically.
func (d Dir) Write(name, content string) error {
	tmp, err := os.CreateTemp(string(d), "."+name+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(content + "\n"); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), d.Path(name))
}

// Secret returns the folder's hex secret of n random bytes under name,
// creating it (0600) on first use.
func (d Dir) Secret(name string, n int) (string, error) {
	s, err := d.Read(name)
	if err == nil && len(s) == 2*n {
		return s, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	s = hex.EncodeToString(b)
	if err := d.Write(name, s); err != nil {
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	return s, nil
}
