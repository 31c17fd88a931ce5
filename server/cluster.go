package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/raft"
	"github.com/hashicorp/serf/serf"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
	"github.com/drover-io/drover/tlsutil"
)

// clusterTickInterval is how often a server of a cluster looks at its
// membership without an event: bootstrap attempts, the leader's
// reconciliation of raft with serf, dead-server cleanup.
const clusterTickInterval = 3 * time.Second

// clusterState is what a server of a multi-server cluster runs besides a
// single server's parts: the RPC port's mux and RPC server (raft and
// rpcapi's wire on one port), serf, and the transport that forwards calls
// to the leader. Nil on a single server without a network of its own.
type clusterState struct {
	cfg          *ClusterConfig
	rpcAdvertise string
	mux          *rpcMux
	rpcServer    *RPCServer
	serf         *serf.Serf
	events       chan serf.Event
	work         chan struct{} // signalled (non-blocking) on membership changes
	hc           *http.Client
	gossipKeys   *memberlist.Keyring // nil without gossip encryption (kek_handoff.go)
	wire         *rpcapi.Transport
	bootstrapped atomic.Bool // the raft configuration exists (or a cluster was found to join)

	idMu   sync.Mutex // guards fileID
	fileID string     // the cluster ID read from (or written to) cfg.ClusterIDFile
	tagged string     // the cluster ID in our serf tags; runCluster's own
	// absent: raft ID -> since when serf does not know the voter;
	// runCluster's own.
	absent map[string]time.Time

	// localMu orders our own serf calls that touch the local node:
	// SetTags rewrites it while a query (the gossip keyring's) reads it,
	// unlocked, in serf (a data race in serf v0.11).
	localMu sync.Mutex

	membersMu sync.Mutex // guards alive and reaped
	// alive: server name -> raft ID of the servers serf last reported
	// alive (runSerfEvents keeps it; the merge guard reads it without
	// calling into serf, which holds its locks then).
	alive map[string]string
	// reaped: raft ID -> name of the servers of this region that serf
	// erased (force-leave -prune, or reaped long after they failed or
	// left): the leader removes them from raft (removeReaped).
	reaped map[string]string
}

// noteReaped records servers that serf erased from its members.
func (c *clusterState) noteReaped(region string, members []serf.Member) {
	c.membersMu.Lock()
	defer c.membersMu.Unlock()
	for i := range members {
		if sm, ok := parseServerMember(&members[i]); ok && sm.Region == region {
			c.reaped[sm.ID] = sm.Name
		}
	}
}

// takeReaped returns the servers serf erased since the last call.
func (c *clusterState) takeReaped() map[string]string {
	c.membersMu.Lock()
	defer c.membersMu.Unlock()
	out := c.reaped
	c.reaped = map[string]string{}
	return out
}

// aliveID returns the raft ID of the server named name if serf last
// reported it alive.
func (c *clusterState) aliveID(name string) (string, bool) {
	c.membersMu.Lock()
	defer c.membersMu.Unlock()
	id, ok := c.alive[name]
	return id, ok
}

// noteMember records a member's last reported status.
func (c *clusterState) noteMember(m *serf.Member) {
	c.membersMu.Lock()
	defer c.membersMu.Unlock()
	if m.Status == serf.StatusAlive && m.Tags[tagID] != "" {
		c.alive[m.Name] = m.Tags[tagID]
	} else {
		delete(c.alive, m.Name)
	}
}

// raftID returns the server's raft ID.
func (s *Server) raftID() raft.ServerID {
	if s.config.RaftID != "" {
		return raft.ServerID(s.config.RaftID)
	}
	return raft.ServerID(s.config.NodeName)
}

// clusterID returns the ID of the cluster this server's state belongs to:
// the replicated one, else the one kept in the cluster ID file, else "".
func (s *Server) clusterID() string {
	if s.fsm != nil {
		if m, err := s.fsm.State().ClusterMetadata(nil); err == nil && m != nil {
			return m.ClusterID
		}
	}
	if s.cluster == nil {
		return ""
	}
	s.cluster.idMu.Lock()
	defer s.cluster.idMu.Unlock()
	return s.cluster.fileID
}

// setupClusterNetwork prepares the RPC port (not yet served): the mux,
// raft's TCP transport over it, the RPC server of s's methods, the client
// that forwards calls to the leader, and the cluster ID file.
func (s *Server) setupClusterNetwork() error {
	cc := s.config.Cluster
	if cc.RPCListener == nil {
		return errors.New("a server of a cluster needs its RPC listener")
	}
	if s.config.Transport != nil {
		return errors.New("a server of a cluster makes its own raft transport: set Transport or Cluster, not both")
	}
	adv := cc.RPCAdvertise
	if adv == "" {
		adv = cc.RPCListener.Addr().String()
	}
	host, _, err := net.SplitHostPort(adv)
	if err != nil {
		return fmt.Errorf("RPC advertise address %q: %w", adv, err)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return fmt.Errorf("RPC advertise address %q is not an address other servers can reach: set advertise { rpc = \"<ip>:<port>\" }", adv)
	}
	advAddr, err := net.ResolveTCPAddr("tcp", adv)
	if err != nil {
		return fmt.Errorf("RPC advertise address %q: %w", adv, err)
	}
	c := &clusterState{
		cfg: cc, rpcAdvertise: adv,
		events: make(chan serf.Event, 256), work: make(chan struct{}, 1),
		absent: map[string]time.Time{}, alive: map[string]string{}, reaped: map[string]string{},
	}
	id, err := readClusterIDFile(cc.ClusterIDFile)
	if err != nil {
		return err
	}
	c.fileID = id
	c.mux = newRPCMux(cc.RPCListener, cc.TLS, s.logger.With("component", "rpc-mux"))
	c.rpcServer = NewRPCServer(s.handlers, c.mux.http, s.logger.With("component", "rpc"))
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	dial := dialer.DialContext
	var raftTLS *tls.Config
	if cc.TLS != nil {
		dial = tlsutil.DialContext(dialer, cc.TLS.Client)
		raftTLS = cc.TLS.Client
	}
	c.hc = &http.Client{Transport: &http.Transport{
		Proxy: nil, DialContext: dial, MaxIdleConnsPerHost: 32, IdleConnTimeout: 90 * time.Second,
	}}
	c.wire = rpcapi.NewTransport(c.hc)
	s.cluster = c
	s.raftTransport = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		ServerAddressProvider: serfAddresses{s: s},
		Logger:                newRaftLogger(s.logger),
		Stream:                newRaftLayer(c.mux.raft, advAddr, raftTLS),
		MaxPool:               3,
		Timeout:               10 * time.Second,
	})
	s.ownTransport = true
	return nil
}

// readClusterIDFile returns the cluster ID kept in path, "" when there is
// none.
func readClusterIDFile(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read the cluster ID: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// writeClusterIDFile keeps id in path, written whole.
func writeClusterIDFile(path, id string) error {
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("keep the cluster ID: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err != nil {
		return fmt.Errorf("keep the cluster ID: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("keep the cluster ID: %w", err)
	}
	return nil
}

// serfAddresses gives raft the RPC address that serf says a server has
// now, so that raft reaches servers that came back on new addresses
// whatever its configuration recorded (and a cluster whose servers all
// moved elects a leader without a hand-written peers.json).
type serfAddresses struct{ s *Server }

// ServerAddr implements raft.ServerAddressProvider.
func (p serfAddresses) ServerAddr(id raft.ServerID) (raft.ServerAddress, error) {
	for _, m := range p.s.members() {
		if m.ID == string(id) && m.Status != serf.StatusLeft {
			return raft.ServerAddress(m.RPCAddr), nil
		}
	}
	return "", fmt.Errorf("no server with raft ID %s in the gossip pool", id)
}

// startCluster serves the RPC port, starts the cluster's goroutines and
// joins StartJoin (an error when none of them answers); RetryJoin is
// joined in the background.
func (s *Server) startCluster() error {
	c := s.cluster
	c.mux.start()
	c.rpcServer.Start()
	s.wg.Add(3)
	go func() { defer s.wg.Done(); s.runSerfEvents() }()
	go func() { defer s.wg.Done(); s.runCluster() }()
	go func() { defer s.wg.Done(); s.runKEKFetch() }() // kek_handoff.go
	s.logAwaitingJoin()                                // bootstrap.go
	if len(c.cfg.StartJoin) > 0 {
		n, err := c.serf.Join(c.cfg.StartJoin, true)
		if n == 0 {
			return fmt.Errorf("join servers %s (server_join.start_join): %w", strings.Join(c.cfg.StartJoin, ", "), errOrNone(err))
		}
		s.logger.Info("joined servers", "count", n, "addresses", c.cfg.StartJoin)
	}
	if len(c.cfg.RetryJoin) > 0 {
		s.wg.Add(1)
		go func() { defer s.wg.Done(); s.retryJoin() }()
	}
	return nil
}

func errOrNone(err error) error {
	if err == nil {
		return errors.New("no server answered")
	}
	return err
}

// retryJoin joins RetryJoin until one of them answers, every
// RetryInterval, at most RetryMax times (0: without limit).
func (s *Server) retryJoin() {
	cc := s.cluster.cfg
	for attempt := 1; ; attempt++ {
		n, err := s.cluster.serf.Join(cc.RetryJoin, true)
		if n > 0 {
			s.logger.Info("joined servers", "count", n, "addresses", cc.RetryJoin, "attempt", attempt)
			return
		}
		if cc.RetryMax > 0 && attempt >= cc.RetryMax {
			s.logger.Error("gave up joining servers (server_join.retry_max)", "addresses", cc.RetryJoin, "attempts", attempt, "error", errOrNone(err))
			return
		}
		s.logger.Warn("could not join servers; retrying", "addresses", cc.RetryJoin, "attempt", attempt,
			"retry_interval", cc.RetryInterval.String(), "error", errOrNone(err))
		if !s.sleep(cc.RetryInterval) {
			return
		}
	}
}

// sleep waits d on the server's clock; false when the server stops first.
func (s *Server) sleep(d time.Duration) bool {
	done := make(chan struct{})
	t := s.clock.AfterFunc(d, func() { close(done) })
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// RPCAddr returns the RPC address the server advertises, "" for a server
// without a network of its own.
func (s *Server) RPCAddr() string {
	if s.cluster == nil {
		return ""
	}
	return s.cluster.rpcAdvertise
}

// SerfAddr returns the server's gossip address, "" without serf.
func (s *Server) SerfAddr() string {
	if s.cluster == nil || s.cluster.serf == nil {
		return ""
	}
	m := s.cluster.serf.LocalMember()
	return net.JoinHostPort(m.Addr.String(), fmt.Sprint(m.Port))
}

// IsLeader reports whether the server leads (and established its duties).
func (s *Server) IsLeader() bool { return s.leader() }

// Join makes the server join other servers' gossip pool (serf addresses).
func (s *Server) Join(addrs []string) (int, error) {
	if s.cluster == nil {
		return 0, structs.Invalid("this server runs alone (no serf): start it with a server_join block to form a cluster")
	}
	return s.cluster.serf.Join(addrs, true)
}

// runSerfEvents drains serf's events, logging membership changes and
// waking runCluster.
func (s *Server) runSerfEvents() {
	for {
		select {
		case <-s.ctx.Done():
			return
		case e := <-s.cluster.events:
			me, ok := e.(serf.MemberEvent)
			if !ok {
				continue
			}
			if me.Type == serf.EventMemberReap {
				s.cluster.noteReaped(s.config.Region, me.Members)
			}
			for _, m := range me.Members {
				s.cluster.noteMember(&m)
				s.logger.Info("server membership changed", "event", me.EventType().String(), "member", m.Name,
					"addr", fmt.Sprintf("%s:%d", m.Addr, m.Port), "status", m.Status.String())
			}
			s.wakeCluster()
		}
	}
}

// wakeCluster makes runCluster look at the membership now.
func (s *Server) wakeCluster() {
	select {
	case s.cluster.work <- struct{}{}:
	default:
	}
}

// runCluster keeps the cluster in shape: it bootstraps it once enough
// servers found each other, keeps the serf tags current, and on the leader
// reconciles raft's configuration with serf's members and removes dead
// servers (autopilot).
func (s *Server) runCluster() {
	tick := make(chan struct{}, 1)
	arm := func() Timer {
		return s.clock.AfterFunc(clusterTickInterval, func() {
			select {
			case tick <- struct{}{}:
			default:
			}
		})
	}
	timer := arm()
	defer func() { timer.Stop() }()
	for {
		leaderChange := s.leaderNotify.wait()
		s.clusterStep()
		select {
		case <-s.ctx.Done():
			return
		case <-s.cluster.work:
		case <-leaderChange:
		case <-tick:
			timer = arm()
		}
	}
}

// clusterStep does one round of runCluster's work.
func (s *Server) clusterStep() {
	s.updateClusterTags()
	if !s.cluster.bootstrapped.Load() {
		s.maybeBootstrap()
	}
	reaped := s.cluster.takeReaped()
	if !s.leader() {
		return
	}
	s.ensureClusterMeta()
	s.removeReaped(reaped) // autopilot.go
	s.reconcileMembers()
	s.pruneDeadServers()
}

// updateClusterTags gossips the cluster ID once the state holds it, and
// keeps it in the cluster ID file.
func (s *Server) updateClusterTags() {
	id := s.clusterID()
	c := s.cluster
	if id == "" || id == c.tagged {
		return
	}
	c.idMu.Lock()
	keep := c.fileID != id
	c.fileID = id
	c.idMu.Unlock()
	if keep {
		if err := writeClusterIDFile(c.cfg.ClusterIDFile, id); err != nil {
			s.logger.Error("keep the cluster ID", "error", err)
		}
	}
	c.localMu.Lock()
	err := c.serf.SetTags(s.serfTags(id))
	c.localMu.Unlock()
	if err != nil {
		s.logger.Error("gossip the cluster ID", "error", err)
		return
	}
	c.tagged = id
	s.cluster.bootstrapped.Store(true)
}

// ensureClusterMeta has the leader write the cluster's identity once.
func (s *Server) ensureClusterMeta() {
	if m, err := s.fsm.State().ClusterMetadata(nil); err != nil || m != nil {
		return
	}
	id := s.clusterID() // kept in the file from before a -recover, or ""
	if id == "" {
		id = structs.GenerateUUID()
	}
	meta := structs.ClusterMetadata{ClusterID: id, CreateTime: s.clock.Now().UnixNano()}
	if _, _, err := s.raftApply(ClusterMetaRequestType, &ClusterMetaCommand{Meta: meta}); err != nil {
		s.logger.Error("write the cluster ID", "error", err)
		return
	}
	s.logger.Info("cluster identity written", "cluster_id", id)
}

// serverConn calls one server's methods over the network (no failover):
// a server asking another how it stands.
type serverConn struct {
	wire *rpcapi.Transport
	addr string
}

// Invoke implements rpcapi.Conn.
func (c serverConn) Invoke(ctx context.Context, m *rpcapi.Info, req any) (any, error) {
	body, err := c.wire.Encode(m, req)
	if err != nil {
		return nil, err
	}
	return c.wire.Post(ctx, c.addr, m, body)
}

// Leave makes the server leave the cluster for good (the agent's
// leave_on_interrupt / leave_on_terminate): a leader hands leadership to
// another server first; then serf announces the leave, and the leader
// removes this server from raft. It waits for that, until ctx ends.
func (s *Server) Leave(ctx context.Context) error {
	if s.cluster == nil {
		return nil
	}
	voters := s.voters()
	if s.leader() && len(voters) > 1 {
		if err := s.raft.LeadershipTransfer().Error(); err != nil {
			s.logger.Warn("hand over leadership before leaving", "error", err)
		}
	}
	if err := s.cluster.serf.Leave(); err != nil {
		return fmt.Errorf("leave the gossip pool: %w", err)
	}
	if len(voters) <= 1 {
		return nil
	}
	for {
		ch := s.leaderNotify.wait()
		if !s.inRaftConfig() {
			s.logger.Info("left the cluster: removed from raft")
			return nil
		}
		select {
		case <-ch:
		case <-time.After(time.Second): // raft configuration changes are not notified
		case <-ctx.Done():
			return fmt.Errorf("wait to be removed from raft: %w", context.Cause(ctx))
		}
	}
}

// voters returns the IDs of the raft configuration's voters.
func (s *Server) voters() []string {
	f := s.raft.GetConfiguration()
	if f.Error() != nil {
		return nil
	}
	var out []string
	for _, srv := range f.Configuration().Servers {
		if srv.Suffrage == raft.Voter {
			out = append(out, string(srv.ID))
		}
	}
	return out
}

// inRaftConfig reports whether this server is in its raft configuration.
func (s *Server) inRaftConfig() bool {
	f := s.raft.GetConfiguration()
	if f.Error() != nil {
		return true
	}
	for _, srv := range f.Configuration().Servers {
		if srv.ID == s.raftID() {
			return true
		}
	}
	return false
}

// shutdownCluster stops the RPC server (ending in-flight calls); called
// first at Shutdown.
func (s *Server) shutdownClusterRPC() error {
	if s.cluster == nil {
		return nil
	}
	return s.cluster.rpcServer.Shutdown()
}

// closeCluster stops serf and the mux; called at Shutdown after raft.
func (s *Server) closeCluster() error {
	if s.cluster == nil {
		return nil
	}
	var err error
	if s.cluster.serf != nil {
		if serr := s.cluster.serf.Shutdown(); serr != nil {
			err = fmt.Errorf("shut down serf: %w", serr)
		}
	}
	s.cluster.mux.close()
	s.cluster.hc.CloseIdleConnections()
	return err
}
