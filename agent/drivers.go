package agent

import (
	"log/slog"

	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/drivers/rawexec"
	"github.com/drover-io/drover/plugins/drivers"
)

// buildDrivers is the catalog of built-in task drivers a client gets:
//
//   - raw_exec runs tasks without isolation, so a non-dev agent registers
//     it only with plugin "raw_exec" { config { enabled = true } }; a dev
//     agent has it unless its config says enabled = false.
//   - mock_driver (for tests and demos) is in dev agents, and in others
//     with a plugin "mock_driver" block (enabled unless it says false).
func buildDrivers(cfg *Config, logger *slog.Logger) (map[string]drivers.DriverPlugin, error) {
	out := map[string]drivers.DriverPlugin{}
	raw, err := cfg.pluginEnabled("raw_exec", !cfg.DevMode)
	if err != nil {
		return nil, err
	}
	if raw || (cfg.DevMode && cfg.Plugins["raw_exec"] == nil) {
		out["raw_exec"] = rawexec.New(logger.With("driver", "raw_exec"))
	}
	m, err := cfg.pluginEnabled("mock_driver", false)
	if err != nil {
		return nil, err
	}
	if m || (cfg.DevMode && cfg.Plugins["mock_driver"] == nil) {
		out["mock_driver"] = mock.New(logger.With("driver", "mock_driver"))
	}
	return out, nil
}
