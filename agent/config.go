package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/drover-io/drover/agent/telemetry"
	"github.com/drover-io/drover/structs"
	"github.com/drover-io/drover/tlsutil"
)

// Config is the agent's configuration: the defaults, then the config
// files in order, then the command-line flags (see docs/agent-config.md).
type Config struct {
	// DevMode runs a server and a client in one process with in-memory
	// state, and the raw_exec and mock_driver drivers; Shutdown destroys
	// what the client ran.
	DevMode bool
	// BindAddr is the address the listeners bind to unless Addresses
	// overrides it for one of them.
	BindAddr string
	// HTTPPort is the HTTP API port; 0 picks a free port (see HTTPAddr).
	HTTPPort int
	// RPCPort is the port a server serves the client RPCs on; 0 picks a
	// free port (see RPCAddr). Dev agents do not listen on it. Raft
	// between servers runs on it too.
	RPCPort int
	// SerfPort is the servers' gossip port (TCP and UDP); 0 picks a free
	// port. Dev agents do not gossip.
	SerfPort int
	// Addresses overrides BindAddr per listener.
	Addresses Addresses
	// Advertise is what other agents reach this one at, per listener:
	// "host" (with the listener's port) or "host:port". Empty: the bind
	// address, or when that is every interface (0.0.0.0), this host's
	// first private IPv4 address.
	Advertise Addresses
	// Autopilot is the autopilot configuration in force until an operator
	// sets one (drover operator autopilot set-config); nil: Nomad's
	// defaults.
	Autopilot *structs.AutopilotConfig
	// DataDir holds the agent's state: server/raft/ (raft log, snapshots),
	// server/node-id, client/state.db and alloc/. Required unless DevMode;
	// in dev mode it only holds alloc/ (without it a temporary directory
	// removed at shutdown does).
	DataDir string
	// PluginDir is where external driver plugins live; empty means
	// <data_dir>/plugins (see docs/plugins.md).
	PluginDir string
	// LogLevel is debug, info, warn or error (used by the agent command).
	LogLevel string
	// Logging says where and how the agent logs (config_log.go).
	Logging LoggingConfig
	// LeaveOnInterrupt and LeaveOnTerminate make SIGINT and SIGTERM leave
	// the cluster before the agent stops (see Agent.Leave).
	LeaveOnInterrupt bool
	LeaveOnTerminate bool
	// EnableDebug serves the profiling endpoints (/v1/agent/pprof/*),
	// which expose the agent's internals: off by default, on in dev mode.
	EnableDebug bool
	// GCMemoryLimit is the soft limit on the Go runtime's memory:
	// MemoryLimitAuto ("auto", the default and what "" means),
	// MemoryLimitOff, or a size (memlimit.go).
	GCMemoryLimit string
	// Region and Datacenter place the agent; NodeName names it (and its
	// client node).
	Region     string
	Datacenter string
	NodeName   string

	Server ServerConfig
	Client ClientConfig
	// Plugins holds each `plugin "NAME" { config { ... } }` block by name.
	Plugins map[string]*PluginConfig
	// UI is the ui block: whether the agent serves the web UI at /ui/.
	UI UIConfig
	// ACL is the acl block (config_acl.go, docs/acl.md).
	ACL ACLConfig
	// Telemetry is the telemetry block: the metrics /v1/metrics serves
	// (config_telemetry.go, docs/metrics.md).
	Telemetry telemetry.Config
	// TLS is the tls block: HTTPS on the HTTP API, mutual TLS on the RPC
	// port (config_tls.go, docs/tls.md). Its Region is set from Region.
	TLS tlsutil.Config

	// Warnings are the Nomad settings the files and flags set that drover
	// ignores, one per key; the agent command logs them at start.
	Warnings []ConfigWarning
}

// UIConfig is the ui block.
type UIConfig struct {
	// Enabled serves the web UI at /ui/ (and redirects / there); default
	// true, as Nomad's.
	Enabled bool
}

// LoggingConfig configures the agent's logs: to stderr always, and to a
// file and syslog when configured.
type LoggingConfig struct {
	// JSON writes JSON lines instead of text.
	JSON bool
	// IncludeLocation adds the source file and line to every line.
	IncludeLocation bool
	// File is the log file's path; a directory (or a path ending in "/")
	// holds DefaultLogFileName. Empty: no log file.
	File string
	// RotateBytes rotates the file once it holds this many bytes; 0: no
	// size limit.
	RotateBytes int
	// RotateDuration rotates the file when it is this old.
	RotateDuration time.Duration
	// RotateMaxFiles is the number of rotated files kept; 0 keeps them all.
	RotateMaxFiles int
	// EnableSyslog also sends the logs to the local syslog daemon.
	EnableSyslog bool
	// SyslogFacility is the syslog facility ("LOCAL0").
	SyslogFacility string
}

// Addresses are per-listener addresses; empty means the default.
type Addresses struct {
	HTTP string
	RPC  string
	Serf string
}

// ServerJoinConfig is server_join: the addresses of servers to join, at
// start (failing the start when none answers) or in the background with
// retries. A server joins other servers' serf ports (host or host:4648),
// a client finds servers at their RPC ports (host or host:4647).
type ServerJoinConfig struct {
	StartJoin []string
	RetryJoin []string
	// RetryInterval is the pause between attempts; 0: 30s.
	RetryInterval time.Duration
	// RetryMax bounds the attempts; 0: no bound.
	RetryMax int
}

// addresses returns every address to join.
func (j *ServerJoinConfig) addresses() []string {
	return append(slices.Clone(j.StartJoin), j.RetryJoin...)
}

// ServerConfig is the server block.
type ServerConfig struct {
	Enabled bool
	// BootstrapExpect is the number of servers that bootstrap the cluster
	// together once they found each other: 1 for a single server. 0 (the
	// default, as in Nomad) never bootstraps: the server waits to be
	// joined to an existing cluster, whose leader adds it. -dev sets 1.
	BootstrapExpect int
	// Join is server_join: the other servers' serf addresses.
	Join ServerJoinConfig
	// RaftMultiplier scales raft's timeouts (1 to 10; 0 is 1): raise it on
	// slow or loaded machines, at the cost of slower failure detection.
	RaftMultiplier int
	// Recover rewrites this server's raft configuration to itself alone
	// at start, keeping its state (the -recover flag): after most servers
	// were lost for good. See docs/cluster.md.
	Recover bool
	// MinHeartbeatTTL is how long a client may stay silent before its node
	// is marked down; 0 uses the server's default (10s).
	MinHeartbeatTTL time.Duration
	// HeartbeatGrace is added to a node's TTL before it is marked down
	// (default 10s, server.DefaultHeartbeatGrace).
	HeartbeatGrace time.Duration
	// MaxHeartbeatsPerSecond makes TTLs grow with the number of nodes so
	// that all of them together send at most this many heartbeats a
	// second; 0 uses the server's default (50).
	MaxHeartbeatsPerSecond float64
	// GC is the servers' garbage collection: job_gc_interval and the
	// *_gc_threshold keys (server_gc.go).
	GC ServerGCConfig
	// NumSchedulers is the number of scheduler workers: nil runs one per
	// CPU core, 0 none (this server makes no scheduling decisions).
	NumSchedulers *int
	// JobMaxCount bounds each task group's count and their sum in a job;
	// 0 uses the server's default (server.DefaultJobMaxCount).
	JobMaxCount int
	// EvalNackTimeout bounds the time a worker spends on one evaluation;
	// 0 uses the server's default (server.DefaultEvalTimeout).
	EvalNackTimeout time.Duration
	// Encrypt is the gossip encryption key (server.encrypt): base64 of
	// 16, 24 or 32 bytes; "" gossips in plain text (config_tls.go).
	Encrypt string
}

// ClientConfig is the client block.
type ClientConfig struct {
	Enabled bool
	// Servers are the servers' RPC addresses ("10.0.0.1:4647"). An agent
	// that is also a server talks to itself in process and needs none.
	Servers []string
	// Join is server_join: more server RPC addresses to find servers at;
	// the client learns the rest of the cluster's servers from them.
	Join      ServerJoinConfig
	NodeClass string
	// NodePool is the node's pool; "" is "default".
	NodePool string
	Meta     map[string]string
	// Options are the client options drover honours (driver.allowlist,
	// driver.denylist, fingerprint.allowlist, fingerprint.denylist,
	// driver.raw_exec.enable), by name.
	Options map[string]string
	// NetworkInterface is the interface whose address the node reports as
	// unique.network.ip-address; "" picks the default route's.
	NetworkInterface string
	// PreferredAddressFamily is "ipv4", "ipv6" or "" (the interface's
	// first address).
	PreferredAddressFamily string
	// CPUTotalCompute (MHz), MemoryTotalMB, DiskTotalMB and DiskFreeMB
	// replace what the fingerprint measures when not 0.
	CPUTotalCompute int
	MemoryTotalMB   int
	DiskTotalMB     int
	DiskFreeMB      int
	// AllocDir is the root of the allocation directories; default
	// <data_dir>/alloc.
	AllocDir string
	// StateDir holds state.db; default <data_dir>/client (the only value
	// supported in this version).
	StateDir string
	Reserved ReservedConfig
	GC       ClientGCConfig
	// MinDynamicPort and MaxDynamicPort bound the ports given to tasks'
	// dynamic ports; 0 uses Nomad's defaults (20000 and 32000).
	MinDynamicPort int
	MaxDynamicPort int
	// CNIPath is where the CNI plugins are (colon-separated); "" is
	// /opt/cni/bin, or /usr/lib/cni (Debian's) when only it has them.
	// CNIConfigDir holds the operators' CNI networks ("cni/<name>");
	// "" is /opt/cni/config. BridgeNetworkName and BridgeNetworkSubnet
	// are the bridge network's; "" is Nomad's ("nomad", 172.26.64.0/20).
	CNIPath             string
	CNIConfigDir        string
	BridgeNetworkName   string
	BridgeNetworkSubnet string
	// BridgeNetworkSubnetIPv6 is the bridge network's IPv6 subnet; "":
	// IPv4 only (Nomad's default).
	BridgeNetworkSubnetIPv6 string
	// HostNetworks are the host_network blocks, by name.
	HostNetworks map[string]*HostNetworkConfig
	// Artifact configures the fetching of tasks' artifacts
	// (config_artifact.go).
	Artifact ArtifactConfig
	// HostVolumes are the host volumes the node offers, by name
	// (host_volume blocks; config_host_volumes.go).
	HostVolumes map[string]HostVolumeConfig
	// Template configures the tasks' templates (the client's template
	// block, config_template.go).
	Template TemplateConfig
}

// ReservedConfig is what the client keeps for itself and the OS.
type ReservedConfig struct {
	CPU      int // MHz
	MemoryMB int
	DiskMB   int
	// ReservedPorts are host ports never given to tasks, on every
	// address: "22,80,8500-8600".
	ReservedPorts string
}

// HostNetworkConfig is a host_network block: the node's addresses that
// jobs reach with host_network = Name, those of Interface or in CIDR
// (both: both must hold), with ports kept from tasks on them.
type HostNetworkConfig struct {
	Name          string
	CIDR          string
	Interface     string
	ReservedPorts string
}

// ClientGCConfig configures the client's garbage collection of terminal
// allocations (read by the client's GC).
type ClientGCConfig struct {
	// Interval between GC passes.
	Interval time.Duration
	// MaxAllocs is the number of allocations the client keeps before it
	// collects terminal ones.
	MaxAllocs int
	// DiskUsageThreshold and InodeUsageThreshold are percentages of the
	// alloc dir's filesystem above which terminal allocations are
	// collected.
	DiskUsageThreshold  float64
	InodeUsageThreshold float64
}

// PluginConfig is one plugin block.
type PluginConfig struct {
	Name string
	// Config is the block's config body as a JSON object ("{}" without one).
	Config json.RawMessage
}

// Defaults of ClientGCConfig, as Nomad's.
const (
	DefaultGCInterval            = time.Minute
	DefaultGCMaxAllocs           = 50
	DefaultGCDiskUsageThreshold  = 80
	DefaultGCInodeUsageThreshold = 70
)

// Logging defaults, as Nomad's.
const (
	DefaultLogRotateDuration = 24 * time.Hour
	DefaultSyslogFacility    = "LOCAL0"
	// DefaultLogFileName is the log file's name when log_file is a
	// directory.
	DefaultLogFileName = "drover.log"
)

// DefaultConfig returns the configuration of `drover agent` without files
// or flags.
func DefaultConfig() *Config {
	name, err := os.Hostname()
	if err != nil || name == "" {
		name = "drover-dev"
	}
	return &Config{
		BindAddr:   DefaultBindAddr,
		HTTPPort:   DefaultHTTPPort,
		RPCPort:    DefaultRPCPort,
		SerfPort:   DefaultSerfPort,
		LogLevel:   DefaultLogLevel,
		Region:     structs.DefaultRegion,
		Datacenter: DefaultDatacenter,
		NodeName:   name,
		Logging: LoggingConfig{
			RotateDuration: DefaultLogRotateDuration,
			SyslogFacility: DefaultSyslogFacility,
		},
		UI:     UIConfig{Enabled: true},
		Server: defaultServerConfig(), // server_gc.go
		ACL:    ACLConfig{TokenTTL: defaultACLTokenTTL, PolicyTTL: defaultACLPolicyTTL, RoleTTL: defaultACLRoleTTL},
		Client: ClientConfig{Artifact: defaultArtifactConfig(), GC: ClientGCConfig{
			Interval:            DefaultGCInterval,
			MaxAllocs:           DefaultGCMaxAllocs,
			DiskUsageThreshold:  DefaultGCDiskUsageThreshold,
			InodeUsageThreshold: DefaultGCInodeUsageThreshold,
		}},
	}
}

// DevConfig returns DefaultConfig in dev mode: a server and a client.
func DevConfig() *Config {
	c := DefaultConfig()
	c.DevMode = true
	c.EnableDebug = true
	c.Server.Enabled = true
	c.Server.BootstrapExpect = 1
	c.Client.Enabled = true
	// As Nomad's dev mode: the node reports its loopback address.
	c.Client.NetworkInterface = loopbackInterface()
	return c
}

// LoadConfigFiles merges the configuration files and directories at paths,
// in order (later wins), into base, which it changes. The Nomad settings
// the files set and drover ignores are added to base.Warnings, one per key.
func LoadConfigFiles(base *Config, paths []string) error {
	files, err := loadConfigPaths(paths)
	if err != nil {
		return err
	}
	for _, f := range files {
		base.merge(f)
		for _, w := range f.warnings {
			base.addWarning(w)
		}
	}
	return nil
}

// addWarning records w unless a warning for its key exists.
func (c *Config) addWarning(w ConfigWarning) {
	for _, have := range c.Warnings {
		if have.Key == w.Key {
			return
		}
	}
	c.Warnings = append(c.Warnings, w)
}

// merge applies what f sets.
func (c *Config) merge(f *parsedFile) {
	fc := &f.cfg
	setVal(&c.NodeName, fc.Name)
	setVal(&c.Region, fc.Region)
	setVal(&c.Datacenter, fc.Datacenter)
	setVal(&c.DataDir, fc.DataDir)
	setVal(&c.PluginDir, fc.PluginDir)
	setVal(&c.BindAddr, fc.BindAddr)
	setVal(&c.LogLevel, fc.Log.Level)
	setVal(&c.Logging.JSON, fc.Log.JSON)
	setVal(&c.Logging.IncludeLocation, fc.Log.IncludeLocation)
	setVal(&c.Logging.File, fc.Log.File)
	setVal(&c.Logging.RotateBytes, fc.Log.RotateBytes)
	setVal(&c.Logging.RotateDuration, fc.Log.RotateDuration)
	setVal(&c.Logging.RotateMaxFiles, fc.Log.RotateMaxFiles)
	setVal(&c.Logging.EnableSyslog, fc.Log.EnableSyslog)
	setVal(&c.Logging.SyslogFacility, fc.Log.SyslogFacility)
	setVal(&c.LeaveOnInterrupt, fc.Leave.OnInterrupt)
	setVal(&c.LeaveOnTerminate, fc.Leave.OnTerminate)
	setVal(&c.EnableDebug, fc.EnableDebug)
	setVal(&c.GCMemoryLimit, fc.GCMemoryLimit)
	if p := fc.Ports; p != nil {
		setVal(&c.HTTPPort, p.HTTP)
		setVal(&c.RPCPort, p.RPC)
		setVal(&c.SerfPort, p.Serf)
	}
	c.Addresses.merge(fc.Addresses)
	c.Advertise.merge(fc.Advertise)
	if a := fc.Autopilot; a != nil {
		ap := structs.DefaultAutopilotConfig()
		if c.Autopilot != nil {
			ap = c.Autopilot
		}
		setVal(&ap.CleanupDeadServers, a.CleanupDeadServers)
		setVal(&ap.LastContactThreshold, a.LastContactThreshold)
		setVal(&ap.ServerStabilizationTime, a.ServerStabilizationTime)
		if a.MaxTrailingLogs != nil {
			ap.MaxTrailingLogs = uint64(max(*a.MaxTrailingLogs, 0))
		}
		if a.MinQuorum != nil {
			ap.MinQuorum = uint(max(*a.MinQuorum, 0))
		}
		c.Autopilot = ap
	}
	if s := fc.Server; s != nil {
		setVal(&c.Server.Enabled, s.Enabled)
		setVal(&c.Server.BootstrapExpect, s.BootstrapExpect)
		setVal(&c.Server.HeartbeatGrace, s.HeartbeatGrace)
		setVal(&c.Server.MinHeartbeatTTL, s.MinHeartbeatTTL)
		setVal(&c.Server.MaxHeartbeatsPerSecond, s.MaxHeartbeatsPerSecond)
		c.Server.GC.merge(s)
		setVal(&c.Server.NumSchedulers, s.NumSchedulers)
		setVal(&c.Server.JobMaxCount, s.JobMaxCount)
		setVal(&c.Server.EvalNackTimeout, s.EvalNackTimeout)
		setVal(&c.Server.RaftMultiplier, s.RaftMultiplier)
		setVal(&c.Server.Encrypt, s.Encrypt)
		c.Server.Join.merge(s.Join)
	}
	if cl := fc.Client; cl != nil {
		c.Client.mergeFile(cl)
	}
	if u := fc.UI; u != nil {
		setVal(&c.UI.Enabled, u.Enabled)
	}
	if a := fc.ACL; a != nil {
		c.mergeACL(a) // config_acl.go
	}
	if t := fc.Telemetry; t != nil {
		c.mergeTelemetry(t)
	}
	if t := fc.TLS; t != nil {
		c.mergeTLS(t) // config_tls.go
	}
	for name, raw := range f.plugins {
		if c.Plugins == nil {
			c.Plugins = map[string]*PluginConfig{}
		}
		c.Plugins[name] = &PluginConfig{Name: name, Config: raw}
	}
}

// mergeFile applies what a file's client block sets.
func (c *ClientConfig) mergeFile(cl *clientBlock) {
	setVal(&c.Enabled, cl.Enabled)
	if cl.Servers != nil {
		c.Servers = slices.Clone(cl.Servers)
	}
	setVal(&c.NodeClass, cl.NodeClass)
	setVal(&c.NodePool, cl.NodePool)
	setVal(&c.AllocDir, cl.AllocDir)
	setVal(&c.StateDir, cl.StateDir)
	setVal(&c.NetworkInterface, cl.NetworkInterface)
	setVal(&c.PreferredAddressFamily, cl.PreferredAddressFamily)
	setVal(&c.CPUTotalCompute, cl.CPUTotalCompute)
	setVal(&c.MemoryTotalMB, cl.MemoryTotalMB)
	setVal(&c.DiskTotalMB, cl.DiskTotalMB)
	setVal(&c.DiskFreeMB, cl.DiskFreeMB)
	setVal(&c.GC.Interval, cl.GCInterval)
	setVal(&c.GC.MaxAllocs, cl.GCMaxAllocs)
	setVal(&c.GC.DiskUsageThreshold, cl.GCDiskUsageThreshold)
	setVal(&c.GC.InodeUsageThreshold, cl.GCInodeUsageThreshold)
	if a := cl.Artifact; a != nil {
		c.Artifact.merge(a)
	}
	c.Join.merge(cl.Join)
	if t := cl.Template; t != nil {
		c.Template.merge(t)
	}
	if r := cl.Reserved; r != nil {
		setVal(&c.Reserved.CPU, r.CPU)
		setVal(&c.Reserved.MemoryMB, r.Memory)
		setVal(&c.Reserved.DiskMB, r.Disk)
		setVal(&c.Reserved.ReservedPorts, r.ReservedPorts)
	}
	setVal(&c.MinDynamicPort, cl.MinDynamicPort)
	setVal(&c.MaxDynamicPort, cl.MaxDynamicPort)
	setVal(&c.CNIPath, cl.CNIPath)
	setVal(&c.CNIConfigDir, cl.CNIConfigDir)
	setVal(&c.BridgeNetworkName, cl.BridgeNetworkName)
	setVal(&c.BridgeNetworkSubnet, cl.BridgeNetworkSubnet)
	setVal(&c.BridgeNetworkSubnetIPv6, cl.BridgeNetworkSubnetIPv6)
	for name, hn := range cl.HostNetworks {
		if c.HostNetworks == nil {
			c.HostNetworks = map[string]*HostNetworkConfig{}
		}
		h := *hn
		c.HostNetworks[name] = &h
	}
	if cl.Meta != nil {
		if c.Meta == nil {
			c.Meta = map[string]string{}
		}
		maps.Copy(c.Meta, cl.Meta)
	}
	if cl.Options != nil {
		if c.Options == nil {
			c.Options = map[string]string{}
		}
		maps.Copy(c.Options, cl.Options)
	}
	c.mergeHostVolumes(cl.HostVolumes)
}

// merge applies what a file's addresses or advertise block sets.
func (a *Addresses) merge(b *addressesBlock) {
	if b == nil {
		return
	}
	setVal(&a.HTTP, b.HTTP)
	setVal(&a.RPC, b.RPC)
	setVal(&a.Serf, b.Serf)
}

// merge applies what a file's server_join sets.
func (j *ServerJoinConfig) merge(b *serverJoinBlock) {
	if b == nil {
		return
	}
	if b.StartJoin != nil {
		j.StartJoin = slices.Clone(b.StartJoin)
	}
	if b.RetryJoin != nil {
		j.RetryJoin = slices.Clone(b.RetryJoin)
	}
	setVal(&j.RetryInterval, b.RetryInterval)
	setVal(&j.RetryMax, b.RetryMax)
}

func setVal[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// Validate checks a merged configuration and fills what derives from
// other fields (alloc and state dirs under DataDir).
func (c *Config) Validate() error {
	var errs []error
	if c.DevMode {
		c.Server.Enabled = true
		c.Client.Enabled = true
	}
	if !c.Server.Enabled && !c.Client.Enabled {
		errs = append(errs, errors.New("the agent must run a server, a client or both: set server { enabled = true } or client { enabled = true } (or -server, -client, -dev)"))
	}
	if err := c.Telemetry.Validate(); err != nil {
		errs = append(errs, err)
	}
	if _, err := parseMemoryLimit(c.GCMemoryLimit); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.validateTLS()...) // config_tls.go
	if !c.DevMode && c.DataDir == "" {
		errs = append(errs, errors.New("data_dir is required unless in -dev mode: set data_dir in the config file or -data-dir"))
	}
	if c.DataDir != "" && !filepath.IsAbs(c.DataDir) {
		abs, err := filepath.Abs(c.DataDir)
		if err != nil {
			errs = append(errs, fmt.Errorf("data_dir %q: %w", c.DataDir, err))
		}
		c.DataDir = abs
	}
	if c.DevMode && c.Server.BootstrapExpect > 1 {
		errs = append(errs, fmt.Errorf("server.bootstrap_expect = %d: -dev runs one server in memory; run servers with a data_dir to form a cluster (docs/cluster.md)", c.Server.BootstrapExpect))
	}
	if c.Server.BootstrapExpect < 0 {
		errs = append(errs, fmt.Errorf("server.bootstrap_expect = %d must not be negative", c.Server.BootstrapExpect))
	}
	if c.Server.RaftMultiplier < 0 || c.Server.RaftMultiplier > 10 {
		errs = append(errs, fmt.Errorf("server.raft_multiplier = %d must be between 1 and 10 (0 is 1)", c.Server.RaftMultiplier))
	}
	if c.Server.Join.RetryMax < 0 || c.Client.Join.RetryMax < 0 {
		errs = append(errs, errors.New("server_join.retry_max must not be negative (0 retries without limit)"))
	}
	if c.Server.Join.RetryInterval < 0 || c.Client.Join.RetryInterval < 0 {
		errs = append(errs, errors.New("server_join.retry_interval must not be negative"))
	}
	if c.Server.Recover && (c.DevMode || !c.Server.Enabled) {
		errs = append(errs, errors.New("-recover applies to a server with a data_dir, not to a client or a -dev agent"))
	}
	if n := c.Server.NumSchedulers; n != nil && *n < 0 {
		errs = append(errs, fmt.Errorf("server.num_schedulers = %d must not be negative: use 0 to schedule nothing on this server", *n))
	}
	if c.Server.JobMaxCount < 0 {
		errs = append(errs, fmt.Errorf("server.job_max_count = %d must not be negative (0 uses the default)", c.Server.JobMaxCount))
	}
	if c.Client.Enabled && !c.Server.Enabled && len(c.Client.Servers) == 0 && len(c.Client.Join.addresses()) == 0 {
		errs = append(errs, errors.New("a client-only agent needs the servers' addresses: set client { servers = [\"host:4647\"] } (or client { server_join { retry_join = [...] } }), or -servers"))
	}
	for name, port := range map[string]int{"ports.http": c.HTTPPort, "ports.rpc": c.RPCPort, "ports.serf": c.SerfPort} {
		if port < 0 || port > 65535 {
			errs = append(errs, fmt.Errorf("%s = %d is out of range [0, 65535]", name, port))
		}
	}
	if _, err := parseLogLevel(c.LogLevel); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.Logging.validate()...)
	switch c.Client.PreferredAddressFamily {
	case "", "ipv4", "ipv6":
	default:
		errs = append(errs, fmt.Errorf("client.preferred_address_family = %q must be \"ipv4\" or \"ipv6\"", c.Client.PreferredAddressFamily))
	}
	if c.Client.CPUTotalCompute < 0 || c.Client.MemoryTotalMB < 0 || c.Client.DiskTotalMB < 0 || c.Client.DiskFreeMB < 0 {
		errs = append(errs, errors.New("client cpu_total_compute, memory_total_mb, disk_total_mb and disk_free_mb must not be negative (0 keeps what the fingerprint measures)"))
	}
	if err := c.Client.Template.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Client.Artifact.validate(); err != nil {
		errs = append(errs, err)
	}
	gc := c.Client.GC
	if gc.MaxAllocs < 0 || gc.DiskUsageThreshold < 0 || gc.DiskUsageThreshold > 100 || gc.InodeUsageThreshold < 0 || gc.InodeUsageThreshold > 100 {
		errs = append(errs, errors.New("client gc settings: gc_max_allocs must be >= 0 and the usage thresholds percentages in [0, 100]"))
	}
	if c.Client.Reserved.CPU < 0 || c.Client.Reserved.MemoryMB < 0 || c.Client.Reserved.DiskMB < 0 {
		errs = append(errs, errors.New("client.reserved values must not be negative"))
	}
	errs = append(errs, c.Client.networkErrors()...) // config_network.go
	if c.DataDir != "" {
		if c.Client.AllocDir == "" {
			c.Client.AllocDir = filepath.Join(c.DataDir, "alloc")
		}
		def := filepath.Join(c.DataDir, "client")
		if c.Client.StateDir == "" {
			c.Client.StateDir = def
		} else if !c.DevMode && filepath.Clean(c.Client.StateDir) != def {
			errs = append(errs, fmt.Errorf("client.state_dir = %q: this version keeps the client state under <data_dir>/client (%s); remove state_dir or set data_dir", c.Client.StateDir, def))
		}
	}
	return errors.Join(errs...)
}

// pluginEnabled reports whether a plugin block enables the named plugin:
// the block exists and its config does not say enabled = false; with
// needEnabled, the config must say enabled = true.
func (c *Config) pluginEnabled(name string, needEnabled bool) (bool, error) {
	p := c.Plugins[name]
	if p == nil {
		return false, nil
	}
	var body struct {
		Enabled *bool `json:"enabled"`
	}
	if len(p.Config) > 0 {
		if err := json.Unmarshal(p.Config, &body); err != nil {
			return false, fmt.Errorf("plugin %q: config.enabled must be a bool: %w", name, err)
		}
	}
	if body.Enabled == nil {
		return !needEnabled, nil
	}
	return *body.Enabled, nil
}

// httpBind and rpcBind are the listeners' bind hosts.
func (c *Config) httpBind() string { return firstNonEmpty(c.Addresses.HTTP, c.BindAddr) }
func (c *Config) rpcBind() string  { return firstNonEmpty(c.Addresses.RPC, c.BindAddr) }
func (c *Config) serfBind() string { return firstNonEmpty(c.Addresses.Serf, c.BindAddr) }

// describePlugins lists the configured plugins for the banner.
func (c *Config) describePlugins() string {
	names := slices.Sorted(maps.Keys(c.Plugins))
	return strings.Join(names, ", ")
}

// loopbackInterface names this host's loopback interface ("lo" on Linux).
func loopbackInterface() string {
	ifaces, err := net.Interfaces()
	if err == nil {
		for _, i := range ifaces {
			if i.Flags&net.FlagLoopback != 0 {
				return i.Name
			}
		}
	}
	return "lo"
}

// firstNonEmpty returns the first of vs that is not "".
func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
