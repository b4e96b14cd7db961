package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// deployment is template.yaml as CloudFormation would deploy it for one set
// of parameter values: its conditions evaluated, so that the resources and
// outputs that exist are known and Fn::If can be resolved.
type deployment struct {
	tpl        *cfnTemplate
	params     map[string]string
	conditions map[string]bool
}

// deployment evaluates the template with FrontDoor front and every other
// parameter at its default, changed by key, value pairs.
func (tpl *cfnTemplate) deployment(t *testing.T, front string, kv ...string) *deployment {
	t.Helper()
	d := &deployment{tpl: tpl, params: map[string]string{}, conditions: map[string]bool{}}
	for name, p := range tpl.Parameters {
		if def, ok := asMap(p)["Default"]; ok {
			d.params[name] = fmt.Sprint(def)
		}
	}
	d.params["FrontDoor"] = front
	for i := 0; i+1 < len(kv); i += 2 {
		d.params[kv[i]] = kv[i+1]
	}
	for name := range tpl.Conditions {
		v, err := d.condition(name, 0)
		if err != nil {
			t.Fatalf("condition %s: %v", name, err)
		}
		d.conditions[name] = v
	}
	return d
}

// condition evaluates a named condition (Fn::Equals, Fn::Not, Fn::And,
// Fn::Or, Condition over parameters: all template.yaml uses).
func (d *deployment) condition(name string, depth int) (bool, error) {
	c, ok := d.tpl.Conditions[name]
	if !ok || depth > 10 {
		return false, fmt.Errorf("no condition %s", name)
	}
	return d.truth(c, depth+1)
}

func (d *deployment) truth(v any, depth int) (bool, error) {
	m := asMap(v)
	switch {
	case m["Fn::Equals"] != nil:
		args := asSlice(m["Fn::Equals"])
		if len(args) != 2 {
			return false, fmt.Errorf("Fn::Equals of %v", args)
		}
		a, b := d.scalar(args[0]), d.scalar(args[1])
		return a == b, nil
	case m["Fn::Not"] != nil:
		x, err := d.truth(asSlice(m["Fn::Not"])[0], depth)
		return !x, err
	case m["Fn::And"] != nil, m["Fn::Or"] != nil:
		and := m["Fn::And"] != nil
		args := asSlice(m["Fn::And"])
		if !and {
			args = asSlice(m["Fn::Or"])
		}
		out := and
		for _, a := range args {
			x, err := d.truth(a, depth)
			if err != nil {
				return false, err
			}
			if and {
				out = out && x
			} else {
				out = out || x
			}
		}
		return out, nil
	case m["Condition"] != nil:
		return d.condition(fmt.Sprint(m["Condition"]), depth)
	}
	return false, fmt.Errorf("not a condition function: %v", v)
}

func (d *deployment) scalar(v any) string {
	if ref, ok := asMap(v)["Ref"].(string); ok {
		return d.params[ref]
	}
	return fmt.Sprint(v)
}

// eval resolves every Fn::If in v by the deployment's conditions; an
// AWS::NoValue branch leaves the value out of its list or map.
func (d *deployment) eval(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if branches, ok := x["Fn::If"]; ok && len(x) == 1 {
			b := asSlice(branches)
			if d.conditions[fmt.Sprint(b[0])] {
				return d.eval(b[1])
			}
			return d.eval(b[2])
		}
		out := map[string]any{}
		for k, e := range x {
			if ev := d.eval(e); !isNoValue(ev) {
				out[k] = ev
			}
		}
		return out
	case []any:
		var out []any
		for _, e := range x {
			if ev := d.eval(e); !isNoValue(ev) {
				out = append(out, ev)
			}
		}
		return out
	}
	return v
}

func isNoValue(v any) bool { return cmp.Equal(v, map[string]any{"Ref": "AWS::NoValue"}) }

// exists reports whether a resource (or output) with these top-level keys
// is deployed: it has no Condition, or its condition holds.
func (d *deployment) exists(top map[string]any) bool {
	c, ok := top["Condition"]
	return !ok || d.conditions[fmt.Sprint(c)]
}

// resources lists the deployed resources, sorted.
func (d *deployment) resources() []string {
	var ids []string
	for id, r := range d.tpl.Resources {
		if d.exists(r) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// ofType lists the deployed resources of a type.
func (d *deployment) ofType(typ string) []string {
	var ids []string
	for _, id := range d.resources() {
		if d.tpl.Resources[id]["Type"] == typ {
			ids = append(ids, id)
		}
	}
	return ids
}

// references returns every resource or parameter name that v refers to:
// Ref, Fn::GetAtt, the ${Name} and ${Name.Attribute} of Fn::Sub (not its
// own variables), and DependsOn. Pseudo parameters (AWS::…) are left out.
func references(v any) []string { return collectReferences(v, true) }

// unguardedReferences is references outside every Fn::If: the names a
// resource needs whatever the conditions.
func unguardedReferences(v any) []string { return collectReferences(v, false) }

func collectReferences(v any, intoIf bool) []string {
	var names []string
	var walk func(v any, subVars map[string]any)
	add := func(n string) {
		if !strings.HasPrefix(n, "AWS::") {
			names = append(names, n)
		}
	}
	walk = func(v any, subVars map[string]any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				switch k {
				case "Ref":
					add(fmt.Sprint(e))
				case "Fn::GetAtt":
					add(fmt.Sprint(asSlice(e)[0]))
				case "Fn::If":
					if intoIf {
						walk(e, nil)
					}
				case "Fn::Sub":
					str, vars := e, map[string]any(nil)
					if list := asSlice(e); list != nil {
						str, vars = list[0], asMap(list[1])
						walk(vars, nil)
					}
					for _, m := range subRef.FindAllStringSubmatch(fmt.Sprint(str), -1) {
						name, _, _ := strings.Cut(m[1], ".")
						if _, own := vars[name]; !own {
							add(name)
						}
					}
				default:
					walk(e, nil)
				}
			}
		case []any:
			for _, e := range x {
				walk(e, nil)
			}
		}
	}
	walk(v, nil)
	return names
}

// The resources each front door owns, by type and by the front's own
// resource they name: every one exists under its door's condition only.
var frontResources = []struct {
	front, condition string
	// owns reports whether a resource belongs to the door.
	owns func(r map[string]any) bool
}{
	{"rest", "IsRestFront", func(r map[string]any) bool {
		return strings.HasPrefix(fmt.Sprint(r["Type"]), "AWS::ApiGateway::") || slices.Contains(unguardedReferences(r), "Api")
	}},
	{"http", "IsHttpFront", func(r map[string]any) bool {
		return strings.HasPrefix(fmt.Sprint(r["Type"]), "AWS::ApiGatewayV2::") || slices.Contains(unguardedReferences(r), "HttpApi")
	}},
	{"url", "IsUrlFront", func(r map[string]any) bool {
		p := asMap(r["Properties"])
		return r["Type"] == "AWS::Lambda::Url" || p["FunctionUrlAuthType"] != nil || p["InvokedViaFunctionUrl"] != nil ||
			slices.Contains(unguardedReferences(r), "McpFunctionUrl")
	}},
}

// FrontDoor keeps exactly one front door: each door's resources exist under
// its condition only, so a deployment holds one door's resources and no
// other's; in each deployment every reference of every deployed resource
// and output names a deployed resource or a parameter (a reference to a
// resource of another door would fail the stack); and the function is told
// which door it has and what its public base is.
func TestTemplateFrontDoorsAreExclusive(t *testing.T) {
	tpl := loadTemplate(t)
	fd := asMap(tpl.Parameters["FrontDoor"])
	if fd["Default"] != "rest" || !cmp.Equal(fd["AllowedValues"], []any{"rest", "http", "url"}) {
		t.Errorf("FrontDoor parameter = %v, want rest | http | url, default rest", fd)
	}
	for _, fr := range frontResources {
		owned := 0
		for id, r := range tpl.Resources {
			if !fr.owns(r) {
				continue
			}
			owned++
			if r["Condition"] != fr.condition {
				t.Errorf("%s belongs to the %s front door but has Condition %v, want %s", id, fr.front, r["Condition"], fr.condition)
			}
		}
		if owned == 0 {
			t.Errorf("no resource of the %s front door", fr.front)
		}
	}
	endpoints := map[string]string{"rest": "AWS::ApiGateway::RestApi", "http": "AWS::ApiGatewayV2::Api", "url": "AWS::Lambda::Url"}
	wantBase := map[string]string{
		"rest": "https://${Api}.execute-api.${AWS::Region}.${AWS::URLSuffix}/${Stage}",
		"http": "https://${HttpApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}",
	}
	wantMcpURL := map[string]string{
		"rest": "https://${Api}.execute-api.${AWS::Region}.${AWS::URLSuffix}/${Stage}/mcp",
		"http": "https://${HttpApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}/mcp",
		"url":  "${McpFunctionUrl.FunctionUrl}mcp",
	}
	for _, front := range []string{"rest", "http", "url"} {
		t.Run("FrontDoor "+front, func(t *testing.T) {
			d := tpl.deployment(t, front)
			for other, typ := range endpoints {
				n := len(d.ofType(typ))
				if want := map[bool]int{true: 1, false: 0}[other == front]; n != want {
					t.Errorf("%d %s deployed, want %d", n, typ, want)
				}
			}
			deployed := d.resources()
			// The SAM transform adds <Function>Role for each function that
			// names no Role of its own; references to it are references to
			// a deployed resource.
			for _, id := range deployed {
				if r := tpl.Resources[id]; r["Type"] == "AWS::Serverless::Function" && asMap(r["Properties"])["Role"] == nil {
					deployed = append(deployed, id+"Role")
				}
			}
			check := func(what string, v any) {
				for _, name := range references(d.eval(v)) {
					if !slices.Contains(deployed, name) && tpl.Parameters[name] == nil {
						t.Errorf("%s refers to %s, which is not deployed with FrontDoor %s", what, name, front)
					}
				}
			}
			for _, id := range deployed {
				check(id, tpl.Resources[id])
			}
			for id, o := range tpl.Outputs {
				if d.exists(o) {
					check("output "+id, o["Value"])
				}
			}
			vars := asMap(d.eval(path(tpl.Resources["McpFunction"], "Properties", "Environment", "Variables")))
			if got := d.eval(vars["FRONT_DOOR"]); !cmp.Equal(got, map[string]any{"Ref": "FrontDoor"}) {
				t.Errorf("FRONT_DOOR = %v, want the FrontDoor parameter", got)
			}
			if got, want := vars["RESPONSE_STREAMING"], map[bool]string{true: "false", false: "true"}[front == "http"]; got != want {
				t.Errorf("RESPONSE_STREAMING = %v, want %q", got, want)
			}
			base := vars["PUBLIC_BASE_URL"]
			if front == "url" {
				if base != "" {
					t.Errorf("PUBLIC_BASE_URL = %v, want empty: the function learns its URL from the first event", base)
				}
			} else if got := path(base, "Fn::Sub"); got != wantBase[front] {
				t.Errorf("PUBLIC_BASE_URL = %v, want %s", base, wantBase[front])
			}
			if got := path(d.eval(tpl.Outputs["McpURL"]["Value"]), "Fn::Sub"); got != wantMcpURL[front] {
				t.Errorf("output McpURL = %v, want %s", got, wantMcpURL[front])
			}
			custom := tpl.deployment(t, front, "PublicBaseURL", "https://mcp.firm.example")
			if got := asMap(custom.eval(path(tpl.Resources["McpFunction"], "Properties", "Environment", "Variables")))["PUBLIC_BASE_URL"]; !cmp.Equal(got, map[string]any{"Ref": "PublicBaseURL"}) {
				t.Errorf("PUBLIC_BASE_URL with a custom domain = %v, want the PublicBaseURL parameter", got)
			}
		})
	}
}

// The HTTP API routes exactly the REST API's methods and paths, each to
// one Lambda proxy integration of payload format 2.0 within the HTTP API's
// 30 s, on an auto-deployed $default stage throttled as the REST stage is,
// and API Gateway may invoke the function for it.
func TestTemplateHTTPAPIRoutesWhatTheRESTAPIRoutes(t *testing.T) {
	tpl := loadTemplate(t)
	// The REST API's method + path pairs, from its resource tree.
	pathOf := map[string]string{}
	var resolve func(id string) string
	resolve = func(id string) string {
		if p, ok := pathOf[id]; ok {
			return p
		}
		p := asMap(tpl.Resources[id]["Properties"])
		parent := ""
		if ref, ok := asMap(p["ParentId"])["Ref"].(string); ok {
			parent = resolve(ref)
		}
		pathOf[id] = parent + "/" + fmt.Sprint(p["PathPart"])
		return pathOf[id]
	}
	var restRoutes []string
	for _, id := range tpl.ofType("AWS::ApiGateway::Method") {
		p := asMap(tpl.Resources[id]["Properties"])
		restRoutes = append(restRoutes, fmt.Sprint(p["HttpMethod"])+" "+resolve(fmt.Sprint(path(p, "ResourceId", "Ref"))))
	}
	sort.Strings(restRoutes)
	var httpRoutes []string
	for _, id := range tpl.ofType("AWS::ApiGatewayV2::Route") {
		p := asMap(tpl.Resources[id]["Properties"])
		httpRoutes = append(httpRoutes, fmt.Sprint(p["RouteKey"]))
		if !cmp.Equal(p["Target"], map[string]any{"Fn::Sub": "integrations/${HttpApiIntegration}"}) || p["AuthorizationType"] != "NONE" ||
			!cmp.Equal(p["ApiId"], map[string]any{"Ref": "HttpApi"}) {
			t.Errorf("route %s = %v, want HttpApi's, no authorizer, to HttpApiIntegration", id, p)
		}
	}
	sort.Strings(httpRoutes)
	if diff := cmp.Diff(restRoutes, httpRoutes); diff != "" || len(restRoutes) == 0 {
		t.Errorf("REST methods (-) vs HTTP API routes (+):\n%s", diff)
	}
	in := asMap(tpl.Resources["HttpApiIntegration"]["Properties"])
	if in["IntegrationType"] != "AWS_PROXY" || in["PayloadFormatVersion"] != "2.0" ||
		!cmp.Equal(in["IntegrationUri"], map[string]any{"Fn::GetAtt": []any{"McpFunction", "Arn"}}) || in["TimeoutInMillis"] != 30000 {
		t.Errorf("HttpApiIntegration = %v, want AWS_PROXY, payload 2.0, McpFunction, 30000 ms", in)
	}
	if got := asMap(tpl.Resources["HttpApi"]["Properties"])["ProtocolType"]; got != "HTTP" {
		t.Errorf("HttpApi ProtocolType = %v, want HTTP", got)
	}
	st := asMap(tpl.Resources["HttpApiStage"]["Properties"])
	rs := asMap(st["DefaultRouteSettings"])
	if st["StageName"] != "$default" || st["AutoDeploy"] != true || rs["ThrottlingRateLimit"] != 200 || rs["ThrottlingBurstLimit"] != 400 {
		t.Errorf("HttpApiStage = %v, want $default, auto-deployed, 200 rps bursting to 400", st)
	}
	perm := asMap(tpl.Resources["HttpApiInvokePermission"]["Properties"])
	if perm["Principal"] != "apigateway.amazonaws.com" || perm["Action"] != "lambda:InvokeFunction" ||
		!strings.Contains(fmt.Sprint(path(perm, "SourceArn", "Fn::Sub")), ":${HttpApi}/") {
		t.Errorf("HttpApiInvokePermission = %v, want API Gateway invoking for HttpApi only", perm)
	}
}

// The function URL streams (InvokeMode RESPONSE_STREAM) to the function
// with AuthType NONE — Custody authenticates every request — and its
// resource policy grants both actions a public URL needs, the second only
// through the URL.
func TestTemplateFunctionURLStreams(t *testing.T) {
	tpl := loadTemplate(t)
	urls := tpl.ofType("AWS::Lambda::Url")
	if len(urls) != 1 {
		t.Fatalf("function URLs %v, want one", urls)
	}
	p := asMap(tpl.Resources[urls[0]]["Properties"])
	if p["AuthType"] != "NONE" || p["InvokeMode"] != "RESPONSE_STREAM" ||
		!cmp.Equal(p["TargetFunctionArn"], map[string]any{"Fn::GetAtt": []any{"McpFunction", "Arn"}}) || p["Qualifier"] != nil {
		t.Errorf("%s = %v, want AuthType NONE, RESPONSE_STREAM, McpFunction unqualified", urls[0], p)
	}
	var actions []string
	for _, id := range tpl.ofType("AWS::Lambda::Permission") {
		pp := asMap(tpl.Resources[id]["Properties"])
		if pp["Principal"] != "*" {
			continue
		}
		switch {
		case pp["Action"] == "lambda:InvokeFunctionUrl" && pp["FunctionUrlAuthType"] == "NONE":
		case pp["Action"] == "lambda:InvokeFunction" && pp["InvokedViaFunctionUrl"] == true:
		default:
			t.Errorf("%s grants %v to everyone: only the function URL's two grants may", id, pp["Action"])
			continue
		}
		actions = append(actions, fmt.Sprint(pp["Action"]))
	}
	sort.Strings(actions)
	if want := []string{"lambda:InvokeFunction", "lambda:InvokeFunctionUrl"}; !slices.Equal(actions, want) {
		t.Errorf("public grants %v, want %v", actions, want)
	}
}
