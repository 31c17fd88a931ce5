package server

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/raft"
	"github.com/hashicorp/serf/serf"

	"github.com/drover-io/drover/structs"
)

// ServerJoin implements rpcapi.ServerJoin: this server joins the gossip
// pool of the servers at the given serf addresses.
func (s *Server) ServerJoin(_ context.Context, req *structs.ServerJoinRequest) (*structs.ServerJoinResponse, error) {
	if len(req.Addresses) == 0 {
		return nil, structs.Invalid("no address to join: give the serf addresses of other servers (host:4648)")
	}
	n, err := s.Join(req.Addresses)
	out := &structs.ServerJoinResponse{NumJoined: n}
	if err != nil {
		if structs.KindOf(err) == structs.KindInvalid {
			return nil, err
		}
		out.Error = err.Error()
	}
	return out, nil
}

// ServerForceLeave implements rpcapi.ServerForceLeave: the gossip pool
// marks a failed member as left (with Prune, forgets it at once), and the
// leader removes it from raft. A name that is no member is no error.
func (s *Server) ServerForceLeave(_ context.Context, req *structs.ForceLeaveRequest) (*structs.GenericResponse, error) {
	if req.Node == "" {
		return nil, structs.Invalid("name the member to remove (drover server members lists them)")
	}
	if s.cluster == nil {
		return nil, structs.Invalid("this server runs alone (no serf): there is no member to remove")
	}
	known := false
	for _, m := range s.cluster.serf.Members() {
		known = known || m.Name == req.Node
	}
	if !known {
		// As with Nomad, a name the pool does not know is no error: scripts
		// force-leave a server to make sure it is gone, member or not.
		s.logger.Info("force-leave of a name that is no member: nothing to do", "member", req.Node)
		return &structs.GenericResponse{}, nil
	}
	var err error
	if req.Prune {
		err = s.cluster.serf.RemoveFailedNodePrune(req.Node)
	} else {
		err = s.cluster.serf.RemoveFailedNode(req.Node)
	}
	if err != nil {
		return nil, structs.NewError(structs.KindUnavailable, "force-leave %s: %v", req.Node, err)
	}
	s.wakeCluster()
	return &structs.GenericResponse{}, nil
}

// Regions returns this server's region and those of the alive servers
// of other regions in its gossip pool, sorted. Servers of several regions
// may share a pool (joined through /v1/agent/join, as Nomad's regions
// are); each region stays a cluster of its own (members() keeps to this
// region), and requests are not forwarded between them.
func (s *Server) Regions() []string {
	out := []string{s.config.Region}
	if s.cluster != nil && s.cluster.serf != nil {
		for _, m := range s.cluster.serf.Members() {
			if sm, ok := parseServerMember(&m); ok && sm.Status == serf.StatusAlive && sm.Region != "" {
				out = append(out, sm.Region)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// StatusServers implements rpcapi.StatusServers: the RPC addresses of the
// region's servers alive in serf (the raft voters when there is no serf).
func (s *Server) StatusServers(_ context.Context, _ *structs.StatusServersRequest) (*structs.StatusServersResponse, error) {
	out := &structs.StatusServersResponse{Leader: s.Leader()}
	if s.cluster != nil {
		for _, m := range s.members() {
			if m.Status == serf.StatusAlive {
				out.Servers = append(out.Servers, m.RPCAddr)
			}
		}
	}
	if len(out.Servers) == 0 {
		out.Servers = s.Peers()
	}
	slices.Sort(out.Servers)
	s.setMeta(&out.QueryMeta)
	return out, nil
}

// RaftGetConfiguration implements rpcapi.RaftGetConfiguration.
func (s *Server) RaftGetConfiguration(_ context.Context, _ *structs.RaftConfigurationRequest) (*structs.RaftConfigurationResponse, error) {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, structs.NewError(structs.KindUnavailable, "read the raft configuration: %v", err)
	}
	names := map[string]string{}
	for _, m := range s.members() {
		names[m.ID] = m.Name
	}
	names[string(s.raftID())] = s.config.NodeName
	_, leaderID := s.raft.LeaderWithID()
	out := &structs.RaftConfigurationResponse{Index: f.Index(), Servers: []*structs.RaftServer{}}
	for _, srv := range f.Configuration().Servers {
		name, ok := names[string(srv.ID)]
		if !ok {
			name = "(unknown)"
		}
		out.Servers = append(out.Servers, &structs.RaftServer{
			ID: string(srv.ID), Node: name, Address: s.rpcAddrOf(srv.ID, srv.Address),
			Leader: srv.ID == leaderID, Voter: srv.Suffrage == raft.Voter, RaftProtocol: raftProtocol,
		})
	}
	s.setMeta(&out.QueryMeta)
	return out, nil
}

// RaftRemovePeer implements rpcapi.RaftRemovePeer: it removes a server,
// by raft ID or address, from the raft configuration.
func (s *Server) RaftRemovePeer(_ context.Context, req *structs.RaftPeerRemoveRequest) (*structs.GenericResponse, error) {
	if (req.ID == "") == (req.Address == "") {
		return nil, structs.Invalid("give the server's raft ID or its address, one of them (drover operator raft list-peers lists them)")
	}
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, structs.NewError(structs.KindUnavailable, "read the raft configuration: %v", err)
	}
	for _, srv := range f.Configuration().Servers {
		if (req.ID != "" && string(srv.ID) == req.ID) ||
			(req.Address != "" && (string(srv.Address) == req.Address || s.rpcAddrOf(srv.ID, srv.Address) == req.Address)) {
			if err := s.raft.RemoveServer(srv.ID, 0, raftChangeTimeout).Error(); err != nil {
				return nil, structs.NewError(structs.KindUnavailable, "remove server %s from raft: %v", srv.ID, err)
			}
			s.logger.Info("removed a server from raft", "server_id", srv.ID, "reason", "operator raft remove-peer")
			return &structs.GenericResponse{WriteMeta: structs.WriteMeta{Index: s.raft.LastIndex()}}, nil
		}
	}
	// The text is Nomad's, which its API clients match.
	what := fmt.Sprintf("id %q", req.ID)
	if req.ID == "" {
		what = fmt.Sprintf("address %q", req.Address)
	}
	return nil, structs.NewError(structs.KindNotFound, "%s was not found in the Raft configuration (drover operator raft list-peers lists the servers)", what)
}
