package signature_test

import (
	"context"
	"fmt"

	"github.com/custodymcp/custody/shared/scan"
	"github.com/custodymcp/custody/shared/scan/signature"
)

// A scan through the port: the EICAR test file (assembled at run time) is
// infected, anything else clean.
func Example() {
	var s scan.Scanner = signature.New()
	ctx := context.Background()
	for _, b := range [][]byte{scan.EICAR(), []byte("engagement letter")} {
		v, err := s.Scan(ctx, scan.Bytes(b), int64(len(b)))
		fmt.Println(v.Result, v.Threats, err, v.Passed())
	}
	fmt.Println(s.Posture(ctx), s.MaxBytes())
	// Output:
	// infected [EICAR-Test-File] <nil> false
	// clean [] <nil> true
	// ARMED 1073741824
}
