package server_test

import (
	"slices"
	"testing"

	"github.com/custodymcp/custody/shared/prompts"
	"github.com/custodymcp/custody/shared/records/seed"
	"github.com/custodymcp/custody/shared/resources"
	"github.com/custodymcp/custody/shared/server/servertest"
)

// Protocol-level lists (docs/contracts.md §2): every list method pages with
// sealed cursors bound to the method, the credential id and the exact list.

// rpcErrorOf returns a JSON-RPC answer's error object, or nil.
func rpcErrorOf(msg map[string]any) map[string]any {
	e, _ := msg["error"].(map[string]any)
	return e
}

// resultOf returns a JSON-RPC answer's result, failing when it is an error.
func resultOf(t *testing.T, msg map[string]any) map[string]any {
	t.Helper()
	res, ok := msg["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result in %v", msg)
	}
	return res
}

// listMethod is one protocol-level list: its method, the member holding
// the items and the member naming each item.
type listMethod struct {
	method, items, key string
}

var listMethods = []listMethod{
	{"tools/list", "tools", "name"},
	{"prompts/list", "prompts", "name"},
	{"resources/list", "resources", "uri"},
	{"resources/templates/list", "resourceTemplates", "uriTemplate"},
}

// listAll pages a list method to its end and returns the item keys in the
// order served and the number of pages.
func listAll(t *testing.T, s *servertest.Session, lm listMethod) (keys []string, pages int) {
	t.Helper()
	params := map[string]any{}
	for pages < 100 {
		res := resultOf(t, s.Call(t, lm.method, params))
		pages++
		for _, it := range res[lm.items].([]any) {
			keys = append(keys, it.(map[string]any)[lm.key].(string))
		}
		next, ok := res["nextCursor"].(string)
		if !ok {
			return keys, pages
		}
		if next == "" {
			t.Fatalf("%s issued an empty-string cursor", lm.method)
		}
		params = map[string]any{"cursor": next}
	}
	t.Fatalf("%s never ended", lm.method)
	return nil, 0
}

func sorted(s ...string) []string { slices.Sort(s); return s }

// demoResourceURIs are the resources the demo attorney's resources/list
// expands: matter, facts and deadlines of each of the three matters.
func demoResourceURIs(matters ...string) []string {
	var out []string
	for _, m := range matters {
		out = append(out, resources.MatterResourceURIs(m)...)
	}
	slices.Sort(out)
	return out
}

func TestFB18_EveryListPagesEachItemOnceAndRefusesUnissuedOrForeignCursors(t *testing.T) {
	env := servertest.New(t, servertest.Options{ToolPageSize: 2})
	s := env.Initialize(t, servertest.Attorney, "2025-11-25")
	other := env.Initialize(t, servertest.Attorney2, "2025-11-25")
	want := map[string][]string{
		"tools/list":     env.Server.Registry.Names(),
		"prompts/list":   prompts.CustodyPromptNames(),
		"resources/list": demoResourceURIs(seed.DemoMatters...),
		"resources/templates/list": sorted(resources.DeadlinesTemplate, resources.DocumentTemplate,
			resources.FactsTemplate, resources.MatterTemplate),
	}
	issued := map[string]string{}
	for _, lm := range listMethods {
		t.Run(lm.method+" pages every item once", func(t *testing.T) {
			keys, pages := listAll(t, s, lm)
			if !slices.Equal(keys, want[lm.method]) {
				t.Errorf("%s served %v, want each of %v once, in order", lm.method, keys, want[lm.method])
			}
			if wantPages := (len(want[lm.method]) + 1) / 2; pages != wantPages {
				t.Errorf("%s took %d pages of 2, want %d", lm.method, pages, wantPages)
			}
		})
		first := resultOf(t, s.Call(t, lm.method, map[string]any{}))
		issued[lm.method], _ = first["nextCursor"].(string)
		if issued[lm.method] == "" {
			t.Fatalf("%s: no nextCursor on a first page of 2", lm.method)
		}
	}
	for i, lm := range listMethods {
		cursor := issued[lm.method]
		foreignList := issued[listMethods[(i+1)%len(listMethods)].method]
		for name, tc := range map[string]struct {
			s      *servertest.Session
			cursor string
		}{
			"never issued":                       {s, "cursor-never-issued-42"},
			"empty string":                       {s, ""},
			"edited":                             {s, cursor[:len(cursor)-3] + "xyz"},
			"issued to another key of the owner": {other, cursor},
			"issued for another list":            {s, foreignList},
		} {
			t.Run(lm.method+" refuses a cursor "+name, func(t *testing.T) {
				msg := tc.s.Call(t, lm.method, map[string]any{"cursor": tc.cursor})
				if e := rpcErrorOf(msg); e == nil || e["code"] != -32602.0 {
					t.Errorf("%s with a cursor %s = %v, want -32602", lm.method, name, msg)
				}
			})
		}
	}
}

func TestIn2026ListsCarryCachingHintsAndTheirCursorsAreRefusedInThe2025Era(t *testing.T) {
	env := servertest.New(t, servertest.Options{ToolPageSize: 2})
	key := env.Keys[servertest.Attorney]
	legacy := env.Initialize(t, servertest.Attorney, "2025-11-25")
	for i, lm := range listMethods[1:] {
		r := call2026(t, env.URL, key, 10+i, lm.method, nil)
		res := resultOf(t, r.JSON(t))
		if res["resultType"] != "complete" || res["ttlMs"] == nil || res["cacheScope"] != "private" {
			t.Errorf("2026 %s = %v, want resultType, ttlMs and cacheScope private", lm.method, res)
		}
		cursor, _ := res["nextCursor"].(string)
		if cursor == "" {
			t.Fatalf("2026 %s: no nextCursor on a first page of 2", lm.method)
		}
		if e := rpcErrorOf(legacy.Call(t, lm.method, map[string]any{"cursor": cursor})); e == nil || e["code"] != -32602.0 {
			t.Errorf("a 2026 %s cursor in a 2025 session = %v, want -32602", lm.method, e)
		}
		r = call2026(t, env.URL, key, 20+i, lm.method, map[string]any{"cursor": cursor})
		if res := resultOf(t, r.JSON(t)); len(res[lm.items].([]any)) == 0 {
			t.Errorf("2026 %s second page is empty", lm.method)
		}
	}
}
