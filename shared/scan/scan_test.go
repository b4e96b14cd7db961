package scan_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"

	"github.com/custodymcp/custody/shared/scan"
)

// The assembled bytes are the EICAR file: 68 bytes whose MD5 is the one
// every vendor's hash signature for it uses.
func TestEICARIsTheTestFile(t *testing.T) {
	b := scan.EICAR()
	if len(b) != scan.EICARLen {
		t.Fatalf("len(EICAR()) = %d, want %d", len(b), scan.EICARLen)
	}
	sum := md5.Sum(b)
	if got, want := hex.EncodeToString(sum[:]), "44d88612fea8a8f36de82e1278abb02f"; got != want {
		t.Errorf("md5(EICAR()) = %s, want %s", got, want)
	}
	b[0] = 'x'
	if scan.EICAR()[0] == 'x' {
		t.Error("EICAR() returned shared bytes: a caller's change leaked into the next call")
	}
}

// No file of the repository holds the EICAR string in order (some scanners
// quarantine a checkout that does): tests and the self-test assemble it.
func TestNoFileHoldsTheEICARString(t *testing.T) {
	root := moduleRoot(t)
	needle := scan.EICAR()
	skip := map[string]bool{".git": true, ".tools": true, "bin": true, ".custody": true, ".custody-dynamodb": true, "node_modules": true, ".aws-sam": true}
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skip[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		if bytes.Contains(b, needle) {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s holds the EICAR test string in plain text: assemble it at run time (scan.EICAR)", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("walked %d files under %s: the walk did not see the repository", files, root)
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func TestExact(t *testing.T) {
	data := []byte("0123456789")
	tests := []struct {
		name    string
		r       io.Reader
		size    int64
		want    []byte
		wantErr error
	}{
		{"a reader of exactly size bytes reads whole", bytes.NewReader(data), 10, data, nil},
		{"one read at a time still reads whole", iotest.OneByteReader(bytes.NewReader(data)), 10, data, nil},
		{"data then EOF in one read reads whole", iotest.DataErrReader(bytes.NewReader(data)), 10, data, nil},
		{"an empty object reads empty", bytes.NewReader(nil), 0, []byte{}, nil},
		{"a reader ending early is ErrSource and unexpected EOF", bytes.NewReader(data[:9]), 10, data[:9], io.ErrUnexpectedEOF},
		{"a reader holding more than size is ErrSource", bytes.NewReader(data), 9, data[:9], scan.ErrSource},
		{"a reader holding anything for size 0 is ErrSource", bytes.NewReader(data), 0, []byte{}, scan.ErrSource},
		{"a reader failing midway is ErrSource", iotest.TimeoutReader(iotest.OneByteReader(bytes.NewReader(data))), 10, data[:1], iotest.ErrTimeout},
		{"a reader failing where its end should be is ErrSource", iotest.TimeoutReader(bytes.NewReader(data)), 10, data, iotest.ErrTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := io.ReadAll(scan.Exact(tc.r, tc.size))
			if !bytes.Equal(got, tc.want) {
				t.Errorf("read %q, want %q", got, tc.want)
			}
			if tc.wantErr == nil {
				if err != nil {
					t.Errorf("error = %v, want none", err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || !errors.Is(err, scan.ErrSource) {
				t.Errorf("error = %v, want ErrSource wrapping %v", err, tc.wantErr)
			}
		})
	}
}

func TestFailAlwaysComesWithAnError(t *testing.T) {
	for _, cause := range []error{nil, scan.ErrLimits} {
		v, err := scan.Fail("clamd", "engine limit exceeded", cause)
		if v.Result != scan.Failed || v.Passed() || err == nil {
			t.Errorf("Fail(%v) = %+v, %v; want a failed verdict and an error", cause, v, err)
		}
		if cause != nil && !errors.Is(err, cause) {
			t.Errorf("Fail(%v) error = %v, want it wrapped", cause, err)
		}
		if cause == nil && !errors.Is(err, scan.ErrUnavailable) {
			t.Errorf("Fail(nil) error = %v, want ErrUnavailable", err)
		}
	}
	if (scan.Verdict{}).Passed() {
		t.Error("the zero Verdict passed")
	}
}

func TestOff(t *testing.T) {
	ctx := context.Background()
	if got := scan.PostureOf(ctx, nil); got != scan.Off {
		t.Errorf("PostureOf(nil) = %s, want OFF", got)
	}
	if got := scan.PostureOf(ctx, scan.OffScanner); got != scan.Off {
		t.Errorf("PostureOf(OffScanner) = %s, want OFF", got)
	}
	if got := scan.OffScanner.MaxBytes(); got != 0 {
		t.Errorf("OffScanner.MaxBytes() = %d, want 0", got)
	}
	v, err := scan.OffScanner.Scan(ctx, scan.Bytes([]byte("x")), 1)
	if v.Result != scan.Failed || !errors.Is(err, scan.ErrOff) {
		t.Errorf("OffScanner.Scan() = %+v, %v; want failed wrapping ErrOff", v, err)
	}
}
