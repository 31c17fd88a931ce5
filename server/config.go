package server

import (
	"crypto/tls"
	"log/slog"
	"net"
	"runtime"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/server/keyring"
	"github.com/drover-io/drover/structs"
)

// Defaults of Config.
const (
	DefaultHeartbeatTTL = 10 * time.Second
	// DefaultHeartbeatGrace is the agent's default heartbeat_grace.
	DefaultHeartbeatGrace = 10 * time.Second
	// DefaultMaxHeartbeatsPerSecond is the default of
	// Config.MaxHeartbeatsPerSecond (as Nomad's).
	DefaultMaxHeartbeatsPerSecond = 50.0
	DefaultRegion                 = "global"
	DefaultDatacenter             = "dc1"
	// DefaultJobMaxCount is the default of Config.JobMaxCount: ten times
	// the 1,000-allocation jobs of the benchmarks.
	DefaultJobMaxCount = 10000
	// DefaultEvalTimeout is the default of Config.EvalTimeout. Nomad's
	// eval_nack_timeout has the same default.
	DefaultEvalTimeout = 60 * time.Second
)

// Config configures a Server. The zero value (plus a NodeName) runs a
// single in-memory server as in dev mode.
type Config struct {
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// NodeName names this server; it is also its raft ID and, with the
	// in-memory transport, its raft address.
	NodeName string
	// RaftID is the server's raft ID; empty uses NodeName. A persistent
	// agent sets a stable ID kept under its data_dir, so that a renamed
	// host still finds itself in the raft configuration.
	RaftID     string
	Region     string
	Datacenter string
	// HeartbeatTTL is the minimum heartbeat TTL given to clients
	// (min_heartbeat_ttl): how long a client may stay silent, plus
	// HeartbeatGrace, before its node is marked down. It grows with the
	// number of nodes (MaxHeartbeatsPerSecond).
	HeartbeatTTL time.Duration
	// MaxHeartbeatsPerSecond bounds the heartbeats all nodes together
	// send (max_heartbeats_per_second): the TTL grows to nodes / this
	// many seconds when that is longer than HeartbeatTTL. 0 uses
	// DefaultMaxHeartbeatsPerSecond.
	MaxHeartbeatsPerSecond float64
	// HeartbeatGrace is added to a node's TTL before it is marked down
	// (heartbeat_grace), covering network delays and leader elections.
	// 0 adds none; the agent's default is DefaultHeartbeatGrace.
	HeartbeatGrace time.Duration
	// NumWorkers is the number of evaluation workers (the agent's
	// server.num_schedulers). 0 runs one per CPU core; a negative value
	// runs none, so that this server makes no scheduling decisions and
	// evaluations wait in the broker (Nomad's num_schedulers = 0).
	NumWorkers int
	// JobMaxCount bounds the allocations a job may ask for: each task
	// group's count, and their sum (server.job_max_count). 0 uses
	// DefaultJobMaxCount.
	JobMaxCount int
	// EvalTimeout bounds how long a worker may spend on one evaluation
	// (server.eval_nack_timeout); past it the scheduling pass is cancelled
	// and the evaluation failed with the reason. 0 uses DefaultEvalTimeout.
	EvalTimeout time.Duration
	// GC configures the leader's garbage collection (gc.go).
	GC GCConfig
	// Clock drives heartbeat timers and timestamps; nil uses the wall clock.
	Clock Clock
	// KEK is the key-encryption key that wraps the keyring's root keys
	// (package keyring); nil makes one in memory, which suits only a
	// server whose state is in memory too. A persistent agent loads it
	// from <data_dir>/server/keyring.kek.
	KEK *keyring.KEK
	// TaskConfigs checks the driver config blocks of submitted jobs
	// against the drivers' schemas; nil checks none (the clients check
	// them when tasks start).
	TaskConfigs TaskConfigValidator
	// Timers records how long plans take to submit, evaluate and apply
	// (the agent's telemetry); nil records nothing.
	Timers Timers

	// Raft storage and transport. Nil values use in-memory ones (dev
	// mode); a persistent agent sets a bbolt log store and file snapshots.
	LogStore      raft.LogStore
	StableStore   raft.StableStore
	SnapshotStore raft.SnapshotStore
	Transport     raft.Transport
	// RaftConfig overrides the raft configuration; nil uses fast dev
	// timeouts suited to a single server.
	RaftConfig *raft.Config

	// Autopilot is the autopilot configuration in force until an operator
	// sets one; nil: structs.DefaultAutopilotConfig.
	Autopilot *structs.AutopilotConfig

	// Recover makes this server the only voter of its raft configuration
	// before raft starts, keeping its state (the agent's -recover): the
	// way out when most servers are lost for good. The other servers then
	// join it again as new ones. It needs existing raft state.
	Recover bool

	// ACLEnabled enforces ACLs on every call that arrives over the RPC
	// port (the agent's acl { enabled }); the HTTP API checks its own
	// requests (package httpapi).
	ACLEnabled bool
	// ACLBootstrapResetFile is the file whose content, the index of the
	// last bootstrap, allows one more (<data_dir>/server/acl-bootstrap-reset);
	// "" allows none.
	ACLBootstrapResetFile string

	// Cluster makes the server one of several over the network; nil runs
	// a single server without a network of its own (dev mode, tests), its
	// RPC port served by the agent.
	Cluster *ClusterConfig
	// SelfRPCAddr is the RPC address a server without gossip (Cluster
	// nil: a dev agent) lists itself at in its members, the one the agent
	// reports as the leader's; "" lists its raft address.
	SelfRPCAddr string
}

// ClusterConfig is what a server of a multi-server cluster needs: its RPC
// listener (rpcapi's wire and raft, on one port), its gossip (serf) port,
// how many servers bootstrap the cluster and where to find them.
type ClusterConfig struct {
	// RPCListener is the RPC port's listener, which the server owns from
	// NewServer on: it serves its methods there (rpcapi's wire, HTTP),
	// and raft over TCP on the same port, each connection told apart by
	// its first byte (rpc_mux.go).
	RPCListener net.Listener
	// RPCAdvertise is the RPC address other servers and clients reach
	// this one at ("10.0.0.1:4647"); "" uses the listener's.
	RPCAdvertise string
	// SerfBind is the gossip address to bind ("0.0.0.0:4648"); its port
	// serves TCP and UDP. SerfAdvertise is the one to give to others
	// ("" uses the bind address, or the RPC advertise host when binding
	// all interfaces).
	SerfBind      string
	SerfAdvertise string
	// SerfSnapshot is the file where serf keeps the members it saw, to
	// rejoin them after a restart; "" keeps none.
	SerfSnapshot string
	// ClusterIDFile keeps the ID of the cluster this server's state
	// belongs to, so that it is known at start, before raft replays its
	// log; "" keeps none.
	ClusterIDFile string
	// BootstrapExpect is the number of servers that bootstrap the cluster
	// together: when that many have found each other through serf and
	// none of them belongs to a cluster yet, they form one. 1 bootstraps
	// this server alone; 0 never bootstraps: the server waits to be added
	// to an existing cluster by its leader.
	BootstrapExpect int
	// StartJoin are serf addresses joined once at start: failing to join
	// any of them fails NewServer. RetryJoin are joined in the background,
	// every RetryInterval (default 30s), at most RetryMax times (0: until
	// one succeeds).
	StartJoin     []string
	RetryJoin     []string
	RetryInterval time.Duration
	RetryMax      int
	// Version is drover's version, gossiped to the other servers.
	Version string
	// LANConfig uses memberlist's LAN timings (the agent); false uses its
	// faster local-network ones (tests).
	LANConfig bool
	// TLS makes the RPC port mutual TLS (the agent's tls.rpc): raft,
	// rpcapi's wire and the calls this server forwards; nil serves and
	// dials in plain text.
	TLS *RPCTLS
	// GossipKey encrypts serf's gossip (the agent's server.encrypt): 16,
	// 24 or 32 bytes (AES-128, -192, -256); nil gossips in plain text.
	// Every server of the cluster needs the same key.
	GossipKey []byte
	// HoldTimeout bounds how long a call waits for a leader to be known
	// (elected, or reachable) before it fails as unavailable; 0 uses
	// DefaultHoldTimeout.
	HoldTimeout time.Duration
}

// RPCTLS is the TLS of a server's RPC port. Both configs read the
// agent's current certificate at each handshake (tlsutil), so that a
// reload needs no restart here.
type RPCTLS struct {
	// Server is the config of incoming connections: it must ask for the
	// caller's certificate and check it.
	Server *tls.Config
	// Client is the config of outgoing ones: raft to the other servers,
	// calls forwarded to the leader.
	Client *tls.Config
	// AllowPlaintext also accepts plain-text connections
	// (tls.rpc_upgrade_mode, while a cluster moves to TLS).
	AllowPlaintext bool
	// RaftPeerName, when set, is the name a raft peer's certificate must
	// have (server.<region>.nomad, with tls.verify_server_hostname): a
	// client's certificate opens no raft connection.
	RaftPeerName string
}

// DefaultHoldTimeout is the default of ClusterConfig.HoldTimeout (Nomad's
// rpc_hold_timeout): long enough for an election after the leader dies.
const DefaultHoldTimeout = 7 * time.Second

// DefaultRetryInterval is the default of ClusterConfig.RetryInterval.
const DefaultRetryInterval = 30 * time.Second

func (c *ClusterConfig) withDefaults() {
	if c.HoldTimeout <= 0 {
		c.HoldTimeout = DefaultHoldTimeout
	}
	if c.RetryInterval <= 0 {
		c.RetryInterval = DefaultRetryInterval
	}
}

// Clock is the server's source of time.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a stoppable timer made by a Clock.
type Timer interface {
	Stop() bool
	Reset(d time.Duration) bool
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	return time.AfterFunc(d, f)
}

func (c *Config) withDefaults() Config {
	out := *c
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	if out.Timers == nil {
		out.Timers = noTimers{}
	}
	if out.NodeName == "" {
		out.NodeName = "server-1"
	}
	if out.Region == "" {
		out.Region = DefaultRegion
	}
	if out.Datacenter == "" {
		out.Datacenter = DefaultDatacenter
	}
	if out.HeartbeatTTL <= 0 {
		out.HeartbeatTTL = DefaultHeartbeatTTL
	}
	out.GC = out.GC.withDefaults()
	if out.MaxHeartbeatsPerSecond <= 0 {
		out.MaxHeartbeatsPerSecond = DefaultMaxHeartbeatsPerSecond
	}
	switch {
	case out.NumWorkers == 0:
		out.NumWorkers = runtime.NumCPU()
	case out.NumWorkers < 0:
		out.NumWorkers = 0
	}
	if out.JobMaxCount <= 0 {
		out.JobMaxCount = DefaultJobMaxCount
	}
	if out.EvalTimeout <= 0 {
		out.EvalTimeout = DefaultEvalTimeout
	}
	if out.Clock == nil {
		out.Clock = realClock{}
	}
	if out.Cluster != nil {
		cc := *out.Cluster
		cc.withDefaults()
		out.Cluster = &cc
	}
	return out
}
