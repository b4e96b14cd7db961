package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/custodymcp/custody/scripts/internal/datadir"
	"github.com/custodymcp/custody/shared/store/dynamostore"
	"github.com/custodymcp/custody/shared/store/dynamostore/dynamotest"
)

// templatePath is the SAM template at the repository root.
var templatePath = filepath.Join("..", "..", "template.yaml")

// cfnValue converts a YAML node to plain Go values (map[string]any, []any,
// string, bool, int, float64), turning CloudFormation's short-form tags into
// the long form the template means: !Ref x is {"Ref": x}, !GetAtt a.b is
// {"Fn::GetAtt": [a, b]}, and every other !Name v is {"Fn::Name": v}
// (!Sub, !If, !Equals, !Not, !Join, !Select, …).
func cfnValue(n *yaml.Node) (any, error) {
	var v any
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return nil, fmt.Errorf("line %d: a document of %d nodes", n.Line, len(n.Content))
		}
		return cfnValue(n.Content[0])
	case yaml.AliasNode:
		return cfnValue(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			val, err := cfnValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[n.Content[i].Value] = val
		}
		v = m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			val, err := cfnValue(c)
			if err != nil {
				return nil, err
			}
			s = append(s, val)
		}
		v = s
	case yaml.ScalarNode:
		plain := *n
		if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
			plain.Tag = "" // resolve the scalar by its own form
		}
		if err := plain.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
	}
	tag, short := strings.CutPrefix(n.Tag, "!")
	if !short || strings.HasPrefix(tag, "!") {
		return v, nil
	}
	switch tag {
	case "Ref":
		return map[string]any{"Ref": v}, nil
	case "GetAtt":
		if s, ok := v.(string); ok {
			res, attr, _ := strings.Cut(s, ".")
			return map[string]any{"Fn::GetAtt": []any{res, attr}}, nil
		}
	}
	return map[string]any{"Fn::" + tag: v}, nil
}

// templateTable returns the properties of the template's one
// AWS::DynamoDB::Table.
func templateTable(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(templatePath)
	if err != nil {
		t.Fatalf("read %s: %v (the SAM template must exist: the table is held to it)", templatePath, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("parse %s: %v", templatePath, err)
	}
	v, err := cfnValue(&doc)
	if err != nil {
		t.Fatalf("parse %s: %v", templatePath, err)
	}
	resources, _ := v.(map[string]any)["Resources"].(map[string]any)
	var tables []map[string]any
	for _, r := range resources {
		if r, ok := r.(map[string]any); ok && r["Type"] == "AWS::DynamoDB::Table" {
			props, _ := r["Properties"].(map[string]any)
			tables = append(tables, props)
		}
	}
	if len(tables) != 1 {
		t.Fatalf("%s has %d AWS::DynamoDB::Table resources, want one (docs/decisions.md \"Storage\": one table)", templatePath, len(tables))
	}
	return tables[0]
}

// TestTableCreateSendsTheTemplatesTable holds `custodyctl table create` to
// template.yaml: the CreateTable request custodyctl sends (captured on the
// wire at the emulator) must describe the same table as the template's
// AWS::DynamoDB::Table — attribute definitions, key schema, the GSI1 index,
// billing and encryption — and its TTL attribute must be the template's.
// A property the template gains that custodyctl does not send fails here
// unless it is listed below with the reason.
func TestTableCreateSendsTheTemplatesTable(t *testing.T) {
	var mu sync.Mutex
	var sent []byte
	capture := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".CreateTable") {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				sent = b
				mu.Unlock()
				r.Body = io.NopCloser(strings.NewReader(string(b)))
			}
			next.ServeHTTP(w, r)
		})
	}
	emu := dynamotest.NewServer(t, capture)
	env := map[string]string{"STORE_ENGINE": "dynamodb", "DYNAMODB_TABLE": "custody-template", "DYNAMODB_ENDPOINT": emu.URL}
	mustCtl(t, env, "--data", string(datadir.Dir(t.TempDir())), "table", "create")
	mu.Lock()
	var got map[string]any
	err := json.Unmarshal(sent, &got)
	mu.Unlock()
	if err != nil {
		t.Fatalf("captured CreateTable request %q: %v", sent, err)
	}

	props := templateTable(t)
	// Properties of the template's table that a CreateTable request does
	// not carry, and why that is right.
	notSent := map[string]string{
		// A separate API (UpdateTimeToLive): compared with
		// dynamostore.TimeToLiveSpecification below; custodyctl enables it
		// on AWS after creating the table.
		"TimeToLiveSpecification": "",
		// A separate API (UpdateContinuousBackups): backups of the stack's
		// production table; a table custodyctl creates (development, an
		// emulator, a scratch table) has none.
		"PointInTimeRecoverySpecification": "",
		// Protects the stack's production table from deletion; a table
		// custodyctl creates stays deletable.
		"DeletionProtectionEnabled": "",
	}
	want := map[string]any{"TableName": "custody-template"}
	for name, v := range props {
		switch name {
		case "SSESpecification":
			// CloudFormation's SSEEnabled is the API's Enabled.
			sse, _ := v.(map[string]any)
			api := map[string]any{}
			for k, x := range sse {
				if k == "SSEEnabled" {
					k = "Enabled"
				}
				api[k] = x
			}
			want[name] = api
		case "AttributeDefinitions", "KeySchema", "GlobalSecondaryIndexes", "BillingMode", "TableClass",
			"LocalSecondaryIndexes", "ProvisionedThroughput", "StreamSpecification", "Tags", "OnDemandThroughput":
			want[name] = v
		default:
			if _, ok := notSent[name]; !ok {
				t.Errorf("template.yaml's table sets %s, which custodyctl's CreateTable does not send: add it to dynamostore.CreateTableInput or explain it here", name)
			}
		}
	}
	byName := func(a, b any) int {
		name := func(x any) string { m, _ := x.(map[string]any); s, _ := m["AttributeName"].(string); return s }
		return strings.Compare(name(a), name(b))
	}
	for _, m := range []map[string]any{want, got} {
		if defs, ok := m["AttributeDefinitions"].([]any); ok {
			m["AttributeDefinitions"] = slices.SortedFunc(slices.Values(defs), byName)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("custodyctl's CreateTable request differs from template.yaml's table (-template +sent):\n%s", diff)
	}

	ttl, _ := props["TimeToLiveSpecification"].(map[string]any)
	spec := dynamostore.TimeToLiveSpecification()
	if ttl["AttributeName"] != *spec.AttributeName || ttl["Enabled"] != *spec.Enabled {
		t.Errorf("template TimeToLiveSpecification = %v, want %s enabled", ttl, *spec.AttributeName)
	}
}

func TestCfnValueReadsShortFormTags(t *testing.T) {
	src := `
a: !Ref Table
b: !GetAtt Table.Arn
c: !Sub "arn:${AWS::Partition}:x"
d: !If [HasX, !Ref X, ""]
e: !Not [!Equals [!Ref P, ""]]
f: {plain: 1, yes: true}
`
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	got, err := cfnValue(&doc)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"a": map[string]any{"Ref": "Table"},
		"b": map[string]any{"Fn::GetAtt": []any{"Table", "Arn"}},
		"c": map[string]any{"Fn::Sub": "arn:${AWS::Partition}:x"},
		"d": map[string]any{"Fn::If": []any{"HasX", map[string]any{"Ref": "X"}, ""}},
		"e": map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{map[string]any{"Ref": "P"}, ""}}}},
		"f": map[string]any{"plain": 1, "yes": true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cfnValue (-want +got):\n%s", diff)
	}
}
