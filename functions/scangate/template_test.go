package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	cfn "github.com/custodymcp/custody/infra/cfntemplate"
)

// ScanGateFunction may do what the gate and intake (issue 18) do, and no
// more: read and conditionally write the table (intake's chunk rows and
// its one transaction of document, version and upload), the verified and
// quarantined objects of the staging bucket, the record bucket's obj/
// (intake's copy and its read back), the sweeper index (its intake sweep),
// and its on-failure queue; and its schedule runs that sweep.
func TestTemplateScanGateFunctionHasIntakesPermissions(t *testing.T) {
	tpl, err := cfn.Load(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	granted := map[string][]string{}
	for _, pol := range cfn.Slice(tpl.Props("ScanGateFunction")["Policies"]) {
		for _, s := range cfn.Slice(cfn.Map(pol)["Statement"]) {
			st := cfn.Map(s)
			for _, r := range cfn.OneOrMany(st["Resource"]) {
				for _, a := range cfn.OneOrMany(st["Action"]) {
					granted[fmt.Sprint(r)] = append(granted[fmt.Sprint(r)], fmt.Sprint(a))
				}
			}
		}
	}
	for k := range granted {
		sort.Strings(granted[k])
	}
	want := map[string][]string{
		fmt.Sprint(cfn.GetAtt("Table", "Arn")):                   {"dynamodb:ConditionCheckItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"},
		fmt.Sprint(cfn.Sub("${StagingBucket.Arn}/verified/*")):   {"s3:DeleteObject", "s3:GetObject", "s3:GetObjectTagging"},
		fmt.Sprint(cfn.Sub("${StagingBucket.Arn}/quarantine/*")): {"s3:GetObject", "s3:GetObjectTagging", "s3:PutObject", "s3:PutObjectTagging"},
		fmt.Sprint(cfn.Sub("${RecordBucket.Arn}/obj/*")):         {"s3:GetObject", "s3:PutObject", "s3:PutObjectTagging"},
		fmt.Sprint(cfn.GetAtt("ScanGateFailureQueue", "Arn")):    {"sqs:SendMessage"},
		fmt.Sprint(cfn.Sub("${Table.Arn}/index/GSI1")):           {"dynamodb:Query"},
	}
	if diff := cmp.Diff(want, granted); diff != "" {
		t.Errorf("ScanGateFunction's permissions by resource (-want +got):\n%s", diff)
	}
	sweep := cfn.Map(cfn.Map(tpl.Props("ScanGateFunction")["Events"])["IntakeSweep"])
	if sweep["Type"] != "Schedule" || cfn.Map(sweep["Properties"])["Schedule"] != "rate(5 minutes)" {
		t.Errorf("ScanGateFunction's IntakeSweep = %v, want a Schedule of rate(5 minutes)", sweep)
	}
}

// The PDF engine (go-pdfium on wazero) is linked into the scan gate, where
// intake runs, and never into /mcp (issue 18 §1).
func TestThePDFEngineIsInTheScanGateAndNotInMCP(t *testing.T) {
	deps := func(pkg string) string {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		return string(out)
	}
	if mcp := deps("../mcp"); strings.Contains(mcp, "go-pdfium") || strings.Contains(mcp, "tetratelabs/wazero") {
		t.Error("functions/mcp links go-pdfium or wazero: the PDF engine belongs to the scan gate")
	}
	if gate := deps("."); !strings.Contains(gate, "github.com/klippa-app/go-pdfium") || !strings.Contains(gate, "github.com/tetratelabs/wazero") {
		t.Error("functions/scangate does not link go-pdfium on wazero: intake cannot read PDFs")
	}
}
