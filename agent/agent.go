package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/drover-io/drover/client"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/drivers/rawexec"
	"github.com/drover-io/drover/jobspec"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/server"
	"github.com/drover-io/drover/structs"
)

// Version is drover's version as the agent reports it.
const Version = "0.1.0-dev"

// Agent defaults.
const (
	DefaultBindAddr   = "127.0.0.1"
	DefaultHTTPPort   = 4646
	DefaultRPCPort    = 4647
	DefaultLogLevel   = "info"
	DefaultDatacenter = "dc1"
)

// httpShutdownTimeout bounds how long in-flight requests may take to finish
// at shutdown (blocking queries are cancelled at once).
const httpShutdownTimeout = 5 * time.Second

// Config is the agent's configuration.
type Config struct {
	// DevMode runs a server and a client in one process with in-memory
	// state, and the raw_exec and mock_driver drivers. It is the only mode
	// this version supports.
	DevMode bool
	// BindAddr is the address the HTTP API listens on.
	BindAddr string
	// HTTPPort is the HTTP API port; 0 picks a free port (see HTTPAddr).
	HTTPPort int
	// RPCPort is reserved for server-client RPC; the leader address reports it.
	RPCPort int
	// DataDir holds the agent's state. In dev mode it is optional: without
	// it allocation directories live in a temporary directory removed at
	// shutdown; with it they live under DataDir/alloc and are kept.
	DataDir string
	// LogLevel is debug, info, warn or error (used by the agent command).
	LogLevel string
	// Region and Datacenter place the agent; NodeName names its client node.
	Region     string
	Datacenter string
	NodeName   string
}

// DefaultConfig returns the configuration of `drover agent` without flags.
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
	}
}

// Agent is a running drover agent: in dev mode a server, a client and the
// HTTP API in one process.
type Agent struct {
	cfg    *Config
	logger *slog.Logger

	server *server.Server
	client *client.Client
	// tempDir is the dev-mode directory removed at shutdown; "" when the
	// alloc dir lives under DataDir.
	tempDir  string
	allocDir string
	httpAddr string       // set once the listener exists, never changed
	ln       net.Listener // the HTTP listener until Start hands it over

	mu       sync.Mutex // guards the fields below
	http     *httpServer
	shutdown bool
}

// NewAgent builds an agent from cfg: in dev mode it binds the HTTP port and
// creates the server and the client (with raw_exec and mock_driver). Start
// starts it; Shutdown releases it, whether or not it was started. Empty
// string fields of cfg get their defaults; HTTPPort 0 means a free port.
func NewAgent(cfg *Config, logger *slog.Logger) (*Agent, error) {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	c := *cfg
	defaults := DefaultConfig()
	c.BindAddr = firstNonEmpty(c.BindAddr, defaults.BindAddr)
	c.LogLevel = firstNonEmpty(c.LogLevel, defaults.LogLevel)
	c.Region = firstNonEmpty(c.Region, defaults.Region)
	c.Datacenter = firstNonEmpty(c.Datacenter, defaults.Datacenter)
	c.NodeName = firstNonEmpty(c.NodeName, defaults.NodeName)
	if c.RPCPort == 0 {
		c.RPCPort = DefaultRPCPort
	}
	if !c.DevMode {
		return nil, errors.New("only dev mode is supported in this version of drover: set DevMode (drover agent -dev)")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &Agent{cfg: &c, logger: logger}
	if err := a.setupDev(); err != nil {
		if rerr := a.teardown(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, err
	}
	return a, nil
}

// setupDev creates the dev-mode server and client.
func (a *Agent) setupDev() error {
	if a.cfg.DataDir != "" {
		a.allocDir = filepath.Join(a.cfg.DataDir, "alloc")
		if err := os.MkdirAll(a.allocDir, 0o755); err != nil {
			return fmt.Errorf("create alloc dir: %w", err)
		}
	} else {
		dir, err := os.MkdirTemp("", "drover-dev-")
		if err != nil {
			return fmt.Errorf("create dev mode temp dir: %w", err)
		}
		a.tempDir = dir
		a.allocDir = filepath.Join(dir, "alloc")
		if err := os.MkdirAll(a.allocDir, 0o755); err != nil {
			return fmt.Errorf("create alloc dir: %w", err)
		}
	}

	addr := net.JoinHostPort(a.cfg.BindAddr, strconv.Itoa(a.cfg.HTTPPort))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen for HTTP on %s: %w", addr, err)
	}
	a.ln = ln
	a.httpAddr = ln.Addr().String()

	// Dev mode: nil raft stores and transport mean in-memory ones.
	srv, err := server.NewServer(&server.Config{
		Logger:     a.logger.With("component", "server"),
		NodeName:   a.cfg.NodeName + "." + a.cfg.Region,
		Region:     a.cfg.Region,
		Datacenter: a.cfg.Datacenter,
	})
	if err != nil {
		return fmt.Errorf("create server: %w", err)
	}
	a.server = srv

	clientLogger := a.logger.With("component", "client")
	cl, err := client.New(&client.Config{
		Logger: clientLogger,
		RPC:    srv,
		Drivers: map[string]drivers.DriverPlugin{
			"raw_exec":    rawexec.New(clientLogger.With("driver", "raw_exec")),
			"mock_driver": mock.New(clientLogger.With("driver", "mock_driver")),
		},
		AllocDir:   a.allocDir,
		Region:     a.cfg.Region,
		Datacenter: a.cfg.Datacenter,
		NodeName:   a.cfg.NodeName,
		HTTPAddr:   a.httpAddr,
		Version:    Version,
		DevMode:    true,
	})
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	a.client = cl
	return nil
}

// Start starts the client and serves the HTTP API.
func (a *Agent) Start() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.shutdown {
		return errors.New("agent is shut down")
	}
	if a.http != nil {
		return errors.New("agent already started")
	}
	if a.client != nil {
		if err := a.client.Start(); err != nil {
			return fmt.Errorf("start client: %w", err)
		}
	}
	a.http = newHTTPServer(a.ln, a.server, a, jobspec.ParseRequest, a.logger.With("component", "http"))
	a.ln = nil // owned by the HTTP server now
	a.http.serve()
	a.logger.Info("agent started", "http_addr", a.httpAddr, "node_id", a.NodeID())
	return nil
}

// Shutdown stops the HTTP API, then the client (in dev mode it destroys
// its allocations, so no task outlives the agent), then the server, and
// removes the dev-mode temporary directory. It is safe to call twice.
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
		if err := hs.shutdown(ctx); err != nil {
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

// teardown stops the client and the server and removes the temp dir.
func (a *Agent) teardown() error {
	var errs []error
	if a.ln != nil {
		_ = a.ln.Close() // never served: nothing to wait for
		a.ln = nil
	}
	if a.client != nil {
		if err := a.client.Shutdown(); err != nil {
			errs = append(errs, fmt.Errorf("client shutdown: %w", err))
		}
	}
	if a.server != nil {
		if err := a.server.Shutdown(); err != nil {
			errs = append(errs, fmt.Errorf("server shutdown: %w", err))
		}
	}
	if a.tempDir != "" {
		if err := os.RemoveAll(a.tempDir); err != nil {
			errs = append(errs, fmt.Errorf("remove dev mode dir: %w", err))
		}
	}
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

// self implements agentInfo: GET /v1/agent/self.
func (a *Agent) self() *agentSelf {
	httpAddr := a.HTTPAddr()
	host, port, _ := net.SplitHostPort(httpAddr)
	httpPort, _ := strconv.Atoi(port)
	cfg := map[string]any{
		"Region":     a.cfg.Region,
		"Datacenter": a.cfg.Datacenter,
		"NodeName":   a.cfg.NodeName,
		"DataDir":    a.cfg.DataDir,
		"BindAddr":   a.cfg.BindAddr,
		"LogLevel":   a.cfg.LogLevel,
		"DevMode":    a.cfg.DevMode,
		"Version":    map[string]any{"Version": Version, "VersionPrerelease": "", "Revision": ""},
		"Ports":      map[string]any{"HTTP": httpPort, "RPC": a.cfg.RPCPort},
		"Addresses":  map[string]any{"HTTP": host, "RPC": a.cfg.BindAddr},
		"Server":     map[string]any{"Enabled": a.ServerEnabled()},
		"Client":     map[string]any{"Enabled": a.ClientEnabled(), "NodeID": a.NodeID(), "AllocDir": a.allocDir},
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
	return &agentSelf{
		Config: cfg,
		Member: agentMember{
			Name: a.cfg.NodeName + "." + a.cfg.Region,
			Addr: a.cfg.BindAddr,
			Port: uint16(a.cfg.RPCPort),
			Tags: map[string]string{
				"region": a.cfg.Region, "dc": a.cfg.Datacenter, "role": "nomad",
				"build": Version, "port": strconv.Itoa(a.cfg.RPCPort),
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

// rpcAddr is the address servers and clients will use for RPC.
func (a *Agent) rpcAddr() string {
	return net.JoinHostPort(a.cfg.BindAddr, strconv.Itoa(a.cfg.RPCPort))
}

// leader implements agentInfo: the leader's RPC address, "" when there is
// none. A dev agent is its own single server, so the leader is this agent.
func (a *Agent) leader() string {
	if a.server == nil || a.server.Leader() == "" {
		return ""
	}
	return a.rpcAddr()
}

// peers implements agentInfo: the servers' RPC addresses.
func (a *Agent) peers() []string {
	if a.server == nil || len(a.server.Peers()) == 0 {
		return []string{}
	}
	return []string{a.rpcAddr()}
}

// region implements agentInfo.
func (a *Agent) region() string { return a.cfg.Region }

// health implements agentInfo: GET /v1/agent/health.
func (a *Agent) health() (*agentHealthResponse, bool) {
	out := &agentHealthResponse{}
	ok := true
	if a.server != nil {
		if a.server.Leader() == "" {
			out.Server = &agentHealth{Ok: false, Message: "server has no leader"}
			ok = false
		} else {
			out.Server = &agentHealth{Ok: true, Message: "ok"}
		}
	}
	if a.client != nil {
		out.Client = &agentHealth{Ok: true, Message: "ok"}
	}
	return out, ok
}
