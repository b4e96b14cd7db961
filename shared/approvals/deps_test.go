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
