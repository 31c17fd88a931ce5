package drover_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/drover-io/drover/rpcapi"
)

// The dependency boundaries of DESIGN.md, as a test (STYLE rule 15): a change
// that crosses one fails here, naming the import.

const module = "github.com/drover-io/drover"

type boundary struct {
	pkg string // package pattern, relative to the module
	// forbidden import prefixes, relative to the module and checked
	// against every transitive dependency, unless they start with "std:":
	// a standard library package the pattern's packages must not import
	// directly (fmt imports os, so transitive std checks mean nothing).
	forbidden []string
	why       string
}

var boundaries = []boundary{
	{"version", []string{"api", "agent", "client", "command", "drivers", "devices", "httpapi", "jobspec", "plugins", "rpcapi", "scheduler", "server", "structs"},
		"version is a leaf every package may import: it imports nothing of drover's"},
	{"structs", []string{"api", "agent", "client", "command", "drivers", "devices", "httpapi", "jobspec", "plugins", "rpcapi", "scheduler", "server"},
		"structs is the bottom of the graph: it imports nothing of drover's"},
	{"api", []string{"agent", "client", "command", "drivers", "devices", "httpapi", "jobspec", "plugins", "rpcapi", "scheduler", "server", "structs"},
		"api is a standalone client library for third parties"},
	{"plugins/...", []string{"structs", "agent", "client", "command", "scheduler", "server"},
		"the plugin SDK must not depend on drover's internals"},
	{"drivers/...", []string{"agent", "client", "command", "scheduler", "server", "structs"},
		"drivers speak only the plugin SDK"},
	{"devices/...", []string{"agent", "client", "command", "scheduler", "server", "structs", "drivers"},
		"device plugins speak only the plugin SDK"},
	{"scheduler", []string{"server", "client", "agent", "command", "std:net", "std:os", "std:net/http"},
		"the scheduler is pure placement logic: no I/O"},
	{"rpcapi", []string{"api", "agent", "client", "command", "drivers", "devices", "httpapi", "jobspec", "plugins", "scheduler", "server"},
		"rpcapi declares the server API for both sides of the wire: it imports only structs and acl"},
	{"acl", []string{"api", "agent", "client", "command", "drivers", "devices", "httpapi", "jobspec", "plugins", "rpcapi", "scheduler", "server", "structs", "std:net", "std:os", "std:net/http"},
		"acl is the pure policy language and its checks: no I/O, nothing of drover's"},
	{"client/...", []string{"server", "scheduler", "agent", "command", "httpapi"},
		"the client reaches the server only through the declared API (rpcapi)"},
	{"server/...", []string{"client", "agent", "command", "drivers", "httpapi"},
		"the client and the server never import each other; the server serves rpcapi, not HTTP"},
	{"httpapi", []string{"server", "agent", "command", "scheduler", "jobspec"},
		"the HTTP API calls the server only through the declared API (rpcapi), never its internals"},
	{"jobspec", []string{"server", "client", "agent", "command", "scheduler", "httpapi", "rpcapi"},
		"jobspec turns files into api.Job and nothing else"},
	{"timeline", []string{"api", "agent", "client", "command", "drivers", "devices", "httpapi", "jobspec", "plugins", "rpcapi", "scheduler", "server"},
		"timeline is a recorder the server and the client share: it imports only structs"},
	{"tlsutil", []string{"api", "agent", "client", "command", "drivers", "devices", "httpapi", "jobspec", "plugins", "rpcapi", "scheduler", "server", "structs"},
		"tlsutil builds TLS configs and certificates for the agent, the server, the client and the CLI: it imports nothing of drover's"},
	{"osthread", []string{"api", "agent", "client", "command", "drivers", "devices", "httpapi", "jobspec", "plugins", "rpcapi", "scheduler", "server", "structs"},
		"osthread runs code on a throwaway OS thread for the agent, the drivers and drover-shim: it imports nothing of drover's"},
	{"inputlimit", []string{"api", "agent", "client", "command", "drivers", "devices", "jobspec", "plugins", "scheduler", "server", "structs"},
		"inputlimit is a leaf every door for input may import: it imports nothing of drover's"},
	{"ui", []string{"api", "agent", "client", "command", "drivers", "devices", "httpapi", "jobspec", "plugins", "scheduler", "rpcapi", "server", "structs"},
		"the web UI is assets served as they are: the browser reads the cluster through the HTTP API"},
	{"cmd/drover-shim", []string{"agent", "api", "client", "command", "devices", "httpapi", "jobspec", "rpcapi", "scheduler", "server", "structs", "ui",
		"drivers/rawexec", "drivers/exec", "drivers/docker", "drivers/mock", "plugins/base/proto", "plugins/drivers/proto"},
		"drover-shim stays small: every package's initialisation runs in every task's shim (docs/decisions.md)"},
}

type listedPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Error      *struct{ Err string }
}

func TestDependencyBoundaries(t *testing.T) {
	for _, b := range boundaries {
		t.Run(b.pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Deps,Error", "./"+b.pkg).Output()
			if err != nil {
				t.Fatalf("go list ./%s: %v", b.pkg, err)
			}
			dec := json.NewDecoder(strings.NewReader(string(out)))
			n := 0
			for dec.More() {
				var p listedPackage
				if err := dec.Decode(&p); err != nil {
					t.Fatalf("decode go list output: %v", err)
				}
				if p.Error != nil && strings.Contains(p.Error.Err, "matched no packages") {
					continue
				}
				n++
				for _, f := range b.forbidden {
					deps := p.Deps
					if strings.HasPrefix(f, "std:") {
						deps = p.Imports
					}
					for _, dep := range deps {
						if violates(dep, f) {
							t.Errorf("%s imports %s: %s", p.ImportPath, dep, b.why)
						}
					}
				}
			}
			if n == 0 {
				t.Skipf("no packages match ./%s yet", b.pkg)
			}
		})
	}
}

func violates(dep, forbidden string) bool {
	if std, ok := strings.CutPrefix(forbidden, "std:"); ok {
		return dep == std
	}
	full := module + "/" + forbidden
	return dep == full || strings.HasPrefix(dep, full+"/")
}

// TestServerAPIDeclaredOnce: the server's methods and wire protocol are
// declared in rpcapi only (STYLE rule 19). No other Go file, tests
// included, spells a method's name as a string or the wire's path prefix
// or media type: callers use rpcapi's descriptors and constants.
func TestServerAPIDeclaredOnce(t *testing.T) {
	forbidden := map[string]string{}
	for _, m := range rpcapi.All() {
		forbidden[m.Name()] = "the name of rpcapi." + m.Name()
	}
	wire := map[string]string{
		strings.TrimSuffix(rpcapi.PathPrefix, "/"): "rpcapi.PathPrefix",
		rpcapi.ContentType:                         "rpcapi.ContentType",
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "rpcapi", "testdata", ".git", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if what, ok := forbidden[v]; ok {
				t.Errorf("%s: the string %q spells %s: call through the rpcapi descriptor", fset.Position(lit.Pos()), v, what)
			}
			for w, name := range wire {
				if strings.Contains(v, w) {
					t.Errorf("%s: the string %q repeats %s: use it", fset.Position(lit.Pos()), v, name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
