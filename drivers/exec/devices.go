package exec

import (
	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/plugins/drivers"
)

// deviceNodes are the device nodes the task's device plugins asked to
// expose (TaskConfig.Devices), bound into the task's /dev. The task's
// cgroup does not restrict device access, so the permissions are not
// narrowed further; a node asked read-only is bound read-only.
func deviceNodes(cfg *drivers.TaskConfig) []isolation.Mount {
	var out []isolation.Mount
	for _, d := range cfg.Devices {
		out = append(out, isolation.Mount{Source: d.HostPath, Target: d.TaskPath, ReadOnly: d.Permissions == "r"})
	}
	return out
}
