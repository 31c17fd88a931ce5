package drivermanager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/drover-io/drover/plugins"
)

// External plugins: every executable regular file in plugin_dir is
// launched (as Nomad does); one that serves a device plugin (a
// plugins.PluginTypeError) is skipped, for the device manager. A driver
// is configured with the plugin block named after the name the plugin
// reports (PluginInfo.Name), if there is one. A plugin with the name of a
// built-in driver replaces it. A binary that
// fails to launch is logged and skipped; an invalid config block fails
// the start. A plugin whose driver is switched off (Disabled, or outside
// Allowlist) is killed and not used.

// pluginState is what is persisted per external plugin.
type pluginState struct {
	Path     string                  `json:"path"`
	Reattach *plugins.ReattachConfig `json:"reattach"`
}

// switchedOff returns why the driver name must not run (Disabled, or
// outside a non-empty Allowlist), or "".
func (m *Manager) switchedOff(name string) string {
	if reason, ok := m.cfg.Disabled[name]; ok {
		return reason
	}
	if len(m.cfg.Allowlist) > 0 && !slices.Contains(m.cfg.Allowlist, name) {
		return "it is not in the client option driver.allowlist"
	}
	return ""
}

// launch starts the plugin binary at path.
func (m *Manager) launch(ctx context.Context, path string) (*instance, error) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.LaunchTimeout)
	defer cancel()
	ext, err := plugins.Launch(ctx, path, nil, m.logger)
	if err != nil {
		return nil, err
	}
	return externalInstance(ext, path), nil
}

func externalInstance(ext *plugins.Instance, path string) *instance {
	return &instance{driver: ext.Driver(), version: ext.Info().PluginVersion, ext: ext, path: path}
}

// startExternal re-attaches to the plugins a previous agent left running,
// launches the other binaries of plugin_dir, configures them all and adds
// them to insts (replacing built-ins of the same name).
func (m *Manager) startExternal(ctx context.Context, insts map[string]*instance) error {
	paths, err := plugins.ScanDir(m.cfg.PluginDir)
	if err != nil {
		return err
	}
	running := m.reattachAll(ctx, paths)
	for _, path := range paths {
		inst := running[path]
		if inst == nil {
			if inst, err = m.launch(ctx, path); err != nil {
				var typeErr *plugins.PluginTypeError
				if errors.As(err, &typeErr) {
					// A device plugin: the device manager runs it.
					m.logger.Debug("not a driver plugin; skipping it", "path", path, "plugin", typeErr.Name, "type", typeErr.Type)
					if m.otherPlugins == nil {
						m.otherPlugins = map[string]bool{}
					}
					m.otherPlugins[typeErr.Name] = true
					continue
				}
				m.logger.Error("could not launch driver plugin; skipping it", "path", path, "error", err)
				continue
			}
			m.logger.Info("driver plugin launched", "path", path, "plugin", inst.ext.Info().Name)
		}
		name := inst.ext.Info().Name
		if reason := m.switchedOff(name); reason != "" {
			m.logger.Info("driver plugin is switched off; not using it", "plugin", name, "path", path, "reason", reason)
			m.killExternal(inst, name)
			continue
		}
		if prev, ok := insts[name]; ok {
			if prev.ext != nil {
				m.logger.Error("two driver plugins share a name; skipping the second", "plugin", name, "path", path, "first", prev.path)
				inst.ext.Kill()
				continue
			}
			m.logger.Info("external driver plugin replaces the built-in driver", "plugin", name, "path", path)
		}
		insts[name] = inst
		if err := m.configure(ctx, name, inst); err != nil {
			return err
		}
		m.persist(name, inst)
	}
	// Re-attached plugins whose binary is no longer in plugin_dir.
	for path, inst := range running {
		if !slices.Contains(paths, path) {
			m.killExternal(inst, inst.ext.Info().Name)
		}
	}
	return nil
}

// reattachAll re-attaches to the persisted plugins still running whose
// binary is in paths, by path; the state of the others is deleted.
func (m *Manager) reattachAll(ctx context.Context, paths []string) map[string]*instance {
	running := make(map[string]*instance)
	if m.cfg.State == nil {
		return running
	}
	states, err := m.cfg.State.GetDriverPluginStates()
	if err != nil {
		m.logger.Warn("could not read driver plugin states; launching new plugins", "error", err)
		return running
	}
	names := make([]string, 0, len(states))
	for name := range states {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		inst, err := m.reattach(ctx, states[name])
		switch {
		case err != nil:
			m.logger.Info("could not re-attach to driver plugin; a new one will be launched", "plugin", name, "error", err)
		case inst.ext.Info().Name != name || !slices.Contains(paths, inst.path) || running[inst.path] != nil:
			m.logger.Info("re-attached driver plugin is not wanted any more; killing it", "plugin", name, "path", inst.path)
			inst.ext.Kill()
		default:
			m.logger.Info("re-attached to driver plugin", "plugin", name, "pid", inst.ext.ReattachConfig().Pid)
			running[inst.path] = inst
			continue
		}
		if err := m.cfg.State.DeleteDriverPluginState(name); err != nil {
			m.logger.Warn("could not delete driver plugin state", "plugin", name, "error", err)
		}
	}
	return running
}

func (m *Manager) reattach(ctx context.Context, data []byte) (*instance, error) {
	var st pluginState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("decode plugin state: %w", err)
	}
	if st.Reattach == nil {
		return nil, errors.New("plugin state has no re-attach config")
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.LaunchTimeout)
	defer cancel()
	ext, err := plugins.Reattach(ctx, st.Reattach, m.logger)
	if err != nil {
		return nil, err
	}
	return externalInstance(ext, st.Path), nil
}

// persist stores the plugin's re-attach config.
func (m *Manager) persist(name string, inst *instance) {
	if m.cfg.State == nil {
		return
	}
	data, err := json.Marshal(pluginState{Path: inst.path, Reattach: inst.ext.ReattachConfig()})
	if err == nil {
		err = m.cfg.State.PutDriverPluginState(name, data)
	}
	if err != nil {
		m.logger.Warn("could not persist driver plugin state; a restarted agent will launch a new plugin", "plugin", name, "error", err)
	}
}
