package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/drover-io/drover/agent/telemetry"
	"github.com/drover-io/drover/client"
	"github.com/drover-io/drover/client/rpcclient"
	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/httpapi"
	"github.com/drover-io/drover/jobspec"
	"github.com/drover-io/drover/logmonitor"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/server"
	"github.com/drover-io/drover/server/keyring"
	"github.com/drover-io/drover/structs"
	"github.com/drover-io/drover/tlsutil"
	"github.com/drover-io/drover/version"
)

// Version is drover's version as the agent reports it (version.Version).
const Version = version.Version

// Agent defaults.
const (
	DefaultBindAddr   = "127.0.0.1"
	DefaultHTTPPort   = 4646
	DefaultRPCPort    = 4647
	DefaultSerfPort   = 4648
	DefaultLogLevel   = "info"
	DefaultDatacenter = "dc1"
)

// httpShutdownTimeout bounds how long in-flight requests may take to finish
// at shutdown (blocking queries are cancelled at once).
const httpShutdownTimeout = 5 * time.Second

// Agent is a running drover agent: a server, a client or both, and the
// HTTP API.
type Agent struct {
	cfg    *Config
	logger *slog.Logger
	// monitor sees every record logger logs, for GET /v1/agent/monitor.
	monitor *logmonitor.Monitor

	server    *server.Server
	raft      *raftStores       // persistent raft storage; nil in dev mode or without a server
	rpcClient *rpcclient.Client // a client-only agent's link to the servers
	// discover refreshes a client-only agent's server list; nil otherwise.
	discover *serverDiscovery
	client   *client.Client
	// clientStarted: a combined agent started its client in NewAgent.
	clientStarted bool
	// stateDB is the client's state file until the client owns it.
	stateDB state.StateDB
	// tempDir is the dev-mode directory removed at shutdown; "" when the
	// alloc dir lives under DataDir.
	tempDir  string
	allocDir string
	httpAddr string       // set once the listener exists, never changed
	rpcAddr  string       // the RPC listener's address, or the reported one in dev mode
	ln       net.Listener // the HTTP listener until Start hands it over

	// memLimit applies gc_memory_limit (memlimit.go); nil when it sets
	// nothing.
	memLimit *memoryLimiter

	// telemetry holds the metric sinks and samples the gauges
	// (telemetry.go).
	telemetry *telemetry.Telemetry
	// tls holds the certificates of the tls block; nil without TLS
	// (config_tls.go).
	tls *tlsutil.Configurator

	mu       sync.Mutex // guards the fields below
	http     *httpapi.Server
	shutdown bool
}

// NewAgent builds an agent from cfg: it binds the HTTP port (and, for a
// server outside dev mode, the RPC port), opens the persistent state
// (raft log and snapshots, client state file) and creates the server and
// the client. A combined agent (server and client) creates both at once
// and starts its client here, so that restored tasks are re-attached
// while the server elects itself. Start starts the rest; Shutdown
// releases it, whether or not it was started. Empty string fields of cfg get their defaults; port 0
// means a free port. An unusable client state file (corrupt, newer
// schema, locked) fails NewAgent with an error naming the file; nothing
// is deleted.
func NewAgent(cfg *Config, logger *slog.Logger) (*Agent, error) {
	return NewAgentContext(context.Background(), cfg, logger)
}

// NewAgentContext is NewAgent whose wait for the server's leadership
// (indefinite otherwise, with progress in the log) ends when ctx is done:
// then it releases what it built and returns the error.
func NewAgentContext(ctx context.Context, cfg *Config, logger *slog.Logger) (*Agent, error) {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	c := *cfg
	c.Client.Servers = slices.Clone(cfg.Client.Servers)
	c.Client.Meta = maps.Clone(cfg.Client.Meta)
	c.Client.Options = maps.Clone(cfg.Client.Options)
	c.Plugins = maps.Clone(cfg.Plugins)
	defaults := DefaultConfig()
	c.BindAddr = firstNonEmpty(c.BindAddr, defaults.BindAddr)
	c.LogLevel = firstNonEmpty(c.LogLevel, defaults.LogLevel)
	c.Region = firstNonEmpty(c.Region, defaults.Region)
	c.Datacenter = firstNonEmpty(c.Datacenter, defaults.Datacenter)
	c.NodeName = firstNonEmpty(c.NodeName, defaults.NodeName)
	if c.DevMode && c.RPCPort == 0 {
		c.RPCPort = DefaultRPCPort // reported only: a dev agent does not listen on it
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// Every part of the agent logs through the monitor, so that
	// `drover monitor` sees it all, at the level it asks for.
	mon := logmonitor.New()
	logger = slog.New(mon.Handler(logger.Handler()))
	a := &Agent{cfg: &c, logger: logger, monitor: mon}
	if err := a.setup(ctx); err != nil {
		if rerr := a.teardown(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, err
	}
	return a, nil
}

// setup creates the listeners, the server and the client.
func (a *Agent) setup(ctx context.Context) error {
	a.memLimit = startMemoryLimiter(a.cfg.GCMemoryLimit, a.logger)
	if err := a.setupTelemetry(); err != nil {
		return err
	}
	if a.cfg.Client.Enabled {
		// The state file first: a bad one stops the agent before anything
		// else starts.
		if !a.cfg.DevMode {
			db, err := state.NewBoltStateDB(a.cfg.DataDir, a.logger.With("component", "client"),
				state.WithAllocDir(a.cfg.Client.AllocDir))
			if err != nil {
				return fmt.Errorf("open client state: %w", err)
			}
			a.stateDB = db
		}
		if err := a.setupAllocDir(); err != nil {
			return err
		}
	}
	tc, err := a.tlsConfigurator()
	if err != nil {
		return err
	}
	a.tls = tc
	addr := net.JoinHostPort(a.cfg.httpBind(), strconv.Itoa(a.cfg.HTTPPort))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen for HTTP on %s: %w", addr, err)
	}
	a.httpAddr = ln.Addr().String()
	if a.cfg.TLS.EnableHTTP {
		ln = tls.NewListener(ln, a.tls.HTTPServer())
	}
	a.ln = ln
	a.rpcAddr = net.JoinHostPort(a.cfg.rpcBind(), strconv.Itoa(a.cfg.RPCPort))

	switch {
	case a.cfg.Server.Enabled && a.cfg.Client.Enabled:
		return a.setupCombined(ctx)
	case a.cfg.Server.Enabled:
		return a.setupServer(ctx)
	case a.cfg.Client.Enabled:
		return a.setupClient(nil)
	}
	return nil
}

// setupCombined creates the server and the client of a combined agent at
// the same time and starts the client at once: it restores its allocations
// and re-attaches their tasks from local state while the server elects
// itself (a second or so after a restart); the client's calls to the
// server wait until the server exists, and fail if it could not start.
func (a *Agent) setupCombined(ctx context.Context) error {
	link := newLateServer()
	serverErr := make(chan error, 1)
	go func() { serverErr <- a.setupServer(ctx) }()
	err := a.setupClient(link)
	if err == nil {
		if err = a.client.Start(); err != nil {
			err = fmt.Errorf("start client: %w", err)
		}
	}
	serr := <-serverErr // a.server and the fields setupServer sets are ours again
	if serr != nil {
		link.set(nil, serr)
		return errors.Join(serr, err)
	}
	link.set(a.server, nil)
	a.clientStarted = err == nil
	return err
}

// setupAllocDir picks the alloc dir: client.alloc_dir (default
// <data_dir>/alloc), or in dev mode without a data_dir a temporary one.
func (a *Agent) setupAllocDir() error {
	switch {
	case a.cfg.Client.AllocDir != "":
		a.allocDir = a.cfg.Client.AllocDir
	case a.cfg.DataDir != "":
		a.allocDir = filepath.Join(a.cfg.DataDir, "alloc")
	default:
		dir, err := os.MkdirTemp("", "drover-dev-")
		if err != nil {
			return fmt.Errorf("create dev mode temp dir: %w", err)
		}
		a.tempDir = dir
		a.allocDir = filepath.Join(dir, "alloc")
	}
	if err := os.MkdirAll(a.allocDir, 0o755); err != nil {
		return fmt.Errorf("create alloc dir: %w", err)
	}
	return nil
}

// setupServer creates the server: in dev mode with in-memory raft, else
// with raft's log and snapshots under <data_dir>/server/raft, and the
// client RPCs served on the RPC port.
func (a *Agent) setupServer(ctx context.Context) error {
	scfg := &server.Config{
		Logger:                 a.logger.With("component", "server"),
		NodeName:               a.cfg.NodeName + "." + a.cfg.Region,
		SelfRPCAddr:            a.rpcAddr,
		Region:                 a.cfg.Region,
		Datacenter:             a.cfg.Datacenter,
		HeartbeatTTL:           a.cfg.Server.MinHeartbeatTTL,
		HeartbeatGrace:         a.cfg.Server.HeartbeatGrace,
		ACLEnabled:             a.cfg.ACL.Enabled,
		MaxHeartbeatsPerSecond: a.cfg.Server.MaxHeartbeatsPerSecond,
		GC:                     a.cfg.Server.GC.serverGC(),
		JobMaxCount:            a.cfg.Server.JobMaxCount,
		EvalTimeout:            a.cfg.Server.EvalNackTimeout,
		TaskConfigs:            TaskConfigSchemas(),
		Timers:                 a.telemetry.Metrics(),
	}
	if n := a.cfg.Server.NumSchedulers; n != nil {
		scfg.NumWorkers = *n
		if *n == 0 {
			scfg.NumWorkers = -1 // none; the server's 0 means one per core
		}
	}
	var rpcLn net.Listener
	if !a.cfg.DevMode {
		kek, err := keyring.LoadKEK(filepath.Join(a.cfg.DataDir, serverDirName, keyring.KEKFileName))
		if err != nil {
			return fmt.Errorf("load the keyring's key-encryption key: %w", err)
		}
		scfg.KEK = kek
		scfg.ACLBootstrapResetFile = filepath.Join(a.cfg.DataDir, serverDirName, aclBootstrapResetFile)
		rs, err := openRaftStores(a.cfg.DataDir, a.logger)
		if err != nil {
			return err
		}
		a.raft = rs
		rs.apply(scfg, a.cfg.Server.RaftMultiplier, a.cfg.bootstrapsAlone())
		scfg.Recover = a.cfg.Server.Recover
		rpcLn, err = net.Listen("tcp", a.rpcAddr)
		if err != nil {
			return fmt.Errorf("listen for RPC on %s: %w", a.rpcAddr, err)
		}
		a.rpcAddr = rpcLn.Addr().String()
		cc, err := a.clusterConfig(rpcLn, rs)
		if err != nil {
			_ = rpcLn.Close()
			return err
		}
		scfg.Cluster = cc
		scfg.Autopilot = a.cfg.Autopilot
	}
	srv, err := server.NewServer(ctx, scfg)
	if err != nil {
		// The server closed the listener.
		if errors.Is(err, server.ErrDamagedRaftState) && a.raft != nil {
			err = fmt.Errorf("%w; the raft log and snapshots are in %s, left untouched: restore that directory from a backup, "+
				"or move it aside to start this server with an empty cluster state", err, filepath.Dir(a.raft.store.Path()))
		}
		return fmt.Errorf("create server: %w", err)
	}
	a.server = srv
	return nil
}

// setupClient creates the client, its state DB and its link to the
// servers: rpc (the in-process server of a combined agent), or when nil
// an RPC client of the configured servers.
func (a *Agent) setupClient(rpc rpcapi.Conn) error {
	clientLogger := a.logger.With("component", "client")
	if rpc == nil {
		servers := withDefaultPort(append(slices.Clone(a.cfg.Client.Servers), a.cfg.Client.Join.addresses()...), DefaultRPCPort)
		rc, err := rpcclient.New(&rpcclient.Config{Servers: servers, Logger: clientLogger, TLS: a.rpcClientTLS()})
		if err != nil {
			return err
		}
		a.rpcClient = rc
		rpc = rc
		a.discover = startDiscovery(rc, rc.Servers(), a.cfg.Client.Join.RetryMax, clientLogger)
	}
	drivers, err := driverManagerConfig(a.cfg)
	if err != nil {
		return err
	}
	devices := deviceManagerConfig(a.cfg, drivers)
	r := a.cfg.Client.Reserved
	cl, err := client.New(&client.Config{
		Logger:     clientLogger,
		RPC:        rpc,
		StateDB:    a.stateDB,
		AllocDir:   a.allocDir,
		Region:     a.cfg.Region,
		Datacenter: a.cfg.Datacenter,
		NodeName:   a.cfg.NodeName,
		NodeClass:  a.cfg.Client.NodeClass,
		NodePool:   a.cfg.Client.NodePool,
		Meta:       a.cfg.Client.Meta,
		Fingerprint: client.FingerprintConfig{
			Allowlist:              a.cfg.Client.optionList(optFingerprintAllowlist),
			Denylist:               a.cfg.Client.optionList(optFingerprintDenylist),
			NetworkInterface:       a.cfg.Client.NetworkInterface,
			PreferredAddressFamily: a.cfg.Client.PreferredAddressFamily,
			CPUTotalCompute:        a.cfg.Client.CPUTotalCompute,
			MemoryTotalMB:          a.cfg.Client.MemoryTotalMB,
			DiskTotalMB:            a.cfg.Client.DiskTotalMB,
			DiskFreeMB:             a.cfg.Client.DiskFreeMB,
			HostNetworks:           a.cfg.Client.hostNetworks(), // config_network.go
		},
		MinDynamicPort: a.cfg.Client.MinDynamicPort,
		MaxDynamicPort: a.cfg.Client.MaxDynamicPort,
		HTTPAddr:       a.httpAddr,
		TaskAPI:        true,                             // secrets/api.sock in every task (docs/identity.md)
		SecretsTmpfs:   true,                             // secrets on a tmpfs (docs/security.md)
		HTTPTLS:        a.httpClientTLS(),                // config_tls.go
		HostVolumes:    a.cfg.Client.clientHostVolumes(), // config_host_volumes.go
		Network:        a.networkConfig(),                // config_cni.go
		Reserved: &structs.NodeReservedResources{
			Cpu:      structs.NodeReservedCpuResources{CpuShares: uint64(r.CPU)},
			Memory:   structs.NodeReservedMemoryResources{MemoryMB: uint64(r.MemoryMB)},
			Disk:     structs.NodeReservedDiskResources{DiskMB: uint64(r.DiskMB)},
			Networks: structs.NodeReservedNetworkResources{ReservedHostPorts: r.ReservedPorts},
		},
		Version:  Version,
		DevMode:  a.cfg.DevMode,
		Artifact: a.cfg.Client.Artifact.getterConfig(),
		Template: a.cfg.Client.Template.clientConfig(),
		GC: client.GCConfig{
			Interval:            a.cfg.Client.GC.Interval,
			MaxAllocs:           a.cfg.Client.GC.MaxAllocs,
			DiskUsageThreshold:  a.cfg.Client.GC.DiskUsageThreshold,
			InodeUsageThreshold: a.cfg.Client.GC.InodeUsageThreshold,
		},
		// An invalid plugin block fails client.New, naming the plugin
		// and the field.
		DriverManager: drivers,
		DeviceManager: devices,
	})
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	a.client = cl
	a.stateDB = nil // the client closes it
	return nil
}

// Start starts the client (unless NewAgent did), the RPC server and
// serves the HTTP API.
func (a *Agent) Start() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.shutdown {
		return errors.New("agent is shut down")
	}
	if a.http != nil {
		return errors.New("agent already started")
	}
	if a.client != nil && !a.clientStarted {
		if err := a.client.Start(); err != nil {
			return fmt.Errorf("start client: %w", err)
		}
	}
	// A client-only agent forwards the API to the servers.
	var rpc rpcapi.Conn = a.rpcClient
	if a.server != nil {
		rpc = a.server
	}
	var nc httpapi.NodeClient // nil: no client
	var nodeToken func() string
	if a.client != nil {
		nc = a.client
		if a.server == nil {
			nodeToken = a.client.NodeSecret
		}
	}
	a.http = httpapi.New(a.ln, &httpapi.Config{
		RPC: rpc, Agent: agentInfo{a}, Client: nc, ParseJob: jobspec.ParseRequest, Logger: a.logger.With("component", "http"),
		UI: a.cfg.UI.Enabled, Monitor: a.monitor, EnableDebug: a.cfg.EnableDebug, Metrics: a.telemetry, Events: a.httpEvents(),
		ForwardTLS: a.httpClientTLS(),  // config_tls.go
		ACL:        a.aclResolver(rpc), // acl_resolver.go
		NodeToken:  nodeToken,
	})
	a.ln = nil // owned by the HTTP server now
	a.http.Serve()
	a.startTelemetry()
	a.logger.Info("agent started", "http_addr", a.httpAddr, "node_id", a.NodeID())
	return nil
}

// leaveTimeout bounds how long a leaving server waits to be removed
// from raft.
const leaveTimeout = 15 * time.Second

// Leave is what leave_on_interrupt and leave_on_terminate ask for before
// the agent stops: a server leaves its cluster for good (a leader hands
// leadership over first; the leader then removes it from raft), so that
// the others need not count it in their quorum. A client has nothing to
// do without drain_on_shutdown, which drover does not have yet, so its
// tasks keep running as on any stop. Leave logs what it did; the shutdown
// that follows does the rest.
func (a *Agent) Leave() {
	if a.server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), leaveTimeout)
		defer cancel()
		if err := a.server.Leave(ctx); err != nil {
			a.logger.Error("server could not leave the cluster cleanly", "error", err)
		} else {
			a.logger.Info("server left the cluster")
		}
	}
	if a.client != nil {
		a.logger.Info("client leaving the cluster", "node_id", a.NodeID(),
			"note", "no drain_on_shutdown: tasks keep running")
	}
}

// Shutdown stops the HTTP API, then the client, then the server, and
// removes the dev-mode temporary directory. In dev mode the client
// destroys its allocations, so no task outlives the agent; otherwise
// tasks keep running and a restarted agent re-attaches to them. It is
// safe to call twice.
func (a *Agent) Shutdown() error {
	a.mu.Lock()
	if a.shutdown {
		a.mu.Unlock()
		return nil
	}
	a.shutdown = true
	hs := a.http
	a.mu.Unlock()

	var errs []error
	if hs != nil {
		ctx, cancel := context.WithTimeout(context.Background(), httpShutdownTimeout)
		if err := hs.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
		cancel()
	}
	if err := a.teardown(); err != nil {
		errs = append(errs, err)
	}
	a.logger.Info("agent stopped")
	return errors.Join(errs...)
}

// teardown stops the client, the RPC server and the server, closes the
// raft stores and removes the temp dir.
func (a *Agent) teardown() error {
	var errs []error
	if a.telemetry != nil {
		a.telemetry.Stop()
	}
	if a.ln != nil {
		_ = a.ln.Close() // never served: nothing to wait for
		a.ln = nil
	}
	if a.client != nil {
		if err := a.client.Shutdown(); err != nil {
			errs = append(errs, fmt.Errorf("client shutdown: %w", err))
		}
	}
	if a.stateDB != nil {
		if err := a.stateDB.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close client state: %w", err))
		}
	}
	if a.rpcClient != nil {
		a.rpcClient.Close()
	}
	if a.discover != nil {
		a.discover.stop()
	}
	if a.server != nil {
		if err := a.server.Shutdown(); err != nil {
			errs = append(errs, fmt.Errorf("server shutdown: %w", err))
		}
	}
	if a.raft != nil {
		if err := a.raft.close(); err != nil {
			errs = append(errs, err)
		}
	}
	if a.tempDir != "" {
		if err := os.RemoveAll(a.tempDir); err != nil {
			errs = append(errs, fmt.Errorf("remove dev mode dir: %w", err))
		}
	}
	a.memLimit.Stop()
	a.memLimit = nil
	return errors.Join(errs...)
}

// HTTPAddr returns the address the HTTP API listens on ("127.0.0.1:4646");
// with HTTPPort 0 it holds the port picked. It is set by NewAgent.
func (a *Agent) HTTPAddr() string { return a.httpAddr }

// NodeID returns the ID of the agent's client node, or "" without a client.
func (a *Agent) NodeID() string {
	if a.client == nil {
		return ""
	}
	return a.client.NodeID()
}

// ServerEnabled reports whether the agent runs a server.
func (a *Agent) ServerEnabled() bool { return a.server != nil }

// ClientEnabled reports whether the agent runs a client.
func (a *Agent) ClientEnabled() bool { return a.client != nil }

// RPCAddr returns the address the server's RPC listener binds
// ("127.0.0.1:4647"); with RPCPort 0 it holds the port picked. A dev agent
// reports the configured address without listening on it.
func (a *Agent) RPCAddr() string { return a.rpcAddr }
