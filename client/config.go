package client

import (
	"crypto/tls"
	"log/slog"

	"github.com/drover-io/drover/client/allocnet"
	"github.com/drover-io/drover/client/artifact"
	"github.com/drover-io/drover/client/devicemanager"
	"github.com/drover-io/drover/client/drivermanager"
	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/client/template"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
	"github.com/drover-io/drover/version"
)

// Version is the agent version reported as the node's drover.version
// attribute when Config.Version is empty.
const Version = version.Version

// Config configures a Client.
type Config struct {
	Logger *slog.Logger
	// RPC calls the servers' methods (rpcapi): *server.Server in process,
	// rpcclient.Client over the network. The client calls NodeRegister,
	// NodeUpdateStatus, NodeGetClientAllocs, AllocGetAllocs, NodeUpdateAlloc
	// and, to migrate a previous allocation's data from another node,
	// NodeGet.
	RPC rpcapi.Conn
	// DriverManager configures the drivers: the built-in catalog, the
	// plugin configs and plugin_dir. The client sets its Logger, State,
	// UpdateNode and KillOnShutdown (DevMode). Nil: only Drivers.
	DriverManager *drivermanager.Config
	// DeviceManager configures the device plugins: the catalog and the
	// plugin configs. The client sets its Logger and UpdateNode. Nil: no
	// device plugins.
	DeviceManager *devicemanager.Config
	// Drivers are driver instances by name ("mock_driver"), added to the
	// DriverManager's built-in drivers.
	//
	// Deprecated: use DriverManager.BuiltIn; kept for tests and embedders.
	Drivers map[string]drivers.DriverPlugin
	// StateDB holds the local state; nil means a new in-memory one. The
	// Client closes it on Shutdown.
	StateDB state.StateDB
	// AllocDir is the root of the alloc directories (required).
	AllocDir string

	Region     string
	Datacenter string // default "dc1"
	NodeName   string // default the hostname
	NodeClass  string
	NodePool   string // default "default"
	Meta       map[string]string
	// HTTPAddr is the agent's HTTP address ("127.0.0.1:4646").
	HTTPAddr string
	// TaskAPI serves each task's API socket (secrets/api.sock), which
	// forwards to HTTPAddr; the agent turns it on.
	TaskAPI bool
	// HTTPTLS, when set, is the TLS of the agents' HTTP APIs (tls.http):
	// the client's own calls to them (templates' service reads, the
	// previous allocation's data from another node) go over HTTPS with
	// it; nil: plain HTTP.
	HTTPTLS  *tls.Config
	Reserved *structs.NodeReservedResources
	// Version is reported as drover.version; default Version.
	Version string
	// SecretsTmpfs mounts a tmpfs on each task's secrets directory, so
	// that secrets never reach the disk (client/allocdir); the agent
	// turns it on. Off, they are plain directories (tests that build
	// alloc dirs in temporary directories).
	SecretsTmpfs bool
	// DevMode makes Shutdown destroy allocations (killing tasks) instead
	// of leaving them running.
	DevMode bool
	// GC configures the garbage collection of terminal allocations; zero
	// fields get the defaults.
	GC GCConfig
	// Artifact configures the fetching of tasks' artifacts (the agent's
	// client { artifact { ... } }); nil: artifact.DefaultConfig.
	Artifact *artifact.Config
	// Template is the agent's template block (client/template); nil:
	// defaults.
	Template *template.ClientConfig
	// Fingerprint selects and adjusts the host fingerprint (attributes and
	// resources).
	Fingerprint FingerprintConfig
	// MinDynamicPort and MaxDynamicPort bound the ports the scheduler
	// picks for tasks' dynamic ports on this node; 0 uses the defaults
	// (structs.DefaultMinDynamicPort, DefaultMaxDynamicPort). The ports
	// the node keeps from tasks are Reserved.Networks.
	MinDynamicPort int
	MaxDynamicPort int
	// HostVolumes are the host volumes the node offers, by name (the
	// agent's host_volume blocks). Each path must exist: New fails
	// otherwise. The node reports them with their links resolved.
	HostVolumes map[string]*structs.ClientHostVolumeConfig
	// MaxParallelStarts bounds how many tasks the drivers start at once
	// (StartTask calls in flight; start.go); 0 means
	// DefaultMaxParallelStarts.
	MaxParallelStarts int
	// Network configures the allocations' bridge and CNI networks (the
	// agent's cni_path, cni_config_dir, bridge_network_name and
	// bridge_network_subnet); nil: the node offers neither.
	Network *allocnet.Config
}
