package httpapi

import (
	"context"
	"net/http"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

// AgentSelf is the body of GET /v1/agent/self, in Nomad's shape.
type AgentSelf struct {
	Config map[string]any               `json:"config"`
	Member AgentMember                  `json:"member"`
	Stats  map[string]map[string]string `json:"stats"`
}

// AgentMember describes this agent as a cluster member.
type AgentMember struct {
	Name   string
	Addr   string
	Port   uint16
	Tags   map[string]string
	Status string
}

// AgentHealthResponse is the body of GET /v1/agent/health.
type AgentHealthResponse struct {
	Client *AgentHealth `json:"client,omitempty"`
	Server *AgentHealth `json:"server,omitempty"`
}

// AgentHealth is the health of the client or the server half.
type AgentHealth struct {
	Ok      bool   `json:"ok"`
	Message string `json:"message"`
}

// statusLeader is GET /v1/status/leader: the leader's RPC address as a
// JSON string.
func (s *Server) statusLeader(_ http.ResponseWriter, _ *http.Request) (any, error) {
	return s.agent.Leader(), nil
}

// statusPeers is GET /v1/status/peers: the servers' RPC addresses.
func (s *Server) statusPeers(_ http.ResponseWriter, _ *http.Request) (any, error) {
	return nonNil(s.agent.Peers()), nil
}

// RegionLister is what GET /v1/regions needs of an agent that knows of
// regions besides its own; an Agent without it lists its own region.
type RegionLister interface {
	// Regions returns the regions whose servers the agent's servers
	// gossip with, its own included, sorted.
	Regions(ctx context.Context) ([]string, error)
}

// regions is GET /v1/regions: the agent's region and the regions of the
// servers its servers gossip with (servers of several regions joined into
// one gossip pool, as Nomad's API suite does). Requests are not forwarded
// between regions (docs/cluster.md, Regions).
func (s *Server) regions(_ http.ResponseWriter, req *http.Request) (any, error) {
	if l, ok := s.agent.(RegionLister); ok {
		return l.Regions(req.Context())
	}
	return []string{s.agent.Region()}, nil
}

// agentSelf is GET /v1/agent/self.
func (s *Server) agentSelf(_ http.ResponseWriter, _ *http.Request) (any, error) {
	return s.agent.Self(), nil
}

// SchedulerWorkerReporter is what GET /v1/agent/schedulers needs of the
// agent; an Agent that runs a server implements it.
type SchedulerWorkerReporter interface {
	// SchedulerWorkers returns the server's scheduler workers, nil when
	// the agent runs no server.
	SchedulerWorkers() *structs.SchedulerWorkersInfo
}

// agentSchedulers is GET /v1/agent/schedulers: the scheduler workers of
// the agent's server and what each does now.
func (s *Server) agentSchedulers(_ http.ResponseWriter, _ *http.Request) (any, error) {
	var info *structs.SchedulerWorkersInfo
	if r, ok := s.agent.(SchedulerWorkerReporter); ok {
		info = r.SchedulerWorkers()
	}
	if info == nil {
		return nil, structs.Invalid("this agent runs no server, hence no scheduler workers: ask a server agent's /v1/agent/schedulers")
	}
	return info, nil
}

// agentHealth is GET /v1/agent/health: 200 when healthy, 500 otherwise,
// with the same JSON body either way (as Nomad does).
func (s *Server) agentHealth(w http.ResponseWriter, req *http.Request) (any, error) {
	h, ok := s.agent.Health()
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
	}
	return h, nil
}

// jobsParse is GET|PUT|POST /v1/jobs/parse: a job file (JobsParseRequest)
// in, the submitted form of the job (api.Job) out. Parse errors are 400s
// that name the file position.
func (s *Server) jobsParse(_ http.ResponseWriter, req *http.Request) (any, error) {
	var body api.JobsParseRequest
	if err := decodeBody(req, &body); err != nil {
		return nil, err
	}
	if body.JobHCL == "" {
		return nil, structs.Invalid("JobHCL is empty: send the job file's text")
	}
	if body.HCLv1 {
		return nil, structs.Invalid("HCLv1 job files are not supported: use HCL2")
	}
	job, err := s.parse(&body)
	if err != nil {
		if k := structs.KindOf(err); k != structs.KindInternal && k != structs.KindInvalid {
			return nil, err
		}
		return nil, structs.Invalid("%v", err)
	}
	if body.Canonicalize {
		canonicalizeParsed(job)
	}
	return job, nil
}

// canonicalizeParsed fills a parsed job's job-level defaults, as Nomad's
// parse with Canonicalize does (namespace, region, type, priority, name);
// its groups' defaults are filled when it is registered.
func canonicalizeParsed(job *api.Job) {
	str := func(p **string, v string) {
		if *p == nil {
			*p = api.String(v)
		}
	}
	str(&job.Namespace, structs.DefaultNamespace)
	str(&job.Region, "global")
	str(&job.Type, structs.JobTypeService)
	if job.ID != nil {
		str(&job.Name, *job.ID)
	}
	if job.Priority == nil {
		p := structs.JobDefaultPriority
		job.Priority = &p
	}
	for _, b := range []**bool{&job.AllAtOnce, &job.Stop, &job.Stable} {
		if *b == nil {
			f := false
			*b = &f
		}
	}
}
