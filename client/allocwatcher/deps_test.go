package allocwatcher

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoCycleWithTheRunner guards the boundary: the alloc runner uses the
// watchers, so the watchers must not import the runner (nor the client
// that owns it); they reach a previous alloc only through AllocRunnerMeta.
func TestNoCycleWithTheRunner(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{
		"github.com/drover-io/drover/client",
		"github.com/drover-io/drover/client/allocrunner",
		"github.com/drover-io/drover/server",
		"github.com/drover-io/drover/scheduler",
	}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, bad+"/allocrunner") {
					t.Errorf("%s imports %s: allocwatcher must not depend on the runner, the client or the servers", f, path)
				}
			}
		}
	}
}
