package plugins

import (
	"log/slog"
	"os/signal"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/drover-io/drover/plugins/drivers"
)

// Serve serves driver d as a plugin process until the agent kills it; it is
// the whole main of a plugin binary. If d also implements base.BasePlugin
// and drivers.EventsPlugin, those are served too.
//
// The plugin outlives the agent that launched it (a restarted agent
// re-attaches), so Serve makes writes to a closed stdout or stderr fail
// instead of killing the process. Run by hand, the binary says it is a
// plugin and exits 1.
func Serve(d drivers.DriverPlugin, logger *slog.Logger) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	signal.Ignore(syscall.SIGPIPE)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: handshake(),
		Plugins:         pluginSet(d),
		GRPCServer:      plugin.DefaultGRPCServer,
		Logger: hclog.New(&hclog.LoggerOptions{
			Name:       "plugin",
			Level:      hclog.Warn,
			Output:     &slogWriter{logger: logger},
			JSONFormat: true,
		}),
	})
}
