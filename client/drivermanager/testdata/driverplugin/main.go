// Command driverplugin is a driver plugin binary for the driver manager's
// tests: installed as "raw_exec" it serves drivers/rawexec (whose tasks
// run under shims, this binary re-executed, and outlive the plugin),
// under any other name it serves drivers/mock.
package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/drivers/rawexec"
	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/plugins"
)

func main() {
	if code, ok := shim.RunIfShim(os.Args[1:]); ok {
		os.Exit(code)
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if filepath.Base(os.Args[0]) != rawexec.Name {
		plugins.Serve(mock.New(logger), logger)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	plugins.Serve(rawexec.New(logger, rawexec.WithShimCommand(exe, []string{shim.Subcommand})), logger)
}
