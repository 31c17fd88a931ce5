package drivermanager

import (
	"encoding/json"
	"log/slog"
	"time"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// Defaults of the Config's timing fields.
const (
	DefaultFingerprintTimeout = 5 * time.Second
	DefaultRestartBase        = time.Second
	DefaultRestartMax         = 30 * time.Second
	DefaultExitPollInterval   = 500 * time.Millisecond
	DefaultLaunchTimeout      = time.Minute
	// restartResetAfter is how long a relaunched plugin must stay up for
	// the next crash's backoff to start again from RestartBase.
	restartResetAfter = time.Minute
)

// Factory constructs a built-in driver. It is called once, in Start, with
// the driver's plugin config block (JSON; nil when the agent has none),
// for drivers that take their config at construction; a driver that is a
// base.BasePlugin is then also configured through SetConfig. An error is
// reported as an invalid config of that plugin.
type Factory func(logger *slog.Logger, pluginConfig json.RawMessage) (drivers.DriverPlugin, error)

// StateStore is where the Manager persists external plugins' re-attach
// configs; the client's state.StateDB implements it.
type StateStore interface {
	GetDriverPluginStates() (map[string][]byte, error)
	PutDriverPluginState(name string, data []byte) error
	DeleteDriverPluginState(name string) error
}

// NodeUpdater receives a driver's new DriverInfo whenever its fingerprint
// (detection, health, attributes) changes. It is called from the Manager's
// goroutines and must not block for long.
type NodeUpdater func(name string, info *structs.DriverInfo)

// Config configures a Manager. The agent fills the catalog and plugin
// fields; the client fills Logger, State, UpdateNode and KillOnShutdown.
type Config struct {
	Logger *slog.Logger

	// BuiltIn is the catalog of in-process drivers by name ("raw_exec").
	// It is the one place where built-in drivers are wired.
	BuiltIn map[string]Factory
	// Disabled names drivers that exist but are switched off, with the
	// reason Dispense gives ("enable it with plugin \"raw_exec\" ...").
	Disabled map[string]string
	// Allowlist, when not empty, names the only drivers that may run (the
	// client option driver.allowlist): an external plugin outside it is
	// not used. Built-in drivers outside it are left out of BuiltIn (and
	// put in Disabled) by the caller.
	Allowlist []string
	// PluginDir is where external driver plugins live; every executable
	// regular file in it is launched. Empty: no external plugins.
	PluginDir string
	// PluginConfigs are the plugin "NAME" { config {...} } blocks as JSON
	// objects, by plugin name.
	PluginConfigs map[string]json.RawMessage
	// AgentConfig is passed to every driver's SetConfig.
	AgentConfig *base.AgentConfig

	// State persists external plugins' re-attach configs; nil: nothing is
	// persisted and every start launches new plugin processes.
	State StateStore
	// UpdateNode receives driver info changes; nil: they are dropped.
	UpdateNode NodeUpdater
	// KillOnShutdown kills external plugin processes on Shutdown (dev
	// mode); otherwise they keep running for the next agent to re-attach.
	KillOnShutdown bool

	// FingerprintTimeout bounds Start's wait for each driver's first
	// fingerprint.
	FingerprintTimeout time.Duration
	// RestartBase and RestartMax bound the backoff between relaunches of
	// a crashed plugin: RestartBase doubled per failed attempt.
	RestartBase time.Duration
	RestartMax  time.Duration
	// ExitPollInterval is how often a plugin process is checked for exit.
	ExitPollInterval time.Duration
	// LaunchTimeout bounds one plugin launch or re-attach.
	LaunchTimeout time.Duration

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
		c.UpdateNode = func(string, *structs.DriverInfo) {}
	}
	if c.FingerprintTimeout <= 0 {
		c.FingerprintTimeout = DefaultFingerprintTimeout
	}
	if c.RestartBase <= 0 {
		c.RestartBase = DefaultRestartBase
	}
	if c.RestartMax <= 0 {
		c.RestartMax = DefaultRestartMax
	}
	if c.ExitPollInterval <= 0 {
		c.ExitPollInterval = DefaultExitPollInterval
	}
	if c.LaunchTimeout <= 0 {
		c.LaunchTimeout = DefaultLaunchTimeout
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.After == nil {
		c.After = time.After
	}
	return c
}

// restartDelay is the wait before relaunch attempt n (1-based).
func (c *Config) restartDelay(n int) time.Duration {
	d := c.RestartBase
	for i := 1; i < n && d < c.RestartMax; i++ {
		d *= 2
	}
	return min(d, c.RestartMax)
}
