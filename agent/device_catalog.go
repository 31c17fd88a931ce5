package agent

import (
	"encoding/json"
	"log/slog"

	"github.com/drover-io/drover/client/devicemanager"
	"github.com/drover-io/drover/client/drivermanager"
	"github.com/drover-io/drover/devices/fake"
	"github.com/drover-io/drover/devices/nvidia"
	"github.com/drover-io/drover/plugins"
	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/device"
)

// deviceCatalog is the one place where the built-in device plugins are
// wired (STYLE rule 17). A device plugin runs only when the agent config
// has its block: plugin "fake_device" { config { instances = [...] } } or
// plugin "nvidia" {}.
func deviceCatalog() map[string]devicemanager.Factory {
	return map[string]devicemanager.Factory{
		fake.PluginName: func(logger *slog.Logger) (device.DevicePlugin, error) {
			return fake.New(logger), nil
		},
		nvidia.PluginName: func(logger *slog.Logger) (device.DevicePlugin, error) {
			return nvidia.New(logger), nil
		},
	}
}

// deviceManagerConfig returns the device manager's config: the catalog,
// the plugin_dir (whose device plugin binaries it runs) and the plugin
// blocks. The catalog plugins' blocks are taken out of the driver
// manager's plugin configs (they are not drivers); every block but the
// built-in drivers' is handed to the device manager, which uses those of
// catalog plugins and of the external device plugins (known by the name
// they report once launched).
// Nil when there is no device plugin block and no plugin binary.
func deviceManagerConfig(cfg *Config, drivers *drivermanager.Config) *devicemanager.Config {
	catalog := deviceCatalog()
	configs := map[string]json.RawMessage{}
	builtIn := false
	for name, p := range cfg.Plugins {
		if p == nil || isBuiltInDriver(drivers, name) {
			continue
		}
		raw := p.Config
		if len(raw) == 0 {
			raw = json.RawMessage(`{}`)
		}
		configs[name] = raw
		if _, ok := catalog[name]; ok {
			builtIn = true
			if drivers != nil {
				delete(drivers.PluginConfigs, name)
			}
		}
	}
	var pluginDir string
	if drivers != nil {
		pluginDir = drivers.PluginDir
	}
	if binaries, _ := plugins.ScanDir(pluginDir); !builtIn && len(binaries) == 0 {
		return nil
	}
	return &devicemanager.Config{
		Catalog:       catalog,
		PluginConfigs: configs,
		PluginDir:     pluginDir,
		AgentConfig:   &base.AgentConfig{Region: cfg.Region, Datacenter: cfg.Datacenter, DataDir: cfg.DataDir},
	}
}

// isBuiltInDriver reports whether name is a driver built into the agent
// (offered or disabled): its block is not a device plugin's.
func isBuiltInDriver(drivers *drivermanager.Config, name string) bool {
	if drivers == nil {
		return false
	}
	_, builtIn := drivers.BuiltIn[name]
	_, disabled := drivers.Disabled[name]
	return builtIn || disabled
}
