package plugins

import (
	"github.com/hashicorp/go-plugin"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/grpcdriver"
)

// The handshake a plugin binary and the agent must agree on before talking:
// the agent sets MagicCookieKey=MagicCookieValue in the plugin's
// environment, so a binary run by hand (not by the agent) refuses to start.
const (
	MagicCookieKey   = "DROVER_PLUGIN_MAGIC_COOKIE"
	MagicCookieValue = "9e3c5b1f0a7d4e2c8b6f1d3a5c7e9b0d"
	// ProtocolVersion is the version of the plugin protocol; it changes
	// only with incompatible changes to plugins/drivers/proto.
	ProtocolVersion = 1
)

func handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  ProtocolVersion,
		MagicCookieKey:   MagicCookieKey,
		MagicCookieValue: MagicCookieValue,
	}
}

// pluginSet is the plugin set of a driver plugin process; impl is nil on
// the agent's side.
func pluginSet(impl drivers.DriverPlugin) plugin.PluginSet {
	return plugin.PluginSet{grpcdriver.PluginName: &grpcdriver.Plugin{Impl: impl}}
}
