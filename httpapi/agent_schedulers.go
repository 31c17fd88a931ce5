package httpapi

import (
	"net/http"

	"github.com/drover-io/drover/structs"
)

// SchedulerWorkerConfigurer is what /v1/agent/schedulers/config needs of
// the agent; an Agent that runs a server implements it.
type SchedulerWorkerConfigurer interface {
	// SchedulerWorkerConfig returns the server's worker configuration;
	// ok is false when the agent runs no server.
	SchedulerWorkerConfig() (cfg structs.SchedulerWorkerConfig, ok bool)
	// SetSchedulerWorkerConfig resizes the server's workers and sets the
	// schedulers they run; a bad configuration is KindInvalid.
	SetSchedulerWorkerConfig(structs.SchedulerWorkerConfig) (structs.SchedulerWorkerConfig, error)
}

// schedulerWorkerConfigView is the body of both methods' answers, as
// Nomad's AgentSchedulerWorkerConfigResponse.
type schedulerWorkerConfigView struct {
	ServerID          string   `json:"server_id"`
	NumSchedulers     int      `json:"num_schedulers"`
	EnabledSchedulers []string `json:"enabled_schedulers"`
}

// errNoWorkers refuses the worker configuration on an agent without a
// server.
var errNoWorkers = structs.Invalid("this agent runs no server, hence no scheduler workers: ask a server agent's /v1/agent/schedulers/config")

// agentSchedulerConfig is GET /v1/agent/schedulers/config: the number of
// the agent's server's scheduler workers and the schedulers they run.
func (s *Server) agentSchedulerConfig(_ http.ResponseWriter, _ *http.Request) (any, error) {
	c, ok := s.agent.(SchedulerWorkerConfigurer)
	if !ok {
		return nil, errNoWorkers
	}
	cfg, ok := c.SchedulerWorkerConfig()
	if !ok {
		return nil, errNoWorkers
	}
	return s.workerConfigView(cfg), nil
}

// agentSetSchedulerConfig is PUT|POST /v1/agent/schedulers/config
// {"num_schedulers", "enabled_schedulers"}: the agent's server runs that
// many workers of those schedulers from now on (until it restarts).
func (s *Server) agentSetSchedulerConfig(_ http.ResponseWriter, req *http.Request) (any, error) {
	c, ok := s.agent.(SchedulerWorkerConfigurer)
	if !ok {
		return nil, errNoWorkers
	}
	var body structs.SchedulerWorkerConfig
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	cfg, err := c.SetSchedulerWorkerConfig(body)
	if structs.KindOf(err) == structs.KindInvalid {
		// Nomad's API clients match this exact body; the reason goes to
		// the agent's log (docs/agent-config.md, num_schedulers, says what is valid).
		s.logger.Warn("scheduler worker configuration refused", "error", err)
		return nil, structs.Invalid("Invalid request")
	}
	if err != nil {
		return nil, err
	}
	return s.workerConfigView(cfg), nil
}

func (s *Server) workerConfigView(cfg structs.SchedulerWorkerConfig) schedulerWorkerConfigView {
	id := ""
	if r, ok := s.agent.(SchedulerWorkerReporter); ok {
		if info := r.SchedulerWorkers(); info != nil {
			id = info.ServerID
		}
	}
	return schedulerWorkerConfigView{ServerID: id, NumSchedulers: cfg.NumSchedulers, EnabledSchedulers: nonNil(cfg.EnabledSchedulers)}
}
