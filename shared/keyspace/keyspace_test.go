package keyspace_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/custodymcp/custody/shared/keyspace"
)

// segment is one '#'-separated part of a key shape.
type segment struct {
	literal string // "" for a variable
	rest    bool   // a trailing variable that may hold '#'
}

func segments(shape string) []segment {
	var out []segment
	for _, p := range strings.Split(shape, "#") {
		switch {
		case strings.HasPrefix(p, "{") && strings.HasSuffix(p, "...}"):
			out = append(out, segment{rest: true})
		case strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}"):
			out = append(out, segment{})
		default:
			out = append(out, segment{literal: p})
		}
	}
	return out
}

// overlap reports whether some concrete key matches both shapes.
func overlap(a, b []segment) bool {
	for i := 0; ; i++ {
		switch {
		case i < len(a) && a[i].rest, i < len(b) && b[i].rest:
			return true // the rest matches whatever remains of the other
		case i == len(a) || i == len(b):
			return len(a) == len(b)
		case a[i].literal != "" && b[i].literal != "" && a[i].literal != b[i].literal:
			return false
		}
	}
}

// No two kinds of row can share a key (and no two index entries an index
// key): some literal segment differs, or the segment counts do.
func TestNoTwoKindsOfRowCanShareAKey(t *testing.T) {
	kinds := keyspace.Kinds()
	for i, a := range kinds {
		for _, b := range kinds[i+1:] {
			if a.Index != b.Index {
				continue
			}
			if overlap(segments(a.PK), segments(b.PK)) && overlap(segments(a.SK), segments(b.SK)) {
				t.Errorf("%q (%s / %s) and %q (%s / %s) can share a key", a.Name, a.PK, a.SK, b.Name, b.PK, b.SK)
			}
		}
	}
}

func TestTheOverlapRuleItselfTellsKeysApart(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"T#{t}", "T#{t}", true},
		{"T#{t}#M#{m}", "T#{t}#AUDIT#{d}", false},
		{"T#{t}#M#{m}", "T#{t}#M#{m}#AUDIT", false},
		{"SUB#{uri...}", "SUB#{x}#{y}", true},
		{"SUB#{uri...}", "REQ#{r}", false},
		{"{time}#{req}", "{time}#{req}", true},
	} {
		if got := overlap(segments(c.a), segments(c.b)); got != c.want {
			t.Errorf("overlap(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// sharedPartitions are the partition shapes the keyspace functions build;
// their literal words belong to no single owner.
var sharedPartitions = []string{"T#{tenant}#M#{matter}", "T#{tenant}#CRED#{credential}", "T#{tenant}", "CRED#{key hash}", "SESS#{session}"}

// ownedWords are the literal key words each owner may spell in its source:
// its kinds' sort key words, and their partition words beyond a shared
// partition's.
func ownedWords() map[string][]string {
	owners := map[string][]string{}
	add := func(owner, shape string) {
		for _, s := range segments(shape) {
			if s.literal != "" && !slices.Contains(owners[owner], s.literal) {
				owners[owner] = append(owners[owner], s.literal)
			}
		}
	}
	for _, k := range keyspace.Kinds() {
		add(k.Owner, k.SK)
		pk := k.PK
		for _, p := range sharedPartitions {
			if rest, ok := strings.CutPrefix(pk, p); ok {
				pk = strings.TrimPrefix(rest, "#")
				break
			}
		}
		add(k.Owner, pk)
	}
	return owners
}

// keyWord finds the capital words joined to a '#' in a string literal: the
// fragments a key is built from ("SESS#", "#AUDIT#").
var keyWord = regexp.MustCompile(`[A-Z][A-Z0-9_]*#|#[A-Z][A-Z0-9_]*`)

// Each kind's key fragments appear in string literals only in its owner's
// source (the shared partitions' only in package keyspace), and every key
// fragment in the source is in the table: no package builds another's keys.
func TestEachKindsKeyFragmentsAreSpelledOnlyByItsOwner(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	owned := ownedWords()
	known := map[string]bool{"T": true, "M": true, "CRED": true, "SESS": true} // the shared partitions'

	for _, words := range owned {
		for _, w := range words {
			known[w] = true
		}
	}
	scanned := 0
	for _, top := range []string{"shared", "functions", "scripts"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				// Test helpers (storetest, servertest, …) build fixture keys of
				// their own; testdata holds no source.
				if n := d.Name(); n == "testdata" || n == "node_modules" || (strings.HasSuffix(n, "test") && path != filepath.Join(root, top)) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			pkg := filepath.ToSlash(rel)
			scanned++
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				for _, frag := range keyWord.FindAllString(s, -1) {
					w := strings.Trim(frag, "#")
					switch {
					case pkg == "shared/keyspace":
					case !known[w]:
						t.Errorf("%s: the key fragment %q is in no kind of row of the key-space table (shared/keyspace.Kinds)", rel, frag)
					case !slices.Contains(owned[pkg], w):
						t.Errorf("%s: spells the key fragment %q, which belongs to %s: build the key with its owner's function", rel, frag, ownersOf(owned, w))
					}
				}
				return true
			})
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if scanned < 50 {
		t.Fatalf("scanned %d source files: the walk did not find the repository", scanned)
	}
}

func ownersOf(owned map[string][]string, w string) string {
	var out []string
	for o, words := range owned {
		if slices.Contains(words, w) {
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		return "package keyspace (a shared partition)"
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}
