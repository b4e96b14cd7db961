package signature_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/scantest"
	"github.com/custodymcp/custody/shared/scan/signature"
)

func TestConformance(t *testing.T) {
	scantest.Run(t, scantest.Harness{
		New: func(t *testing.T) scan.Scanner { return signature.New() },
		// The engine cannot break by itself (its one signature is compiled
		// in), so a broken one is the real engine behind the fault
		// decorator.
		Broken: func(t *testing.T) scan.Scanner {
			f := scantest.NewFaulty(signature.New(), signature.Name)
			f.Break(errors.New("stopped for the test"))
			return f
		},
	})
}

// The EICAR specification's rule, case by case: the string first, then
// only white space, at most 128 bytes.
func TestIsTestFile(t *testing.T) {
	e := scan.EICAR()
	with := func(tail string) []byte { return append(append([]byte{}, e...), tail...) }
	tests := []struct {
		name string
		b    []byte
		want bool
	}{
		{"the 68 bytes are the test file", e, true},
		{"with a trailing LF (echo's) it is", with("\n"), true},
		{"with CR LF it is", with("\r\n"), true},
		{"with space, tab and Ctrl-Z it is", with(" \t\x1a"), true},
		{"padded with spaces to 128 bytes it is", with(string(bytes.Repeat([]byte{' '}, 60))), true},
		{"padded with spaces to 129 bytes it is not", with(string(bytes.Repeat([]byte{' '}, 61))), false},
		{"followed by a letter it is not", with("x"), false},
		{"followed by a NUL it is not", with("\x00"), false},
		{"after a leading space it is not", append([]byte{' '}, e...), false},
		{"missing its last byte it is not", e[:len(e)-1], false},
		{"with its third character a zero it is not", append(append(append([]byte{}, e[:2]...), '0'), e[3:]...), false},
		{"empty is not", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := signature.IsTestFile(tc.b); got != tc.want {
				t.Errorf("IsTestFile(%d bytes) = %v, want %v", len(tc.b), got, tc.want)
			}
		})
	}
}

// By content, never by name or place: the engine is never told a file
// name (the port has none), and the EICAR string inside a larger file is
// not the test file.
func TestScanByContent(t *testing.T) {
	e := scan.EICAR()
	tests := []struct {
		name string
		b    []byte
		want scan.Result
	}{
		{"the test file with echo's newline is infected", append(append([]byte{}, e...), '\n'), scan.Infected},
		{"the test string 100 bytes into a file is clean", append(bytes.Repeat([]byte{'a'}, 100), e...), scan.Clean},
		{"the test string followed by a 1 MiB tail is clean", append(append([]byte{}, e...), make([]byte, 1<<20)...), scan.Clean},
		{"a clean file of the name an EICAR file often has is clean", []byte("eicar.com is only a name"), scan.Clean},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := signature.New().Scan(context.Background(), scan.Bytes(tc.b), int64(len(tc.b)))
			scantest.Agree(t, v, err)
			if v.Result != tc.want {
				t.Errorf("Scan() = %+v, %v; want %s", v, err, tc.want)
			}
		})
	}
}
