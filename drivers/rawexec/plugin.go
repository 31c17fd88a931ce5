package rawexec

import (
	"context"
	"encoding/json"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/drivers"
)

// PluginVersion is the raw_exec plugin's own version.
const PluginVersion = "0.1.0"

// PluginConfig is raw_exec's plugin config block:
//
//	plugin "raw_exec" { config { enabled = true } }
//
// raw_exec runs tasks without any isolation, so an agent that is not in
// dev mode offers it only when enabled is true; the agent reads the flag,
// the driver accepts it.
type PluginConfig struct {
	Enabled bool `json:"enabled"`
}

var _ drivers.Plugin = (*Driver)(nil)

// PluginInfo describes raw_exec as a driver plugin.
func (d *Driver) PluginInfo(context.Context) (*base.PluginInfo, error) {
	return &base.PluginInfo{
		Type:              base.PluginTypeDriver,
		PluginAPIVersions: []string{drivers.APIVersion},
		PluginVersion:     PluginVersion,
		Name:              Name,
	}, nil
}

// ConfigSchema describes PluginConfig.
func (d *Driver) ConfigSchema(context.Context) (*base.Schema, error) {
	return &base.Schema{Fields: []*base.Field{{
		Name:        "enabled",
		Type:        base.TypeBool,
		Default:     json.RawMessage(`false`),
		Description: "offer raw_exec (no isolation) on an agent that is not in dev mode",
	}}}, nil
}

// SetConfig checks the plugin config block; raw_exec has nothing to set.
func (d *Driver) SetConfig(_ context.Context, cfg *base.Config) error {
	var pc PluginConfig
	return cfg.DecodePluginConfig(&pc)
}
