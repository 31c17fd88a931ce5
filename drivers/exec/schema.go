package exec

import "github.com/drover-io/drover/plugins/base"

// TaskConfigSchema describes a task's config block (TaskConfig), for the
// check of jobs when they are submitted, with hints for the options of
// Nomad's exec that drover does not take.
func TaskConfigSchema() *base.Schema {
	return &base.Schema{
		Fields: []*base.Field{
			{Name: "command", Type: base.TypeString, Required: true, Description: "the program, a path inside the task's root"},
			{Name: "args", Type: base.TypeStringList, Description: "its arguments"},
		},
		Hints: map[string]string{
			"pid_mode":           `every task has a PID namespace of its own (only "private" is supported)`,
			"ipc_mode":           `every task has an IPC namespace of its own (only "private" is supported)`,
			"cap_add":            "not supported per task: tasks hold the plugin's allow_caps",
			"cap_drop":           "not supported per task: tasks hold the plugin's allow_caps",
			"work_dir":           "not supported yet: tasks start in the root of their chroot",
			"cgroup_v1_override": "not supported: drover places tasks in cgroups of its own",
			"cgroup_v2_override": "not supported: drover places tasks in cgroups of its own",
			"oom_score_adj":      "not supported",
		},
	}
}
