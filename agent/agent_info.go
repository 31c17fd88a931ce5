package agent

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/drover-io/drover/httpapi"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// agentInfo is what the HTTP API reports about the agent (httpapi.Agent).
type agentInfo struct{ a *Agent }

var _ httpapi.Agent = agentInfo{}

// Self implements httpapi.Agent: GET /v1/agent/self.
func (i agentInfo) Self() *httpapi.AgentSelf {
	a := i.a
	httpAddr := a.HTTPAddr()
	host, port, _ := net.SplitHostPort(httpAddr)
	httpPort, _ := strconv.Atoi(port)
	rpcHost, rpcPortStr, _ := net.SplitHostPort(a.RPCAddr())
	rpcPort, _ := strconv.Atoi(rpcPortStr)
	cfg := map[string]any{
		"Region":     a.cfg.Region,
		"Datacenter": a.cfg.Datacenter,
		"NodeName":   a.cfg.NodeName,
		"DataDir":    a.cfg.DataDir,
		"BindAddr":   a.cfg.BindAddr,
		"LogLevel":   a.cfg.LogLevel,
		"DevMode":    a.cfg.DevMode,
		"Version":    map[string]any{"Version": Version, "VersionPrerelease": "", "Revision": ""},
		"PluginDir":  a.cfg.PluginDir,
		"Ports":      map[string]any{"HTTP": httpPort, "RPC": rpcPort},
		"Addresses":  map[string]any{"HTTP": host, "RPC": rpcHost},
		"Server":     map[string]any{"Enabled": a.ServerEnabled(), "BootstrapExpect": a.cfg.Server.BootstrapExpect},
		"Client": map[string]any{"Enabled": a.ClientEnabled(), "NodeID": a.NodeID(), "AllocDir": a.allocDir,
			"Servers": a.cfg.Client.Servers, "NodeClass": a.cfg.Client.NodeClass, "Meta": a.cfg.Client.Meta},
	}
	stats := map[string]map[string]string{
		"runtime": {
			"version":    runtime.Version(),
			"arch":       runtime.GOARCH,
			"goos":       runtime.GOOS,
			"goroutines": strconv.Itoa(runtime.NumGoroutine()),
			"cpu_count":  strconv.Itoa(runtime.NumCPU()),
		},
	}
	if a.server != nil {
		stats["nomad"] = withDefault(a.server.Stats(), map[string]string{"server": "true"})
	}
	if a.client != nil {
		stats["client"] = withDefault(a.client.Stats(), map[string]string{"node_id": a.NodeID()})
	}
	return &httpapi.AgentSelf{
		Config: cfg,
		Member: httpapi.AgentMember{
			Name: a.cfg.NodeName + "." + a.cfg.Region,
			Addr: firstNonEmpty(rpcHost, a.cfg.BindAddr), // where the others reach it
			Port: uint16(rpcPort),
			Tags: map[string]string{
				"region": a.cfg.Region, "dc": a.cfg.Datacenter, "role": "nomad",
				"build": Version, "port": rpcPortStr,
			},
			Status: "alive",
		},
		Stats: stats,
	}
}

// withDefault returns m with the keys of d that m lacks.
func withDefault(m, d map[string]string) map[string]string {
	out := make(map[string]string, len(m)+len(d))
	for k, v := range d {
		out[k] = v
	}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Leader implements httpapi.Agent: the leader's RPC address, "" when there
// is none. A dev agent is its own single server, so the leader is this
// agent. A client-only agent reports the server it reaches first (the one
// that last answered it).
func (i agentInfo) Leader() string {
	a := i.a
	if a.server == nil && a.rpcClient != nil {
		return a.rpcClient.Servers()[0]
	}
	if a.server == nil {
		return ""
	}
	leader := a.server.Leader()
	if leader == "" || a.cfg.DevMode {
		if leader == "" {
			return ""
		}
		return a.RPCAddr()
	}
	return leader
}

// Peers implements httpapi.Agent: the servers' RPC addresses; for a
// client-only agent, the servers it knows.
func (i agentInfo) Peers() []string {
	a := i.a
	if a.server == nil && a.rpcClient != nil {
		return a.rpcClient.Servers()
	}
	if a.server == nil {
		return []string{}
	}
	if a.cfg.DevMode {
		return []string{a.RPCAddr()}
	}
	return a.server.Peers()
}

// IsServer implements httpapi.Agent.
func (i agentInfo) IsServer() bool { return i.a.server != nil }

// Contact implements httpapi.Agent: a server's view of its leader; for a
// client-only agent, whether its servers answer.
func (i agentInfo) Contact() (bool, time.Duration) {
	a := i.a
	switch {
	case a.server != nil:
		return a.server.KnownLeader(), a.server.LastContact()
	case a.rpcClient != nil:
		return a.rpcClient.Contact()
	}
	return false, 0
}

// Region implements httpapi.Agent.
func (i agentInfo) Region() string { return i.a.cfg.Region }

var _ httpapi.RegionLister = agentInfo{}

// Regions implements httpapi.RegionLister: the regions of the servers in
// the gossip pool of this agent's server, or for a client-only agent of
// the server it reaches (their members carry their region).
func (i agentInfo) Regions(ctx context.Context) ([]string, error) {
	a := i.a
	if a.server != nil {
		return a.server.Regions(), nil
	}
	out := []string{a.cfg.Region}
	if a.rpcClient == nil {
		return out, nil
	}
	resp, err := rpcapi.ServerMembers.Call(ctx, a.rpcClient, &structs.ServerMembersRequest{})
	if err != nil {
		return nil, fmt.Errorf("list the servers' regions: %w", err)
	}
	for _, m := range resp.Members {
		if r := m.Tags["region"]; r != "" && m.Status == "alive" {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Health implements httpapi.Agent: GET /v1/agent/health.
func (i agentInfo) Health() (*httpapi.AgentHealthResponse, bool) {
	a := i.a
	out := &httpapi.AgentHealthResponse{}
	ok := true
	if a.server != nil {
		switch {
		case a.server.Leader() != "":
			out.Server = &httpapi.AgentHealth{Ok: true, Message: "ok"}
		case a.server.AwaitingJoin():
			out.Server = &httpapi.AgentHealth{Ok: false, Message: "server has no leader: it waits to be joined to a cluster " +
				"(bootstrap_expect = 0): join it with drover server join, or set bootstrap_expect = 1 to run a single server"}
			ok = false
		default:
			out.Server = &httpapi.AgentHealth{Ok: false, Message: "server has no leader"}
			ok = false
		}
	}
	if a.client != nil {
		out.Client = &httpapi.AgentHealth{Ok: true, Message: "ok"}
	}
	return out, ok
}

// SchedulerWorkers implements httpapi.SchedulerWorkerReporter: the
// server's scheduler workers, nil on a client-only agent.
func (i agentInfo) SchedulerWorkers() *structs.SchedulerWorkersInfo {
	if i.a.server == nil {
		return nil
	}
	return i.a.server.SchedulerWorkers()
}

// SchedulerWorkerConfig implements httpapi.SchedulerWorkerConfigurer: the
// server's worker configuration; ok false on a client-only agent.
func (i agentInfo) SchedulerWorkerConfig() (cfg structs.SchedulerWorkerConfig, ok bool) {
	if i.a.server == nil {
		return structs.SchedulerWorkerConfig{}, false
	}
	return i.a.server.SchedulerWorkerConfig(), true
}

// SetSchedulerWorkerConfig implements httpapi.SchedulerWorkerConfigurer.
func (i agentInfo) SetSchedulerWorkerConfig(c structs.SchedulerWorkerConfig) (structs.SchedulerWorkerConfig, error) {
	if i.a.server == nil {
		return structs.SchedulerWorkerConfig{}, structs.Invalid("this agent runs no server, hence no scheduler workers: ask a server agent's /v1/agent/schedulers/config")
	}
	return i.a.server.SetSchedulerWorkerConfig(c)
}
