package clamd

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/scan"
)

// clamd's answers as clamd 1.4 writes them (the z-prefixed form ends each
// with NUL), read the way the engine reads them. The real daemon's answers
// are also met in clamd_test.go; these pin the less common ones.
func TestDecide(t *testing.T) {
	tests := []struct {
		name      string
		answer    string
		complete  bool
		want      scan.Verdict
		wantErr   error
		wantRetry bool
	}{
		{"OK is clean", "stream: OK\x00", true, scan.Verdict{Result: scan.Clean, Engine: Name}, nil, false},
		{"OK with a newline instead of NUL is clean", "stream: OK\n", true, scan.Verdict{Result: scan.Clean, Engine: Name}, nil, false},
		{"OK to a stream not sent whole is not clean", "stream: OK\x00", false, scan.Verdict{}, scan.ErrUnavailable, true},
		{"FOUND is infected with the signature's name", "stream: Win.Test.EICAR_HDB-1 FOUND\x00", true,
			scan.Verdict{Result: scan.Infected, Engine: Name, Threats: []string{"Win.Test.EICAR_HDB-1"}}, nil, false},
		{"FOUND with extended detection info keeps the name as given", "stream: Win.Test.EICAR_HDB-1(44d88612fea8a8f36de82e1278abb02f:68) FOUND\x00", true,
			scan.Verdict{Result: scan.Infected, Engine: Name, Threats: []string{"Win.Test.EICAR_HDB-1(44d88612fea8a8f36de82e1278abb02f:68)"}}, nil, false},
		{"two FOUND (all-match scanning) keep both names", "stream: A.One FOUND\x00stream: B.Two FOUND\x00", true,
			scan.Verdict{Result: scan.Infected, Engine: Name, Threats: []string{"A.One", "B.Two"}}, nil, false},
		{"a real detection beside a limit is infected", "stream: Heuristics.Limits.Exceeded.MaxScanSize FOUND\x00stream: A.One FOUND\x00", true,
			scan.Verdict{Result: scan.Infected, Engine: Name, Threats: []string{"A.One"}}, nil, false},
		{"a heuristic that is not a limit is infected", "stream: Heuristics.Encrypted.PDF FOUND\x00", true,
			scan.Verdict{Result: scan.Infected, Engine: Name, Threats: []string{"Heuristics.Encrypted.PDF"}}, nil, false},
		{"Heuristics.Limits.Exceeded.MaxFileSize is failed, not retried", "stream: Heuristics.Limits.Exceeded.MaxFileSize FOUND\x00", true, scan.Verdict{}, scan.ErrLimits, false},
		{"Heuristics.Limits.Exceeded.MaxRecursion is failed, not retried", "stream: Heuristics.Limits.Exceeded.MaxRecursion FOUND\x00", true, scan.Verdict{}, scan.ErrLimits, false},
		{"the INSTREAM size limit is failed and retried", "INSTREAM size limit exceeded. ERROR\x00", false, scan.Verdict{}, scan.ErrLimits, true},
		{"another ERROR is unavailable and retried", "Can't allocate memory ERROR\x00", true, scan.Verdict{}, scan.ErrUnavailable, true},
		{"an ERROR beside an OK is not clean", "stream: OK\x00Something ERROR\x00", true, scan.Verdict{}, scan.ErrUnavailable, true},
		{"an unknown answer is unavailable and retried", "stream: maybe\x00", true, scan.Verdict{}, scan.ErrUnavailable, true},
		{"FOUND with no name is not infected", "stream:  FOUND\x00", true, scan.Verdict{}, scan.ErrUnavailable, true},
		{"nothing but NULs is unavailable", "\x00\x00", true, scan.Verdict{}, scan.ErrUnavailable, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, aerr := decide([]byte(tc.answer), tc.complete)
			if diff := cmp.Diff(tc.want, v); diff != "" {
				t.Errorf("decide(%q) verdict (-want +got):\n%s", tc.answer, diff)
			}
			if tc.wantErr == nil {
				if aerr != nil {
					t.Errorf("decide(%q) error = %v, want none", tc.answer, aerr.err)
				}
				return
			}
			if aerr == nil {
				t.Fatalf("decide(%q) error = nil, want %v", tc.answer, tc.wantErr)
			}
			if !errors.Is(aerr.err, tc.wantErr) || aerr.retry != tc.wantRetry || aerr.reason == "" {
				t.Errorf("decide(%q) = %v (retry %v, reason %q); want %v, retry %v, a reason", tc.answer, aerr.err, aerr.retry, aerr.reason, tc.wantErr, tc.wantRetry)
			}
		})
	}
}
