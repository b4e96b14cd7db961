package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Any request may land on any instance, so nothing that matters may live
// in a process: sessions, parked server-to-client requests, cursors, tasks
// and rate buckets are store rows (shared/mcp package doc). This test holds
// the code to it. It type-checks every non-test Go file under shared/ and
// functions/ and lists every package-level variable whose type can hold
// shared mutable state — a map, slice, channel, pointer or sync type, or a
// struct or array holding one (time.Time, a value whose *Location is
// immutable, excepted) — and fails on any that is not on the allow-list
// below of immutable tables: built once at package initialization and never
// written afterwards. That "never" is checked too: every Go file of the
// module, tests included, is scanned for a write to an allow-listed
// variable outside func init — an assignment to it or through it, ++/--,
// delete, clear, copy into it, an in-place sort or slices/maps edit of it,
// Regexp.Longest, or taking its address.
//
// Test-helper packages (those importing "testing": servertest, storetest,
// dynamotest) are not servers' code and are left out; the Lambda links none
// of them (functions/mcp tests).

// immutable is the allow-list: package-level variables of a reference type
// that are read-only tables, by package (relative to the module) and name,
// with why each is safe to share between requests.
var immutable = map[string]string{
	"shared/approvals.SecurityHeaders":       "the fixed security headers of every page",
	"shared/approvals.files":                 "the embedded templates and stylesheet, only read",
	"shared/approvals.templates":             "templates parsed at initialization, only executed",
	"shared/approvals.style":                 "the embedded stylesheet, only written out",
	"shared/approvals.providerError":         "a compiled pattern, only matched",
	"shared/auth.AllScopes":                  "the fixed list of scopes",
	"shared/auth/oauth.accessTokenTypes":     "the fixed typ values of an access token",
	"shared/auth/oauth.idTokenTypes":         "the fixed typ value of an ID token",
	"shared/auth/oauth.algorithms":           "the fixed list of accepted JWS algorithms",
	"shared/lambdaio/lambdaiotest.Delimiter": "a protocol constant (eight NUL bytes) for tests",
	"shared/mcp.LegacyRevisions":             "the fixed list of served 2025-era revisions",
	"shared/mcp.SupportedRevisions":          "the fixed list of served revisions",
	"shared/mcp.allowedRequestHeaders":       "the fixed CORS header list",
	"shared/mcp.errBadState":                 "a sentinel error, compared and answered, never written",
	"shared/mcp.logLevels":                   "the fixed syslog level order",
	"shared/readtools.stopwords":             "the fixed stopword set",
	"shared/records.DocumentKinds":           "the fixed document kind vocabulary",
	"shared/records.Postures":                "the fixed list of postures",
	"shared/records.SourceClasses":           "the fixed list of source classes",
	"shared/records/seed.DemoMatters":        "the seed's fixed matter ids",
	"shared/records/seed.demoJSON":           "embedded seed file, only decoded",
	"shared/records/seed.otherJSON":          "embedded seed file, only decoded",
	"shared/store.ReservedAttr":              "the fixed set of reserved attribute names",
	"shared/store/filestore.bucketGSI1":      "a bucket name constant",
	"shared/store/filestore.bucketItems":     "a bucket name constant",
	"shared/tools.cancelled":                 "a sentinel refusal, compared by identity, never written",
	"shared/tools.inputRequired":             "a sentinel refusal, compared by identity, never written",
}

// The module, whose root is two folders up from shared/server.
const (
	modulePath = "github.com/custodymcp/custody"
	moduleRoot = "../.."
)

func TestNoPackageLevelMutableStateHoldsSessionsOrPendingRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks every package of the module")
	}
	pkgs := loadPackages(t)

	// The package-level variables of shared/ and functions/ that could hold state.
	type stateVar struct {
		key, kind string
		pos       token.Position
	}
	var found []stateVar
	for _, p := range pkgs {
		if !p.listed {
			continue
		}
		if slices.Contains(p.imports, "testing") {
			t.Logf("skipped the test-helper package %s", p.rel)
			continue
		}
		scope := p.types.Scope()
		for _, name := range scope.Names() {
			if v, ok := scope.Lookup(name).(*types.Var); ok {
				if kind := mutableKind(v.Type(), 0); kind != "" {
					found = append(found, stateVar{key: p.rel + "." + name, kind: kind, pos: p.fset.Position(v.Pos())})
				}
			}
		}
	}
	slices.SortFunc(found, func(a, b stateVar) int { return strings.Compare(a.key, b.key) })
	t.Logf("%d package-level variables of a type that can hold mutable state in shared/ and functions/:", len(found))
	seen := map[string]bool{}
	for _, v := range found {
		seen[v.key] = true
		reason, ok := immutable[v.key]
		if !ok {
			t.Errorf("%s: package-level %s %s is not on the allow-list of immutable tables: keep state in the store, make it a constant or a function, or, for a table written only at initialization, list it in nostate_test.go with why", v.pos, v.kind, v.key)
			continue
		}
		t.Logf("  %-42s %-18s allowed: %s", v.key, v.kind, reason)
	}
	for key := range immutable {
		if !seen[key] {
			t.Errorf("the allow-list names %s, which is not (or no longer) such a variable: remove it", key)
		}
	}

	// Nothing writes an allowed table after initialization: not its own
	// package, not another, not a test.
	writes := 0
	for _, p := range pkgs {
		for _, f := range p.syntax {
			resolve := func(r ref) (string, bool) {
				v, ok := p.info.Uses[r.id].(*types.Var)
				if !ok || v.Pkg() == nil || v.Parent() != v.Pkg().Scope() {
					return "", false
				}
				key := strings.TrimPrefix(v.Pkg().Path(), modulePath+"/") + "." + v.Name()
				_, listed := immutable[key]
				return key, listed
			}
			for _, w := range writesIn(f, resolve) {
				if !inInit(f, w.at) {
					writes++
					t.Errorf("%s: %s writes the immutable table %s", p.fset.Position(w.at), w.how, w.key)
				}
			}
		}
		for _, w := range testFileWrites(t, p) {
			writes++
			t.Errorf("%s: %s writes the immutable table %s", w.pos, w.how, w.key)
		}
	}
	t.Logf("scanned %d packages (and their tests) for writes to the allowed tables: %d found", len(pkgs), writes)
}

// mutableKind names what lets a value of type t hold shared mutable state,
// or "".
func mutableKind(t types.Type, depth int) string {
	if depth > 8 {
		return ""
	}
	if n, ok := t.(*types.Named); ok && n.Obj().Pkg() != nil {
		switch path := n.Obj().Pkg().Path(); {
		case path == "sync" || path == "sync/atomic":
			return "sync." + n.Obj().Name()
		case path == "time" && n.Obj().Name() == "Time":
			return ""
		}
	}
	switch u := t.Underlying().(type) {
	case *types.Map:
		return "map"
	case *types.Slice:
		return "slice"
	case *types.Chan:
		return "channel"
	case *types.Pointer:
		return "pointer"
	case *types.Array:
		return mutableKind(u.Elem(), depth+1)
	case *types.Struct:
		for i := range u.NumFields() {
			if k := mutableKind(u.Field(i).Type(), depth+1); k != "" {
				return "struct with a " + k
			}
		}
	}
	return ""
}

// pkg is one type-checked package of the module (its non-test files).
type pkg struct {
	path, rel, name, dir string
	// listed: under shared/ or functions/, where variables are listed.
	listed  bool
	imports []string
	fset    *token.FileSet
	syntax  []*ast.File
	types   *types.Package
	info    *types.Info
}

// loadPackages type-checks every package of the module from source,
// importing dependencies from the export data `go list -export` leaves in
// the build cache.
func loadPackages(t *testing.T) []*pkg {
	t.Helper()
	args := []string{"list", "-e", "-export", "-deps", "-json=ImportPath,Name,Dir,GoFiles,Imports,Export,Module,Error", "./..."}
	cmd := exec.Command("go", args...)
	cmd.Dir = moduleRoot
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	type listed struct {
		ImportPath, Name, Dir, Export string
		GoFiles, Imports              []string
		Module                        *struct{ Path string }
		Error                         *struct{ Err string }
	}
	exports := map[string]string{}
	var own []listed
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var l listed
		if err := dec.Decode(&l); err != nil {
			t.Fatal(err)
		}
		if l.Error != nil {
			t.Fatalf("go list %s: %s", l.ImportPath, l.Error.Err)
		}
		exports[l.ImportPath] = l.Export
		if l.Module != nil && l.Module.Path == modulePath {
			own = append(own, l)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	var pkgs []*pkg
	for _, l := range own {
		rel := strings.TrimPrefix(l.ImportPath, modulePath+"/")
		p := &pkg{path: l.ImportPath, rel: rel, name: l.Name, dir: l.Dir, imports: l.Imports, fset: fset,
			listed: strings.HasPrefix(rel, "shared/") || strings.HasPrefix(rel, "functions/"),
			info:   &types.Info{Uses: map[*ast.Ident]types.Object{}}}
		for _, name := range l.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(l.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			p.syntax = append(p.syntax, f)
		}
		conf := types.Config{Importer: imp}
		if p.types, err = conf.Check(l.ImportPath, fset, p.syntax, p.info); err != nil {
			t.Fatalf("type-check %s: %v", l.ImportPath, err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// ref is an identifier an lvalue may write through, with the name that
// qualifies it when it is the selector of q.Name.
type ref struct {
	id        *ast.Ident
	qualifier string
}

// roots returns the identifiers an lvalue writes through: the variable at
// its base (x in x[i].f, *x, (x)), and for a base a.b both a (a variable
// whose field is written) and b qualified by a (pkg.Var).
func roots(e ast.Expr) []ref {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return []ref{{id: x}}
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok {
				return []ref{{id: id}, {id: x.Sel, qualifier: id.Name}}
			}
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		default:
			return nil
		}
	}
}

// write is one write to an allowed table.
type write struct {
	key, how string
	at       token.Pos
	pos      token.Position
}

// writesIn finds the writes in f to a variable resolve names (by its key).
func writesIn(f *ast.File, resolve func(ref) (string, bool)) []write {
	var out []write
	check := func(e ast.Expr, how string) {
		for _, r := range roots(e) {
			if key, ok := resolve(r); ok {
				out = append(out, write{key: key, how: how, at: e.Pos()})
				return
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, lhs := range n.Lhs {
				check(lhs, "an assignment")
			}
		case *ast.IncDecStmt:
			check(n.X, n.Tok.String())
		case *ast.RangeStmt:
			if n.Tok == token.ASSIGN {
				for _, e := range []ast.Expr{n.Key, n.Value} {
					if e != nil {
						check(e, "a range assignment")
					}
				}
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				check(n.X, "taking the address")
			}
		case *ast.CallExpr:
			switch fn := n.Fun.(type) {
			case *ast.Ident:
				if len(n.Args) > 0 && (fn.Name == "delete" || fn.Name == "clear" || fn.Name == "copy") {
					check(n.Args[0], fn.Name)
				}
			case *ast.SelectorExpr:
				if q, ok := fn.X.(*ast.Ident); ok && len(n.Args) > 0 && inPlace(q.Name, fn.Sel.Name) {
					check(n.Args[0], q.Name+"."+fn.Sel.Name)
				}
				if fn.Sel.Name == "Longest" {
					check(fn.X, "Regexp.Longest")
				}
			}
		}
		return true
	})
	return out
}

// inPlace reports whether pkg.fn edits its first argument in place.
func inPlace(pkg, fn string) bool {
	switch pkg {
	case "sort":
		return true
	case "slices":
		return strings.HasPrefix(fn, "Sort") ||
			slices.Contains([]string{"Reverse", "Compact", "CompactFunc", "Delete", "DeleteFunc", "Replace", "Insert"}, fn)
	case "maps":
		return fn == "Copy" || fn == "DeleteFunc"
	}
	return false
}

// inInit reports whether pos lies in a func init of f, or outside every
// function (a package-level initializer).
func inInit(f *ast.File, pos token.Pos) bool {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Pos() <= pos && pos < fd.End() {
			return fd.Recv == nil && fd.Name.Name == "init"
		}
	}
	return true
}

// testFileWrites scans the package's test files, which are not
// type-checked here, for writes to an allowed table by name: Name for a
// table of the package itself (in its own tests), q.Name where the file
// imports the table's package as q. A local variable named like a table of
// its own package is reported too: rename it.
func testFileWrites(t *testing.T, p *pkg) []write {
	t.Helper()
	tests, err := filepath.Glob(filepath.Join(p.dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []write
	for _, path := range tests {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		imported := map[string]string{} // local name → package, relative to the module
		for _, is := range f.Imports {
			ip, _ := strconv.Unquote(is.Path.Value)
			rel, ok := strings.CutPrefix(ip, modulePath+"/")
			if !ok {
				continue
			}
			name := rel[strings.LastIndex(rel, "/")+1:]
			if is.Name != nil {
				name = is.Name.Name
			}
			imported[name] = rel
		}
		internal := f.Name.Name == p.name
		resolve := func(r ref) (string, bool) {
			var key string
			switch {
			case r.qualifier == "" && internal:
				key = p.rel + "." + r.id.Name
			case r.qualifier != "" && imported[r.qualifier] != "":
				key = imported[r.qualifier] + "." + r.id.Name
			default:
				return "", false
			}
			_, listed := immutable[key]
			return key, listed
		}
		for _, w := range writesIn(f, resolve) {
			w.pos = fset.Position(w.at)
			out = append(out, w)
		}
	}
	return out
}

// The write scan is not vacuous: each kind of write to a table is found,
// reads are not, and a write inside func init is allowed.
func TestTheWriteScanFindsEveryKindOfWrite(t *testing.T) {
	src := `package p

import "sort"

func init() { table["late"] = 1 }

func reads() int { return table["a"] + len(list) }

func writes() {
	table["x"] = 1
	delete(table, "x")
	clear(table)
	list[0] = "y"
	list = nil
	sort.Strings(list)
	copy(list, []string{"z"})
	_ = &list
	counter++
	other.Names[0] = "w"
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(r ref) (string, bool) {
		if (r.qualifier == "" && slices.Contains([]string{"table", "list", "counter"}, r.id.Name)) ||
			(r.qualifier == "other" && r.id.Name == "Names") {
			return r.id.Name, true
		}
		return "", false
	}
	var got []string
	for _, w := range writesIn(f, resolve) {
		if !inInit(f, w.at) {
			got = append(got, w.key+" by "+w.how)
		}
	}
	want := []string{
		"table by an assignment", "table by delete", "table by clear", "list by an assignment",
		"list by an assignment", "list by sort.Strings", "list by copy", "list by taking the address",
		"counter by ++", "Names by an assignment",
	}
	if !slices.Equal(got, want) {
		t.Errorf("writes found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
