package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/shared/scan/guardduty"
)

// The upload lane's part of template.yaml (issue 17): its buckets, the
// part signer, the GuardDuty plan and the scan gate, held to the code and
// to docs/decisions.md.

// No bucket notifies a function (or a queue, or a topic): the scan gate's
// input is an EventBridge rule that names the staging bucket, so nothing
// is circular, and GuardDuty's own EventBridge notifications are the only
// ones a bucket turns on.
func TestTemplateNoBucketNotifiesAFunction(t *testing.T) {
	tpl := loadTemplate(t)
	buckets := tpl.ofType("AWS::S3::Bucket")
	if len(buckets) != 2 {
		t.Fatalf("buckets %v, want the staging and the record bucket", buckets)
	}
	for _, id := range buckets {
		nc := path(tpl.Resources[id], "Properties", "NotificationConfiguration")
		if nc == nil {
			continue
		}
		for _, branch := range branches(nc) {
			for k := range asMap(branch) {
				if k != "EventBridgeConfiguration" {
					t.Errorf("%s: NotificationConfiguration has %s, want none (EventBridge alone)", id, k)
				}
			}
		}
	}
}

// branches are the values an If may take (the value itself otherwise),
// AWS::NoValue dropped.
func branches(v any) []any {
	if br := asSlice(asMap(v)["Fn::If"]); len(br) == 3 {
		var out []any
		for _, b := range br[1:] {
			if !cmp.Equal(b, map[string]any{"Ref": "AWS::NoValue"}) {
				out = append(out, b)
			}
		}
		return out
	}
	return []any{v}
}

// Both buckets are encrypted with S3's keys, closed to the public by all
// four blocks, owned by the bucket owner alone, and refuse every request
// that is not TLS; the staging bucket drops what nothing finished (the
// lifecycle of docs/decisions.md); the record bucket is versioned and kept
// when the stack goes.
func TestTemplateBucketsAreLockedDown(t *testing.T) {
	tpl := loadTemplate(t)
	for _, id := range []string{"StagingBucket", "RecordBucket"} {
		t.Run(id, func(t *testing.T) {
			props := asMap(tpl.Resources[id]["Properties"])
			if props == nil {
				t.Fatalf("no %s", id)
			}
			sse := asSlice(path(props, "BucketEncryption", "ServerSideEncryptionConfiguration"))
			if len(sse) != 1 || path(sse[0], "ServerSideEncryptionByDefault", "SSEAlgorithm") != "AES256" {
				t.Errorf("BucketEncryption = %v, want SSE-S3 (AES256)", props["BucketEncryption"])
			}
			want := map[string]any{"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true}
			if diff := cmp.Diff(want, asMap(props["PublicAccessBlockConfiguration"])); diff != "" {
				t.Errorf("PublicAccessBlockConfiguration (-want +got):\n%s", diff)
			}
			if got := asSlice(path(props, "OwnershipControls", "Rules")); len(got) != 1 || path(got[0], "ObjectOwnership") != "BucketOwnerEnforced" {
				t.Errorf("OwnershipControls = %v, want BucketOwnerEnforced", props["OwnershipControls"])
			}
			if !tpl.deniesInsecureTransport(id) {
				t.Errorf("no bucket policy of %s denies requests without TLS (aws:SecureTransport false) on the bucket and its objects", id)
			}
		})
	}
	t.Run("the staging bucket's lifecycle", func(t *testing.T) {
		rules := asSlice(path(tpl.Resources["StagingBucket"], "Properties", "LifecycleConfiguration", "Rules"))
		got := map[string]any{}
		for _, r := range rules {
			m := asMap(r)
			if m["Status"] != "Enabled" {
				t.Errorf("rule %v is not enabled", m["Id"])
			}
			switch {
			case m["AbortIncompleteMultipartUpload"] != nil:
				got["abort multipart"] = path(m, "AbortIncompleteMultipartUpload", "DaysAfterInitiation")
			default:
				got[fmt.Sprint(m["Prefix"])] = m["ExpirationInDays"]
			}
		}
		want := map[string]any{"abort multipart": 2, "incoming/": 2, "verified/": 14, "quarantine/": 30}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("lifecycle (-want +got):\n%s", diff)
		}
	})
	t.Run("the record bucket is versioned and retained", func(t *testing.T) {
		r := tpl.Resources["RecordBucket"]
		if path(r, "Properties", "VersioningConfiguration", "Status") != "Enabled" || r["DeletionPolicy"] != "Retain" || r["UpdateReplacePolicy"] != "Retain" {
			t.Errorf("RecordBucket versioning %v, DeletionPolicy %v, UpdateReplacePolicy %v; want Enabled, Retain, Retain",
				path(r, "Properties", "VersioningConfiguration", "Status"), r["DeletionPolicy"], r["UpdateReplacePolicy"])
		}
	})
}

// deniesInsecureTransport reports whether a bucket policy of the template
// denies every action to everyone on bucket and its objects without TLS.
func (tpl *cfnTemplate) deniesInsecureTransport(bucket string) bool {
	for _, id := range tpl.ofType("AWS::S3::BucketPolicy") {
		props := asMap(tpl.Resources[id]["Properties"])
		if !cmp.Equal(props["Bucket"], map[string]any{"Ref": bucket}) {
			continue
		}
		for _, s := range asSlice(path(props, "PolicyDocument", "Statement")) {
			m := asMap(s)
			res := oneOrMany(m["Resource"])
			if m["Effect"] == "Deny" && m["Principal"] == "*" && m["Action"] == "s3:*" &&
				path(m, "Condition", "Bool", "aws:SecureTransport") == "false" &&
				cmp.Equal(res, []any{map[string]any{"Fn::GetAtt": []any{bucket, "Arn"}}, map[string]any{"Fn::Sub": "${" + bucket + ".Arn}/*"}}) {
				return true
			}
		}
	}
	return false
}

// The protection plan and its role exist exactly when ScannerEngine is
// guardduty; the plan scans the staging bucket's verified/ prefix with
// tagging on, and its role is GuardDuty's alone.
func TestTemplateGuardDutyPlanUnderScannerEngine(t *testing.T) {
	tpl := loadTemplate(t)
	if got := asSlice(asMap(tpl.Parameters["ScannerEngine"])["AllowedValues"]); !cmp.Equal(got, []any{"guardduty", "off"}) {
		t.Errorf("ScannerEngine AllowedValues = %v, want [guardduty off]", got)
	}
	if got := tpl.Conditions["UseGuardDuty"]; !cmp.Equal(got, map[string]any{"Fn::Equals": []any{map[string]any{"Ref": "ScannerEngine"}, "guardduty"}}) {
		t.Errorf("UseGuardDuty = %v, want ScannerEngine = guardduty", got)
	}
	plans := tpl.ofType("AWS::GuardDuty::MalwareProtectionPlan")
	if len(plans) != 1 {
		t.Fatalf("protection plans %v, want one", plans)
	}
	plan := tpl.Resources[plans[0]]
	role := fmt.Sprint(asSlice(path(plan, "Properties", "Role", "Fn::GetAtt"))[0])
	for _, id := range []string{plans[0], role} {
		if tpl.Resources[id]["Condition"] != "UseGuardDuty" {
			t.Errorf("%s: Condition %v, want UseGuardDuty", id, tpl.Resources[id]["Condition"])
		}
	}
	props := asMap(plan["Properties"])
	if got := path(props, "ProtectedResource", "S3Bucket", "BucketName"); !cmp.Equal(got, map[string]any{"Ref": "StagingBucket"}) {
		t.Errorf("protected bucket = %v, want the staging bucket", got)
	}
	if got := path(props, "ProtectedResource", "S3Bucket", "ObjectPrefixes"); !cmp.Equal(got, []any{"verified/"}) {
		t.Errorf("ObjectPrefixes = %v, want [verified/]", got)
	}
	if got := path(props, "Actions", "Tagging", "Status"); got != "ENABLED" {
		t.Errorf("tagging = %v, want ENABLED (the sweeper's fallback is the %s tag)", got, guardduty.TagKey)
	}
	trust := asSlice(path(tpl.Resources[role], "Properties", "AssumeRolePolicyDocument", "Statement"))
	if len(trust) != 1 || path(trust[0], "Principal", "Service") != "malware-protection-plan.guardduty.amazonaws.com" {
		t.Errorf("%s trusts %v, want GuardDuty Malware Protection alone", role, trust)
	}
}

// ScanGateFunction runs as the issue configures it, reads exactly the
// environment functions/scangate/config.go reads, and takes GuardDuty's
// scan results for the staging bucket from an EventBridge rule with a
// retry policy and a dead-letter queue; its own failures go, after two
// retries, to an on-failure queue whose depth raises an alarm.
func TestTemplateScanGateFunction(t *testing.T) {
	tpl := loadTemplate(t)
	fn := asMap(tpl.Resources["ScanGateFunction"]["Properties"])
	if fn == nil {
		t.Fatal("no ScanGateFunction")
	}
	got := []any{fn["Architectures"], fn["MemorySize"], fn["Timeout"], fn["ReservedConcurrentExecutions"]}
	if want := []any{[]any{"arm64"}, 2048, 300, 10}; !cmp.Equal(got, want) {
		t.Errorf("architectures, memory, timeout, reserved concurrency = %v, want %v", got, want)
	}
	read := getenvLiterals(t, "../scangate/config.go", nil)
	sort.Strings(read)
	var set []string
	for k := range asMap(path(fn, "Environment", "Variables")) {
		set = append(set, k)
	}
	sort.Strings(set)
	if diff := cmp.Diff(read, set); diff != "" {
		t.Errorf("variables functions/scangate/config.go reads (-) vs ScanGateFunction sets (+):\n%s", diff)
	}
	// Its scan results come by ScanResultRule; its one event source of its
	// own is the intake sweep's schedule.
	if evs := asMap(fn["Events"]); len(evs) != 1 || asMap(evs["IntakeSweep"])["Type"] != "Schedule" {
		t.Errorf("ScanGateFunction Events = %v, want only the IntakeSweep schedule: its scan results come by ScanResultRule", fn["Events"])
	}

	rule := asMap(tpl.Resources["ScanResultRule"]["Properties"])
	wantPattern := map[string]any{
		"source":      []any{guardduty.Source},
		"detail-type": []any{guardduty.DetailType},
		"detail":      map[string]any{"s3ObjectDetails": map[string]any{"bucketName": []any{map[string]any{"Ref": "StagingBucket"}}}},
	}
	if diff := cmp.Diff(wantPattern, rule["EventPattern"]); diff != "" {
		t.Errorf("ScanResultRule EventPattern (-want +got):\n%s", diff)
	}
	targets := asSlice(rule["Targets"])
	if len(targets) != 1 {
		t.Fatalf("ScanResultRule targets = %v, want the scan gate alone", targets)
	}
	target := asMap(targets[0])
	if !cmp.Equal(target["Arn"], map[string]any{"Fn::GetAtt": []any{"ScanGateFunction", "Arn"}}) ||
		path(target, "RetryPolicy", "MaximumRetryAttempts") == nil || path(target, "DeadLetterConfig", "Arn") == nil {
		t.Errorf("ScanResultRule target = %v, want ScanGateFunction with a RetryPolicy and a DeadLetterConfig", target)
	}
	if !tpl.permits("ScanGateFunction", "events.amazonaws.com", map[string]any{"Fn::GetAtt": []any{"ScanResultRule", "Arn"}}) {
		t.Error("no Lambda permission lets the rule invoke ScanGateFunction")
	}

	var invoke map[string]any
	for _, id := range tpl.ofType("AWS::Lambda::EventInvokeConfig") {
		if p := asMap(tpl.Resources[id]["Properties"]); cmp.Equal(p["FunctionName"], map[string]any{"Ref": "ScanGateFunction"}) {
			invoke = p
		}
	}
	queue, _ := asSlice(path(invoke, "DestinationConfig", "OnFailure", "Destination", "Fn::GetAtt")), 0
	if invoke == nil || invoke["MaximumRetryAttempts"] != 2 || len(queue) != 2 || tpl.Resources[fmt.Sprint(queue[0])]["Type"] != "AWS::SQS::Queue" {
		t.Fatalf("ScanGateFunction's EventInvokeConfig = %v, want two retries and an SQS on-failure queue", invoke)
	}
	if !tpl.alarmsOnDepth(fmt.Sprint(queue[0])) {
		t.Errorf("no alarm on the depth of %s", queue[0])
	}
}

// permits reports whether a Lambda permission lets principal invoke fn
// from source.
func (tpl *cfnTemplate) permits(fn, principal string, source any) bool {
	for _, id := range tpl.ofType("AWS::Lambda::Permission") {
		p := asMap(tpl.Resources[id]["Properties"])
		if cmp.Equal(p["FunctionName"], map[string]any{"Fn::GetAtt": []any{fn, "Arn"}}) && p["Principal"] == principal &&
			cmp.Equal(p["SourceArn"], source) && p["Action"] == "lambda:InvokeFunction" {
			return true
		}
	}
	return false
}

// alarmsOnDepth reports whether an alarm watches the visible messages of
// queue.
func (tpl *cfnTemplate) alarmsOnDepth(queue string) bool {
	for _, id := range tpl.ofType("AWS::CloudWatch::Alarm") {
		p := asMap(tpl.Resources[id]["Properties"])
		for _, d := range asSlice(p["Dimensions"]) {
			if p["Namespace"] == "AWS/SQS" && p["MetricName"] == "ApproximateNumberOfMessagesVisible" &&
				cmp.Equal(asMap(d)["Value"], map[string]any{"Fn::GetAtt": []any{queue, "QueueName"}}) {
				return true
			}
		}
	}
	return false
}

// The part URLs' signer is trusted by McpFunction's role alone and may only
// put objects under incoming/; McpFunction's environment names the lane's
// buckets, the signer and the scanner from the template's own resources.
func TestTemplateUploadSignerAndTheLanesEnvironment(t *testing.T) {
	tpl := loadTemplate(t)
	signer := asMap(tpl.Resources["UploadSignerRole"]["Properties"])
	trust := asSlice(path(signer, "AssumeRolePolicyDocument", "Statement"))
	if len(trust) != 1 || !cmp.Equal(path(trust[0], "Principal", "AWS"), map[string]any{"Fn::GetAtt": []any{"McpFunctionRole", "Arn"}}) {
		t.Errorf("UploadSignerRole trusts %v, want McpFunction's role alone", trust)
	}
	var grants []any
	for _, p := range asSlice(signer["Policies"]) {
		for _, s := range asSlice(path(p, "PolicyDocument", "Statement")) {
			grants = append(grants, []any{asMap(s)["Action"], asMap(s)["Resource"]})
		}
	}
	if want := []any{[]any{"s3:PutObject", map[string]any{"Fn::Sub": "${StagingBucket.Arn}/incoming/*"}}}; !cmp.Equal(grants, want) {
		t.Errorf("UploadSignerRole grants %v, want s3:PutObject on incoming/* alone", grants)
	}
	env := asMap(path(tpl.Resources["McpFunction"], "Properties", "Environment", "Variables"))
	want := map[string]any{
		"STAGING_BUCKET":         map[string]any{"Ref": "StagingBucket"},
		"RECORD_BUCKET":          map[string]any{"Ref": "RecordBucket"},
		"UPLOAD_SIGNER_ROLE_ARN": map[string]any{"Fn::GetAtt": []any{"UploadSignerRole", "Arn"}},
		"SCANNER_ENGINE":         map[string]any{"Ref": "ScannerEngine"},
	}
	for k, v := range want {
		if !cmp.Equal(env[k], v) {
			t.Errorf("McpFunction %s = %v, want %v", k, env[k], v)
		}
	}
}

// GET /downloads/{token} streams to McpFunction like every other route,
// is part of the deployment, and the API may invoke the function for it.
func TestTemplateDownloadRoute(t *testing.T) {
	tpl := loadTemplate(t)
	var method map[string]any
	for _, id := range tpl.ofType("AWS::ApiGateway::Method") {
		p := asMap(tpl.Resources[id]["Properties"])
		res := asMap(tpl.Resources[fmt.Sprint(path(p, "ResourceId", "Ref"))]["Properties"])
		parent := asMap(tpl.Resources[fmt.Sprint(path(res, "ParentId", "Ref"))]["Properties"])
		if res["PathPart"] == "{token}" && parent["PathPart"] == "downloads" && p["HttpMethod"] == "GET" {
			method = p
			for _, d := range tpl.deployments() {
				if !strings.Contains(fmt.Sprint(tpl.Resources[d]["DependsOn"]), id) {
					t.Errorf("%s does not depend on %s: the route would not be deployed", d, id)
				}
			}
		}
	}
	if method == nil {
		t.Fatal("no GET /downloads/{token}")
	}
	if path(method, "Integration", "Type") != "AWS_PROXY" || path(method, "Integration", "ResponseTransferMode") != "STREAM" ||
		!strings.Contains(fmt.Sprint(path(method, "Integration", "Uri", "Fn::Sub")), "${McpFunction.Arn}/response-streaming-invocations") {
		t.Errorf("GET /downloads/{token} integration = %v, want McpFunction's streaming proxy", method["Integration"])
	}
	found := false
	for _, id := range tpl.ofType("AWS::Lambda::Permission") {
		if src := fmt.Sprint(path(tpl.Resources[id], "Properties", "SourceArn", "Fn::Sub")); strings.HasSuffix(src, "/*/GET/downloads/*") {
			found = true
		}
	}
	if !found {
		t.Error("no Lambda permission for GET /downloads/*")
	}
}

func (tpl *cfnTemplate) deployments() []string { return tpl.ofType("AWS::ApiGateway::Deployment") }

// make build-ScanGateFunction ships a stripped bootstrap.
func TestScanGateBuildIsStripped(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(repoRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	recipe := regexp.MustCompile(`(?m)^build-ScanGateFunction:.*\n((?:\t.*\n)+)`).FindSubmatch(mk)
	if recipe == nil || !strings.Contains(string(recipe[1]), `-ldflags='-s -w'`) || !strings.Contains(string(recipe[1]), "./functions/scangate") {
		t.Errorf("build-ScanGateFunction = %q, want a stripped build of ./functions/scangate", recipe)
	}
}
