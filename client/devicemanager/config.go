package devicemanager

import (
	"encoding/json"
	"log/slog"
	"time"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/structs"
)

// Defaults of the Config's timing fields.
const (
	DefaultFingerprintTimeout = 5 * time.Second
	DefaultStatsInterval      = time.Second
	DefaultRestartBase        = time.Second
	DefaultRestartMax         = 30 * time.Second
	DefaultCallTimeout        = 30 * time.Second
	DefaultLaunchTimeout      = time.Minute
	// restartResetAfter is how long a restarted plugin must stay up for
	// the next failure's backoff to start again from RestartBase.
	restartResetAfter = time.Minute
)

// Factory constructs a device plugin: a built-in one in process, or the
// client of one in another process. It is called at start and again for
// every restart after a failure.
type Factory func(logger *slog.Logger) (device.DevicePlugin, error)

// NodeUpdater receives the node's complete device list whenever it changes
// (a fingerprint, a plugin failure). It is called from the Manager's
// goroutines, one call at a time, and must not block for long.
type NodeUpdater func(devices []*structs.NodeDeviceResource)

// Config configures a Manager. The agent fills the catalog and plugin
// fields; the client fills Logger and UpdateNode.
type Config struct {
	Logger *slog.Logger

	// Catalog holds the device plugins the agent knows, by name
	// ("fake_device", "nvidia"). It is the one place where they are
	// wired.
	Catalog map[string]Factory
	// PluginConfigs are the plugin "NAME" { config {...} } blocks as JSON
	// objects, by plugin name; a catalog plugin runs only when it has a
	// block here (an empty object is a block).
	PluginConfigs map[string]json.RawMessage
	// AgentConfig is passed to every plugin's SetConfig.
	AgentConfig *base.AgentConfig

	// PluginDir holds external plugin binaries: the device plugins among
	// them run beside the catalog's, each under the name it reports,
	// configured by the block of that name if there is one. "": none.
	PluginDir string
	// State persists the external plugins' re-attach configs; nil:
	// nothing is persisted.
	State StateStore
	// LaunchTimeout bounds the launch of an external plugin.
	LaunchTimeout time.Duration

	// UpdateNode receives device list changes; nil: they are dropped.
	UpdateNode NodeUpdater

	// FingerprintTimeout bounds the wait for a plugin's first fingerprint,
	// both in Start and after a restart: a plugin that does not answer in
	// time is treated as failed.
	FingerprintTimeout time.Duration
	// StatsInterval is the interval asked of every plugin's Stats stream.
	StatsInterval time.Duration
	// RestartBase and RestartMax bound the backoff between restarts of a
	// failed plugin: RestartBase doubled per consecutive failure.
	RestartBase time.Duration
	RestartMax  time.Duration
	// CallTimeout bounds SetConfig and Reserve calls, so that a hung
	// plugin does not hang a task's start.
	CallTimeout time.Duration

	// Now and After are the clock; nil: the real one.
	Now   func() time.Time
	After func(time.Duration) <-chan time.Time
}

// withDefaults returns a copy of c with the zero fields defaulted.
func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.UpdateNode == nil {
		c.UpdateNode = func([]*structs.NodeDeviceResource) {}
	}
	if c.FingerprintTimeout <= 0 {
		c.FingerprintTimeout = DefaultFingerprintTimeout
	}
	if c.StatsInterval <= 0 {
		c.StatsInterval = DefaultStatsInterval
	}
	if c.RestartBase <= 0 {
		c.RestartBase = DefaultRestartBase
	}
	if c.RestartMax <= 0 {
		c.RestartMax = DefaultRestartMax
	}
	if c.LaunchTimeout <= 0 {
		c.LaunchTimeout = DefaultLaunchTimeout
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.After == nil {
		c.After = time.After
	}
	return c
}

// restartDelay is the wait before restart n (1-based) after consecutive
// failures.
func (c *Config) restartDelay(n int) time.Duration {
	d := c.RestartBase
	for i := 1; i < n && d < c.RestartMax; i++ {
		d *= 2
	}
	return min(d, c.RestartMax)
}
