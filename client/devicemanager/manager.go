package devicemanager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/structs"
)

// Manager runs the node's device plugins; see the package doc. Create it
// with New, Start it, and Shutdown it.
type Manager struct {
	cfg    Config
	logger *slog.Logger

	// ctx stops the Manager's goroutines; wg waits for them.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	startOnce    sync.Once
	shutdownOnce sync.Once
	// catalog is cfg.Catalog with the external plugins of plugin_dir;
	// set by Start before any plugin goroutine starts, then read-only.
	catalog map[string]Factory

	// updateMu serialises UpdateNode calls so that the node never sees
	// an older device list after a newer one.
	updateMu sync.Mutex

	mu sync.RWMutex // guards the fields below
	// plugins are the running plugins by name, set by Start.
	plugins map[string]*managedPlugin
	// instances indexes the accepted fingerprints by device ID.
	instances map[string]instanceRef
	// stats are the latest statistics by device ID.
	stats map[string]*device.DeviceStats
}

// instanceRef is where a device instance lives.
type instanceRef struct {
	plugin string
	group  string // "vendor/type/name"
}

// managedPlugin is one plugin the Manager runs; its fields are guarded by
// Manager.mu.
type managedPlugin struct {
	name string
	// plugin is the current plugin; nil while restarting.
	plugin device.DevicePlugin
	// devices is the last accepted fingerprint.
	devices []*structs.NodeDeviceResource
	// failure is why the plugin's devices are unhealthy now ("": they
	// are as fingerprinted).
	failure string
	// ready is closed once the plugin's first fingerprint was handled
	// (accepted or not) or the plugin failed; Start waits on it.
	ready     chan struct{}
	readyOnce sync.Once
}

func (mp *managedPlugin) markReady() { mp.readyOnce.Do(func() { close(mp.ready) }) }

// New returns a Manager. It starts nothing.
func New(cfg Config) *Manager {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{
		cfg:       cfg,
		logger:    cfg.Logger,
		ctx:       ctx,
		cancel:    cancel,
		plugins:   map[string]*managedPlugin{},
		instances: map[string]instanceRef{},
		stats:     map[string]*device.DeviceStats{},
	}
}

// Start configures every catalog plugin that has a config block and
// supervises each in the background until Shutdown. It waits (at most
// FingerprintTimeout) for each plugin's first fingerprint, so the node has
// its devices when Start returns. A block for a plugin the catalog lacks,
// or one its schema rejects, fails Start with an error naming the plugin
// (and the field); nothing is left running then. ctx bounds the start only.
func (m *Manager) Start(ctx context.Context) error {
	err := errors.New("device manager already started")
	m.startOnce.Do(func() { err = m.start(ctx) })
	return err
}

func (m *Manager) start(ctx context.Context) error {
	externals, err := m.startExternal(ctx)
	if err != nil {
		return err
	}
	m.catalog = maps.Clone(m.cfg.Catalog)
	if m.catalog == nil {
		m.catalog = map[string]Factory{}
	}
	var names []string
	for name := range m.cfg.PluginConfigs {
		if _, ok := m.catalog[name]; ok && externals[name] == nil {
			names = append(names, name)
		}
	}
	for name, e := range externals {
		m.catalog[name] = e.factory
		names = append(names, name)
	}
	sort.Strings(names)
	firsts := make(map[string]device.DevicePlugin, len(names))
	for _, name := range names {
		p, err := m.newPlugin(ctx, name)
		if err != nil {
			for _, first := range firsts {
				if s, ok := first.(shutdowner); ok {
					s.Shutdown()
				}
			}
			for _, e := range externals {
				e.discard()
			}
			return err
		}
		firsts[name] = p
	}
	m.mu.Lock()
	for _, name := range names {
		m.plugins[name] = &managedPlugin{name: name, ready: make(chan struct{})}
	}
	m.mu.Unlock()
	for _, name := range names {
		mp := m.plugins[name]
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.supervise(mp, firsts[name])
		}()
	}
	timeout := m.cfg.After(m.cfg.FingerprintTimeout)
	for _, name := range names {
		select {
		case <-m.plugins[name].ready:
		case <-timeout:
			m.logger.Warn("device plugins did not fingerprint in time; starting without their devices",
				"timeout", m.cfg.FingerprintTimeout)
			return nil
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// IsPluginName reports whether name is a device plugin of the catalog
// (which the agent uses to tell device plugin blocks from driver ones).
func (m *Manager) IsPluginName(name string) bool {
	_, ok := m.cfg.Catalog[name]
	return ok
}

// newPlugin constructs plugin name and configures it: its config block is
// validated against its schema and completed with defaults. A plugin that
// cannot be configured is shut down.
func (m *Manager) newPlugin(ctx context.Context, name string) (_ device.DevicePlugin, err error) {
	logger := m.logger.With("plugin", name)
	p, err := m.catalog[name](logger)
	if err != nil {
		return nil, fmt.Errorf("device plugin %q: %w", name, err)
	}
	defer func() {
		if s, ok := p.(shutdowner); ok && err != nil {
			s.Shutdown()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, m.cfg.CallTimeout)
	defer cancel()
	schema, err := p.ConfigSchema(ctx)
	if err != nil {
		return nil, fmt.Errorf("device plugin %q: config schema: %w", name, err)
	}
	raw, err := schema.Validate(name, m.cfg.PluginConfigs[name])
	if err != nil {
		return nil, err
	}
	if err := p.SetConfig(ctx, &base.Config{PluginConfig: raw, AgentConfig: m.cfg.AgentConfig}); err != nil {
		return nil, fmt.Errorf("device plugin %q: set config: %w", name, err)
	}
	return p, nil
}

// Shutdown stops every plugin and waits for the Manager's goroutines.
func (m *Manager) Shutdown() {
	m.shutdownOnce.Do(func() {
		m.cancel()
		m.wg.Wait()
	})
}

// Devices returns the node's device groups, sorted by vendor/type/name;
// the devices of a failed plugin are unhealthy. The result is a copy.
func (m *Manager) Devices() []*structs.NodeDeviceResource {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.devicesLocked()
}

func (m *Manager) devicesLocked() []*structs.NodeDeviceResource {
	var out []*structs.NodeDeviceResource
	for _, mp := range m.plugins {
		if mp.failure != "" {
			out = append(out, unhealthy(mp.devices, mp.failure)...)
			continue
		}
		for _, d := range mp.devices {
			out = append(out, d.Copy())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID().String() < out[j].ID().String() })
	return out
}

// updateNode hands the current device list to the client.
func (m *Manager) updateNode() {
	m.updateMu.Lock()
	defer m.updateMu.Unlock()
	m.cfg.UpdateNode(m.Devices())
}

// Reserve asks the plugin owning the instances of req to prepare them for a
// task and returns the validated reservation. Instance IDs the node's
// fingerprints do not have in req's group are rejected without calling the
// plugin.
func (m *Manager) Reserve(ctx context.Context, req *structs.AllocatedDeviceResource) (*device.ContainerReservation, error) {
	group := req.ID().String()
	m.mu.RLock()
	var owner string
	var unknown []string
	for _, id := range req.DeviceIDs {
		ref, ok := m.instances[id]
		switch {
		case !ok || ref.group != group:
			unknown = append(unknown, id)
		case owner == "":
			owner = ref.plugin
		}
	}
	var p device.DevicePlugin
	if mp := m.plugins[owner]; mp != nil {
		p = mp.plugin
	}
	m.mu.RUnlock()
	switch {
	case len(unknown) > 0:
		return nil, fmt.Errorf("reserve %s: %w: %v not on this node", group, device.ErrUnknownDevice, unknown)
	case len(req.DeviceIDs) == 0:
		return &device.ContainerReservation{}, nil
	case p == nil:
		return nil, fmt.Errorf("reserve %s: device plugin %q is restarting", group, owner)
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.CallTimeout)
	defer cancel()
	r, err := p.Reserve(ctx, slices.Clone(req.DeviceIDs))
	if err != nil {
		return nil, fmt.Errorf("reserve %s %v with device plugin %q: %w", group, req.DeviceIDs, owner, err)
	}
	if err := device.ValidateReservation(r); err != nil {
		m.logger.Warn("rejected invalid reservation from device plugin", "plugin", owner, "reason", err)
		return nil, fmt.Errorf("device plugin %q: invalid reservation for %s: %w", owner, group, err)
	}
	return r, nil
}

// waitOrDone waits d on the Manager's clock; false when the Manager stops
// first.
func (m *Manager) waitOrDone(d time.Duration) bool {
	select {
	case <-m.cfg.After(d):
		return true
	case <-m.ctx.Done():
		return false
	}
}
