package client

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/drover-io/drover/client/allocnet"
	"github.com/drover-io/drover/client/allocrunner"
	"github.com/drover-io/drover/client/allocrunner/taskrunner"
	"github.com/drover-io/drover/client/artifact"
	"github.com/drover-io/drover/client/devicemanager"
	"github.com/drover-io/drover/client/drivermanager"
	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/client/stats"
	"github.com/drover-io/drover/client/taskapi"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
	"github.com/drover-io/drover/timeline"
)

// Timing defaults.
const (
	// defaultUpdateInterval is the least time between two batches of
	// alloc updates (alloc_sync.go); a lone update is sent at once.
	defaultUpdateInterval = 20 * time.Millisecond
	defaultRetryBase      = 500 * time.Millisecond
	defaultRetryMax       = 30 * time.Second
	defaultHeartbeatTTL   = 10 * time.Second
	finalFlushTimeout     = 2 * time.Second
)

// Client is the node agent. Create it with New, then Start; Shutdown stops it.
type Client struct {
	logger  *slog.Logger
	rpc     rpcapi.Conn
	drivers *drivermanager.Manager
	devices *devicemanager.Manager // nil: no device plugins
	stateDB state.StateDB
	region  string
	devMode bool
	// secretsTmpfs is Config.SecretsTmpfs.
	secretsTmpfs bool
	root         string
	// artifacts fetches the tasks' artifacts.
	artifacts *artifact.Getter
	// network makes the bridge and CNI namespaces of allocations
	// (network.go); nil: the client offers neither.
	network *allocnet.Manager
	// templates lets the tasks' templates read variables and services.
	templates *taskrunner.TemplateConfig
	// taskAPI serves the tasks' API sockets, forwarding to the agent's
	// HTTP API; nil: no task API (Config.TaskAPI).
	taskAPI *taskapi.Server
	// agentHTTP calls the agents' HTTP APIs (another node's, for a
	// previous allocation's data): over HTTPS when they serve it, with
	// agentScheme "https"; nil uses allocwatcher's default client.
	agentHTTP   *http.Client
	agentScheme string

	// Timing knobs; tests shorten them before Start.
	now            func() time.Time
	jitter         func(max time.Duration) time.Duration
	updateInterval time.Duration
	retryBase      time.Duration
	retryMax       time.Duration
	watchWait      time.Duration

	// ctx stops the client's loops; wg waits for them and for background
	// destroys of removed allocations.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// registered is closed after the first successful registration.
	registered   chan struct{}
	registerOnce sync.Once
	// identity is the node's identity, renewed on heartbeats
	// (node_identity.go).
	identity nodeIdentity
	// nodeChanged signals nodeUpdateLoop that the node changed (a
	// driver's health, devices, metadata): signalNodeChanged.
	nodeChanged    chan struct{}
	startOnce      sync.Once
	shutdownOnce   sync.Once
	shutdownClosed chan struct{}

	// staticMeta is the static layer of the node's metadata (defaults
	// and the agent's config), fixed after New (node_meta.go).
	staticMeta map[string]string
	metaMu     sync.Mutex // serializes metadata applies; guards the field below
	// dynamicMeta is the metadata applied at run time, as stored.
	dynamicMeta map[string]*string

	nodeMu sync.RWMutex // guards the field below
	// node is never modified once stored: an update stores a modified
	// copy (copy on write), so every allocation runner shares one Node
	// (nodeView) instead of holding a copy of its own.
	node *structs.Node

	allocMu sync.RWMutex // guards the fields below
	allocs  map[string]*allocrunner.AllocRunner
	// known is the AllocModifyIndex last applied per alloc ID.
	known map[string]uint64

	// queued signals syncLoop that updates are pending (buffered 1).
	queued chan struct{}

	updatesMu sync.Mutex // guards the field below
	pending   map[string]*structs.Allocation

	// timeline records when allocations reach the node's steps of their
	// way to running (AllocTimeline).
	timeline *timeline.Recorder
	// starts bounds the task starts in flight (start.go).
	starts startGate

	gc gcState // garbage collection settings, fixed after New
	// restored is how the restore of the earlier run's allocations went
	// (metrics.go), fixed after New.
	restored restoreStats
	// hostStats samples the host for the stats endpoint.
	hostStats *stats.HostCollector
	// serialUpdates applies server updates synchronously, one by one
	// (tests and benchmarks compare it with the per-alloc update loops).
	serialUpdates bool

	statsMu       sync.Mutex // guards the fields below
	heartbeatTTL  time.Duration
	lastHeartbeat time.Time
	allocIndex    uint64
}

// New fingerprints the node, starts the driver manager (launching the
// driver plugins and taking their first fingerprints), loads the node
// identity and the allocations of an earlier run from the StateDB, stops
// the task shims the restored allocations do not know (reconcileShims),
// and returns a Client. It sends no RPC; only the driver manager runs until
// Start. An invalid plugin config fails New with an error naming the
// plugin and the field.
func New(cfg *Config) (*Client, error) {
	if cfg == nil || cfg.RPC == nil {
		return nil, structs.Invalid("client: an RPC to the servers is required")
	}
	if cfg.AllocDir == "" {
		return nil, structs.Invalid("client: alloc_dir is required")
	}
	if err := os.MkdirAll(cfg.AllocDir, 0o755); err != nil {
		return nil, fmt.Errorf("client: create alloc dir: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	db := cfg.StateDB
	if db == nil {
		db = state.NewMemDB()
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{
		logger:         logger,
		stateDB:        db,
		region:         cfg.Region,
		devMode:        cfg.DevMode,
		secretsTmpfs:   cfg.SecretsTmpfs,
		root:           cfg.AllocDir,
		artifacts:      newArtifactGetter(cfg.Artifact, logger),
		agentScheme:    "http",
		hostStats:      stats.NewHostCollector(stats.HostConfig{AllocDir: cfg.AllocDir}),
		now:            time.Now,
		jitter:         randomJitter,
		updateInterval: defaultUpdateInterval,
		retryBase:      defaultRetryBase,
		retryMax:       defaultRetryMax,
		watchWait:      structs.DefaultBlockingWait,
		ctx:            ctx,
		cancel:         cancel,
		registered:     make(chan struct{}),
		nodeChanged:    make(chan struct{}, 1),
		shutdownClosed: make(chan struct{}),
		allocs:         make(map[string]*allocrunner.AllocRunner),
		known:          make(map[string]uint64),
		pending:        make(map[string]*structs.Allocation),
		queued:         make(chan struct{}, 1),
		timeline:       timeline.New(0, nil),
		starts:         newStartGate(cfg.MaxParallelStarts),
		gc:             newGCState(cfg.GC),
	}
	if cfg.HTTPTLS != nil {
		c.agentHTTP, c.agentScheme = &http.Client{Transport: agentTransport(cfg.HTTPTLS)}, "https"
	}
	c.rpc = nodeTokenConn{conn: cfg.RPC, secret: c.nodeSecret} // rpc_token.go
	node, err := c.buildNode(cfg)
	if err != nil {
		cancel()
		return nil, err
	}
	c.node = node
	c.templates = newTemplateConfig(cfg, c.rpc, node.ID, node.SecretID)
	c.logger = logger.With("node_id", node.ID)
	if err := c.setupNetwork(cfg); err != nil { // network.go
		cancel()
		return nil, fmt.Errorf("client: %w", err)
	}
	c.drivers = c.newDriverManager(cfg)
	if err := c.startDrivers(); err != nil {
		c.drivers.Shutdown()
		cancel()
		return nil, fmt.Errorf("client: start drivers: %w", err)
	}
	c.devices = c.newDeviceManager(cfg)
	if err := c.startDevices(); err != nil {
		c.drivers.Shutdown()
		cancel()
		return nil, fmt.Errorf("client: start device plugins: %w", err)
	}
	if u := taskAPIURL(cfg); u != "" {
		if c.taskAPI, err = taskapi.New(u, c.templates.ServicesTransport, c.logger); err != nil {
			c.shutdownDevices()
			c.drivers.Shutdown()
			cancel()
			return nil, fmt.Errorf("client: %w", err)
		}
	}
	restoreStart := time.Now()
	err = c.restoreAllocs()
	c.restored = restoreStats{Duration: time.Since(restoreStart), Allocs: len(c.allocs)}
	if err != nil {
		c.closeTaskAPI()
		c.shutdownDevices()
		c.drivers.Shutdown()
		cancel()
		return nil, err
	}
	c.reconcileShims()
	c.sweepNetworks() // network.go
	return c, nil
}

// randomJitter returns a random duration in [0, max).
func randomJitter(max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(max)))
}

// buildNode fingerprints the host and loads (or creates) the node
// identity; the driver manager adds the drivers.
func (c *Client) buildNode(cfg *Config) (*structs.Node, error) {
	volumes, err := hostVolumes(cfg.HostVolumes) // host_volumes.go
	if err != nil {
		return nil, err
	}
	id, err := c.stateDB.GetNodeIdentity()
	if err != nil {
		return nil, fmt.Errorf("client: read node identity: %w", err)
	}
	if id.ID == "" {
		id = &state.NodeIdentity{ID: structs.GenerateUUID(), SecretID: structs.GenerateUUID()}
		if err := c.stateDB.PutNodeIdentity(id); err != nil {
			return nil, fmt.Errorf("client: save node identity: %w", err)
		}
	}
	c.staticMeta = staticNodeMeta(cfg.Meta) // node_meta.go
	if c.dynamicMeta, err = loadDynamicNodeMeta(c.stateDB); err != nil {
		return nil, err
	}
	if unknown := cfg.Fingerprint.UnknownFingerprinters(); len(unknown) > 0 {
		c.logger.Warn("fingerprint.allowlist or fingerprint.denylist names fingerprinters this agent does not have",
			"names", unknown, "have", fingerprinterNames)
	}
	host, err := fingerprintHost(gatherHostSources(cfg, cfg.Fingerprint), cfg.Fingerprint)
	if err != nil {
		return nil, fmt.Errorf("client: fingerprint the host: %w", err)
	}
	for _, w := range host.Warnings {
		c.logger.Warn(w)
	}
	setNodePorts(&host.Resources, cfg) // fingerprint_network.go
	node := &structs.Node{
		ID:                    id.ID,
		SecretID:              id.SecretID,
		Datacenter:            cfg.Datacenter,
		Name:                  cfg.NodeName,
		HTTPAddr:              cfg.HTTPAddr,
		Attributes:            host.Attributes,
		NodeResources:         &host.Resources,
		ReservedResources:     cfg.Reserved,
		Meta:                  structs.MergeNodeMeta(c.staticMeta, c.dynamicMeta),
		NodeClass:             cfg.NodeClass,
		NodePool:              cfg.NodePool,
		SchedulingEligibility: structs.NodeSchedulingEligible,
		Status:                structs.NodeStatusInit,
		Drivers:               make(map[string]*structs.DriverInfo),
		HostVolumes:           volumes,
	}
	if node.Datacenter == "" {
		node.Datacenter = "dc1"
	}
	if node.Name == "" {
		node.Name = host.Attributes["unique.hostname"]
	}
	if node.NodePool == "" {
		node.NodePool = "default"
	}
	if node.ReservedResources == nil {
		node.ReservedResources = &structs.NodeReservedResources{}
	}
	node.HostNetworks = hostNetworksByName(cfg.Fingerprint.HostNetworks) // fingerprint_network.go
	return node, nil
}

// restoreAllocs creates AllocRunners for the allocations of an earlier run.
func (c *Client) restoreAllocs() error {
	allocs, errs, err := c.stateDB.GetAllAllocations()
	if err != nil {
		return fmt.Errorf("client: restore allocations: %w", err)
	}
	for id, err := range errs {
		c.logger.Error("could not restore allocation", "alloc_id", id, "error", err)
	}
	for _, alloc := range allocs {
		ar, err := c.newAllocRunner(alloc)
		if err != nil {
			c.logger.Error("could not restore allocation", "alloc_id", alloc.ID, "error", err)
			continue
		}
		if err := ar.Restore(); err != nil {
			c.logger.Error("could not restore allocation", "alloc_id", alloc.ID, "error", err)
			continue
		}
		c.allocs[alloc.ID] = ar
		c.known[alloc.ID] = alloc.AllocModifyIndex
	}
	return nil
}

// newTemplateConfig returns what the tasks' templates read through: the
// servers (variables) and the agent's HTTP API (services).
func newTemplateConfig(cfg *Config, rpc rpcapi.Conn, nodeID, secret string) *taskrunner.TemplateConfig {
	tc := &taskrunner.TemplateConfig{RPC: rpc, Client: cfg.Template, ServicesToken: secret,
		RestartLeases: restartLeaser{rpc: rpc, nodeID: nodeID, secret: secret}}
	if cfg.HTTPAddr != "" {
		tc.ServicesURL = "http://" + cfg.HTTPAddr
		if cfg.HTTPTLS != nil {
			tc.ServicesURL = "https://" + cfg.HTTPAddr
			tc.ServicesTransport = agentTransport(cfg.HTTPTLS)
		}
	}
	return tc
}

// taskAPIURL returns the agent's HTTP API when the task API is on.
func taskAPIURL(cfg *Config) string {
	if !cfg.TaskAPI || cfg.HTTPAddr == "" {
		return ""
	}
	if cfg.HTTPTLS != nil {
		return "https://" + cfg.HTTPAddr
	}
	return "http://" + cfg.HTTPAddr
}

// agentTransport is the transport of the client's calls to HTTPS agents.
func agentTransport(tlsConfig *tls.Config) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // cluster traffic never goes through a proxy
	tr.TLSClientConfig = tlsConfig
	return tr
}

// newArtifactGetter returns the getter of the tasks' artifacts.
func newArtifactGetter(cfg *artifact.Config, logger *slog.Logger) *artifact.Getter {
	c := artifact.DefaultConfig()
	if cfg != nil {
		c = *cfg
	}
	return artifact.New(c, logger.With("component", "artifact"))
}

// newAllocRunner creates the runner of alloc, with the watchers of the
// allocations it replaces; c.allocs must be locked (or not yet shared).
func (c *Client) newAllocRunner(alloc *structs.Allocation) (*allocrunner.AllocRunner, error) {
	prev, preempted := c.watchers(alloc)
	cfg := &allocrunner.Config{
		Logger:       c.logger,
		Alloc:        alloc,
		AllocDirRoot: c.root,
		SecretsTmpfs: c.secretsTmpfs,
		StateDB:      c.stateDB,
		Drivers:      c.driver,
		StateUpdater: allocUpdater{c},
		Node:         c.nodeView(),
		Devices:      c.deviceReserver(),
		DriverEvents: c.drivers,
		Artifacts:    c.artifacts,
		Timeline:     c.timeline,
		StartGate:    c.starts,
		Services:     serviceRegistrar{c}, // services.go
		Network:      c.allocNetwork(),
		Templates:    c.templates,
		Identities:   identitySigner{c}, // identities.go

		PrevAllocWatcher:      prev,
		PreemptedAllocWatcher: preempted,
	}
	if c.taskAPI != nil { // never a typed nil in the interface
		cfg.TaskAPI = c.taskAPI
	}
	return allocrunner.New(cfg)
}

// closeTaskAPI stops serving the tasks' API sockets (the runners have
// closed theirs by then).
func (c *Client) closeTaskAPI() {
	if c.taskAPI == nil {
		return
	}
	if err := c.taskAPI.Close(); err != nil {
		c.logger.Warn("close the task API", "error", err)
	}
}

// Start registers the node (retrying in the background), and starts the
// heartbeat, the allocation watch, the update batching, and the restored
// AllocRunners. It returns at once.
func (c *Client) Start() error {
	started := false
	c.startOnce.Do(func() { started = true })
	if !started {
		return structs.NewError(structs.KindConflict, "client already started")
	}
	if c.ctx.Err() != nil {
		return structs.NewError(structs.KindUnavailable, "client is shut down")
	}
	c.allocMu.RLock()
	for _, ar := range c.allocs {
		go ar.Run()
	}
	c.allocMu.RUnlock()
	c.wg.Add(5)
	go c.heartbeatLoop()
	go c.nodeUpdateLoop()
	go c.watchAllocations()
	go c.syncLoop()
	go c.gcLoop()
	return nil
}

// Shutdown stops the client's loops, then stops every AllocRunner in
// parallel: in dev mode it destroys them (killing their tasks), otherwise
// it leaves tasks running for the next agent. It sends the last updates,
// closes the StateDB, and is idempotent.
func (c *Client) Shutdown() error {
	var err error
	c.shutdownOnce.Do(func() {
		c.cancel()
		c.wg.Wait()
		c.allocMu.RLock()
		ars := make([]*allocrunner.AllocRunner, 0, len(c.allocs))
		for _, ar := range c.allocs {
			ars = append(ars, ar)
		}
		c.allocMu.RUnlock()
		var wg sync.WaitGroup
		for _, ar := range ars {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if c.devMode {
					ar.Destroy()
				} else {
					ar.Shutdown()
				}
			}()
		}
		wg.Wait()
		c.closeTaskAPI()
		// After the tasks: in dev mode this kills the plugin processes.
		c.drivers.Shutdown()
		c.shutdownDevices()
		ctx, cancel := context.WithTimeout(context.Background(), finalFlushTimeout)
		c.flushUpdates(ctx)
		cancel()
		err = c.stateDB.Close()
		close(c.shutdownClosed)
	})
	<-c.shutdownClosed
	return err
}

// NodeID returns the node's ID.
func (c *Client) NodeID() string {
	c.nodeMu.RLock()
	defer c.nodeMu.RUnlock()
	return c.node.ID
}

// Node returns a copy of the node as last fingerprinted.
func (c *Client) Node() *structs.Node {
	return c.nodeView().Copy()
}

// nodeView returns the node as last fingerprinted, shared: callers must
// not modify it. Allocation runners get this one rather than a copy each
// (with 1,000 runners, copies of the node's attribute maps were 7 MiB of
// the agent's heap).
func (c *Client) nodeView() *structs.Node {
	c.nodeMu.RLock()
	defer c.nodeMu.RUnlock()
	return c.node
}

// updateNode replaces the node by a copy that update modified, under the
// node's lock; the node that nodeView handed out before stays as it was.
func (c *Client) updateNode(update func(n *structs.Node)) {
	c.nodeMu.Lock()
	defer c.nodeMu.Unlock()
	n := c.node.Copy()
	update(n)
	c.node = n
}

func (c *Client) secretID() string {
	c.nodeMu.RLock()
	defer c.nodeMu.RUnlock()
	return c.node.SecretID
}

// Stats returns the client's counters, as `drover agent-info` shows them.
func (c *Client) Stats() map[string]string {
	c.allocMu.RLock()
	n := len(c.allocs)
	c.allocMu.RUnlock()
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	last := "never"
	if !c.lastHeartbeat.IsZero() {
		last = c.now().Sub(c.lastHeartbeat).Round(time.Millisecond).String()
	}
	return map[string]string{
		"node_id":         c.NodeID(),
		"known_servers":   "1",
		"num_allocations": strconv.Itoa(n),
		"heartbeat_ttl":   c.heartbeatTTL.String(),
		"last_heartbeat":  last,
		"alloc_index":     strconv.FormatUint(c.allocIndex, 10),
	}
}
