package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/google/go-cmp/cmp"

	"github.com/custodymcp/custody/infra/cfntemplate"
	"github.com/custodymcp/custody/shared/store/dynamostore"
)

// template.yaml is parsed by infra/cfntemplate: gopkg.in/yaml.v3 and a
// small decoder of CloudFormation's short-form intrinsics (!Ref, !GetAtt,
// !Sub, !If, …) into their long form. goformation was the alternative; its
// generated structs lag new properties (Integration.ResponseTransferMode is
// from November 2025) and would drop what this test most needs to see,
// while a generic tree keeps every key.

// cfnTemplate is template.yaml in long form, with the front-door tests'
// methods.
type cfnTemplate struct{ *cfntemplate.Template }

func loadTemplate(t testing.TB) *cfnTemplate {
	t.Helper()
	tpl, err := cfntemplate.Load(filepath.Join(repoRoot(t), "template.yaml"))
	if err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	return &cfnTemplate{tpl}
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

// path walks nested maps by key.
func path(v any, keys ...string) any {
	for _, k := range keys {
		v = asMap(v)[k]
	}
	return v
}

func (tpl *cfnTemplate) ofType(typ string) []string {
	var ids []string
	for id, r := range tpl.Resources {
		if r["Type"] == typ {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// Every function built with the makefile method has its build target, and
// the target builds what Lambda's provided.al2023 arm64 runtime runs.
func TestTemplateFunctionsHaveTheirBuildTargets(t *testing.T) {
	tpl := loadTemplate(t)
	mk, err := os.ReadFile(filepath.Join(repoRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	fns := tpl.ofType("AWS::Serverless::Function")
	if len(fns) == 0 {
		t.Fatal("no AWS::Serverless::Function in template.yaml")
	}
	for _, id := range fns {
		t.Run(id, func(t *testing.T) {
			fn := tpl.Resources[id]
			if got := path(fn, "Metadata", "BuildMethod"); got != "makefile" {
				t.Fatalf("Metadata.BuildMethod = %v, want makefile", got)
			}
			recipe := regexp.MustCompile(`(?m)^build-` + regexp.QuoteMeta(id) + `:.*\n((?:\t.*\n)+)`).FindSubmatch(mk)
			if recipe == nil {
				t.Fatalf("the Makefile has no target build-%s", id)
			}
			for _, want := range []string{"GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0", "-tags lambda.norpc", "-trimpath", "$(ARTIFACTS_DIR)/bootstrap"} {
				if !strings.Contains(string(recipe[1]), want) {
					t.Errorf("build-%s does not build with %s:\n%s", id, want, recipe[1])
				}
			}
			props := asMap(fn["Properties"])
			if props["Handler"] != "bootstrap" || props["Runtime"] != "provided.al2023" ||
				!cmp.Equal(props["Architectures"], []any{"arm64"}) {
				t.Errorf("Handler %v Runtime %v Architectures %v, want bootstrap, provided.al2023, [arm64]",
					props["Handler"], props["Runtime"], props["Architectures"])
			}
			if got := path(props, "LoggingConfig", "LogFormat"); got != "JSON" {
				t.Errorf("LoggingConfig.LogFormat = %v, want JSON", got)
			}
		})
	}
}

// configFiles are the files whose getenv calls make the function's
// environment: config.go and the OAUTH_* and OIDC_* parsers it shares with
// the dev server.
var configFiles = []string{"config.go", "../../shared/auth/oauth/env.go", "../../shared/approvals/env.go"}

// configVariables returns the variables the configuration reads: the
// string literal of every getenv call in configFiles. A getenv of anything
// but a literal fails the test, so the list cannot silently miss one.
func configVariables(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, file := range configFiles {
		names = getenvLiterals(t, file, names)
	}
	sort.Strings(names)
	return names
}

func getenvLiterals(t *testing.T, file string, names []string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "getenv" {
			return true
		}
		lit, ok := call.Args[0].(*ast.BasicLit)
		if len(call.Args) != 1 || !ok || lit.Kind != token.STRING {
			t.Errorf("%s: getenv must be called with a string literal", fset.Position(call.Pos()))
			return true
		}
		name, _ := strconv.Unquote(lit.Value)
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		return true
	})
	return names
}

// Every variable config.go reads is set in the template, and the template
// sets no variable config.go does not read.
func TestTemplateSetsEveryVariableConfigReads(t *testing.T) {
	read := configVariables(t)
	if len(read) < 5 {
		t.Fatalf("config.go reads %v: the getenv calls were not found", read)
	}
	vars := asMap(path(loadTemplate(t).Resources["McpFunction"], "Properties", "Environment", "Variables"))
	var set []string
	for k := range vars {
		set = append(set, k)
	}
	sort.Strings(set)
	if diff := cmp.Diff(read, set); diff != "" {
		t.Errorf("variables config.go reads (-) vs McpFunction sets (+):\n%s", diff)
	}
}

// Every IAM statement is explicit (no SAM policy templates, no managed
// policies), grants no wildcard action, and names as resources only Ref,
// GetAtt or Sub of this template's resources (or of a parameter whose
// AllowedPattern pins the ARN to one service), never a literal ARN or "*".
// The statements are the functions' Policies, the policies of the
// template's roles and its stand-alone policies. Two wildcards are allowed,
// each as narrow as S3 and GuardDuty let it be: the objects under one of
// the lane's prefixes of a template bucket ("${Bucket.Arn}/verified/*"),
// and, for the role GuardDuty Malware Protection assumes alone, the
// EventBridge rule GuardDuty manages (its name has a suffix GuardDuty
// picks). A role's trust names a service or a role of the template; a
// stand-alone policy attaches to a role of the template.
func TestTemplateIAMNamesOnlyTemplateResources(t *testing.T) {
	tpl := loadTemplate(t)
	type statement struct {
		owner string
		s     map[string]any
	}
	var statements []statement
	add := func(owner string, doc any) {
		st := asSlice(asMap(doc)["Statement"])
		if len(st) == 0 {
			t.Errorf("%s: %v: write explicit statements", owner, doc)
		}
		for _, s := range st {
			statements = append(statements, statement{owner, asMap(s)})
		}
	}
	for _, id := range tpl.ofType("AWS::Serverless::Function") {
		for _, p := range asSlice(path(tpl.Resources[id], "Properties", "Policies")) {
			add(id, p)
		}
	}
	for _, id := range tpl.ofType("AWS::IAM::Role") {
		props := asMap(tpl.Resources[id]["Properties"])
		if props["ManagedPolicyArns"] != nil {
			t.Errorf("%s: no managed policies; write explicit statements", id)
		}
		for _, p := range asSlice(props["Policies"]) {
			add(id, asMap(p)["PolicyDocument"])
		}
		for _, s := range asSlice(path(props, "AssumeRolePolicyDocument", "Statement")) {
			principal := asMap(asMap(s)["Principal"])
			switch {
			case principal["Service"] != nil:
				if svc, ok := principal["Service"].(string); !ok || !strings.HasSuffix(svc, ".amazonaws.com") {
					t.Errorf("%s: trusts %v, want one AWS service", id, principal["Service"])
				}
			case principal["AWS"] != nil:
				if err := tpl.templateRef(principal["AWS"]); err != nil {
					t.Errorf("%s: trusts %v: %v", id, principal["AWS"], err)
				}
			default:
				t.Errorf("%s: trusts %v, want a service or a role of the template", id, principal)
			}
		}
	}
	for _, id := range tpl.ofType("AWS::IAM::Policy") {
		props := asMap(tpl.Resources[id]["Properties"])
		for _, r := range asSlice(props["Roles"]) {
			if err := tpl.templateRef(r); err != nil {
				t.Errorf("%s: attached to %v: %v", id, r, err)
			}
		}
		add(id, props["PolicyDocument"])
	}
	if len(statements) == 0 {
		t.Fatal("no IAM statements found")
	}
	for _, st := range statements {
		s := st.s
		sid := st.owner + " " + fmt.Sprint(s["Sid"])
		if s["Effect"] != "Allow" {
			t.Errorf("%s: Effect %v", sid, s["Effect"])
		}
		for _, a := range oneOrMany(s["Action"]) {
			if str, ok := a.(string); !ok || strings.Contains(str, "*") || !strings.Contains(str, ":") {
				t.Errorf("%s: action %v is not one named action", sid, a)
			}
		}
		resources := oneOrMany(s["Resource"])
		if len(resources) == 0 {
			t.Errorf("%s: no Resource", sid)
		}
		for _, r := range resources {
			if tpl.guardDutyManagedRule(st.owner, r) {
				continue
			}
			if err := tpl.templateRef(r); err != nil {
				t.Errorf("%s: resource %v: %v", sid, r, err)
			}
		}
	}
}

// guardDutyManagedRuleARN is the EventBridge rule GuardDuty Malware
// Protection for S3 creates and manages for a protected bucket (GuardDuty
// User Guide, "Create or update IAM role policy").
const guardDutyManagedRuleARN = "arn:${AWS::Partition}:events:${AWS::Region}:${AWS::AccountId}:rule/DO-NOT-DELETE-AmazonGuardDutyMalwareProtectionS3*"

// guardDutyManagedRule reports whether r is GuardDuty's managed rule in the
// policy of a role only GuardDuty Malware Protection for S3 assumes.
func (tpl *cfnTemplate) guardDutyManagedRule(owner string, r any) bool {
	if !cmp.Equal(r, map[string]any{"Fn::Sub": guardDutyManagedRuleARN}) || tpl.Resources[owner]["Type"] != "AWS::IAM::Role" {
		return false
	}
	trust := asSlice(path(tpl.Resources[owner], "Properties", "AssumeRolePolicyDocument", "Statement"))
	return len(trust) == 1 && path(trust[0], "Principal", "Service") == "malware-protection-plan.guardduty.amazonaws.com"
}

// objectsUnderPrefix matches a Sub naming the objects under one of the
// lane's key prefixes of a bucket (blob.PrefixIncoming …).
var objectsUnderPrefix = regexp.MustCompile(`^\$\{([A-Za-z0-9]+)\.Arn\}/(incoming|verified|quarantine|obj)/\*$`)

func oneOrMany(v any) []any {
	if s, ok := v.([]any); ok {
		return s
	}
	if v == nil {
		return nil
	}
	return []any{v}
}

var subRef = regexp.MustCompile(`\$\{([^}!]+)\}`)

// templateRef checks that an IAM resource is a reference into the template.
func (tpl *cfnTemplate) templateRef(v any) error {
	m := asMap(v)
	if len(m) != 1 {
		return fmt.Errorf("not a Ref, GetAtt, Sub or If")
	}
	switch {
	case m["Ref"] != nil:
		return tpl.named(fmt.Sprint(m["Ref"]))
	case m["Fn::GetAtt"] != nil:
		ga := asSlice(m["Fn::GetAtt"])
		if len(ga) != 2 || tpl.Resources[fmt.Sprint(ga[0])] == nil && tpl.named(fmt.Sprint(ga[0])) != nil {
			return fmt.Errorf("GetAtt of no resource of the template")
		}
		return nil
	case m["Fn::Sub"] != nil:
		s, ok := m["Fn::Sub"].(string)
		if !ok {
			return fmt.Errorf("use the one-string form of Sub")
		}
		if m := objectsUnderPrefix.FindStringSubmatch(s); m != nil {
			if tpl.Resources[m[1]]["Type"] != "AWS::S3::Bucket" {
				return fmt.Errorf("Sub %q: %s is no bucket of the template", s, m[1])
			}
			return nil
		}
		refs := subRef.FindAllStringSubmatch(s, -1)
		own := 0
		for _, r := range refs {
			name, _, _ := strings.Cut(r[1], ".")
			if strings.HasPrefix(name, "AWS::") {
				continue
			}
			if err := tpl.named(name); err != nil {
				return err
			}
			own++
		}
		if own == 0 || strings.Contains(subRef.ReplaceAllString(s, ""), "*") {
			return fmt.Errorf("Sub %q names no resource of the template, or a wildcard", s)
		}
		return nil
	case m["Fn::If"] != nil:
		branches := asSlice(m["Fn::If"])
		if len(branches) != 3 || tpl.Conditions[fmt.Sprint(branches[0])] == nil {
			return fmt.Errorf("If of no condition of the template")
		}
		noValue := 0
		for _, b := range branches[1:] {
			// One branch may be AWS::NoValue: the element is then left out
			// of its list (a secret granted only when it is configured).
			if cmp.Equal(b, map[string]any{"Ref": "AWS::NoValue"}) {
				noValue++
				continue
			}
			if err := tpl.templateRef(b); err != nil {
				return fmt.Errorf("If branch %v: %w", b, err)
			}
		}
		if noValue == 2 {
			return fmt.Errorf("If of two AWS::NoValue branches names nothing")
		}
		return nil
	}
	return fmt.Errorf("not a Ref, GetAtt, Sub or If")
}

// named accepts a resource of the template, or a parameter that can only
// hold one service's ARN.
func (tpl *cfnTemplate) named(name string) error {
	if tpl.Resources[name] != nil {
		return nil
	}
	// The execution role SAM generates for a function without a Role of
	// its own, named <function>Role.
	if fn, ok := strings.CutSuffix(name, "Role"); ok && tpl.Resources[fn]["Type"] == "AWS::Serverless::Function" &&
		path(tpl.Resources[fn], "Properties", "Role") == nil {
		return nil
	}
	if p := asMap(tpl.Parameters[name]); p != nil {
		if pat, _ := p["AllowedPattern"].(string); regexp.MustCompile(`\^\(?arn:.*:[a-z0-9-]+:`).MatchString(pat) {
			return nil
		}
		return fmt.Errorf("parameter %s has no AllowedPattern pinning it to an ARN", name)
	}
	return fmt.Errorf("%s is no resource of the template", name)
}

// /mcp is a resource of a REGIONAL REST API whose POST, GET, DELETE and
// OPTIONS stream from the function (AWS_PROXY, ResponseTransferMode STREAM,
// the response-streaming-invocations URI) with the 15-minute integration
// timeout; the function's timeout matches and it is told that it streams.
func TestTemplateMcpStreamsOnARegionalEndpoint(t *testing.T) {
	tpl := loadTemplate(t)
	apis := tpl.ofType("AWS::ApiGateway::RestApi")
	if len(apis) != 1 {
		t.Fatalf("REST APIs %v, want one", apis)
	}
	api := apis[0]
	if got := path(tpl.Resources[api], "Properties", "EndpointConfiguration", "Types"); !cmp.Equal(got, []any{"REGIONAL"}) {
		t.Errorf("%s endpoint types = %v, want [REGIONAL]", api, got)
	}
	var mcp string
	for _, id := range tpl.ofType("AWS::ApiGateway::Resource") {
		p := asMap(tpl.Resources[id]["Properties"])
		if p["PathPart"] == "mcp" && cmp.Equal(p["ParentId"], map[string]any{"Fn::GetAtt": []any{api, "RootResourceId"}}) {
			mcp = id
		}
	}
	if mcp == "" {
		t.Fatal("no /mcp resource under the API's root")
	}
	var methods, methodIDs []string
	for _, id := range tpl.ofType("AWS::ApiGateway::Method") {
		p := asMap(tpl.Resources[id]["Properties"])
		if !cmp.Equal(p["ResourceId"], map[string]any{"Ref": mcp}) {
			continue
		}
		methods = append(methods, fmt.Sprint(p["HttpMethod"]))
		methodIDs = append(methodIDs, id)
		in := asMap(p["Integration"])
		uri, _ := path(in, "Uri", "Fn::Sub").(string)
		if in["Type"] != "AWS_PROXY" || in["IntegrationHttpMethod"] != "POST" || in["ResponseTransferMode"] != "STREAM" ||
			in["TimeoutInMillis"] != 900000 ||
			!strings.HasSuffix(uri, ":lambda:path/2021-11-15/functions/${McpFunction.Arn}/response-streaming-invocations") {
			t.Errorf("%s integration = %v, want AWS_PROXY POST, STREAM, 900000 ms, the response-streaming-invocations URI of McpFunction", id, in)
		}
	}
	sort.Strings(methods)
	if want := []string{"DELETE", "GET", "OPTIONS", "POST"}; !slices.Equal(methods, want) {
		t.Errorf("/mcp methods = %v, want %v", methods, want)
	}
	for _, id := range tpl.ofType("AWS::ApiGateway::Deployment") {
		deps := oneOrMany(tpl.Resources[id]["DependsOn"])
		for _, m := range methodIDs {
			if !slices.Contains(deps, any(m)) {
				t.Errorf("deployment %s does not depend on %s: it could be made without it", id, m)
			}
		}
	}
	fn := asMap(tpl.Resources["McpFunction"]["Properties"])
	if fn["Timeout"] != 900 {
		t.Errorf("McpFunction Timeout = %v, want 900 (the integration's 900000 ms)", fn["Timeout"])
	}
	rest := tpl.deployment(t, "rest")
	if got := rest.eval(path(fn, "Environment", "Variables", "RESPONSE_STREAMING")); got != "true" {
		t.Errorf("RESPONSE_STREAMING with FrontDoor rest = %v, want \"true\": the integration streams", got)
	}
	perm := false
	for _, id := range tpl.ofType("AWS::Lambda::Permission") {
		p := asMap(tpl.Resources[id]["Properties"])
		if p["Principal"] == "apigateway.amazonaws.com" && p["Action"] == "lambda:InvokeFunction" &&
			cmp.Equal(p["FunctionName"], map[string]any{"Fn::GetAtt": []any{"McpFunction", "Arn"}}) {
			perm = true
		}
	}
	if !perm {
		t.Error("no Lambda permission lets API Gateway invoke McpFunction")
	}
}

// API Gateway's own refusals answer JSON.
func TestTemplateGatewayResponsesAreJSON(t *testing.T) {
	tpl := loadTemplate(t)
	found := map[string]bool{}
	for _, id := range tpl.ofType("AWS::ApiGateway::GatewayResponse") {
		p := asMap(tpl.Resources[id]["Properties"])
		typ := fmt.Sprint(p["ResponseType"])
		found[typ] = true
		body, _ := path(p, "ResponseTemplates", "application/json").(string)
		body = strings.ReplaceAll(body, "$context.error.messageString", `"Missing Authentication Token"`)
		if !json.Valid([]byte(body)) {
			t.Errorf("%s (%s) body %q is not JSON", id, typ, body)
		}
	}
	for _, want := range []string{"DEFAULT_4XX", "DEFAULT_5XX", "REQUEST_TOO_LARGE"} {
		if !found[want] {
			t.Errorf("no gateway response for %s", want)
		}
	}
}

// The table is dynamostore's (CreateTableInput, TimeToLiveSpecification),
// with point-in-time recovery on.
func TestTemplateTableMatchesDynamostore(t *testing.T) {
	tpl := loadTemplate(t)
	tables := tpl.ofType("AWS::DynamoDB::Table")
	if len(tables) != 1 {
		t.Fatalf("tables %v, want one", tables)
	}
	p := asMap(tpl.Resources[tables[0]]["Properties"])
	in := dynamostore.CreateTableInput("x")
	keys := func(v any) []any {
		var out []any
		for _, k := range asSlice(v) {
			out = append(out, map[string]any{"AttributeName": path(k, "AttributeName"), "KeyType": path(k, "KeyType")})
		}
		return out
	}
	want := map[string]any{}
	var attrs, key []any
	for _, a := range in.AttributeDefinitions {
		attrs = append(attrs, map[string]any{"AttributeName": aws.ToString(a.AttributeName), "AttributeType": string(a.AttributeType)})
	}
	for _, k := range in.KeySchema {
		key = append(key, map[string]any{"AttributeName": aws.ToString(k.AttributeName), "KeyType": string(k.KeyType)})
	}
	var gsis []any
	for _, g := range in.GlobalSecondaryIndexes {
		var gk []any
		for _, k := range g.KeySchema {
			gk = append(gk, map[string]any{"AttributeName": aws.ToString(k.AttributeName), "KeyType": string(k.KeyType)})
		}
		gsis = append(gsis, map[string]any{"IndexName": aws.ToString(g.IndexName), "KeySchema": gk,
			"Projection": map[string]any{"ProjectionType": string(g.Projection.ProjectionType)}})
	}
	want["AttributeDefinitions"], want["KeySchema"], want["GlobalSecondaryIndexes"] = attrs, key, gsis
	want["BillingMode"] = string(in.BillingMode)
	want["SSEEnabled"] = aws.ToBool(in.SSESpecification.Enabled)
	ttl := dynamostore.TimeToLiveSpecification()
	want["TTL"] = map[string]any{"AttributeName": aws.ToString(ttl.AttributeName), "Enabled": aws.ToBool(ttl.Enabled)}
	want["PITR"] = true

	var gotGSIs []any
	for _, g := range asSlice(p["GlobalSecondaryIndexes"]) {
		gotGSIs = append(gotGSIs, map[string]any{"IndexName": path(g, "IndexName"), "KeySchema": keys(path(g, "KeySchema")),
			"Projection": map[string]any{"ProjectionType": path(g, "Projection", "ProjectionType")}})
	}
	got := map[string]any{
		"AttributeDefinitions": p["AttributeDefinitions"], "KeySchema": keys(p["KeySchema"]), "GlobalSecondaryIndexes": gotGSIs,
		"BillingMode": p["BillingMode"], "SSEEnabled": path(p, "SSESpecification", "SSEEnabled"),
		"TTL": p["TimeToLiveSpecification"], "PITR": path(p, "PointInTimeRecoverySpecification", "PointInTimeRecoveryEnabled"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("template table vs dynamostore (-want +got):\n%s", diff)
	}
}

// Alarms watch 5xx answers of the deployed front door (the REST API's
// 5XXError, the HTTP API's 5xx, the function URL's Url5xxCount), throttles
// and the p99 duration, whichever door is deployed.
func TestTemplateAlarms(t *testing.T) {
	tpl := loadTemplate(t)
	for front, fiveXX := range map[string]string{"rest": "5XXError", "http": "5xx", "url": "Url5xxCount"} {
		t.Run("FrontDoor "+front, func(t *testing.T) {
			d := tpl.deployment(t, front)
			seen := map[string]bool{}
			for _, id := range d.ofType("AWS::CloudWatch::Alarm") {
				p := asMap(tpl.Resources[id]["Properties"])
				name := fmt.Sprint(p["MetricName"])
				if name == "Duration" && p["ExtendedStatistic"] != "p99" {
					continue
				}
				seen[name] = true
			}
			for _, want := range []string{fiveXX, "Throttles", "Duration"} {
				if !seen[want] {
					t.Errorf("no alarm on %s", want)
				}
			}
		})
	}
}

// The approval page: /approvals and /approvals/{proxy+} answer GET and POST
// through the function's streaming integration (the function answers in
// one mode), every deployment depends on the four methods, API Gateway may
// invoke the function for them, and the page's links (PUBLIC_BASE_URL)
// carry the stage when no custom domain is given.
func TestTemplateApprovalsStreamToTheFunction(t *testing.T) {
	tpl := loadTemplate(t)
	api := tpl.ofType("AWS::ApiGateway::RestApi")[0]
	resourceAt := func(parent any, part string) string {
		for _, id := range tpl.ofType("AWS::ApiGateway::Resource") {
			p := asMap(tpl.Resources[id]["Properties"])
			if p["PathPart"] == part && cmp.Equal(p["ParentId"], parent) {
				return id
			}
		}
		return ""
	}
	top := resourceAt(map[string]any{"Fn::GetAtt": []any{api, "RootResourceId"}}, "approvals")
	if top == "" {
		t.Fatal("no /approvals resource under the API's root")
	}
	proxy := resourceAt(map[string]any{"Ref": top}, "{proxy+}")
	if proxy == "" {
		t.Fatal("no /approvals/{proxy+} resource")
	}
	var methodIDs []string
	for _, res := range []string{top, proxy} {
		var methods []string
		for _, id := range tpl.ofType("AWS::ApiGateway::Method") {
			p := asMap(tpl.Resources[id]["Properties"])
			if !cmp.Equal(p["ResourceId"], map[string]any{"Ref": res}) {
				continue
			}
			methods = append(methods, fmt.Sprint(p["HttpMethod"]))
			methodIDs = append(methodIDs, id)
			in := asMap(p["Integration"])
			uri, _ := path(in, "Uri", "Fn::Sub").(string)
			if in["Type"] != "AWS_PROXY" || in["IntegrationHttpMethod"] != "POST" || in["ResponseTransferMode"] != "STREAM" ||
				p["AuthorizationType"] != "NONE" ||
				!strings.HasSuffix(uri, ":lambda:path/2021-11-15/functions/${McpFunction.Arn}/response-streaming-invocations") {
				t.Errorf("%s integration = %v, want AWS_PROXY POST, STREAM, the response-streaming-invocations URI of McpFunction", id, in)
			}
		}
		sort.Strings(methods)
		if want := []string{"GET", "POST"}; !slices.Equal(methods, want) {
			t.Errorf("%s methods = %v, want %v", res, methods, want)
		}
	}
	deployments := tpl.ofType("AWS::ApiGateway::Deployment")
	if len(deployments) != 1 {
		t.Fatalf("deployments %v, want one", deployments)
	}
	for _, m := range methodIDs {
		if !slices.Contains(oneOrMany(tpl.Resources[deployments[0]]["DependsOn"]), any(m)) {
			t.Errorf("deployment %s does not depend on %s", deployments[0], m)
		}
	}
	stageDeployment := path(tpl.Resources["ApiStage"], "Properties", "DeploymentId")
	if !cmp.Equal(stageDeployment, map[string]any{"Ref": deployments[0]}) {
		t.Errorf("the stage deploys %v, want %s", stageDeployment, deployments[0])
	}
	permitted := false
	for _, id := range tpl.ofType("AWS::Lambda::Permission") {
		p := asMap(tpl.Resources[id]["Properties"])
		arn, _ := path(p, "SourceArn", "Fn::Sub").(string)
		if p["Principal"] == "apigateway.amazonaws.com" && strings.HasSuffix(arn, "${Api}/*/*/approvals*") {
			permitted = true
		}
	}
	if !permitted {
		t.Error("no Lambda permission lets API Gateway invoke McpFunction for /approvals and below")
	}
	base := tpl.deployment(t, "rest").eval(path(tpl.Resources["McpFunction"], "Properties", "Environment", "Variables", "PUBLIC_BASE_URL"))
	if !strings.HasSuffix(fmt.Sprint(path(base, "Fn::Sub")), "/${Stage}") {
		t.Errorf("PUBLIC_BASE_URL with FrontDoor rest = %v, want the stage's execute-api URL (stage included) without a custom domain", base)
	}
	for _, p := range []string{"OidcClientId", "OidcAuthorizationEndpoint", "OidcTokenEndpoint", "OidcClientSecretArn", "OidcScopes"} {
		if tpl.Parameters[p] == nil {
			t.Errorf("no parameter %s", p)
		}
	}
}
