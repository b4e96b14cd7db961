// Package datadir is the local all-in-one server's data folder: the
// embedded store's file and the 0600 files beside it (the dev key, the admin
// token, the cursor sealing key, the running server's admin address, the
// conformance fixture profile's key). It is
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
	// ConformanceKeyFile is the fixture profile's key (scripts/dev -conformance).
	ConformanceKeyFile = "conformance-key"
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
	return d.place(name, content, func(tmp, final string) error { return os.Rename(tmp, final) })
}

// Create writes a file with mode 0600 only if none exists: the one of two
// processes racing to create it that comes second gets an error satisfying
// errors.Is(err, fs.ErrExist) and leaves the first one's content alone.
func (d Dir) Create(name, content string) error {
	return d.place(name, content, func(tmp, final string) error { return os.Link(tmp, final) })
}

// place writes content to a temporary 0600 file in the folder, synced, and
// moves it to name with put.
func (d Dir) place(name, content string, put func(tmp, final string) error) error {
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
	return put(tmp.Name(), d.Path(name))
}

// Secret returns the folder's hex secret of n random bytes under name,
// creating it (0600) on first use. Processes sharing the folder share the
// secret: when two create it at once, both end up with the first one's
// (Create), which is what lets two dev servers on one DynamoDB table open
// each other's cursors. A file that is not n bytes of hex is replaced.
func (d Dir) Secret(name string, n int) (string, error) {
	for {
		s, err := d.Read(name)
		if err == nil && validHex(s, n) {
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
		if err == nil {
			// Present but malformed: replace it.
			if err := d.Write(name, s); err != nil {
				return "", fmt.Errorf("write %s: %w", name, err)
			}
			return s, nil
		}
		switch err := d.Create(name, s); {
		case err == nil:
			return s, nil
		case !errors.Is(err, fs.ErrExist):
			return "", fmt.Errorf("write %s: %w", name, err)
		}
		// Another process created it first: read theirs.
	}
}

func validHex(s string, n int) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == n
}
