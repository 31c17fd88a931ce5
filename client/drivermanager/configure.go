package drivermanager

import (
	"context"
	"fmt"

	"github.com/drover-io/drover/plugins/base"
)

// configure validates the driver's plugin config block against the
// driver's schema and hands it the result (with defaults) through
// SetConfig. A driver that is not a base.BasePlugin is left alone: a
// built-in one got its block from its Factory. Errors name the plugin and,
// for an invalid field, the field (base.ConfigError).
func (m *Manager) configure(ctx context.Context, name string, inst *instance) error {
	raw := m.cfg.PluginConfigs[name]
	bp, ok := inst.driver.(base.BasePlugin)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.LaunchTimeout)
	defer cancel()
	schema, err := bp.ConfigSchema(ctx)
	if err != nil {
		return fmt.Errorf("plugin %q: read its config schema: %w", name, err)
	}
	if err := schema.Check(); err != nil {
		return fmt.Errorf("plugin %q: the plugin's config schema is invalid: %w", name, err)
	}
	validated, err := schema.Validate(name, raw)
	if err != nil {
		return err
	}
	if err := bp.SetConfig(ctx, &base.Config{PluginConfig: validated, AgentConfig: m.cfg.AgentConfig}); err != nil {
		return &base.ConfigError{Plugin: name, Err: err}
	}
	if inst.version == "" {
		if info, err := bp.PluginInfo(ctx); err == nil && info != nil {
			inst.version = info.PluginVersion
		}
	}
	return nil
}
