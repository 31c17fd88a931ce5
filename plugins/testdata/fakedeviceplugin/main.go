// Command fakedeviceplugin is devices/fake served as an external device
// plugin, for the tests of the device plugin transport.
package main

import (
	"log/slog"
	"os"

	"github.com/drover-io/drover/devices/fake"
	"github.com/drover-io/drover/plugins"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	plugins.ServeDevice(fake.New(logger), logger)
}
