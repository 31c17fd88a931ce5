package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/drover-io/drover/structs"
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
	// free port (see RPCAddr). Dev agents do not listen on it.
	RPCPort int
	// Addresses overrides BindAddr per listener.
	Addresses Addresses
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
	// Region and Datacenter place the agent; NodeName names it (and its
	// client node).
	Region     string
	Datacenter string
	NodeName   string

	Server ServerConfig
	Client ClientConfig
	// Plugins holds each `plugin "NAME" { config { ... } }` block by name.
	Plugins map[string]*PluginConfig
}

// Addresses are per-listener bind addresses; empty means BindAddr.
type Addresses struct {
	HTTP string
	RPC  string
}

// ServerConfig is the server block.
type ServerConfig struct {
	Enabled bool
	// BootstrapExpect is the number of servers to wait for before
	// bootstrapping; only 1 (a single server) is supported, and 0 means 1.
	BootstrapExpect int
	// MinHeartbeatTTL is how long a client may stay silent before its node
	// is marked down; 0 uses the server's default (10s).
	MinHeartbeatTTL time.Duration
	// HeartbeatGrace is carried for Nomad compatibility; the server's
	// single TTL (MinHeartbeatTTL) includes it for now.
	HeartbeatGrace time.Duration
	// NumSchedulers is the number of scheduler workers: nil runs one per
	// CPU core, 0 none (this server makes no scheduling decisions).
	NumSchedulers *int
	// JobMaxCount bounds each task group's count and their sum in a job;
	// 0 uses the server's default (server.DefaultJobMaxCount).
	JobMaxCount int
	// EvalNackTimeout bounds the time a worker spends on one evaluation;
	// 0 uses the server's default (server.DefaultEvalTimeout).
	EvalNackTimeout time.Duration
}

// ClientConfig is the client block.
type ClientConfig struct {
	Enabled bool
	// Servers are the servers' RPC addresses ("10.0.0.1:4647"). An agent
	// that is also a server talks to itself in process and needs none.
	Servers   []string
	NodeClass string
	Meta      map[string]string
	// AllocDir is the root of the allocation directories; default
	// <data_dir>/alloc.
	AllocDir string
	// StateDir holds state.db; default <data_dir>/client (the only value
	// supported in this version).
	StateDir string
	Reserved ReservedConfig
	GC       ClientGCConfig
}

// ReservedConfig is what the client keeps for itself and the OS.
type ReservedConfig struct {
	CPU      int // MHz
	MemoryMB int
	DiskMB   int
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
		LogLevel:   DefaultLogLevel,
		Region:     structs.DefaultRegion,
		Datacenter: DefaultDatacenter,
		NodeName:   name,
		Client: ClientConfig{GC: ClientGCConfig{
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
	c.Server.Enabled = true
	c.Server.BootstrapExpect = 1
	c.Client.Enabled = true
	return c
}

// LoadConfigFiles merges the configuration files and directories at paths,
// in order (later wins), into base, which it changes.
func LoadConfigFiles(base *Config, paths []string) error {
	files, err := loadConfigPaths(paths)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := base.merge(f); err != nil {
			return err
		}
	}
	return nil
}

// merge applies what f sets.
func (c *Config) merge(f *parsedFile) error {
	fc := &f.cfg
	setStr(&c.NodeName, fc.Name)
	setStr(&c.Region, fc.Region)
	setStr(&c.Datacenter, fc.Datacenter)
	setStr(&c.DataDir, fc.DataDir)
	setStr(&c.PluginDir, fc.PluginDir)
	setStr(&c.BindAddr, fc.BindAddr)
	setStr(&c.LogLevel, fc.LogLevel)
	if p := fc.Ports; p != nil {
		setVal(&c.HTTPPort, p.HTTP)
		setVal(&c.RPCPort, p.RPC)
	}
	if a := fc.Addresses; a != nil {
		setStr(&c.Addresses.HTTP, a.HTTP)
		setStr(&c.Addresses.RPC, a.RPC)
	}
	if s := fc.Server; s != nil {
		setVal(&c.Server.Enabled, s.Enabled)
		setVal(&c.Server.BootstrapExpect, s.BootstrapExpect)
		if err := setDuration(&c.Server.HeartbeatGrace, s.HeartbeatGrace, f.path, "server.heartbeat_grace"); err != nil {
			return err
		}
		if err := setDuration(&c.Server.MinHeartbeatTTL, s.MinHeartbeatTTL, f.path, "server.min_heartbeat_ttl"); err != nil {
			return err
		}
		if s.NumSchedulers != nil {
			n := *s.NumSchedulers
			c.Server.NumSchedulers = &n
		}
		setVal(&c.Server.JobMaxCount, s.JobMaxCount)
		if err := setDuration(&c.Server.EvalNackTimeout, s.EvalNackTimeout, f.path, "server.eval_nack_timeout"); err != nil {
			return err
		}
	}
	if cl := fc.Client; cl != nil {
		setVal(&c.Client.Enabled, cl.Enabled)
		if cl.Servers != nil {
			c.Client.Servers = slices.Clone(cl.Servers)
		}
		setStr(&c.Client.NodeClass, cl.NodeClass)
		setStr(&c.Client.AllocDir, cl.AllocDir)
		setStr(&c.Client.StateDir, cl.StateDir)
		if err := setDuration(&c.Client.GC.Interval, cl.GCInterval, f.path, "client.gc_interval"); err != nil {
			return err
		}
		setVal(&c.Client.GC.MaxAllocs, cl.GCMaxAllocs)
		setVal(&c.Client.GC.DiskUsageThreshold, cl.GCDiskUsageThreshold)
		setVal(&c.Client.GC.InodeUsageThreshold, cl.GCInodeUsageThreshold)
		if r := cl.Reserved; r != nil {
			setVal(&c.Client.Reserved.CPU, r.CPU)
			setVal(&c.Client.Reserved.MemoryMB, r.Memory)
			setVal(&c.Client.Reserved.DiskMB, r.Disk)
		}
		if f.meta != nil {
			if c.Client.Meta == nil {
				c.Client.Meta = map[string]string{}
			}
			maps.Copy(c.Client.Meta, f.meta)
		}
	}
	for name, raw := range f.plugins {
		if c.Plugins == nil {
			c.Plugins = map[string]*PluginConfig{}
		}
		c.Plugins[name] = &PluginConfig{Name: name, Config: raw}
	}
	return nil
}

func setStr(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}

func setVal[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func setDuration(dst *time.Duration, v *string, path, key string) error {
	if v == nil {
		return nil
	}
	d, err := time.ParseDuration(*v)
	if err != nil || d < 0 {
		return fmt.Errorf("%s: %s = %q is not a duration such as \"30s\" or \"5m\"", path, key, *v)
	}
	*dst = d
	return nil
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
	if c.Server.Enabled && c.Server.BootstrapExpect > 1 {
		errs = append(errs, fmt.Errorf("server.bootstrap_expect = %d: this version of drover runs a single server; set bootstrap_expect = 1 (multi-server clusters come in a later version)", c.Server.BootstrapExpect))
	}
	if c.Server.BootstrapExpect < 0 {
		errs = append(errs, fmt.Errorf("server.bootstrap_expect = %d must not be negative", c.Server.BootstrapExpect))
	}
	if n := c.Server.NumSchedulers; n != nil && *n < 0 {
		errs = append(errs, fmt.Errorf("server.num_schedulers = %d must not be negative: use 0 to schedule nothing on this server", *n))
	}
	if c.Server.JobMaxCount < 0 {
		errs = append(errs, fmt.Errorf("server.job_max_count = %d must not be negative (0 uses the default)", c.Server.JobMaxCount))
	}
	if c.Client.Enabled && !c.Server.Enabled && len(c.Client.Servers) == 0 {
		errs = append(errs, errors.New("a client-only agent needs the servers' addresses: set client { servers = [\"host:4647\"] } or -servers"))
	}
	for name, port := range map[string]int{"ports.http": c.HTTPPort, "ports.rpc": c.RPCPort} {
		if port < 0 || port > 65535 {
			errs = append(errs, fmt.Errorf("%s = %d is out of range [0, 65535]", name, port))
		}
	}
	if _, err := parseLogLevel(c.LogLevel); err != nil {
		errs = append(errs, err)
	}
	gc := c.Client.GC
	if gc.MaxAllocs < 0 || gc.DiskUsageThreshold < 0 || gc.DiskUsageThreshold > 100 || gc.InodeUsageThreshold < 0 || gc.InodeUsageThreshold > 100 {
		errs = append(errs, errors.New("client gc settings: gc_max_allocs must be >= 0 and the usage thresholds percentages in [0, 100]"))
	}
	if c.Client.Reserved.CPU < 0 || c.Client.Reserved.MemoryMB < 0 || c.Client.Reserved.DiskMB < 0 {
		errs = append(errs, errors.New("client.reserved values must not be negative"))
	}
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

// describePlugins lists the configured plugins for the banner.
func (c *Config) describePlugins() string {
	names := slices.Sorted(maps.Keys(c.Plugins))
	return strings.Join(names, ", ")
}
