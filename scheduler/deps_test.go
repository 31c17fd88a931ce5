package scheduler

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/drover-io/drover"

// imports returns the imports of the non-test Go files in dir.
func imports(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out = append(out, p)
		}
	}
	return out
}

// TestDependencies keeps the scheduler pure: it does no I/O (no net, no os)
// and depends on none of the server, client or agent, directly or through
// another package of this module.
func TestDependencies(t *testing.T) {
	forbiddenStd := map[string]bool{"net": true, "os": true, "os/exec": true, "net/http": true, "io/ioutil": true}
	forbiddenOurs := []string{"server", "client", "agent", "command", "drivers"}
	for _, p := range imports(t, ".") {
		if forbiddenStd[p] {
			t.Errorf("scheduler imports %q", p)
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var walk func(pkg, dir string)
	walk = func(pkg, dir string) {
		if seen[pkg] {
			return
		}
		seen[pkg] = true
		for _, p := range imports(t, dir) {
			rel, ok := strings.CutPrefix(p, modulePath+"/")
			if !ok {
				continue
			}
			for _, f := range forbiddenOurs {
				if rel == f || strings.HasPrefix(rel, f+"/") {
					t.Errorf("%s imports %s: the scheduler must not depend on %s/", pkg, p, f)
				}
			}
			walk(p, filepath.Join(root, filepath.FromSlash(rel)))
		}
	}
	walk(modulePath+"/scheduler", ".")
	if _, err := os.Stat(filepath.Join(root, "structs")); err != nil {
		t.Fatalf("module layout changed: %v", err)
	}
}
