package approvals_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The approval page never imports the MCP transport or the tool pipeline
// (docs/architecture.md, the layout; STYLE: approvals depends on store,
// records, audit and auth only), so no request that came in through /mcp
// can reach what runs here.
func TestTheApprovalPageImportsNeitherMCPNorTheTools(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/custodymcp/custody/shared/approvals/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/custodymcp/custody/shared/store") {
		t.Fatalf("go list -deps listed %d packages without shared/store: the listing is not the page's", len(deps))
	}
	for _, banned := range []string{"shared/mcp", "shared/tools", "shared/gate", "shared/server", "shared/readtools"} {
		for _, d := range deps {
			if d == "github.com/custodymcp/custody/"+banned || strings.HasPrefix(d, "github.com/custodymcp/custody/"+banned+"/") {
				t.Errorf("shared/approvals depends on %s", d)
			}
		}
	}
}

// Nothing the request path of /mcp is made of can reach what executes an
// approval (issue 14, "proof of unreachability"): neither the write tools
// nor the proposal ledger depend on shared/approvals, its executors or
// anything else below it. Go's internal rule already keeps every package
// outside shared/approvals from importing the executors; this holds the
// rest.
func TestTheRequestPathCannotReachTheApprovalPageOrItsExecutors(t *testing.T) {
	for _, pkg := range []string{"shared/writetools", "shared/proposals", "shared/tools", "shared/mcp", "shared/gate"} {
		t.Run(pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", "github.com/custodymcp/custody/"+pkg).CombinedOutput()
			if err != nil {
				t.Fatalf("go list -deps: %v\n%s", err, out)
			}
			deps := strings.Fields(string(out))
			if !slices.Contains(deps, "github.com/custodymcp/custody/"+pkg) {
				t.Fatalf("go list -deps listed %d packages without %s itself", len(deps), pkg)
			}
			for _, d := range deps {
				if d == "github.com/custodymcp/custody/shared/approvals" || strings.HasPrefix(d, "github.com/custodymcp/custody/shared/approvals/") {
					t.Errorf("%s depends on %s", pkg, d)
				}
			}
		})
	}
}
