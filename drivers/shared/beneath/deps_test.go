package beneath

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsOnlyStdlibAndSys guards the boundary: the agent, the shim,
// allocdir and logrotate all use beneath, so it must stay a leaf that
// imports nothing of drover's.
func TestImportsOnlyStdlibAndSys(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
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
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if strings.Contains(first, ".") && path != "golang.org/x/sys/unix" {
				t.Errorf("%s imports %s: beneath may import only the standard library and golang.org/x/sys/unix", f, path)
			}
		}
	}
}
