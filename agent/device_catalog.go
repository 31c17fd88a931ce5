package agent

import (
	"encoding/json"
	"log/slog"

	"github.com/drover-io/drover/client/devicemanager"
	"github.com/drover-io/drover/client/drivermanager"
	"github.com/drover-io/drover/devices/fake"
	"github.com/drover-io/drover/devices/nvidia"
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

// deviceManagerConfig returns the device manager's config: the catalog and
// the blocks of the device plugins, which it takes out of the driver
// manager's plugin configs (they are not drivers). Nil when the config has
// no device plugin block.
func deviceManagerConfig(cfg *Config, drivers *drivermanager.Config) *devicemanager.Config {
	catalog := deviceCatalog()
	configs := map[string]json.RawMessage{}
	for name := range catalog {
		p := cfg.Plugins[name]
		if p == nil {
			continue
		}
		raw := p.Config
		if len(raw) == 0 {
			raw = json.RawMessage(`{}`)
		}
		configs[name] = raw
		if drivers != nil {
			delete(drivers.PluginConfigs, name)
		}
	}
	if len(configs) == 0 {
		return nil
	}
	return &devicemanager.Config{
		Catalog:       catalog,
		PluginConfigs: configs,
		AgentConfig:   &base.AgentConfig{Region: cfg.Region, Datacenter: cfg.Datacenter, DataDir: cfg.DataDir},
	}
}
