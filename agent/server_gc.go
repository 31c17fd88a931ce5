package agent

import "time"

// DefaultHeartbeatGrace is the default of server.heartbeat_grace (as
// Nomad's).
const DefaultHeartbeatGrace = 10 * time.Second

// defaultServerConfig returns the server block's defaults that differ from
// zero.
func defaultServerConfig() ServerConfig {
	return ServerConfig{HeartbeatGrace: DefaultHeartbeatGrace}
}
