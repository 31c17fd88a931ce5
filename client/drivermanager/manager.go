package drivermanager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/drover-io/drover/plugins"
	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// Manager runs the node's drivers; see the package doc. Create it with
// New, Start it, and Shutdown it.
type Manager struct {
	cfg    Config
	logger *slog.Logger
	events *eventRouter

	// ctx stops the Manager's goroutines; wg waits for them.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	startOnce    sync.Once
	shutdownOnce sync.Once
	// otherPlugins are the names of the plugins in plugin_dir that are
	// not drivers (device plugins); only Start touches it.
	otherPlugins map[string]bool

	mu sync.RWMutex // guards the field below
	// drivers are the running drivers by name, set by Start.
	drivers map[string]*managedDriver
}

// instance is one running copy of a driver: in process, or a plugin
// process and the connection to it.
type instance struct {
	driver drivers.DriverPlugin
	// version is the plugin's own version ("" when unknown).
	version string
	// ext is the plugin process; nil for an in-process driver.
	ext *plugins.Instance
	// path is the plugin binary; "" in process.
	path string
}

// exited reports whether the instance's process has exited.
func (i *instance) exited() bool { return i.ext != nil && i.ext.Exited() }

// managedDriver is one driver the Manager runs.
type managedDriver struct {
	name  string
	proxy *proxy

	mu sync.Mutex // guards the fields below
	// inst is the current instance (the dead one while restarting).
	inst *instance
	// info is the last DriverInfo reported to the client.
	info *structs.DriverInfo
}

func (md *managedDriver) current() *instance {
	md.mu.Lock()
	defer md.mu.Unlock()
	return md.inst
}

func (md *managedDriver) setCurrent(inst *instance) {
	md.mu.Lock()
	md.inst = inst
	md.mu.Unlock()
	md.proxy.publish(inst.driver)
}

// New returns a Manager. It starts nothing.
func New(cfg Config) *Manager {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{
		cfg:     cfg,
		logger:  cfg.Logger,
		events:  newEventRouter(),
		ctx:     ctx,
		cancel:  cancel,
		drivers: make(map[string]*managedDriver),
	}
}

// Start configures and starts every driver: the built-in ones, then the
// external plugins in plugin_dir (re-attaching to those a previous agent
// left running). It waits (at most FingerprintTimeout) for each driver's
// first fingerprint, so the node has its drivers when Start returns, and
// then supervises them in the background until Shutdown. A driver whose
// config block is invalid fails Start with an error naming the plugin and
// the field; the plugins launched so far are then killed. ctx bounds the
// start only.
func (m *Manager) Start(ctx context.Context) error {
	started := false
	m.startOnce.Do(func() { started = true })
	if !started {
		return structs.NewError(structs.KindConflict, "driver manager already started")
	}
	insts, err := m.startInstances(ctx)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(insts))
	for name := range insts {
		names = append(names, name)
	}
	slices.Sort(names)
	mds := make(map[string]*managedDriver, len(names))
	for _, name := range names {
		inst := insts[name]
		md := &managedDriver{name: name, proxy: newProxy(name, inst.ext != nil, m.ctx.Done())}
		md.setCurrent(inst) // asks the driver for its capabilities: no lock held
		mds[name] = md
	}
	m.mu.Lock()
	m.drivers = mds
	m.mu.Unlock()
	for name := range m.cfg.PluginConfigs {
		if _, ok := insts[name]; !ok && m.cfg.Disabled[name] == "" && !m.otherPlugins[name] {
			m.logger.Warn("plugin config block for a driver this agent does not have", "plugin", name)
		}
	}

	firsts := make([]chan struct{}, 0, len(names))
	for _, name := range names {
		first := make(chan struct{})
		firsts = append(firsts, first)
		md := mds[name]
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.supervise(md, first)
		}()
	}
	wait, cancel := context.WithTimeout(ctx, m.cfg.FingerprintTimeout)
	defer cancel()
	for i, first := range firsts {
		select {
		case <-first:
		case <-wait.Done():
			m.logger.Warn("driver did not fingerprint in time", "driver", names[i], "timeout", m.cfg.FingerprintTimeout)
		}
	}
	return nil
}

// startInstances creates and configures every driver's first instance.
// On error it kills the plugin processes it started.
func (m *Manager) startInstances(ctx context.Context) (_ map[string]*instance, err error) {
	insts := make(map[string]*instance)
	defer func() {
		if err != nil {
			for _, inst := range insts {
				if inst.ext != nil {
					m.killExternal(inst, nameOf(insts, inst))
				}
			}
		}
	}()
	names := make([]string, 0, len(m.cfg.BuiltIn))
	for name := range m.cfg.BuiltIn {
		names = append(names, name)
	}
	slices.Sort(names)
	var errs []error
	for _, name := range names {
		d, err := m.cfg.BuiltIn[name](m.logger.With("driver", name), m.cfg.PluginConfigs[name])
		if err != nil {
			var ce *base.ConfigError
			if !errors.As(err, &ce) {
				err = &base.ConfigError{Plugin: name, Err: err}
			}
			errs = append(errs, err)
			continue
		}
		if d == nil {
			errs = append(errs, fmt.Errorf("driver %q: its constructor returned no driver", name))
			continue
		}
		inst := &instance{driver: d}
		if err := m.configure(ctx, name, inst); err != nil {
			errs = append(errs, err)
			continue
		}
		insts[name] = inst
	}
	if err := errors.Join(errs...); err != nil {
		return insts, err
	}
	return insts, m.startExternal(ctx, insts)
}

func nameOf(insts map[string]*instance, inst *instance) string {
	for name, i := range insts {
		if i == inst {
			return name
		}
	}
	return ""
}

// Dispense returns the named driver: a stable proxy that follows the
// driver's plugin across restarts (see the package doc). It fails for a
// driver this node does not have, one that is disabled, one whose last
// fingerprint says it is not detected, and after Shutdown.
func (m *Manager) Dispense(name string) (drivers.DriverPlugin, error) {
	if reason, ok := m.cfg.Disabled[name]; ok {
		return nil, structs.NewError(structs.KindUnavailable, "driver %q is disabled: %s", name, reason)
	}
	m.mu.RLock()
	md := m.drivers[name]
	m.mu.RUnlock()
	if md == nil {
		return nil, structs.NotFound("driver", name)
	}
	if m.ctx.Err() != nil {
		return nil, structs.NewError(structs.KindUnavailable, "driver %q: the driver manager has shut down", name)
	}
	md.mu.Lock()
	info := md.info
	md.mu.Unlock()
	if info != nil && !info.Detected && !md.proxy.restartable {
		return nil, structs.NewError(structs.KindUnavailable, "driver %q is not detected on this node: %s", name, info.HealthDescription)
	}
	return md.proxy, nil
}

// Drivers returns the DriverInfo last reported of each driver, by name.
func (m *Manager) Drivers() map[string]*structs.DriverInfo {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make(map[string]*structs.DriverInfo, len(m.drivers))
	for name, md := range m.drivers {
		md.mu.Lock()
		if md.info != nil {
			out[name] = copyInfo(md.info)
		}
		md.mu.Unlock()
	}
	return out
}

// shutdowner is an in-process driver with goroutines of its own to stop.
type shutdowner interface{ Shutdown() }

// Shutdown stops the Manager's goroutines and shuts down the in-process
// drivers that have a Shutdown method (their Factory handed them over).
// External plugin processes keep running (with their tasks) for the next
// agent to re-attach, unless KillOnShutdown is set: then they are killed
// and their state deleted. It is idempotent and safe before Start.
func (m *Manager) Shutdown() {
	m.shutdownOnce.Do(func() {
		m.cancel()
		m.wg.Wait()
		m.mu.RLock()
		mds := maps.Clone(m.drivers)
		m.mu.RUnlock()
		for name, md := range mds {
			inst := md.current()
			switch {
			case inst == nil:
			case inst.ext == nil:
				if s, ok := inst.driver.(shutdowner); ok {
					s.Shutdown()
				}
			case m.cfg.KillOnShutdown:
				m.killExternal(inst, name)
			}
		}
	})
}

// killExternal kills a plugin process and forgets its state.
func (m *Manager) killExternal(inst *instance, name string) {
	inst.ext.Kill()
	if m.cfg.State != nil && name != "" {
		if err := m.cfg.State.DeleteDriverPluginState(name); err != nil {
			m.logger.Warn("could not delete driver plugin state", "plugin", name, "error", err)
		}
	}
}
