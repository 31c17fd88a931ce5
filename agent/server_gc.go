package agent

import (
	"time"

	"github.com/drover-io/drover/server"
)

// DefaultHeartbeatGrace is the default of server.heartbeat_grace (as
// Nomad's).
const DefaultHeartbeatGrace = 10 * time.Second

// defaultServerConfig returns the server block's defaults that differ from
// zero.
func defaultServerConfig() ServerConfig {
	return ServerConfig{HeartbeatGrace: DefaultHeartbeatGrace}
}

// ServerGCConfig is the servers' garbage collection settings of the
// server block; zero values use the server's defaults (Nomad's: 5m, 4h,
// 1h, 24h, 1h, 24h).
type ServerGCConfig struct {
	JobGCInterval         time.Duration
	JobGCThreshold        time.Duration
	EvalGCThreshold       time.Duration
	BatchEvalGCThreshold  time.Duration
	DeploymentGCThreshold time.Duration
	NodeGCThreshold       time.Duration
}

func (g *ServerGCConfig) merge(s *serverBlock) {
	setVal(&g.JobGCInterval, s.JobGCInterval)
	setVal(&g.JobGCThreshold, s.JobGCThreshold)
	setVal(&g.EvalGCThreshold, s.EvalGCThreshold)
	setVal(&g.BatchEvalGCThreshold, s.BatchEvalGCThreshold)
	setVal(&g.DeploymentGCThreshold, s.DeploymentGCThreshold)
	setVal(&g.NodeGCThreshold, s.NodeGCThreshold)
}

// serverGC returns the server's form of g.
func (g ServerGCConfig) serverGC() server.GCConfig {
	return server.GCConfig{
		Interval: g.JobGCInterval, JobThreshold: g.JobGCThreshold, EvalThreshold: g.EvalGCThreshold,
		BatchEvalThreshold: g.BatchEvalGCThreshold, DeploymentThreshold: g.DeploymentGCThreshold,
		NodeThreshold: g.NodeGCThreshold,
	}
}
