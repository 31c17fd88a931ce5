// Command drover-shim runs task shims (and the isolation init stage) for
// the drover agent: the same code as `drover shim` and `drover
// isolation-init`, linked without the rest of drover so that each of the
// node's many idle shims is small. The agent uses it when it lies beside
// the drover binary and was built from the same source (shim.Command);
// otherwise it runs the drover binary itself. See docs/decisions.md.
package main

import (
	"fmt"
	"os"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/drivers/shared/shim"
)

func main() {
	if code, ok := isolation.RunIfInit(os.Args[1:]); ok {
		os.Exit(code)
	}
	if code, ok := shim.RunIfShim(os.Args[1:]); ok {
		os.Exit(code)
	}
	fmt.Fprintf(os.Stderr, "%s runs task shims for the drover agent, which starts it (`%s %s -identity` prints what it was built as)\n", shim.Binary, shim.Binary, shim.Subcommand)
	os.Exit(2)
}
