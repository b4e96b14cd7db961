package infra_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	cfn "github.com/custodymcp/custody/infra/cfntemplate"
)

func load(t *testing.T) (app, ops *cfn.Template) {
	t.Helper()
	var err error
	if app, err = cfn.Load(filepath.Join("..", "template.yaml")); err != nil {
		t.Fatal(err)
	}
	if ops, err = cfn.Load("operations.yaml"); err != nil {
		t.Fatal(err)
	}
	return app, ops
}

// exports are the application stack's exported outputs by name: each
// output's Export.Name must be <stack name>-<output id>, the form the
// operations stack imports.
func exports(t *testing.T, app *cfn.Template) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for id, o := range app.Outputs {
		name := cfn.Path(o, "Export", "Name")
		if name == nil {
			continue
		}
		if !cmp.Equal(name, cfn.Sub("${AWS::StackName}-"+id)) {
			t.Errorf("output %s exports %v, want ${AWS::StackName}-%s", id, name, id)
		}
		out[id] = true
	}
	return out
}

var placeholder = regexp.MustCompile(`\$\{([^}]+)\}`)

// Every dashboard widget (but headings) names at least one exported
// resource of the application stack, each through an import of one of its
// exports, and every custom metric a widget shows is one the application's
// log metric filters emit.
func TestEveryDashboardWidgetNamesAnExportOfTheApplicationStack(t *testing.T) {
	app, ops := load(t)
	exported := exports(t, app)
	boards := ops.OfType("AWS::CloudWatch::Dashboard")
	if len(boards) != 1 {
		t.Fatalf("dashboards %v, want one", boards)
	}
	sub := cfn.Slice(cfn.Path(ops.Props(boards[0]), "DashboardBody", "Fn::Sub"))
	if len(sub) != 2 {
		t.Fatalf("DashboardBody is %v, want a Fn::Sub of the body and its variables", ops.Props(boards[0])["DashboardBody"])
	}
	body, vars := sub[0].(string), cfn.Map(sub[1])
	for name, v := range vars {
		imp, _ := cfn.Path(v, "Fn::ImportValue", "Fn::Sub").(string)
		export, ok := strings.CutPrefix(imp, "${ApplicationStackName}-")
		if !ok || !exported[export] {
			t.Errorf("dashboard variable %s = %v: want an import of ${ApplicationStackName}-<an export of template.yaml>", name, v)
		}
	}
	// Each variable becomes a marker, so a widget's JSON shows what it names.
	rendered := placeholder.ReplaceAllStringFunc(body, func(m string) string {
		name := placeholder.FindStringSubmatch(m)[1]
		switch {
		case vars[name] != nil:
			return "@import:" + name + "@"
		case strings.HasPrefix(name, "AWS::"):
			return "pseudo"
		}
		t.Errorf("the dashboard body names ${%s}, which is neither an import nor a pseudo parameter", name)
		return ""
	})
	var board struct {
		Widgets []map[string]any `json:"widgets"`
	}
	if err := json.Unmarshal([]byte(rendered), &board); err != nil {
		t.Fatalf("the dashboard body is not JSON: %v", err)
	}
	emitted := filterMetrics(t, app)
	named := 0
	for i, w := range board.Widgets {
		if w["type"] == "text" {
			continue
		}
		named++
		raw, _ := json.Marshal(w)
		if !strings.Contains(string(raw), "@import:") {
			t.Errorf("widget %d (%v) names no export of the application stack", i, cfn.Path(w, "properties", "title"))
		}
		for _, m := range cfn.Slice(cfn.Path(w, "properties", "metrics")) {
			row := cfn.Slice(m)
			if len(row) >= 2 && row[0] == "@import:MetricNamespace@" && !emitted[fmt.Sprint(row[1])] {
				t.Errorf("widget %d shows %v, which no metric filter of the application emits", i, row[1])
			}
		}
	}
	if named < 8 {
		t.Errorf("the dashboard has %d widgets, want /mcp's and the tasks' (at least 8)", named)
	}
}

// filterMetrics are the custom metrics the application's log metric
// filters emit, by name, after checking each filter: it reads a function's
// log group in the namespace Custody/<stack>, and matches a message the
// code logs (the literal of $.message = "…" appears in a Go source file).
func filterMetrics(t *testing.T, app *cfn.Template) map[string]bool {
	t.Helper()
	logGroups := map[string]bool{}
	for _, fn := range app.OfType("AWS::Serverless::Function") {
		if lg := cfn.Path(app.Props(fn), "LoggingConfig", "LogGroup"); lg != nil {
			logGroups[fmt.Sprint(lg)] = true
		}
	}
	out := map[string]bool{}
	for _, id := range app.OfType("AWS::Logs::MetricFilter") {
		p := app.Props(id)
		if !logGroups[fmt.Sprint(p["LogGroupName"])] {
			t.Errorf("%s reads %v, no function's log group", id, p["LogGroupName"])
		}
		pattern, _ := p["FilterPattern"].(string)
		m := regexp.MustCompile(`\$\.message = "([^"]+)"`).FindStringSubmatch(pattern)
		if m == nil || !logged(t, m[1]) {
			t.Errorf("%s matches %q: want $.message = \"<a message the code logs>\"", id, pattern)
		}
		for _, tr := range cfn.Slice(p["MetricTransformations"]) {
			if !cmp.Equal(cfn.Map(tr)["MetricNamespace"], cfn.Sub("Custody/${AWS::StackName}")) {
				t.Errorf("%s emits into %v, want Custody/${AWS::StackName}", id, cfn.Map(tr)["MetricNamespace"])
			}
			out[fmt.Sprint(cfn.Map(tr)["MetricName"])] = true
		}
	}
	return out
}

var sources map[string]string

// logged reports whether a non-test Go file under shared/ or functions/
// holds message as a string literal.
func logged(t *testing.T, message string) bool {
	t.Helper()
	if sources == nil {
		sources = map[string]string{}
		for _, dir := range []string{filepath.Join("..", "shared"), filepath.Join("..", "functions")} {
			err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
					return err
				}
				b, err := os.ReadFile(p)
				sources[p] = string(b)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, src := range sources {
		if strings.Contains(src, `"`+message+`"`) {
			return true
		}
	}
	return false
}

// metricSpec is one metric an alarm watches.
type metricSpec struct {
	Namespace, Name any
	Dimensions      map[string]any
}

func specs(p map[string]any) []metricSpec {
	dims := func(v any) map[string]any {
		out := map[string]any{}
		for _, d := range cfn.Slice(v) {
			out[fmt.Sprint(cfn.Map(d)["Name"])] = cfn.Map(d)["Value"]
		}
		return out
	}
	if p["MetricName"] != nil {
		return []metricSpec{{p["Namespace"], p["MetricName"], dims(p["Dimensions"])}}
	}
	var out []metricSpec
	for _, m := range cfn.Slice(p["Metrics"]) {
		if metric := cfn.Path(m, "MetricStat", "Metric"); metric != nil {
			mm := cfn.Map(metric)
			out = append(out, metricSpec{mm["Namespace"], mm["MetricName"], dims(mm["Dimensions"])})
		}
	}
	return out
}

// The AWS metrics an alarm may name, by namespace, with the dimension that
// ties each to a resource of the stack.
var awsMetrics = map[string]struct {
	names     []string
	dimension string
}{
	"AWS/Lambda":     {[]string{"Errors", "Throttles", "Duration", "Invocations", "ConcurrentExecutions"}, "FunctionName"},
	"AWS/SQS":        {[]string{"ApproximateNumberOfMessagesVisible", "ApproximateNumberOfMessagesNotVisible", "ApproximateAgeOfOldestMessage"}, "QueueName"},
	"AWS/ApiGateway": {[]string{"5XXError", "4XXError", "Count", "Latency"}, "ApiName"},
}

// Every alarm names a metric the application emits: an AWS service metric
// of one of the stack's own resources (a function by Ref, a queue by its
// QueueName, the REST API by its name and stage), or a custom metric its
// log metric filters emit, with the filter's dimensions. And every alarm
// notifies the alarm topic: AlarmTopicArn, or by default the operations
// stack's <stack>-alarms.
func TestEveryAlarmNamesAMetricTheApplicationEmits(t *testing.T) {
	app, _ := load(t)
	filters := map[string][]string{} // metric name → its dimension keys
	filterMetrics(t, app)
	for _, id := range app.OfType("AWS::Logs::MetricFilter") {
		for _, tr := range cfn.Slice(app.Props(id)["MetricTransformations"]) {
			var keys []string
			for _, d := range cfn.Slice(cfn.Map(tr)["Dimensions"]) {
				keys = append(keys, fmt.Sprint(cfn.Map(d)["Key"]))
			}
			sort.Strings(keys)
			filters[fmt.Sprint(cfn.Map(tr)["MetricName"])] = keys
		}
	}
	apiName := app.Props(app.OfType("AWS::ApiGateway::RestApi")[0])["Name"]
	alarms := app.OfType("AWS::CloudWatch::Alarm")
	if len(alarms) < 8 {
		t.Fatalf("alarms %v, want /mcp's and the tasks'", alarms)
	}
	defaultTopic := cfn.Sub("arn:${AWS::Partition}:sns:${AWS::Region}:${AWS::AccountId}:${AWS::StackName}-alarms")
	for _, id := range alarms {
		p := app.Props(id)
		want := map[string]any{"Fn::If": []any{"HasAlarmTopic", []any{cfn.Ref("AlarmTopicArn")}, []any{defaultTopic}}}
		if !cmp.Equal(p["AlarmActions"], want) {
			t.Errorf("%s notifies %v, want AlarmTopicArn or the operations stack's topic", id, p["AlarmActions"])
		}
		ms := specs(p)
		if len(ms) == 0 {
			t.Errorf("%s names no metric", id)
		}
		for _, m := range ms {
			if err := emits(app, m, filters, apiName); err != nil {
				t.Errorf("%s: %s %s: %v", id, fmt.Sprint(m.Namespace), fmt.Sprint(m.Name), err)
			}
		}
	}
}

func emits(app *cfn.Template, m metricSpec, filters map[string][]string, apiName any) error {
	if cmp.Equal(m.Namespace, cfn.Sub("Custody/${AWS::StackName}")) {
		keys, ok := filters[fmt.Sprint(m.Name)]
		if !ok {
			return fmt.Errorf("no metric filter emits it")
		}
		var got []string
		for k := range m.Dimensions {
			got = append(got, k)
		}
		sort.Strings(got)
		if !slices.Equal(got, keys) && !(len(got) == 0 && len(keys) == 0) {
			return fmt.Errorf("dimensions %v, its filter's %v", got, keys)
		}
		return nil
	}
	ns, _ := m.Namespace.(string)
	known, ok := awsMetrics[ns]
	if !ok || !slices.Contains(known.names, fmt.Sprint(m.Name)) {
		return fmt.Errorf("not a metric this namespace emits for the stack's resources")
	}
	v := m.Dimensions[known.dimension]
	switch ns {
	case "AWS/Lambda":
		ref, _ := cfn.Map(v)["Ref"].(string)
		if !slices.Contains(app.OfType("AWS::Serverless::Function"), ref) || len(m.Dimensions) != 1 {
			return fmt.Errorf("dimensions %v: want FunctionName of a function of the stack", m.Dimensions)
		}
	case "AWS/SQS":
		ga := cfn.Slice(cfn.Map(v)["Fn::GetAtt"])
		if len(ga) != 2 || ga[1] != "QueueName" || !slices.Contains(app.OfType("AWS::SQS::Queue"), fmt.Sprint(ga[0])) || len(m.Dimensions) != 1 {
			return fmt.Errorf("dimensions %v: want QueueName of a queue of the stack", m.Dimensions)
		}
	case "AWS/ApiGateway":
		stage := cfn.Map(m.Dimensions["Stage"])["Ref"]
		if !cmp.Equal(v, apiName) || !slices.Contains(app.OfType("AWS::ApiGateway::Stage"), fmt.Sprint(stage)) {
			return fmt.Errorf("dimensions %v: want the REST API's name %v and its stage", m.Dimensions, apiName)
		}
	}
	return nil
}

// The two halves of the alarm wiring agree: the operations stack's topic is
// named <application stack>-alarms, the name the application's alarms
// notify by default, and it lets CloudWatch alarms of the account publish.
func TestTheOperationsTopicIsTheOneTheAlarmsNotify(t *testing.T) {
	_, ops := load(t)
	topics := ops.OfType("AWS::SNS::Topic")
	if len(topics) != 1 {
		t.Fatalf("topics %v, want one", topics)
	}
	if got := ops.Props(topics[0])["TopicName"]; !cmp.Equal(got, cfn.Sub("${ApplicationStackName}-alarms")) {
		t.Errorf("the topic is named %v, want ${ApplicationStackName}-alarms", got)
	}
	policies := ops.OfType("AWS::SNS::TopicPolicy")
	if len(policies) != 1 {
		t.Fatalf("topic policies %v, want one", policies)
	}
	st := cfn.Slice(cfn.Path(ops.Props(policies[0]), "PolicyDocument", "Statement"))
	if len(st) != 1 || cfn.Path(st[0], "Principal", "Service") != "cloudwatch.amazonaws.com" || cfn.Map(st[0])["Action"] != "sns:Publish" {
		t.Errorf("the topic policy %v, want CloudWatch alarms allowed to publish", st)
	}
	if cfn.Path(ops.Outputs["AlarmTopicArn"], "Export", "Name") == nil {
		t.Error("the topic's ARN is not exported")
	}
}
