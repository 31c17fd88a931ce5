package rawexec

import "github.com/drover-io/drover/plugins/base"

// TaskConfigSchema describes a task's config block (TaskConfig), for the
// check of jobs when they are submitted, with hints for the options of
// Nomad's raw_exec that drover does not take.
func TaskConfigSchema() *base.Schema {
	return &base.Schema{
		Fields: []*base.Field{
			{Name: "command", Type: base.TypeString, Required: true, Description: "the program: an absolute path, or one relative to the task directory"},
			{Name: "args", Type: base.TypeStringList, Description: "its arguments"},
		},
		Hints: map[string]string{
			"work_dir":           "not supported yet: tasks start in their task directory",
			"cgroup_v1_override": "not supported: drover places tasks in cgroups of its own",
			"cgroup_v2_override": "not supported: drover places tasks in cgroups of its own",
			"oom_score_adj":      "not supported",
			"denied_envvars":     "not supported",
		},
	}
}
