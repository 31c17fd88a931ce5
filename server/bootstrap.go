package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/raft"
	"github.com/hashicorp/serf/serf"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// clusterStatusTimeout bounds one server's answer to ClusterStatus.
const clusterStatusTimeout = 3 * time.Second

// maybeBootstrap forms the cluster once BootstrapExpect servers (this one
// included) are alive in the gossip pool, every one of them expects that
// many, and none of them belongs to a cluster yet: each of them writes the
// same configuration (the servers sorted by ID), so that they elect a
// leader together. A server that finds an existing cluster waits for its
// leader to add it instead. A mismatch of bootstrap_expect is logged and
// nothing is formed.
func (s *Server) maybeBootstrap() {
	expect := s.cluster.cfg.BootstrapExpect
	if expect < 1 {
		return // joins an existing cluster only
	}
	var servers []*serverMember
	for _, m := range s.members() {
		if m.Status != serf.StatusAlive {
			continue
		}
		if m.Expect != 0 && m.Expect != expect {
			s.logger.Error("servers disagree on bootstrap_expect: not bootstrapping; set the same value on every server",
				"server", m.Name, "its_bootstrap_expect", m.Expect, "bootstrap_expect", expect)
			return
		}
		if m.Expect != 0 {
			servers = append(servers, m)
		}
	}
	if len(servers) < expect {
		s.logger.Debug("waiting for servers to bootstrap the cluster", "found", len(servers), "bootstrap_expect", expect)
		return
	}
	for _, m := range servers {
		if m.ID == string(s.raftID()) {
			continue
		}
		st, err := s.statusOf(m.RPCAddr)
		if err != nil {
			s.logger.Warn("cannot ask a server how it stands before bootstrapping; will try again", "server", m.Name, "error", err)
			return
		}
		if st.ClusterID != "" || len(st.Voters) > 0 || st.HasState {
			s.logger.Info("a cluster exists already: waiting for its leader to add this server", "server", m.Name, "cluster_id", st.ClusterID)
			s.cluster.bootstrapped.Store(true)
			return
		}
	}
	slices.SortFunc(servers, func(a, b *serverMember) int { return strings.Compare(a.ID, b.ID) })
	var conf raft.Configuration
	var names []string
	for _, m := range servers {
		conf.Servers = append(conf.Servers, raft.Server{
			Suffrage: raft.Voter, ID: raft.ServerID(m.ID), Address: raft.ServerAddress(m.RPCAddr),
		})
		names = append(names, m.Name)
	}
	if err := s.raft.BootstrapCluster(conf).Error(); err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
		s.logger.Error("bootstrap the cluster", "error", err)
		return
	}
	s.cluster.bootstrapped.Store(true)
	s.logger.Info("bootstrapped the cluster", "servers", strings.Join(names, ", "))
}

// AwaitingJoin reports whether the server waits to be joined to a
// cluster: bootstrap_expect = 0 (it never bootstraps one), and no leader
// has added it to raft yet.
func (s *Server) AwaitingJoin() bool {
	return s.cluster != nil && s.cluster.cfg.BootstrapExpect == 0 && len(s.voters()) == 0
}

// logAwaitingJoin says, once at start, that the server waits to be
// joined to a cluster and how to join it: a server with bootstrap_expect
// = 0 (Nomad's meaning) never elects itself, which would otherwise
// surprise whoever meant to run a single server.
func (s *Server) logAwaitingJoin() {
	if !s.AwaitingJoin() {
		return
	}
	cc := s.cluster.cfg
	joins := append(slices.Clone(cc.StartJoin), cc.RetryJoin...)
	if len(joins) > 0 {
		s.logger.Info("waiting to be joined to a cluster: bootstrap_expect = 0, so this server bootstraps none; "+
			"its leader adds this server once server_join reaches one of its servers",
			"server_join", strings.Join(joins, ", "), "serf_addr", s.SerfAddr())
		return
	}
	s.logger.Warn("waiting to be joined to a cluster: bootstrap_expect = 0 and no server_join, so this server bootstraps none "+
		"and elects no leader until it is joined (drover server join <serf address> on it or on a server of the cluster, "+
		"or server_join.retry_join); set bootstrap_expect = 1 to run a single server",
		"serf_addr", s.SerfAddr())
}

// statusOf asks the server at addr how it stands.
func (s *Server) statusOf(addr string) (*structs.ClusterStatusResponse, error) {
	ctx, cancel := context.WithTimeout(s.ctx, clusterStatusTimeout)
	defer cancel()
	resp, err := rpcapi.ClusterStatus.Call(ctx, serverConn{wire: s.cluster.wire, addr: addr}, &structs.ClusterStatusRequest{})
	if err != nil {
		return nil, fmt.Errorf("ask %s: %w", addr, err)
	}
	return resp, nil
}

// ClusterStatus implements rpcapi.ClusterStatus: how this server stands.
func (s *Server) ClusterStatus(_ context.Context, _ *structs.ClusterStatusRequest) (*structs.ClusterStatusResponse, error) {
	out := &structs.ClusterStatusResponse{
		ServerID: string(s.raftID()), Name: s.config.NodeName, ClusterID: s.clusterID(),
		Voters: s.voters(), Leader: s.Leader(), HasState: s.raft.LastIndex() > 0,
	}
	if s.config.Cluster != nil {
		out.BootstrapExpect = s.config.Cluster.BootstrapExpect
		out.Build = s.config.Cluster.Version
	}
	out.LastIndex, out.LastTerm = s.lastLog()
	out.LastContact = s.lastContact()
	s.setMeta(&out.QueryMeta)
	return out, nil
}
