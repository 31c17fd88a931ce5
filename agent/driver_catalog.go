package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/drover-io/drover/client/drivermanager"
	"github.com/drover-io/drover/drivers/docker"
	"github.com/drover-io/drover/drivers/exec"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/drivers/rawexec"
	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/drivers"
)

// driverManagerConfig is the one place where the built-in task drivers are
// wired (STYLE rule 17), with the plugin blocks and plugin_dir for the
// client's driver manager:
//
//   - exec and docker are always offered; each reports through its
//     fingerprint whether this host can run it. Both take their plugin
//     block at construction (exec.ParsePluginConfig, docker.ParseConfig).
//   - raw_exec runs tasks without isolation, so a non-dev agent offers it
//     only with plugin "raw_exec" { config { enabled = true } }; a dev
//     agent has it unless its config says enabled = false.
//   - mock_driver (for tests and demos) is in dev agents, and in others
//     with a plugin "mock_driver" block (enabled unless it says false).
//
// The client options driver.allowlist and driver.denylist (as Nomad's)
// then switch drivers off, built-in or external: a driver not in a
// non-empty allowlist, or in the denylist, is not started and not
// reported to the servers, so nothing is placed for it. The legacy client
// option driver.raw_exec.enable = true enables raw_exec as its plugin
// block does.
//
// plugin_dir defaults to <data_dir>/plugins, as Nomad's.
func driverManagerConfig(cfg *Config) (*drivermanager.Config, error) {
	builtIn := map[string]drivermanager.Factory{
		exec.Name:   newExec,
		docker.Name: newDocker,
	}
	disabled := map[string]string{}
	raw, err := cfg.pluginEnabled(rawexec.Name, !cfg.DevMode)
	if err != nil {
		return nil, err
	}
	if on, set := cfg.Client.rawExecOption(); set && cfg.Plugins[rawexec.Name] == nil {
		raw = on
	}
	if raw || (cfg.DevMode && cfg.Plugins[rawexec.Name] == nil) {
		builtIn[rawexec.Name] = newRawExec
	} else {
		disabled[rawexec.Name] = `it runs tasks without isolation; enable it in the agent config with plugin "raw_exec" { config { enabled = true } }`
	}
	m, err := cfg.pluginEnabled(mock.Name, false)
	if err != nil {
		return nil, err
	}
	if m || (cfg.DevMode && cfg.Plugins[mock.Name] == nil) {
		builtIn[mock.Name] = newMock
	} else {
		disabled[mock.Name] = `it is for tests; run a dev agent or add plugin "mock_driver" {} to the agent config`
	}
	applyDriverLists(builtIn, disabled, cfg.Client.optionList(optDriverAllowlist), cfg.Client.optionList(optDriverDenylist))
	configs := make(map[string]json.RawMessage, len(cfg.Plugins))
	for _, name := range slices.Sorted(maps.Keys(cfg.Plugins)) {
		configs[name] = cfg.Plugins[name].Config
	}
	pluginDir := cfg.PluginDir
	if pluginDir == "" && cfg.DataDir != "" {
		pluginDir = filepath.Join(cfg.DataDir, "plugins")
	}
	return &drivermanager.Config{
		BuiltIn:       builtIn,
		Disabled:      disabled,
		Allowlist:     cfg.Client.optionList(optDriverAllowlist),
		PluginDir:     pluginDir,
		PluginConfigs: configs,
		AgentConfig:   &base.AgentConfig{Region: cfg.Region, Datacenter: cfg.Datacenter, DataDir: cfg.DataDir},
	}, nil
}

// applyDriverLists moves the built-in drivers that the allowlist (when not
// empty) leaves out, or the denylist names, from builtIn to disabled, with
// the reason Dispense gives; the names they list are also disabled for
// external plugins of the same name.
func applyDriverLists(builtIn map[string]drivermanager.Factory, disabled map[string]string, allow, deny []string) {
	names := slices.Collect(maps.Keys(builtIn))
	names = append(names, allow...)
	names = append(names, deny...)
	for _, name := range names {
		var reason string
		switch {
		case slices.Contains(deny, name):
			reason = fmt.Sprintf("the client option driver.denylist (%s) names it", strings.Join(deny, ","))
		case len(allow) > 0 && !slices.Contains(allow, name):
			reason = fmt.Sprintf("the client option driver.allowlist (%s) leaves it out", strings.Join(allow, ","))
		default:
			continue
		}
		delete(builtIn, name)
		disabled[name] = reason
	}
}

func newRawExec(logger *slog.Logger, _ json.RawMessage) (drivers.DriverPlugin, error) {
	// Its config block (enabled) is validated by the driver manager
	// against raw_exec's schema.
	return rawexec.New(logger), nil
}

func newMock(logger *slog.Logger, _ json.RawMessage) (drivers.DriverPlugin, error) {
	return mock.New(logger), nil
}

func newExec(logger *slog.Logger, raw json.RawMessage) (drivers.DriverPlugin, error) {
	// Its config block is validated against exec's schema here: exec takes
	// its options at construction.
	opts, err := exec.ParsePluginConfig(raw)
	if err != nil {
		return nil, err
	}
	return exec.New(logger, exec.WithOptions(opts)), nil
}

func newDocker(logger *slog.Logger, raw json.RawMessage) (drivers.DriverPlugin, error) {
	cfg, err := docker.ParseConfig(raw)
	if err != nil {
		return nil, configFieldError(docker.Name, err)
	}
	d, err := docker.New(logger, cfg)
	if err != nil {
		return nil, configFieldError(docker.Name, err)
	}
	return d, nil
}

// unknownFieldRE finds the field in encoding/json's unknown field error.
var unknownFieldRE = regexp.MustCompile(`unknown field "([^"]+)"`)

// configFieldError names the field of a decoding error where it can.
func configFieldError(plugin string, err error) error {
	if ce := (*base.ConfigError)(nil); errors.As(err, &ce) {
		return err // already names the plugin and the field
	}
	if m := unknownFieldRE.FindStringSubmatch(err.Error()); m != nil {
		return &base.ConfigError{Plugin: plugin, Field: m[1], Err: fmt.Errorf("unknown field (%w)", err)}
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return &base.ConfigError{Plugin: plugin, Field: te.Field, Err: err}
	}
	return &base.ConfigError{Plugin: plugin, Err: err}
}

// TaskConfigSchemas returns the schemas of the built-in drivers' task
// config blocks, by driver name: what the server checks submitted jobs
// against (server.Config.TaskConfigs), and what `drover job validate`,
// `job plan` and `job run` check a job file against before sending it. A
// driver this agent does not offer keeps its schema: other nodes may offer
// it. Tasks of other drivers (plugins) are checked when they start.
func TaskConfigSchemas() base.TaskConfigSchemas {
	return base.TaskConfigSchemas{
		docker.Name:  docker.TaskConfigSchema(),
		exec.Name:    exec.TaskConfigSchema(),
		rawexec.Name: rawexec.TaskConfigSchema(),
		mock.Name:    mock.TaskConfigSchema(),
	}
}
