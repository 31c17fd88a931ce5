package server

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/raft"
	"github.com/hashicorp/serf/serf"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// The leader keeps raft's configuration in line with serf's members
// (reconcileMembers): a server alive in serf is a voter at the RPC address
// it gossips now, a server that left is removed. Autopilot
// (pruneDeadServers) removes dead servers, when its configuration says so
// (CleanupDeadServers, Nomad's default): servers serf marked failed, and
// servers serf no longer knows at all after a grace period, as long as
// fewer than half of the voters are dead and MinQuorum voters remain.

// absentGraceFactor times ServerStabilizationTime is how long a voter may
// be unknown to serf before autopilot removes it: a whole cluster that
// restarts needs a moment to find each other again.
const absentGraceFactor = 3

// raftChangeTimeout bounds one change of the raft configuration.
const raftChangeTimeout = 10 * time.Second

// autopilotConfig returns the autopilot configuration in force.
func (s *Server) autopilotConfig() *structs.AutopilotConfig {
	cfg, err := s.fsm.State().AutopilotConfig(nil)
	if err != nil || cfg == nil {
		return s.defaultAutopilot()
	}
	return cfg
}

// defaultAutopilot is the configuration in force until one is set.
func (s *Server) defaultAutopilot() *structs.AutopilotConfig {
	if s.config.Autopilot != nil {
		c := *s.config.Autopilot
		return &c
	}
	return structs.DefaultAutopilotConfig()
}

// reconcileMembers adds the alive servers to raft (or updates their
// address) and removes those that left.
func (s *Server) reconcileMembers() {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		s.logger.Error("read the raft configuration", "error", err)
		return
	}
	conf := f.Configuration()
	inRaft := map[raft.ServerID]raft.Server{}
	for _, srv := range conf.Servers {
		inRaft[srv.ID] = srv
	}
	ours := s.clusterID()
	for _, m := range s.members() {
		id := raft.ServerID(m.ID)
		cur, ok := inRaft[id]
		switch m.Status {
		case serf.StatusAlive:
			if ours != "" && m.ClusterID != "" && m.ClusterID != ours {
				s.logger.Error("not adding a server of another cluster to raft", "server", m.Name, "its_cluster_id", m.ClusterID, "cluster_id", ours)
				continue
			}
			if ok && string(cur.Address) == m.RPCAddr {
				continue
			}
			if !ok {
				if err := s.checkJoiner(m, inRaft); err != nil {
					s.logger.Error("not adding a server to raft", "server", m.Name, "address", m.RPCAddr, "error", err)
					continue
				}
			}
			// Another server at this address (one that lost its data_dir
			// and came back under a new ID) leaves first.
			for _, srv := range conf.Servers {
				if string(srv.Address) == m.RPCAddr && srv.ID != id && srv.ID != s.raftID() {
					s.removePeer(srv.ID, "its address now belongs to server "+m.Name)
				}
			}
			if err := s.raft.AddVoter(id, raft.ServerAddress(m.RPCAddr), 0, raftChangeTimeout).Error(); err != nil {
				s.logger.Error("add a server to raft", "server", m.Name, "address", m.RPCAddr, "error", err)
				continue
			}
			if ok {
				s.logger.Info("updated a server's raft address", "server", m.Name, "from", cur.Address, "to", m.RPCAddr)
			} else {
				s.logger.Info("added a server to raft", "server", m.Name, "address", m.RPCAddr, "server_id", m.ID)
			}
		case serf.StatusLeft:
			if ok && id != s.raftID() {
				s.removePeer(id, "server "+m.Name+" left the cluster")
			}
		}
	}
}

// removeReaped removes from raft the servers serf erased from its members
// (force-leave -prune, or reaped after failing or leaving long ago), as
// Nomad's leader does: serf no longer knows them, so reconcileMembers
// would not see them leave. One that is alive again in serf (it rejoined
// since) stays.
func (s *Server) removeReaped(reaped map[string]string) {
	if len(reaped) == 0 {
		return
	}
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		s.logger.Error("read the raft configuration", "error", err)
		return
	}
	alive := map[string]bool{}
	for _, m := range s.members() {
		alive[m.ID] = m.Status == serf.StatusAlive
	}
	for _, srv := range f.Configuration().Servers {
		name, ok := reaped[string(srv.ID)]
		if !ok || srv.ID == s.raftID() || alive[string(srv.ID)] {
			continue
		}
		s.removePeer(srv.ID, "serf forgot server "+name+" (force-leave -prune, or reaped)")
	}
}

// checkJoiner asks a server about to be added to raft how it stands, and
// refuses one whose raft state belongs to another cluster: adding it
// would have raft overwrite that state with this cluster's.
func (s *Server) checkJoiner(m *serverMember, inRaft map[raft.ServerID]raft.Server) error {
	st, err := s.statusOf(m.RPCAddr)
	if err != nil {
		return err
	}
	ours := s.clusterID()
	if st.ClusterID != "" && ours != "" && st.ClusterID != ours {
		return fmt.Errorf("its state belongs to cluster %s, not to this cluster %s: give it an empty data_dir to join", st.ClusterID, ours)
	}
	if st.ClusterID == "" && st.HasState {
		for _, v := range st.Voters {
			if _, known := inRaft[raft.ServerID(v)]; !known && v != m.ID {
				return fmt.Errorf("its raft state names voters this cluster does not have (%s): give it an empty data_dir to join", v)
			}
		}
	}
	return nil
}

// removePeer removes a server from raft, logging why.
func (s *Server) removePeer(id raft.ServerID, why string) {
	if err := s.raft.RemoveServer(id, 0, raftChangeTimeout).Error(); err != nil {
		s.logger.Error("remove a server from raft", "server_id", id, "reason", why, "error", err)
		return
	}
	s.logger.Info("removed a server from raft", "server_id", id, "reason", why)
}

// pruneDeadServers removes dead voters (autopilot's dead-server cleanup).
func (s *Server) pruneDeadServers() {
	cfg := s.autopilotConfig()
	c := s.cluster
	if !cfg.CleanupDeadServers {
		clear(c.absent)
		return
	}
	f := s.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	byID := map[string]*serverMember{}
	for _, m := range s.members() {
		byID[m.ID] = m
	}
	now := s.clock.Now()
	grace := absentGraceFactor * cfg.ServerStabilizationTime
	voters := 0
	var dead []raft.ServerID
	for _, srv := range f.Configuration().Servers {
		if srv.Suffrage != raft.Voter {
			continue
		}
		voters++
		if srv.ID == s.raftID() {
			continue
		}
		m, ok := byID[string(srv.ID)]
		switch {
		case ok && (m.Status == serf.StatusFailed || m.Status == serf.StatusLeft):
			dead = append(dead, srv.ID)
		case ok:
			delete(c.absent, string(srv.ID))
		default:
			since, seen := c.absent[string(srv.ID)]
			if !seen {
				c.absent[string(srv.ID)] = now
			} else if now.Sub(since) >= grace {
				dead = append(dead, srv.ID)
			}
		}
	}
	if len(dead) == 0 {
		return
	}
	remaining := voters - len(dead)
	if 2*len(dead) >= voters {
		s.logger.Warn("autopilot: too many servers are dead to remove them safely", "dead", len(dead), "voters", voters)
		return
	}
	if remaining < int(cfg.MinQuorum) {
		s.logger.Warn("autopilot: removing the dead servers would leave fewer voters than min_quorum", "dead", len(dead),
			"voters", voters, "min_quorum", cfg.MinQuorum)
		return
	}
	for _, id := range dead {
		s.removePeer(id, "autopilot: the server is dead (cleanup_dead_servers)")
		delete(c.absent, string(id))
	}
}

// lastLog returns the index and term of the last raft log entry.
func (s *Server) lastLog() (uint64, uint64) {
	st := s.raft.Stats()
	term, _ := strconv.ParseUint(st["last_log_term"], 10, 64)
	return s.raft.LastIndex(), term
}

// healthTracker remembers since when each server is healthy.
type healthTracker struct {
	mu    sync.Mutex // guards since
	since map[string]time.Time
}

// stableSince records a server's health and returns since when it is
// healthy (zero when it is not).
func (h *healthTracker) stableSince(id string, healthy bool, now time.Time) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !healthy {
		delete(h.since, id)
		return time.Time{}
	}
	t, ok := h.since[id]
	if !ok {
		h.since[id] = now
		t = now
	}
	return t
}

// AutopilotGetConfig implements rpcapi.AutopilotGetConfig.
func (s *Server) AutopilotGetConfig(ctx context.Context, req *structs.AutopilotConfigRequest) (*structs.AutopilotConfigResponse, error) {
	resp := &structs.AutopilotConfigResponse{}
	err := s.blockingQuery(ctx, &req.QueryOptions, &resp.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		cfg, err := st.AutopilotConfig(ws)
		if err != nil {
			return 0, err
		}
		if cfg == nil {
			cfg = s.defaultAutopilot()
		}
		resp.Config = cfg
		return st.Index(state.TableAutopilotConf), nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// AutopilotSetConfig implements rpcapi.AutopilotSetConfig.
func (s *Server) AutopilotSetConfig(ctx context.Context, req *structs.AutopilotSetConfigRequest) (*structs.AutopilotSetConfigResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r, ok, err := replayed(s, req.RequestID, completeAutopilotSetConfig); ok || err != nil {
		return r, err
	}
	c := req.Config
	if c.LastContactThreshold < 0 || c.ServerStabilizationTime < 0 {
		return nil, structs.Invalid("autopilot last_contact_threshold and server_stabilization_time must not be negative")
	}
	return applyWrite(s, req.RequestID, AutopilotConfigRequestType, &AutopilotConfigCommand{Config: c, CAS: req.CAS},
		&structs.AutopilotSetConfigResponse{}, completeAutopilotSetConfig)
}

func completeAutopilotSetConfig(r *structs.AutopilotSetConfigResponse, index uint64, result any) {
	r.Index = index
	r.Updated, _ = result.(bool)
}

// AutopilotHealth implements rpcapi.AutopilotHealth: every raft server's
// health, as the leader sees it (asking each how it stands).
func (s *Server) AutopilotHealth(ctx context.Context, _ *structs.AutopilotHealthRequest) (*structs.AutopilotHealthResponse, error) {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, structs.NewError(structs.KindUnavailable, "read the raft configuration: %v", err)
	}
	cfg := s.autopilotConfig()
	byID := map[string]*serverMember{}
	for _, m := range s.members() {
		byID[m.ID] = m
	}
	_, leaderID := s.raft.LeaderWithID()
	leaderIndex, leaderTerm := s.lastLog()
	servers := f.Configuration().Servers
	out := &structs.AutopilotHealthResponse{Healthy: true, Servers: make([]*structs.ServerHealth, len(servers))}
	var wg sync.WaitGroup
	for i, srv := range servers {
		h := &structs.ServerHealth{
			ID: string(srv.ID), Name: "(unknown)", Address: s.rpcAddrOf(srv.ID, srv.Address),
			SerfStatus: "none", Leader: srv.ID == leaderID, Voter: srv.Suffrage == raft.Voter,
		}
		out.Servers[i] = h
		if m, ok := byID[string(srv.ID)]; ok {
			h.Name, h.SerfStatus, h.Version = m.Name, m.Status.String(), m.Build
		}
		if srv.ID == s.raftID() {
			h.LastIndex, h.LastTerm, h.LastContact = leaderIndex, leaderTerm, s.lastContact()
			if s.config.Cluster != nil {
				h.Version = s.config.Cluster.Version
			}
			if h.Name == "(unknown)" {
				h.Name, h.SerfStatus = s.config.NodeName, serf.StatusAlive.String()
			}
			continue
		}
		if s.cluster == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := s.statusOf(h.Address)
			if err != nil {
				h.LastContact = -1
				return
			}
			h.LastIndex, h.LastTerm, h.LastContact = st.LastIndex, st.LastTerm, st.LastContact
		}()
	}
	wg.Wait()
	now := s.clock.Now()
	healthyVoters, voters := 0, 0
	for _, h := range out.Servers {
		h.Healthy = h.SerfStatus == serf.StatusAlive.String() && h.LastContact >= 0 &&
			(h.Leader || h.LastContact <= cfg.LastContactThreshold) &&
			h.LastTerm == leaderTerm && leaderIndex <= h.LastIndex+cfg.MaxTrailingLogs
		h.StableSince = s.health.stableSince(h.ID, h.Healthy, now)
		if h.Leader {
			out.Leader = h.ID
		}
		if h.Voter {
			voters++
			out.Voters = append(out.Voters, h.ID)
			if h.Healthy {
				healthyVoters++
			}
		}
		out.Healthy = out.Healthy && h.Healthy
	}
	out.FailureTolerance = max(healthyVoters-(voters/2+1), 0)
	s.setMeta(&out.QueryMeta)
	return out, nil
}
