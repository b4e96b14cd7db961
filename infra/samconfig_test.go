package infra_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	cfn "github.com/custodymcp/custody/infra/cfntemplate"
)

type samDeploy struct {
	TemplateFile       string `toml:"template_file"`
	StackName          string `toml:"stack_name"`
	Capabilities       string `toml:"capabilities"`
	ParameterOverrides string `toml:"parameter_overrides"`
	ResolveS3          bool   `toml:"resolve_s3"`
}

type samEnv struct {
	Deploy struct {
		Parameters samDeploy `toml:"parameters"`
	} `toml:"deploy"`
}

// overrides splits parameter_overrides (Key=Value, space-separated).
func overrides(t *testing.T, s string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, kv := range strings.Fields(s) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Errorf("parameter override %q is not Key=Value", kv)
		}
		out[k] = strings.Trim(v, `"`)
	}
	return out
}

// samconfig.toml deploys what the README says: `sam deploy --config-env
// prod` (and dev) the application stack from template.yaml, with the
// capabilities its IAM needs and overrides of parameters it declares
// within their bounds; prod-ops (and dev-ops) the operations stack beside
// the stack of the same environment.
func TestSamconfigEnvironmentsDeployTheirTemplates(t *testing.T) {
	var raw map[string]toml.Primitive
	meta, err := toml.DecodeFile(filepath.Join("..", "samconfig.toml"), &raw)
	if err != nil {
		t.Fatalf("samconfig.toml: %v", err)
	}
	var version float64
	if err := meta.PrimitiveDecode(raw["version"], &version); err != nil || version != 0.1 {
		t.Errorf("samconfig.toml version = %v (%v), want 0.1", version, err)
	}
	cfg := map[string]samEnv{}
	for name, prim := range raw {
		if name == "version" || name == "default" {
			continue
		}
		var e samEnv
		if err := meta.PrimitiveDecode(prim, &e); err != nil {
			t.Fatalf("samconfig.toml [%s]: %v", name, err)
		}
		cfg[name] = e
	}
	if len(cfg) != 4 {
		t.Errorf("environments %v, want dev, prod, dev-ops and prod-ops", cfg)
	}
	app, ops := load(t)
	for _, env := range []string{"dev", "prod"} {
		t.Run(env, func(t *testing.T) {
			p := cfg[env].Deploy.Parameters
			if p.StackName != "custody-"+env || p.TemplateFile != "" || !p.ResolveS3 || p.Capabilities != "CAPABILITY_IAM" {
				t.Errorf("%s deploys %+v, want stack custody-%s from template.yaml with CAPABILITY_IAM and a resolved bucket", env, p, env)
			}
			checkOverrides(t, app, overrides(t, p.ParameterOverrides))
			o := cfg[env+"-ops"].Deploy.Parameters
			if o.TemplateFile != "infra/operations.yaml" || o.StackName != "custody-"+env+"-ops" {
				t.Errorf("%s-ops deploys %+v, want stack custody-%s-ops from infra/operations.yaml", env, o, env)
			}
			ov := overrides(t, o.ParameterOverrides)
			if ov["ApplicationStackName"] != p.StackName {
				t.Errorf("%s-ops watches %q, want the %s stack %q", env, ov["ApplicationStackName"], env, p.StackName)
			}
			checkOverrides(t, ops, ov)
		})
	}
}

// checkOverrides holds overrides to the template's parameters: declared,
// and within MinValue/MaxValue and AllowedValues.
func checkOverrides(t *testing.T, tpl *cfn.Template, ov map[string]string) {
	t.Helper()
	for k, v := range ov {
		p := cfn.Map(tpl.Parameters[k])
		if p == nil {
			t.Errorf("override %s names no parameter of the template", k)
			continue
		}
		if allowed := cfn.Slice(p["AllowedValues"]); allowed != nil && !strings.Contains(fmt.Sprint(allowed), v) {
			t.Errorf("override %s=%s is not one of %v", k, v, allowed)
		}
		if p["Type"] == "Number" {
			n, err := strconv.Atoi(v)
			min, hasMin := p["MinValue"].(int)
			max, hasMax := p["MaxValue"].(int)
			if err != nil || (hasMin && n < min) || (hasMax && n > max) {
				t.Errorf("override %s=%s is outside [%v, %v]", k, v, p["MinValue"], p["MaxValue"])
			}
		}
	}
}
