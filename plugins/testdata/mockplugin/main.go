// Command mockplugin is drivers/mock served as an external driver plugin,
// for the tests of the plugin transport.
package main

import (
	"log/slog"
	"os"

	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	logger.Info("mock driver plugin starting", "pid", os.Getpid())
	plugins.Serve(mock.New(logger), logger)
}
