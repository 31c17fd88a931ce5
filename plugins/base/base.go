package base

import (
	"context"
	"encoding/json"
	"fmt"
)

// Plugin types, as PluginInfo.Type reports them.
const (
	PluginTypeDriver = "driver"
	PluginTypeDevice = "device"
)

// PluginInfo describes a plugin.
type PluginInfo struct {
	// Type is PluginTypeDriver or PluginTypeDevice.
	Type string
	// PluginAPIVersions lists the SDK API versions the plugin speaks
	// (drivers.APIVersion for drivers).
	PluginAPIVersions []string
	// PluginVersion is the plugin's own version ("1.2.0").
	PluginVersion string
	// Name is the plugin's name, as used in job files for a driver.
	Name string
}

// BasePlugin is implemented by every plugin. Methods must be safe for
// concurrent use and return promptly when ctx is done.
type BasePlugin interface {
	// PluginInfo describes the plugin.
	PluginInfo(ctx context.Context) (*PluginInfo, error)
	// ConfigSchema describes the plugin's config block.
	ConfigSchema(ctx context.Context) (*Schema, error)
	// SetConfig configures the plugin; the agent calls it once before
	// any other call but PluginInfo and ConfigSchema, and again when a
	// restarted plugin is re-configured.
	SetConfig(ctx context.Context, cfg *Config) error
}

// Config is what SetConfig hands a plugin.
type Config struct {
	// PluginConfig is the plugin's config block as JSON, validated
	// against and completed with the defaults of its Schema; nil when the
	// agent has no block for the plugin.
	PluginConfig json.RawMessage
	// AgentConfig holds the agent settings plugins may need; nil when
	// the agent passes none.
	AgentConfig *AgentConfig
}

// AgentConfig holds the agent settings a plugin may need.
type AgentConfig struct {
	NodeID     string
	Region     string
	Datacenter string
	// DataDir is the agent's data_dir.
	DataDir string
	// ClientMinPort and ClientMaxPort bound the ports a driver may
	// allocate (nil: the agent sets no bound).
	ClientMinPort *int
	ClientMaxPort *int
}

// DecodePluginConfig decodes the plugin's config block into out, rejecting
// unknown fields. A nil PluginConfig leaves out unchanged.
func (c *Config) DecodePluginConfig(out any) error {
	if c == nil || len(c.PluginConfig) == 0 {
		return nil
	}
	if err := decodeStrict(c.PluginConfig, out); err != nil {
		return fmt.Errorf("decode plugin config: %w", err)
	}
	return nil
}
