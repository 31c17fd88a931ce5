package server

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/serf/serf"

	"github.com/drover-io/drover/structs"
	"github.com/drover-io/drover/version"
)

// The servers of a cluster find each other, and notice each other fail,
// through serf's gossip on the serf port (4648, TCP and UDP). Each server
// gossips tags that say what it is: the leader adds the servers it learns
// of to raft, and raft reaches each server at the RPC address its tags
// give (raft_transport.go), whatever address the raft configuration
// recorded.
const (
	tagRole    = "role"
	roleServer = "drover-server"
	tagRegion  = "region"
	tagDC      = "dc"
	tagID      = "id"       // the raft server ID
	tagRPCAddr = "rpc_addr" // the advertised RPC address, host:port
	tagPort    = "port"     // the RPC port, as Nomad's members show it
	tagExpect  = "expect"   // bootstrap_expect
	tagBuild   = "build"    // drover's version
	tagCluster = "cluster_id"
	tagRaftVsn = "raft_vsn"
	// raftProtocol is the raft protocol version servers speak (IDs, not
	// addresses, name servers in the configuration).
	raftProtocol = "3"
)

// deadNodeReclaimTime is how long after a server was found dead another
// address may take its name: its own return on a new address. mergeGuard,
// not this delay, keeps a second server from taking a live one's name.
const deadNodeReclaimTime = 2 * time.Second

// serfBroadcastTimeout bounds how long serf waits for a leave, a
// force-leave or a tag change to be gossiped (serf's default is 5 s). A
// server pool is a handful of servers on a LAN, where a message is sent
// its few times well within it. It also sets when force-leave -prune of a
// server not yet found failed forgets it: this plus serf's 1 s
// LeavePropagateDelay (4 s, not 6 s).
const serfBroadcastTimeout = 3 * time.Second

// serverMember is a serf member that is a drover server.
type serverMember struct {
	Name      string
	ID        string
	RPCAddr   string
	Region    string
	DC        string
	Build     string
	ClusterID string
	Expect    int
	Status    serf.MemberStatus
	Addr      net.IP
	Port      uint16
}

// parseServerMember returns the server a serf member is, false when it is
// not a drover server (or its tags are incomplete).
func parseServerMember(m *serf.Member) (*serverMember, bool) {
	if m.Tags[tagRole] != roleServer || m.Tags[tagID] == "" || m.Tags[tagRPCAddr] == "" {
		return nil, false
	}
	expect, _ := strconv.Atoi(m.Tags[tagExpect])
	return &serverMember{
		Name: m.Name, ID: m.Tags[tagID], RPCAddr: m.Tags[tagRPCAddr],
		Region: m.Tags[tagRegion], DC: m.Tags[tagDC], Build: m.Tags[tagBuild],
		ClusterID: m.Tags[tagCluster], Expect: expect, Status: m.Status,
		Addr: m.Addr, Port: m.Port,
	}, true
}

// serfTags returns the tags this server gossips.
func (s *Server) serfTags(clusterID string) map[string]string {
	cc := s.config.Cluster
	_, port, _ := net.SplitHostPort(s.cluster.rpcAdvertise)
	tags := map[string]string{
		tagRole:    roleServer,
		tagRegion:  s.config.Region,
		tagDC:      s.config.Datacenter,
		tagID:      string(s.raftID()),
		tagRPCAddr: s.cluster.rpcAdvertise,
		tagPort:    port,
		tagExpect:  strconv.Itoa(cc.BootstrapExpect),
		tagBuild:   cc.Version,
		tagRaftVsn: raftProtocol,
	}
	if clusterID != "" {
		tags[tagCluster] = clusterID
	}
	return tags
}

// setupSerf creates the serf agent; its events go to s.cluster.events.
func (s *Server) setupSerf() error {
	cc := s.config.Cluster
	conf := serf.DefaultConfig()
	conf.Init()
	conf.NodeName = s.config.NodeName
	id := s.clusterID()
	conf.Tags = s.serfTags(id)
	s.cluster.tagged = id
	conf.EventCh = s.cluster.events
	conf.SnapshotPath = cc.SerfSnapshot
	conf.RejoinAfterLeave = true
	conf.BroadcastTimeout = serfBroadcastTimeout
	conf.Merge = &mergeGuard{s: s}
	// serf's own resolution of a name claimed at two addresses shuts
	// down the side fewer members believe: a server that came back on a
	// new address before its old one was found dead would stop gossiping.
	// mergeGuard refuses a second server under one name instead, and the
	// old address is dropped once found dead (deadNodeReclaimTime).
	conf.EnableNameConflictResolution = false
	logger := log.New(levelLogWriter{logger: s.logger, component: "serf"}, "", 0)
	conf.Logger = logger
	ml := memberlist.DefaultLocalConfig()
	if cc.LANConfig {
		ml = memberlist.DefaultLANConfig()
	}
	host, port, err := splitHostPort(cc.SerfBind, "serf bind address")
	if err != nil {
		return err
	}
	ml.BindAddr, ml.BindPort = host, port
	ml.AdvertiseAddr, ml.AdvertisePort = "", port
	if cc.SerfAdvertise != "" {
		ahost, aport, err := splitHostPort(cc.SerfAdvertise, "serf advertise address")
		if err != nil {
			return err
		}
		ml.AdvertiseAddr, ml.AdvertisePort = ahost, aport
	} else if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		// Binding every interface: advertise the RPC advertise host.
		if rhost, _, err := net.SplitHostPort(s.cluster.rpcAdvertise); err == nil {
			ml.AdvertiseAddr = rhost
		}
	}
	// A server that comes back on a new address takes its name back once
	// its old address was found dead this long ago (memberlist refuses a
	// name at two addresses otherwise, until the dead one is reaped).
	ml.DeadNodeReclaimTime = deadNodeReclaimTime
	ml.Logger = logger
	// With a gossip key every message is encrypted and a member without
	// the key can neither read nor join the pool.
	keyring, err := loadGossipKeyring(serfKeyringFile(cc), cc.GossipKey) // gossip_keyring.go
	if err != nil {
		return err
	}
	if keyring != nil {
		ml.Keyring = keyring
		ml.SecretKey = keyring.GetPrimaryKey()
		s.cluster.gossipKeys = keyring
		conf.KeyringFile = serfKeyringFile(cc)
	}
	conf.MemberlistConfig = ml
	sf, err := serf.Create(conf)
	if err != nil {
		return fmt.Errorf("start serf on %s: %w", cc.SerfBind, err)
	}
	s.cluster.serf = sf
	return nil
}

// splitHostPort parses "host:port" ("" host: every interface).
func splitHostPort(addr, what string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("%s %q: %w", what, addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%s %q: the port is not a port number", what, addr)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	return host, port, nil
}

// mergeGuard refuses to merge gossip pools that must stay apart: a server
// of another cluster (its state names another cluster ID: its data_dir
// belongs to that cluster), and a server under this server's name at
// another address (two agents given one name). serf calls it on both
// sides of a join and for every member that announces itself alive.
type mergeGuard struct{ s *Server }

// NotifyMerge implements serf.MergeDelegate.
func (g *mergeGuard) NotifyMerge(members []*serf.Member) error {
	s := g.s
	ours := s.clusterID()
	self := s.config.NodeName
	selfID := string(s.raftID())
	var errs []error
	for _, m := range members {
		sm, ok := parseServerMember(m)
		if !ok || sm.Region != s.config.Region {
			continue
		}
		switch {
		case ours != "" && sm.ClusterID != "" && sm.ClusterID != ours:
			errs = append(errs, fmt.Errorf("server %s (%s) belongs to cluster %s, this server (%s) to cluster %s: "+
				"a server's data_dir holds the state of one cluster; start it with an empty data_dir to join this one",
				sm.Name, sm.RPCAddr, sm.ClusterID, self, ours))
		case sm.Name == self && sm.ID != selfID:
			errs = append(errs, fmt.Errorf("another server is named %s (server ID %s, at %s): give every agent its own name",
				self, sm.ID, sm.RPCAddr))
		case sm.ID == selfID && sm.Name != self:
			errs = append(errs, fmt.Errorf("server %s at %s has this server's ID %s: its data_dir was copied from this server's; "+
				"give it an empty data_dir", sm.Name, sm.RPCAddr, selfID))
		default:
			if id, alive := s.cluster.aliveID(sm.Name); alive && id != sm.ID {
				errs = append(errs, fmt.Errorf("another server is named %s (server ID %s, at %s), and server %s is alive: give every agent its own name",
					sm.Name, sm.ID, sm.RPCAddr, id))
			}
		}
	}
	if len(errs) > 0 {
		err := errors.Join(errs...)
		s.logger.Error("refusing to merge gossip pools", "error", err)
		return err
	}
	return nil
}

// members returns the drover servers of this region among the serf
// members, by name.
func (s *Server) members() []*serverMember {
	if s.cluster == nil || s.cluster.serf == nil {
		return nil
	}
	var out []*serverMember
	for _, m := range s.cluster.serf.Members() {
		sm, ok := parseServerMember(&m)
		if ok && sm.Region == s.config.Region {
			out = append(out, sm)
		}
	}
	return out
}

// ServerMembers implements rpcapi.ServerMembers: every serf member this
// server sees (servers of other regions too, as Nomad's members list),
// this server first, then the others by name: a stable order (serf's is
// random), in which a script's Members[1] is another server.
func (s *Server) ServerMembers(_ context.Context, _ *structs.ServerMembersRequest) (*structs.ServerMembersResponse, error) {
	out := &structs.ServerMembersResponse{
		ServerName: s.config.NodeName, ServerRegion: s.config.Region, ServerDC: s.config.Datacenter,
		Members: []*structs.ServerMember{},
	}
	s.setMeta(&out.QueryMeta)
	if s.cluster == nil || s.cluster.serf == nil {
		// A single server without gossip: itself.
		out.Members = append(out.Members, s.selfMember())
		return out, nil
	}
	for _, m := range s.cluster.serf.Members() {
		out.Members = append(out.Members, &structs.ServerMember{
			Name: m.Name, Addr: m.Addr.String(), Port: m.Port, Tags: m.Tags, Status: m.Status.String(),
			ProtocolMin: m.ProtocolMin, ProtocolMax: m.ProtocolMax, ProtocolCur: m.ProtocolCur,
			DelegateMin: m.DelegateMin, DelegateMax: m.DelegateMax, DelegateCur: m.DelegateCur,
		})
	}
	self := s.config.NodeName
	slices.SortFunc(out.Members, func(a, b *structs.ServerMember) int {
		if (a.Name == self) != (b.Name == self) {
			if a.Name == self {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// selfMember describes a server without gossip as its only member.
func (s *Server) selfMember() *structs.ServerMember {
	host, port := "127.0.0.1", uint16(0)
	addr := string(s.raftTransport.LocalAddr())
	if s.config.SelfRPCAddr != "" {
		addr = s.config.SelfRPCAddr
	}
	if strings.Contains(addr, ":") {
		if h, p, err := net.SplitHostPort(addr); err == nil {
			n, _ := strconv.Atoi(p)
			host, port = h, uint16(n)
		}
	}
	return &structs.ServerMember{
		Name: s.config.NodeName, Addr: host, Port: port, Status: serf.StatusAlive.String(),
		Tags: map[string]string{tagRole: roleServer, tagRegion: s.config.Region, tagDC: s.config.Datacenter,
			tagID: string(s.raftID()), tagRaftVsn: raftProtocol,
			tagPort: strconv.Itoa(int(port)), tagBuild: version.Version},
	}
}
