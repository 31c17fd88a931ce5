package devicemanager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/drover-io/drover/plugins"
	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/plugins/device/grpcdevice"
)

// External device plugins: every executable in plugin_dir is launched
// (plugins.LaunchDevice); a driver binary answers with a
// plugins.PluginTypeError and is left to the driver manager. A device
// plugin runs under the name it reports, configured by the plugin block
// of that name ({} without one), supervised like a catalog plugin
// (restarted with backoff when its process dies: its streams end), and
// replaces a catalog plugin of the same name. Its re-attach config is
// persisted, so that an agent that crashed re-attaches to the process
// instead of starting a second one; a stopping agent kills it and forgets
// the config.

// StateStore persists the external device plugins' re-attach configs
// (client/state.StateDB implements it).
type StateStore interface {
	GetDevicePluginStates() (map[string][]byte, error)
	PutDevicePluginState(name string, data []byte) error
	DeleteDevicePluginState(name string) error
}

// pluginState is what is persisted per external device plugin.
type pluginState struct {
	Path     string                  `json:"path"`
	Reattach *plugins.ReattachConfig `json:"reattach"`
}

// externalPlugin is one device plugin binary of plugin_dir.
type externalPlugin struct {
	m    *Manager
	name string
	path string
	// first is the process launched (or re-attached) by Start, until the
	// first factory call takes it; later calls launch anew. Start makes
	// the first call, the plugin's supervise goroutine the later ones.
	first *plugins.DeviceInstance
}

// factory hands out the running process first, then relaunches the
// binary (a restart after a failure).
func (e *externalPlugin) factory(logger *slog.Logger) (device.DevicePlugin, error) {
	inst := e.first
	e.first = nil
	if inst == nil {
		var err error
		if inst, err = e.m.launch(e.m.ctx, e.path, logger); err != nil {
			return nil, err
		}
		if got := inst.Info().Name; got != e.name {
			inst.Kill()
			return nil, fmt.Errorf("device plugin binary %s now reports the name %q, not %q", e.path, got, e.name)
		}
	}
	e.m.persist(e.name, e.path, inst)
	return &externalDevice{Client: inst.Device(), stop: func() {
		inst.Kill()
		e.m.forget(e.name)
	}}, nil
}

// discard kills a first process no factory call took (Start failed
// before reaching it).
func (e *externalPlugin) discard() {
	if e.first != nil {
		e.first.Kill()
		e.first = nil
		e.m.forget(e.name)
	}
}

// externalDevice is the client of a device plugin process. The
// supervisor's Shutdown (the Manager stops, or the plugin failed and is
// relaunched) kills the process and forgets its state; a relaunch
// persists the new process's.
type externalDevice struct {
	*grpcdevice.Client
	stop func()
}

// Shutdown kills the plugin process (the supervisor drops this instance).
func (d *externalDevice) Shutdown() { d.stop() }

// launch starts the binary at path as a device plugin.
func (m *Manager) launch(ctx context.Context, path string, logger *slog.Logger) (*plugins.DeviceInstance, error) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.LaunchTimeout)
	defer cancel()
	return plugins.LaunchDevice(ctx, path, nil, logger)
}

// startExternal re-attaches to the device plugins a crashed agent left
// running, launches the other binaries of plugin_dir, and returns the
// device plugins found, by name.
func (m *Manager) startExternal(ctx context.Context) (map[string]*externalPlugin, error) {
	out := map[string]*externalPlugin{}
	paths, err := plugins.ScanDir(m.cfg.PluginDir)
	if err != nil || len(paths) == 0 {
		return out, err
	}
	running := m.reattachAll(ctx, paths)
	for _, path := range paths {
		inst := running[path]
		if inst == nil {
			if inst, err = m.launch(ctx, path, m.logger); err != nil {
				var typeErr *plugins.PluginTypeError
				if errors.As(err, &typeErr) {
					m.logger.Debug("not a device plugin; skipping it", "path", path, "plugin", typeErr.Name, "type", typeErr.Type)
					continue
				}
				m.logger.Error("could not launch device plugin; skipping it", "path", path, "error", err)
				continue
			}
			m.logger.Info("device plugin launched", "path", path, "plugin", inst.Info().Name)
		}
		name := inst.Info().Name
		if prev, ok := out[name]; ok {
			m.logger.Error("two device plugins share a name; skipping the second", "plugin", name, "path", path, "first", prev.path)
			inst.Kill()
			continue
		}
		if _, ok := m.cfg.Catalog[name]; ok {
			m.logger.Info("external device plugin replaces the built-in one", "plugin", name, "path", path)
		}
		out[name] = &externalPlugin{m: m, name: name, path: path, first: inst}
	}
	return out, nil
}

// reattachAll re-attaches to the persisted device plugins still running
// whose binary is in paths, by path; the state of the others is deleted
// (and a process not wanted any more is killed).
func (m *Manager) reattachAll(ctx context.Context, paths []string) map[string]*plugins.DeviceInstance {
	running := map[string]*plugins.DeviceInstance{}
	if m.cfg.State == nil {
		return running
	}
	states, err := m.cfg.State.GetDevicePluginStates()
	if err != nil {
		m.logger.Warn("could not read device plugin states; launching new plugins", "error", err)
		return running
	}
	for _, name := range slices.Sorted(maps.Keys(states)) {
		var st pluginState
		err := json.Unmarshal(states[name], &st)
		var inst *plugins.DeviceInstance
		if err == nil {
			rctx, cancel := context.WithTimeout(ctx, m.cfg.LaunchTimeout)
			inst, err = plugins.ReattachDevice(rctx, st.Reattach, m.logger)
			cancel()
		}
		switch {
		case err != nil:
			m.logger.Info("could not re-attach to device plugin; a new one will be launched", "plugin", name, "error", err)
		case inst.Info().Name != name || !slices.Contains(paths, st.Path) || running[st.Path] != nil:
			m.logger.Info("re-attached device plugin is not wanted any more; killing it", "plugin", name, "path", st.Path)
			inst.Kill()
		default:
			m.logger.Info("re-attached to device plugin", "plugin", name, "pid", st.Reattach.Pid)
			running[st.Path] = inst
			continue
		}
		m.forget(name)
	}
	return running
}

// persist stores the re-attach config of plugin name's process.
func (m *Manager) persist(name, path string, inst *plugins.DeviceInstance) {
	if m.cfg.State == nil {
		return
	}
	data, err := json.Marshal(pluginState{Path: path, Reattach: inst.ReattachConfig()})
	if err == nil {
		err = m.cfg.State.PutDevicePluginState(name, data)
	}
	if err != nil {
		m.logger.Warn("could not persist device plugin state", "plugin", name, "error", err)
	}
}

// forget deletes plugin name's persisted state.
func (m *Manager) forget(name string) {
	if m.cfg.State == nil {
		return
	}
	if err := m.cfg.State.DeleteDevicePluginState(name); err != nil {
		m.logger.Warn("could not delete device plugin state", "plugin", name, "error", err)
	}
}
