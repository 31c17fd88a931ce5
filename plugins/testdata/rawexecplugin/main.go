// Command rawexecplugin is drivers/rawexec served as an external driver
// plugin, for the tests of a plugin's crash and restart: its tasks run
// under shims (this binary re-executed) that outlive the plugin.
package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/drover-io/drover/drivers/rawexec"
	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/plugins"
)

func main() {
	if code, ok := shim.RunIfShim(os.Args[1:]); ok {
		os.Exit(code)
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	plugins.Serve(rawexec.New(logger, rawexec.WithShimCommand(exe, []string{shim.Subcommand})), logger)
}
